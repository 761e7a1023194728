"""DORI Q6, viewer-scene direction: has the object turned about the vertical axis between two
images taken by a fixed camera, and by how many degrees clockwise (seen from above)?

The scene record holds the object twice, "obj0" before and "obj1" after the turn, at
the same place; each image renders one of them. The answer is
``ccw_to_clockwise(yaw_difference(obj0, obj1))``. Coarse: rotated (by at least the
``min_turn_deg`` knob either way) or not. Granular: 0 / 90 / 180 / 270. The CBD
targets look the same after any turn about the vertical axis: round real assets
(a barrel, a pedestal table, round lamps) and a few plain balls and cylinders.

Every pair — "no rotation" included — is shot with the same nuisance changes: the second
image has its own sun, backdrop tint and a slightly re-framed camera (``pair_jitter``),
so identical or near-identical pictures carry no answer.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    CONTROL_CATEGORIES,
    ROUND_REAL,
    balanced_class,
    two_way_class,
    check_readable,
    knob,
    make_item,
    object_factors,
    pick_target,
    render_pair,
    resample,
    set_facing,
    shuffled,
    studio_scene,
    target_view,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import ccw_to_clockwise, egocentric_facing, wrap180, yaw_difference
from perspecta.world.scene import Pose, Scene

TASK = "viewer_scene_direction"
CONTROLS = ("ball", "cylinder")
COARSE = {"rotated": "Yes, the object has rotated", "not_rotated": "No, the object has not rotated"}
GRANULAR_DEG = (0, 90, 180, 270)
TOL = 1.0  # turns are exact multiples; anything else is a corrupt record
# Frame-switch form (glance-resistant, issue 18): "did the object turn to its own left or its
# own right?" It starts within FRAME_START_OFF degrees of facing the camera or facing away
# (a face or a back: unmistakable) and turns FRAME_TURN degrees, ending side-on (its front
# clearly toward one side of the image). A glance reads the turn in the viewer's frame
# ("it now faces the image right, so it turned right"): wrong for every object that
# started facing the camera, right for every one that started facing away, half each.
FRAME_FORM = "frame_switch"
FRAME = {"own_left": "To its own left", "own_right": "To its own right"}
FRAME_START_OFF = 8.0
FRAME_TURN = (75.0, 105.0)


def turned_clockwise(scene: Scene) -> float:
    return ccw_to_clockwise(yaw_difference(scene.object("obj0"), scene.object("obj1")))


def granular_text(deg: int) -> str:
    return f"{deg} degrees clockwise"


def answer_text(scene: Scene, granularity: str) -> str:
    if not scene.object("obj0").has_front:
        return CANNOT_DETERMINE
    cw = turned_clockwise(scene)
    if granularity == "coarse":
        return COARSE["not_rotated" if abs(float(wrap180(cw))) <= TOL else "rotated"]
    for d in GRANULAR_DEG:
        if abs(float(wrap180(cw - d))) <= TOL:
            return granular_text(d)
    raise ValueError(f"scene {scene.scene_id}: turn of {cw:.2f} degrees is not one of {GRANULAR_DEG}")


def frame_answer(scene: Scene) -> str:
    """Frame-switch form: did the object turn to its OWN left (counter-clockwise seen from
    above, whatever the camera) or to its own right?"""
    if not scene.object("obj0").has_front:
        return CANNOT_DETERMINE
    return FRAME["own_left" if float(wrap180(yaw_difference(scene.object("obj0"), scene.object("obj1")))) > 0 else "own_right"]


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    if item.metadata.get("form") == FRAME_FORM:
        return item.label_of(frame_answer(scenes[item.scene_id]))
    return item.label_of(answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "The two images show the same object, taken by a camera that stayed in place (the second picture may be "
    "framed slightly differently, and the light and backdrop may change); between them the object may have "
    "turned about its vertical axis (the line from its top to its bottom). Clockwise means clockwise as seen "
    "from above, looking down on the object. If the object would look the same after any such turn, the "
    "turn cannot be determined."
)
STEPS = [
    "Find the object in both images and the features that mark its front",
    "Compare where the front points in the first and in the second image",
    "Work out the turn about the vertical axis that leads from the first to the second",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def pair_jitter(ctx: TaskContext) -> float:
    """Relative zoom / re-aim of the second camera (a nuisance, never the answer)."""
    return float(knob(ctx, "pair_jitter"))


# a person (seen from the side or behind, she shows her turn only by shoulders and feet)
# turns at least PERSON_BACK_MIN_TURN degrees for a "rotated" answer
PERSON_BACK_MIN_TURN = 45.0


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = balanced_class(ctx, len(COARSE) if coarse else len(GRANULAR_DEG), granularity)
    min_turn = float(knob(ctx, "min_turn_deg")) if coarse else 0.0
    return resample(ctx, lambda attempt: _attempt(ctx, granularity, k, min_turn, attempt), f"{TASK} {granularity}")


def _attempt(ctx: TaskContext, granularity: str, k: int | None, min_turn: float, attempt: int) -> Item:
    coarse = granularity == "coarse"
    asset = pick_target(ctx, cbd=k is None, cbd_real=ROUND_REAL,
                        cbd_primitives=tuple(c for c in CONTROL_CATEGORIES if c in CONTROLS))
    scene = studio_scene(ctx, asset, granularity, n_distractors=0)
    if asset.has_front and asset.category == "person":
        # drawn large up front, never redrawn: rejecting small turns of people changed which
        # assets "rotated" items show and the audit read "not rotated" from the outline
        min_turn = max(min_turn, PERSON_BACK_MIN_TURN) if coarse else min_turn
    if k is None:
        turn: float = float(ctx.rng.choice([0, 90, 180, 270]))
    elif coarse:
        turn = 0.0 if list(COARSE)[k] == "not_rotated" else round(float(ctx.rng.uniform(min_turn, 360.0 - min_turn)), 3)
    else:
        turn = GRANULAR_DEG[k]
    before = scene.object("obj0")
    after = dataclasses.replace(before, id="obj1", params=dict(before.params),
                                pose=Pose(before.pose.position, round(before.pose.yaw - turn, 6)))
    scene.objects.append(after)
    rgbs, objects, second = render_pair(ctx, scene, jitter=pair_jitter(ctx))
    record: dict[str, Any] = {"objects": objects, "view": target_view(scene, asset)}
    if after.has_front and after.category == "person" and turn % 360.0:
        # a person seen from the side or behind reads her turn from shoulders and feet: a
        # careful judge under-read a small one, so every person's turn is large
        record["winner_margin"] = {"value": round(min(turn % 360.0, 360.0 - turn % 360.0), 3),
                                   "min": PERSON_BACK_MIN_TURN, "unit": "deg turn"}
    check_readable(record)
    ctx.add_scene(scene)
    images = [ctx.save_image(rgb, f"{granularity}_{i}") for i, rgb in enumerate(rgbs, start=1)]
    if coarse:
        values: dict[str, Any] = {text: key for key, text in COARSE.items()}
        question = "Decide whether the object has turned about its vertical axis between the two images."
        examples = ["A car facing the camera in the first image and showing its side in the second: yes.",
                    "A chair looking the same in both images: no.",
                    "A round barrel or a ball, which looks the same however it turns: Cannot be determined."]
    else:
        values = {granular_text(d): d for d in GRANULAR_DEG}
        question = "Determine how many degrees clockwise (seen from above) the object turned between the two images."
        examples = ["Facing the camera, then with its front toward the image right: 270 degrees clockwise.",
                    "Facing the camera, then with its front toward the image left: 90 degrees clockwise.",
                    "Facing the camera, then with its back to the camera: 180 degrees clockwise."]
    values[CANNOT_DETERMINE] = None
    truth = answer_text(scene, granularity)
    options = shuffled(ctx, list(values), truth, granularity)
    meta = {
        **object_factors(scene, asset),
        "yaw_before": before.pose.yaw,
        "yaw_after": after.pose.yaw,
        "turn_clockwise": turn,
        "frame_of_reference": "object",
        "camera": scene.camera("main").metadata(),
        "second_image": second,
        "readability": record,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=images,
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=truth, values=values, metadata=meta)


FRAME_CONTEXT = (
    "The two images show the same object, taken by a camera that stayed in place (the second picture may be "
    "framed slightly differently, and the light and backdrop may change); between them the object turned "
    "about its vertical axis. Its own left and right are the left-hand and right-hand sides of someone "
    "standing in its place and looking the way its front points, as a person's own hands are. If the object "
    "has no front, the direction of its turn cannot be determined."
)
FRAME_STEPS = [
    "Find the object in both images and the features that mark its front",
    "Note where its front points in the first image and in the second",
    "Imagine standing in its place in the first image, facing the same way, and turning to where it faces next",
    "Decide whether that turn goes to your own left or to your own right",
    "Explain the visual evidence behind your choice",
]


def _frame(ctx: TaskContext) -> Item:
    # two classes, stratified; no frontless targets (see directional_facing._frame)
    k = two_way_class(ctx, FRAME_FORM)
    return resample(ctx, lambda attempt: _frame_attempt(ctx, k, attempt), f"{TASK} {FRAME_FORM}")


def _frame_attempt(ctx: TaskContext, k: int, attempt: int) -> Item:
    asset = pick_target(ctx, cbd=False, head_on=True)  # no chairs (see marks)
    scene = studio_scene(ctx, asset, FRAME_FORM, n_distractors=0)
    toward = bool(ctx.rng.random() < 0.5)  # starts facing the camera (the glance misreads) or away
    off = float(ctx.rng.uniform(-FRAME_START_OFF, FRAME_START_OFF))
    set_facing(scene, off if toward else (180.0 + off if off < 0 else off - 180.0))
    amount = float(ctx.rng.uniform(*FRAME_TURN))
    left = list(FRAME)[k] == "own_left"
    ccw = amount if left else -amount  # own left = counter-clockwise seen from above, for any camera
    before = scene.object("obj0")
    after = dataclasses.replace(before, id="obj1", params=dict(before.params),
                                pose=Pose(before.pose.position, round(before.pose.yaw + ccw, 6)))
    scene.objects.append(after)
    rgbs, objects, second = render_pair(ctx, scene, jitter=pair_jitter(ctx))
    record: dict[str, Any] = {"objects": objects, "view": target_view(scene, asset, head_on=True),
                              "winner_margin": {"value": round(amount, 3), "min": FRAME_TURN[0], "unit": "deg turn"}}
    check_readable(record)
    ctx.add_scene(scene)
    images = [ctx.save_image(rgb, f"{FRAME_FORM}_{i}") for i, rgb in enumerate(rgbs, start=1)]
    values: dict[str, Any] = {text: key for key, text in FRAME.items()}
    truth = frame_answer(scene)
    options = shuffled(ctx, list(values), truth, FRAME_FORM)
    cam = scene.camera("main")
    meta = {
        **object_factors(scene, asset),
        "yaw_before": before.pose.yaw,
        "yaw_after": after.pose.yaw,
        "facing_before": round(float(egocentric_facing(before, cam)), 4) if before.has_front else None,
        "facing_after": round(float(egocentric_facing(after, cam)), 4) if after.has_front else None,
        "turn_ccw": round(ccw, 3),
        "frame_of_reference": "object",
        "camera": cam.metadata(),
        "second_image": second,
        "readability": record,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity="coarse", scene=scene, images=images,
                     question="Decide whether the object turned to its own left or to its own right between the two images.",
                     context=FRAME_CONTEXT, steps=FRAME_STEPS,
                     examples=["Own left and own right belong to the object, whichever side of the picture they are on."],
                     options=options, answer_text=truth, values=values, metadata=meta, form=FRAME_FORM)


@task("dori", TASK, derive=derive, description="Turn of an object about the vertical axis between two images")
def generate(ctx: TaskContext) -> list[Item]:
    items = [_one(ctx, "coarse"), _one(ctx, "granular")]
    if knob(ctx, "frame_switch_items") >= 0.5:  # standard and hard add the frame-switch form
        items.append(_frame(ctx))
    return items
