"""LRR Dep (is X in front of Y), Ca-R (does the camera keep turning one way along
A, B, C, D) and Ca-M (are the stated moves A->B, B->C, C->D right).

Camera sequences live in one scene record whose cameras are named after the frames
in the order shown ("A", "B", ...), so ``derive`` reads the displayed order straight
from the scene: Ca-R negatives swap two frames (which always breaks a monotone turn),
Ca-M answers come from :func:`~perspecta.world.oracle.camera_motion_direction`.

Dep draws the ordered (near, far) category pair as a matched stratum, so each pair of
categories is asked once each way and the words of the question carry no answer.
"""

from __future__ import annotations

import dataclasses
import math
from itertools import pairwise

import numpy as np

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.lrr.common import (
    FRAME_LABELS,
    SUITE,
    labelled_images,
    render_readable,
    stratum,
    view_size,
    wants_yes,
    yes_no,
    yesno_item,
)
from perspecta.suites.lrr.world import (
    Layout,
    count_in_view,
    noun,
    raised_camera,
    retry,
    target_clear,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    camera_motion_direction,
    camera_turn,
    front_behind,
    horizontal_fov,
    move_camera,
    near_far,
)
from perspecta.world.samplers.common import SamplingError
from perspecta.world.scene import Camera, Scene

DEPTH_MARGIN = 1.0  # metres of camera-frame depth between X and Y, at least
DEPTH_CATEGORIES = ("car", "person", "bicycle", "motorcycle", "figure", "bench", "dog", "barrel")
# A car and a dog differ ~6x in size: no depth ratio shows both readable in one view.
# Dropped in both orders, so which category is nearer still says nothing.
TOO_UNEQUAL = {frozenset({"car", "dog"})}
DEPTH_PAIRS = [(a, b) for a in DEPTH_CATEGORIES for b in DEPTH_CATEGORIES
               if a != b and frozenset({a, b}) not in TOO_UNEQUAL]  # (near, far)
MIN_TURN = 5.0  # degrees; Ca-R steps are 8-40 at every preset


# ----------------------------------------------------------------------------- Dep


def derive_dep(item: Item, scenes: dict[str, Scene]) -> str:
    s = scenes[item.scene_id]
    rel = front_behind(s.object("x"), s.object("y"), s.camera("main"), margin=DEPTH_MARGIN)
    if rel is None:
        raise ValueError(f"scene {s.scene_id}: X and Y are too close in depth to call")
    return yes_no(rel == "front")


@task(SUITE, "dep", derive=derive_dep, description="Is object X in front of (closer to the camera than) object Y?")
def generate_dep(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    cats = list(stratum(ctx, "categories", DEPTH_PAIRS))  # [near, far]
    ratio = float(ctx.knob("depth_gap_ratio", {"easy": 1.8, "standard": 1.25, "hard": 1.2}))
    n_entities = int(ctx.knob("n_distractors", {"easy": 2, "standard": 7, "hard": 9}))
    if ratio <= 1.0:
        raise ValueError(f"depth_gap_ratio must exceed 1 (far / near distance), got {ratio}")

    def attempt() -> tuple[Scene, np.ndarray, dict] | None:
        cam = raised_camera(rng, size, height=(1.8, 3.5), pitch=(10.0, 22.0))
        lay = Layout(rng, ctx.library)
        half = horizontal_fov(cam) / 2 - 8
        inst_near, inst_far = lay.instance(cats[0]), lay.instance(cats[1])
        # the far object must stay readable (about 55 px across its larger visible side):
        # small far things (a dog, a barrel) bring the pair closer to the camera
        focal = size / (2.0 * math.tan(math.radians(cam.fov_y) / 2.0))
        extent = max(float(inst_far.size[2]), 0.7 * float(max(inst_far.size[:2])))
        hi = max(4.0, min(10.0, focal * extent / 55.0 / ratio))
        d_near = float(rng.uniform(min(5.0, hi), hi)) if hi > 4.0 else 4.0
        d_far = d_near * ratio * float(rng.uniform(1.0, 1.08))
        near = lay.scatter("near", 1, cam, bearings=(-half, half), distances=(d_near, d_near),
                           make=lambda: inst_near)
        far = lay.scatter("far", 1, cam, bearings=(-half, half), distances=(d_far, d_far),
                          make=lambda: inst_far)
        if not near or not far:
            return None
        # X is the object the question names first: the nearer one for a "yes".
        near[0].id, far[0].id = ("x", "y") if yes else ("y", "x")
        lay.entities(cam, n_entities, bearings=(-half, half), distances=(4.0, 24.0), exclude=cats)
        lay.blocks(cam, int(rng.integers(3, 6)), bearings=(-half - 10, half + 10), distances=(26.0, 40.0))
        scene = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        x, y = scene.object("x"), scene.object("y")
        fb = front_behind(x, y, cam, margin=DEPTH_MARGIN + 0.2)
        nf = near_far(x, y, cam, margin=DEPTH_MARGIN + 0.2)
        if fb is None or (fb == "front") != yes or (nf == "closer") != yes:
            return None
        if not (target_clear(scene, cam, "x", min_visible=0.8) and target_clear(scene, cam, "y", min_visible=0.8)):
            return None
        drawn = render_readable(ctx, scene, cam, {"x": "x", "y": "y"})
        return None if drawn is None else (scene, *drawn)

    scene, rgb, facts = retry(attempt, 80, "lrr dep")
    ctx.add_scene(scene)
    image = ctx.save_image(rgb, "view")
    x, y = scene.object("x"), scene.object("y")
    body = (f"{IMAGE_MARKER}\nIs the {noun(x.category)} in front of the {noun(y.category)}, that is, "
            "closer to the camera?")
    meta = {"x_category": x.category, "y_category": y.category, "x_asset": x.asset_id, "y_asset": y.asset_id,
            "camera": scene.camera("main").metadata(), "readability": {"objects": facts}}
    return [yesno_item(ctx, variant="base", body=body, images=[image], answer=yes, scene_id=scene.scene_id,
                       metadata=meta)]


# ----------------------------------------------------------------------------- shared


def _frames(scene: Scene, n: int) -> list[Camera]:
    return [scene.camera(FRAME_LABELS[k]) for k in range(n)]


def _render_frames(ctx: TaskContext, scene: Scene, n: int) -> list[str]:
    """Render and save the first ``n`` frames; only their colour is read, so no id / depth
    layers are drawn (but with ``--with-depth``, whose depth file comes from the render)."""
    return [ctx.save_image(ctx.renderer.render(scene, c, layers=ctx.with_depth).rgb, c.name)
            for c in _frames(scene, n)]


def _renamed(cams: list[Camera]) -> list[Camera]:
    return [dataclasses.replace(c, name=FRAME_LABELS[k]) for k, c in enumerate(cams)]


# In a conflict step, how far each cue slides, as a share of the image side: the
# misleading one at least MIN_PARALLAX (12 px of 512), the deciding one at least
# DECISIVE_PARALLAX (20 px), so a careful look reads it without doubt.
MIN_PARALLAX = 0.024
DECISIVE_PARALLAX = 0.04


def _slides(before: Camera, after: Camera, scene: Scene, prefix: str) -> list[tuple[float, float]]:
    """(depth in ``before``, horizontal pixel shift) of each ``prefix`` object whose centre
    is in both images: how far it slid across the picture between the two shots."""
    out = []
    for o in scene.objects:
        if not o.id.startswith(prefix):
            continue
        uv0, z0 = before.project(o.center()[None])
        uv1, z1 = after.project(o.center()[None])
        if min(z0[0], z1[0]) > 0.5 and all(0 <= uv[0, 0] < c.width and 0 <= uv[0, 1] < c.height
                                           for uv, c in ((uv0, before), (uv1, after))):
            out.append((float(z0[0]), float(uv1[0, 0] - uv0[0, 0])))
    return out


# ----------------------------------------------------------------------------- Ca-R

# Ca-R forms, a matched stratum. ``confound``: at one shown step the camera also slides
# CONFOUND_SHIFT_M sideways against that step's turn, so the near street things slide
# the "wrong" way there while the far buildings still show the turn: in a "yes" the near
# things seem to reverse once, in a "no" the step that really reverses is the one whose
# near things seem to keep going, so reading the near things gives the wrong answer
# either way. ``plain``: today's small random drift, where near and far agree.
CA_R_FORMS = ("confound", "plain")
CONFOUND_SHIFT_M = 2.0
# swaps of a monotone A-D turn whose one reversed step is a single step's turn (the
# other two swaps reverse by three steps, too far for a sideways slide to mask)
_ONE_STEP_SWAPS = ((0, 1), (0, 3), (1, 2), (2, 3))


def _reversed_step(order: list[int]) -> int:
    """The shown step whose turn runs against the other two (a swapped monotone order)."""
    signs = [b > a for a, b in pairwise(order)]
    return next(k for k, v in enumerate(signs) if signs.count(v) == 1)


def confound_step_ok(before: Camera, after: Camera, scene: Scene) -> bool:
    """Whether a confounded Ca-R step reads as intended: every visible far block slides
    the way the turn makes it (the decisive cue) and the nearest street thing the other
    way (the misleading one, MIN_PARALLAX)."""
    honest = -1.0 if camera_turn(before, after) > 0 else 1.0  # a right turn slides the picture left
    far, near = _slides(before, after, scene, "bg"), _slides(before, after, scene, "obj")
    if not far or not near:
        return False
    nearest, side = min(near)[1], before.width
    return all(honest * dx >= DECISIVE_PARALLAX * side for _, dx in far) and -honest * nearest >= MIN_PARALLAX * side


def _shifted(cam: Camera, v: np.ndarray) -> Camera:
    """``cam`` carried by the world vector ``v`` (same heading and pitch)."""
    return dataclasses.replace(cam, position=tuple(float(x) for x in np.asarray(cam.position) + v),
                               look_at=tuple(float(x) for x in np.asarray(cam.look_at) + v))


def derive_ca_r(item: Item, scenes: dict[str, Scene]) -> str:
    cams = _frames(scenes[item.scene_id], 4)
    turns = [camera_turn(a, b) for a, b in pairwise(cams)]
    if any(abs(t) < MIN_TURN for t in turns):
        raise ValueError(f"item {item.id}: a camera turn below {MIN_TURN} degrees is ambiguous")
    return yes_no(all(t > 0 for t in turns) or all(t < 0 for t in turns))


@task(SUITE, "ca_r", derive=derive_ca_r,
      description="Camera turning in place over frames A-D: is the turn direction consistent?")
def generate_ca_r(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    step_deg = float(ctx.knob("turn_step_deg", {"easy": 30.0, "standard": 11.0, "hard": 10.0}))
    drift = float(ctx.knob("drift_m", {"easy": 0.0, "standard": 0.4, "hard": 0.7}))
    if step_deg < 2 * MIN_TURN:
        raise ValueError(f"turn_step_deg must be at least {2 * MIN_TURN:g} (swaps must stay readable), got {step_deg}")
    if not 0.0 <= drift <= 1.0:
        raise ValueError(f"drift_m must lie in [0, 1] (a turn must stay the main change), got {drift}")
    # 0: plain only (today's easy); 1: the forms of CA_R_FORMS, half each
    conflict = int(ctx.knob("image_cue_conflict", {"easy": 0, "standard": 1, "hard": 1}))
    form = stratum(ctx, "form", CA_R_FORMS) if conflict else "plain"
    step = step_deg * float(rng.uniform(0.85, 1.15))
    sign = 1.0 if rng.random() < 0.5 else -1.0
    # combined motion: the camera also shifts a little (any ground direction) at each
    # shot, so near things slide by parallax while the far buildings show the true turn
    shifts = [(float(np.cos(a)) * drift, float(np.sin(a)) * drift)
              for a in rng.uniform(0.0, 2.0 * np.pi, size=3)] if drift > 0 else [(0.0, 0.0)] * 3
    order = [0, 1, 2, 3]
    swapped = None
    confounded = None  # the shown step (0-2) whose camera also slides against its turn
    if form == "confound":  # the shown order is needed to place the slide
        if yes:
            confounded = int(rng.integers(3))
        else:
            i, j = _ONE_STEP_SWAPS[int(rng.integers(len(_ONE_STEP_SWAPS)))]
            order[i], order[j] = order[j], order[i]
            swapped = [FRAME_LABELS[i], FRAME_LABELS[j]]
            confounded = _reversed_step(order)

    def attempt() -> Scene | None:
        low = form == "confound"  # a lower camera sees the near ground the slide needs
        cam0 = raised_camera(rng, size, height=(2.0, 3.0) if low else (3.0, 6.0), pitch=(10.0, 20.0))
        cams = [cam0]
        for f, r in shifts:
            cams.append(move_camera(cams[-1], forward=f, right=r, turn=sign * step))
        half = horizontal_fov(cam0) / 2
        lo, hi = (-half - 5, 3 * step + half + 5) if sign > 0 else (-3 * step - half - 5, half + 5)
        lay = Layout(rng, ctx.library)
        if confounded is not None:
            shown = [cams[k] for k in order]
            a = shown[confounded]
            against = -1.0 if camera_turn(a, shown[confounded + 1]) > 0 else 1.0
            v = np.asarray(move_camera(a, right=against * CONFOUND_SHIFT_M).position) - np.asarray(a.position)
            shown = shown[:confounded + 1] + [_shifted(c, v) for c in shown[confounded + 1:]]
            lay.entities(a, 3, bearings=(-half + 6, half - 6), distances=(4.0, 5.5))
        lay.entities(cam0, int(rng.integers(7, 11)), bearings=(lo, hi), distances=(6.0, 22.0))
        lay.blocks(cam0, int(rng.integers(6, 10)), bearings=(lo, hi), distances=(28.0, 45.0) if low else (18.0, 38.0))
        if confounded is not None:
            scene = lay.scene(ctx.scene_prefix, ctx.seed, _renamed(shown))
            if not confound_step_ok(scene.cameras[confounded], scene.cameras[confounded + 1], scene):
                return None
        else:
            scene = lay.scene(ctx.scene_prefix, ctx.seed, cams)
        if any(count_in_view(scene, c) < 3 for c in scene.cameras):
            return None
        return scene

    scene = retry(attempt, 200 if form == "confound" else 30, "lrr ca_r")
    if form == "confound":
        pass  # already in the shown order
    elif not yes:
        i, j = sorted(rng.choice(4, size=2, replace=False).tolist())
        order[i], order[j] = order[j], order[i]
        swapped = [FRAME_LABELS[i], FRAME_LABELS[j]]
    if form != "confound":
        scene.cameras = _renamed([scene.cameras[k] for k in order])
    ctx.add_scene(scene)
    images = _render_frames(ctx, scene, 4)
    drift_text = (f" and may also shift sideways by up to about {CONFOUND_SHIFT_M:g} m" if conflict
                  else " and may also shift a little" if drift > 0 else " without moving from its spot")
    body = (
        f"{labelled_images(4)}\nBetween the shots the camera turns left or right{drift_text}; the "
        "scene does not change. Taken in the order A, B, C, D, does the camera keep turning in the same direction "
        "from each image to the next?"
    )
    meta = {"step_deg": round(step, 4), "drift_m": round(drift, 4), "turn_sign": "right" if sign > 0 else "left", "shown_order": order,
            "swapped": swapped, "form": form, "confounded_step": confounded,
            "cameras": [c.metadata() for c in scene.cameras]}
    return [yesno_item(ctx, variant="base", body=body, images=images, answer=yes, scene_id=scene.scene_id,
                       metadata=meta)]


# ----------------------------------------------------------------------------- Ca-M

MOVES = ("forward", "backward", "left", "right")
_MOVE_ARGS = {"forward": (1, 0), "backward": (-1, 0), "left": (0, -1), "right": (0, 1)}
_FLIP = {"left": "right", "right": "left"}
# Ca-M forms, a matched stratum: ``counter``: every sideways move comes with a pan the
# other way (COUNTER_TURN_DEG), so the far buildings slide as if the camera had moved the
# opposite way and only near things against far ones (parallax) tell the move; a
# negative then states exactly those sideways moves flipped, so the far-scene reading
# says "yes" to it and "no" to the truth. ``plain``: today's small jitter, where the
# whole picture slides the honest way. Half the items mislead a glance, half do not.
CA_M_FORMS = ("counter", "plain")
COUNTER_TURN_DEG = (6.0, 10.0)
COUNTER_REDRAWS = 6  # fresh counter-pans tried after a unit's first 200 layouts fail


def _draw_counter_pans(rng: np.random.Generator, moves: list[str], turns: list[float]) -> None:
    """Pan against every sideways move (right move, left turn: negative), in place."""
    for k, m in enumerate(moves):
        if m in _FLIP:
            turns[k] = (-1.0 if m == "right" else 1.0) * float(rng.uniform(*COUNTER_TURN_DEG))


def counter_step_ok(before: Camera, after: Camera, scene: Scene, move: str) -> bool:
    """Whether a sideways step of the counter form reads as intended: the far blocks all
    slide the way a move opposite to ``move`` would make them (the misleading glance
    cue, MIN_PARALLAX), and the nearest street object slides the honest way (DECISIVE_PARALLAX)."""
    honest = -1.0 if move == "right" else 1.0  # a camera moving right sees things slide left
    far, near = _slides(before, after, scene, "bg"), _slides(before, after, scene, "obj")
    if not far or not near:
        return False
    nearest, side = min(near)[1], before.width
    return all(-honest * dx >= MIN_PARALLAX * side for _, dx in far) and honest * nearest >= DECISIVE_PARALLAX * side


@dataclasses.dataclass(frozen=True)
class StatedMovesFacts(Facts):
    """The three camera moves the Ca-M statement claims (A->B, B->C, C->D)."""

    stated_moves: list[str]


def derive_ca_m(item: Item, scenes: dict[str, Scene]) -> str:
    cams = _frames(scenes[item.scene_id], 4)
    actual = [camera_motion_direction(a, b) for a, b in pairwise(cams)]
    if any(a is None for a in actual):
        raise ValueError(f"item {item.id}: a camera move has no single direction")
    return yes_no(actual == StatedMovesFacts.from_item(item).stated_moves)


@task(SUITE, "ca_m", derive=derive_ca_m,
      description="Camera translating between frames A-D: are the stated moves A->B, B->C, C->D right?")
def generate_ca_m(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    moves = [MOVES[int(rng.integers(4))] for _ in range(3)]
    step = float(ctx.knob("move_step_m", {"easy": 2.2, "standard": 1.0, "hard": 0.9})) * float(rng.uniform(0.9, 1.1))
    jitter = float(ctx.knob("turn_jitter_deg", {"easy": 0.0, "standard": 3.0, "hard": 5.0}))
    if not 0.0 <= jitter <= 8.0:
        raise ValueError(f"turn_jitter_deg must lie in [0, 8] (parallax must still tell the move), got {jitter}")
    # 0: no counter-turn form (today's easy); 1: the forms of CA_M_FORMS, half each
    conflict = int(ctx.knob("image_cue_conflict", {"easy": 0, "standard": 1, "hard": 1}))
    form = stratum(ctx, "form", CA_M_FORMS) if conflict else "plain"
    # camera compensation: with each move the camera also turns a little either way, so
    # the whole picture slides; only parallax (near things shift more than far ones)
    # tells a sideways move from the turn
    turns = [float(t) * jitter for t in rng.uniform(0.5, 1.0, size=3) * rng.choice((-1.0, 1.0), size=3)] \
        if jitter > 0 else [0.0] * 3
    if form == "counter":
        if not any(m in _FLIP for m in moves):  # the form needs a sideways move to mislead
            moves[int(rng.integers(3))] = ("left", "right")[int(rng.integers(2))]
        _draw_counter_pans(rng, moves, turns)

    def attempt() -> Scene | None:
        cam0 = raised_camera(rng, size, height=(2.0, 4.0), pitch=(12.0, 22.0))
        cams = [cam0]
        for m, t in zip(moves, turns):
            f, r = _MOVE_ARGS[m]
            cams.append(move_camera(cams[-1], forward=f * step, right=r * step, turn=t))
        # everything stays at least 3.5 m ahead of the farthest-forward camera position
        fwd = cam0.forward()
        p0 = np.asarray(cam0.position, dtype=float)
        ahead = max(float((np.asarray(c.position) - p0) @ fwd) for c in cams) + 3.5
        half = horizontal_fov(cam0) / 2
        lay = Layout(rng, ctx.library)
        if form == "counter":  # street things close enough that parallax beats the pan
            lay.entities(cam0, 3, bearings=(-half + 6, half - 6), distances=(ahead, ahead + 1.0))
        lay.entities(cam0, int(rng.integers(6, 10)), bearings=(-half - 5, half + 5), distances=(ahead, ahead + 8.0))
        lay.blocks(cam0, int(rng.integers(5, 8)), bearings=(-half - 10, half + 10), distances=(ahead + 6, ahead + 18.0))
        scene = lay.scene(ctx.scene_prefix, ctx.seed, _renamed(cams))
        if any(count_in_view(scene, c) < 4 for c in scene.cameras):
            return None
        if form == "counter" and not all(counter_step_ok(a, b, scene, m) for a, b, m
                                         in zip(scene.cameras, scene.cameras[1:], moves) if m in _FLIP):
            return None
        return scene

    if form != "counter":
        scene = retry(attempt, 30, "lrr ca_m")
    else:
        # a pan drawn too strong for its step leaves no layout whose nearest object still
        # slides the honest way (DECISIVE_PARALLAX): after 200 failed layouts the pans are
        # drawn again. Only units that failed redraw, so every unit that generated before is
        # unchanged (seed 148216 stopped at its first unit).
        scene = None
        for redraw in range(COUNTER_REDRAWS + 1):
            if redraw:
                _draw_counter_pans(rng, moves, turns)
            try:
                scene = retry(attempt, 100 if redraw else 200, "lrr ca_m")
                break
            except SamplingError:
                continue
        if scene is None:
            raise SamplingError(f"lrr ca_m: no valid layout after 200 layouts and {COUNTER_REDRAWS} counter-pan redraws")
    stated = list(moves)
    if not yes and form == "counter":  # the far-scene reading: every sideways move flipped
        stated = [_FLIP.get(m, m) for m in moves]
    elif not yes:
        n_wrong = stratum(ctx, "n_wrong", (1, 2), per_answer=True)
        for k in sorted(rng.choice(3, size=n_wrong, replace=False).tolist()):
            stated[k] = [m for m in MOVES if m != moves[k]][int(rng.integers(3))]
    ctx.add_scene(scene)
    images = _render_frames(ctx, scene, 4)
    turn_text = ("; it may also turn up to about 10 degrees either way while moving" if conflict
                 else "; it may also turn slightly while moving" if jitter > 0 else "; it never turns")
    body = (
        f"{labelled_images(4)}\nThe scene stays still. Between shots the camera moves forward, backward, left or "
        f"right, each relative to the way it was pointing in the earlier shot{turn_text}. "
        "Is it true that the camera moved "
        f"{stated[0]} from A to B, {stated[1]} from B to C, and {stated[2]} from C to D? "
        "Say yes only if all three moves are right."
    )
    meta = {"true_moves": moves, **StatedMovesFacts(stated_moves=stated).to_metadata(), "step_m": round(step, 4),
            "form": form,
            "turns_deg": [round(t, 4) for t in turns],
            "cameras": [c.metadata() for c in scene.cameras]}
    return [yesno_item(ctx, variant="base", body=body, images=images, answer=yes, scene_id=scene.scene_id,
                       metadata=meta)]
