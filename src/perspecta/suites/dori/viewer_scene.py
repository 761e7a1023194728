"""DORI Q6, viewer-scene direction: has the object turned about the vertical axis between two
images taken by a fixed camera, and by how many degrees clockwise (seen from above)?

The scene record holds the object twice, "obj0" before and "obj1" after the turn, at
the same place; each image renders one of them. The answer is
``ccw_to_clockwise(yaw_difference(obj0, obj1))``. Coarse: rotated (any multiple of 45
degrees but 0) or not. Granular: 0 / 90 / 180 / 270. The controls are plain balls and
cylinders, which look the same after any such turn.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    draw_class,
    label_for,
    make_item,
    object_factors,
    only,
    pick_asset,
    render_plain,
    shuffled,
    studio_scene,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import ccw_to_clockwise, wrap180, yaw_difference
from perspecta.world.scene import Pose, Scene

TASK = "viewer_scene_direction"
CONTROLS = ("ball", "cylinder")
COARSE = {"rotated": "Yes, the object has rotated", "not_rotated": "No, the object has not rotated"}
GRANULAR_DEG = (0, 90, 180, 270)
TOL = 1.0  # turns are exact multiples; anything else is a corrupt record


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


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return label_for(item, answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "The two images show the same object, taken by a camera that did not move; between them the "
    "object may have turned about its vertical axis (the line from its top to its bottom). Clockwise "
    "means clockwise as seen from above, looking down on the object."
)
STEPS = [
    "Find the object in both images and the features that mark its front",
    "Compare where the front points in the first and in the second image",
    "Work out the turn about the vertical axis that leads from the first to the second",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = draw_class(ctx, len(COARSE) if coarse else len(GRANULAR_DEG))
    asset = pick_asset(ctx, control=k is None, categories=CONTROLS if k is None else None,
                       sources=("proc",) if k is None else None)
    scene = studio_scene(ctx, asset, granularity)
    if k is None:
        turn = int(ctx.rng.choice([0, 90, 180, 270]))
    elif coarse:
        turn = 0 if list(COARSE)[k] == "not_rotated" else int(ctx.rng.integers(1, 8)) * 45
    else:
        turn = GRANULAR_DEG[k]
    before = scene.object("obj0")
    after = dataclasses.replace(before, id="obj1", params=dict(before.params),
                                pose=Pose(before.pose.position, round(before.pose.yaw - turn, 6)))
    scene.objects.append(after)
    ctx.add_scene(scene)
    images = []
    for oid, name in (("obj0", f"{granularity}_1"), ("obj1", f"{granularity}_2")):
        images.append(ctx.save_image(render_plain(ctx, only(scene, oid)), name))
    if coarse:
        values: dict[str, Any] = {text: key for key, text in COARSE.items()}
        question = "Decide whether the object has turned about its vertical axis between the two images."
        examples = ["A car facing the camera in the first image and showing its side in the second: yes.",
                    "A chair looking the same in both images: no.",
                    "A plain ball, which looks the same however it turns: Cannot be determined."]
    else:
        values = {granular_text(d): d for d in GRANULAR_DEG}
        question = "Determine how many degrees clockwise (seen from above) the object turned between the two images."
        examples = ["Facing the camera, then with its front toward the image right: 270 degrees clockwise.",
                    "Facing the camera, then with its front toward the image left: 90 degrees clockwise.",
                    "Facing the camera, then with its back to the camera: 180 degrees clockwise."]
    values[CANNOT_DETERMINE] = None
    options = shuffled(ctx, list(values))
    meta = {
        **object_factors(scene, asset),
        "yaw_before": before.pose.yaw,
        "yaw_after": after.pose.yaw,
        "turn_clockwise": turn,
        "frame_of_reference": "object",
        "camera": scene.camera("main").metadata(),
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=images,
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=answer_text(scene, granularity), values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="Turn of an object about the vertical axis between two images")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]
