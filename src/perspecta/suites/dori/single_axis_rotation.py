"""DORI Q3, single-axis rotation: how Object A must turn about the vertical axis to face the camera.

The needed turn is ``rotation_to_face_camera`` (counter-clockwise positive); as a
clockwise amount seen from above it is ``c = wrap360(egocentric_facing)`` (a front
pointing to the image right needs 90 degrees clockwise). Coarse: the shorter way to
turn (none within 15 degrees, "either way" within 15 degrees of 180). Granular: the
nearest of 0, 45, ..., 315 degrees clockwise. Every drawn turn keeps at least
``bin_margin_frac`` (>= 1/3 for bins up to 60 degrees wide, else >= 1/4) of its bin's width from the bin's edges.
"""

from __future__ import annotations

from typing import Any

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    balanced_class,
    check_readable,
    studio_contract,
    inside,
    margin_frac,
    pick_target,
    resample,
    signed_bin_margin,
    make_item,
    object_factors,
    render_boxed,
    set_facing,
    shuffled,
    realistic_backdrop,
    studio_scene,
    target_view,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import ccw_to_clockwise, rotation_to_face_camera, wrap180, wrap360
from perspecta.world.scene import Scene

TASK = "single_axis_rotation"
# key -> (text, clockwise range centred on the class, margin-free edges)
COARSE: dict[str, tuple[str, float, float]] = {
    "none": ("No rotation: it already faces the camera", -15.0, 15.0),
    "clockwise": ("Clockwise (seen from above)", 15.0, 165.0),
    "either": ("Either direction: it faces directly away, so both ways are 180 degrees", 165.0, 195.0),
    "counter-clockwise": ("Counter-clockwise (seen from above)", 195.0, 345.0),
}
STEPS_DEG = tuple(range(0, 360, 45))


def clockwise_needed(scene: Scene) -> float:
    """Clockwise turn (seen from above, [0, 360)) that makes obj0 face camera "main"."""
    return ccw_to_clockwise(rotation_to_face_camera(scene.object("obj0"), scene.camera("main")))


def granular_text(deg: int) -> str:
    return f"{deg} degrees clockwise"


def coarse_key(cw: float) -> str:
    s = float(wrap180(cw))  # (-180, 180], + = clockwise
    if abs(s) <= 15.0:
        return "none"
    if abs(s) >= 165.0:
        return "either"
    return "clockwise" if s > 0 else "counter-clockwise"


def nearest_step(cw: float) -> int:
    return min(STEPS_DEG, key=lambda d: abs(float(wrap180(cw - d))))


def answer_text(scene: Scene, granularity: str) -> str:
    if not scene.object("obj0").has_front:
        return CANNOT_DETERMINE
    cw = clockwise_needed(scene)
    return COARSE[coarse_key(cw)][0] if granularity == "coarse" else granular_text(nearest_step(cw))


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return item.label_of(answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "Object A is outlined by a labelled box. It can turn only about its vertical axis (the line from "
    "its top to its bottom). Clockwise means clockwise as seen from above, looking down on the object; "
    "a front that points to the image right needs a clockwise turn to face the camera."
)
STEPS = [
    "Find Object A and the features that mark its front",
    "Judge where the front points relative to the camera",
    "Work out the turn about the vertical axis that would make it face the camera",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _margin(granularity: str, cw: float) -> dict[str, float]:
    """Distance of the needed turn from its class's bin edges (readability)."""
    if granularity == "coarse":
        _, lo, hi = COARSE[coarse_key(cw)]
        x = float(wrap180(cw))
        x = wrap360(x) if lo >= 165.0 else x  # the "either" and counter-clockwise bins live in [165, 345]
        return signed_bin_margin(x, lo, hi)
    step = nearest_step(cw)
    return signed_bin_margin(float(wrap180(cw - step)), -22.5, 22.5)


def _one(ctx: TaskContext, granularity: str) -> Item:
    k = balanced_class(ctx, len(COARSE) if granularity == "coarse" else len(STEPS_DEG), granularity)
    return resample(ctx, lambda attempt: _attempt(ctx, granularity, k, attempt), f"{TASK} {granularity}")


def _attempt(ctx: TaskContext, granularity: str, k: int | None, attempt: int) -> Item:
    # every class of this task may show the target head-on (facing, or facing away from, the
    # camera), where no chair's front reads (marks.head_on_readable): chairs and the other
    # head-on-unreadable assets are never its targets, in any class, so the category says
    # nothing about the answer
    asset = pick_target(ctx, cbd=k is None, head_on=True)
    scene = studio_scene(ctx, asset, granularity)
    backdrop = realistic_backdrop(ctx, scene)
    if k is None:
        cw = float(ctx.rng.uniform(0.0, 360.0))
    elif granularity == "coarse":
        _, lo, hi = COARSE[list(COARSE)[k]]
        cw = inside(ctx, lo, hi, margin_frac(ctx, hi - lo) * (hi - lo) + 0.2)
    else:
        cw = STEPS_DEG[k] + inside(ctx, -22.5, 22.5, margin_frac(ctx, 45.0) * 45.0 + 0.2)
    set_facing(scene, float(wrap180(cw)))  # facing == clockwise amount needed (mod 360)
    record: dict[str, Any] = {"contract": studio_contract(ctx).to_dict(),
                              "view": target_view(scene, asset, head_on=True)}
    if scene.object("obj0").has_front:
        record["bin_margin"] = _margin(granularity, clockwise_needed(scene))
    check_readable(dict(record))  # geometry alone: a draw it rejects needs no colour render
    marked, box, facts = render_boxed(ctx, scene)
    record = {"objects": {"A": facts}, **record}
    check_readable(record)
    ctx.add_scene(scene)
    image = ctx.save_image(marked, granularity)
    if granularity == "coarse":
        values: dict[str, Any] = {text: key for key, (text, _, _) in COARSE.items()}
        question = "Decide the shorter direction in which Object A must turn to face the camera."
        examples = ["A chair whose seat opening points to the image right: clockwise.",
                    "A person looking straight at the camera: no rotation.",
                    "A person with their back to the camera: either direction."]
    else:
        values = {granular_text(d): d for d in STEPS_DEG}
        question = "Choose the clockwise turn (seen from above) closest to the one that makes Object A face the camera."
        examples = ["Already facing the camera: 0 degrees clockwise.",
                    "Front pointing to the image right: 90 degrees clockwise.",
                    "Front pointing to the image left: 270 degrees clockwise.",
                    "Back to the camera: 180 degrees clockwise."]
    values[CANNOT_DETERMINE] = None
    truth = answer_text(scene, granularity)
    options = shuffled(ctx, list(values), truth, granularity)
    obj = scene.object("obj0")
    meta = {
        **object_factors(scene, asset),
        "axis": "vertical",
        "yaw": obj.pose.yaw,
        "clockwise_needed": round(clockwise_needed(scene), 4) if obj.has_front else None,
        "frame_of_reference": "camera",
        "bbox": box,
        "n_distractors": len(scene.objects) - 1,
        "camera": scene.camera("main").metadata(),
        "readability": record,
        "backdrop": backdrop,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=truth, values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="Turn about the vertical axis that makes an object face the camera")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]
