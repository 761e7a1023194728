"""LRR absolute position: Pos, Pos-C (3x3 composite) and Pos-S (sequence of three).

A view shows a target of the asked category whose projected bounding box lies in one
of five image regions: a quadrant (the whole box inside it, clear of both midlines) or
the centre. The region is chosen first, a pixel inside it is cast onto the ground and
the object is stood there; the oracle's :func:`~perspecta.world.oracle.image_region`
then confirms the region and ``derive`` recomputes it from the stored scene. At
``standard`` two more objects of the same category (``n_same_category``) stand alone
in other regions — never in the asked one — and the camera is rolled (``camera_roll_deg``),
so "is there a car top-left?" needs the region checked, not just a car spotted.

The category and the true region(s) are matched strata (both units of a pair share
them), so neither says whether the stated region is right; the target's visible pixels
and box are measured on the render and recorded under ``readability``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.render.overlay import grid_composite
from perspecta.suites.context import TaskContext
from perspecta.suites.facts import Facts
from perspecta.suites.lrr.common import (
    FRAME_LABELS,
    SUITE,
    VIEW_SIZE,
    composite_size,
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
    ground_point,
    noun,
    raised_camera,
    retry,
    target_clear,
)
from perspecta.suites.registry import task
from perspecta.world.oracle import (
    horizontal_fov,
    image_region,
    projected_bbox,
)
from perspecta.world.scene import Camera, Scene, SceneObject

REGIONS = ("top-left", "top-right", "bottom-left", "bottom-right", "centre")
PHRASES = {
    "top-left": "in the top-left part", "top-right": "in the top-right part",
    "bottom-left": "in the bottom-left part", "bottom-right": "in the bottom-right part",
    "centre": "in the centre",
}  # fmt: skip
MARGIN = 0.1  # image_region: quadrant centres at least 10% of the side from each midline
CENTRE_HALF = 1.0 / 6.0
# a box centre this close (share of the side) to the centre square's edge is neither
# "centre" nor a quadrant to a person: 3% = 15 px at 512
CENTRE_MARGIN = 0.03
# said in every question: without it a reader may take "top-right" for a corner cell of
# a 3x3 split (a careful blind judge did, on a Pos-C grid that is itself 3x3)
REGION_GUIDE = ('(The centre is the middle third of a picture in both directions; the top-left, top-right, '
                'bottom-left and bottom-right parts are the rest of the quarters its two midlines cut.)')
TARGET_CATEGORIES = ("car", "person", "bicycle", "motorcycle", "figure", "bench", "dog")


def region_of(scene: Scene, object_id: str = "target") -> str:
    """The stored object's image region in the scene's camera; raises if it is ambiguous."""
    r = image_region(scene.object(object_id), scene.camera("main"), margin=MARGIN, centre_half=CENTRE_HALF, centre_margin=CENTRE_MARGIN)
    if r is None:
        raise ValueError(f"scene {scene.scene_id}: {object_id} straddles an image midline")
    return r


def regions_of(scene: Scene) -> set[str]:
    """Every region that holds an object of the asked category: the target's and those
    of its same-category distractors (ids ``same*``)."""
    return {region_of(scene, o.id) for o in scene.objects if o.id == "target" or o.id.startswith("same")}


def _clean_box(obj: SceneObject, cam: Camera, region: str) -> bool:
    """Stricter than image_region: a quadrant object's whole box stays 2% clear of both
    midlines; any object spans 4-40% of the side."""
    box = projected_bbox(obj, cam)
    if box is None:
        return False
    w, h = cam.width, cam.height
    side = max((box[2] - box[0]) / w, (box[3] - box[1]) / h)
    if not 0.04 <= side <= 0.4:
        return False
    if region == "centre":
        return True
    m = 0.02
    left, top = region.endswith("left"), region.startswith("top")
    ok_u = box[2] < w * (0.5 - m) if left else box[0] > w * (0.5 + m)
    ok_v = box[3] < h * (0.5 - m) if top else box[1] > h * (0.5 + m)
    return ok_u and ok_v


def _pixel_in(rng: np.random.Generator, region: str, size: int) -> tuple[float, float]:
    if region == "centre":
        return float(rng.uniform(0.44, 0.56) * size), float(rng.uniform(0.44, 0.56) * size)
    fu = rng.uniform(0.15, 0.35) if region.endswith("left") else rng.uniform(0.65, 0.85)
    fv = rng.uniform(0.15, 0.35) if region.startswith("top") else rng.uniform(0.65, 0.85)
    return float(fu * size), float(fv * size)


def _knobs(ctx: TaskContext) -> tuple[int, float, int, float]:
    """(street entities around the target, camera height factor: higher = smaller target,
    same-category distractors, largest camera roll in degrees)."""
    n = int(ctx.knob("n_distractors", {"easy": 3, "standard": 9, "hard": 11}))
    height = float(ctx.knob("camera_height_factor", {"easy": 1.0, "standard": 1.4, "hard": 1.5}))
    n_same = int(ctx.knob("n_same_category", {"easy": 0, "standard": 2, "hard": 3}))
    roll = float(ctx.knob("camera_roll_deg", {"easy": 0.0, "standard": 12.0, "hard": 20.0}))
    if not 0 <= n_same <= 3:
        raise ValueError(f"n_same_category must lie in 0..3 (the regions besides the true and asked ones), "
                         f"got {n_same}")
    return n, height, n_same, roll


def _same_category(ctx: TaskContext, lay: Layout, cam: Camera, category: str, regions: list[str]) -> bool:
    """Stand one more ``category`` object (ids ``same0``, ``same1``, ...) cleanly inside
    each of ``regions``; False if one finds no spot (the caller draws a new layout)."""
    rng = ctx.rng
    size = cam.width
    for i, region in enumerate(regions):
        inst = lay.instance(category)
        for _ in range(12):
            u, v = _pixel_in(rng, region, size)
            p = ground_point(cam, u, v, z=float(inst.size[2]) / 2)
            obj = None if p is None else lay.place(f"same{i}", inst, p[0], p[1], float(rng.uniform(0, 360)))
            if obj is None:
                continue
            shown = image_region(obj, cam, margin=MARGIN, centre_half=CENTRE_HALF, centre_margin=CENTRE_MARGIN)
            if shown == region and _clean_box(obj, cam, region):
                break
            lay.objects.pop()
            lay.rects.pop()
        else:
            return False
    return True


def position_view(ctx: TaskContext, scene_id: str, size: int, category: str,
                  region: str, asked: str) -> tuple[Scene, np.ndarray, dict]:
    """A street seen from above-ish with one ``category`` object (the target) in
    ``region`` and ``n_same_category`` more of its kind, each alone in a region that is
    neither ``region`` nor ``asked``: the asked region holds the target or nothing of
    the category, and how many there are says nothing about the answer.
    (scene, rgb, readability facts of the target)."""
    rng = ctx.rng
    n_entities, height, n_same, roll = _knobs(ctx)
    # a Pos-C cell is a third of the composite (341 px at 1024): bring the camera closer so
    # the target keeps the pixels the readability contract asks for
    height *= min(1.0, max(0.6, size / VIEW_SIZE))

    def attempt() -> tuple[Scene, np.ndarray] | None:
        lay = Layout(rng, ctx.library)
        inst = lay.instance(category)
        # big things, and things near the camera (bottom of the view), are seen from higher up
        k = max(0.55, float(max(inst.size)) / 2.0) * {"centre": 1.3}.get(region, 1.7 if region.startswith("bottom") else 1.0)
        cam = raised_camera(rng, size, height=(3.5 * k * height, 6.0 * k * height), pitch=(30.0, 45.0),
                            roll_max=roll)
        u, v = _pixel_in(rng, region, size)
        p = ground_point(cam, u, v, z=float(inst.size[2]) / 2)
        if p is None:
            return None
        lay.place("target", inst, p[0], p[1], float(rng.uniform(0, 360)))
        free = [r for r in REGIONS if r not in (region, asked)]
        others = [free[j] for j in sorted(rng.choice(len(free), size=n_same, replace=False).tolist())]
        if not _same_category(ctx, lay, cam, category, others):
            return None
        half = horizontal_fov(cam) / 2
        lay.entities(cam, n_entities, bearings=(-half, half), distances=(3.0 * k, 22.0 * k), exclude=(category,))
        lay.blocks(cam, int(rng.integers(2, 5)), bearings=(-half - 10, half + 10), distances=(20.0 * k, 34.0 * k))
        scene = lay.scene(scene_id, ctx.seed, [cam])
        if image_region(scene.object("target"), cam, margin=MARGIN, centre_half=CENTRE_HALF, centre_margin=CENTRE_MARGIN) != region:
            return None
        if not _clean_box(scene.object("target"), cam, region) or not target_clear(scene, cam, min_visible=0.9):
            return None
        # the distractors are mostly in view, but the pixel contract binds the target only:
        # the answer never rests on a distractor (none stands in the asked region), and a
        # far one in a Pos-C cell could not meet it
        if not all(target_clear(scene, cam, f"same{i}", min_visible=0.5) for i in range(n_same)):
            return None
        drawn = render_readable(ctx, scene, cam, {noun(category): "target"})
        return None if drawn is None else (scene, *drawn)

    # most attempts fail on cheap geometry before any render; a far target in a Pos-C cell
    # (a third of the composite) meets the pixel contract rarely: 80 attempts were too few
    # for a motorcycle at top-left on one seed (41216) at standard
    return retry(attempt, 300, f"lrr position view ({category} at {region})")


def _other_region(rng: np.random.Generator, region: str) -> str:
    others = [r for r in REGIONS if r != region]
    return others[int(rng.integers(len(others)))]


def _pick_category(ctx: TaskContext) -> str:
    return stratum(ctx, "category", TARGET_CATEGORIES)


# ----------------------------------------------------------------------------- Pos


@dataclass(frozen=True)
class RegionFacts(Facts):
    """The image region a Pos question names (the scene decides whether the object is there)."""

    asked_region: str


def derive_pos(item: Item, scenes: dict[str, Scene]) -> str:
    return yes_no(RegionFacts.from_item(item).asked_region in regions_of(scenes[item.scene_id]))


@task(SUITE, "pos", derive=derive_pos, description="Is object X in a given region (quadrant/centre) of the image?")
def generate_pos(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    yes = wants_yes(ctx)
    category = _pick_category(ctx)
    region = stratum(ctx, "region", REGIONS)
    asked = region if yes else _other_region(rng, region)
    scene, rgb, facts = position_view(ctx, ctx.scene_prefix, view_size(ctx), category, region, asked)
    ctx.add_scene(scene)
    image = ctx.save_image(rgb, "view")
    body = f"{IMAGE_MARKER}\nIs there a {noun(category)} {PHRASES[asked]} of the image? {REGION_GUIDE}"
    meta = {"category": category, "asset_id": scene.object("target").asset_id, "true_region": region,
            **RegionFacts(asked_region=asked).to_metadata(), "camera": scene.camera("main").metadata(), "readability": {"objects": facts}}
    return [yesno_item(ctx, variant="base", body=body, images=[image], answer=yes, scene_id=scene.scene_id,
                       metadata=meta)]


# ------------------------------------------------------------------- Pos-C / Pos-S


@dataclass(frozen=True)
class RegionsFacts(Facts):
    """Pos-C / Pos-S: the three views in order and the region each statement names."""

    scene_ids: list[str]
    asked_regions: list[str]


def derive_multi(item: Item, scenes: dict[str, Scene]) -> str:
    facts = RegionsFacts.from_item(item)
    ids, asked = facts.scene_ids, facts.asked_regions
    if len(ids) != len(asked):
        raise ValueError(f"item {item.id}: {len(ids)} scenes but {len(asked)} asked regions")
    return yes_no(all(a in regions_of(scenes[s]) for s, a in zip(ids, asked)))


def _three_views(ctx: TaskContext, size: int) -> tuple[str, list[Scene], list[np.ndarray], list[str], list[str], dict]:
    """Three unrelated views of the same category; (category, scenes, rgbs, true, asked,
    readability record)."""
    rng = ctx.rng
    yes = wants_yes(ctx)
    category = _pick_category(ctx)
    true = [stratum(ctx, f"region{k}", REGIONS) for k in range(3)]
    asked = list(true)
    if not yes:  # one, two or all three statements wrong, balanced among the negatives
        n_wrong = stratum(ctx, "n_wrong", (1, 2, 3), per_answer=True)
        for k in sorted(rng.choice(3, size=n_wrong, replace=False).tolist()):
            asked[k] = _other_region(rng, true[k])
    scenes, rgbs, facts = [], [], {}
    for k, region in enumerate(true):
        scene, rgb, f = position_view(ctx, f"{ctx.scene_prefix}-{FRAME_LABELS[k]}", size, category, region,
                                      asked[k])
        ctx.add_scene(scene)
        scenes.append(scene)
        rgbs.append(rgb)
        facts.update({f"{name}_{FRAME_LABELS[k]}": v for name, v in f.items()})
    return category, scenes, rgbs, true, asked, {"objects": facts}


def _statement(category: str, asked: list[str], where: str) -> str:
    """"there is a car in the top-left part of picture A, a car in ..." (a picture may
    hold several of the category: each statement is about the region, not one object)."""
    parts = [f"a {noun(category)} {PHRASES[a]} of {where} {FRAME_LABELS[k]}" for k, a in enumerate(asked)]
    return f"there is {parts[0]}, {parts[1]}, and {parts[2]}"


@task(SUITE, "pos_c", derive=derive_multi,
      description="Three labelled sub-images in a 3x3 black grid: is X in the stated region of each?")
def generate_pos_c(ctx: TaskContext) -> list[Item]:
    rng = ctx.rng
    total = composite_size(ctx)
    cell = total // 3
    category, scenes, rgbs, true, asked, readability = _three_views(ctx, cell)
    cells_idx = sorted(rng.choice(9, size=3, replace=False).tolist())
    order = rng.permutation(3).tolist()  # which sub-image (A/B/C) goes in which chosen cell
    cells = [(cells_idx[order[k]] // 3, cells_idx[order[k]] % 3) for k in range(3)]
    grid = grid_composite(rgbs, cells, grid=(3, 3), cell_size=cell, labels=list(FRAME_LABELS[:3]))
    canvas = np.zeros((total, total, 3), dtype=np.uint8)
    canvas[: grid.shape[0], : grid.shape[1]] = grid
    image = ctx.save_image(canvas, "grid")
    body = (
        f"{IMAGE_MARKER}\nThis picture is a 3x3 grid. Three of its cells hold separate pictures tagged A, B and C "
        "in their top-left corners; the other cells are black. Positions below refer to each tagged picture on "
        f"its own. Going through the pictures in the order A, B, C: is it true that {_statement(category, asked, 'picture')}? "
        f"Say yes only if all three statements are right. {REGION_GUIDE}"
    )
    meta = {"category": category, **RegionsFacts(scene_ids=[s.scene_id for s in scenes], asked_regions=asked).to_metadata(
                between={"scene_ids": {"true_regions": true}}), "cells": [list(c) for c in cells], "cell_size": cell, "readability": readability}
    return [yesno_item(ctx, variant="base", body=body, images=[image], answer=wants_yes(ctx),
                       scene_id=scenes[0].scene_id, metadata=meta)]


@task(SUITE, "pos_s", derive=derive_multi,
      description="A sequence of three unrelated images: is X in the stated region of each?")
def generate_pos_s(ctx: TaskContext) -> list[Item]:
    category, scenes, rgbs, true, asked, readability = _three_views(ctx, view_size(ctx))
    images = [ctx.save_image(rgb, FRAME_LABELS[k]) for k, rgb in enumerate(rgbs)]
    body = (
        f"{labelled_images(3)}\nThese three images are unrelated to each other. Going through them in the order "
        f"A, B, C: is it true that {_statement(category, asked, 'image')}? "
        f"Say yes only if all three statements are right. {REGION_GUIDE}"
    )
    meta = {"category": category, **RegionsFacts(scene_ids=[s.scene_id for s in scenes], asked_regions=asked).to_metadata(
                between={"scene_ids": {"true_regions": true}}), "readability": readability}
    return [yesno_item(ctx, variant="base", body=body, images=images, answer=wants_yes(ctx),
                       scene_id=scenes[0].scene_id, metadata=meta)]
