"""DORI Q1, view parallelism: how far an object's front surface is turned from the camera plane.

One unit = one studio scene with one object marked "A" by a bounding box, giving a
coarse item (toward / sideways / away) and a granular item (DORI's angle bins
0-15, 65-95, 135-180 degrees). The angle is sampled *inside* a bin with a margin, so
no answer sits on a bin edge; objects without a front answer "Cannot be determined".
"""

from __future__ import annotations

import math
from typing import Any

from perspecta.dataset.item import Item, Option, letter_options
from perspecta.render.overlay import draw_box
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import make_item, pick_asset
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import camera_plane_angle, mask_bbox
from perspecta.world.samplers import sample_studio
from perspecta.world.scene import Scene

SUITE, TASK = "dori", "view_parallelism"

# (low, high, coarse answer, granular answer); angles in degrees, see camera_plane_angle.
BINS: list[tuple[float, float, str, str]] = [
    (0.0, 15.0, "Facing toward the camera", "0 to 15 degrees"),
    (65.0, 95.0, "Turned sideways, perpendicular to the camera", "65 to 95 degrees"),
    (135.0, 180.0, "Facing away from the camera", "135 to 180 degrees"),
]
MARGIN = 2.0  # degrees kept clear of every bin edge
CONTROL_RATE = 0.25  # = 1 / (number of bins + 1): "Cannot be determined" is as common as each bin


def _bin_of(angle: float) -> tuple[float, float, str, str] | None:
    for b in BINS:
        if b[0] <= angle <= b[1]:
            return b
    return None


def _answer_texts(scene: Scene) -> tuple[str, str]:
    """(coarse, granular) answer text for the scene's object "obj0" seen by camera "main"."""
    obj = scene.object("obj0")
    if not obj.has_front:
        return CANNOT_DETERMINE, CANNOT_DETERMINE
    b = _bin_of(camera_plane_angle(obj, scene.camera("main")))
    if b is None:
        raise ValueError(f"scene {scene.scene_id}: object angle lies between DORI's bins")
    return b[2], b[3]


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    coarse, granular = _answer_texts(scenes[item.scene_id])
    want = coarse if item.granularity == "coarse" else granular
    for o in item.options:
        if o.text == want:
            return o.label
    raise ValueError(f"item {item.id}: the geometric answer {want!r} is not among its options")


def _yaw_for_angle(scene: Scene, angle: float, sign: float) -> float:
    """World yaw that turns the object's front ``angle`` degrees from the camera plane normal."""
    fwd = scene.camera("main").forward()
    base = math.degrees(math.atan2(-fwd[1], -fwd[0]))  # direction back toward the camera
    return base + sign * angle


def _pick_asset(ctx: TaskContext) -> Any:
    control = ctx.rng.random() < ctx.config.get("control_rate", CONTROL_RATE)
    return pick_asset(ctx, control)


def _options(ctx: TaskContext, texts: list[str]) -> list[Option]:
    order = ctx.rng.permutation(len(texts))
    return letter_options([texts[i] for i in order])


@task(SUITE, TASK, derive=derive, description="Angle of an object's front surface to the camera plane")
def generate(ctx: TaskContext) -> list[Item]:
    asset = _pick_asset(ctx)
    scene = sample_studio(
        ctx.rng, ctx.library, scene_id=ctx.scene_prefix, seed=ctx.seed,
        asset_id=asset.asset_id, image_size=int(ctx.config.get("image_size", 256)),
    )
    lo, hi, _, _ = BINS[int(ctx.rng.integers(len(BINS)))]
    angle = float(ctx.rng.uniform(lo + (MARGIN if lo > 0 else 0.0), hi - (MARGIN if hi < 180 else 0.0)))
    sign = 1.0 if ctx.rng.random() < 0.5 else -1.0
    obj = scene.objects[0]
    obj.pose.yaw = round(_yaw_for_angle(scene, angle, sign) % 360.0, 6)
    ctx.add_scene(scene)

    camera = scene.camera("main")
    result = ctx.renderer.render(scene, camera)
    box = mask_bbox(result.instance, 0)
    if box is None:
        raise RuntimeError(f"{scene.scene_id}: the object is not visible in the render")
    image = ctx.save_image(draw_box(result.rgb, box, label="A"), "view")
    coarse_ans, granular_ans = _answer_texts(scene)
    metadata = {
        "object_id": obj.id,
        "category": obj.category,
        "asset_id": obj.asset_id,
        "source": asset.source,
        "has_front": obj.has_front,
        "yaw": obj.pose.yaw,
        "camera_plane_angle": round(camera_plane_angle(obj, camera), 4) if obj.has_front else None,
        "frame_of_reference": "camera",
        "bbox": [int(v) for v in box],
        "camera": camera.metadata(),
    }
    context = (
        "Object A is outlined by a labelled box. Its front is the side that carries its "
        "defining features (a person's face, a car's headlights, the open side of a chair)."
    )
    steps = [
        "Find Object A and the features that mark its front",
        "Judge how that front surface is angled relative to the camera",
        "Compare your judgement with each option",
        "Pick the best option",
        "Explain the visual evidence behind your choice",
    ]
    items = []
    for granularity, texts, answer_text, question, examples in (
        (
            "coarse",
            [b[2] for b in BINS] + [CANNOT_DETERMINE],
            coarse_ans,
            "Decide which way the front of Object A faces with respect to the camera.",
            ["A car whose headlights you see head-on is facing toward the camera.",
             "A person seen in profile is turned sideways."],
        ),
        (
            "granular",
            [b[3] for b in BINS] + [CANNOT_DETERMINE],
            granular_ans,
            "Estimate the angle between the front surface of Object A and the camera plane.",
            ["A person looking straight into the camera: 0 to 15 degrees.",
             "A car seen exactly from its side: 65 to 95 degrees.",
             "A chair with its back to the camera: 135 to 180 degrees."],
        ),
    ):
        options = _options(ctx, texts)
        values: dict[str, Any] = {CANNOT_DETERMINE: None}
        for lo, hi, c, g in BINS:
            values[c if granularity == "coarse" else g] = [lo, hi]
        items.append(make_item(
            ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
            question=question, context=context, steps=steps, examples=examples,
            options=options, answer_text=answer_text, values=values, metadata=metadata,
        ))
    return items
