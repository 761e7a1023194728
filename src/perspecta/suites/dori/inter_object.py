"""DORI Q5, inter-object direction: how two objects (red dots "A" and "B") are oriented to each
other, judged from the objects' own points of view rather than the camera's.

Coarse: on ``d = |yaw_difference(A, B)|`` — same (0-22.5), partially same (22.5-67.5),
perpendicular (67.5-112.5), partially opposite (112.5-157.5), opposite (157.5-180).
Granular: ``r = rotation_to_face(B, A)`` (counter-clockwise positive), binned into
no rotation (|r| <= 5), 0-45 / 46-90 / 91-135 degrees clockwise or counter-clockwise
(seen from above), and about 180 degrees (|r| > 135). Street scenes with 0-2 distractor
objects; B's yaw is set after layout to realise the drawn answer, with a margin of at
least 7 degrees from every bin edge.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.render.overlay import draw_dot
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    CONTROL_CATEGORIES,
    draw_class,
    label_for,
    make_item,
    shuffled,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    heading_of,
    point_of,
    rotation_to_face,
    wrap360,
    yaw_difference,
)
from perspecta.world.samplers import SamplingError, sample_clutter
from perspecta.world.samplers.common import Rect, any_overlap, visibility
from perspecta.world.scene import Scene

TASK = "inter_object_direction"
PAIR_CATEGORIES = ("person", "car", "dog", "horse", "bicycle", "chair", "armchair", "sofa", "cat", "motorcycle")
DISTRACTORS = ("person", "car", "bicycle", "dog", "table", "plant")
PAIR_CONTROLS = ("ball", "box", "cylinder")
COARSE: list[tuple[str, str, float, float]] = [  # key, text, |yaw difference| range
    ("same", "They face the same direction", 0.0, 22.5),
    ("partially_same", "They face partially the same direction", 22.5, 67.5),
    ("perpendicular", "They face perpendicular directions", 67.5, 112.5),
    ("partially_opposite", "They face partially opposite directions", 112.5, 157.5),
    ("opposite", "They face opposite directions", 157.5, 180.0),
]
COARSE_MARGIN = 7.5
# dir, text, |r| range, range drawn from (clockwise = r < 0)
GRANULAR: list[tuple[str, str, float, float, float, float]] = [
    ("none", "No rotation needed", 0.0, 5.0, 0.0, 2.0),
    ("cw", "0 to 45 degrees clockwise", 5.0, 45.0, 12.0, 38.0),
    ("cw", "46 to 90 degrees clockwise", 45.0, 90.0, 53.0, 82.0),
    ("cw", "91 to 135 degrees clockwise", 90.0, 135.0, 98.0, 127.0),
    ("ccw", "0 to 45 degrees counter-clockwise", 5.0, 45.0, 12.0, 38.0),
    ("ccw", "46 to 90 degrees counter-clockwise", 45.0, 90.0, 53.0, 82.0),
    ("ccw", "91 to 135 degrees counter-clockwise", 90.0, 135.0, 98.0, 127.0),
    ("either", "About 180 degrees, either direction", 135.0, 180.0, 143.0, 180.0),
]
MAX_TRIES = 40


def coarse_text(a_obj: Any, b_obj: Any) -> str:
    d = abs(yaw_difference(a_obj, b_obj))
    return next(text for _, text, lo, hi in COARSE if lo <= d <= hi)


def granular_text(r: float) -> str:
    m = abs(r)
    direction = "cw" if r < 0 else "ccw"
    for dr, text, lo, hi, _, _ in GRANULAR:
        if lo <= m <= hi and (dr in ("none", "either") or dr == direction) and not (dr != "none" and m <= 5.0):
            return text
    raise ValueError(f"rotation {r} fits no bin")


def answer_text(scene: Scene, granularity: str) -> str:
    a, b = scene.object("obj0"), scene.object("obj1")
    if not (a.has_front and b.has_front):
        return CANNOT_DETERMINE
    return coarse_text(a, b) if granularity == "coarse" else granular_text(rotation_to_face(b, a))


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return label_for(item, answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "Objects A and B are marked with red dots. Judge them from their own points of view, not from the "
    "camera's: an object's front is the side with its defining features (a face, headlights, the seat "
    "opening of a chair), and it faces the way that front points. Clockwise means clockwise as seen from "
    "above, looking down on the scene."
)
STEPS = [
    "Find Objects A and B and the features that mark their fronts",
    "Imagine standing at each object, looking the way its front points",
    "Work out how the two directions relate",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _target_yaw_b(ctx: TaskContext, scene: Scene, granularity: str, k: int) -> float:
    a, b = scene.object("obj0"), scene.object("obj1")
    sign = 1.0 if ctx.rng.random() < 0.5 else -1.0
    if granularity == "coarse":
        _, _, lo, hi = COARSE[k]
        lo_e = lo + COARSE_MARGIN if lo > 0 else lo
        hi_e = hi - COARSE_MARGIN if hi < 180 else hi
        return float(wrap360(a.pose.yaw + sign * ctx.rng.uniform(lo_e, hi_e)))
    dr, _, _, _, lo, hi = GRANULAR[k]
    m = float(ctx.rng.uniform(lo, hi))
    r = -m if dr == "cw" else m if dr == "ccw" else sign * m
    # front heading + r = heading of the direction B -> A
    return float(wrap360(heading_of(point_of(a) - point_of(b)) - r))


def _scene(ctx: TaskContext, granularity: str, k: int | None) -> Scene:
    for attempt in range(MAX_TRIES):
        cats = [PAIR_CATEGORIES[int(ctx.rng.integers(len(PAIR_CATEGORIES)))] for _ in range(2)]
        if k is None:
            cats[int(ctx.rng.integers(2))] = PAIR_CONTROLS[int(ctx.rng.integers(len(PAIR_CONTROLS)))]
        extra = [DISTRACTORS[int(ctx.rng.integers(len(DISTRACTORS)))] for _ in range(int(ctx.rng.integers(3)))]
        try:
            scene = sample_clutter(ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-{granularity}", seed=ctx.seed,
                                   style="street", object_categories=cats + extra,
                                   image_size=int(ctx.config.get("image_size", 256)), min_visible=0.8,
                                   min_pixels=40.0)
        except SamplingError:
            continue
        if k is not None:
            b = scene.object("obj1")
            b.pose.yaw = round(_target_yaw_b(ctx, scene, granularity, k), 6)
            others = [Rect.of(o) for o in scene.objects if o.id != "obj1"]
            if any_overlap(Rect.of(b), others, 0.2):
                continue
        vis = visibility(scene.objects, scene.camera("main"), margin=2.0)
        if all(v.inside for v in vis) and min(v.visible_fraction for v in vis[:2]) >= 0.7:
            return scene
    raise SamplingError(f"{ctx.scene_prefix}: no valid two-object layout after {MAX_TRIES} tries")


def _dot_point(instance: np.ndarray, index: int) -> tuple[float, float]:
    """The visible pixel of object ``index`` nearest to the centroid of its visible pixels."""
    vs, us = np.nonzero(instance == index + 1)
    if us.size == 0:
        raise RuntimeError(f"object {index} is not visible")
    cu, cv = us.mean(), vs.mean()
    j = int(np.argmin((us - cu) ** 2 + (vs - cv) ** 2))
    return float(us[j]), float(vs[j])


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = draw_class(ctx, len(COARSE) if coarse else len(GRANULAR))
    scene = _scene(ctx, granularity, k)
    ctx.add_scene(scene)
    result = ctx.renderer.render(scene, scene.camera("main"))
    rgb = result.rgb
    dots = []
    for idx, name in ((0, "A"), (1, "B")):
        xy = _dot_point(result.instance, idx)
        dots.append([round(xy[0], 1), round(xy[1], 1)])
        rgb = draw_dot(rgb, xy, label=name)
    image = ctx.save_image(rgb, granularity)
    a, b = scene.object("obj0"), scene.object("obj1")
    if coarse:
        values: dict[str, Any] = {text: key for key, text, _, _ in COARSE}
        question = "Decide how the directions that Objects A and B face relate to each other."
        examples = ["Two cars parked one behind the other in the same lane: the same direction.",
                    "Two people looking straight at each other: opposite directions.",
                    "A car facing north and a person facing east: perpendicular directions."]
    else:
        values = {text: {"dir": dr, "range": [lo, hi]} for dr, text, lo, hi, _, _ in GRANULAR}
        question = ("Determine how far, and which way (clockwise or counter-clockwise, seen from above), Object B "
                    "must turn about its vertical axis so that its front faces Object A.")
        examples = ["B already looks straight at A: no rotation needed.",
                    "A is a little to B's right: 0 to 45 degrees clockwise.",
                    "A is directly to B's left: 46 to 90 degrees counter-clockwise.",
                    "A is right behind B: about 180 degrees, either direction."]
    values[CANNOT_DETERMINE] = None
    options = shuffled(ctx, list(values))
    meta = {
        "category": a.category,
        "category_b": b.category,
        "categories": [o.category for o in scene.objects],
        "asset_id": a.asset_id,
        "asset_id_b": b.asset_id,
        "source": a.asset_id.split(":", 1)[0],
        "source_b": b.asset_id.split(":", 1)[0],
        "object_ids": ["obj0", "obj1"],
        "has_front": a.has_front and b.has_front,
        "n_distractors": len(scene.objects) - 2,
        "scene_kind": scene.kind,
        "yaw_a": a.pose.yaw,
        "yaw_b": b.pose.yaw,
        "yaw_difference": round(yaw_difference(a, b), 4) if a.has_front and b.has_front else None,
        "rotation_b_to_face_a": round(rotation_to_face(b, a), 4) if b.has_front else None,
        "dots": dots,
        "frame_of_reference": "object",
        "camera": scene.camera("main").metadata(),
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=answer_text(scene, granularity), values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="Relative orientation of two marked objects, from their own view")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]


__all__ = ["CONTROL_CATEGORIES", "derive", "generate"]
