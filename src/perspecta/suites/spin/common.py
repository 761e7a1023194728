"""Shared machinery of the SpinBench tasks: frames, prompts, options and item building.

A SpinBench item shows one to five images of *one* stored scene. Multi-frame items
(an object before and after a move, the same object from several cameras, an odd
object among look-alikes) keep every state in that one scene record: each state of an
object is its own ``SceneObject`` (``obj0`` and ``obj0@t1``) and each viewpoint its own
named camera. ``metadata["frames"]`` lists, per image, the camera and the objects
rendered in it, so ``derive`` re-computes every answer from ``scenes.jsonl`` alone and
no scene is ever stored without an item that uses it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np

from perspecta.dataset.item import IMAGE_MARKER, Item, Option
from perspecta.render.base import RenderResult
from perspecta.suites.context import TaskContext, stable_key
from perspecta.suites.facts import Facts
from perspecta.world.scene import Pose, Scene, SceneObject

T = TypeVar("T")

SUITE = "spin"
LAYOUTS = ("imagefirst", "textfirst", "interleaved")
ORDINALS = ("first", "second", "third", "fourth", "fifth")
IMAGE_SIZE = 512  # default side of SpinBench renders, sent to models as is (paper: 256, a flag)


def image_size(ctx: TaskContext) -> int:
    """Side of this dataset's SpinBench images (``--image-size`` wins over the suite default)."""
    return int(ctx.config.get("image_size", IMAGE_SIZE))


# --------------------------------------------------------------------------- balanced draws


class Strata:
    """Balanced, seeded assignment of a unit's discrete choices (subtype, answer, letter).

    Independent coin flips per unit leave answers unbalanced within a subtype (e.g. 15 of
    23 "away" moves). Here units are cut into blocks of ``len(cells)`` consecutive
    indices and each block takes a permutation of the cells, seeded by the root seed,
    task and the path of choices drawn so far, never by the unit's own stream. Each
    draw narrows the slot to "the k-th unit on this path", so nested draws (subtype,
    then the answer within it, then its letter) are balanced within every subtype. The
    permutation is secret without the root seed, so nothing follows from the index.
    """

    def __init__(self, ctx: TaskContext, name: str = "") -> None:
        self.ctx = ctx
        self.path = name
        self.slot = ctx.index

    def draw(self, label: str, cells: Sequence[T]) -> T:
        n = len(cells)
        if n == 0:
            raise ValueError(f"{self.ctx.task}: nothing to draw for {label!r}")
        block, pos = divmod(self.slot, n)
        key = f"{self.path}/{label}"
        ss = np.random.SeedSequence(self.ctx.root_seed, spawn_key=(stable_key(self.ctx.suite), stable_key(self.ctx.task),
                                                                     stable_key(key), block))
        perm = np.random.default_rng(ss).permutation(n)
        cell = cells[int(perm[pos])]
        # the k-th unit on the new path: a cell listed m times (a share) fills m slots per block
        same = [int(j) for j in range(n) if cells[j] == cell]
        rank = sum(1 for p in range(pos) if int(perm[p]) in same)
        self.path = f"{key}={cell}"
        self.slot = block * len(same) + rank
        return cell

    def branch(self, label: str) -> Strata:
        """A copy to draw per-item choices from (e.g. one letter per variant of a unit)."""
        out = Strata(self.ctx)
        out.path, out.slot = f"{self.path}/{label}", self.slot
        return out


SHARE_CELLS = 10  # a form share is drawn balanced over blocks of this many units


def share_draw(st: Strata, label: str, share: float, on: str, off: str) -> str:
    """Form ``on`` on a ``share`` of units, ``off`` on the rest, drawn balanced by
    :class:`Strata` (per block of SHARE_CELLS units) so later draws (answer, letter) are
    balanced within each form. A share of 0 or 1 draws nothing: the strata path, and so
    the bytes of presets without the form, stay as they were."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"{label}: a share must be in [0, 1], got {share}")
    k = round(share * SHARE_CELLS)
    if k <= 0:
        return off
    if k >= SHARE_CELLS:
        return on
    return st.draw(label, [on] * k + [off] * (SHARE_CELLS - k))


# --------------------------------------------------------------------------- frames


def frame(camera: str, objects: Sequence[str]) -> dict[str, Any]:
    """One image's recipe: a camera of the scene and the object ids rendered by it."""
    return {"camera": camera, "objects": list(objects)}


def frame_scene(scene: Scene, object_ids: Sequence[str]) -> Scene:
    """A copy of ``scene`` holding only ``object_ids`` (in that order, so instance label
    i + 1 is ``object_ids[i]``)."""
    objs = [scene.object(i) for i in object_ids]
    return dataclasses.replace(scene, objects=objs)


MEASURE_SIDE = 256  # mask-only renders (visible fractions) need no more pixels than this


def render_frame(ctx: TaskContext, scene: Scene, spec: dict[str, Any], *, measure: bool = False,
                 masks_only: bool = False) -> RenderResult:
    """Render one frame; ``measure`` renders at most MEASURE_SIDE px wide, for masks
    whose ratios (visible fractions) do not depend on the resolution. A ``measure`` or
    ``masks_only`` render has the depth / instance layers only (no colour work)."""
    cam = scene.camera(spec["camera"])
    if measure and cam.width > MEASURE_SIDE:
        f = MEASURE_SIDE / cam.width
        cam = dataclasses.replace(cam, width=MEASURE_SIDE, height=max(1, round(cam.height * f)))
    return ctx.renderer.render(frame_scene(scene, spec["objects"]), cam, color=not (measure or masks_only))


@dataclasses.dataclass(frozen=True)
class FramesFacts(Facts):
    """Every SpinBench item's image recipes: per image, the camera and the object ids
    rendered (see :func:`frame`), which is how ``derive`` knows what each image shows."""

    frames: list[dict[str, Any]]


def frames_of(item: Item) -> list[dict[str, Any]]:
    frames = FramesFacts.from_item(item).frames
    if len(frames) != len(item.images):
        raise ValueError(f"item {item.id}: metadata.frames must list one frame per image")
    return frames


# Outdoor CC0 skies of blender-data (render/environment.py); "night" is too dark to read a
# silhouette, "interior"/"studio" are rooms that would clash with an open textured ground.
OUTDOOR_HDRIS = ("city", "courtyard", "forest", "sunrise", "sunset")
TEXTURED_GROUNDS = ("tiles", "paving", "grass")


def dress_background(ctx: TaskContext, scene: Scene) -> Scene:
    """Give a studio scene a realistic background on a share of units (knob
    ``realistic_background_share``): an HDRI sky and a textured ground instead of the flat
    two-colour studio. Why: the paper's objects sit in real scenes, and a flat backdrop makes
    the object's outline pop out at a glance. Skies missing on this machine leave it plain."""
    from perspecta.render.environment import available_hdris

    share = float(ctx.knob("realistic_background_share", {"easy": 0.0, "standard": 0.6, "hard": 1.0}))
    if scene.ground is None or ctx.rng.random() >= share:
        return scene
    skies = [h for h in OUTDOOR_HDRIS if h in available_hdris()]
    material = TEXTURED_GROUNDS[int(ctx.rng.integers(len(TEXTURED_GROUNDS)))]
    scene.ground = dataclasses.replace(scene.ground, material=material, texture_seed=int(scene.seed))
    if skies:
        scene.environment = f"hdri:{skies[int(ctx.rng.integers(len(skies)))]}"
    return scene


def moved_copy(obj: SceneObject, new_id: str, *, position: Sequence[float] | None = None, yaw: float | None = None) -> SceneObject:
    """A copy of ``obj`` under a new id with a new position and/or yaw (a later state)."""
    pos = obj.pose.position if position is None else tuple(round(float(v), 5) for v in position)
    pose = Pose(position=pos, yaw=obj.pose.yaw if yaw is None else round(float(yaw) % 360.0, 4),  # type: ignore[arg-type]
                pitch=obj.pose.pitch, roll=obj.pose.roll)
    return dataclasses.replace(obj, id=new_id, pose=pose, params=dict(obj.params))


def identity_key(obj: SceneObject) -> tuple[Any, ...]:
    """What makes two scene objects the *same physical object* (pose aside)."""
    color = None if obj.color is None else tuple(round(c, 4) for c in obj.color)
    return (obj.asset_id, tuple(sorted((k, str(v)) for k, v in obj.params.items())), round(obj.scale, 5), color)


def display_name(category: str) -> str:
    return category.replace("_", " ")


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


# --------------------------------------------------------------------------- prompts


def end_prompt(n_options: int) -> str:
    letters = ", ".join(chr(ord("A") + i) for i in range(n_options))
    return f"Answer with a single capital letter from ({letters})."


def text_options_block(options: Sequence[Option]) -> str:
    return "\n".join(f"{o.label}. {o.text}" for o in options)


def pick(ctx: TaskContext, pool: Sequence[str]) -> str:
    """One phrasing from a pool, chosen by the unit's rng (recorded in the item text)."""
    return pool[int(ctx.rng.integers(len(pool)))]


def image_option_question(layout: str, question: str, n: int, *, header: str = "") -> str:
    """A question whose options are the images themselves (one <image> per option).

    imagefirst: all images, then the question and letters; textfirst: the question and
    letters, then the images; interleaved: each letter followed by its image.
    """
    letters = [chr(ord("A") + i) for i in range(n)]
    head = f"{header}\n" if header else ""
    if layout == "imagefirst":
        imgs = "".join(IMAGE_MARKER for _ in range(n))
        opts = "\n".join(f"{c}. the {ORDINALS[i]} image" for i, c in enumerate(letters))
        return f"{head}{imgs}\n{question}\n{opts}\n{end_prompt(n)}"
    if layout == "textfirst":
        imgs = "".join(IMAGE_MARKER for _ in range(n))
        opts = "\n".join(f"{c}. the {ORDINALS[i]} image" for i, c in enumerate(letters))
        return f"{head}{question}\n{opts}\n{imgs}\n{end_prompt(n)}"
    if layout == "interleaved":
        opts = "\n".join(f"{c}. {IMAGE_MARKER}" for c in letters)
        return f"{head}{question}\n{opts}\n{end_prompt(n)}"
    raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")


def image_options(n: int, first_image: int = 0) -> list[Option]:
    return [Option(label=chr(ord("A") + i), image=first_image + i) for i in range(n)]


def shuffled_text_options(ctx: TaskContext, texts: Sequence[str]) -> list[Option]:
    order = ctx.rng.permutation(len(texts))
    return [Option(label=chr(ord("A") + i), text=texts[int(j)]) for i, j in enumerate(order)]


def placed_order(ctx: TaskContext, n: int, answer: int, slot: int) -> list[int]:
    """A permutation of ``range(n)`` that puts element ``answer`` at position ``slot``
    (drawn balanced by :class:`Strata`) and the others in a random order."""
    rest = [i for i in range(n) if i != answer]
    rest = [rest[int(j)] for j in ctx.rng.permutation(len(rest))]
    return rest[:slot] + [answer] + rest[slot:]


def placed_text_options(ctx: TaskContext, strata: Strata, texts: Sequence[str], answer: str) -> list[Option]:
    """Text options with the correct one at a balanced letter (see :class:`Strata`)."""
    slot = strata.draw("letter", list(range(len(texts))))
    order = placed_order(ctx, len(texts), list(texts).index(answer), slot)
    return [Option(label=chr(ord("A") + i), text=texts[j]) for i, j in enumerate(order)]


# --------------------------------------------------------------------------- items


def make_item(
    ctx: TaskContext,
    *,
    variant: str,
    suffix: str,
    group_suffix: str,
    subtype: str,
    question: str,
    images: list[str],
    options: list[Option],
    answer: str,
    scene: Scene,
    metadata: dict[str, Any],
) -> Item:
    """An MCQ item; ``group_suffix`` names the group (its base item's id suffix)."""
    n_markers = question.count(IMAGE_MARKER)
    if n_markers != len(images):
        raise ValueError(f"{subtype}: question has {n_markers} <image> markers for {len(images)} images")
    return Item(
        id=ctx.item_id(variant, suffix),
        suite=SUITE,
        task=ctx.task,
        subtype=subtype,
        question=question,
        images=list(images),
        options=options,
        answer_type="mcq",
        answer=answer,
        group=ctx.item_id("base", group_suffix),
        variant=variant,
        split=ctx.split,  # type: ignore[arg-type]
        scene_id=scene.scene_id,
        seed=ctx.seed,
        metadata={**metadata, "n_options": len(options)},
    )


def solo_fraction(ctx: TaskContext, scene: Scene, camera: str, object_ids: Sequence[str], target: str,
                  full: RenderResult | None = None) -> float:
    """Mask-measured visible fraction of ``target`` among ``object_ids`` in ``camera``:
    its pixels in the full render over its pixels rendered alone."""
    from perspecta.world.oracle import visible_fraction

    ids = list(object_ids)
    measure = full is None  # the solo render must match the full one's resolution
    if full is None:
        full = render_frame(ctx, scene, frame(camera, ids), measure=True)
    solo = render_frame(ctx, scene, frame(camera, [target]), measure=measure, masks_only=True)
    return float(visible_fraction(full.instance, solo.instance > 0, ids.index(target)))


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def rng_sign(ctx: TaskContext) -> float:
    return 1.0 if ctx.rng.random() < 0.5 else -1.0


def as_list(v: np.ndarray) -> list[float]:
    return [round(float(x), 5) for x in v]


# --------------------------------------------------------------------------- assets and cameras

VEHICLE_CATEGORIES = ("car",)
PERSON_CATEGORIES = ("person",)
# Objects with a clear, asymmetric front and a size that reads at 256 px on a studio floor.
OBJECT_CATEGORIES = (
    "armchair", "chair", "sofa", "bed", "desk", "cabinet", "bookcase", "piano", "toilet", "sink",
    "stove", "tv", "wardrobe", "dog", "cat", "horse", "bicycle", "motorcycle", "stroller",
    "wheelchair", "rabbit", "kick_scooter", "tricycle", "figure", "teddy_bear",
)  # fmt: skip
DOMAINS = ("car", "person", "object")


def domain_assets(library: Any, domain: str) -> list[Any]:
    """Assets of a SpinBench domain that have a front and are not front/back symmetric."""
    cats = {"car": VEHICLE_CATEGORIES, "person": PERSON_CATEGORIES, "object": OBJECT_CATEGORIES}.get(domain)
    if cats is None:
        raise ValueError(f"unknown domain {domain!r}; expected one of {DOMAINS}")
    pool = [a for a in library.all() if a.category in cats and a.has_front and not a.symmetric]
    if not pool:
        raise RuntimeError(f"no assets with a front for domain {domain!r} in the asset library")
    return pool


def pick_asset(ctx: TaskContext, domain: str) -> Any:
    pool = domain_assets(ctx.library, domain)
    return pool[int(ctx.rng.integers(len(pool)))]


def orbit_like(scene: Scene, name: str, target: SceneObject, azimuth: float, *, elevation: float | None = None,
               distance: float | None = None, like: str = "main") -> None:
    """Add camera ``name`` orbiting ``target``'s bbox centre at ``azimuth`` (world, CCW
    from +X, the direction from the target to the camera), with the field of view,
    image size and (by default) distance and elevation of camera ``like``."""
    from perspecta.world.oracle import camera_elevation
    from perspecta.world.samplers import orbit_camera

    ref = scene.camera(like)
    c = target.center()
    offset = np.asarray(ref.position, dtype=float) - np.asarray(ref.look_at, dtype=float)
    dist = float(np.linalg.norm(offset)) if distance is None else float(distance)
    el = camera_elevation(ref) if elevation is None else float(elevation)
    cam = orbit_camera(c, dist, float(azimuth) % 360.0, el, fov_y=ref.fov_y, width=ref.width, height=ref.height, name=name)
    scene.cameras = [k for k in scene.cameras if k.name != name] + [cam]


# --------------------------------------------------------------------------- readability

MAX_RESAMPLES = 12


class Unreadable(ValueError):
    """A drawn unit breaks the readability contract; the generator draws the next one."""


def render_checked(ctx: TaskContext, scene: Scene, frames: Sequence[dict[str, Any]],
                   named: dict[str, tuple[str, Sequence[int]]],
                   contract: dict[str, Any] | None = None, *,
                   color: bool = True) -> tuple[list[RenderResult], dict[str, Any]]:
    """Render ``frames`` and measure every object the question relies on.

    ``named`` maps a name (what the question calls the object, or its role) to its base
    id and the frames it must be readable in; a later state ``id@...`` in a frame counts
    as the object. The worst frame's facts are recorded (``metadata["readability"]``)
    and :class:`Unreadable` is raised when they break the contract (the defaults, or the
    stricter ``contract`` given), before anything is written, so the caller can draw the
    unit again.

    The facts read the instance masks only, so the frames are rendered mask-only first
    and in colour only once they pass: a rejected draw costs no colour pass, and the
    colour render of a checked view takes the renderer's kept id layers (bit-identical
    to its own). Nothing here draws from the unit's random stream, so the bytes are the
    same as rendering colour first. ``color=False`` returns the mask-only results, for
    callers that read masks only.
    """
    from perspecta.world.readability import object_facts, problems

    results = [render_frame(ctx, scene, f, masks_only=True) for f in frames]
    objs: dict[str, dict[str, Any]] = {}
    for name, (oid, idxs) in named.items():
        for fi in idxs:
            ids = list(frames[fi]["objects"])
            k = next(i for i, x in enumerate(ids) if x.split("@")[0] == oid)
            facts = object_facts(results[fi].instance, k + 1)
            if name not in objs or facts["pixels"] < objs[name]["pixels"]:
                objs[name] = facts
    record: dict[str, Any] = {"objects": objs}
    if contract:  # a stricter contract than the defaults, recorded so validate checks it
        record["contract"] = dict(contract)
    bad = problems(record)
    if bad:
        raise Unreadable("; ".join(bad))
    if color:
        results = [render_frame(ctx, scene, f) for f in frames]
    return results, record


def save_results(ctx: TaskContext, results: Sequence[RenderResult], names: Sequence[str]) -> list[str]:
    return [ctx.save_image(r.rgb, n) for r, n in zip(results, names, strict=True)]


def resampled(ctx: TaskContext, build: Any) -> list[Item]:
    """Run ``build()`` (one draw of the unit from the continuing seeded stream) until its
    items meet the readability contract; the number of redraws lands in the metadata."""
    last: Exception | None = None
    for attempt in range(MAX_RESAMPLES):
        try:
            items = build()
        except Unreadable as e:
            last = e
            continue
        for it in items:
            it.metadata["resamples"] = attempt
        return list(items)
    raise RuntimeError(f"{ctx.scene_prefix}: no readable draw in {MAX_RESAMPLES} attempts (last: {last})")
