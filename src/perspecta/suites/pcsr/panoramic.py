"""PCSR projection-aware tasks, T6-T7: ego-distortion at the seam and limited-FOV visibility.

T6 asks, half the time, for the 3D nearest neighbour of an object near the +-180 seam
whose neighbour sits across the seam (far apart in the image, adjacent in the room;
hard distractor: the naive image-space neighbour), and half the time whether two
objects at opposite edges are within a distance (threshold drawn independently of
the answer; "yes" and "no" equally often). The observer is turned before rendering so
that the seam passes between a pair that can pose the unit's question.
T7 turns the observer toward a named object with a 60 or 90 degree horizontal field
of view and asks which object is in view (MCQ: hard distractor = the object just
outside the view) and whether a given object is in view (yes/no, balanced with the
field of view). "In view" means the object's centre lies ``fov_margin_deg`` inside the
field and its panorama mask shows it (occlusion does not change when only the view
direction changes); "out of view" means no corner of its box lies within the margin
outside the field.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.pcsr.common import (
    distinct_by_name,
    MIN_VISIBLE_PX,
    SUITE,
    Pano,
    PanoFacts,
    Question,
    aliases_for,
    answer_for,
    balanced,
    build_unit,
    by_category,
    display,
    the,
)
from perspecta.suites.pcsr.perception import clear_winner, distance_margins, form_ordinal, hop_forms, winner_record
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
SEAM_PAIR_SEP = (25.0, 80.0)  # degrees between a neighbour pair the seam is aimed between
SEAM_PAIR_SEP_DIST = (25.0, 100.0)  # the same for a distance-threshold pair
PAIR_THRESHOLDS = (1.5, 2.0, 2.5)  # metres: "within X metres of each other"
FOVS = (60, 90)

# ------------------------------------------------------------------ T6 ego-distortion

DISTORTION_PLAN = (
    ("seam_neighbour", ""),
    ("seam_neighbour", ""),
    ("seam_pair", "yes"),
    ("seam_pair", "no"),
)


def seam_neighbour_answer(scene: Scene, anchor: str) -> str:
    a = by_category(scene, anchor)
    return display(rank_by_distance(a, scene.objects)[0][0].category)


def seam_pair_answer(scene: Scene, a: str, b: str, threshold: float = 2.0, margin: float = 0.0) -> str:
    d = distance(by_category(scene, a), by_category(scene, b))
    if abs(d - threshold) < margin - 1e-9:
        raise ValueError(f"scene {scene.scene_id}: {a}-{b} distance {d:.3f} is too close to the threshold")
    return "yes" if d < threshold else "no"


def _pair_threshold(ctx: TaskContext) -> float:
    """The distance asked about: drawn from the unit's own stream (not from its answer),
    so the threshold says nothing about whether the pair is within it."""
    return float(PAIR_THRESHOLDS[int(np.random.default_rng(ctx.seed).integers(len(PAIR_THRESHOLDS)))])


def _pair_margin(ctx: TaskContext) -> float:
    return float(ctx.knob("pair_margin_m", {"easy": 0.5, "standard": 0.25, "hard": 0.2}))


def _pixel_gap(a: SceneObject, b: SceneObject, pano: Pano) -> float:
    """Naive image distance between object centres, not wrapping across the seam."""
    ua, va = panorama_pixel(a, pano.camera)
    ub, vb = panorama_pixel(b, pano.camera)
    return float(np.hypot(ua - ub, va - vb))


def _build_seam_neighbour(ctx: TaskContext, pano: Pano) -> Question | None:
    scene, cam = pano.scene, pano.camera
    margin, box_margin = distance_margins(ctx)
    anchors = [o for o in pano.referable() if abs(panorama_longitude(o, cam)) >= SEAM_ZONE or straddles_seam(o, cam)]
    for i in ctx.rng.permutation(len(anchors)):
        a = anchors[int(i)]
        centre = rank_by_distance(a, scene.objects)
        win = clear_winner(centre, margin)
        win_box = clear_winner(rank_by_distance(a, scene.objects, mode="bbox"), box_margin)
        if (win is None or win_box is None or win[0] is not win_box[0] or not pano.visible(win[0])
                or not pano.unique(win[0])):
            continue
        z = win[0]
        la, lz = panorama_longitude(a, cam), panorama_longitude(z, cam)
        across = (la > 0) != (lz > 0) and abs(lz) >= OTHER_SIDE
        if not (across or straddles_seam(a, cam) or straddles_seam(z, cam)):
            continue
        if _pixel_gap(a, z, pano) < cam.width / 4:
            continue  # not far apart in the image: no distortion to undo
        naive = sorted(
            (o for o in scene.objects if o is not a and o.category != z.category and pano.visible(o)),
            key=lambda o: (_pixel_gap(a, o, pano), o.id),
        )
        # the image neighbour, then the 3D runners-up
        picked = distinct_by_name((o for o in naive[:1] + [o for o, _ in centre[1:]] if pano.visible(o)),
                                  (z.category, a.category), scene=scene)
        if picked is None:
            continue
        record = pano.record({display(a.category): a, display(z.category): z, **picked},
                             winner_margin=winner_record(win[1], margin))
        if record is None:
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
            distractors=list(picked),
            metadata={
                **SeamNeighbourFacts(anchor=a.category).to_metadata(),
                "answer_id": z.id,
                "anchor_longitude": round(la, 3),
                "answer_longitude": round(lz, 3),
                "anchor_straddles_seam": straddles_seam(a, cam),
                "answer_straddles_seam": straddles_seam(z, cam),
                "pixel_gap": round(_pixel_gap(a, z, pano), 2),
                "naive_neighbour": naive[0].category if naive else None,
                "readability": record,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
    return None


def _build_seam_pair(ctx: TaskContext, pano: Pano, want: str) -> Question | None:
    cam = pano.camera
    threshold, margin = _pair_threshold(ctx), _pair_margin(ctx)
    objs = pano.referable()
    left = [o for o in objs if panorama_longitude(o, cam) <= -SEAM_ZONE]
    right = [o for o in objs if panorama_longitude(o, cam) >= SEAM_ZONE]
    pairs = [(a, b) for a in left for b in right]
    for i in ctx.rng.permutation(len(pairs)):
        a, b = pairs[int(i)]
        d = distance(a, b)
        if abs(d - threshold) < margin or ("yes" if d < threshold else "no") != want:
            continue
        record = pano.record({display(a.category): a, display(b.category): b},
                             winner_margin=winner_record(abs(d - threshold), margin))
        if record is None:
            continue
        ans = seam_pair_answer(pano.scene, a.category, b.category, threshold, margin)
        return Question(
            subtype="seam_pair",
            body=(
                f"{the(a.category).capitalize()} appears near the left edge of the panorama and "
                f"{the(b.category)} near the right edge. In the actual room, are their centres less "
                f"than {threshold:g} metres apart? Answer yes or no."
            ),
            answer=ans,
            aliases=[],
            distractors=[],
            metadata={
                **SeamPairFacts(object_a=a.category, object_b=b.category, threshold_m=threshold,
                                margin_m=margin).to_metadata(between={"object_b": {"distance_m": round(d, 4)}}),
                "longitudes": [round(panorama_longitude(a, cam), 3), round(panorama_longitude(b, cam), 3)],
                "readability": record,
            },
            candidates=["yes", "no"],
            open_type="yesno",
            mcq=False,
        )
    return None


def _build_distortion(ctx: TaskContext, pano: Pano) -> Question | None:
    subtype, want = balanced(ctx, "subtype_answer", DISTORTION_PLAN)
    if subtype == "seam_neighbour":
        return _build_seam_neighbour(ctx, pano)
    return _build_seam_pair(ctx, pano, want)


@dataclasses.dataclass(frozen=True)
class SeamNeighbourFacts(Facts):
    """The category whose nearest neighbour (across the seam) is asked for."""

    anchor: str


@dataclasses.dataclass(frozen=True)
class SeamPairFacts(Facts):
    """The two categories at opposite edges and the distance threshold (with its margin)."""

    object_a: str
    object_b: str
    threshold_m: float
    margin_m: float


def derive_distortion(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    if item.subtype == "seam_pair":
        p = SeamPairFacts.from_item(item)
        return seam_pair_answer(scene, p.object_a, p.object_b, p.threshold_m, p.margin_m)
    return answer_for(item, seam_neighbour_answer(scene, SeamNeighbourFacts.from_item(item).anchor))


def aim_seam(ctx: TaskContext, scene: Scene) -> None:
    """Turn the observer (its panorama and perspective cameras) so that the seam passes
    between a pair of nameable objects that can pose this unit's question: an object and
    its clear 3D nearest neighbour, or (seam_pair) two objects whose distance is on the
    unit's side of the threshold.

    The observer's facing direction is free in the room sampler, so this changes no
    furniture: it only puts the pair at opposite image edges, the configuration T6 is
    about. Leaves the scene alone when no pair qualifies.
    """
    subtype, want = balanced(ctx, "subtype_answer", DISTORTION_PLAN)
    cam = scene.camera("pano")
    pos = np.asarray(cam.position, dtype=float)
    counts = Counter(o.category for o in scene.objects)
    single = [o for o in scene.objects if counts[o.category] == 1]
    pairs = []
    if subtype == "seam_neighbour":
        margin, _ = distance_margins(ctx)
        for a in single:
            win = clear_winner(rank_by_distance(a, scene.objects), margin)
            if win is None:
                continue
            sep = longitude_separation(a, win[0], cam)
            if SEAM_PAIR_SEP[0] <= sep <= SEAM_PAIR_SEP[1]:
                pairs.append((a, win[0], sep))
    else:
        threshold, margin = _pair_threshold(ctx), _pair_margin(ctx)
        for k, a in enumerate(single):
            for b in single[k + 1:]:
                d = distance(a, b)
                if abs(d - threshold) < margin or ("yes" if d < threshold else "no") != want:
                    continue
                sep = longitude_separation(a, b, cam)
                if SEAM_PAIR_SEP_DIST[0] <= sep <= SEAM_PAIR_SEP_DIST[1]:
                    pairs.append((a, b, sep))
    if not pairs:
        return
    a, z, sep = pairs[int(ctx.rng.integers(len(pairs)))]
    ha, hz = heading_of(a.center() - pos), heading_of(z.center() - pos)
    jitter = 0.25 if subtype == "seam_neighbour" else 0.1
    behind = ha + float(wrap180(hz - ha)) / 2 + float(ctx.rng.uniform(-jitter, jitter)) * sep
    fwd = direction_from_heading(behind + 180.0)
    look = (round(pos[0] + fwd[0], 5), round(pos[1] + fwd[1], 5), cam.position[2])
    scene.cameras = [
        dataclasses.replace(c, look_at=look) if c.name in ("pano", "view") else c for c in scene.cameras
    ]


@task(SUITE, "ego_distortion", derive=derive_distortion, description="T6: objects split by the seam are adjacent in 3D")
def generate_distortion(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "ego_distortion", _build_distortion, prepare=aim_seam)


# ---------------------------------------------------------- T7 limited-FOV visibility

FOV_PLAN = ((60, "yes"), (60, "no"), (90, "yes"), (90, "no"))
# two-step form: the share of T7 units whose view is "face X, then turn 90 degrees", and
# the second turn's direction (clockwise positive), balanced within the form
FOV_TWO_STEP_SHARE = {"easy": 0.0, "standard": 0.75, "hard": 1.0}
SECOND_TURNS = (90.0, -90.0)


def turn_words(turn_cw: float) -> str:
    side = "right (clockwise)" if turn_cw > 0 else "left (counter-clockwise)"
    return f"then turn a further {abs(turn_cw):g} degrees to your {side}"


def fov_status(
    obj: SceneObject, position: np.ndarray, heading: float, fov: float, visible_px: int, margin: float
) -> str | None:
    """"in" (centre well inside and visible in the mask), "out" (every corner well
    outside) or None (on the edge, or inside but hidden)."""
    centre = abs(bearing(position, heading, obj))
    if centre <= fov / 2 - margin and visible_px >= MIN_VISIBLE_PX:
        return "in"
    if all(abs(bearing(position, heading, c)) >= fov / 2 + margin for c in obj.corners()):
        return "out"
    return None


def _view(scene: Scene, facing: str, then_turn_cw: float = 0.0) -> tuple[np.ndarray, float]:
    """The observer's position and heading after turning to face ``facing`` and then
    ``then_turn_cw`` degrees further clockwise (to the right; negative = to the left)."""
    cam = scene.camera("pano")
    pos = np.asarray(cam.position, dtype=float)
    return pos, float(heading_of(by_category(scene, facing).center() - pos)) - then_turn_cw


def fov_statuses(scene: Scene, facing: str, fov: float, visible_px: dict[str, int], margin: float,
                 then_turn_cw: float = 0.0) -> dict[str, str | None]:
    """Per category (skipping the faced object): "in" if any instance is in view, "out"
    if all are out, None otherwise."""
    pos, head = _view(scene, facing, then_turn_cw)
    out: dict[str, str | None] = {}
    for o in scene.objects:
        if o.category == facing:
            continue
        s = fov_status(o, pos, head, fov, visible_px.get(o.id, 0), margin)
        prev = out.get(o.category, "out")
        out[o.category] = "in" if "in" in (s, prev) else ("out" if s == prev == "out" else None)
    return out


def _build_fov(ctx: TaskContext, pano: Pano) -> Question | None:
    """The MCQ ("which object is in view") question and its open yes/no twin about one
    object; the field of view and the yes/no answer are the unit's balanced target."""
    scene = pano.scene
    # field of view, yes/no answer and second turn balanced WITHIN each form (an audit at a
    # fresh seed found the few one-step units all "yes" when the plan ran over all units)
    k = form_ordinal(ctx, "form", "fov_two_step_share", FOV_TWO_STEP_SHARE)
    fov, want = balanced(ctx, "fov_answer", FOV_PLAN, index=k)
    margin = float(ctx.knob("fov_margin_deg", {"easy": 12.0, "standard": 7.0, "hard": 6.0}))
    two_step = hop_forms(ctx, "form", "fov_two_step_share", FOV_TWO_STEP_SHARE) == "two_hop"
    turn = float(balanced(ctx, "second_turn", SECOND_TURNS, index=k)) if two_step else 0.0
    single = {o.category for o in pano.referable()}
    refs = pano.referable()
    for i in ctx.rng.permutation(len(refs)):
        f = refs[int(i)]
        st = fov_statuses(scene, f.category, fov, pano.visible_px, margin, turn)
        # single-instance categories only: a category with many pieces is in view more
        # often than one piece, so its name alone would predict the answer
        seen = {c for c in st if c in single}
        ins = sorted(c for c, s in st.items() if s == "in" and c in seen)
        outs = [c for c, s in st.items() if s == "out" and c in seen]
        if not ins or len(outs) < 3:
            continue
        pos, head = _view(scene, f.category, turn)
        edge = {c: min(abs(bearing(pos, head, o)) for o in scene.objects if o.category == c) for c in outs}
        outs.sort(key=lambda c: (edge[c], c))
        # two-step form: the objects the FIRST turn alone would show (the one-step slip)
        slips = []
        if two_step:
            first = fov_statuses(scene, f.category, fov, pano.visible_px, margin)
            slips = sorted(c for c in outs if first.get(c) == "in")
            if not slips:
                continue  # no one-step answer to offer: the slip would not be tested
        ans = ins[int(ctx.rng.integers(len(ins)))]
        # the one-step answer first (two-step form), then the object just outside the
        # field, then others near the edge
        rest = [c for c in outs if c not in slips[:1]]
        distractors = slips[:1] + rest[:1] + [rest[1:][int(k)] for k in ctx.rng.permutation(len(rest) - 1)]
        distractors = distractors[:3]
        # yes/no target: an object in view, or (two-step) a one-step slip, else one of
        # the two just outside the field
        pool = list(ins if want == "yes" else (slips or outs[:2]))
        if not pool:
            continue
        target = pool[int(ctx.rng.integers(len(pool)))]
        named = {display(c): pano.best_instance(c) for c in [f.category, ans, target, *distractors]}
        record = pano.record({k: v for k, v in named.items() if v is not None})
        if record is None or any(v is None for v in named.values()):
            continue
        if two_step:
            view = (f"Imagine you stay where you are, turn to face {the(f.category)}, {turn_words(turn)}. "
                    f"Now you can only see a {fov}-degree wide field of view centred straight ahead of you.")
            ask = "Which one of the listed objects would be in your view?"
        else:
            view = (f"Imagine you stay where you are and turn to face {the(f.category)}, but now you can "
                    f"only see a {fov}-degree wide field of view centred on it.")
            ask = f"Apart from {the(f.category)}, which one of the listed objects would be in your view?"
        q = Question(
            subtype=f"fov{fov}",
            body=f"{view} {ask}",
            answer=display(ans),
            aliases=aliases_for(ans),
            distractors=[display(c) for c in distractors],
            metadata={
                **FovFacts(facing=f.category, fov=fov, fov_margin_deg=margin, target=target,
                           then_turn_cw=turn).to_metadata(between={
                    "fov_margin_deg": {"in_view": ins, "out_of_view": sorted(outs), "heading": round(head, 3)}}),
                "readability": record,
                "form": "two_step" if two_step else "one_step",
                "one_step_slips": slips,
            },
            candidates=[display(o.category) for o in scene.objects],
        )
        q.open_type = "yesno"
        q.open_answer = "yes" if target in ins else "no"
        q.open_candidates = ["yes", "no"]
        q.open_body = f"{view} Would {the(target)} be in your view? Answer yes or no."
        return q
    return None


def fov_answer(
    scene: Scene, facing: str, fov: float, visible_px: dict[str, int], mode: str, target: str | None, margin: float,
    then_turn_cw: float = 0.0,
) -> str:
    """The set of visible categories (comma-joined, sorted) or, for yes/no, whether ``target`` is in view."""
    st = fov_statuses(scene, facing, fov, visible_px, margin, then_turn_cw)
    if mode == "which":
        return ",".join(sorted(c for c, s in st.items() if s == "in"))
    s = st.get(target or "")
    if s is None:
        raise ValueError(f"scene {scene.scene_id}: {target} is on the edge of the field of view")
    return "yes" if s == "in" else "no"


@dataclasses.dataclass(frozen=True)
class FovFacts(Facts):
    """The object faced, the field of view (and its margin) and the yes/no target."""

    facing: str
    fov: float
    fov_margin_deg: float
    target: str | None
    then_turn_cw: float = 0.0  # two-step form: the second turn, clockwise degrees (0: one step)


def derive_fov(item: Item, scenes: dict[str, Scene]) -> str:
    m, scene = FovFacts.from_item(item), scenes[item.scene_id]
    px = PanoFacts.from_item(item).visible_px
    if item.answer_type == "yesno":
        return fov_answer(scene, m.facing, m.fov, px, "yesno", m.target, m.fov_margin_deg, m.then_turn_cw)
    visible = fov_answer(scene, m.facing, m.fov, px, "which", None, m.fov_margin_deg, m.then_turn_cw).split(",")
    shown = [o for o in item.options if o.text is not None and o.text in {display(c) for c in visible}]
    if len(shown) != 1:
        raise ValueError(f"item {item.id}: {len(shown)} options are in view, expected exactly one")
    return shown[0].label


@task(SUITE, "limited_fov", derive=derive_fov, description="T7: which objects a 60/90-degree view would show")
def generate_fov(ctx: TaskContext) -> list[Item]:
    return build_unit(ctx, "limited_fov", _build_fov)
