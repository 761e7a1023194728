"""DORI Q1, view parallelism: how far an object's front surface is turned from the camera plane.

One unit = one studio scene with one object marked "A" by a bounding box, giving a
coarse item (toward / sideways / away) and a granular item (DORI's angle bins
0-15, 65-95, 135-180 degrees). The angle is sampled *inside* a bin, at least
``bin_margin_frac`` of the bin's signed width from its edges (>= 1/3 for bins up to 60
degrees wide, else >= 1/4; toward: -15..15, sideways: 65..95, away: 135..225), so no answer sits near an edge; objects without a
front (real frontless assets, or a few primitives) answer "Cannot be determined".
The answer class is stratified over units, so all four answers are equally common.
"""

from __future__ import annotations

from typing import Any

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    balanced_class,
    check_readable,
    studio_contract,
    make_item,
    margin_frac,
    pick_target,
    render_boxed,
    resample,
    shuffled,
    realistic_backdrop,
    signed_bin_margin,
    studio_scene,
    target_view,
)
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import camera_plane_angle, camera_yaw
from perspecta.world.scene import Scene

SUITE, TASK = "dori", "view_parallelism"

# (low, high, coarse answer, granular answer); angles in degrees, see camera_plane_angle.
BINS: list[tuple[float, float, str, str]] = [
    (0.0, 15.0, "Facing toward the camera", "0 to 15 degrees"),
    (65.0, 95.0, "Turned sideways, perpendicular to the camera", "65 to 95 degrees"),
    (135.0, 180.0, "Facing away from the camera", "135 to 180 degrees"),
]
# each bin's signed extent: the unsigned 0-15 bin is really -15..15, 135-180 is 135..225
SIGNED = {0.0: (-15.0, 15.0), 65.0: (65.0, 95.0), 135.0: (135.0, 225.0)}


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
    return item.label_of(want)


def _yaw_for_angle(scene: Scene, angle: float, sign: float) -> float:
    """World yaw that turns the object's front ``angle`` degrees from the camera plane normal."""
    base = camera_yaw(scene.camera("main")) + 180.0  # direction back toward the camera
    return base + sign * angle


def _angle_for(ctx: TaskContext, k: int) -> float:
    """A camera-plane angle inside class ``k``'s bin, kept from its edges. "Facing away"
    is drawn exactly as far off head-on as "facing toward" may be (within the toward
    bin's margin of 0 degrees, so 175-180): drawn over its own 45-degree bin (158-180 with
    the wide-bin margin) it was usually more oblique than any "toward" item can be, and
    how oblique a head-on target looks -- no front or back needed -- told the two apart
    (short6, round 6: folded obliqueness alone predicted the answer for 90% of answerable
    items, 4 pooled sets, against 33% for a constant)."""
    if BINS[k][0] == 135.0:
        return 180.0 - _angle_for(ctx, 0)
    lo, hi = SIGNED[BINS[k][0]]
    m = margin_frac(ctx, hi - lo) * (hi - lo)
    a = abs(float(ctx.rng.uniform(lo + m + 0.2, hi - m - 0.2)))
    return 360.0 - a if a > 180.0 else a


@task(SUITE, TASK, derive=derive, description="Angle of an object's front surface to the camera plane")
def generate(ctx: TaskContext) -> list[Item]:
    k = balanced_class(ctx, len(BINS), "unit")
    return resample(ctx, lambda attempt: _attempt(ctx, k, attempt), TASK)


def _attempt(ctx: TaskContext, k: int | None, attempt: int) -> list[Item]:
    # every class of this task may show the target head-on (facing, or facing away from, the
    # camera), where no chair's front reads (marks.head_on_readable): chairs and the other
    # head-on-unreadable assets are never its targets, in any class, so the category says
    # nothing about the answer
    asset = pick_target(ctx, cbd=k is None, head_on=True)
    scene = studio_scene(ctx, asset, "view")
    backdrop = realistic_backdrop(ctx, scene)
    scene.scene_id = ctx.scene_prefix
    angle = float(ctx.rng.uniform(0.0, 180.0)) if k is None else _angle_for(ctx, k)
    sign = 1.0 if ctx.rng.random() < 0.5 else -1.0
    obj = scene.objects[0]
    obj.pose.yaw = round(_yaw_for_angle(scene, angle, sign) % 360.0, 6)
    camera = scene.camera("main")
    marked, box, facts = render_boxed(ctx, scene)
    record: dict[str, Any] = {"objects": {"A": facts}, "contract": studio_contract(ctx).to_dict(),
                              "view": target_view(scene, asset, head_on=True)}
    if obj.has_front:
        measured = camera_plane_angle(obj, camera)
        b = _bin_of(measured)
        if b is None:
            raise ValueError(f"{scene.scene_id}: drawn angle {measured:.2f} fell between bins")
        lo, hi = SIGNED[b[0]]
        record["bin_margin"] = signed_bin_margin(measured if lo >= 0 or measured <= hi else -measured, lo, hi)
    check_readable(record)
    ctx.add_scene(scene)
    image = ctx.save_image(marked, "view")
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
        "n_distractors": len(scene.objects) - 1,
        "camera": camera.metadata(),
        "readability": record,
        "backdrop": backdrop,
        "attempts": attempt + 1,
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
             "A person seen in profile is turned sideways.",
             "A round table has no front: Cannot be determined."],
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
        options = shuffled(ctx, texts, answer_text, granularity)
        values: dict[str, Any] = {CANNOT_DETERMINE: None}
        for lo, hi, c, g in BINS:
            values[c if granularity == "coarse" else g] = [lo, hi]
        items.append(make_item(
            ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
            question=question, context=context, steps=steps, examples=examples,
            options=options, answer_text=answer_text, values=values, metadata=metadata,
        ))
    return items
