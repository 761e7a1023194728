"""Several objects on a ground plane: a tabletop of small things or a street scene.

Used by multi-object tasks (DORI relative orientation, SpinBench object-relation
grounding and perspective taking, LRR depth). Placement is rejection sampling with two
constraints: footprints keep a gap from each other, and from the sampled camera every
object lies inside the frame, spans at least ``min_pixels`` and is not mostly hidden
behind nearer objects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from perspecta import timing
from perspecta.world.samplers.common import (
    Instance,
    Rect,
    SamplingError,
    any_overlap,
    assets_in,
    fit_distance,
    instantiate,
    jitter_color,
    make_object,
    orbit_camera,
    renumber,
    resolve_category,
    sample_sun,
    visibility,
)
from perspecta.world.scene import RGB, Camera, Ground, Scene, SceneObject

if TYPE_CHECKING:
    from perspecta.assets.library import AssetLibrary

Style = Literal["tabletop", "street"]

TABLETOP_CATEGORIES = (
    "mug", "ball", "box", "cylinder", "chair", "table", "teddy_bear", "bottle", "bowl",
    "vase", "book", "lamp", "plant", "car", "dog", "person",
)  # fmt: skip
# buses and trucks (10+ m) would shrink people to a few pixels at 256 px: ask for them explicitly
STREET_CATEGORIES = ("car", "person", "bicycle", "dog", "motorcycle", "van", "horse")

TABLETOP_COLORS: tuple[RGB, ...] = (
    (0.55, 0.38, 0.24),
    (0.66, 0.50, 0.34),
    (0.42, 0.30, 0.20),
    (0.78, 0.72, 0.62),
    (0.85, 0.85, 0.83),
    (0.35, 0.36, 0.38),
)
STREET_COLORS: tuple[RGB, ...] = ((0.32, 0.32, 0.33), (0.40, 0.40, 0.40), (0.28, 0.29, 0.31), (0.45, 0.43, 0.40))
BACKDROPS: tuple[RGB, ...] = ((0.86, 0.84, 0.80), (0.80, 0.86, 0.95), (0.90, 0.90, 0.92), (0.78, 0.83, 0.90))

# Per style: (largest object dimension range for shrinking or None, camera elevation range,
# fov range, gap between footprints, default spread of the placement area).
_STYLE = {
    "tabletop": dict(max_dim=(0.10, 0.30), elevation=(25.0, 55.0), fov=(35.0, 50.0), gap=0.02, spread=2.5),
    "street": dict(max_dim=None, elevation=(10.0, 30.0), fov=(45.0, 60.0), gap=0.3, spread=2.0),
}


def _style_categories(
    library: AssetLibrary, style: Style, categories: Sequence[str] | None, sources: Sequence[str] | None
) -> list[str]:
    if categories is not None:
        out = []
        for c in categories:
            r = resolve_category(library, c, sources)
            if r is None:
                raise ValueError(f"category {c!r} has no assets in the library (sources={sources})")
            out.append(r)
        return out
    defaults = TABLETOP_CATEGORIES if style == "tabletop" else STREET_CATEGORIES
    found = []
    for c in defaults:
        r = resolve_category(library, c, sources)
        if r is not None and r not in found:
            found.append(r)
    if not found:
        raise ValueError(f"the library has none of the {style} categories {defaults}")
    return found


@timing.timed("sample")
def sample_clutter(
    rng: np.random.Generator,
    library: AssetLibrary,
    *,
    scene_id: str,
    seed: int,
    n_objects: int | tuple[int, int] = (2, 8),
    style: Style = "tabletop",
    categories: Sequence[str] | None = None,
    object_categories: Sequence[str] | None = None,
    yaws: Sequence[float | None] | None = None,
    sources: Sequence[str] | None = None,
    image_size: int | tuple[int, int] = 256,
    min_visible: float = 0.7,
    min_pixels: float = 12.0,
    area: tuple[float, float] | None = None,
    gap: float | None = None,
    recolor_prob: float = 0.0,
    max_attempts: int = 60,
) -> Scene:
    """2-8 objects on a ground plane, all inside the frame of camera "main" and each with at
    least ``min_visible`` of its projected bbox uncovered by nearer objects and a projected
    box whose longer side spans at least ``min_pixels``.

    ``categories`` restricts the pool drawn from (default: the style's categories found
    in the library); ``object_categories`` fixes the category of every object (and so
    their number); ``yaws`` fixes per-object yaws (None entries are drawn). ``area``
    (x extent, y extent in metres, centred on the origin) bounds the footprints; by
    default it grows with the objects' total footprint. Raises :class:`SamplingError`
    after ``max_attempts`` failed layouts.
    """
    if style not in _STYLE:
        raise ValueError(f"style must be 'tabletop' or 'street', got {style!r}")
    if not 0.0 <= min_visible <= 1.0:
        raise ValueError(f"min_visible must be in [0, 1], got {min_visible}")
    cfg = _STYLE[style]
    width, height = (image_size, image_size) if isinstance(image_size, int) else image_size
    gap_ = float(cfg["gap"] if gap is None else gap)

    if object_categories is not None:
        cats = []
        for c in object_categories:
            r = resolve_category(library, c, sources)
            if r is None:
                raise ValueError(f"category {c!r} has no assets in the library (sources={sources})")
            cats.append(r)
        n = len(cats)
    else:
        lo, hi = (n_objects, n_objects) if isinstance(n_objects, int) else n_objects
        if not 1 <= lo <= hi:
            raise ValueError(f"n_objects must be a positive int or (lo, hi) with lo <= hi, got {n_objects}")
        pool = _style_categories(library, style, categories, sources)
        n = int(rng.integers(lo, hi + 1))
        cats = [pool[int(rng.integers(len(pool)))] for _ in range(n)]
    if yaws is not None and len(yaws) != n:
        raise ValueError(f"yaws has {len(yaws)} entries for {n} objects")

    insts: list[Instance] = []
    for c in cats:
        choices = assets_in(library, c, sources)
        info = choices[int(rng.integers(len(choices)))]
        color = None
        if recolor_prob > 0 and rng.random() < recolor_prob:
            color = tuple(float(round(v, 4)) for v in rng.uniform(0.1, 0.9, 3))  # type: ignore[assignment]
        max_dim = cfg["max_dim"]
        insts.append(instantiate(rng, library, info, max_dim_range=max_dim, color=color))  # type: ignore[arg-type]

    if area is None:
        foot = sum(float(i.size[0] * i.size[1]) for i in insts)
        side = math.sqrt(foot * float(cfg["spread"])) + 1.5 * max(float(max(i.size[0], i.size[1])) for i in insts)
        area_ = (side, side)
    else:
        area_ = (float(area[0]), float(area[1]))
        if min(area_) <= 0:
            raise ValueError(f"area must be positive, got {area}")
    ax, ay = area_[0] / 2, area_[1] / 2

    reasons: dict[str, int] = {"placement": 0, "frame": 0, "small": 0, "occlusion": 0}
    for _attempt in range(max_attempts):
        objects: list[SceneObject] = []
        rects: list[Rect] = []
        ok = True
        for k, inst in enumerate(insts):
            fixed = None if yaws is None else yaws[k]
            for _try in range(40):
                yaw = float(rng.uniform(0.0, 360.0)) if fixed is None else float(fixed)
                x, y = float(rng.uniform(-ax, ax)), float(rng.uniform(-ay, ay))
                obj = make_object(f"obj{k}", inst, x, y, yaw)
                r = Rect.of(obj)
                if r.inside_box(-ax, ax, -ay, ay) and not any_overlap(r, rects, gap_):
                    objects.append(obj)
                    rects.append(r)
                    break
            else:
                ok = False
                break
        if not ok:
            reasons["placement"] += 1
            continue
        camera = _clutter_camera(rng, objects, cfg, width, height)
        vis = visibility(objects, camera, margin=2.0)
        if not all(v.inside for v in vis):
            reasons["frame"] += 1
            continue
        if any(max(v.box[2] - v.box[0], v.box[3] - v.box[1]) < min_pixels for v in vis):
            reasons["small"] += 1
            continue
        if any(v.visible_fraction < min_visible for v in vis):
            reasons["occlusion"] += 1
            continue
        base = TABLETOP_COLORS if style == "tabletop" else STREET_COLORS
        ground = Ground(
            size=max(40.0, 6 * float(np.linalg.norm(np.asarray(camera.position)))),
            color=jitter_color(rng, base[int(rng.integers(len(base)))]),
            sky_color=jitter_color(rng, BACKDROPS[int(rng.integers(len(BACKDROPS)))]),
        )
        return Scene(
            scene_id=scene_id,
            seed=int(seed),
            kind="clutter",
            objects=renumber(objects),
            cameras=[camera],
            light=sample_sun(rng),
            ground=ground,
        )
    raise SamplingError(
        f"sample_clutter({style}): no valid layout of {n} objects ({', '.join(cats)}) in a "
        f"{area_[0]:.2f} x {area_[1]:.2f} m area after {max_attempts} attempts "
        f"(failures: {reasons['placement']} non-overlap, {reasons['frame']} out of frame, "
        f"{reasons['small']} smaller than {min_pixels:g} px, "
        f"{reasons['occlusion']} occluded below {min_visible:.2f}); use fewer or smaller objects, "
        f"a larger area or image, or a lower min_visible / min_pixels"
    )


def _clutter_camera(
    rng: np.random.Generator, objects: list[SceneObject], cfg: dict, width: int, height: int
) -> Camera:
    """A camera at a drawn azimuth/elevation that frames every object's bbox."""
    corners = np.concatenate([o.corners() for o in objects])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    centre = (lo + hi) / 2
    radius = float(np.linalg.norm(corners - centre, axis=1).max())
    fov = float(rng.uniform(*cfg["fov"]))
    el = float(rng.uniform(*cfg["elevation"]))
    az = float(rng.uniform(0.0, 360.0))
    dist = fit_distance(radius, fov, width, height, float(rng.uniform(0.85, 0.95)))
    return orbit_camera(centre, dist, az, el, fov_y=fov, width=width, height=height, name="main")
