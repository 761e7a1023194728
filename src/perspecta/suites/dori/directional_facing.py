"""DORI Q2, directional facing: which way Object A's front points as the camera sees it.

Coarse: toward / away / leftward / rightward (quarter turns of ``egocentric_facing``,
edges at 45 and 135 degrees). Granular: eight 45-degree bins, each with a side
(0-45, 45-90, 90-135, 135-180 degrees, toward the image left or right); every coarse
class holds exactly two granular bins, and each item's facing is drawn inside its bin
at least ``bin_margin_frac`` of the bin's width from its edges (>= 1/3 for bins up to
60 degrees wide, else >= 1/4), so no picture sits on a border. "Left/right" is the side of the IMAGE the front points to.
"""

from __future__ import annotations

from typing import Any

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    balanced_class,
    two_way_class,
    check_readable,
    studio_contract,
    inside,
    knob,
    margin_frac,
    pick_target,
    resample,
    signed_bin_margin,
    make_item,
    object_factors,
    render_boxed,
    set_facing,
    realistic_backdrop,
    shuffled,
    studio_scene,
    target_view,
    zoom_to_area,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import egocentric_facing, wrap360
from perspecta.world.scene import Scene

TASK = "directional_facing"
COARSE: dict[str, tuple[str, float, float]] = {  # key -> (text, signed facing range)
    "toward": ("Toward the camera", -45.0, 45.0),
    "rightward": ("Rightward, toward the right side of the image", 45.0, 135.0),
    "leftward": ("Leftward, toward the left side of the image", -135.0, -45.0),
    "away": ("Away from the camera", 135.0, 225.0),  # wraps through 180
}
RANGES = ((0.0, 45.0), (45.0, 90.0), (90.0, 135.0), (135.0, 180.0))
GRANULAR: list[tuple[str, float, float]] = [  # (side, |facing| low, high)
    (side, lo, hi) for side in ("left", "right") for lo, hi in RANGES
]


# Frame-switch form (glance-resistant, issue 18): "on which side of the image is Object A's
# own left (or right)?" A glance answers in the viewer's frame ("left is left"), which is wrong for
# every target facing the camera and right for every target facing away; the two are
# balanced, so the glance answer scores about half of the answerable items. The decisive
# cue, toward or away, is the most readable fact in DORI: the front is drawn within
# FRAME_MAX_OFF degrees of straight toward or straight away from the camera.
FRAME_FORM = "frame_switch"
FRAME = {"image_left": "On the image left", "image_right": "On the image right"}
FRAME_MAX_OFF = 8.0


def granular_text(side: str, lo: float, hi: float) -> str:
    return f"{lo:g} to {hi:g} degrees, front toward the image {side}"


def coarse_key(facing: float) -> str:
    m = abs(facing)
    if m <= 45.0:
        return "toward"
    if m >= 135.0:
        return "away"
    return "rightward" if facing > 0 else "leftward"


def granular_bin(facing: float) -> tuple[str, float, float]:
    side = "right" if facing > 0 else "left"
    m = abs(facing)
    for lo, hi in RANGES:
        if lo <= m <= hi:
            return side, lo, hi
    raise ValueError(f"facing {facing} outside [-180, 180]")


def answer_text(scene: Scene, granularity: str) -> str:
    obj = scene.object("obj0")
    if not obj.has_front:
        return CANNOT_DETERMINE
    a = egocentric_facing(obj, scene.camera("main"))
    if granularity == "coarse":
        return COARSE[coarse_key(a)][0]
    return granular_text(*granular_bin(a))


def frame_answer(scene: Scene, side: str) -> str:
    """Frame-switch form: the image side on which Object A's OWN ``side`` ("left" or
    "right") is. A front toward the camera mirrors (its left is on the image right); a
    front pointing away does not."""
    obj = scene.object("obj0")
    if not obj.has_front:
        return CANNOT_DETERMINE
    toward = abs(egocentric_facing(obj, scene.camera("main"))) < 90.0
    return FRAME[f"image_{side}" if not toward else f"image_{'right' if side == 'left' else 'left'}"]


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    if item.metadata.get("form") == FRAME_FORM:
        return item.label_of(frame_answer(scenes[item.scene_id], item.metadata["asked_side"]))
    return item.label_of(answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "Object A is outlined by a labelled box. Its front is the side with its defining features "
    "(a face, headlights, the seat opening of a chair). Left and right mean the left and right "
    "sides of the image as you look at it; 0 degrees means the front points straight at the camera "
    "and 180 degrees means it points straight away."
)
STEPS = [
    "Find Object A and the features that mark its front",
    "Work out where that front points as seen from the camera",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _bin(granularity: str, k: int) -> tuple[float, float, float]:
    """(low, high, sign) of class ``k``'s facing range; sign -1 mirrors to the left."""
    if granularity == "coarse":
        _, lo, hi = COARSE[list(COARSE)[k]]
        return lo, hi, 1.0
    side, lo, hi = GRANULAR[k]
    return lo, hi, 1.0 if side == "right" else -1.0


def _facing_for(ctx: TaskContext, granularity: str, k: int) -> float:
    lo, hi, sign = _bin(granularity, k)
    a = sign * inside(ctx, lo, hi, margin_frac(ctx, hi - lo) * (hi - lo) + 0.2)
    return a if a <= 180.0 else a - 360.0


def _margin(granularity: str, facing: float) -> dict[str, float]:
    """Distance of the rendered facing from its class's bin edges (readability)."""
    if granularity == "coarse":
        key = coarse_key(facing)
        _, lo, hi = COARSE[key]
        f = wrap360(facing) if key == "away" else facing
        return signed_bin_margin(f, lo, hi)
    side, lo, hi = granular_bin(facing)
    m = abs(facing)
    return signed_bin_margin(m, lo, hi)


def _one(ctx: TaskContext, granularity: str) -> Item:
    k = balanced_class(ctx, len(COARSE) if granularity == "coarse" else len(GRANULAR), granularity)
    return resample(ctx, lambda attempt: _attempt(ctx, granularity, k, attempt), f"{TASK} {granularity}")


def _attempt(ctx: TaskContext, granularity: str, k: int | None, attempt: int) -> Item:
    # every class of this task may show the target head-on (facing, or facing away from, the
    # camera), where no chair's front reads (marks.head_on_readable): chairs and the other
    # head-on-unreadable assets are never its targets, in any class, so the category says
    # nothing about the answer
    asset = pick_target(ctx, cbd=k is None, head_on=True)
    scene = studio_scene(ctx, asset, granularity)
    backdrop = realistic_backdrop(ctx, scene)
    facing = None if k is None else _facing_for(ctx, granularity, k)
    set_facing(scene, float(ctx.rng.uniform(-180.0, 180.0)) if facing is None else facing)
    # framed by visible area: the frontless (CBD) targets are compact and filled their
    # bounding sphere, so sphere framing drew them larger than targets with a front
    cam = scene.camera("main")
    cam = zoom_to_area(ctx, cam, ctx.renderer.render(scene, cam, color=False).instance, 0)
    scene.cameras = [cam if c.name == "main" else c for c in scene.cameras]
    record: dict[str, Any] = {"contract": studio_contract(ctx).to_dict(),
                              "view": target_view(scene, asset, head_on=True)}
    obj = scene.object("obj0")
    if obj.has_front:
        record["bin_margin"] = _margin(granularity, egocentric_facing(obj, scene.camera("main")))
    check_readable(dict(record))  # geometry alone: a draw it rejects needs no colour render
    marked, box, facts = render_boxed(ctx, scene)
    record = {"objects": {"A": facts}, **record}
    check_readable(record)
    ctx.add_scene(scene)
    image = ctx.save_image(marked, granularity)
    truth = answer_text(scene, granularity)
    if granularity == "coarse":
        values: dict[str, Any] = {text: key for key, (text, _, _) in COARSE.items()}
        question = "Decide which direction the front of Object A points, as seen from the camera."
        examples = ["A person looking into the lens: toward the camera.",
                    "A car driving across the picture from left to right: rightward.",
                    "A round table or a ball has no front: Cannot be determined."]
    else:
        values = {granular_text(s, lo, hi): {"side": s, "range": [lo, hi]} for s, lo, hi in GRANULAR}
        question = "Estimate how far, and to which side of the image, the front of Object A is turned from the camera."
        examples = ["A person glancing slightly to the image left: 0 to 45 degrees, front toward the image left.",
                    ("A car seen from the side with a little of its grille showing, headlights on the image "
                     "right: 45 to 90 degrees, front toward the image right."),
                    ("A chair with its back to the camera, seat opening turned a little to the right: 135 to 180 "
                     "degrees, front toward the image right.")]
    values[CANNOT_DETERMINE] = None
    options = shuffled(ctx, list(values), truth, granularity)
    obj = scene.object("obj0")
    meta = {
        **object_factors(scene, asset),
        "yaw": obj.pose.yaw,
        "egocentric_facing": round(egocentric_facing(obj, scene.camera("main")), 4) if obj.has_front else None,
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


FRAME_CONTEXT = (
    "Object A is outlined by a labelled box. Its front is the side with its defining features "
    "(a face, headlights, the seat opening of a chair). Object A's own left and right are the "
    "left-hand and right-hand sides of someone standing in its place and looking the way its front "
    "points (a person's own hands, a chair's armrests as felt by someone sitting in it). Image left "
    "and right are the sides of the picture as you look at it."
)
FRAME_STEPS = [
    "Find Object A and the features that mark its front",
    "Decide whether its front points toward the camera or away from it",
    "Imagine standing in its place facing the same way and find the side the question names",
    "Say on which side of the image that side is",
    "Explain the visual evidence behind your choice",
]


def _frame(ctx: TaskContext) -> Item:
    # two classes, stratified (balanced_class over one class + its "None" slot); no
    # frontless targets here: only assets whose front reads head-on answer this form, and
    # frontless ones (compact lamps, tables) would differ from them in outline (audit, n=60)
    k = two_way_class(ctx, FRAME_FORM)
    return resample(ctx, lambda attempt: _frame_attempt(ctx, k, attempt), f"{TASK} {FRAME_FORM}")


def _frame_attempt(ctx: TaskContext, k: int, attempt: int) -> Item:
    asset = pick_target(ctx, cbd=False, head_on=True)  # no chairs: head-on, their front does not read
    scene = studio_scene(ctx, asset, FRAME_FORM)
    backdrop = realistic_backdrop(ctx, scene)
    off = float(ctx.rng.uniform(-FRAME_MAX_OFF, FRAME_MAX_OFF))
    side = "left" if ctx.rng.random() < 0.5 else "right"  # which own side is asked about
    # the asked side shows on the other image side <=> the front points at the camera
    toward = list(FRAME)[k] != f"image_{side}"
    facing = off if toward else (180.0 + off if off < 0 else off - 180.0)
    set_facing(scene, facing)
    cam = scene.camera("main")
    cam = zoom_to_area(ctx, cam, ctx.renderer.render(scene, cam, color=False).instance, 0)
    scene.cameras = [cam if c.name == "main" else c for c in scene.cameras]
    marked, box, facts = render_boxed(ctx, scene)
    record: dict[str, Any] = {"objects": {"A": facts}, "contract": studio_contract(ctx).to_dict(),
                              "view": target_view(scene, asset, head_on=True)}
    obj = scene.object("obj0")
    if obj.has_front:
        record["bin_margin"] = _margin("coarse", egocentric_facing(obj, scene.camera("main")))
    check_readable(record)
    ctx.add_scene(scene)
    image = ctx.save_image(marked, FRAME_FORM)
    truth = frame_answer(scene, side)
    values: dict[str, Any] = {text: key for key, text in FRAME.items()}
    options = shuffled(ctx, list(values), truth, FRAME_FORM)
    meta = {
        **object_factors(scene, asset),
        "yaw": obj.pose.yaw,
        "egocentric_facing": round(egocentric_facing(obj, scene.camera("main")), 4) if obj.has_front else None,
        "frame_of_reference": "object",
        "asked_side": side,
        "bbox": box,
        "n_distractors": len(scene.objects) - 1,
        "camera": scene.camera("main").metadata(),
        "readability": record,
        "backdrop": backdrop,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity="coarse", scene=scene, images=[image],
                     question=f"Decide on which side of the image Object A's own {side} side is.",
                     context=FRAME_CONTEXT, steps=FRAME_STEPS,
                     examples=[f"Own left and own right belong to the object, whichever side of the picture they are on."],
                     options=options, answer_text=truth, values=values, metadata=meta, form=FRAME_FORM)


@task("dori", TASK, derive=derive, description="Which way an object's front points as seen from the camera")
def generate(ctx: TaskContext) -> list[Item]:
    items = [_one(ctx, "coarse"), _one(ctx, "granular")]
    if knob(ctx, "frame_switch_items") >= 0.5:  # standard and hard add the frame-switch form
        items.append(_frame(ctx))
    return items
