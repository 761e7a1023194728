"""LRR object tasks about a sheep (``proc:figure``: white body, dark face at its front):
Obj-HD (which way does its head point), Obj-MD (does it walk the way its head points,
A -> B -> C) and Obj-M (has it moved relative to the surroundings while the camera
moved too). Each unit yields a ``base`` item and a ``clear`` item asked about the same
geometry with the street entities removed (the blocky buildings stay as background).

Every frame is its own scene record (``<prefix>-A``, ``-B``, ...; Clear ones
``<prefix>-clear-A``, ...) in the order shown, so ``derive`` reads positions and
headings straight from the stored scenes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.suites.context import TaskContext
from perspecta.suites.lrr.common import (
    FRAME_LABELS,
    SUITE,
    labelled_images,
    view_size,
    wants_yes,
    yes_no,
    yesno_item,
)
from perspecta.suites.lrr.world import (
    SHEEP,
    Layout,
    cleared,
    count_in_view,
    ground_point,
    moved,
    object_index,
    raised_camera,
    retry,
    target_clear,
    with_objects,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    direction_from_heading,
    distance,
    facing_label,
    heading_matches_motion,
    heading_of,
    horizontal_fov,
    mask_area,
    wrap180,
)
from perspecta.world.samplers.common import Rect
from perspecta.world.scene import Camera, Scene

SHEEP_TEXT = "the sheep (the white animal with a dark face)"
VARIANTS = ("base", "clear")


def _scene_ids(prefix: str, variant: str, n: int) -> list[str]:
    mid = "" if variant == "base" else "-clear"
    return [f"{prefix}{mid}-{FRAME_LABELS[k]}" for k in range(n)]


def _both_variants(
    ctx: TaskContext, frames: list[Scene], cams: list[Camera]
) -> dict[str, tuple[list[Scene], list[str]]] | None:
    """Render the base and Clear frames; store them only if the sheep shows clearly in
    every render (None otherwise, so the caller draws a new layout)."""
    rendered = []
    for variant in VARIANTS:
        ids = _scene_ids(ctx.scene_prefix, variant, len(frames))
        vf = [with_objects(f, f.objects, i) if variant == "base" else cleared(f, i) for f, i in zip(frames, ids)]
        for scene, cam in zip(vf, cams):
            res = ctx.renderer.render(scene, cam)
            if mask_area(res.instance, object_index(scene, "target")) < 0.0008 * cam.width * cam.height:
                return None
            rendered.append((variant, scene, res.rgb))
    out: dict[str, tuple[list[Scene], list[str]]] = {v: ([], []) for v in VARIANTS}
    for variant, scene, rgb in rendered:
        k = len(out[variant][0])
        suffix = FRAME_LABELS[k] if len(frames) > 1 else "view"
        ctx.add_scene(scene)
        out[variant][0].append(scene)
        out[variant][1].append(ctx.save_image(rgb, suffix if variant == "base" else f"clear_{suffix}"))
    return out


def _layout_and_render(ctx: TaskContext, attempt, what: str):  # type: ignore[no-untyped-def]
    """Draw layouts until one renders with the sheep clearly visible; (layout, variants)."""
    def go():  # type: ignore[no-untyped-def]
        lay = attempt()
        if lay is None:
            return None
        done = _both_variants(ctx, lay[0], lay[1])
        return None if done is None else (lay, done)

    return retry(go, 80, what)


def _variant_items(ctx: TaskContext, variants: dict[str, tuple[list[Scene], list[str]]], *, body: str,
                   answer: bool, metadata_for: Callable[[list[Scene]], dict[str, Any]]) -> list[Item]:
    """One yes/no item per variant (base, Clear): the same question over that variant's frames."""
    return [yesno_item(ctx, variant=variant, body=body, images=images, answer=answer,
                       scene_id=frames[0].scene_id, metadata=metadata_for(frames))
            for variant, (frames, images) in variants.items()]


# ----------------------------------------------------------------------------- Obj-HD

HEADINGS = {"toward": 0.0, "rightward": 90.0, "away": 180.0, "leftward": -90.0}
HEADING_TEXT = {
    "toward": "toward the camera", "away": "away from the camera",
    "leftward": "toward the left side of the image", "rightward": "toward the right side of the image",
}  # fmt: skip
HEADING_JITTER = 20.0  # true facing within +-20 of a bin centre: 25 degrees from every boundary


def derive_hd(item: Item, scenes: dict[str, Scene]) -> str:
    s = scenes[item.scene_id]
    label = facing_label(s.object("target"), s.camera("main"), toward_max=45.0, margin=10.0)
    if label is None:
        raise ValueError(f"scene {s.scene_id}: the sheep's heading is too close to a bin boundary")
    return yes_no(label == item.metadata["asked_heading"])


@task(SUITE, "obj_hd", derive=derive_hd, description="Does the sheep's head point in the stated direction?")
def generate_obj_hd(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    true = list(HEADINGS)[int(rng.integers(4))]
    asked = true if yes else [h for h in HEADINGS if h != true][int(rng.integers(3))]

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        cam = raised_camera(rng, size, height=(2.5, 4.0), pitch=(20.0, 32.0))
        lay = Layout(rng, ctx.library)
        inst = lay.instance(asset_id=SHEEP)
        p = ground_point(cam, float(rng.uniform(0.3, 0.7)) * size, float(rng.uniform(0.45, 0.7)) * size,
                         z=float(inst.size[2]) / 2)
        if p is None:
            return None
        # facing angle a = heading of the front minus the heading back to the camera
        back = heading_of(np.asarray(cam.position, dtype=float)[:2] - p[:2])
        yaw = back + HEADINGS[true] + float(rng.uniform(-HEADING_JITTER, HEADING_JITTER))
        lay.place("target", inst, p[0], p[1], yaw)
        half = horizontal_fov(cam) / 2
        lay.entities(cam, int(rng.integers(3, 7)), bearings=(-half, half), distances=(4.0, 18.0), exclude=("figure",))
        lay.blocks(cam, int(rng.integers(3, 6)), bearings=(-half - 10, half + 10), distances=(16.0, 30.0))
        scene = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        if facing_label(scene.object("target"), cam, toward_max=45.0, margin=10.0) != true:
            return None
        if not target_clear(scene, cam, min_visible=0.9):
            return None
        return [scene], [cam]

    ((_, (cam,)), variants) = _layout_and_render(ctx, attempt, "lrr obj_hd")
    return _variant_items(
        ctx, variants, body=f"{IMAGE_MARKER}\nLook at {SHEEP_TEXT}. Is its head pointing {HEADING_TEXT[asked]}?",
        answer=yes, metadata_for=lambda frames: {"true_heading": true, "asked_heading": asked,
                                                 "camera": cam.metadata(), "n_objects": len(frames[0].objects)})


# ----------------------------------------------------------------------------- Obj-MD

MD_TOL = 30.0  # heading_matches_motion tolerance; negatives are 90 or 180 degrees off


def derive_md(item: Item, scenes: dict[str, Scene]) -> str:
    sheep = [scenes[s].object("target") for s in item.metadata["scene_ids"]]
    ok = all(heading_matches_motion(a, a, b, tol=MD_TOL) for a, b in pairwise(sheep))
    return yes_no(ok)


@task(SUITE, "obj_md", derive=derive_md,
      description="Fixed camera, frames A-C: does the sheep move the way its head points?")
def generate_obj_md(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    negative = None if yes else ("perpendicular" if (ctx.index // 2) % 2 == 0 else "shuffled")
    step = float(rng.uniform(1.3, 1.8))

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        cam = raised_camera(rng, size, height=(3.0, 5.0), pitch=(25.0, 38.0))
        lay = Layout(rng, ctx.library)
        inst = lay.instance(asset_id=SHEEP)
        mid = ground_point(cam, float(rng.uniform(0.42, 0.58)) * size, float(rng.uniform(0.5, 0.65)) * size,
                           z=float(inst.size[2]) / 2)
        if mid is None:
            return None
        f = np.asarray(cam.forward(), dtype=float)
        right = heading_of(np.array([f[1], -f[0]]))
        motion = right + (0.0 if rng.random() < 0.5 else 180.0) + float(rng.uniform(-20.0, 20.0))
        d = direction_from_heading(motion)[:2]
        pts = [mid[:2] + (k - 1) * step * d for k in range(3)]
        yaw = motion + (90.0 if rng.random() < 0.5 else -90.0) if negative == "perpendicular" else motion
        # keep the whole path free of clutter
        path = Rect(float(mid[0]), float(mid[1]), step + inst.size[0], inst.size[0], float(motion))
        lay.rects.append(path)
        sheep0 = lay.place("target", inst, pts[0][0], pts[0][1], yaw, gap=-10.0)
        assert sheep0 is not None
        half = horizontal_fov(cam) / 2
        lay.entities(cam, int(rng.integers(3, 6)), bearings=(-half, half), distances=(4.0, 18.0), exclude=("figure",))
        lay.blocks(cam, int(rng.integers(3, 6)), bearings=(-half - 10, half + 10), distances=(16.0, 30.0))
        base = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        order = [0, 1, 2]
        if negative == "shuffled":
            perms = [p for p in ([0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0])]
            order = perms[int(rng.integers(len(perms)))]
        frames = []
        for k, src in enumerate(order):
            objs = [moved(o, pts[src]) if o.id == "target" else o for o in base.objects]
            frame = with_objects(base, objs, f"{ctx.scene_prefix}-{FRAME_LABELS[k]}")
            if not target_clear(frame, cam, min_visible=0.9):
                return None
            frames.append(frame)
        shown.append(order)
        return frames, [cam] * 3

    shown: list[list[int]] = []
    ((_, cams), variants) = _layout_and_render(ctx, attempt, "lrr obj_md")
    cam, order = cams[0], shown[-1]
    body = (
        f"{labelled_images(3)}\nThe camera and the surroundings stay fixed; {SHEEP_TEXT} may stand at a different "
        "spot in each image and always faces the same way. Following the order A, B, C, is the sheep moving in "
        "the direction its head points?"
    )
    return _variant_items(ctx, variants, body=body, answer=yes, metadata_for=lambda frames: {
        "negative": negative, "shown_order": order, "step_m": round(step, 4),
        "scene_ids": [f.scene_id for f in frames], "camera": cam.metadata()})


# ----------------------------------------------------------------------------- Obj-M

MOVED_MIN = 1.0  # metres: a "moved" sheep is displaced at least this far (we use 1.8-3)


def derive_m(item: Item, scenes: dict[str, Scene]) -> str:
    a, b = (scenes[s].object("target") for s in item.metadata["scene_ids"])
    d = distance(np.asarray(a.pose.position), np.asarray(b.pose.position))
    if 1e-6 < d < MOVED_MIN:
        raise ValueError(f"item {item.id}: the sheep moved {d:.3f} m, too little to call")
    return yes_no(d >= MOVED_MIN)


def _tracking_camera(cam: Camera, before: np.ndarray, after: np.ndarray, shift: np.ndarray, name: str) -> Camera:
    """``cam`` translated by ``shift`` and turned so the sheep (moved from ``before`` to
    ``after``) keeps its horizontal bearing in the view: it stays at about the same pixel."""
    pos = np.asarray(cam.position, dtype=float)
    look = np.asarray(cam.look_at, dtype=float)
    new_pos = pos + np.array([shift[0], shift[1], 0.0])
    turn = math.radians(float(wrap180(heading_of(after[:2] - new_pos[:2]) - heading_of(before[:2] - pos[:2]))))
    v = look - pos
    c, s = math.cos(turn), math.sin(turn)
    v = np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])
    return Camera(name=name, position=tuple(round(float(x), 5) for x in new_pos),  # type: ignore[arg-type]
                  look_at=tuple(round(float(x), 5) for x in new_pos + v),  # type: ignore[arg-type]
                  fov_y=cam.fov_y, width=cam.width, height=cam.height)


@task(SUITE, "obj_m", derive=derive_m,
      description="Camera moves between A and B; has the sheep moved relative to the surroundings?")
def generate_obj_m(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        cam = raised_camera(rng, size, height=(4.0, 7.0), pitch=(25.0, 38.0), name="main")
        lay = Layout(rng, ctx.library)
        inst = lay.instance(asset_id=SHEEP)
        p0 = ground_point(cam, float(rng.uniform(0.35, 0.65)) * size, float(rng.uniform(0.45, 0.65)) * size,
                          z=float(inst.size[2]) / 2)
        if p0 is None:
            return None
        shift_len = float(rng.uniform(1.8, 3.0))
        shift = direction_from_heading(float(rng.uniform(0, 360)))[:2] * shift_len
        move_len = float(rng.uniform(1.8, 3.0)) if yes else 0.0
        p1 = p0[:2] + direction_from_heading(float(rng.uniform(0, 360)))[:2] * move_len
        yaw = float(rng.uniform(0, 360))
        lay.rects.append(Rect(float(p0[0]), float(p0[1]), 1.5, 1.5))
        lay.rects.append(Rect(float(p1[0]), float(p1[1]), 1.5, 1.5))
        lay.place("target", inst, p0[0], p0[1], yaw, gap=-10.0)
        half = horizontal_fov(cam) / 2
        lay.entities(cam, int(rng.integers(3, 6)), bearings=(-half, half), distances=(4.0, 20.0), exclude=("figure",))
        # background blocks scattered around the sheep, so both views share landmarks
        lay.blocks(cam, int(rng.integers(5, 8)), bearings=(-half - 5, half + 5), distances=(9.0, 26.0))
        base = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        cam_b = _tracking_camera(cam, p0, np.array([p1[0], p1[1], 0.0]), shift, "main")
        sheep_b = moved(base.object("target"), p1)
        frame_a = with_objects(base, base.objects, f"{ctx.scene_prefix}-A")
        frame_b = with_objects(base, [sheep_b if o.id == "target" else o for o in base.objects],
                               f"{ctx.scene_prefix}-B", cameras=[cam_b])
        for fr, c in ((frame_a, cam), (frame_b, cam_b)):
            if not target_clear(fr, c, min_visible=0.9) or count_in_view(fr, c, "bg") < 2:
                return None
        lengths.append((shift_len, move_len))
        return [frame_a, frame_b], [cam, cam_b]

    lengths: list[tuple[float, float]] = []
    ((_, cams), variants) = _layout_and_render(ctx, attempt, "lrr obj_m")
    shift_len, move_len = lengths[-1]
    body = (
        f"{labelled_images(2)}\nImages A and B show the same place; the camera moved between the two shots. "
        f"Compared with its surroundings, has {SHEEP_TEXT} moved to a different spot between A and B?"
    )
    return _variant_items(ctx, variants, body=body, answer=yes, metadata_for=lambda frames: {
        "sheep_move_m": round(move_len, 4), "camera_move_m": round(shift_len, 4),
        "scene_ids": [f.scene_id for f in frames], "cameras": [c.metadata() for c in cams]})

