"""Several objects on a support: small things on a real table, or a street scene.

Used by multi-object tasks (DORI relative orientation, SpinBench object-relation
grounding and perspective taking, LRR depth). Placement is rejection sampling with two
constraints: footprints keep a gap from each other, and from the sampled camera every
object lies inside the frame, spans at least ``min_pixels`` and is not mostly hidden
behind nearer objects.

Tabletop scenes are physically plausible: a real table (scene object ``SUPPORT_ID``,
never a subject of questions) stands on the floor and carries objects that belong on a
table, each at a real-world size (``TABLETOP_SIZES``; assets outside the range, such as
floor lamps and potted trees, are not used, procedural primitives are scaled into it).
A mug is never larger than a chair because chairs are not put on tables.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from perspecta import timing
from perspecta.world.samplers.common import (
    Instance,
    is_procedural,
    Rect,
    SamplingError,
    _SAT_SLACK,
    any_overlap,
    footprint,
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
    from perspecta.assets.library import AssetInfo, AssetLibrary

Style = Literal["tabletop", "street"]

# Largest dimension (metres) of things that sit on a table, at real-world size.
TABLETOP_SIZES: dict[str, tuple[float, float]] = {
    "mug": (0.08, 0.13), "ball": (0.15, 0.25), "box": (0.12, 0.3), "cylinder": (0.08, 0.2),
    "teddy_bear": (0.2, 0.4), "lamp": (0.3, 0.55), "plant": (0.15, 0.45), "laptop": (0.3, 0.4),
    "bottle": (0.2, 0.32), "bowl": (0.12, 0.25), "vase": (0.15, 0.4), "book": (0.15, 0.3),
}  # fmt: skip
# (no microwave: seen from behind it is a plain white box, which a question naming "the box" would make ambiguous)
TABLETOP_CATEGORIES = tuple(TABLETOP_SIZES)
SUPPORT_ID = "support"
# Tables that carry tabletop scenes, with the share of their top (per side) objects may use:
# rectangles keep a rim, round tops use the inscribed square.
SUPPORT_TABLES: dict[str, float] = {
    "sh3d:blendswap-cc-by/table": 0.9, "sh3d:katorlegaz/glass-dining-table": 0.9, "sh3d:scopia/table4": 0.9,
    "proc:table": 0.9, "sh3d:blendswap-cc-0/oakTable": 0.68,
}  # fmt: skip
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
    "tabletop": dict(max_dim=None, elevation=(25.0, 55.0), fov=(35.0, 50.0), gap=0.02, spread=2.5),
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
        if r is not None and r not in found and (style != "tabletop" or tabletop_assets(library, r, sources)):
            found.append(r)
    if not found:
        raise ValueError(f"the library has none of the {style} categories {defaults}")
    return found


def tabletop_assets(library: AssetLibrary, category: str, sources: Sequence[str] | None = None) -> list[AssetInfo]:
    """Assets of ``category`` that can sit on a table at their real size (procedural
    families are scaled into the range, so they always qualify)."""
    lo, hi = TABLETOP_SIZES[category]
    return [a for a in assets_in(library, category, sources)
            if is_procedural(a) or lo * 0.8 <= max(a.size) <= hi * 1.25]


def real_size_instance(rng: np.random.Generator, library: AssetLibrary, info: AssetInfo, category: str,
                       color: RGB | None = None) -> Instance:
    """An instance at a real-world size: catalogue assets keep theirs, procedural ones
    get a largest dimension drawn from ``TABLETOP_SIZES``."""
    inst = instantiate(rng, library, info, color=color)
    if not is_procedural(info):
        return inst
    lo, hi = TABLETOP_SIZES[category]
    s = round(float(rng.uniform(lo, hi)) / float(inst.size.max()), 5)
    return dataclasses.replace(inst, scale=s, size=inst.size * s)


def support_of(scene: Scene) -> SceneObject | None:
    """The table a tabletop scene stands on (None for open-ground scenes)."""
    return next((o for o in scene.objects if o.id == SUPPORT_ID), None)


def placed_objects(scene: Scene) -> list[SceneObject]:
    """The scene's objects without its support: what questions may name."""
    return [o for o in scene.objects if o.id != SUPPORT_ID]


def support_area(support: SceneObject) -> Rect:
    """The usable part of a table top, as a footprint rectangle."""
    inset = SUPPORT_TABLES.get(support.asset_id, 0.68)
    r = Rect.of(support)
    return Rect(r.cx, r.cy, r.hx * inset, r.hy * inset, r.yaw)


def on_support(scene: Scene, obj: SceneObject, *, skip: Sequence[str] = (), gap: float = 0.02) -> bool:
    """True when ``obj`` stands inside the table top (if any) without touching the other
    placed objects (ignoring ``skip`` and later states ``id@...``)."""
    sup = support_of(scene)
    r = Rect.of(obj)
    if sup is not None:
        area = support_area(sup)
        ax, ay = area.axes()
        c = np.array([area.cx, area.cy])
        for p in r.corners():
            d = p - c
            if abs(float(d @ ax)) > area.hx + 1e-9 or abs(float(d @ ay)) > area.hy + 1e-9:
                return False
    others = [Rect.of(o) for o in placed_objects(scene) if o.id not in skip and o.id != obj.id and "@" not in o.id]
    return not any_overlap(r, others, gap)


def _sample_support(rng: np.random.Generator, library: AssetLibrary, sources: Sequence[str] | None) -> SceneObject:
    pool = [a for a in library.by_category("table") if a.asset_id in SUPPORT_TABLES
            and (sources is None or a.source in sources)]
    if not pool:
        raise ValueError("the library has none of the tables tabletop scenes stand on")
    info = pool[int(rng.integers(len(pool)))]
    inst = instantiate(rng, library, info)
    return make_object(SUPPORT_ID, inst, 0.0, 0.0, float(rng.choice([0.0, 90.0])))


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
    elevation: tuple[float, float] | None = None,
) -> Scene:
    """2-8 objects on a table top (``tabletop``) or the ground (``street``), all inside the frame of camera "main" and each with at
    least ``min_visible`` of its projected bbox uncovered by nearer objects and a projected
    box whose longer side spans at least ``min_pixels``.

    ``categories`` restricts the pool drawn from (default: the style's categories found
    in the library); ``object_categories`` fixes the category of every object (and so
    their number); ``yaws`` fixes per-object yaws (None entries are drawn). ``area``
    (x extent, y extent in metres, centred on the origin) bounds the footprints; by
    default it grows with the objects' total footprint. ``elevation`` (degrees) overrides
    the style's camera elevation range, e.g. to look down on a street so headings on the
    ground are less foreshortened. Raises :class:`SamplingError`
    after ``max_attempts`` failed layouts.
    """
    if style not in _STYLE:
        raise ValueError(f"style must be 'tabletop' or 'street', got {style!r}")
    if not 0.0 <= min_visible <= 1.0:
        raise ValueError(f"min_visible must be in [0, 1], got {min_visible}")
    cfg = _STYLE[style] if elevation is None else {**_STYLE[style], "elevation": tuple(elevation)}
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

    table = style == "tabletop"
    if table:
        off = sorted({c for c in cats if c not in TABLETOP_SIZES})
        if off:
            raise ValueError(f"{', '.join(off)} do not belong on a table; tabletop categories: {', '.join(TABLETOP_SIZES)}")
    insts: list[Instance] = []
    for c in cats:
        choices = tabletop_assets(library, c, sources) if table else assets_in(library, c, sources)
        if not choices:
            raise ValueError(f"no asset of category {c!r} has a tabletop size (sources={sources})")
        info = choices[int(rng.integers(len(choices)))]
        color = None
        if recolor_prob > 0 and rng.random() < recolor_prob:
            color = tuple(float(round(v, 4)) for v in rng.uniform(0.1, 0.9, 3))  # type: ignore[assignment]
        if table:
            insts.append(real_size_instance(rng, library, info, c, color))
        else:
            insts.append(instantiate(rng, library, info, max_dim_range=cfg["max_dim"], color=color))  # type: ignore[arg-type]

    support = _sample_support(rng, library, sources) if table else None
    top_z = float(support.size[2]) if support is not None else 0.0
    if support is not None:
        sa = support_area(support)
        ext = (sa.hx * 2, sa.hy * 2) if abs(support.pose.yaw % 180.0) < 1e-6 else (sa.hy * 2, sa.hx * 2)
        area_ = ext if area is None else (min(ext[0], float(area[0])), min(ext[1], float(area[1])))
    elif area is None:
        foot = sum(float(i.size[0] * i.size[1]) for i in insts)
        side = math.sqrt(foot * float(cfg["spread"])) + 1.5 * max(float(max(i.size[0], i.size[1])) for i in insts)
        area_ = (side, side)
    elif area is not None:
        area_ = (float(area[0]), float(area[1]))
        if min(area_) <= 0:
            raise ValueError(f"area must be positive, got {area}")
    ax, ay = area_[0] / 2, area_[1] / 2

    reasons: dict[str, int] = {"placement": 0, "frame": 0, "small": 0, "occlusion": 0}
    # draw_uniform(rng, -ax, ax) is -ax + (ax - -ax) * rng.random(), the same for y and
    # yaw: the ranges checked once, the draws inlined (placement makes ~2000 tries a call)
    span_x, span_y = ax - -ax, ay - -ay
    if not (0.0 <= span_x < math.inf and 0.0 <= span_y < math.inf):  # as draw_uniform would
        raise ValueError(f"sample_clutter: need a finite area, got {area_}")
    halves = [(float(i.size[0]) / 2, float(i.size[1]) / 2) for i in insts]
    random = rng.random
    for _attempt in range(max_attempts):
        objects: list[SceneObject] = []
        placed: list[tuple[float, float, float, float, float, float, float, Rect]] = []
        ok = True
        for k, inst in enumerate(insts):
            fixed = None if yaws is None else yaws[k]
            hx, hy = halves[k]
            for _try in range(40):
                yaw = 0.0 + 360.0 * random() if fixed is None else float(fixed)
                x = -ax + span_x * random()
                y = -ay + span_y * random()
                pose = _inside_area(hx, hy, x, y, yaw, ax, ay)
                if pose is None or _hits_placed(pose, hx, hy, placed, gap_, inst, x, y, yaw):
                    continue  # most tries fail here: the object is made for the one kept
                objects.append(make_object(f"obj{k}", inst, x, y, yaw, z=top_z))
                placed.append((pose[0], pose[1], hx, hy, pose[2], pose[3], math.hypot(hx, hy),
                               footprint(inst, x, y, yaw)))
                break
            else:
                ok = False
                break
        if not ok:
            reasons["placement"] += 1
            continue
        corners = [o.corners() for o in objects]  # framing and visibility both read them
        camera = _clutter_camera(rng, corners, cfg, width, height)
        vis = visibility(objects, camera, margin=2.0, corners=corners)
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
            objects=renumber(objects) + ([support] if support is not None else []),
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


def _inside_area(hx: float, hy: float, x: float, y: float, yaw: float, ax: float,
                 ay: float) -> tuple[float, float, float, float] | None:
    """Whether ``footprint(inst, x, y, yaw).inside_box(-ax, ax, -ay, ay)``, for ``hx, hy`` =
    ``float(inst.size[0]) / 2, float(inst.size[1]) / 2``, without making the rect: None
    when outside, else the footprint's centre and the cos and sin of its yaw.

    Why: sample_clutter makes ~2000 placement tries a call (DORI streets, SpinBench
    tables) and keeps a handful; making a frozen ``Rect`` per try and calling its methods
    was most of a try's cost. The same roundings as :func:`footprint`, the same float
    operations in the same order as ``Rect._cos_sin`` / ``_corner_floats`` /
    ``inside_box`` (margin 0), so the same answer to the bit
    (``tests/test_clutter_placement.py``)."""
    cx, cy = round(float(x), 5), round(float(y), 5)
    t = math.radians(round(float(yaw) % 360.0, 4))
    c, s = math.cos(t), math.sin(t)
    p, q = hx * c, hy * s
    r, u = hx * s, hy * c
    x1, x2, y1, y2 = cx + p, cx - p, cy + r, cy - r
    xs = (x1 - q, x2 - q, x2 + q, x1 + q)
    ys = (y1 + u, y2 + u, y2 - u, y1 - u)
    if (min(xs) >= -ax + 0.0 - 1e-9 and max(xs) <= ax - 0.0 + 1e-9
            and min(ys) >= -ay + 0.0 - 1e-9 and max(ys) <= ay - 0.0 + 1e-9):
        return cx, cy, c, s
    return None


def _hits_placed(pose: tuple[float, float, float, float], hx: float, hy: float,
                 placed: list[tuple[float, float, float, float, float, float, float, Rect]], gap: float,
                 inst: Instance, x: float, y: float, yaw: float) -> bool:
    """``any_overlap(footprint(inst, x, y, yaw), rects, gap)`` on plain floats: the steps
    of ``Rect.overlaps`` (far-apart test, then the four axes with the same expressions),
    each placed rect given as (cx, cy, hx, hy, cos, sin, half diagonal, rect). A pair whose
    margin falls within ``_SAT_SLACK`` goes to ``Rect.overlaps`` itself (its exact numpy
    test), so every answer is that method's."""
    cx, cy, c1, s1 = pose
    diag = math.hypot(hx, hy)
    for ox, oy, ohx, ohy, c2, s2, odiag, rect in placed:
        dx, dy = ox - cx, oy - cy
        reach = diag + odiag + gap
        if dx * dx + dy * dy > 2.0 * reach * reach * (1.0 + 1e-6) + 1e-9:
            continue
        clear, apart = True, False
        for ux, uy in ((c1, s1), (-s1, c1), (c2, s2), (-s2, c2)):
            margin = (abs(dx * ux + dy * uy) - gap
                      - hx * abs(c1 * ux + s1 * uy) - hy * abs(c1 * uy - s1 * ux)
                      - ohx * abs(c2 * ux + s2 * uy) - ohy * abs(c2 * uy - s2 * ux))
            if margin > _SAT_SLACK:
                apart = True
                break
            if margin > -_SAT_SLACK:
                clear = False
        if apart:
            continue
        if clear or footprint(inst, x, y, yaw).overlaps(rect, gap):
            return True
    return False


def _clutter_camera(
    rng: np.random.Generator, object_corners: list[np.ndarray], cfg: dict, width: int, height: int
) -> Camera:
    """A camera at a drawn azimuth/elevation that frames every object's bbox (its corners)."""
    corners = np.concatenate(object_corners)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    centre = (lo + hi) / 2
    radius = float(np.linalg.norm(corners - centre, axis=1).max())
    fov = float(rng.uniform(*cfg["fov"]))
    el = float(rng.uniform(*cfg["elevation"]))
    az = float(rng.uniform(0.0, 360.0))
    dist = fit_distance(radius, fov, width, height, float(rng.uniform(0.85, 0.95)))
    return orbit_camera(centre, dist, az, el, fov_y=fov, width=width, height=height, name="main")
