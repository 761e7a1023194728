"""SpinBench perspective taking on a tabletop: view selection (S) and relation
transformation (T).

The reference image is the tabletop seen from the front (camera "main"). The viewer's
left side is where a viewer ends up after walking a quarter circle to their left
around the table (azimuth main - 90 degrees, clockwise seen from above), the right
side is main + 90, the back main + 180; those cameras orbit the table's centre at the
reference distance and elevation, so every object stays in frame.

S: which of three candidate images shows the scene from the back / left / right? An
occluder may be placed in front of one object as seen from the asked view; the
occlusion level (none / partial / full) is measured on instance masks in that view
(each object's pixels in the full render over its pixels rendered alone).

T: two named objects; how does their left/right or near/far relation read from the
back / left / right? With premise, the front-view relation is stated in words; without,
it must be read off the image. The pair is chosen so that its premise axis dominates
(at least twice the other axis), which makes the premise sufficient, and the answer is
computed from the hypothetical camera stored in the scene.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from perspecta.dataset.item import Item, label_of_image, label_of_text
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.registry import task
from perspecta.suites.spin.common import (
    FramesFacts,
    Unreadable,
    SUITE,
    Strata,
    display_name,
    end_prompt,
    frame,
    frames_of,
    image_options,
    make_item,
    moved_copy,
    pick,
    placed_order,
    placed_text_options,
    render_checked,
    render_frame,
    resampled,
    save_results,
    share_draw,
    text_options_block,
)
from perspecta.suites.spin.relations import (
    MIN_VISIBLE,
    PIXEL_MARGIN,
    depth_margin,
    masked_visible,
    named_size_ok,
    tabletop,
    unique_objects,
)
from perspecta.world import oracle
from perspecta.world.samplers import orbit_camera, visibility
from perspecta.world.samplers.clutter import on_support, placed_objects, support_of
from perspecta.world.samplers.common import instantiate, make_object
from perspecta.world.scene import Camera, Scene, SceneObject

SELECTION, TRANSFORM = "view_selection", "relation_transformation"
VIEWS = ("back", "left", "right")
VIEW_OFFSET = {"back": 180.0, "left": -90.0, "right": 90.0}  # azimuth change from the front camera
VIEW_WORDS = {"back": "from the back", "left": "from the viewer's left side", "right": "from the viewer's right side"}
# Two-step walks around the table that end at each view (quarter turns, + = counter-clockwise
# seen from above, which from the front goes toward the viewer's right): the view is then a
# composition of two turns instead of one named side (the brief's "multi-step transformation").
ROUTES = {"back": ((1, 1), (-1, -1), (3, -1), (-3, 1)), "right": ((2, -1), (-1, -2), (-2, 3)),
          "left": ((-2, 1), (1, 2), (2, -3))}
QUARTERS = {1: "a quarter of the way", 2: "half of the way", 3: "three quarters of the way"}


def route_words(steps: tuple[int, int]) -> str:
    """The two-step walk in words, to stand where VIEW_WORDS would ("viewing the scene {w}")."""
    def leg(q: int) -> str:
        return f"{QUARTERS[abs(q)]} around the table {'counter-clockwise' if q > 0 else 'clockwise'}"
    return (f"from where you end up after walking {leg(steps[0])} (seen from above), starting at the front, "
            f"and then {leg(steps[1])}, looking at the table's centre")


def view_words(ctx: TaskContext, view: str, share: float) -> tuple[str, list[int] | None]:
    """How the new viewpoint is named: the paper's side name, or (on a ``share`` of units)
    a two-step walk that ends there. Returns the words and the walk's steps (None: side name)."""
    if ctx.rng.random() >= share:
        return VIEW_WORDS[view], None
    steps = ROUTES[view][int(ctx.rng.integers(len(ROUTES[view])))]
    if sum(steps) % 4 != round(VIEW_OFFSET[view] / 90.0) % 4:
        raise AssertionError(f"route {steps} does not end at the {view} view")
    return route_words(steps), list(steps)


# where the first leg of a walk (quarter turns, + toward the viewer's right) stops
LEG_VIEW = {1: "right", -1: "left", 2: "back", -2: "back", 3: "left", -3: "right"}


def one_step_routes(view: str, kind: str, x: SceneObject, y: SceneObject, scene: Scene) -> list[tuple[int, int]]:
    """The walks to ``view`` whose first leg alone gives the opposite answer: stopping after
    one step reads x's ``kind`` pole (outside the margin) the other way round than the end
    view does, so the one-step answer is the distractor option (for both asked poles)."""
    end = pole(kind, x, y, view_camera(scene, view, "end"))
    out = []
    for steps in ROUTES[view]:
        first = pole(kind, x, y, view_camera(scene, LEG_VIEW[steps[0]], "leg"))
        if end is not None and first is not None and first != end:
            out.append(steps)
    return out


def route_share(ctx: TaskContext) -> float:
    return float(ctx.knob("two_step_route_share", {"easy": 0.0, "standard": 0.5, "hard": 1.0}))
LEVELS = ("none", "partial", "full")
LEVEL_NAMES = {"none": "no", "partial": "partial", "full": "full"}  # the paper's subtype words
MAX_LEVEL_TRIES = 4


def view_camera(scene: Scene, view: str, name: str, *, az_jitter: float = 0.0, el_change: float = 0.0) -> Camera:
    """The camera orbiting the reference camera's look-at point to ``view`` (give or take
    ``az_jitter`` degrees of azimuth, and ``el_change`` degrees higher or lower)."""
    ref = scene.camera("main")
    off = np.asarray(ref.position, dtype=float) - np.asarray(ref.look_at, dtype=float)
    dist = float(np.linalg.norm(off))
    el = float(np.clip(oracle.camera_elevation(ref) + el_change, 15.0, 70.0))
    az = oracle.camera_azimuth(ref) + VIEW_OFFSET[view] + az_jitter
    return orbit_camera(ref.look_at, dist, az % 360.0, el, fov_y=ref.fov_y, width=ref.width, height=ref.height, name=name)


def view_of(scene: Scene, camera: str) -> str | None:
    """Which side of the reference camera ``camera`` sits on (within 20 degrees), if any."""
    d = float(oracle.wrap180(oracle.camera_azimuth(scene.camera(camera)) - oracle.camera_azimuth(scene.camera("main"))))
    for v, off in VIEW_OFFSET.items():
        if abs(float(oracle.wrap180(d - off))) <= 20.0:
            return v
    return None


# --------------------------------------------------------------------------- view selection

SELECT_PHRASES = (
    "The first image shows a table with objects on it, seen from the front. Which candidate image shows the same table viewed {w}?",
    "Here is a table with objects on it, seen from the front. If you walked around the table and looked at it {w}, which candidate image would you see?",
)


@dataclass(frozen=True)
class SelectionFacts(Facts):
    """The view (front/left/right/back of the table) the candidates are judged against."""

    asked_view: str


def derive_selection(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    frames = frames_of(item)
    asked = SelectionFacts.from_item(item).asked_view
    # a candidate showing a later state (``obj@swap``: a swapped pair) is not the table as it is
    hits = [o.image for o in item.options if o.image is not None and view_of(scene, frames[o.image]["camera"]) == asked
            and not any("@" in i for i in frames[o.image]["objects"])]
    if len(hits) != 1:
        raise ValueError(f"item {item.id}: {len(hits)} candidates are {asked} views")
    return item.label_of_image(int(hits[0]))  # type: ignore[arg-type]


def _add_occluder(ctx: TaskContext, scene: Scene, target: SceneObject, camera: Camera, level: str) -> SceneObject | None:
    """A box between ``target`` and ``camera``: taller and wider than the target to hide it
    (full), lower and narrower to cover part of it (partial). None if it cannot be placed."""
    box = ctx.library.get("proc:box")
    inst = instantiate(ctx.rng, ctx.library, box)
    tw, th = max(target.size[0], target.size[1]), target.size[2]
    hfac, wfac = (2.2, 1.6) if level == "full" else (0.7, 0.7)
    scale = max(hfac * th / inst.size[2], wfac * tw / max(inst.size[0], inst.size[1]))
    inst = instantiate(ctx.rng, ctx.library, box, scale=round(float(scale), 4))
    to_cam = np.asarray(camera.position[:2], dtype=float) - target.position[:2]
    to_cam /= np.linalg.norm(to_cam)
    yaw = float(np.degrees(np.arctan2(to_cam[1], to_cam[0])))
    sup = support_of(scene)
    z = float(sup.size[2]) if sup is not None else 0.0
    for gap in (0.02, 0.05, 0.1):
        d = tw / 2 + max(inst.size[0], inst.size[1]) / 2 + gap
        pos = target.position[:2] + d * to_cam
        occ = make_object(f"obj{len(placed_objects(scene))}", inst, float(pos[0]), float(pos[1]), yaw, z=z)
        if on_support(scene, occ, gap=0.01):
            return occ
    return None


def _occlusion(ctx: TaskContext, scene: Scene, camera: str, ids: list[str], occluder: str | None) -> tuple[float, dict[str, float]]:
    """Lowest mask-visible fraction among the scene's own objects (not the occluder) in ``camera``."""
    full = render_frame(ctx, scene, frame(camera, ids), measure=True)
    fr = {}
    sup = support_of(scene)
    for k, i in enumerate(ids):
        if i == occluder or (sup is not None and i == sup.id):
            continue
        solo = render_frame(ctx, scene, frame(camera, [i]), measure=True)
        fr[i] = float(oracle.visible_fraction(full.instance, solo.instance > 0, k))
    return min(fr.values()), fr


SWAP = "swap"  # candidate kind: a candidate view (the asked one or the other side) with a swapped pair
# Whose twin the swapped candidate is, per block of three swapped-pair units: the asked view's
# on two, the other side's on one. The two look-alike candidates then hold the answer as
# often as two of three candidates would by chance, so "drop the odd one out" is worth
# nothing (red-team round 5: with the answer always in the look-alike pair, dropping the odd
# candidate lifted a skill-free guess from 1/3 to 1/2 on every swapped-pair unit).
TWIN_CELLS = ("answer", "answer", "other")
SWAP_MIN_SEPARATION = 0.12  # the swapped pair's centres are this share of the image width apart in the asked view
SWAP_MIN_CHANGED_PX = 0.01  # share of the image whose object label the swap changes (measured on masks)


def _swap_pair(ctx: TaskContext, scene: Scene, camera: str, skip: set[str]) -> tuple[SceneObject, SceneObject] | None:
    """Two objects of different categories to swap for the near-miss candidate: both read
    at 256 px in ``camera``, side by side in it (so the swap is a left/right change), and
    each fits on the table at the other's place. None when the table has no such pair."""
    cam = scene.camera(camera)
    objs = [o for o in unique_objects(scene) if o.id not in skip]
    pairs = [(a, b) for i, a in enumerate(objs) for b in objs[i + 1:] if a.category != b.category]
    ctx.rng.shuffle(pairs)  # type: ignore[arg-type]
    for a, b in pairs:
        if not named_size_ok(scene, [a, b], camera=camera):
            continue
        uv, _ = cam.project(np.stack([a.center(), b.center()]))
        if abs(float(uv[1, 0] - uv[0, 0])) < SWAP_MIN_SEPARATION * cam.width:
            continue
        sa, sb = swapped_copies(a, b)
        if on_support(scene, sa, skip=[a.id, b.id], gap=0.01) and on_support(scene, sb, skip=[a.id, b.id], gap=0.01):
            return a, b
    return None


def swapped_copies(a: SceneObject, b: SceneObject) -> tuple[SceneObject, SceneObject]:
    """``a`` standing where ``b`` stood and ``b`` where ``a`` stood (ids ``@swap``), each on the table top."""
    pa = (float(b.position[0]), float(b.position[1]), float(a.position[2]))
    pb = (float(a.position[0]), float(a.position[1]), float(b.position[2]))
    return moved_copy(a, f"{a.id}@swap", position=pa), moved_copy(b, f"{b.id}@swap", position=pb)


def changed_share(r0: Any, r1: Any, ids0: list[str], ids1: list[str]) -> float:
    """Share of the image whose visible object differs between two renders of one camera
    (labels mapped to base ids, so a swapped copy counts as its object)."""
    def base(ids: list[str], inst: np.ndarray) -> np.ndarray:
        lut = np.array([""] + [i.split("@")[0] for i in ids], dtype=object)
        return lut[inst]
    a, b = base(ids0, r0.instance), base(ids1, r1.instance)
    return float(np.mean(a != b))


def _swapped_candidate(ctx: TaskContext, scene: Scene, ids: list[str], src_cam: str, occluder: SceneObject | None,
                       frames: list[dict[str, Any]], order: list[str]) -> dict[str, Any]:
    """Turn the SWAP slot of ``frames`` into the view of candidate camera ``src_cam`` (the
    answer's, or the other side's: :data:`TWIN_CELLS`) with two objects swapped.

    The pair must read in both the source and the swapped render (readability contract)
    and the swap must change a visible share of the image (masks); otherwise nothing is
    changed and {} returned, so the caller draws another table. Returns the facts to record."""
    skip = {occluder.id} if occluder is not None else set()
    pair = _swap_pair(ctx, scene, src_cam, skip)
    if pair is None:
        return {}
    a, b = pair
    sa, sb = swapped_copies(a, b)
    swap_ids = [sa.id if i == a.id else sb.id if i == b.id else i for i in ids]
    k_src, k_swap = 1 + int(src_cam.removeprefix("cand")), 1 + order.index(SWAP)
    trial = dataclasses.replace(scene, objects=list(scene.objects) + [sa, sb])
    test_frames = [frames[k_src], frame(src_cam, swap_ids)]
    try:
        # masks only: the images are rendered in colour once the unit is settled
        results, readability = render_checked(ctx, trial, test_frames, {display_name(a.category): (a.id, [0, 1]),
                                                                         display_name(b.category): (b.id, [0, 1])},
                                              color=False)
    except Unreadable:
        return {}
    changed = changed_share(results[0], results[1], test_frames[0]["objects"], test_frames[1]["objects"])
    if changed < SWAP_MIN_CHANGED_PX:
        return {}
    scene.objects.extend([sa, sb])
    frames[k_swap] = frame(src_cam, swap_ids)
    return {"swapped_ids": [a.id, b.id], "swap_of": order[k_src - 1], "swap_changed_share": round(changed, 4),
            "readability": readability}


@task(SUITE, SELECTION, derive=derive_selection,
      description="Which candidate shows the tabletop from the back/left/right; occlusion none/partial/full from masks")
def generate_selection(ctx: TaskContext) -> list[Item]:
    st = Strata(ctx)
    # near miss: one distractor is the asked view itself with two objects swapped (drawn
    # first, so the view, occlusion level and letter are balanced within each form)
    swap_share = float(ctx.knob("swapped_pair_share", {"easy": 0.0, "standard": 0.6, "hard": 1.0}))
    form = share_draw(st, "form", swap_share, "swapped_pair", "three_views")
    twin = st.draw("twin", TWIN_CELLS) if form == "swapped_pair" else None
    asked = st.draw("view", VIEWS)
    want = st.draw("occlusion", LEVELS)
    slot = st.draw("letter", (0, 1, 2))
    # candidate views off the exact quarter turns and at another height than the reference
    jitter = float(ctx.knob("view_jitter_deg", {"easy": 0.0, "standard": 15.0, "hard": 15.0}))
    el_change = float(ctx.knob("view_elevation_change_deg", {"easy": 0.0, "standard": 20.0, "hard": 25.0}))
    share = route_share(ctx)
    if not 0.0 <= jitter <= 15.0:
        raise ValueError(f"view_jitter_deg must be in [0, 15] (views are told apart within 20 degrees), got {jitter}")
    for _attempt in range(MAX_LEVEL_TRIES * (8 if form == "swapped_pair" else 1)):
        # steer toward the requested level (and a swappable pair); keep the measured level
        scene = tabletop(ctx)
        order = [VIEWS[i] for i in placed_order(ctx, 3, VIEWS.index(asked), slot)]
        other = ""
        if form == "swapped_pair":  # the asked view, one other side, and one of them swapped (``twin``)
            other = [v for v in VIEWS if v != asked][int(ctx.rng.integers(2))]
            rest = [p for p in range(3) if p != slot]
            if ctx.rng.random() < 0.5:
                rest.reverse()
            order = [""] * 3
            order[slot], order[rest[0]], order[rest[1]] = asked, SWAP, other
        for i, v in enumerate(order):
            if v == SWAP:
                continue
            scene.cameras.append(view_camera(scene, v, f"cand{i}", az_jitter=float(ctx.rng.uniform(-jitter, jitter)),
                                             el_change=float(ctx.rng.uniform(-el_change, el_change))))
        ans_cam = f"cand{order.index(asked)}"
        occluder, target_id = None, None
        if want != "none":
            cands = list(placed_objects(scene))
            ctx.rng.shuffle(cands)  # type: ignore[arg-type]
            for t in cands:
                occluder = _add_occluder(ctx, scene, t, scene.camera(ans_cam), want)
                if occluder is not None:
                    target_id = t.id
                    break
        if occluder is not None:
            scene.objects.append(occluder)
        ids = [o.id for o in scene.objects]
        vis = visibility(placed_objects(scene), scene.camera(ans_cam))
        lowest, fractions = _occlusion(ctx, scene, ans_cam, ids, occluder.id if occluder else None)
        level = oracle.occlusion_level(lowest)
        n_objects = len(placed_objects(scene))
        frames = [frame("main", ids)] + [frame(f"cand{i}", ids) for i in range(3)]
        swap_facts: dict[str, Any] = {}
        if form == "swapped_pair":
            twin_cam = ans_cam if twin == "answer" else f"cand{order.index(other)}"
            swap_facts = _swapped_candidate(ctx, scene, ids, twin_cam, occluder, frames, order)
            if not swap_facts:
                continue
        if level == want or (swap_facts and _attempt >= MAX_LEVEL_TRIES - 1):
            break
    else:
        if form == "swapped_pair" and not swap_facts:
            raise RuntimeError(f"{ctx.scene_prefix}: no table with a readable pair to swap")
    ctx.add_scene(scene)
    images = [ctx.save_image(render_frame(ctx, scene, f).rgb, "front" if i == 0 else f"cand{i - 1}")
              for i, f in enumerate(frames)]
    options = image_options(3, first_image=1)
    words, route = view_words(ctx, asked, share)
    q = pick(ctx, SELECT_PHRASES).format(w=words)
    opts = "\n".join(f"{o.label}. <image>" for o in options)
    question = f"<image>\n{q}\n{opts}\n{end_prompt(3)}"
    meta: dict[str, Any] = {
        "family": "perspective_taking_view_selection",
        "paper_subtype": f"infinigen_rotation_selection_{asked}_{LEVEL_NAMES[level]}_occlusion",
        **SelectionFacts(asked_view=asked).to_metadata(), "route_quarter_turns": route, "candidate_views": order, "occlusion": level, "occlusion_requested": want,
        "min_visible_fraction": round(lowest, 4), "visible_fraction": {k: round(v, 4) for k, v in fractions.items()},
        "occluder_id": occluder.id if occluder else None,
        "occluded_target_id": target_id,
        "all_in_frame": all(v.inside for v in vis),
        "frame_of_reference": "viewer", "n_objects": n_objects, "form": form, **swap_facts,
        **FramesFacts(frames=frames).to_metadata(),
    }
    return [make_item(ctx, variant="base", suffix="", group_suffix="", subtype=f"view_selection_{asked}_{LEVEL_NAMES[level]}_occlusion",
                      question=question, images=images, options=options,
                      answer=label_of_image(options, 1 + order.index(asked)), scene=scene, metadata=meta)]


# --------------------------------------------------------------------------- relation transformation

OTHER = {"left_right": "near_far", "near_far": "left_right"}
POLES = {"left_right": ("left", "right"), "near_far": ("closer", "farther")}
PREMISE = {
    "left_right": "In the front view, the {x} is on the left and the {y} is on the right.",
    "near_far": "In the front view, the {x} is closer to the viewer and the {y} is farther away.",
}
ASK = {
    "left": ("which object appears on the left from the new viewpoint?", "which of the two objects is now on your left?"),
    "right": ("which object appears on the right from the new viewpoint?", "which of the two objects is now on your right?"),
    "closer": ("which object is now closer to the viewer?", "which of the two objects is now nearer to you?"),
    "farther": ("which object is now farther from the viewer?", "which of the two objects is now further from you?"),
}
# premise pole of x in the front view -> pole of x from the new view (self-check of the geometry)
TRANSFORM_TABLE = {
    ("back", "left"): "right", ("back", "right"): "left", ("back", "closer"): "farther", ("back", "farther"): "closer",
    ("left", "left"): "closer", ("left", "right"): "farther", ("left", "closer"): "right", ("left", "farther"): "left",
    ("right", "left"): "farther", ("right", "right"): "closer", ("right", "closer"): "left", ("right", "farther"): "right",
}


def pole(kind: str, a: SceneObject, b: SceneObject, camera: Camera) -> str | None:
    if kind == "left_right":
        return oracle.left_right(a, b, camera, pixel_margin=PIXEL_MARGIN * camera.width)
    return oracle.near_far(a, b, camera, margin=depth_margin(a, b))


@dataclass(frozen=True)
class TransformFacts(Facts):
    """The question after the imagined move: which of x, y has pole ``asked`` of the
    ``asked_relation`` seen from camera ``new_camera``."""

    asked_relation: str
    asked: str
    new_camera: str
    x_id: str
    y_id: str
    names: dict[str, str]  # object id -> the name the question uses


def derive_transform(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    facts = TransformFacts.from_item(item)
    x, y = scene.object(facts.x_id), scene.object(facts.y_id)
    p = pole(facts.asked_relation, x, y, scene.camera(facts.new_camera))
    if p is None:
        raise ValueError(f"item {item.id}: relation from the new view is within the margin")
    winner = x if p == facts.asked else y
    return item.label_of(facts.names[winner.id])


def _transform_pair(ctx: TaskContext, premise: str, view: str) -> tuple[Scene, SceneObject, SceneObject, dict[str, float]]:
    asked_kind = premise if view == "back" else OTHER[premise]
    # how much the premise axis must dominate the other one: near 1, the pair is diagonal and
    # the off-axis offset competes with the one that decides (still within the pole margins)
    dominance = float(ctx.knob("pair_dominance", {"easy": 2.0, "standard": 1.2, "hard": 1.0}))
    for _ in range(20):
        scene = tabletop(ctx)
        main = scene.camera("main")
        new = view_camera(scene, view, f"view_{view}")
        right, fwd = oracle.ground_axes(main)
        cands = unique_objects(scene)
        pairs = []
        for i, a in enumerate(cands):
            for b in cands[i + 1:]:
                d = b.center() - a.center()
                lat, dep = abs(float(d @ right)), abs(float(d @ fwd))
                main_ax, other_ax = (lat, dep) if premise == "left_right" else (dep, lat)
                if main_ax < dominance * other_ax:
                    continue
                p0, p1 = pole(premise, a, b, main), pole(asked_kind, a, b, new)
                if p0 is None or p1 is None or TRANSFORM_TABLE[(view, p0)] != p1:
                    continue
                pairs.append((a, b))
        if not pairs:
            continue
        a, b = pairs[int(ctx.rng.integers(len(pairs)))]
        if not named_size_ok(scene, [a, b]):
            continue
        vis = masked_visible(ctx, scene, "main", [a.id, b.id])
        if min(vis.values()) < MIN_VISIBLE:
            continue
        scene.cameras.append(new)
        # name them so that x holds the first pole of the premise ("left", "closer")
        if pole(premise, a, b, main) != POLES[premise][0]:
            a, b = b, a
        return scene, a, b, vis
    raise Unreadable(f"{ctx.scene_prefix}: no pair whose {premise} relation dominates")


@task(SUITE, TRANSFORM, derive=derive_transform,
      description="How a left/right or near/far relation reads from the back/left/right, with and without premise")
def generate_transform(ctx: TaskContext) -> list[Item]:
    st = Strata(ctx)
    route_share(ctx)  # record the knob on every unit
    premise = st.draw("premise", ("left_right", "near_far"))
    view = st.draw("view", VIEWS)
    asked_kind = premise if view == "back" else OTHER[premise]
    base_pole = st.draw("pole", POLES[asked_kind])
    return resampled(ctx, lambda: _transform_items(ctx, st, premise, view, base_pole))


def _transform_items(ctx: TaskContext, st: Strata, premise: str, view: str, base_pole: str) -> list[Item]:
    asked_kind = premise if view == "back" else OTHER[premise]
    two_step = ctx.rng.random() < route_share(ctx)
    for _ in range(12):
        scene, x, y, vis = _transform_pair(ctx, premise, view)
        routes = one_step_routes(view, asked_kind, x, y, scene) if two_step else []
        if routes or not two_step:
            break
    else:
        raise Unreadable(f"{ctx.scene_prefix}: no pair whose one-step walk to the {view} view reads the other way")
    if two_step:  # the walk's first leg alone would give the distractor (multi-step form)
        steps = routes[int(ctx.rng.integers(len(routes)))]
        words, route = route_words(steps), list(steps)
    else:
        words, route = VIEW_WORDS[view], None
    spec = frame("main", [o.id for o in scene.objects])
    names = {x.id: display_name(x.category), y.id: display_name(y.category)}
    results, readability = render_checked(ctx, scene, [spec], {names[x.id]: (x.id, [0]), names[y.id]: (y.id, [0])})
    ctx.add_scene(scene)
    image = save_results(ctx, results, ["front"])[0]
    new_cam = f"view_{view}"
    items = []
    for with_premise in (True, False):
        cond = "w_premise" if with_premise else "wo_premise"
        for variant in ("base", "symmetric"):
            asked = base_pole if variant == "base" else next(p for p in POLES[asked_kind] if p != base_pole)
            lead = PREMISE[premise].format(x=names[x.id], y=names[y.id]) + " " if with_premise else ""
            q = f"{lead}Now imagine viewing the scene {words}: {pick(ctx, ASK[asked])}"
            p = pole(asked_kind, x, y, scene.camera(new_cam))
            winner = x if p == asked else y
            options = placed_text_options(ctx, st.branch(f"{cond}/{variant}"), [names[x.id], names[y.id]], names[winner.id])
            question = f"<image>\n{q}\n{text_options_block(options)}\n{end_prompt(2)}"
            meta = {
                "family": "perspective_taking_relation_transformation",
                "paper_subtype": f"infinigen_spatial_relation_transformation_{cond}_{view}",
                "premise": with_premise, "premise_relation": premise, 
                **TransformFacts(asked_relation=asked_kind, asked=asked, new_camera=new_cam, x_id=x.id, y_id=y.id,
                                 names=names).to_metadata(between={"asked": {"view": view, "route_quarter_turns": route}}),
                "visible_fraction": {k: round(v, 4) for k, v in vis.items()},
                "frame_of_reference": "viewer", "symmetric": variant == "symmetric", "syntactic": False,
                "form": "two_step" if route else "one_view", "route_quarter_turns": route,
                # what stopping after the walk's first leg would answer (always the distractor)
                "one_step_answer": None if route is None else names[(y if p == asked else x).id],
                "readability": readability, "pair_id": ctx.item_id("base"), **FramesFacts(frames=[spec]).to_metadata(),
            }
            if with_premise:  # the stated premise fixes the answer: text-solvable by the paper's design
                meta["control"] = "text_only"
            items.append(make_item(ctx, variant=variant, suffix=cond, group_suffix=cond,
                                   subtype=f"relation_transformation_{cond}_{view}", question=question,
                                   images=[image], options=options, answer=label_of_text(options, names[winner.id]),
                                   scene=scene, metadata=meta))
    return items
