"""PCSR projection-aware tasks, T6-T7: ego-distortion at the seam and limited-FOV visibility.

T6 picks an object near the +-180 seam whose 3D nearest neighbour sits on the other
side of the seam (far apart in the image, adjacent in the room); the hard distractor
is the object nearest to it in naive, non-wrapping image distance. When no such pair
exists it asks instead whether two objects at opposite edges are within a distance.
T7 turns the observer toward a named object with a 60 or 90 degree horizontal field
of view and asks which object is in view (MCQ: hard distractor = the object just
outside the view) and whether a given object is in view (yes/no). "In view" means
the object's centre lies ``FOV_MARGIN`` inside the field and its panorama mask shows
it (occlusion does not change when only the view direction changes); "out of view"
means no corner of its box lies within ``FOV_MARGIN`` outside the field.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.pcsr.common import (
    MIN_VISIBLE_PX,
    SUITE,
    Pano,
    Question,
    aliases_for,
    answer_for,
    build_unit,
    by_category,
    display,
    fill_distractors,
    the,
)
from perspecta.suites.pcsr.perception import BBOX_MARGIN, DIST_MARGIN, _clear_winner
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    bearing,
    direction_from_heading,
    distance,
    heading_of,
    longitude_separation,
    panorama_longitude,
    panorama_pixel,
    rank_by_distance,
    straddles_seam,
    wrap180,
)
from perspecta.world.scene import Scene, SceneObject

SEAM_ZONE = 120.0  # |longitude| at least this: the object sits in the outer thirds, near the seam
OTHER_SIDE = 90.0  # the neighbour is on the other half beyond this |longitude|
SEAM_PAIR_SEP = (25.0, 80.0)  # degrees between a pair the seam is aimed between
PAIR_THRESHOLD = 2.0  # metres: "within 2 metres of each other"
PAIR_MARGIN = 0.4  # metres kept clear of the threshold
FOVS = (60, 90)
FOV_MARGIN = 8.0  # degrees

# ------------------------------------------------------------------ T6 ego-distortion


def seam_neighbour_answer(scene: Scene, anchor: str) -> str:
    a = by_category(scene, anchor)
    return display(rank_by_distance(a, scene.objects)[0][0].category)


def seam_pair_answer(scene: Scene, a: str, b: str) -> str:
    d = distance(by_category(scene, a), by_category(scene, b))
    if abs(d - PAIR_THRESHOLD) < PAIR_MARGIN - 1e-9:
        raise ValueError(f"scene {scene.scene_id}: {a}-{b} distance {d:.3f} is too close to the threshold")
    return "yes" if d < PAIR_THRESHOLD else "no"


def _pixel_gap(a: SceneObject, b: SceneObject, pano: Pano) -> float:
    """Naive image distance between object centres, not wrapping across the seam."""
    ua, va = panorama_pixel(a, pano.camera)
    ub, vb = panorama_pixel(b, pano.camera)
    return float(np.hypot(ua - ub, va - vb))


def _build_seam_neighbour(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    names = sorted({display(o.category) for o in scene.objects if pano.visible(o)})
    anchors = [o for o in pano.referable() if abs(panorama_longitude(o, cam)) >= SEAM_ZONE or straddles_seam(o, cam)]
    for i in ctx.rng.permutation(len(anchors)):
        a = anchors[int(i)]
        centre = rank_by_distance(a, scene.objects)
        z = _clear_winner(centre, DIST_MARGIN)
        z_box = _clear_winner(rank_by_distance(a, scene.objects, mode="bbox"), BBOX_MARGIN)
        if z is None or z_box is None or z.category != z_box.category or not pano.visible(z):
            continue
        la, lz = panorama_longitude(a, cam), panorama_longitude(z, cam)
        across = (la > 0) != (lz > 0) and abs(lz) >= OTHER_SIDE
        if not (across or straddles_seam(a, cam) or straddles_seam(z, cam)):
            continue
        if _pixel_gap(a, z, pano) < cam.width / 4:
            continue  # not far apart in the image: no distortion to undo
        naive = sorted(
            (o for o in scene.objects if o is not a and o.category != z.category and pano.visible(o)),
            key=lambda o: _pixel_gap(a, o, pano),
        )
        hard = [display(naive[0].category)] if naive else []
        pool = [n for n in names if n != display(a.category)]
        distractors = fill_distractors(ctx.rng, display(z.category), hard, pool)
        if distractors is None:
            continue
        return Question(
            subtype="seam_neighbour",
            body=(
                f"{the(a.category).capitalize()} appears near the edge of the panorama. In the actual "
                f"room, which object is closest to {the(a.category)}? Compare 3D distances between "
                "object centres and answer with the object's name."
            ),
            answer=display(z.category),
            aliases=aliases_for(z.category),
            distractors=distractors,
            metadata={
                "anchor": a.category,
                "answer_id": z.id,
                "anchor_longitude": round(la, 3),
                "answer_longitude": round(lz, 3),
                "anchor_straddles_seam": straddles_seam(a, cam),
                "answer_straddles_seam": straddles_seam(z, cam),
                "pixel_gap": round(_pixel_gap(a, z, pano), 2),
                "naive_neighbour": naive[0].category if naive else None,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def _build_seam_pair(ctx: TaskContext, pano: Pano) -> Question | None:
    cam = pano.camera
    objs = pano.referable()
    left = [o for o in objs if panorama_longitude(o, cam) <= -SEAM_ZONE]
    right = [o for o in objs if panorama_longitude(o, cam) >= SEAM_ZONE]
    pairs = [(a, b) for a in left for b in right]
    for i in ctx.rng.permutation(len(pairs)):
        a, b = pairs[int(i)]
        d = distance(a, b)
        if abs(d - PAIR_THRESHOLD) < PAIR_MARGIN:
            continue
        ans = seam_pair_answer(pano.scene, a.category, b.category)
        return Question(
            subtype="seam_pair",
            body=(
                f"{the(a.category).capitalize()} appears near the left edge of the panorama and "
                f"{the(b.category)} near the right edge. In the actual room, are their centres less "
                f"than {PAIR_THRESHOLD:g} metres apart? Answer yes or no."
            ),
            answer=ans,
            aliases=[],
            distractors=[],
            metadata={
                "object_a": a.category,
                "object_b": b.category,
                "distance_m": round(d, 4),
                "threshold_m": PAIR_THRESHOLD,
                "longitudes": [round(panorama_longitude(a, cam), 3), round(panorama_longitude(b, cam), 3)],
            },
            candidates=["yes", "no"],
            open_type="yesno",
            mcq=False,
        )
    return None


def _build_distortion(ctx: TaskContext, pano: Pano) -> Question | None:
    return _build_seam_neighbour(ctx, pano) or _build_seam_pair(ctx, pano)


def derive_distortion(item: Item, scenes: dict[str, Scene]) -> str:
    m, scene = item.metadata, scenes[item.scene_id]
    if item.subtype == "seam_pair":
        return seam_pair_answer(scene, m["object_a"], m["object_b"])
    return answer_for(item, seam_neighbour_answer(scene, m["anchor"]))


def aim_seam(ctx: TaskContext, scene: Scene) -> None:
    """Turn the observer (its panorama and perspective cameras) so that the seam passes
    between a nameable object and its clear 3D nearest neighbour.

    The observer's facing direction is free in the room sampler, so this changes no
    furniture: it only puts a pair of neighbours at opposite image edges, the
    configuration T6 is about. Leaves the scene alone when no pair qualifies.
    """
    cam = scene.camera("pano")
    pos = np.asarray(cam.position, dtype=float)
    counts = Counter(o.category for o in scene.objects)
    pairs = []
    for a in scene.objects:
        if counts[a.category] != 1:
            continue
        z = _clear_winner(rank_by_distance(a, scene.objects), DIST_MARGIN)
        if z is None:
            continue
        sep = longitude_separation(a, z, cam)
        if SEAM_PAIR_SEP[0] <= sep <= SEAM_PAIR_SEP[1]:
            pairs.append((a, z, sep))
    if not pairs:
        return
    a, z, sep = pairs[int(ctx.rng.integers(len(pairs)))]
    ha, hz = heading_of(a.center() - pos), heading_of(z.center() - pos)
    behind = ha + float(wrap180(hz - ha)) / 2 + float(ctx.rng.uniform(-0.25, 0.25)) * sep
    fwd = direction_from_heading(behind + 180.0)
    look = (round(pos[0] + fwd[0], 5), round(pos[1] + fwd[1], 5), cam.position[2])
    scene.cameras = [
        dataclasses.replace(c, look_at=look) if c.name in ("pano", "view") else c for c in scene.cameras
    ]


@task(SUITE, "ego_distortion", derive=derive_distortion, description="T6: objects split by the seam are adjacent in 3D")
def generate_distortion(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "ego_distortion", _build_distortion, prepare=aim_seam)


# ---------------------------------------------------------- T7 limited-FOV visibility


def fov_status(obj: SceneObject, position: np.ndarray, heading: float, fov: float, visible_px: int) -> str | None:
    """"in" (centre well inside and visible in the mask), "out" (every corner well
    outside) or None (on the edge, or inside but hidden)."""
    centre = abs(bearing(position, heading, obj))
    if centre <= fov / 2 - FOV_MARGIN and visible_px >= MIN_VISIBLE_PX:
        return "in"
    if all(abs(bearing(position, heading, c)) >= fov / 2 + FOV_MARGIN for c in obj.corners()):
        return "out"
    return None


def _view(scene: Scene, facing: str) -> tuple[np.ndarray, float]:
    cam = scene.camera("pano")
    pos = np.asarray(cam.position, dtype=float)
    return pos, heading_of(by_category(scene, facing).center() - pos)


def fov_statuses(scene: Scene, facing: str, fov: float, visible_px: dict[str, int]) -> dict[str, str | None]:
    """Per category (skipping the faced object): "in" if any instance is in view, "out"
    if all are out, None otherwise."""
    pos, head = _view(scene, facing)
    out: dict[str, str | None] = {}
    for o in scene.objects:
        if o.category == facing:
            continue
        s = fov_status(o, pos, head, fov, visible_px.get(o.id, 0))
        prev = out.get(o.category, "out")
        out[o.category] = "in" if "in" in (s, prev) else ("out" if s == prev == "out" else None)
    return out


def _build_fov(ctx: TaskContext, pano: Pano) -> Question | None:
    scene = pano.scene
    fov = int(FOVS[int(ctx.rng.integers(len(FOVS)))])
    refs = pano.referable()
    for i in ctx.rng.permutation(len(refs)):
        f = refs[int(i)]
        st = fov_statuses(scene, f.category, fov, pano.visible_px)
        ins = sorted(c for c, s in st.items() if s == "in" and any(pano.visible(o) for o in scene.objects if o.category == c))
        outs = [c for c, s in st.items() if s == "out" and any(pano.visible(o) for o in scene.objects if o.category == c)]
        if not ins or len(outs) < 3:
            continue
        pos, head = _view(scene, f.category)
        outs.sort(key=lambda c: min(abs(bearing(pos, head, o)) for o in scene.objects if o.category == c))
        ans = ins[int(ctx.rng.integers(len(ins)))]
        distractors = fill_distractors(ctx.rng, display(ans), [display(outs[0])], [display(c) for c in outs])
        if distractors is None:
            continue
        return Question(
            subtype=f"fov{fov}",
            body=(
                f"Imagine you stay where you are and turn to face {the(f.category)}, but now you can "
                f"only see a {fov}-degree wide field of view centred on it. Apart from {the(f.category)}, "
                "which one of the listed objects would be in your view?"
            ),
            answer=display(ans),
            aliases=aliases_for(ans),
            distractors=distractors,
            metadata={
                "facing": f.category,
                "fov": fov,
                "in_view": ins,
                "out_of_view": sorted(outs),
                "heading": round(head, 3),
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def fov_answer(scene: Scene, facing: str, fov: float, visible_px: dict[str, int], mode: str, target: str | None) -> str:
    """The set of visible categories (comma-joined, sorted) or, for yes/no, whether ``target`` is in view."""
    st = fov_statuses(scene, facing, fov, visible_px)
    if mode == "which":
        return ",".join(sorted(c for c, s in st.items() if s == "in"))
    s = st.get(target or "")
    if s is None:
        raise ValueError(f"scene {scene.scene_id}: {target} is on the edge of the field of view")
    return "yes" if s == "in" else "no"


def derive_fov(item: Item, scenes: dict[str, Scene]) -> str:
    m, scene = item.metadata, scenes[item.scene_id]
    if item.answer_type == "yesno":
        return fov_answer(scene, m["facing"], m["fov"], m["visible_px"], "yesno", m["target"])
    visible = fov_answer(scene, m["facing"], m["fov"], m["visible_px"], "which", None).split(",")
    shown = [o for o in item.options if o.text is not None and o.text in {display(c) for c in visible}]
    if len(shown) != 1:
        raise ValueError(f"item {item.id}: {len(shown)} options are in view, expected exactly one")
    return shown[0].label


@task(SUITE, "limited_fov", derive=derive_fov, description="T7: which objects a 60/90-degree view would show")
def generate_fov(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "limited_fov", _build_fov_pair)


def _build_fov_pair(ctx: TaskContext, pano: Pano) -> Question | None:
    """The MCQ ("which object") question; its open twin becomes a yes/no about one object."""
    q = _build_fov(ctx, pano)
    if q is None:
        return None
    m = q.metadata
    single = {o.category for o in pano.referable()}
    pool = [c for c in list(m["in_view"]) + list(m["out_of_view"]) if c in single]
    if not pool:
        return None
    target = pool[int(ctx.rng.integers(len(pool)))]
    m["target"] = target
    q.open_type = "yesno"
    q.open_answer = "yes" if target in m["in_view"] else "no"
    q.open_candidates = ["yes", "no"]
    fov, facing = m["fov"], m["facing"]
    q.open_body = (
        f"Imagine you stay where you are and turn to face {the(facing)}, but now you can only see "
        f"a {fov}-degree wide field of view centred on it. Would {the(target)} be in your view? "
        "Answer yes or no."
    )
    return q
