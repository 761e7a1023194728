"""DORI Q7, canonical orientation: is the image upright, and which operations restore it?

A canonical (upright) view of one object is rendered on a flat background with
frontal light, so nothing but the object tells up from down; then the image is
rotated (clockwise *as seen on screen*) and/or flipped, and the ops are recorded in
``metadata["image_transform"]``. Balls (plain or a basketball, a football), cubic
crates, plain boxes and cylinders have no canonical pose: "Cannot be determined".
Tables, lamps and plants — the procedural table included — do have an upright pose,
so a plain primitive is not a sign of the CBD key.

A mirrored upright image still looks upright, so the restoring operation ``g`` is
only knowable up to a final horizontal flip: its *class* is the k in
``g in {R^k, FlipH . R^k}`` (R = 90 degrees clockwise). Each granular item offers one
operation sequence per class (4) plus "Cannot be determined", the right one being the
exact inverse of the applied transform, so exactly one option restores the image.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.dori.audit import PRIMITIVE_CATEGORIES
from perspecta.world.oracle import egocentric_facing
from perspecta.suites.dori.common import (
    PROC_SHARE,
    OptionValuesFacts,
    Unreadable,
    balanced_class,
    dark_check,
    check_readable,
    make_item,
    object_factors,
    resample,
    shuffled,
    studio_scene,
    zoom_to_area,
)
from perspecta.world import readability
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import mask_bbox
from perspecta.world.scene import Light, Scene

TASK = "canonical_orientation"
CONTROLS = ("ball", "box", "cylinder")
# objects whose up is unmistakable at 256 px; box-like appliances (fridge, oven, tv) are left
# out because a quarter turn one way or the other looks alike
UPRIGHT_CATEGORIES = ("person", "car", "chair", "dog", "cat", "horse", "armchair", "sofa", "bicycle",
                      "motorcycle", "van", "truck", "bus", "figure", "toilet")
# frontless things that still stand one way up (legs, a base, a pot). Lamps are left out
# since round 5: a dome table lamp upside down is a ceiling pendant, upright in its own
# right (a careful judge answered "no change needed" to a flipped one)
UPRIGHT_FRONTLESS = ("table", "plant", "stool")
# real assets without an up: balls and a cube crate
CBD_REAL = ("sh3d:blendswap-cc-0/basketball", "sh3d:blendswap-cc-by/ballonFoot", "sh3d:blendswap-cc-0/crate")
BALLS = ("ball",)  # the round CBD assets' category
# image-plane operations as 2x2 matrices on (x right, y up) image coordinates
OPS: dict[str, np.ndarray] = {
    "rot90": np.array([[0, 1], [-1, 0]]),  # 90 degrees clockwise on screen: top -> right
    "rot180": np.array([[-1, 0], [0, -1]]),
    "rot270": np.array([[0, -1], [1, 0]]),  # 90 degrees counter-clockwise
    "flip_h": np.array([[-1, 0], [0, 1]]),  # mirror left-right
    "flip_v": np.array([[1, 0], [0, -1]]),  # mirror top-bottom
}
INVERSE = {"rot90": "rot270", "rot270": "rot90", "rot180": "rot180", "flip_h": "flip_h", "flip_v": "flip_v"}
OP_TEXT = {
    "rot90": "rotate 90 degrees clockwise",
    "rot180": "rotate 180 degrees",
    "rot270": "rotate 90 degrees counter-clockwise",
    "flip_h": "flip horizontally (mirror left-right)",
    "flip_v": "flip vertically (mirror top-bottom)",
}
NO_CHANGE = "No change needed: it is already in its canonical orientation"
COARSE = {"canonical": "Yes, the image is in its canonical orientation",
          "not_canonical": "No, the image is not in its canonical orientation"}
R = OPS["rot90"]
FH = OPS["flip_h"]
# every phrase of one or two ops (a rotation and a flip, in either order; one rotation; one flip)
PHRASES: list[tuple[str, ...]] = (
    [()] + [(o,) for o in OPS]
    + [(a, b) for a, b in itertools.permutations(OPS, 2) if (a.startswith("rot")) != (b.startswith("rot"))]
)


def matrix(ops: tuple[str, ...] | list[str]) -> np.ndarray:
    """The composite of ``ops`` applied in order (first op first)."""
    m = np.eye(2, dtype=int)
    for o in ops:
        m = OPS[o] @ m
    return m


def op_class(m: np.ndarray) -> int:
    """k (quarter turns clockwise) with ``m`` in {R^k, FlipH R^k}: what an upright-only judge can tell."""
    for k in range(4):
        rk = np.linalg.matrix_power(R, k)
        if np.array_equal(m, rk) or np.array_equal(m, FH @ rk):
            return k
    raise ValueError(f"{m.tolist()} is not an image-plane symmetry")


def phrase_text(ops: tuple[str, ...]) -> str:
    if not ops:
        return NO_CHANGE
    text = ", then ".join(OP_TEXT[o] for o in ops)
    return text[0].upper() + text[1:]


def apply(rgb: np.ndarray, ops: list[str]) -> np.ndarray:
    out = rgb
    for o in ops:
        out = {"rot90": lambda a: np.rot90(a, -1), "rot180": lambda a: np.rot90(a, 2),
               "rot270": lambda a: np.rot90(a, 1), "flip_h": lambda a: a[:, ::-1],
               "flip_v": lambda a: a[::-1]}[o](out)
    return np.ascontiguousarray(out)


def inverse(ops: list[str]) -> tuple[str, ...]:
    return tuple(INVERSE[o] for o in reversed(ops))


def determinable(scene: Scene) -> bool:
    obj = scene.object("obj0")
    if obj.pose.pitch or obj.pose.roll:
        raise ValueError(f"scene {scene.scene_id}: the rendered object is not upright")
    return obj.category not in CONTROLS


@dataclass(frozen=True)
class TransformFacts(Facts):
    """The operations applied to the rendered image (first op first); the restoring
    operations the question asks for are their inverse."""

    image_transform: list[str]


def answer_value(item: Item, scenes: dict[str, Scene]) -> Any:
    """The answer's value: "canonical"/"not_canonical"/None (coarse), a restoring class (granular)."""
    if not determinable(scenes[item.scene_id]):
        return None
    t = matrix(TransformFacts.from_item(item).image_transform)
    if item.granularity == "coarse":
        if op_class(t) == 0 and not np.array_equal(t, np.eye(2, dtype=int)):
            raise ValueError(f"item {item.id}: a pure mirror image has no canonical answer")
        return "canonical" if op_class(t) == 0 else "not_canonical"
    return op_class(np.linalg.inv(t).round().astype(int))


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    want = answer_value(item, scenes)
    values = OptionValuesFacts.from_item(item).option_values
    if item.granularity == "coarse" or want is None:
        hits = [lab for lab, v in values.items() if v == want]
    else:
        hits = [lab for lab, v in values.items() if v is not None and op_class(matrix(v)) == want]
    if len(hits) != 1:
        raise ValueError(f"item {item.id}: {len(hits)} options match the restoring class {want!r}")
    return item.label_of(item.option(hits[0]).text or "")


CONTEXT = (
    "The image may have been rotated, flipped, or both. The canonical orientation is the usual upright way "
    "an object is seen (a person standing head up, a car on its wheels). Rotations are clockwise or "
    "counter-clockwise as seen on the screen; a horizontal flip mirrors left and right, a vertical flip "
    "mirrors top and bottom. Operations listed with \"then\" are applied in that order."
)
STEPS = [
    "Identify the object in the image",
    "Recall how it is normally oriented",
    "Compare that with how it appears here",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _phrases_in(cls: int) -> list[tuple[str, ...]]:
    if cls == 0:
        return [()]
    return [p for p in PHRASES if p and op_class(matrix(p)) == cls]


def _pick(ctx: TaskContext, control: bool) -> Any:
    """A target; a plain procedural primitive with the same probability whether or not it
    has an up.

    The "Cannot be determined" primitives (ball, box, cylinder) are matched by the
    procedural table (plain solids that do stand one way up), so "a plain geometric solid"
    does not mean CBD; the other upright assets (catalogue and procedural figures) fill
    the rest. Among the real CBD assets the crate is drawn as often as the two balls
    together, so that a perfectly round outline is not most of the CBD key."""
    lib = ctx.library.all()
    primitive = bool(ctx.rng.random() < PROC_SHARE)
    if control:
        if primitive:
            pool = [a for a in lib if a.source == "proc" and a.category in CONTROLS]
        else:
            crate = bool(ctx.rng.random() < 0.5)
            pool = [a for a in lib if a.asset_id in CBD_REAL and (a.category not in BALLS) == crate]
    else:
        upright = [a for a in lib if (a.has_front and a.category in UPRIGHT_CATEGORIES)
                   or (not a.has_front and a.category in UPRIGHT_FRONTLESS)]
        pool = [a for a in upright if (a.source == "proc" and a.category in PRIMITIVE_CATEGORIES) == primitive]
    if not pool:
        raise RuntimeError(f"no {'CBD' if control else 'upright'} assets for {TASK}")
    return pool[int(ctx.rng.integers(len(pool)))]


# An object with a front is shown from its front half: up and down are read from the
# features a front shows (a face, a seat, a keyboard). A careful judge took the pillows of
# a sofa seen from behind, turned 90 degrees, for its feet: a plain back is a slab.
MAX_FACING_DEG = 100.0


def _render(ctx: TaskContext, granularity: str, control: bool, tall: bool) -> tuple[Scene, Any, np.ndarray, dict[str, Any]]:
    asset = _pick(ctx, control)
    scene = studio_scene(ctx, asset, granularity, elevation_range=(0.0, 20.0), n_distractors=0)
    if asset.has_front and abs(egocentric_facing(scene.object("obj0"), scene.camera("main"))) > MAX_FACING_DEG:
        raise Unreadable(f"{asset.asset_id}: seen from behind, where which way is up does not read")
    scene.ground = None
    cam = scene.camera("main")
    scene.light = Light(direction=tuple(float(c) for c in cam.forward()), intensity=0.9, ambient=0.4)  # type: ignore[arg-type]
    # frame by the visible area, not the bounding sphere: a ball fills its sphere and a
    # person does not, so sphere framing drew the "Cannot be determined" targets larger
    first = ctx.renderer.render(scene, cam, color=False).instance
    w, h = readability.object_facts(first, 1)["box"]
    if not control and w != h and (h > w) != tall:  # see _one: half the units want a taller-than-wide target
        raise Unreadable(f"the target is {'wider' if tall else 'taller'} than the unit's draw")
    cam = zoom_to_area(ctx, cam, first, 0)
    scene.cameras = [cam]
    result = ctx.renderer.render(scene, cam)
    if mask_bbox(result.instance, 0) is None:
        raise RuntimeError(f"{scene.scene_id}: the object is not visible")
    facts = readability.object_facts(result.instance, 1)
    facts["luminance"] = dark_check(result.rgb, result.instance, 0)
    record = check_readable({"objects": {"object": facts}})
    bg = np.array([int(v) for v in ctx.rng.integers(150, 235, 3)], dtype=np.uint8)
    rgb = np.where((result.instance == 0)[..., None], bg, result.rgb).astype(np.uint8)
    return scene, asset, rgb, record


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = balanced_class(ctx, len(COARSE) if coarse else 4, granularity)
    drawn: list[int] = []
    # Most upright things are taller than wide (people, chairs, lamps), so a tall box would
    # mean "not turned" and a wide one "turned a quarter": each unit draws which it shows
    # and redraws the object and view until the box agrees, so the shape of the box says
    # nothing about the transform. CBD targets keep their own outline: a ball is round at
    # every turn, which *is* what makes its answer "Cannot be determined"
    tall = bool(ctx.rng.random() < 0.5)
    scene, asset, rgb, record = resample(
        ctx, lambda a: drawn.append(a) or _render(ctx, granularity, control=k is None, tall=tall),
                                         f"{TASK} {granularity}")
    ctx.add_scene(scene)
    if coarse:
        if k == 0:
            g: tuple[str, ...] = ()
        else:
            pool = [p for c in (1, 2, 3) for p in _phrases_in(c)]
            g = pool[int(ctx.rng.integers(len(pool)))]
        values: dict[str, Any] = {text: key for key, text in COARSE.items()}
        question = "Decide whether the image shows the object in its canonical orientation."
        examples = ["A person standing head up: yes.", "A car resting on its roof: no.",
                    "A ball or a cubic crate, which has no usual upright pose: Cannot be determined."]
    else:
        cls = int(ctx.rng.integers(1, 4)) if k is None else k
        cands = _phrases_in(cls)
        g = cands[int(ctx.rng.integers(len(cands)))]
        chosen = {cls: g}
        if len(g) == 2 and op_class(matrix(g[::-1])) != cls:  # the order swap, when it differs
            chosen[op_class(matrix(g[::-1]))] = g[::-1]
        for c in range(4):
            if c not in chosen:
                pool = _phrases_in(c)
                chosen[c] = pool[int(ctx.rng.integers(len(pool)))]
        if k is None:  # controls: the transform is drawn, but no option is "right"
            pass
        values = {phrase_text(p): list(p) for p in chosen.values()}
        question = "Determine which operations, applied in the order given, restore the image to its canonical orientation."
        examples = ["A person lying on their left side with the head at the image left: rotate 90 degrees clockwise.",
                    "A car standing on its roof: rotate 180 degrees (or flip vertically).",
                    "An object that looks the same in every orientation: Cannot be determined."]
    values[CANNOT_DETERMINE] = None
    answer = CANNOT_DETERMINE if k is None else (
        COARSE["canonical" if not g else "not_canonical"] if coarse else phrase_text(g))
    options = shuffled(ctx, list(values), answer, granularity)
    transform = list(inverse(list(g)))
    if op_class(matrix(transform)) % 2:  # a quarter turn: the shown box is the rendered one on its side
        w, h = record["objects"]["object"]["box"]
        record["objects"]["object"]["box"] = [h, w]
    image = ctx.save_image(apply(rgb, transform), granularity)
    meta = {
        **object_factors(scene, asset),
        **TransformFacts(image_transform=transform).to_metadata(),
        "restoring_ops": list(g),
        "restoring_class_cw_quarter_turns": op_class(matrix(g)),
        "frame_of_reference": "image",
        "camera": scene.camera("main").metadata(),
        "readability": record,
        "attempts": len(drawn),
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=answer, values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="Whether an image is upright and which operations restore it")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]
