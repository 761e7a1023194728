"""SpinBench object-relation grounding and dynamic translation on a cluttered tabletop.

Grounding: one image, two named objects (each the only one of its category in the
scene, each at least 0.8 visible by instance masks), a left/right, front/behind or
near/far question from the viewer's perspective. Each unit yields the paper's four
controlled forms in one group: base ("which object is on the left?"), symmetric (the
relation flipped, so the answer flips), syntactic ("is X left or right of Y?") and
both. Pairs are kept only when the relation clears a margin, so no answer is a tie.

Translation: two frames from a fixed camera; one named object moved left/right or
toward/away from the viewer by a clearly visible shift.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from perspecta.dataset.item import Item, label_of_text
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
    image_size,
    make_item,
    moved_copy,
    pick,
    placed_text_options,
    render_checked,
    render_frame,
    resampled,
    save_results,
    share_draw,
    text_options_block,
)
from perspecta.world import oracle, orientation
from perspecta.world.samplers import (
    SamplingError,
    resolve_category,
    sample_clutter,
    visibility,
)
from perspecta.world.samplers.clutter import TABLETOP_SIZES, on_support, placed_objects, tabletop_assets
from perspecta.world.readability import DEFAULT_CONTRACT
from perspecta.world.scene import Camera, Scene, SceneObject

GROUNDING, TRANSLATION = "relation_grounding", "dynamic_translation"
RELATIONS = ("left_right", "front_behind", "near_far")
MIN_VISIBLE = 0.8  # the paper's visibility filter, measured on instance masks
PIXEL_MARGIN = 12.0 / 256  # left/right: projected centres at least this share of the image width apart
VIEWER = "From the viewer's perspective"

# relation -> (pole A, pole B, "which" phrasings per pole, "is" phrasings, "is" option texts)
WHICH = {
    "left": ("{v}, which object is on the left?", "{v}, which of the two objects appears further to the left in the image?"),
    "right": ("{v}, which object is on the right?", "{v}, which of the two objects appears further to the right in the image?"),
    "front": ("{v}, which object is in front?", "{v}, which of the two objects is nearer to the front of the scene?"),
    "behind": ("{v}, which object is behind?", "{v}, which of the two objects is further back in the scene?"),
    "closer": ("{v}, which object is closer to the viewer?", "{v}, which of the two objects is nearer to the camera?"),
    "farther": ("{v}, which object is farther from the viewer?", "{v}, which of the two objects is further from the camera?"),
}
IS_FORM = {
    "left_right": (("{v}, is the {x} on the left or on the right of the {y}?",
                    "{v}, is the {x} positioned to the left or to the right of the {y} in the image?"),
                   ("left", "right")),
    "front_behind": (("{v}, is the {x} in front of or behind the {y}?",
                      "{v}, is the {x} positioned in front of the {y} or behind it?"),
                     ("in front of", "behind")),
    "near_far": (("{v}, is the {x} closer to or farther from the viewer than the {y}?",
                  "{v}, compared with the {y}, is the {x} closer to the camera or farther from it?"),
                 ("closer", "farther")),
}
POLES = {"left_right": ("left", "right"), "front_behind": ("front", "behind"), "near_far": ("closer", "farther")}


def depth_margin(a: SceneObject, b: SceneObject) -> float:
    """Metres two tabletop objects must differ in depth/distance: a quarter of their summed
    largest footprint sides, at least 5 cm."""
    return max(0.05, 0.25 * (max(a.size[0], a.size[1]) + max(b.size[0], b.size[1])))


def relation(kind: str, a: SceneObject, b: SceneObject, camera: Camera, scale: float = 1.0,
             contact: bool = True) -> str | None:
    """Pole of ``a`` relative to ``b`` ("left"/"right", "front"/"behind", "closer"/"farther"),
    or None when it is within the margins (times ``scale``, the ``relation_margin_scale``
    knob). Depth relations also require front/behind (optical-axis depth) and near/far
    (distance) to agree, and with ``contact`` the same pole, by the same margin, from the
    points where the objects stand (:func:`_depth_pole` of their bottom centres).

    Why ``contact``: the key is measured between object centres, but a person judges depth
    on a table by where things stand. A tall lamp beside a box on the same row of the table
    has its centre much nearer a raised camera than the box's; a round-6 careful judge saw
    the two feet on one image row and could not tell which was nearer. Datasets made before
    the rule record no ``contact_checked`` and are re-derived without it."""
    if kind == "left_right":
        return oracle.left_right(a, b, camera, pixel_margin=scale * PIXEL_MARGIN * camera.width)
    m = scale * depth_margin(a, b)
    pole = _depth_pole(kind, a, b, camera, m)
    if pole is None or (contact and _depth_pole(kind, a.position, b.position, camera, m) != pole):
        return None
    return pole


def _depth_pole(kind: str, a: oracle.PointLike, b: oracle.PointLike, camera: Camera, margin: float) -> str | None:
    """front/behind or closer/farther of two points (or object centres) when optical-axis
    depth and distance agree beyond ``margin``; None otherwise."""
    fb = oracle.front_behind(a, b, camera, margin=margin)
    nf = oracle.near_far(a, b, camera, margin=margin)
    if fb is None or nf is None or (fb == "front") != (nf == "closer"):
        return None
    return fb if kind == "front_behind" else nf


def _flip(kind: str, pole: str) -> str:
    a, b = POLES[kind]
    return b if pole == a else a


@dataclass(frozen=True, kw_only=True)
class GroundingFacts(Facts):
    """What every variant of a grounding unit asks about (one block of its metadata)."""

    margin_scale: float = 1.0  # absent from datasets made before the knob existed
    relation: str
    names: dict[str, str]  # object id -> the name the question uses
    contact_checked: bool = False  # depth also agrees where the objects stand (round 6; absent before)


@dataclass(frozen=True)
class GroundingPairFacts(Facts):
    """One variant's question: "is x <pole> of y" (``asked`` None) or "which is <asked>"."""

    form: str
    x_id: str
    y_id: str
    asked: str | None
    anchor_id: str | None = None  # frame_switch form: left/right in this object's own frame


def derive_grounding(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    g, q = GroundingFacts.from_item(item), GroundingPairFacts.from_item(item)
    f = frames_of(item)[0]
    x, y = scene.object(q.x_id), scene.object(q.y_id)
    if q.anchor_id is not None:  # frame_switch: x's side in the anchor's own frame
        rel = orientation.side_in_frame(scene.object(q.anchor_id), x.center(), margin=FRAME_SIDE_MARGIN)
    else:
        rel = relation(g.relation, x, y, scene.camera(f["camera"]), g.margin_scale, contact=g.contact_checked)
    if rel is None:
        raise ValueError(f"item {item.id}: {g.relation} of {x.id} vs {y.id} is within the margin")
    if q.form == "is":
        return item.label_of(IS_FORM[g.relation][1][POLES[g.relation].index(rel)])
    winner = x if rel == q.asked else y  # x has pole `rel`, so y has the other pole
    return item.label_of(g.names[winner.id])


def unique_objects(scene: Scene) -> list[SceneObject]:
    """Placed objects that are the only one of their category: the ones a question can
    name without ambiguity (the table they stand on is never named)."""
    placed = placed_objects(scene)
    counts: dict[str, int] = {}
    for o in placed:
        counts[o.category] = counts.get(o.category, 0) + 1
    return [o for o in placed if counts[o.category] == 1]


FRONTED_TABLETOP = ("teddy_bear", "laptop")  # tabletop things whose pose reads at a glance (a thin desk lamp does not)


def tabletop(ctx: TaskContext, tries: int = 8, *, with_front: bool = False, max_objects: int = 8) -> Scene:
    """A cluttered table (retrying the sampler). Its number of objects and how many of
    them repeat a category (look-alike distractors, never named) are difficulty knobs;
    ``with_front`` makes obj0 a tabletop thing with a front so orientation questions
    have a subject; ``max_objects`` caps the clutter for tasks whose target must stay large
    and unoccluded in every candidate (tabletop mental rotation)."""
    n_min = int(ctx.knob("n_objects_min", {"easy": 3, "standard": 5, "hard": 6}))
    n_max = int(ctx.knob("n_objects_max", {"easy": 4, "standard": 8, "hard": 8}))
    n_same = int(ctx.knob("n_same_category", {"easy": 0, "standard": 2, "hard": 3}))
    pool = [c for c in (resolve_category(ctx.library, f) for f in TABLETOP_SIZES) if c and tabletop_assets(ctx.library, c)]
    fronted = [c for c in pool if c in FRONTED_TABLETOP
               and any(a.has_front and not a.symmetric for a in tabletop_assets(ctx.library, c))]
    last: Exception | None = None
    for _ in range(tries):
        n = min(len(pool), max_objects, int(ctx.rng.integers(max(3, min(n_min, n_max)), max(3, n_max) + 1)))
        first = fronted[int(ctx.rng.integers(len(fronted)))] if with_front else pool[int(ctx.rng.integers(len(pool)))]
        cats = [first]
        while len(cats) < n:
            rest = [c for c in pool if c not in cats]
            cats.append(rest[int(ctx.rng.integers(len(rest)))])
        # look-alikes: repeat categories of objects other than obj0 (same-category distractors)
        for k in range(min(n_same, n - 2)):
            cats[n - 1 - k] = cats[1 + int(ctx.rng.integers(n - 2 - k))]
        try:
            scene = sample_clutter(ctx.rng, ctx.library, scene_id=ctx.scene_prefix, seed=ctx.seed, style="tabletop",
                                   object_categories=cats, image_size=image_size(ctx), min_visible=0.6,
                                   min_pixels=18.0 * image_size(ctx) / 256)
        except SamplingError as e:
            last = e
            continue
        if with_front:
            o = scene.objects[0]
            if not (o.has_front and not o.symmetric):
                continue
        return scene
    raise Unreadable(f"{ctx.scene_prefix}: no tabletop layout after {tries} tries: {last}")


MIN_NAMED_PX = 26.0 / 256  # a named object's projected box spans at least this share of the image width


def named_size_ok(scene: Scene, objs: list[SceneObject], camera: str = "main", min_px: float = MIN_NAMED_PX) -> bool:
    """A cheap pre-filter before rendering: the projected bbox of every named object is at
    least ``min_px`` of the image width and comfortably above the readability contract's
    box side (bboxes enclose the mesh, so the mask box is smaller)."""
    cam = scene.camera(camera)
    floor = max(min_px * cam.width, 1.4 * DEFAULT_CONTRACT.min_box_side)
    vis = {v.object_id: v for v in visibility(placed_objects(scene), cam)}
    return all(max(vis[o.id].box[2] - vis[o.id].box[0], vis[o.id].box[3] - vis[o.id].box[1]) >= floor
               for o in objs)


def masked_visible(ctx: TaskContext, scene: Scene, camera: str, targets: list[str]) -> dict[str, float]:
    ids = [o.id for o in scene.objects]
    full = render_frame(ctx, scene, frame(camera, ids), measure=True)
    out = {}
    for t in targets:
        solo = render_frame(ctx, scene, frame(camera, [t]), measure=True)
        out[t] = float(oracle.visible_fraction(full.instance, solo.instance > 0, ids.index(t)))
    return out


def near_miss_pairs(pairs: list[tuple[SceneObject, SceneObject]], kind: str, camera: Camera,
                    scale: float) -> list[tuple[SceneObject, SceneObject]]:
    """The pairs that clear the margin but not twice it: the decisive gap is there but
    small, so it takes a second look."""
    return [(a, b) for a, b in pairs if relation(kind, a, b, camera, 2.0 * scale) is None]


GROUNDING_TRIES = 12
SIZE_CUE_RATIO = 1.3  # one object's projected box area over the other's for the size cue to count


def size_cue(kind: str, a: SceneObject, b: SceneObject, camera: Camera, scale: float = 1.0) -> str:
    """Whether image size points at the true depth order of a pair: "agrees" when the
    nearer object's projected box is the bigger (by SIZE_CUE_RATIO), "conflict" when the
    farther one's is (the salient cue misleads; the ground-contact row and the table decide),
    "neutral" otherwise or for left/right."""
    rel = relation(kind, a, b, camera, scale)
    if kind == "left_right" or rel is None:
        return "neutral"
    boxes = {v.object_id: v.box for v in visibility([a, b], camera)}
    area = {k: max(1e-6, (bx[2] - bx[0]) * (bx[3] - bx[1])) for k, bx in boxes.items()}
    near, far = (a, b) if rel in ("front", "closer") else (b, a)
    r = area[near.id] / area[far.id]
    return "agrees" if r >= SIZE_CUE_RATIO else "conflict" if r <= 1.0 / SIZE_CUE_RATIO else "neutral"


def _grounding_scene(ctx: TaskContext, kind: str, scale: float,
                     cue: str | None = None) -> tuple[Scene, SceneObject, SceneObject, dict[str, float]]:
    # share of units asked about a near-miss pair; such a unit redraws its table until one
    # exists (the last few tries accept any clear pair rather than fail)
    share = float(ctx.knob("near_miss_share", {"easy": 0.0, "standard": 0.8, "hard": 1.0}))
    want_tight = ctx.rng.random() < share
    for attempt in range(GROUNDING_TRIES):
        scene = tabletop(ctx)
        cam = scene.camera("main")
        cands = unique_objects(scene)
        pairs = [(a, b) for i, a in enumerate(cands) for b in cands[i + 1:] if relation(kind, a, b, cam, scale) is not None]
        if want_tight and attempt < GROUNDING_TRIES - 3:
            pairs = near_miss_pairs(pairs, kind, cam, scale)
        if cue is not None and attempt < GROUNDING_TRIES - 1:  # the size cue the unit's form asks for
            pairs = [(a, b) for a, b in pairs if size_cue(kind, a, b, cam, scale) == cue]
        if not pairs:
            continue
        a, b = pairs[int(ctx.rng.integers(len(pairs)))]
        if not named_size_ok(scene, [a, b]):
            continue
        vis = masked_visible(ctx, scene, "main", [a.id, b.id])
        if min(vis.values()) >= MIN_VISIBLE:
            if ctx.rng.random() < 0.5:
                a, b = b, a
            return scene, a, b, vis
    raise Unreadable(f"{ctx.scene_prefix}: no tabletop with a clear {kind} pair")


@task(SUITE, GROUNDING, derive=derive_grounding,
      description="Left/right, front/behind, near/far of two named tabletop objects, with symmetric and syntactic variants")
def generate_grounding(ctx: TaskContext) -> list[Item]:
    st = Strata(ctx)
    kind, form, base_pole = grounding_plan(ctx, st)
    # margin a relation must clear (1 = 12 px at 256 sideways, a quarter of the footprints in depth)
    scale = float(ctx.knob("relation_margin_scale", {"easy": 2.0, "standard": 0.8, "hard": 0.6}))
    return resampled(ctx, lambda: _grounding_items(ctx, st, kind, base_pole, scale, form))


def grounding_plan(ctx: TaskContext, st: Strata) -> tuple[str, str, str]:
    """A grounding unit's relation, size-cue form and asked pole, balanced in that nesting:
    within each depth relation the forms split by ``size_conflict_share`` (knob: on that
    share the farther object is the bigger one in the image, so size misleads; on the rest
    the nearer one is) and the poles split evenly within each form."""
    kind = st.draw("relation", RELATIONS)
    conflict = float(ctx.knob("size_conflict_share", {"easy": 0.0, "standard": 0.5, "hard": 0.5}))
    # left/right asked in a fronted object's own frame while it faces the camera, so the
    # viewer-frame (glance) answer is the distractor
    switch = float(ctx.knob("frame_switch_share", {"easy": 0.0, "standard": 0.5, "hard": 0.5}))
    form = "unconstrained"
    if kind != "left_right" and conflict > 0:
        form = "size_" + share_draw(st, "form", conflict, "conflict", "agrees")
    if kind == "left_right" and switch > 0:
        form = share_draw(st, "form", switch, "frame_switch", "unconstrained")
    return kind, form, st.draw("pole", POLES[kind])


FRAME_FACING_DEG = 30.0  # frame_switch: the anchor faces the camera within this (ground plane)
FRAME_SIDE_MARGIN = 30.0  # ... and each named object is at least this far off its straight-ahead/behind line
FRAME_Q = ("From the {a}'s own point of view (its own left and right, as it faces), which object is on its {p}?",
           "Take the {a}'s perspective, facing the way it faces: which of the two objects is on its {p}-hand side?")
FRAME_IS = ("From the {a}'s own point of view (its own left and right, as it faces), is the {x} on its left or on its right?",
            "Take the {a}'s perspective, facing the way it faces: is the {x} on its left-hand or its right-hand side?")


def _frame_scene(ctx: TaskContext, scale: float) -> tuple[Scene, SceneObject, SceneObject, SceneObject, dict[str, float]]:
    """A table whose fronted obj0 (the anchor) faces the camera, with one named object on
    each of its own sides, each seen on the opposite side of it by the viewer."""
    for _ in range(4 * GROUNDING_TRIES):
        scene = tabletop(ctx, with_front=True)
        cam = scene.camera("main")
        anchor = scene.objects[0]
        uniq = unique_objects(scene)
        if anchor not in uniq:
            continue
        face = oracle.camera_azimuth(cam) + float(ctx.rng.uniform(-20.0, 20.0))
        turned = moved_copy(anchor, anchor.id, yaw=face)
        if not on_support(scene, turned, skip=[anchor.id], gap=0.01):
            continue
        anchor.pose = turned.pose
        if abs(orientation.egocentric_facing(anchor, cam)) > FRAME_FACING_DEG:
            continue
        sides: dict[str, list[SceneObject]] = {"left": [], "right": []}
        for o in uniq:
            if o.id == anchor.id:
                continue
            own = orientation.side_in_frame(anchor, o.center(), margin=FRAME_SIDE_MARGIN)
            seen = relation("left_right", o, anchor, cam, scale)
            if own is not None and seen is not None and own != seen:
                sides[own].append(o)
        if not sides["left"] or not sides["right"]:
            continue
        x = sides["left"][int(ctx.rng.integers(len(sides["left"])))]
        y = sides["right"][int(ctx.rng.integers(len(sides["right"])))]
        if not named_size_ok(scene, [anchor, x, y]):
            continue
        vis = masked_visible(ctx, scene, "main", [anchor.id, x.id, y.id])
        if min(vis.values()) >= MIN_VISIBLE:
            if ctx.rng.random() < 0.5:
                x, y = y, x
            return scene, anchor, x, y, vis
    raise Unreadable(f"{ctx.scene_prefix}: no table with a fronted object facing the camera between two named objects")


def _frame_items(ctx: TaskContext, st: Strata, base_pole: str, scale: float) -> list[Item]:
    """The frame_switch form's four variants (which/is, symmetric), as the paper's."""
    scene, anchor, x, y, vis = _frame_scene(ctx, scale)
    spec = frame("main", [o.id for o in scene.objects])
    names = {o.id: display_name(o.category) for o in (anchor, x, y)}
    results, readability = render_checked(ctx, scene, [spec], {names[o.id]: (o.id, [0]) for o in (anchor, x, y)})
    ctx.add_scene(scene)
    image = save_results(ctx, results, ["view"])[0]
    cam = scene.camera("main")
    own = {o.id: orientation.side_in_frame(anchor, o.center(), margin=FRAME_SIDE_MARGIN) for o in (x, y)}
    seen = {o.id: relation("left_right", o, anchor, cam, scale) for o in (x, y)}
    meta_common: dict[str, Any] = {
        **GroundingFacts(margin_scale=scale, relation="left_right", names=names).to_metadata(between={
            "margin_scale": {"family": "object_relation_grounding",
                             "paper_subtype": "infinigen_spatial_relation_grounding_left_right"},
            "relation": {"frame_of_reference": "object"}}),
        "visible_fraction": {k: round(v, 4) for k, v in vis.items()},
        "cue_form": "frame_switch", "size_cue": None,
        "anchor_facing_deg": round(orientation.egocentric_facing(anchor, cam), 2),
        "n_objects": len(placed_objects(scene)),
        "categories": [o.category for o in placed_objects(scene)],
        "readability": readability,
        **FramesFacts(frames=[spec]).to_metadata(),
        "camera": cam.metadata(),
    }
    items = []
    for variant in ("base", "symmetric", "syntactic", "symmetric+syntactic"):
        sym, syn = "symmetric" in variant, "syntactic" in variant
        if syn:
            xx, yy = (y, x) if sym else (x, y)
            q = pick(ctx, FRAME_IS).format(a=names[anchor.id], x=names[xx.id])
            want, glance = own[xx.id], seen[xx.id]
            options = placed_text_options(ctx, st.branch(variant), ["left", "right"], want)  # type: ignore[arg-type]
            pair = GroundingPairFacts(form="is", x_id=xx.id, y_id=yy.id, asked=None, anchor_id=anchor.id)
        else:
            asked = _flip("left_right", base_pole) if sym else base_pole
            q = pick(ctx, FRAME_Q).format(a=names[anchor.id], p=asked)
            winner, loser = (x, y) if own[x.id] == asked else (y, x)
            want, glance = names[winner.id], names[loser.id]
            options = placed_text_options(ctx, st.branch(variant), [names[x.id], names[y.id]], want)
            pair = GroundingPairFacts(form="which", x_id=x.id, y_id=y.id, asked=asked, anchor_id=anchor.id)
        question = f"<image>\n{q}\n{text_options_block(options)}\n{end_prompt(len(options))}"
        items.append(make_item(ctx, variant=variant, suffix="", group_suffix="", subtype="grounding_left_right",
                               question=question, images=[image], options=options, answer=label_of_text(options, want),
                               scene=scene, metadata={**meta_common, **pair.to_metadata(), "symmetric": sym,
                                                      "syntactic": syn, "viewer_frame_answer": glance}))
    return items


def _grounding_items(ctx: TaskContext, st: Strata, kind: str, base_pole: str, scale: float,
                     form: str = "unconstrained") -> list[Item]:
    if form == "frame_switch":
        return _frame_items(ctx, st, base_pole, scale)
    cue = form.removeprefix("size_") if form.startswith("size_") else None
    scene, x, y, vis = _grounding_scene(ctx, kind, scale, cue)
    spec = frame("main", [o.id for o in scene.objects])
    names = {x.id: display_name(x.category), y.id: display_name(y.category)}
    results, readability = render_checked(ctx, scene, [spec], {names[x.id]: (x.id, [0]), names[y.id]: (y.id, [0])})
    ctx.add_scene(scene)
    image = save_results(ctx, results, ["view"])[0]
    cam = scene.camera("main")
    rel = relation(kind, x, y, cam, scale)
    assert rel is not None
    meta_common: dict[str, Any] = {
        **GroundingFacts(margin_scale=scale, relation=kind, names=names, contact_checked=True).to_metadata(between={
            "margin_scale": {
                "family": "object_relation_grounding",
                "paper_subtype": {"left_right": "infinigen_spatial_relation_grounding_left_right",
                                  "front_behind": "infinigen_spatial_relationship_front_behind",
                                  "near_far": "infinigen_spatial_relation_grounding_far_near"}[kind]},
            "relation": {"frame_of_reference": "viewer"}}),
        "visible_fraction": {k: round(v, 4) for k, v in vis.items()},
        "cue_form": form, "size_cue": size_cue(kind, x, y, cam, scale),  # requested form, measured cue
        "n_objects": len(placed_objects(scene)),
        "categories": [o.category for o in placed_objects(scene)],
        "readability": readability,
        **FramesFacts(frames=[spec]).to_metadata(),
        "camera": cam.metadata(),
    }
    items = []
    for variant in ("base", "symmetric", "syntactic", "symmetric+syntactic"):
        sym, syn = "symmetric" in variant, "syntactic" in variant
        if syn:
            xx, yy = (y, x) if sym else (x, y)
            templates, texts = IS_FORM[kind]
            q = pick(ctx, templates).format(v=VIEWER, x=names[xx.id], y=names[yy.id])
            r = relation(kind, xx, yy, cam, scale)
            want = texts[POLES[kind].index(r)]  # type: ignore[arg-type]
            options = placed_text_options(ctx, st.branch(variant), list(texts), want)
            pair = GroundingPairFacts(form="is", x_id=xx.id, y_id=yy.id, asked=None)
        else:
            asked = _flip(kind, base_pole) if sym else base_pole
            q = pick(ctx, WHICH[asked]).format(v=VIEWER)
            winner = x if rel == asked else y
            want = names[winner.id]
            options = placed_text_options(ctx, st.branch(variant), [names[x.id], names[y.id]], want)
            pair = GroundingPairFacts(form="which", x_id=x.id, y_id=y.id, asked=asked)
        question = f"<image>\n{q}\n{text_options_block(options)}\n{end_prompt(len(options))}"
        items.append(make_item(ctx, variant=variant, suffix="", group_suffix="", subtype=f"grounding_{kind}",
                               question=question, images=[image], options=options, answer=label_of_text(options, want),
                               scene=scene, metadata={**meta_common, **pair.to_metadata(), "symmetric": sym, "syntactic": syn}))
    return items


# --------------------------------------------------------------------------- translation

MOVES = {"left_right": ("left", "right"), "front_back": ("toward", "away")}
MOVE_TEXT = {
    "left": "to the left", "right": "to the right",
    "toward": "toward the viewer (to the front)", "away": "away from the viewer (to the back)",
}
MOVE_PHRASES = (
    "The two images show the same scene before and after one object was moved. From the viewer's perspective, in which direction did the {x} move?",
    "Between the first and the second image the {x} was shifted while the camera stayed still. Which way did it move, as seen by the viewer?",
    "Compare the two frames taken by a fixed camera. How was the {x} moved from the viewer's point of view?",
)
# Phrasing when the camera may follow the moved object (form "camera_follow"); used for every
# unit of a preset that has that form, so the wording does not tell the forms apart.
FOLLOW_PHRASES = (
    "The two images show the same table before and after one object was moved; the camera may also have moved between them. Relative to the table, in which direction (as the first image's viewer sees it) did the {x} move?",
    "Between the first and the second image the {x} was shifted on the table, and the camera may have moved too. Judged against the table and the other objects, which way did the {x} move, from the first view's point of view?",
)
MIN_SHIFT_PX = 20.0 / 256  # share of the image width a sideways move must cover
FOLLOW_CAMERA = "follow"


@dataclass(frozen=True)
class TranslationFacts(Facts):
    """Which object moved: its id before (``object_id``) and after (``moved_id``) the move."""

    object_id: str
    moved_id: str


def derive_translation(item: Item, scenes: dict[str, Scene]) -> str:
    scene = scenes[item.scene_id]
    f0, f1 = frames_of(item)
    facts = TranslationFacts.from_item(item)
    start, end = scene.object(facts.object_id), scene.object(facts.moved_id)
    if f0["camera"] != f1["camera"]:  # camera_follow form: the second camera moved with the object
        c0, c1 = scene.camera(f0["camera"]), scene.camera(f1["camera"])
        shift = np.asarray(end.position, dtype=float) - np.asarray(start.position, dtype=float)
        for a, b in ((c0.position, c1.position), (c0.look_at, c1.look_at)):
            if not np.allclose(np.asarray(b, dtype=float) - np.asarray(a, dtype=float), shift, atol=1e-3):
                raise ValueError(f"item {item.id}: the second camera is not the first one moved with the object")
    d = oracle.motion_direction(start, end, scene.camera(f0["camera"]), min_distance=0.05, dominance=2.0)
    if d not in MOVE_TEXT:
        raise ValueError(f"item {item.id}: motion {d!r} is not a clear left/right/toward/away shift")
    return item.label_of(MOVE_TEXT[d])


def follow_camera(cam: Camera, obj: SceneObject, moved: SceneObject) -> Camera:
    """``cam`` translated by the object's move: the object keeps its place in the image and
    the table and everything else slide the other way (the camera_follow cue conflict)."""
    d = np.asarray(moved.position, dtype=float) - np.asarray(obj.position, dtype=float)
    return dataclasses.replace(cam, name=FOLLOW_CAMERA,
                               position=tuple(round(float(v), 5) for v in np.asarray(cam.position) + d),  # type: ignore[arg-type]
                               look_at=tuple(round(float(v), 5) for v in np.asarray(cam.look_at) + d))  # type: ignore[arg-type]


def _try_move(ctx: TaskContext, scene: Scene, obj: SceneObject, direction: str, ratio: float,
              follow: bool = False) -> SceneObject | None:
    cam = scene.camera("main")
    rh, fh = oracle.ground_axes(cam)
    axis = {"right": rh, "left": -rh, "away": fh, "toward": -fh}[direction]
    span = max(obj.size[0], obj.size[1])
    dist = ratio * float(ctx.rng.uniform(0.9, 1.1)) * max(span, 0.1)
    moved = moved_copy(obj, f"{obj.id}@t1", position=obj.position + dist * axis)
    if not on_support(scene, moved, skip=[obj.id]):
        return None
    after = [o for o in placed_objects(scene) if o.id != obj.id] + [moved]
    vis = visibility(after, cam, margin=2.0)
    if follow:  # everything must stay in the moved camera's frame too
        vis += visibility(after, follow_camera(cam, obj, moved), margin=2.0)
    if not all(v.inside and v.visible_fraction >= 0.6 for v in vis):
        return None
    uv, _ = cam.project(np.stack([obj.center(), moved.center()]))
    if direction in ("left", "right") and abs(uv[1, 0] - uv[0, 0]) < MIN_SHIFT_PX * cam.width:
        return None
    if oracle.motion_direction(obj, moved, cam, min_distance=0.05, dominance=2.0) != direction:
        return None
    return moved


@task(SUITE, TRANSLATION, derive=derive_translation,
      description="Two frames: did a named tabletop object move left/right or toward/away from the viewer")
def generate_translation(ctx: TaskContext) -> list[Item]:
    st = Strata(ctx)
    # cue conflict: on this share of units the camera moved with the object, so the object
    # stays put in the image while the table and the other objects slide the other way
    # (drawn first, so the move's kind and direction are balanced within each form)
    follow_share = float(ctx.knob("camera_follow_share", {"easy": 0.0, "standard": 0.5, "hard": 0.5}))
    form = share_draw(st, "form", follow_share, "camera_follow", "fixed_camera")
    kind = st.draw("kind", tuple(MOVES))
    direction = st.draw("direction", MOVES[kind])
    # shift as a multiple of the object's footprint; small shifts among look-alikes are harder
    ratio = float(ctx.knob("shift_span_ratio", {"easy": 1.8, "standard": 0.7, "hard": 0.5}))
    return resampled(ctx, lambda: _translation_items(ctx, st, kind, direction, ratio, form, follow_share > 0))


def _translation_items(ctx: TaskContext, st: Strata, kind: str, direction: str, ratio: float,
                       form: str = "fixed_camera", may_follow: bool = False) -> list[Item]:
    follow = form == "camera_follow"
    for _ in range(80):
        scene = tabletop(ctx)
        cands = unique_objects(scene)
        ctx.rng.shuffle(cands)  # type: ignore[arg-type]
        moved = None
        for obj in cands:
            if not named_size_ok(scene, [obj]):
                continue
            moved = _try_move(ctx, scene, obj, direction, ratio, follow)
            if moved is not None:
                break
        if moved is not None:
            break
    else:
        raise Unreadable(f"{ctx.scene_prefix}: could not move any readable object {direction} "
                           f"(at {image_size(ctx)} px; tabletop tasks need about 384 px or more)")
    scene.objects.append(moved)
    ids0 = [o.id for o in scene.objects if o.id != moved.id]
    ids1 = [moved.id if i == obj.id else i for i in ids0]
    cam1 = "main"
    if follow:
        scene.cameras.append(follow_camera(scene.camera("main"), obj, moved))
        cam1 = FOLLOW_CAMERA
    frames = [frame("main", ids0), frame(cam1, ids1)]
    noun = display_name(obj.category)
    results, readability = render_checked(ctx, scene, frames, {noun: (obj.id, [0, 1])})
    ctx.add_scene(scene)
    images = save_results(ctx, results, ["frame0", "frame1"])
    options = placed_text_options(ctx, st.branch("answer"), [MOVE_TEXT[d] for d in MOVES[kind]], MOVE_TEXT[direction])
    q = pick(ctx, FOLLOW_PHRASES if may_follow else MOVE_PHRASES).format(x=noun)
    uv, _ = scene.camera("main").project(np.stack([obj.center()]))
    uv1, _ = scene.camera(cam1).project(np.stack([moved.center()]))
    question = f"<image><image>\n{q}\n{text_options_block(options)}\n{end_prompt(2)}"
    meta = {
        "family": "dynamic_translation",
        "paper_subtype": f"infinigen_spatial_relationship_dynamic_{kind}",
        "frame_of_reference": "viewer",
        **TranslationFacts(object_id=obj.id, moved_id=moved.id).to_metadata(),
        "category": obj.category,
        "direction": direction,
        "shift_m": round(float(np.linalg.norm(moved.position - obj.position)), 4),
        "form": form,
        # the named object's image shift (px, x then y): ~0 under camera_follow, the salient cue misleads
        "image_shift_px": [round(float(uv1[0, 0] - uv[0, 0]), 2), round(float(uv1[0, 1] - uv[0, 1]), 2)],
        "readability": readability,
        **FramesFacts(frames=frames).to_metadata(),
        "camera": scene.camera("main").metadata(),
    }
    return [make_item(ctx, variant="base", suffix="", group_suffix="", subtype=f"translation_{kind}",
                      question=question, images=images, options=options,
                      answer=label_of_text(options, MOVE_TEXT[direction]), scene=scene, metadata=meta)]
