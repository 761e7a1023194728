"""DORI Q5, inter-object direction: how two objects (red tags "A" and "B") are oriented to each
other, judged from the objects' own points of view rather than the camera's.

Coarse: on ``d = |yaw_difference(A, B)|`` — same (0-22.5), partially same (22.5-67.5),
perpendicular (67.5-112.5), partially opposite (112.5-157.5), opposite (157.5-180).
Granular: ``r = rotation_to_face(B, A)`` (counter-clockwise positive), binned into
no rotation (|r| <= 5), 0-45 / 46-90 / 91-135 degrees clockwise or counter-clockwise
(seen from above), and about 180 degrees (|r| > 135). Street scenes with
``n_street_distractors`` other objects and ``n_same_category`` untagged look-alikes of A
or B; B's yaw is set after layout to realise the drawn answer, at least
``bin_margin_frac`` of the bin's width from its edges (>= 1/3 for bins up to 60 degrees
wide, else >= 1/4; :data:`PAIR_MARGIN_FRAC` for the granular turn's narrow bins, since
that answer rests on two readings whose errors add). Both answers must also hold for a viewer who does
not compensate perspective (each heading read against the camera's axis, not the object's
own line of sight): that reading keeps :data:`APPARENT_MARGIN_FRAC` of its bin from the
edges (``readability["apparent_bin_margin"]``). Both tagged objects are seen obliquely (MIN_OBLIQUE_DEG) from a
camera 20-40 degrees above the street. A tagged object whose heading the question reads
(coarse: A and B; granular: B) is a vehicle, like every tagged object with a front
(:data:`PAIR_CATEGORIES`): from behind, a seat's backrest hides where it points. Tags
stand beside the objects with leader lines (never on them), and both objects must pass
the readability contract at the image size (>= 512 px by default), else the unit redraws.
CBD pairs hold one frontless object: real (a table, a plant, a barrel) or primitive; in
the granular question it is always B, since B's turn toward A's position needs only B's
front (a frontless A still has a position: that turn is decidable).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.suites.context import TaskContext
from perspecta.suites.dori.common import (
    CONTROL_CATEGORIES,
    NARROW_BIN_DEG,
    balanced_class,
    check_readable,
    knob,
    dark_check,
    draw_tag,
    image_size,
    make_item,
    margin_frac,
    resample,
    shuffled,
    realistic_backdrop,
    signed_bin_margin,
    Unreadable,
)
from perspecta.world import readability
from perspecta.suites.dori.prompts import CANNOT_DETERMINE
from perspecta.suites.dori.marks import seat_view, view_record
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    egocentric_facing,
    heading_of,
    point_of,
    rotation_to_face,
    signed_angle_xy,
    wrap180,
    wrap360,
    yaw_difference,
)
from perspecta.world.samplers import SamplingError, sample_clutter
from perspecta.world.samplers.common import Rect, any_overlap, visibility
from perspecta.world.scene import Scene

TASK = "inter_object_direction"
# Rigid objects whose heading is one crisp axis (a car's body, a motorcycle's). Bicycles are
# left out: at street distance their front (fork, handlebar) is not legible (a blind check
# misread a child's bike). People and animals are left out since round 5: their heading
# is a compromise between body parts (a careful judge measured a man's shoulders at -45
# degrees and his shoes at -57), so the +-5 degree "no rotation" bin and a 45-degree class
# both missed on careful reads. They stay as distractors.
# Since round 6, vehicles only. A chair, armchair or sofa seen from behind hides where its
# seat points behind its backrest (a careful judge read a tablet-arm chair's "no rotation
# needed" turn 20 degrees off). Holding seats to a front-half view instead rejected most
# layouts of some classes (3x DORI's CPU) and made a seat's share depend on the class; a
# seat as the granular A (a position only) beside a car at street distance rarely met the
# size contract (one pinned chair-car pair: 23 s of layouts). The pool is the same in every
# class, so the category says nothing of the answer.
PAIR_CATEGORIES = ("car", "motorcycle")
DISTRACTORS = ("person", "car", "bicycle", "dog", "table", "plant")
# frontless partners of a CBD pair: real-asset categories first (tables, plants and
# barrels are all frontless in the catalogue), plus the primitives' categories (balls,
# cylinders: procedural or real)
# boxes are left out since round 5: a careful judge gave a plain box a front (its long side)
# instead of answering "Cannot be determined"; four flat sides invite an assumed front
PAIR_CONTROLS = ("table", "plant", "barrel", "ball", "cylinder")
COARSE: list[tuple[str, str, float, float]] = [  # key, text, |yaw difference| range
    ("same", "They face the same direction", 0.0, 22.5),
    ("partially_same", "They face partially the same direction", 22.5, 67.5),
    ("perpendicular", "They face perpendicular directions", 67.5, 112.5),
    ("partially_opposite", "They face partially opposite directions", 112.5, 157.5),
    ("opposite", "They face opposite directions", 157.5, 180.0),
]
# signed extent of each coarse bin of |yaw difference| (same and opposite straddle 0 / 180)
COARSE_SIGNED = [(-22.5, 22.5), (22.5, 67.5), (67.5, 112.5), (112.5, 157.5), (157.5, 202.5)]
# dir, text, |r| range, signed extent of the bin (none: -5..5, either: 135..225)
GRANULAR: list[tuple[str, str, float, float, float, float]] = [
    ("none", "No rotation needed", 0.0, 5.0, -5.0, 5.0),
    ("cw", "0 to 45 degrees clockwise", 5.0, 45.0, 5.0, 45.0),
    ("cw", "46 to 90 degrees clockwise", 45.0, 90.0, 45.0, 90.0),
    ("cw", "91 to 135 degrees clockwise", 90.0, 135.0, 90.0, 135.0),
    ("ccw", "0 to 45 degrees counter-clockwise", 5.0, 45.0, 5.0, 45.0),
    ("ccw", "46 to 90 degrees counter-clockwise", 45.0, 90.0, 45.0, 90.0),
    ("ccw", "91 to 135 degrees counter-clockwise", 90.0, 135.0, 90.0, 135.0),
    ("either", "About 180 degrees, either direction", 135.0, 180.0, 135.0, 225.0),
]
# layouts tried per draw: the apparent margins reject many (a granular "no rotation" needs
# B within a few degrees of the camera's axis); 160 ran out once in 120 units (seed 92911)
MAX_TRIES = 400
# stricter than the default floor: a street object's front (a face, headlights) must be
# legible, which 600 px do not guarantee for a person seen from afar. Raised after the
# round-2 careful judge misread granular facings of street pairs: both must be large.
CONTRACT = readability.Contract(min_pixels=3000, min_box_side=90, min_box_short=40)
# a tagged object seen within this many degrees of straight on or straight from behind
# shows no side, so its exact heading is a guess (a near-frontal person turned 15 degrees
# looks frontal): such layouts are redrawn. Three-quarter and profile views remain.
MIN_OBLIQUE_DEG = 20.0
# longer side every object (distractors included) must span for the layout to be drawn
DISTRACTOR_MIN_SIDE = 60.0
# camera elevation over the street (the sampler's default is 10-30): from higher up the
# two headings and the line between the objects are less foreshortened on the ground,
# which is what the granular turn is read from
STREET_ELEVATION = (20.0, 40.0)
# projected box area per required visible pixel, below which the render is skipped
BOX_PER_PIXEL = 2.0
# Share of a narrow granular bin (<= NARROW_BIN_DEG) the drawn turn keeps from its edges:
# more than DORI's single-object third, because the answer combines two readings from one
# oblique view (B's heading and the direction to A), whose errors add. The round-4
# careful judge misread a horse's three-quarter turn 15.6 degrees inside an edge.
PAIR_MARGIN_FRAC = 0.4
# Share of its bin the perspective-uncompensated reading keeps from the edges: two chairs
# with equal headings 22 degrees apart in azimuth show sides 21 degrees apart, and the
# round-4 careful judge read them as 45 degrees apart; round-5 judges read "no rotation
# needed" turns where the uncompensated reading put them, 10-15 degrees off.
APPARENT_MARGIN_FRAC = 0.2
# fresh draws of B's heading on one layout before the layout is redrawn: a wide azimuth
# gap leaves no heading that keeps both readings inside the bin
YAW_DRAWS = 6


def coarse_text(a_obj: Any, b_obj: Any) -> str:
    d = abs(yaw_difference(a_obj, b_obj))
    return next(text for _, text, lo, hi in COARSE if lo <= d <= hi)


def granular_text(r: float) -> str:
    m = abs(r)
    direction = "cw" if r < 0 else "ccw"
    for dr, text, lo, hi, _, _ in GRANULAR:
        if lo <= m <= hi and (dr in ("none", "either") or dr == direction) and not (dr != "none" and m <= 5.0):
            return text
    raise ValueError(f"rotation {r} fits no bin")


def decidable(a_obj: Any, b_obj: Any, granularity: str) -> bool:
    """Whether the question has an answer: the coarse one compares both fronts; the granular
    one turns B's front toward A's *position*, so only B needs a front (A may be a table)."""
    return bool(a_obj.has_front and b_obj.has_front) if granularity == "coarse" else bool(b_obj.has_front)


def answer_text(scene: Scene, granularity: str) -> str:
    a, b = scene.object("obj0"), scene.object("obj1")
    if not decidable(a, b, granularity):
        return CANNOT_DETERMINE
    return coarse_text(a, b) if granularity == "coarse" else granular_text(rotation_to_face(b, a))


def derive(item: Item, scenes: dict[str, Scene]) -> str:
    return item.label_of(answer_text(scenes[item.scene_id], item.granularity or ""))


CONTEXT = (
    "Objects A and B are marked by red letter tags beside them, each with a line that ends on its object. Judge them from their own points of view, not from the "
    "camera's: an object's front is the side with its defining features (a face, headlights, the seat "
    "opening of a chair), and it faces the way that front points. Clockwise means clockwise as seen from "
    "above, looking down on the scene."
)
STEPS = [
    "Find Objects A and B and the features that mark their fronts",
    "Imagine standing at each object, looking the way its front points",
    "Work out how the two directions relate",
    "Compare with each option",
    "Pick the best option",
    "Explain the visual evidence behind your choice",
]


def pair_margin_frac(ctx: TaskContext, granularity: str, bin_width: float) -> float:
    """DORI's bin margin (:func:`margin_frac`); the granular turn's narrow bins keep
    :data:`PAIR_MARGIN_FRAC` (two readings whose errors add)."""
    frac = margin_frac(ctx, bin_width)
    return max(frac, PAIR_MARGIN_FRAC) if granularity == "granular" and bin_width <= NARROW_BIN_DEG else frac


def _target_yaw_b(ctx: TaskContext, scene: Scene, granularity: str, k: int) -> float:
    a, b = scene.object("obj0"), scene.object("obj1")
    sign = 1.0 if ctx.rng.random() < 0.5 else -1.0
    if granularity == "coarse":
        lo, hi = COARSE_SIGNED[k]
        frac = pair_margin_frac(ctx, granularity, hi - lo)
        d = abs(float(ctx.rng.uniform(lo + frac * (hi - lo) + 0.2, hi - frac * (hi - lo) - 0.2)))
        return float(wrap360(a.pose.yaw + sign * d))
    dr, _, _, _, lo, hi = GRANULAR[k]
    frac = pair_margin_frac(ctx, granularity, hi - lo)
    m = abs(float(ctx.rng.uniform(lo + frac * (hi - lo) + 0.2, hi - frac * (hi - lo) - 0.2)))
    m = 360.0 - m if m > 180.0 else m
    r = -m if dr == "cw" else m if dr == "ccw" else sign * m
    # front heading + r = heading of the direction B -> A
    return float(wrap360(heading_of(point_of(a) - point_of(b)) - r))


def _coarse_bin(d: float) -> tuple[float, float]:
    """Signed extent of the coarse class holding ``|yaw difference|`` ``d``."""
    return next(sb for sb, (_, _, lo, hi) in zip(COARSE_SIGNED, COARSE) if lo <= d <= hi)


def _margin(scene: Scene, granularity: str) -> dict[str, float]:
    """Distance of the realised answer from its bin's edges (readability record)."""
    a, b = scene.object("obj0"), scene.object("obj1")
    if granularity == "coarse":
        d = abs(yaw_difference(a, b))
        return signed_bin_margin(d, *_coarse_bin(d))
    r = rotation_to_face(b, a)
    text = granular_text(r)
    _, _, _, _, lo, hi = next(g for g in GRANULAR if g[1] == text)
    return signed_bin_margin(abs(r), lo, hi)


def line_of_sight_azimuth(scene: Scene, object_id: str) -> float:
    """Ground-plane angle (degrees, CCW positive) from the camera's axis to the line of sight
    to the object: what an uncompensated reading adds to the object's heading."""
    cam = scene.camera("main")
    return signed_angle_xy(cam.forward(), point_of(scene.object(object_id)) - np.asarray(cam.position, dtype=float))


def apparent_margin(scene: Scene, granularity: str = "coarse") -> dict[str, float]:
    """Margin of the answer as read without compensating perspective, scored against the
    true answer's bin (negative when the reading falls in another bin). Coarse: each
    heading taken against the camera's axis, ``yaw_difference - (az_B - az_A)``. Granular:
    B's heading so taken, the direction to A as it lies on the ground, ``r + az_B`` — the
    round-5 judges read three "no rotation needed" turns (|r| <= 1) as 5-15 degrees off,
    each time where this reading put them (-10, -14, -15)."""
    a, b = scene.object("obj0"), scene.object("obj1")
    if granularity == "coarse":
        lo, hi = _coarse_bin(abs(yaw_difference(a, b)))
        seen = yaw_difference(a, b) - line_of_sight_azimuth(scene, "obj1") + line_of_sight_azimuth(scene, "obj0")
        return signed_bin_margin(abs(float(wrap180(seen))), lo, hi)
    r = rotation_to_face(b, a)
    dr, _, _, _, lo, hi = next(g for g in GRANULAR if g[1] == granular_text(r))
    seen = float(wrap180(r + line_of_sight_azimuth(scene, "obj1")))
    if dr == "none":
        return signed_bin_margin(seen, lo, hi)
    if dr == "either":
        return signed_bin_margin(abs(seen), lo, hi)
    return signed_bin_margin(-seen if dr == "cw" else seen, lo, hi)  # the wrong way reads negative


def _apparent_ok(scene: Scene, granularity: str) -> bool:
    m = apparent_margin(scene, granularity)
    return m["deg"] >= APPARENT_MARGIN_FRAC * m["bin_width"]


def _oblique(scene: Scene, object_id: str) -> bool:
    """Whether a tagged object with a front shows a side (not within MIN_OBLIQUE_DEG of a
    straight-on or straight-from-behind view); frontless objects always pass."""
    obj = scene.object(object_id)
    if not obj.has_front:
        return True
    f = abs(float(egocentric_facing(obj, scene.camera("main"))))
    return min(f, 180.0 - f) >= MIN_OBLIQUE_DEG


def heading_used(object_id: str, granularity: str) -> bool:
    """Whether the question reads this tagged object's heading: both in the coarse
    comparison, only B's in the granular turn (A there is a position)."""
    return granularity == "coarse" or object_id == "obj1"


def _view(scene: Scene, object_id: str, granularity: str) -> dict[str, Any]:
    """Readability mark of a tagged object (:mod:`perspecta.suites.dori.marks`); when the
    question reads its heading, its facing and, for a seat under a backrest, the limit
    :data:`marks.MAX_SEAT_FACING_DEG` (round 6), which ``validate`` re-checks. Generation
    never tags a seat (:data:`PAIR_CATEGORIES`); the record keeps an edited or imported
    item honest."""
    obj = scene.object(object_id)
    cam = scene.camera("main")
    view = view_record(obj.asset_id, cam, obj.has_front)
    if obj.has_front and heading_used(object_id, granularity):
        view.update(seat_view(obj.asset_id, obj.category, float(egocentric_facing(obj, cam))))
    return view


def _pair_categories(ctx: TaskContext, granularity: str, k: int | None) -> list[str]:
    """Categories of A and B for one layout try, from :data:`PAIR_CATEGORIES` in every
    class; only a frontless partner of a "Cannot be determined" pair depends on the class
    (that is the skill asked). Drawn afresh for every try: pinned for a whole unit, a pair
    its class hardly allows searched hundreds of layouts (2.5x DORI's generation CPU),
    and the categories still leaned on the class through the fallback (docs/suites.md)."""
    cats = [PAIR_CATEGORIES[int(ctx.rng.integers(len(PAIR_CATEGORIES)))] for _ in range(2)]
    if k is None:  # a frontless object where it makes the question undecidable: B for the granular turn
        side = int(ctx.rng.integers(2))
        cats[side if granularity == "coarse" else 1] = PAIR_CONTROLS[int(ctx.rng.integers(len(PAIR_CONTROLS)))]
    return cats


def _scene(ctx: TaskContext, granularity: str, k: int | None, n_extra: int, n_same: int) -> Scene:
    for attempt in range(MAX_TRIES):
        cats = _pair_categories(ctx, granularity, k)
        extra = [DISTRACTORS[int(ctx.rng.integers(len(DISTRACTORS)))] for _ in range(n_extra)]
        # untagged look-alikes of a tagged object (same category), so the tag, not the
        # category, must pick out A and B — the paper's scenes hold several cars or people
        fronted = [c for c in cats if c in PAIR_CATEGORIES]
        extra += [fronted[int(ctx.rng.integers(len(fronted)))] for _ in range(n_same)]
        try:
            scene = sample_clutter(ctx.rng, ctx.library, scene_id=f"{ctx.scene_prefix}-{granularity}", seed=ctx.seed,
                                   style="street", object_categories=cats + extra,
                                   image_size=image_size(ctx), min_visible=0.8,
                                   min_pixels=DISTRACTOR_MIN_SIDE, elevation=STREET_ELEVATION)
        except SamplingError:
            continue
        if k is not None:
            b = scene.object("obj1")
            others = [Rect.of(o) for o in scene.objects if o.id != "obj1"]
            for _ in range(YAW_DRAWS):
                b.pose.yaw = round(_target_yaw_b(ctx, scene, granularity, k), 6)
                if _apparent_ok(scene, granularity):
                    break
            else:
                continue
            if any_overlap(Rect.of(b), others, 0.2):
                continue
        vis = visibility(scene.objects, scene.camera("main"), margin=2.0)
        if not (all(v.inside for v in vis) and min(v.visible_fraction for v in vis[:2]) >= 0.85):
            continue
        if not all(_oblique(scene, oid) for oid in ("obj0", "obj1")):
            continue
        if any(readability.problems({"view": _view(scene, oid, granularity)}) for oid in ("obj0", "obj1")):
            continue  # a tub chair from above, a rounded retro car: its front would not read
        # the projected boxes bound the visible ones: a pair too small here fails the
        # contract after rendering, so skip the render
        sides = [sorted((v.box[2] - v.box[0], v.box[3] - v.box[1])) for v in vis[:2]]
        # an object covers at most about half its box (people, chairs, bikes much less)
        if all(lo >= CONTRACT.min_box_short and hi >= CONTRACT.min_box_side
               and lo * hi >= BOX_PER_PIXEL * CONTRACT.min_pixels for lo, hi in sides):
            return scene
    raise SamplingError(f"{ctx.scene_prefix}: no valid two-object layout after {MAX_TRIES} tries")


def _one(ctx: TaskContext, granularity: str) -> Item:
    coarse = granularity == "coarse"
    k = balanced_class(ctx, len(COARSE) if coarse else len(GRANULAR), granularity)
    n_extra = int(knob(ctx, "n_street_distractors"))
    n_same = int(knob(ctx, "n_same_category"))
    return resample(ctx, lambda attempt: _attempt(ctx, granularity, k, n_extra, n_same, attempt),
                    f"{TASK} {granularity}")


def _attempt(ctx: TaskContext, granularity: str, k: int | None, n_extra: int, n_same: int,
             attempt: int) -> Item:
    coarse = granularity == "coarse"
    try:
        scene = _scene(ctx, granularity, k, n_extra, n_same)
    except SamplingError as e:  # a layout search that ran out is one unreadable draw: more layouts
        raise Unreadable(str(e)) from e
    backdrop = realistic_backdrop(ctx, scene)
    # most rejected draws fail on pixel counts alone (measured: every one of 10 in 18
    # draws): the masks decide them before a colour pass, and the colour render of a
    # kept draw reuses those masks' id pass
    masks = ctx.renderer.render(scene, scene.camera("main"), color=False).instance
    mask_problems = [p for idx, name in ((0, "A"), (1, "B"))
                     for p in readability.object_problems(name, readability.object_facts(masks, idx + 1), CONTRACT)]
    if mask_problems:
        raise Unreadable("; ".join(mask_problems))
    result = ctx.renderer.render(scene, scene.camera("main"))
    rgb = result.rgb
    taken: list[tuple[int, int, int, int]] = []
    luminance = {name: dark_check(result.rgb, result.instance, idx) for idx, name in ((0, "A"), (1, "B"))}
    for idx, name in ((0, "A"), (1, "B")):
        rgb = draw_tag(rgb, result.instance, idx, name, taken)
    marks = readability.overlay_mask(result.rgb, rgb)
    objects = {name: {**readability.object_facts(result.instance, idx + 1, marks), "luminance": luminance[name]}
               for idx, name in ((0, "A"), (1, "B"))}
    contract = CONTRACT
    if k is not None:
        bm = _margin(scene, granularity)
        contract = dataclasses.replace(contract, min_bin_margin_frac=pair_margin_frac(ctx, granularity, bm["bin_width"]),
                                       min_apparent_margin_frac=APPARENT_MARGIN_FRAC)
    record: dict[str, Any] = {"objects": objects, "contract": contract.to_dict(),
                              "view": {name: _view(scene, oid, granularity) for name, oid in (("A", "obj0"), ("B", "obj1"))}}
    if k is not None:
        record["bin_margin"] = bm
        record["apparent_bin_margin"] = apparent_margin(scene, granularity)
    check_readable(record)
    ctx.add_scene(scene)
    image = ctx.save_image(rgb, granularity)
    a, b = scene.object("obj0"), scene.object("obj1")
    if coarse:
        values: dict[str, Any] = {text: key for key, text, _, _ in COARSE}
        question = "Decide how the directions that Objects A and B face relate to each other."
        examples = ["Two cars parked one behind the other in the same lane: the same direction.",
                    "Two cars parked nose to nose: opposite directions.",
                    "A car facing north and a person facing east: perpendicular directions."]
    else:
        values = {text: {"dir": dr, "range": [lo, hi]} for dr, text, lo, hi, _, _ in GRANULAR}
        question = ("Determine how far, and which way (clockwise or counter-clockwise, seen from above), Object B "
                    "must turn about its vertical axis so that its front faces Object A.")
        examples = ["B already looks straight at A: no rotation needed.",
                    "A is a little to B's right: 0 to 45 degrees clockwise.",
                    "A is directly to B's left: 46 to 90 degrees counter-clockwise.",
                    "A is right behind B: about 180 degrees, either direction."]
    values[CANNOT_DETERMINE] = None
    truth = answer_text(scene, granularity)
    options = shuffled(ctx, list(values), truth, granularity)
    meta = {
        "category": a.category,
        "category_b": b.category,
        "categories": [o.category for o in scene.objects],
        "asset_id": a.asset_id,
        "asset_id_b": b.asset_id,
        "source": a.asset_id.split(":", 1)[0],
        "source_b": b.asset_id.split(":", 1)[0],
        "object_ids": ["obj0", "obj1"],
        "has_front": decidable(a, b, granularity),  # the fronts the question needs
        "n_distractors": len(scene.objects) - 2,
        "scene_kind": scene.kind,
        "yaw_a": a.pose.yaw,
        "yaw_b": b.pose.yaw,
        "yaw_difference": round(yaw_difference(a, b), 4) if a.has_front and b.has_front else None,
        "rotation_b_to_face_a": round(rotation_to_face(b, a), 4) if b.has_front else None,
        "tags": [list(t) for t in taken],
        "frame_of_reference": "object",
        "camera": scene.camera("main").metadata(),
        "readability": record,
        "backdrop": backdrop,
        "attempts": attempt + 1,
    }
    return make_item(ctx, task=TASK, granularity=granularity, scene=scene, images=[image],
                     question=question, context=CONTEXT, steps=STEPS, examples=examples,
                     options=options, answer_text=truth, values=values, metadata=meta)


@task("dori", TASK, derive=derive, description="Relative orientation of two marked objects, from their own view")
def generate(ctx: TaskContext) -> list[Item]:
    return [_one(ctx, "coarse"), _one(ctx, "granular")]


__all__ = ["CONTROL_CATEGORIES", "derive", "generate"]
