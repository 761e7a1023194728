"""LRR object tasks about an animal subject (the paper's sheep, or a dog): Obj-HD (which
way does its head point), Obj-MD (does it walk the way its head points, A -> B -> C) and
Obj-M (has it moved relative to the surroundings while the camera moved too). Each unit
yields a ``base`` item and a ``clear`` item asked about the same geometry with the street
entities removed (the blocky buildings and the ground landmarks stay as background).

Every frame is its own scene record (``<prefix>-A``, ``-B``, ...; Clear ones
``<prefix>-clear-A``, ...) in the order shown, so ``derive`` reads positions and
headings straight from the stored scenes.

Shortcut control: the subject, its facing bin relative to the camera (Obj-HD, Obj-MD)
and the kind of each negative are strata drawn per pair of units
(:func:`~perspecta.suites.lrr.common.stratum`), so no single frame, subject or facing
predicts the answer; Obj-MD moves the subject in any ground direction, with the heading
offset from the motion by 0 (yes), 90 or 180 degrees, or with the frames shuffled.
Obj-M swings the camera about the subject and carries it to a point set by the unit's
form (:data:`M_FORMS`): with the subject (it keeps its pixel whether it moved or not), to
where a mover would go (a stayer slides, a mover keeps its pixel: the glance cue lies) or
nowhere (a mover slides); the subject may turn on the spot in either case, and only its
place among the landmarks tells.
Readability: the subject's visible pixels and box are measured on every render and a
layout that breaks the contract is drawn again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

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
    SHEEP,
    Layout,
    cleared,
    count_in_view,
    ground_point,
    moved,
    raised_camera,
    retry,
    target_clear,
    with_objects,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    direction_from_heading,
    distance,
    egocentric_facing,
    facing_label,
    heading_matches_motion,
    heading_of,
    horizontal_fov,
    wrap360,
)
from perspecta.world.readability import bin_margin
from perspecta.world.samplers.common import Instance, Rect
from perspecta.world.scene import Camera, Scene

VARIANTS = ("base", "clear")


@dataclass(frozen=True)
class Subject:
    """An animal the object tasks can be about: how to draw it and how prompts name it."""

    asset_id: str | None  # a fixed asset, or None to draw from ``category``
    category: str
    text: str  # the noun phrase in prompts
    short: str  # the bare noun ("the sheep")


SUBJECTS = {
    "sheep": Subject(SHEEP, "figure", "the sheep (the white animal with a dark face)", "sheep"),
    "dog": Subject(None, "dog", "the dog", "dog"),
}
REF_LENGTH = 1.3  # metres: camera distances below are tuned for a body this long (the sheep)


def _subject(ctx: TaskContext) -> tuple[str, Subject]:
    name = stratum(ctx, "subject", list(SUBJECTS))
    return name, SUBJECTS[name]


def _instance(lay: Layout, subject: Subject) -> Instance:
    return lay.instance(asset_id=subject.asset_id) if subject.asset_id else lay.instance(subject.category)


def _reach(inst: Instance) -> float:
    """Camera distances scale with the subject's length, so a dog fills the view about
    as much as the sheep does (never below 0.75 of the sheep's)."""
    return max(0.75, float(inst.size[0]) / REF_LENGTH)


def _scene_ids(prefix: str, variant: str, n: int) -> list[str]:
    mid = "" if variant == "base" else "-clear"
    return [f"{prefix}{mid}-{FRAME_LABELS[k]}" for k in range(n)]


Rendered = dict[str, tuple[list[Scene], list[str], dict[str, Any]]]


def _both_variants(ctx: TaskContext, frames: list[Scene], cams: list[Camera], short: str) -> Rendered | None:
    """Render the base and Clear frames; store them only if the subject is readable in
    every render (None otherwise, so the caller draws a new layout). Per variant:
    (scenes, image paths, readability facts keyed ``<noun>_<frame>``)."""
    rendered = []
    facts: dict[str, dict[str, Any]] = {v: {} for v in VARIANTS}
    for variant in VARIANTS:
        ids = _scene_ids(ctx.scene_prefix, variant, len(frames))
        vf = [with_objects(f, f.objects, i) if variant == "base" else cleared(f, i) for f, i in zip(frames, ids)]
        for k, (scene, cam) in enumerate(zip(vf, cams)):
            label = short if len(frames) == 1 else f"{short}_{FRAME_LABELS[k]}"
            drawn = render_readable(ctx, scene, cam, {label: "target"})
            if drawn is None:
                return None
            facts[variant].update(drawn[1])
            rendered.append((variant, scene, drawn[0]))
    out: Rendered = {v: ([], [], {"objects": facts[v]}) for v in VARIANTS}
    for variant, scene, rgb in rendered:
        k = len(out[variant][0])
        suffix = FRAME_LABELS[k] if len(frames) > 1 else "view"
        ctx.add_scene(scene)
        out[variant][0].append(scene)
        out[variant][1].append(ctx.save_image(rgb, suffix if variant == "base" else f"clear_{suffix}"))
    return out


def _layout_and_render(ctx: TaskContext, attempt: Callable[[], Any], short: str, what: str) -> tuple[Any, Rendered]:
    """Draw layouts until one renders with the subject readable; (layout, variants)."""
    def go():  # type: ignore[no-untyped-def]
        lay = attempt()
        if lay is None:
            return None
        done = _both_variants(ctx, lay[0], lay[1], short)
        return None if done is None else (lay, done)

    return retry(go, 80, what)


def _variant_items(ctx: TaskContext, variants: Rendered, *, body: str, answer: bool,
                   metadata_for: Callable[[list[Scene]], dict[str, Any]],
                   extra_readability: dict[str, Any] | None = None) -> list[Item]:
    """One yes/no item per variant (base, Clear): the same question over that variant's frames."""
    return [yesno_item(ctx, variant=variant, body=body, images=images, answer=answer,
                       scene_id=frames[0].scene_id,
                       metadata={**metadata_for(frames), "readability": {**facts, **(extra_readability or {})}})
            for variant, (frames, images, facts) in variants.items()]


def _clutter(ctx: TaskContext, lay: Layout, cam: Camera, subject: Subject, k: float, *, n_entities: int,
             n_landmarks: int, block_distances: tuple[float, float]) -> None:
    """Street entities, ground landmarks and buildings."""
    rng = ctx.rng
    half = horizontal_fov(cam) / 2
    # never another animal of the subject's kind; around the sheep no dogs either (the
    # white procedural dog could pass for a second sheep)
    exclude = ("figure", subject.category) + (("dog",) if subject.category == "figure" else ())
    lay.entities(cam, n_entities, bearings=(-half, half), distances=(4.0 * k, 18.0 * k), exclude=exclude)
    lay.landmarks(cam, n_landmarks, bearings=(-half - 5, half + 5), distances=(2.5 * k, 16.0 * k))
    lay.blocks(cam, int(rng.integers(3, 7)), bearings=(-half - 10, half + 10),
               distances=(block_distances[0] * k, block_distances[1] * k))


# ----------------------------------------------------------------------------- Obj-HD

HEADINGS = {"toward": 0.0, "rightward": 90.0, "away": 180.0, "leftward": -90.0}
HEADING_TEXT = {
    "toward": "toward the camera", "away": "away from the camera",
    "leftward": "toward the left side of the image", "rightward": "toward the right side of the image",
}  # fmt: skip
BIN_WIDTH = 90.0  # the four facing bins are quarter turns with edges at +-45 and +-135


@dataclass(frozen=True)
class HeadingFacts(Facts):
    """The heading bin the Obj-HD question states (the scene decides whether it is true)."""

    asked_heading: str


@dataclass(frozen=True)
class SequenceFacts(Facts):
    """The scenes an Obj-MD / Obj-M item shows, in the order its images are labelled."""

    scene_ids: list[str]


def derive_hd(item: Item, scenes: dict[str, Scene]) -> str:
    s = scenes[item.scene_id]
    label = facing_label(s.object("target"), s.camera("main"), toward_max=45.0, margin=10.0)
    if label is None:
        raise ValueError(f"scene {s.scene_id}: the subject's heading is too close to a bin boundary")
    return yes_no(label == HeadingFacts.from_item(item).asked_heading)


@task(SUITE, "obj_hd", derive=derive_hd, description="Does the animal's head point in the stated direction?")
def generate_obj_hd(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    name, subject = _subject(ctx)
    true = stratum(ctx, "true_heading", list(HEADINGS))
    # near-miss negatives: the facing leans (by up to ``heading_jitter_deg``) toward one
    # neighbouring bin, and a "no" asks about exactly that bin, the one a glance confuses
    # it with; with the knob off a "no" asks any other bin
    adjacent = bool(ctx.knob("adjacent_negatives", {"easy": 0, "standard": 1, "hard": 1}))
    lean = 1.0 if rng.random() < 0.5 else -1.0
    if yes:
        asked = true
    elif adjacent:
        asked = next(h for h, a in HEADINGS.items() if wrap360(a - HEADINGS[true] - 90.0 * lean) == 0.0)
    else:
        asked = [h for h in HEADINGS if h != true][int(rng.integers(3))]
    # how far the true facing may stray from its bin centre: the contract keeps it >= 1/4
    # bin (22.5 deg) from an edge, so 22.5 is the hardest readable value
    jitter = float(ctx.knob("heading_jitter_deg", {"easy": 10.0, "standard": 22.5, "hard": 22.5}))
    pitch = float(ctx.knob("camera_pitch_deg", {"easy": 24.0, "standard": 40.0, "hard": 46.0}))
    n_entities = int(ctx.knob("n_distractors", {"easy": 2, "standard": 7, "hard": 9}))
    if not 0.0 <= jitter <= 22.5:
        raise ValueError(f"heading_jitter_deg must lie in [0, 22.5] (the bin-margin contract), got {jitter}")

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        lay = Layout(rng, ctx.library)
        inst = _instance(lay, subject)
        k = _reach(inst)
        cam = raised_camera(rng, size, height=(2.8 * k, 4.2 * k), pitch=(pitch - 5.0, pitch + 5.0))
        p = ground_point(cam, float(rng.uniform(0.3, 0.7)) * size, float(rng.uniform(0.45, 0.7)) * size,
                         z=float(inst.size[2]) / 2)
        if p is None:
            return None
        # facing angle a = heading of the front minus the heading back to the camera
        back = heading_of(np.asarray(cam.position, dtype=float)[:2] - p[:2])
        yaw = back + HEADINGS[true] + lean * float(rng.uniform(0.0, jitter))
        lay.place("target", inst, p[0], p[1], yaw)
        _clutter(ctx, lay, cam, subject, k, n_entities=n_entities, n_landmarks=20, block_distances=(16.0, 30.0))
        scene = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        if facing_label(scene.object("target"), cam, toward_max=45.0, margin=10.0) != true:
            return None
        margin = bin_margin(egocentric_facing(scene.object("target"), cam), BIN_WIDTH, offset_deg=45.0)
        if margin["deg"] < BIN_WIDTH / 4:
            return None
        if not target_clear(scene, cam, min_visible=0.9):
            return None
        margins.append(margin)
        return [scene], [cam]

    margins: list[dict[str, float]] = []
    ((_, (cam,)), variants) = _layout_and_render(ctx, attempt, subject.short, "lrr obj_hd")
    return _variant_items(
        ctx, variants,
        body=f"{IMAGE_MARKER}\nLook at {subject.text}. Is its head pointing {HEADING_TEXT[asked]}?",
        answer=yes, extra_readability={"bin_margin": margins[-1]},
        metadata_for=lambda frames: {"subject": name, "true_heading": true, **HeadingFacts(asked_heading=asked).to_metadata(),
                                     "camera": cam.metadata(), "n_objects": len(frames[0].objects)})


# ----------------------------------------------------------------------------- Obj-MD

MD_TOL = 30.0  # heading_matches_motion tolerance; negatives are >= 60 degrees off
MD_NEGATIVES = ("perpendicular", "reversed", "shuffled")
MIN_STEP_PX = 0.04  # the subject's image displacement per step, as a share of the image side


def derive_md(item: Item, scenes: dict[str, Scene]) -> str:
    sheep = [scenes[s].object("target") for s in SequenceFacts.from_item(item).scene_ids]
    ok = all(heading_matches_motion(a, a, b, tol=MD_TOL) for a, b in pairwise(sheep))
    return yes_no(ok)


# Obj-MD forms, a matched stratum. ``carried``: the camera (keeping its heading) is
# carried CARRY_FACTOR times the subject's own displacement, so the subject slides
# backwards in the picture: a walker that goes where its head points seems to back
# away, a "reversed" negative seems to walk forwards, and only the ground and the posts
# (which slide twice as far) tell its real motion. ``fixed``: the camera stays put, as
# before, and the picture shows the motion as it is.
MD_FORMS = ("carried", "fixed")
CARRY_FACTOR = 2.0


def _shift_px(cams: tuple[Camera, Camera], a: Scene, b: Scene, object_id: str = "target") -> np.ndarray:
    """The image displacement of object ``object_id`` from scene ``a`` (seen by
    ``cams[0]``) to scene ``b`` (seen by ``cams[1]``)."""
    (ua, _), (ub, _) = (c.project(s.object(object_id).center()[None]) for c, s in zip(cams, (a, b)))
    return np.asarray(ub[0] - ua[0], dtype=float)


def _step_px(cam: Camera, a: Scene, b: Scene) -> float:
    return float(np.linalg.norm(_shift_px((cam, cam), a, b)))


def carried_step_misleads(fixed: Camera, cams: tuple[Camera, Camera], a: Scene, b: Scene) -> bool:
    """Whether a step of the ``carried`` form shows what it should: the subject's slide in
    the picture runs against the slide a fixed camera would show (the glance cue lies),
    and the nearest landmark post slides at least MIN_STEP_PX of the side (the ground
    shows the camera moved)."""
    seen, true = _shift_px(cams, a, b), _shift_px((fixed, fixed), a, b)
    if float(seen @ true) >= 0.0 or float(np.linalg.norm(seen)) < MIN_STEP_PX * fixed.width:
        return False
    p = np.asarray(a.object("target").pose.position, dtype=float)[:2]
    posts = [o for o in a.objects if o.id.startswith("lm")]
    if not posts:
        return False
    post = min(posts, key=lambda o: float(np.linalg.norm(np.asarray(o.pose.position)[:2] - p)))
    return float(np.linalg.norm(_shift_px(cams, a, b, post.id))) >= MIN_STEP_PX * fixed.width


@task(SUITE, "obj_md", derive=derive_md,
      description="Fixed camera, frames A-C: does the animal move the way its head points?")
def generate_obj_md(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    name, subject = _subject(ctx)
    facing = stratum(ctx, "facing", list(HEADINGS))  # matched: one frame's view says nothing
    negative = None if yes else stratum(ctx, "negative", MD_NEGATIVES, per_answer=True)
    step_lengths = float(ctx.knob("step_body_lengths", {"easy": 1.3, "standard": 0.6, "hard": 0.5}))
    # the "perpendicular" negative walks this far off its heading: a diagonal sidestep,
    # not a clean crab walk, at standard (twice the yes tolerance at the least)
    off_deg = float(ctx.knob("sidestep_deg", {"easy": 90.0, "standard": 70.0, "hard": 60.0}))
    if not 2 * MD_TOL <= off_deg <= 90.0:
        raise ValueError(f"sidestep_deg must lie in [{2 * MD_TOL:g}, 90], got {off_deg}")
    n_entities = int(ctx.knob("n_distractors", {"easy": 2, "standard": 7, "hard": 9}))
    # 0: the camera stays put (today's easy); 1: the forms of MD_FORMS, half each
    conflict = int(ctx.knob("image_cue_conflict", {"easy": 0, "standard": 1, "hard": 1}))
    form = stratum(ctx, "form", MD_FORMS) if conflict else "fixed"

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        lay = Layout(rng, ctx.library)
        inst = _instance(lay, subject)
        k = _reach(inst)
        step = step_lengths * float(inst.size[0])
        cam = raised_camera(rng, size, height=(3.0 * k, 5.0 * k), pitch=(25.0, 40.0))
        mid = ground_point(cam, float(rng.uniform(0.4, 0.6)) * size, float(rng.uniform(0.5, 0.65)) * size,
                           z=float(inst.size[2]) / 2)
        if mid is None:
            return None
        back = heading_of(np.asarray(cam.position, dtype=float)[:2] - mid[:2])
        yaw = back + HEADINGS[facing] + float(rng.uniform(-45.0, 45.0))  # any heading within the bin
        side = off_deg if rng.random() < 0.5 else -off_deg
        offset = {None: 0.0, "shuffled": 0.0, "reversed": 180.0}.get(negative, side)
        motion = yaw - offset
        d = direction_from_heading(motion)[:2]
        pts = [mid[:2] + (j - 1) * step * d for j in range(3)]
        # keep the whole path free of clutter
        lay.rects.append(Rect(float(mid[0]), float(mid[1]), step + inst.size[0], inst.size[0], float(motion)))
        lay.place("target", inst, pts[0][0], pts[0][1], yaw, gap=-10.0)
        _clutter(ctx, lay, cam, subject, k, n_entities=n_entities, n_landmarks=30, block_distances=(16.0, 30.0))
        base = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        order = [0, 1, 2]
        if negative == "shuffled":
            perms = ([0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0])
            order = list(perms[int(rng.integers(len(perms)))])
        frames, cams = [], []
        for j, src in enumerate(order):
            objs = [moved(o, pts[src]) if o.id == "target" else o for o in base.objects]
            c = cam if form == "fixed" else _orbit_camera(cam, mid, mid[:2] + CARRY_FACTOR * (pts[src] - mid[:2]), 0.0, "main")
            frame = with_objects(base, objs, f"{ctx.scene_prefix}-{FRAME_LABELS[j]}", cameras=[c])
            if not target_clear(frame, c, min_visible=0.9):
                return None
            frames.append(frame)
            cams.append(c)
        if any(_step_px(cam, a, b) < MIN_STEP_PX * size for a, b in pairwise(frames)):
            return None
        if form == "carried" and not all(carried_step_misleads(cam, (ca, cb), a, b) for (ca, cb), (a, b)
                                         in zip(pairwise(cams), pairwise(frames))):
            return None
        shown.append((order, step))
        return frames, cams

    shown: list[tuple[list[int], float]] = []
    ((_, cams), variants) = _layout_and_render(ctx, attempt, subject.short, "lrr obj_md")
    (order, step) = shown[-1]
    if conflict:  # one wording for both forms, so the text does not tell the form
        setting = ("The surroundings stay fixed; the camera keeps its heading but may be carried along the ground "
                   f"between the shots. {subject.text[0].upper()}{subject.text[1:]} may stand at a different spot in "
                   "each image and always faces the same way. Judging its place against the ground and the posts "
                   "around it, and following")
    else:
        setting = (f"The camera and the surroundings stay fixed; {subject.text} may stand at a different spot in "
                   "each image and always faces the same way. Following")
    # "at each step": a shuffled negative may step back and then forward, so its net move
    # A -> C can point where its head does; asked of the whole path, a careful judge (round
    # 6) could not tell whether that counts. Each step decides, as derive_md checks.
    body = (f"{labelled_images(3)}\n{setting} the order A, B, C, is the {subject.short} moving in the direction "
            "its head points at each step, from A to B and from B to C?")
    return _variant_items(ctx, variants, body=body, answer=yes, metadata_for=lambda frames: {
        "subject": name, "facing": facing, "negative": negative, "shown_order": order, "step_m": round(step, 4),
        "form": form, **SequenceFacts(scene_ids=[f.scene_id for f in frames]).to_metadata(),
        "camera": cams[1].metadata(), "cameras": [c.metadata() for c in cams]})


# ----------------------------------------------------------------------------- Obj-M

MOVED_MIN = 0.4  # metres: a "moved" subject is displaced at least this far (move_m is held >= 0.6)
# Which point the camera is carried with (Obj-M forms). ``follow``: the subject's own
# spot in B, so it keeps its pixel whether it moved or not (the image says nothing);
# ``misleading``: the spot a mover would go to, so a mover keeps its pixel and a subject
# that stayed slides across the picture; ``truthful``: its spot in A, so a mover slides
# and a stayer keeps its pixel. Drawn as a matched stratum over all three, the subject's
# slide in the picture is equally likely for "yes" and "no" (1/3 each) and says nothing;
# in a third of the items it points the wrong way and only the landmarks decide.
M_FORMS = ("follow", "misleading", "truthful")
MIN_SLIDE_PX = 0.08  # a sliding subject moves at least this share of the image side


def _anchor(form: str, p0: np.ndarray, spot: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The ground point the camera is carried to (from ``p0``) under Obj-M form ``form``."""
    return {"follow": p1, "misleading": spot, "truthful": p0[:2]}[form]


def _subject_px(cam: Camera, obj: Any) -> np.ndarray:
    """The pixel of the subject's ground-plane origin (the point the camera swings about)."""
    uv, _ = cam.project(np.asarray(obj.pose.position, dtype=float)[None])
    return np.asarray(uv[0], dtype=float)


def derive_m(item: Item, scenes: dict[str, Scene]) -> str:
    a, b = (scenes[s].object("target") for s in SequenceFacts.from_item(item).scene_ids)
    d = distance(np.asarray(a.pose.position), np.asarray(b.pose.position))
    if 1e-6 < d < MOVED_MIN:
        raise ValueError(f"item {item.id}: the subject moved {d:.3f} m, too little to call")
    return yes_no(d >= MOVED_MIN)


def _orbit_camera(cam: Camera, before: np.ndarray, after: np.ndarray, orbit_deg: float, name: str) -> Camera:
    """``cam`` carried along with the subject (from ``before`` to ``after``) and swung
    ``orbit_deg`` about the vertical through it: the subject keeps its pixel and its
    size in the image, whether it moved or not, so only its place among the
    surroundings tells."""
    c, s = math.cos(math.radians(orbit_deg)), math.sin(math.radians(orbit_deg))

    def turn(v: np.ndarray) -> np.ndarray:
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])

    pos = np.asarray(cam.position, dtype=float)
    look = np.asarray(cam.look_at, dtype=float)
    pivot = np.array([before[0], before[1], 0.0])
    new_pos = np.array([after[0], after[1], 0.0]) + turn(pos - pivot)
    return Camera(name=name, position=tuple(round(float(x), 5) for x in new_pos),  # type: ignore[arg-type]
                  look_at=tuple(round(float(x), 5) for x in new_pos + turn(look - pos)),  # type: ignore[arg-type]
                  fov_y=cam.fov_y, width=cam.width, height=cam.height)


@task(SUITE, "obj_m", derive=derive_m,
      description="Camera moves between A and B; has the animal moved relative to the surroundings?")
def generate_obj_m(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    size = view_size(ctx)
    name, subject = _subject(ctx)
    move_m = float(ctx.knob("move_m", {"easy": 2.5, "standard": 1.3, "hard": 1.1}))
    orbit = float(ctx.knob("camera_orbit_deg", {"easy": 10.0, "standard": 25.0, "hard": 30.0}))
    if move_m < 1.5 * MOVED_MIN:
        raise ValueError(f"move_m must be at least {1.5 * MOVED_MIN:g} m to be called a move, got {move_m}")
    turn_max = float(ctx.knob("subject_turn_deg", {"easy": 0.0, "standard": 180.0, "hard": 180.0}))
    n_entities = int(ctx.knob("n_distractors", {"easy": 2, "standard": 7, "hard": 9}))
    n_landmarks = int(ctx.knob("n_landmarks", {"easy": 60, "standard": 45, "hard": 35}))
    # 0: the camera always follows the subject (today's easy); 1: the image-cue forms
    conflict = int(ctx.knob("image_cue_conflict", {"easy": 0, "standard": 1, "hard": 1}))
    form = stratum(ctx, "form", M_FORMS) if conflict else "follow"

    def attempt() -> tuple[list[Scene], list[Camera]] | None:
        lay = Layout(rng, ctx.library)
        inst = _instance(lay, subject)
        k = _reach(inst)
        cam = raised_camera(rng, size, height=(4.0 * k, 6.0 * k), pitch=(28.0, 40.0), name="main")
        p0 = ground_point(cam, float(rng.uniform(0.35, 0.65)) * size, float(rng.uniform(0.45, 0.65)) * size,
                          z=float(inst.size[2]) / 2)
        if p0 is None:
            return None
        swing = orbit * float(rng.uniform(0.85, 1.15)) * (1.0 if rng.random() < 0.5 else -1.0)
        move_len = move_m * float(rng.uniform(0.9, 1.1))
        # where a mover would go; a "no" subject stays, but its would-be spot gets the same
        # nearby landmarks, so landmark density around the subject carries no answer
        spot = p0[:2] + direction_from_heading(float(rng.uniform(0, 360)))[:2] * move_len
        p1 = spot if yes else p0[:2].copy()
        move_len = move_len if yes else 0.0
        yaw = float(rng.uniform(0, 360))
        turn = float(rng.uniform(-turn_max, turn_max))  # the subject may turn in place, yes or no
        # posts right beside the subject's spot and beside the spot a mover would go to
        # (a "no" subject stays, but that spot gets its posts too, so the neighbourhood
        # looks alike either way); placed before the keep-out boxes, clear of the body
        foot = 0.5 * float(np.hypot(inst.size[0], inst.size[1]))
        lay.posts_near([p0[:2], spot], 2, clear=foot + 0.3, radii=(foot + 0.35, foot + 0.75))
        r = 0.6 * float(inst.size[0]) + 0.4
        lay.rects.append(Rect(float(p0[0]), float(p0[1]), r, r))
        lay.rects.append(Rect(float(spot[0]), float(spot[1]), r, r))
        lay.place("target", inst, p0[0], p0[1], yaw, gap=-10.0)
        # scenery around the subject, so both views share landmarks near it
        _clutter(ctx, lay, cam, subject, k, n_entities=n_entities, n_landmarks=n_landmarks,
                 block_distances=(9.0, 26.0))
        base = lay.scene(ctx.scene_prefix, ctx.seed, [cam])
        cam_b = _orbit_camera(cam, p0, _anchor(form, p0, spot, p1), swing, "main")
        sheep_b = moved(base.object("target"), p1, yaw=yaw + turn)
        slide = float(np.linalg.norm(_subject_px(cam_b, sheep_b) - _subject_px(cam, base.object("target"))))
        if form != "follow" and (slide >= 2.0) != (yes == (form == "truthful")):
            raise AssertionError(f"obj_m form {form}: the subject slid {slide:.1f} px")
        if slide >= 2.0 and slide < MIN_SLIDE_PX * size:
            return None
        frame_a = with_objects(base, base.objects, f"{ctx.scene_prefix}-A")
        frame_b = with_objects(base, [sheep_b if o.id == "target" else o for o in base.objects],
                               f"{ctx.scene_prefix}-B", cameras=[cam_b])
        for fr, c in ((frame_a, cam), (frame_b, cam_b)):
            if not target_clear(fr, c, min_visible=0.9) or count_in_view(fr, c, "bg") < 2:
                return None
            if count_in_view(fr, c, "lm") < 8:
                return None
        shift_len = distance(np.asarray(cam.position), np.asarray(cam_b.position))
        lengths.append((shift_len, move_len, turn, swing, slide))
        return [frame_a, frame_b], [cam, cam_b]

    lengths: list[tuple[float, float, float, float, float]] = []
    ((_, cams), variants) = _layout_and_render(ctx, attempt, subject.short, "lrr obj_m")
    shift_len, move_len, turn, swing, slide = lengths[-1]
    body = (
        f"{labelled_images(2)}\nImages A and B show the same place; the camera moved between the two shots. "
        f"Compared with its surroundings, has {subject.text} moved to a different spot between A and B? "
        "Turning on the spot does not count as moving."
    )
    return _variant_items(ctx, variants, body=body, answer=yes, metadata_for=lambda frames: {
        "subject": name, "sheep_move_m": round(move_len, 4), "subject_turn_deg": round(turn, 3),
        "camera_move_m": round(shift_len, 4), "camera_orbit_deg": round(swing, 3),
        "form": form, "subject_slide_px": round(slide, 2),
        **SequenceFacts(scene_ids=[f.scene_id for f in frames]).to_metadata(),
        "cameras": [c.metadata() for c in cams]})
