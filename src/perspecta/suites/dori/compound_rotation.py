"""DORI Q4, compound rotation: two images by a fixed camera; between them the object is first
turned H degrees about the vertical axis (clockwise seen from above), then tipped V
degrees about the horizontal axis that runs left-right across the image (positive =
its top comes toward the camera). Both axes are fixed to the camera and pass through
the object's centre, so the order matters: ``R_after = Rv(V) @ Rh(H) @ R_before``.

(The issue calls H the "horizontal" rotation and V the "vertical" one; the paper uses
the opposite names. Prompts therefore name the axes, never "horizontal rotation".)

The scene record holds the object twice ("obj0" before, "obj1" after); each pose rests
on the studio floor (a tipped object lies on the ground instead of floating, so it
reads as an object, not a blob), and the camera frames both. ``derive`` solves
``R_after R_before^T`` for (H, V) in closed form (resting moves the object, never turns it).

CBD targets hide a turn: a ball hides both, a round real object (a barrel, a round
lamp or pedestal table) hides the turn about its own axis. Every pair gets the same
nuisance changes (light, backdrop, re-framing) as in viewer-scene direction.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    ROUND_REAL,
    balanced_class,
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
from perspecta.suites.dori.viewer_scene import pair_jitter
from perspecta.world import readability
from perspecta.world.samplers.common import fit_distance, orbit_camera
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.registry import task
from perspecta.world.oracle import camera_azimuth, camera_elevation, ground_axes, wrap360
from perspecta.world.rotation import axis_angle, euler_zyx, rotation_matrix
from perspecta.world.scene import Camera, Pose, Scene

TASK = "compound_rotation"
CONTROLS = ("ball",)
COARSE = {
    "none": "No rotation",
    "vertical_axis_only": "Only a turn about the vertical axis",
    "horizontal_axis_only": "Only a tip about the horizontal axis",
    "both": "Both a turn about the vertical axis and a tip about the horizontal axis",
}
H_STEPS = tuple(range(45, 360, 45))  # coarse turns: any multiple of 45 degrees
# coarse turns combined with a tip: at least 90 degrees either way. A 45-degree turn of an
# object that then lies on its side barely changes which way it seems to face (a careful
# judge read a man turned 45 degrees and laid down as "only a tip").
H_STEPS_TIPPED = (90, 135, 180, 225, 270)
V_STEPS = (90, 180, 270)  # coarse tips: the object lies or stands on its head, never leans on an edge
# a tip about the camera's left-right axis shows only through foreshortening from eye
# level, so the camera looks down on the object; and both poses must be large
ELEVATION = (25.0, 50.0)
CONTRACT = readability.Contract(min_pixels=3000, min_box_side=80, min_box_short=40)
H_VALUES = (0, 90, 180, 270)
V_VALUES = (0, 90, 180)
PAIRS = [(h, v) for h in H_VALUES for v in V_VALUES if (h, v) != (0, 0)]
N_GRANULAR_OPTIONS = 5  # plus "Cannot be determined"


def compound(camera: Camera, h: float, v: float) -> np.ndarray:
    """World rotation of "H about the vertical axis (clockwise from above), then V about the
    camera's left-right axis (top toward the camera)"."""
    right, _ = ground_axes(camera)
    return axis_angle(right, v) @ axis_angle(np.array([0.0, 0.0, 1.0]), -h)


def solve(scene: Scene) -> tuple[float, float]:
    """(H, V) in [0, 360) with ``R_after = compound(H, V) @ R_before``; raises if none fits."""
    cam = scene.camera("main")
    q = scene.object("obj1").pose.rotation() @ scene.object("obj0").pose.rotation().T
    right, fwd = ground_axes(cam)
    zq = q @ np.array([0.0, 0.0, 1.0])
    v = math.degrees(math.atan2(-float(zq @ fwd), float(zq[2])))
    m = axis_angle(right, v).T @ q  # = Rz(-H)
    h = -math.degrees(math.atan2(m[1, 0], m[0, 0]))
    h, v = wrap360(h), wrap360(v)
    if np.abs(compound(cam, h, v) - q).max() > 1e-4:
        raise ValueError(f"scene {scene.scene_id}: the change of pose is not a vertical turn then a tip")
    return h, v


def _snap(x: float) -> int:
    return round(x) % 360


def granular_text(h: int, v: int) -> str:
    return f"{h} degrees about the vertical axis, then {v} degrees about the horizontal axis"


def answer_text(scene: Scene, granularity: str) -> str:
    if not scene.object("obj0").has_front:
        return CANNOT_DETERMINE
    h, v = (_snap(x) for x in solve(scene))
    if granularity == "granular":
        return granular_text(h, v)
    key = "none" if h == v == 0 else "vertical_axis_only" if v == 0 else "horizontal_axis_only" if h == 0 else "both"
    return COARSE[key]


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return item.label_of(answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "The two images show the same object, taken by a camera that stayed in place (the second picture may be "
    "framed slightly differently, and the light and backdrop may change). Between them the object may have "
    "been turned about the vertical axis through its centre (clockwise as seen from above), and after that "
    "tipped about the horizontal axis that runs left-right across the image through its centre (positive "
    "degrees bring its top toward the camera); then it was set down to rest on the floor. Both axes stay "
    "fixed relative to the camera, so the order of the two steps matters. If the object's shape could hide "
    "one of the two steps, the rotation cannot be determined."
)
STEPS = [
    "Find the object in both images and its distinctive parts (front, top, bottom)",
    "Compare where those parts are in the first and in the second image",
    "Work out the turn about the vertical axis, then the tip about the horizontal axis",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def _granular_options(ctx: TaskContext, gold: tuple[int, int] | None) -> list[tuple[int, int]]:
    """The pairs offered: the gold one, its value swap when valid, then pairs sharing one
    component with it, then any others — N_GRANULAR_OPTIONS in all, in random order."""
    rest = [p for p in PAIRS if p != gold]
    order = [rest[int(i)] for i in ctx.rng.permutation(len(rest))]
    chosen: list[tuple[int, int]] = [] if gold is None else [gold]
    if gold is not None:
        swap = (gold[1], gold[0])
        if swap != gold and swap in PAIRS:
            chosen.append(swap)
        chosen += [p for p in order if (p[0] == gold[0]) != (p[1] == gold[1])][:2]
    chosen += [p for p in order if p not in chosen]
    return chosen[:N_GRANULAR_OPTIONS]


def _resting(before_center: np.ndarray, size: tuple[float, float, float], yaw: float, pitch: float,
             roll: float) -> tuple[float, float, float]:
    """Pose position (the base point) that keeps the object's centre above
    ``before_center`` while its lowest bbox corner touches the floor."""
    r = rotation_matrix(yaw, pitch, roll)
    dx, dy, dz = size
    corners = np.array([[sx * dx / 2, sy * dy / 2, z] for sx in (-1, 1) for sy in (-1, 1) for z in (0.0, dz)])
    half = r @ np.array([0.0, 0.0, dz / 2])
    base_xy = before_center[:2] - half[:2]
    base_z = -float((corners @ r.T)[:, 2].min())
    return round(float(base_xy[0]), 6), round(float(base_xy[1]), 6), round(base_z, 6)


def _reframe(scene: Scene) -> None:
    """Aim camera "main" (same direction, field of view and fill) at the middle of
    the before and after poses, backing off so both fit."""
    cam = scene.camera("main")
    eye, at = np.asarray(cam.position, dtype=float), np.asarray(cam.look_at, dtype=float)
    dist = float(np.linalg.norm(eye - at))
    az, el = camera_azimuth(cam), camera_elevation(cam)
    c0, c1 = scene.object("obj0").center(), scene.object("obj1").center()
    mid = (c0 + c1) / 2
    radius = float(np.linalg.norm(scene.object("obj0").size)) / 2
    half = math.radians(cam.fov_y) / 2  # square images: the vertical half-angle is the narrower one
    fill = math.asin(min(1.0, radius / dist)) / half
    grow = radius + float(np.linalg.norm(c1 - c0)) / 2
    new = orbit_camera(mid, fit_distance(grow, cam.fov_y, cam.width, cam.height, min(0.9, max(0.1, fill))), az, el,
                       fov_y=cam.fov_y, width=cam.width, height=cam.height, name="main")
    scene.cameras = [new if c.name == "main" else c for c in scene.cameras]


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = balanced_class(ctx, len(COARSE) if coarse else len(PAIRS), granularity)
    start_max = float(knob(ctx, "start_facing_max_deg"))
    return resample(ctx, lambda attempt: _attempt(ctx, granularity, k, start_max, attempt), f"{TASK} {granularity}")


def _attempt(ctx: TaskContext, granularity: str, k: int | None, start_max: float, attempt: int) -> Item:
    coarse = granularity == "coarse"
    # Every front target is drawn from the tip-readable pool, whatever the class: both class
    # sets hold tipped classes (coarse "horizontal only"/"both", granular V != 0), and a pool
    # that let animals and people into the untipped classes only would make "a dog => not
    # tipped" a shortcut (round 6). The pool's category mix is the same in every class.
    asset = pick_target(ctx, cbd=k is None, cbd_real=ROUND_REAL, cbd_primitives=CONTROLS, elevation_range=ELEVATION,
                        tipped=True)
    scene = studio_scene(ctx, asset, granularity, n_distractors=0, elevation_range=ELEVATION)
    if k is None:
        h, v = PAIRS[int(ctx.rng.integers(len(PAIRS)))]
    elif coarse:
        key = list(COARSE)[k]
        steps = H_STEPS_TIPPED if key == "both" else H_STEPS
        h = 0 if key in ("none", "horizontal_axis_only") else int(steps[int(ctx.rng.integers(len(steps)))])
        v = 0 if key in ("none", "vertical_axis_only") else int(V_STEPS[int(ctx.rng.integers(len(V_STEPS)))])
    else:
        h, v = PAIRS[k]
    # start turned 25..start_max degrees to a side, so the front and a side both show
    set_facing(scene, float(ctx.rng.choice([-1.0, 1.0]) * ctx.rng.uniform(25.0, max(25.0, start_max))))
    before = scene.object("obj0")
    r1 = compound(scene.camera("main"), h, v) @ before.pose.rotation()
    yaw, pitch, roll = (round(a, 6) for a in euler_zyx(r1))
    pos = _resting(before.center(), before.size, yaw, pitch, roll)
    after = dataclasses.replace(before, id="obj1", params=dict(before.params), pose=Pose(pos, yaw, pitch, roll))
    scene.objects.append(after)
    _reframe(scene)
    rgbs, objects, second = render_pair(ctx, scene, jitter=pair_jitter(ctx))
    record = check_readable({"objects": objects, "contract": CONTRACT.to_dict(), "view": target_view(scene, asset, tipped=True)})
    ctx.add_scene(scene)
    images = [ctx.save_image(rgb, f"{granularity}_{i}") for i, rgb in enumerate(rgbs, start=1)]
    if coarse:
        values: dict[str, Any] = {text: key for key, text in COARSE.items()}
        question = "Decide which kinds of rotation the object underwent between the two images."
        examples = [("A car that faced the image left and now faces the camera, still on its wheels: only a turn "
                     "about the vertical axis."),
                    ("A person who was upright and now lies with their head toward the camera, still seen from "
                     "the same side: only a tip about the horizontal axis."),
                    "A ball, or a round barrel whose turn about its own axis cannot be seen: Cannot be determined."]
        offered = list(values)
    else:
        gold = None if k is None else (h, v)
        pairs = _granular_options(ctx, gold)
        values = {granular_text(a, b): [a, b] for a, b in pairs}
        question = "Determine the rotation angles the object underwent between the two images, in the order given."
        examples = [("An upright cup that appears upside down, its handle on the same side: 0 degrees about the "
                     "vertical axis, then 180 degrees about the horizontal axis."),
                    ("A person who faced the camera and now faces away, still upright: 180 degrees about the "
                     "vertical axis, then 0 degrees about the horizontal axis.")]
        offered = list(values)
    values[CANNOT_DETERMINE] = None
    truth = answer_text(scene, granularity)
    options = shuffled(ctx, offered + [CANNOT_DETERMINE], truth, granularity)
    meta = {
        **object_factors(scene, asset),
        "pose_before": {"yaw": before.pose.yaw, "pitch": 0.0, "roll": 0.0},
        "pose_after": {"yaw": yaw, "pitch": pitch, "roll": roll},
        "vertical_axis_turn": h,
        "horizontal_axis_tip": v,
        "rotation_order": "vertical-axis turn, then horizontal-axis tip (camera-fixed axes)",
        "frame_of_reference": "camera",
        "camera": scene.camera("main").metadata(),
        "second_image": second,
        "readability": record,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=images,
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=truth, values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="A turn about the vertical axis then a tip, between two images")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]
