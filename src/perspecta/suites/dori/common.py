"""Shared machinery of the DORI tasks: asset pools, answer-class assignment, option
shuffling, prompt selection, marked renders, readability checks and item assembly.

Every DORI unit makes one coarse and one granular item, each from *its own* scene: the
two levels have different answer bins, and assigning each level's answer class first
("Cannot be determined" included) is the only way to balance both. Classes are
*stratified* over consecutive units (:func:`balanced_class`), so every task and
granularity is balanced by construction, not just in expectation.

"Cannot be determined" (CBD) targets are frontless or rotationally symmetric objects:
mostly real catalogue assets (round tables, lamps, barrels, plants, balls), a small
share of plain primitives — the same share as procedural assets among the targets that
have an answer, so neither "is a primitive" nor the asset source carries the key.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from perspecta.assets.library import AssetInfo
from perspecta.dataset.item import Item, Option, letter_options
from perspecta.render.overlay import draw_box
from perspecta.render.overlay import font, label_size_for
from perspecta.suites.context import TaskContext, stable_key
from perspecta.suites.facts import Facts
from perspecta.suites.dori import marks
from perspecta.suites.dori.prompts import (
    CANNOT_DETERMINE,
    structured_prompt,
    unstructured_prompt,
)
from perspecta.world import readability
from perspecta.world.oracle import mask_bbox, signed_angle_xy
from perspecta.world.scene import Camera, Scene

SUITE = "dori"
T = TypeVar("T")
DEFAULT_IMAGE_SIZE = 512  # a VLM reads the front of a 512-px object; 256 px hid faces (issue 17)
# categories whose front is clear from any side (the paper's people, vehicles,
# animals, furniture). Box-like appliances (refrigerator, oven, stove) are left out: seen
# from the side, nothing shows which end their door is on.
FRONT_CATEGORIES = (
    "person", "car", "chair", "dog", "cat", "horse", "armchair", "sofa", "bicycle", "tv", "figure",
    "motorcycle", "van", "truck", "bus", "piano", "toilet",
)  # fmt: skip
# frontless primitives (procedural): the paper's "ball or box" controls
CONTROL_CATEGORIES = ("ball", "cylinder", "box", "table")
# real catalogue objects without a front (checked on renders: no side is special) — the
# CBD targets of the facing tasks, so recognising a primitive never earns the key
FRONTLESS_REAL = (
    "sh3d:blendswap-cc-0/barrel", "sh3d:blendswap-cc-0/basketball", "sh3d:blendswap-cc-by/ballonFoot",
    "sh3d:blendswap-cc-0/oakTable", "sh3d:blendswap-cc-by/cafe_set_mota_table", "sh3d:katorlegaz/cafe-table",
    "sh3d:scopia/round-table", "sh3d:scopia/table4", "sh3d:scopia/white_kitchen_table",
    "sh3d:katorlegaz/glass-dining-table", "sh3d:blendswap-cc-0/stool2", "sh3d:blendswap-cc-by/green_stool",
    "sh3d:scopia/little_lamp3", "sh3d:katorlegaz/pedestal-vase-lamp", "sh3d:blendswap-cc-0/desklamp",
    "sh3d:blendswap-cc-0/decorativePlant", "sh3d:blendswap-cc-0/cactus", "sh3d:scopia/ficus",
    "sh3d:blendswap-cc-by/spatifilum", "sh3d:blendswap-cc-0/crate", "sh3d:blendswap-cc-by/gift",
)  # fmt: skip
# real objects that look the same after ANY turn about their vertical axis (round, no
# legs or arms to count, no inner detail that turns): CBD for the rotation tasks, whose
# turns such a shape hides. Round 5 removed the barrel (its staves' grain shows a turn),
# the little lamp and the pedestal vase lamp (a straight harp bar shows through the shade's
# top: a careful judge saw it unmoved and answered "not rotated" to a CBD item).
ROUND_REAL = (
    "sh3d:blendswap-cc-by/cafe_set_mota_table", "sh3d:blendswap-cc-0/desklamp",
)  # fmt: skip
# frontless real objects without flat sides: none of their sides can pass for a front
# facing the viewer (see FRONTLESS_OBLIQUE_DEG)
NO_FLAT_SIDES = ROUND_REAL + (
    "sh3d:blendswap-cc-0/barrel", "sh3d:scopia/little_lamp3", "sh3d:katorlegaz/pedestal-vase-lamp",
    "sh3d:blendswap-cc-0/basketball", "sh3d:blendswap-cc-by/ballonFoot",
)  # fmt: skip
# frontless shapes whose every turn looks alike from the side (procedural primitives)
ROUND_CATEGORIES = ("ball", "cylinder")
# A frontless target with flat sides (a gift box, a crate) is never shown with a side
# within this many degrees of square to the camera: a careful judge answered "it already
# faces the camera" for a gift box so shown — whichever side is its front, that reading
# holds, so "Cannot be determined" was not the only defensible answer. Turned obliquely,
# every side gives a different answer and only "Cannot be determined" is consistent.
FRONTLESS_OBLIQUE_DEG = readability.MIN_FRONTLESS_OBLIQUE_DEG
# share of procedural assets among targets, the same with and without an answer: with
# it, the asset source is independent of the key (primitives are then a small share of CBD)
PROC_SHARE = 0.15
MAX_ATTEMPTS = 30  # resampling budget of one item before the unit fails loudly
DARK_LUMINANCE = 40.0  # mean 0-255 luminance under which a target reads as a silhouette


# difficulty knob -> {preset: value}, read through :func:`knob` (values land in
# item.metadata["knobs"]); docs/suites.md says what each does and how standard was set
PRESETS: dict[str, dict[str, float]] = {
    "camera_elevation_max_deg": {"easy": 25.0, "standard": 30.0, "hard": 55.0},
    "object_fill": {"easy": 0.7, "standard": 0.6, "hard": 0.5},
    "bin_margin_frac": {"easy": 0.4, "standard": 0.34, "hard": 0.34},
    "n_same_category": {"easy": 0, "standard": 1, "hard": 2},
    "n_distractors": {"easy": 0, "standard": 1, "hard": 3},
    "n_street_distractors": {"easy": 0, "standard": 1, "hard": 3},
    "min_turn_deg": {"easy": 60.0, "standard": 20.0, "hard": 15.0},
    "pair_jitter": {"easy": 0.04, "standard": 0.06, "hard": 0.08},
    "start_facing_max_deg": {"easy": 65.0, "standard": 140.0, "hard": 160.0},
    "backdrop_realism": {"easy": 0.0, "standard": 0.5, "hard": 1.0},
    "look_alike_share": {"easy": 0.0, "standard": 0.5, "hard": 1.0},
    "frame_switch_items": {"easy": 0.0, "standard": 1.0, "hard": 1.0},
}


def knob(ctx: TaskContext, name: str) -> float:
    """The value of DORI difficulty knob ``name`` for this unit (see :data:`PRESETS`)."""
    return float(ctx.knob(name, PRESETS[name]))


class Unreadable(RuntimeError):
    """A drawn scene breaks a readability contract; the caller draws the next one."""


def image_size(ctx: TaskContext) -> int:
    return int(ctx.config.get("image_size", DEFAULT_IMAGE_SIZE))


# A single studio target at 512 px must show at least this much of itself: a semi truck
# seen end-on at studio distance was a 34 px-wide slab that a careful judge could not
# name (the floor contract's 40x20 and 600 px let it through). Scaled with the image area.
STUDIO_MIN_PIXELS, STUDIO_MIN_BOX_SIDE, STUDIO_MIN_BOX_SHORT = 6000, 100, 48


def studio_contract(ctx: TaskContext) -> readability.Contract:
    """The readability contract of a single studio target at this unit's image size
    (:data:`STUDIO_MIN_PIXELS` and box sides at 512 px, scaled; never below the floor)."""
    s = image_size(ctx) / 512.0
    floor = readability.DEFAULT_CONTRACT
    return dataclasses.replace(
        floor, min_pixels=max(floor.min_pixels, int(STUDIO_MIN_PIXELS * s * s)),
        min_box_side=max(floor.min_box_side, int(STUDIO_MIN_BOX_SIDE * s)),
        min_box_short=max(floor.min_box_short, int(STUDIO_MIN_BOX_SHORT * s)))


def balanced_class(ctx: TaskContext, n_classes: int, stream: str) -> int | None:
    """The answer class of this unit for one question stream: ``range(n_classes)`` or
    None (= "Cannot be determined"), stratified over blocks of ``n_classes + 1``
    consecutive units — each block holds every class exactly once, in an order seeded
    by (root seed, suite, task, stream, block). The class is independent of the unit's
    own stream, and nothing about it follows from the index without the root seed."""
    m = n_classes + 1
    block, pos = divmod(ctx.index, m)
    seq = np.random.SeedSequence(
        ctx.root_seed, spawn_key=(stable_key(ctx.suite), stable_key(ctx.task), stable_key(stream), block))
    k = int(np.random.default_rng(seq).permutation(m)[pos])
    return None if k == n_classes else k


def two_way_class(ctx: TaskContext, stream: str) -> int:
    """Class 0 or 1 of a two-way question with no "Cannot be determined" option (the
    frame-switch forms), stratified as :func:`balanced_class` with one class and its
    CBD slot, the slot standing for class 1: same draws, so same datasets."""
    return 0 if balanced_class(ctx, 1, stream) == 0 else 1


def pick_target(
    ctx: TaskContext, cbd: bool, *, categories: Sequence[str] | None = None,
    cbd_real: Sequence[str] = FRONTLESS_REAL, cbd_primitives: Sequence[str] = CONTROL_CATEGORIES,
    proc_share: float = PROC_SHARE, elevation_range: tuple[float, float] | None = None, head_on: bool = False,
    tipped: bool = False,
) -> AssetInfo:
    """A target asset: with a front (``cbd`` False, from ``categories``) or one whose
    answer is "Cannot be determined" (real ``cbd_real`` asset ids, or a procedural
    primitive of ``cbd_primitives``). The procedural share is ``proc_share`` either way.
    Targets with a front leave out the assets marked front/back confusable and those
    whose front cannot be read from any camera height in ``elevation_range`` (default:
    the studio's range from the ``camera_elevation_max_deg`` knob; :mod:`.marks`); with
    ``head_on`` only those whose front reads straight on and from straight behind; with
    ``tipped`` (the item lays the target on a side or its back) only those whose heading
    still reads tipped."""
    proc = bool(ctx.rng.random() < proc_share)
    if cbd:
        if proc and cbd_primitives:
            pool = [a for a in ctx.library.all() if a.source == "proc" and a.category in cbd_primitives]
        else:
            wanted = set(cbd_real)
            pool = [a for a in ctx.library.all() if a.asset_id in wanted]
    else:
        cats = categories or ctx.config.get("categories", FRONT_CATEGORIES)
        wanted = elevation_range or studio_elevation(ctx)
        front = [a for a in ctx.library.all() if a.category in cats and a.has_front
                 and a.asset_id not in marks.CONFUSABLE and marks.elevation_window(a.asset_id, wanted) is not None
                 and (not head_on or marks.head_on_readable(a.asset_id))
                 and (not tipped or marks.tip_readable(a.asset_id, a.category))]
        pool = [a for a in front if (a.source == "proc") == proc] or front
    if not pool:
        raise RuntimeError(f"no {'CBD' if cbd else 'front'} target assets in the library")
    return pool[int(ctx.rng.integers(len(pool)))]


def pick_asset(
    ctx: TaskContext, control: bool, *, categories: Sequence[str] | None = None, sources: Sequence[str] | None = None
) -> AssetInfo:
    """A random asset with a front (``control`` False) or a frontless control (True),
    optionally restricted to some categories and sources ("proc", "sh3d")."""
    cats = categories or ctx.config.get(
        "control_categories" if control else "categories", CONTROL_CATEGORIES if control else FRONT_CATEGORIES
    )
    pool = [a for a in ctx.library.all() if a.category in cats and a.has_front != control
            and (sources is None or a.source in sources)]
    if not pool:
        raise RuntimeError(f"no {'control' if control else 'front'} assets for categories {cats} in the library")
    return pool[int(ctx.rng.integers(len(pool)))]


def resample(ctx: TaskContext, build: Callable[[int], T], what: str, tries: int = MAX_ATTEMPTS) -> T:
    """``build(attempt)`` until it returns without raising :class:`Unreadable` — the
    next draws of the unit's own stream, so a seed still fixes the result. A unit that
    never becomes readable fails loudly (the generator records the failure)."""
    reasons: list[str] = []
    for attempt in range(tries):
        try:
            return build(attempt)
        except Unreadable as e:
            reasons.append(str(e))
    raise RuntimeError(f"{ctx.scene_prefix} {what}: unreadable after {tries} draws; last: {reasons[-3:]}")


def check_readable(record: dict[str, Any]) -> dict[str, Any]:
    """Raise :class:`Unreadable` when ``record`` breaks its contract; return it otherwise.
    A record with a narrow angle bin (:data:`NARROW_BIN_DEG`) gets DORI's stricter bin
    margin written into its contract first, so ``perspecta validate`` checks it too."""
    bm = record.get("bin_margin")
    if bm is not None and (record.get("view") or {}).get("person_back"):
        contract = readability.Contract.from_dict(record.get("contract"))
        if contract.min_bin_margin_frac < PERSON_BACK_MARGIN_FRAC:
            record["contract"] = dataclasses.replace(contract, min_bin_margin_frac=PERSON_BACK_MARGIN_FRAC).to_dict()
    if bm is not None and bm["bin_width"] <= NARROW_BIN_DEG:
        contract = readability.Contract.from_dict(record.get("contract"))
        if contract.min_bin_margin_frac < NARROW_MARGIN_FRAC:
            contract = dataclasses.replace(contract, min_bin_margin_frac=NARROW_MARGIN_FRAC)
            record["contract"] = contract.to_dict()
    bad = readability.problems(record)
    if bad:
        raise Unreadable("; ".join(bad))
    return record


# a person seen from behind shows her heading only by shoulders and feet (a careful judge
# under-read such a turn): her angle keeps this share of the bin from its edges
PERSON_BACK_MARGIN_FRAC = 0.4
PERSON_BACK_DEG = 100.0  # |egocentric facing| beyond which a person's back faces the camera


def target_view(scene: Scene, asset: AssetInfo, object_id: str = "obj0", camera: str = "main",
                head_on: bool = False, tipped: bool = False) -> dict[str, Any]:
    """``readability["view"]`` of a studio target: the asset's mark, the camera's
    elevation (validate checks it against the mark) and whether a person shows her back."""
    from perspecta.world.oracle import egocentric_facing

    obj, cam = scene.object(object_id), scene.camera(camera)
    view = marks.view_record(asset.asset_id, cam, obj.has_front, head_on=head_on, tipped=tipped,
                             category=obj.category)
    view["person_back"] = bool(obj.has_front and obj.category == "person"
                               and abs(float(egocentric_facing(obj, cam))) > PERSON_BACK_DEG)
    if has_faces(obj.asset_id, obj.category, obj.has_front):
        view["face_square_deg"] = round(face_square_deg(scene, object_id, camera), 3)
    return view


def has_faces(asset_id: str, category: str, has_front: bool) -> bool:
    """Whether a frontless target has flat sides that could be taken for a front (a crate,
    a gift box, a rectangular table): everything frontless but round shapes."""
    return not has_front and asset_id not in NO_FLAT_SIDES and category not in ROUND_CATEGORIES


def face_square_deg(scene: Scene, object_id: str = "obj0", camera: str = "main") -> float:
    """Smallest ground-plane angle (0-45 degrees) between the line of sight and one of the
    object's four side axes (its +-X and +-Y): 0 = a side is square to the camera."""
    obj, cam = scene.object(object_id), scene.camera(camera)
    a = abs(signed_angle_xy(np.asarray(cam.position, dtype=float) - obj.center(), obj.front_vector())) % 90.0
    return float(min(a, 90.0 - a))


def signed_bin_margin(angle: float, lo: float, hi: float) -> dict[str, float]:
    """Readability record of ``angle`` inside the bin ``[lo, hi]`` (degrees, may wrap)."""
    return {"deg": round(float(min(angle - lo, hi - angle)), 3), "bin_width": float(hi - lo)}


def dark_check(rgb: np.ndarray, instance: np.ndarray, index: int) -> float:
    """Mean luminance of object ``index``'s pixels; a near-black target is a silhouette
    whose front cannot be seen, so it is redrawn."""
    own = instance == index + 1
    lum = rgb[own].astype(float) @ np.array([0.299, 0.587, 0.114]) if own.any() else np.zeros(1)
    value = float(lum.mean())
    if value < DARK_LUMINANCE:
        raise Unreadable(f"object {index} is near-black (mean luminance {value:.0f})")
    return round(value, 1)


def inside(ctx: TaskContext, lo: float, hi: float, margin: float) -> float:
    """A uniform draw from [lo + margin, hi - margin]: never within ``margin`` of a bin edge."""
    if hi - lo <= 2 * margin:
        raise ValueError(f"bin [{lo}, {hi}] is too narrow for margin {margin}")
    return float(ctx.rng.uniform(lo + margin, hi - margin))


def shuffled(ctx: TaskContext, texts: Sequence[str], answer: str, stream: str) -> list[Option]:
    """Options in random order, except that the answer's letter is stratified over units
    like the answer class (:func:`balanced_class`), so every letter is the key equally
    often per task and granularity: the letter says nothing about the answer."""
    if answer not in texts:
        raise ValueError(f"the answer {answer!r} is not among the options {list(texts)}")
    rest = [t for t in texts if t != answer]
    order = [rest[int(i)] for i in ctx.rng.permutation(len(rest))]
    pos = balanced_class(ctx, len(texts) - 1, f"letter-{stream}")
    order.insert(len(texts) - 1 if pos is None else pos, answer)
    return letter_options(order)


def prompt(
    ctx: TaskContext, *, task: str, context: str, steps: list[str], options: list[Option],
    examples: list[str], n_images: int = 1,
) -> str:
    """The item's question: DORI's five-part prompt, or the paper's unstructured ablation
    (``config["prompt_style"] == "unstructured"``: no context, steps or examples)."""
    style = ctx.config.get("prompt_style", "structured")
    if style == "structured":
        return structured_prompt(task=task, context=context, steps=steps, options=options,
                                 examples=examples, n_images=n_images)
    if style == "unstructured":
        return unstructured_prompt(task=task, options=options, n_images=n_images)
    raise ValueError(f"dori prompt_style must be 'structured' or 'unstructured', got {style!r}")


def only(scene: Scene, object_id: str) -> Scene:
    """A render-only copy of ``scene`` holding just one of its objects (before/after views)."""
    return dataclasses.replace(scene, objects=[scene.object(object_id)])


def render_boxed(ctx: TaskContext, scene: Scene, label: str = "A") -> tuple[np.ndarray, list[int], dict[str, Any]]:
    """Render camera "main" and outline object 0 with a labelled box drawn a few pixels
    *outside* its visible pixels (so the outline hides none of it); returns the marked
    image, the object's box and its readability facts. Raises :class:`Unreadable` for
    a target that is too small, covered by the tag, or near-black."""
    result = ctx.renderer.render(scene, scene.camera("main"))
    box = mask_bbox(result.instance, 0)
    if box is None:
        raise Unreadable(f"{scene.scene_id}: the object is not visible in the render")
    h, w = result.instance.shape
    pad = max(3, round(min(h, w) / 128)) + 2
    outer = (max(0, box[0] - pad), max(0, box[1] - pad), min(w - 1, box[2] - 1 + pad), min(h - 1, box[3] - 1 + pad))
    marked = draw_box(result.rgb, outer, label=label)
    facts = readability.object_facts(result.instance, 1, readability.overlay_mask(result.rgb, marked))
    facts["luminance"] = dark_check(result.rgb, result.instance, 0)
    check_readable({"objects": {label: facts}})
    return marked, [int(v) for v in box], facts


def render_plain(ctx: TaskContext, scene: Scene, camera: Camera | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Render one object (``scene.objects[0]``) unmarked; (image, readability facts)."""
    result = ctx.renderer.render(scene, camera or scene.camera("main"))
    if mask_bbox(result.instance, 0) is None:
        raise Unreadable(f"{scene.scene_id}: the object is not visible in the render")
    facts = readability.object_facts(result.instance, 1)
    facts["luminance"] = dark_check(result.rgb, result.instance, 0)
    check_readable({"objects": {"object": facts}})
    return result.rgb, facts


def nuisance(ctx: TaskContext, scene: Scene, *, jitter: float) -> tuple[Camera, Any, Any, dict[str, Any]]:
    """Conditions of a pair's second image: a fresh sun, a re-tinted backdrop and a
    slightly zoomed and re-aimed camera (``jitter``: relative change of distance and
    aim). Drawn for EVERY pair, "no rotation" included, so two identical or
    near-identical pictures never give the answer away."""
    from perspecta.world.samplers.common import jitter_color, sample_sun
    from perspecta.world.samplers.studio import STUDIO_GROUNDS, STUDIO_SKIES

    cam = scene.camera("main")
    eye, at = np.asarray(cam.position, dtype=float), np.asarray(cam.look_at, dtype=float)
    dist = float(np.linalg.norm(eye - at))
    r = cam.rotation_world_to_cam()
    shift = (r[0] * ctx.rng.uniform(-1, 1) + r[1] * ctx.rng.uniform(-1, 1)) * jitter * dist * 0.5
    scale = 1.0 + float(ctx.rng.uniform(-jitter, jitter))
    new_at = at + shift
    new_eye = new_at + (eye - at) * scale
    cam2 = dataclasses.replace(cam, name="second", position=tuple(round(float(c), 5) for c in new_eye),  # type: ignore[arg-type]
                               look_at=tuple(round(float(c), 5) for c in new_at))  # type: ignore[arg-type]
    light = sample_sun(ctx.rng)
    ground = scene.ground
    if ground is not None:
        ground = dataclasses.replace(
            ground, color=jitter_color(ctx.rng, STUDIO_GROUNDS[int(ctx.rng.integers(len(STUDIO_GROUNDS)))]),
            sky_color=jitter_color(ctx.rng, STUDIO_SKIES[int(ctx.rng.integers(len(STUDIO_SKIES)))]))
    record = {"camera": cam2.metadata(), "light": dataclasses.asdict(light),
              "ground": None if ground is None else dataclasses.asdict(ground)}
    return cam2, light, ground, record


def render_pair(ctx: TaskContext, scene: Scene, *, jitter: float) -> tuple[list[np.ndarray], dict[str, Any], dict[str, Any]]:
    """The before ("obj0", camera "main") and after ("obj1", a :func:`nuisance` camera,
    light and backdrop) images of a two-image item; (images, readability objects,
    second-image conditions). The second camera is added to the scene record."""
    cam2, light, ground, record = nuisance(ctx, scene, jitter=jitter)
    first, f1 = render_plain(ctx, only(scene, "obj0"))
    second_scene = dataclasses.replace(only(scene, "obj1"), light=light, ground=ground)
    second, f2 = render_plain(ctx, second_scene, cam2)
    scene.cameras = [c for c in scene.cameras if c.name != "second"] + [cam2]
    return [first, second], {"object (image 1)": f1, "object (image 2)": f2}, record


def object_factors(scene: Scene, asset: AssetInfo, object_id: str = "obj0") -> dict[str, Any]:
    obj = scene.object(object_id)
    return {"object_id": obj.id, "category": obj.category, "asset_id": obj.asset_id, "source": asset.source,
            "has_front": obj.has_front, "symmetric": obj.symmetric, "scene_kind": scene.kind}


@dataclasses.dataclass(frozen=True)
class OptionValuesFacts(Facts):
    """Every DORI item's options as machine-readable values (a bin, an angle, an operation
    list; None for "Cannot be determined"), so scoring and ``derive`` compare values,
    never option wording."""

    option_values: dict[str, Any]  # option label -> value


def make_item(
    ctx: TaskContext, *, task: str, granularity: str, scene: Scene, images: list[str], question: str,
    context: str, steps: list[str], examples: list[str], options: list[Option], answer_text: str,
    values: dict[str, Any], metadata: dict[str, Any], form: str | None = None,
) -> Item:
    """Assemble an MCQ item; its text is :func:`prompt` over ``question`` (the TASK part),
    ``context``, ``steps`` and ``examples``, for as many images as ``images`` holds.
    ``values`` maps each option text to its machine-readable value (a bin, an angle, an
    operation list; None for "Cannot be determined"); it is stored as
    ``metadata["option_values"]`` by label so scoring needs no text parsing. ``form``
    names a question form other than the level's plain one (``metadata["form"]``, subtype
    ``<task>_<form>``)."""
    text = prompt(ctx, task=question, context=context, steps=steps, options=options, examples=examples,
                  n_images=len(images))
    answer = next(o.label for o in options if o.text == answer_text)
    meta = {
        **metadata,
        "granularity": granularity,
        "n_options": len(options),
        "answer_text": answer_text,
        "answer_value": values[answer_text],
        **OptionValuesFacts(option_values={o.label: values[o.text or ""] for o in options}).to_metadata(),
        "prompt_style": ctx.config.get("prompt_style", "structured"),
    }
    if form is not None:  # a glance-resistant form: its own subtype and item id, coarse level
        meta["form"] = form
    item_id = ctx.item_id("base", form or granularity)
    return Item(
        id=item_id, suite=SUITE, task=task, subtype=f"{task}_{form or granularity}", granularity=granularity,  # type: ignore[arg-type]
        question=text, images=images, options=options, answer_type="mcq", answer=answer,
        group=item_id, split=ctx.split,  # type: ignore[arg-type]
        scene_id=scene.scene_id, seed=ctx.seed, metadata=meta,
    )


__all__ = ["CANNOT_DETERMINE", "CONTROL_CATEGORIES", "FRONT_CATEGORIES", "SUITE"]


def set_facing(scene: Scene, facing: float, object_id: str = "obj0") -> None:
    """Turn an upright object so that ``egocentric_facing`` equals ``facing`` (degrees,
    + = front toward the image right): its front heading is the to-camera heading + facing."""
    from perspecta.world.oracle import heading_of, wrap360

    obj = scene.object(object_id)
    to_cam = np.asarray(scene.camera("main").position, dtype=float) - obj.center()
    obj.pose.yaw = round(wrap360(heading_of(to_cam) + facing), 6)


def studio_elevation(ctx: TaskContext) -> tuple[float, float]:
    """The studio camera's elevation range (degrees) set by ``camera_elevation_max_deg``."""
    return (5.0, max(5.0, float(knob(ctx, "camera_elevation_max_deg"))))


def studio_knobs(ctx: TaskContext, skip: Any = ()) -> dict[str, Any]:
    """``sample_studio`` arguments set by the studio tasks' difficulty knobs: how high the
    camera may look down on the object (a steep view foreshortens the front) and how
    much of the frame the object fills (never below the readability floor: units whose
    target ends up too small are redrawn)."""
    out: dict[str, Any] = {}
    if "elevation_range" not in skip:
        out["elevation_range"] = studio_elevation(ctx)
    if "fill" not in skip:
        fill = float(knob(ctx, "object_fill"))
        out["fill"] = (max(0.2, fill - 0.1), min(0.95, fill + 0.1))
    if "n_distractors" not in skip:
        out["n_distractors"] = n_distractors(ctx)
    return out


# sqrt(target pixels / image pixels) per unit of the object_fill knob: a ball framed by its
# bounding sphere at fill 0.6 covered ~0.25 of the side in area terms, an elongated object
# less; framing by area instead keeps that median while making size independent of shape
AREA_PER_FILL = 0.45
MAX_EXTENT = 0.46  # farthest any edge of the zoomed target's box may sit from the image centre (share of the side)


def zoom_to_area(ctx: TaskContext, camera: Camera, instance: np.ndarray, index: int) -> Camera:
    """``camera`` with its field of view narrowed or widened so that object ``index``
    (of the ``instance`` mask rendered through it) covers a seeded share of the image.

    Framing by the bounding sphere makes compact objects (balls, crates — the "Cannot be
    determined" targets) fill their sphere and elongated ones (people, cars) fall short
    of it, so image-plane size predicted the answer. Here the target's visible area is
    drawn from the object_fill knob alone, whatever the object: sqrt(area / image) is
    uniform on ``AREA_PER_FILL * fill range``. A zoom scales the image about its centre
    exactly (no change of viewpoint), so one render measures what the next will show.
    The zoom is capped so the box stays inside the frame; only very elongated views hit
    the cap."""
    fill = float(knob(ctx, "object_fill"))
    lo, hi = max(0.2, fill - 0.1), min(0.95, fill + 0.1)
    share = AREA_PER_FILL * float(ctx.rng.uniform(lo, hi))
    own = instance == index + 1
    if not own.any():
        raise Unreadable(f"object {index} is not visible")
    h, w = own.shape
    rows, cols = np.flatnonzero(own.any(axis=1)), np.flatnonzero(own.any(axis=0))
    scale = share * math.sqrt(h * w) / math.sqrt(float(own.sum()))
    reach = max(abs(cols[0] - w / 2) / w, abs(cols[-1] + 1 - w / 2) / w,
                abs(rows[0] - h / 2) / h, abs(rows[-1] + 1 - h / 2) / h)
    scale = min(scale, MAX_EXTENT / max(reach, 1e-6))
    half = math.atan(math.tan(math.radians(camera.fov_y) / 2) / scale)
    return dataclasses.replace(camera, fov_y=round(math.degrees(2 * half), 6))


# Bins at most this wide (the granular 40-45 degree bins, the "none" bins, the coarse
# 45-degree classes of inter-object direction, the 30-degree "no rotation" classes) keep NARROW_MARGIN_FRAC of their width from
# both edges: the last careful blind judge misread angles 13-22 degrees inside an edge
# (1/4 of 45-90 degree bins), so a third is DORI's floor there. Wider bins (90-150 degree
# classes) keep the generic 1/4, already >= 22 degrees.
NARROW_BIN_DEG = 60.0
NARROW_MARGIN_FRAC = 1.0 / 3.0


def margin_frac(ctx: TaskContext, bin_width: float) -> float:
    """Share of a bin's width every drawn angle keeps from the bin's edges: the knob
    (easy gives more room) but never below the floor for the bin's width — a third for
    narrow bins, the readability default (1/4) for wide ones, where the knob is capped
    at the floor so wide classes keep their spread."""
    if bin_width <= NARROW_BIN_DEG:
        return max(NARROW_MARGIN_FRAC, float(knob(ctx, "bin_margin_frac")))
    return readability.DEFAULT_CONTRACT.min_bin_margin_frac


def n_distractors(ctx: TaskContext) -> int:
    """Other objects standing around the target (the paper's scenes are cluttered)."""
    return int(knob(ctx, "n_distractors"))


# what may stand behind a studio target: everyday things of a similar size
DISTRACTOR_CATEGORIES = ("person", "chair", "armchair", "sofa", "plant", "table", "lamp", "dog", "cat", "car",
                         "bicycle", "motorcycle", "stool", "cabinet", "bookcase", "barrel")


def distractor_categories(ctx: TaskContext, asset: AssetInfo, n: int) -> tuple[str, ...]:
    """Categories the studio distractors are drawn from: with probability
    ``look_alike_share`` only the target's own (another chair behind the chair, turned
    its own way), so the outline box, not the category, says which object is asked
    about; otherwise everyday things. Look-alikes are used only when the library holds
    another asset of the category at a similar size (the sampler's own filter), so the
    number of distractors never depends on the target."""
    if n <= 0:
        return DISTRACTOR_CATEGORIES
    if not ctx.rng.random() < float(knob(ctx, "look_alike_share")):
        return DISTRACTOR_CATEGORIES
    size = max(asset.size)
    same = [a for a in ctx.library.all() if a.category == asset.category and a.asset_id != asset.asset_id
            and 0.6 * size <= max(a.size) <= 1.6 * size]
    return (asset.category,) if same else DISTRACTOR_CATEGORIES


def studio_scene(ctx: TaskContext, asset: AssetInfo, suffix: str, **kwargs: Any) -> Scene:
    """One target in a studio (``sample_studio``), scene id ``<prefix>-<suffix>``, with
    the studio knobs (camera elevation, object fill, distractors) unless overridden."""
    from perspecta.world.samplers import sample_studio

    args: dict[str, Any] = {**studio_knobs(ctx, skip=set(kwargs)), **kwargs}
    if asset.has_front:  # only from camera heights where this asset's front reads (marks.py)
        window = marks.elevation_window(asset.asset_id, tuple(args["elevation_range"]))
        if window is None:
            raise Unreadable(f"{asset.asset_id}: front unreadable at elevations {args['elevation_range']}")
        args["elevation_range"] = window
    args.setdefault("distractor_categories", distractor_categories(ctx, asset, int(args.get("n_distractors", 0))))
    scene = sample_studio(ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-{suffix}", seed=ctx.seed,
                          asset_id=asset.asset_id, image_size=image_size(ctx), **args)
    if has_faces(asset.asset_id, asset.category, asset.has_front) and face_square_deg(scene) < FRONTLESS_OBLIQUE_DEG:
        raise Unreadable(f"{asset.asset_id}: frontless target shows a side square to the camera")
    return scene


def draw_tag(rgb: np.ndarray, instance: np.ndarray, index: int, label: str,
             taken: list[tuple[int, int, int, int]]) -> np.ndarray:
    """A red letter tag *beside* object ``index`` (on background, clear of every object
    and of the ``taken`` tag boxes, which it joins) with a thin leader line that ends on
    the object's nearest visible pixel at least :data:`LEADER_CLEARANCE_PX` from any other
    object, and passes no other object that closely: the object itself stays uncovered (issue 17
    measured dots and tags hiding 9-46% of a target, often its face). Raises
    :class:`Unreadable` when no free spot exists."""
    from PIL import Image, ImageDraw

    h, w = instance.shape
    own = instance == index + 1
    if not own.any():
        raise Unreadable(f"object {index} is not visible")
    rows, cols = np.flatnonzero(own.any(axis=1)), np.flatnonzero(own.any(axis=0))
    x0, x1, y0, y1 = int(cols[0]), int(cols[-1]), int(rows[0]), int(rows[-1])
    size = label_size_for(min(h, w))
    f = font(size)
    img = Image.fromarray(np.ascontiguousarray(rgb))
    draw = ImageDraw.Draw(img)
    l, t, r, b = draw.textbbox((0, 0), label, font=f)
    pad = max(3, size // 5)
    tw, th = r - l + 2 * pad, b - t + 2 * pad
    gap = max(12, size // 2)
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    spots = [(cx - tw // 2, y0 - gap - th), (x1 + gap, cy - th // 2), (x0 - gap - tw, cy - th // 2),
             (x1 + gap, y0 - gap - th), (x0 - gap - tw, y0 - gap - th), (cx - tw // 2, y1 + gap)]
    busy = instance > 0
    # the leader must end on its own object, well clear of every other one: a tag whose line
    # ended on a scooter's mirror where it touched a sofa's arm was read as the sofa's
    near_others = _dilate(busy & ~own, LEADER_CLEARANCE_PX)
    vs, us = np.nonzero(own & ~near_others)
    if vs.size == 0:
        raise Unreadable(f"object {index} has no pixel {LEADER_CLEARANCE_PX} px clear of the others for tag {label}")
    for tx, ty in spots:
        box = (tx - 3, ty - 3, tx + tw + 3, ty + th + 3)
        if box[0] < 0 or box[1] < 0 or box[2] >= w or box[3] >= h:
            continue
        if busy[box[1]:box[3] + 1, box[0]:box[2] + 1].any():
            continue
        if any(not (box[2] < o[0] or o[2] < box[0] or box[3] < o[1] or o[3] < box[1]) for o in taken):
            continue
        mx, my = tx + tw / 2, ty + th / 2
        j = int(np.argmin((us - mx) ** 2 + (vs - my) ** 2))
        end = (float(us[j]), float(vs[j]))
        start = (min(max(end[0], tx), tx + tw - 1), min(max(end[1], ty), ty + th - 1))
        if _crosses(near_others, start, end):
            continue  # the line would pass over or beside another object
        lw = max(2, round(min(h, w) / 256))
        draw.line([start, end], fill=(255, 255, 255), width=lw + 2)
        draw.line([start, end], fill=(230, 0, 0), width=lw)
        draw.rectangle((tx, ty, tx + tw - 1, ty + th - 1), fill=(230, 0, 0), outline=(255, 255, 255))
        draw.text((tx + pad - l, ty + pad - t), label, font=f, fill=(255, 255, 255))
        taken.append(box)
        return np.asarray(img).copy()
    raise Unreadable(f"no free spot beside object {index} for tag {label}")


# clearance (px) a tag's leader line keeps from every object but its own, end included
LEADER_CLEARANCE_PX = 6


def _dilate(mask: np.ndarray, radius: int) -> np.ndarray:
    """``mask`` grown by ``radius`` pixels (a square neighbourhood, nothing beyond the edges).

    A square's dilation is a row pass then a column pass of a running maximum: the same
    pixels as ``binary_dilation`` with the full square (tested), at a tenth of the CPU
    (~25 ms per 512² tag mask with the square, 8 tags per DORI run of 2 units)."""
    from scipy.ndimage import maximum_filter1d

    size = 2 * radius + 1
    rows = maximum_filter1d(mask.view(np.uint8), size, axis=1, mode="constant", cval=0)
    return maximum_filter1d(rows, size, axis=0, mode="constant", cval=0).view(bool)


def _crosses(mask: np.ndarray, start: tuple[float, float], end: tuple[float, float]) -> bool:
    """Whether the segment ``start`` -> ``end`` (x, y) touches ``mask`` anywhere."""
    n = int(max(abs(end[0] - start[0]), abs(end[1] - start[1]))) + 1
    xs = np.rint(np.linspace(start[0], end[0], n + 1)).astype(int).clip(0, mask.shape[1] - 1)
    ys = np.rint(np.linspace(start[1], end[1], n + 1)).astype(int).clip(0, mask.shape[0] - 1)
    return bool(mask[ys, xs].any())


# outdoor HDRI skies (Debian blender-data) and textured grounds for realistic backdrops;
# night, interior and studio maps are left out (too dark, or a room behind an open ground)
OUTDOOR_HDRIS = ("city", "courtyard", "forest", "sunrise", "sunset")
GROUND_MATERIALS = ("paving", "grass", "tiles")


def realistic_backdrop(ctx: TaskContext, scene: Scene) -> dict[str, Any] | None:
    """With probability ``backdrop_realism``, put an HDRI sky and a textured ground behind
    a single-image scene (the paper's photographs have real backgrounds, which a model
    must see past; a careful person is not slowed by them). The draws are made whatever
    is installed, so a seed fixes the other draws; without the HDRI maps only the ground
    changes. Returns the record for ``metadata["backdrop"]`` (None: plain studio)."""
    from perspecta.render.environment import available_hdris

    share = float(knob(ctx, "backdrop_realism"))
    if scene.ground is None or not ctx.rng.random() < share:
        return None
    name = OUTDOOR_HDRIS[int(ctx.rng.integers(len(OUTDOOR_HDRIS)))]
    material = GROUND_MATERIALS[int(ctx.rng.integers(len(GROUND_MATERIALS)))]
    yaw = round(float(ctx.rng.uniform(0.0, 360.0)), 3)
    pattern = round(float(ctx.rng.uniform(0.4, 0.9)), 3)
    scene.ground = dataclasses.replace(scene.ground, material=material, pattern_size=pattern)
    if name in available_hdris():
        scene.environment, scene.environment_yaw = f"hdri:{name}", yaw
    return {"environment": scene.environment, "ground_material": material}
