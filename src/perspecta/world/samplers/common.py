"""Building blocks shared by the scene samplers: asset instancing, 2D footprints,
camera placement and the projected-visibility check.

Everything here is a pure function of its arguments (and of the ``rng`` it is
handed), so a sampler that draws from one generator in a fixed order reproduces the
same scene from the same seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from perspecta import timing
from perspecta.world.scene import RGB, Camera, Light, Pose, SceneObject

if TYPE_CHECKING:
    from perspecta.assets.library import AssetInfo, AssetLibrary


class SamplingError(RuntimeError):
    """A sampler could not satisfy its constraints within its attempt budget."""


# --------------------------------------------------------------------------- categories

# Alternative spellings a source may use for the same thing. Lookup is on normalised
# names (lower case, spaces and hyphens as underscores).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "nightstand": ("nightstand", "bedside_table", "night_table"),
    "tv": ("tv", "television", "tv_set"),
    "refrigerator": ("refrigerator", "fridge"),
    "bathtub": ("bathtub", "bath", "tub"),
    "sink": ("sink", "washbasin", "basin"),
    "toilet": ("toilet", "toilets", "wc"),
    "bookcase": ("bookcase", "bookshelf", "shelves", "shelf"),
    "cabinet": ("cabinet", "cupboard", "dresser", "drawers"),
    "plant": ("plant", "potted_plant", "indoor_plant", "houseplant"),
    "sofa": ("sofa", "couch"),
    "stove": ("stove", "cooker", "oven", "range"),
    "person": ("person", "people", "human", "man", "woman"),
    "bicycle": ("bicycle", "bike"),
    "car": ("car", "automobile"),
    "coffee_table": ("coffee_table",),
    "teddy_bear": ("teddy_bear", "teddy"),
    "mug": ("mug", "cup", "coffee_cup", "coffee_mug"),
}


def normalise_category(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def available_categories(library: AssetLibrary, sources: Sequence[str] | None = None) -> list[str]:
    """Library categories that have at least one asset from ``sources`` (all when None)."""
    cats = {a.category for a in library.all() if sources is None or a.source in sources}
    return sorted(cats)


def resolve_category(
    library: AssetLibrary, wanted: str, sources: Sequence[str] | None = None
) -> str | None:
    """The library's own spelling of ``wanted`` (or of a synonym), or None if absent."""
    by_norm: dict[str, str] = {}
    for cat in available_categories(library, sources):
        by_norm.setdefault(normalise_category(cat), cat)
    key = normalise_category(wanted)
    for alt in (key, *SYNONYMS.get(key, ())):
        if alt in by_norm:
            return by_norm[alt]
    return None


def assets_in(library: AssetLibrary, category: str, sources: Sequence[str] | None = None) -> list[AssetInfo]:
    return [a for a in library.by_category(category) if sources is None or a.source in sources]


# --------------------------------------------------------------------------- instances


@dataclass
class Instance:
    """An asset chosen for one object, with its per-instance params, scale and size."""

    info: AssetInfo
    params: dict[str, Any]
    scale: float
    size: np.ndarray  # scaled canonical extent (depth x, width y, height z)
    color: RGB | None = None

    @property
    def radius(self) -> float:
        """Radius of the bounding sphere of the scaled box."""
        return float(np.linalg.norm(self.size) / 2)


def is_procedural(info: AssetInfo) -> bool:
    return info.asset_id.startswith("proc:")


def draw_params(rng: np.random.Generator, info: AssetInfo) -> dict[str, Any]:
    """Per-instance params: procedural families get a seed so proportions vary."""
    if is_procedural(info):
        return {"seed": int(rng.integers(0, 2**31 - 1))}
    return {}


# Largest real dimension that maps to the top of a miniature range (a car); larger
# objects (buses) are clipped to it.
MINIATURE_REAL_MAX = 5.0


def miniature_size(real_max: float, max_dim_range: tuple[float, float]) -> float:
    """Largest dimension of an object shown as a miniature (a tabletop toy).

    Objects up to ``lo`` keep their real size; larger ones are mapped by log size onto
    ``[lo, hi]`` (a real ``MINIATURE_REAL_MAX`` m object becomes ``hi``). The map is
    increasing and never enlarges, so real-world order survives: a mug (0.11 m) never
    ends up larger than a chair (0.9 m), nor a basketball than a person.
    """
    lo, hi = max_dim_range
    if not 0 < lo <= hi:
        raise ValueError(f"max_dim_range must satisfy 0 < lo <= hi, got {max_dim_range}")
    if real_max <= lo:
        return real_max
    t = min(math.log(real_max / lo) / math.log(max(MINIATURE_REAL_MAX, hi) / lo), 1.0)
    return min(real_max, lo + (hi - lo) * t)


def instantiate(
    rng: np.random.Generator,
    library: AssetLibrary,
    info: AssetInfo,
    *,
    scale: float | None = None,
    max_dim_range: tuple[float, float] | None = None,
    color: RGB | None = None,
) -> Instance:
    """Draw params, load the mesh and fix the scale.

    Default (no ``scale``, no ``max_dim_range``): real-world size (``AssetInfo.real_size``;
    every source loads meshes in metres at real size), so objects of one scene keep
    their real relative scale. ``max_dim_range`` shows objects as miniatures: each
    largest dimension goes through :func:`miniature_size`, which keeps real-world
    order. An explicit ``scale`` multiplies the real size (e.g. an occluder sized to
    its target) and opts out of realism.
    """
    params = draw_params(rng, info)
    extent = np.asarray(library.extent(info.asset_id, params), dtype=float)
    if np.any(extent <= 0):
        raise ValueError(f"asset {info.asset_id} has a degenerate extent {extent.tolist()}")
    s = 1.0 if scale is None else float(scale)
    if max_dim_range is not None:
        rng.uniform(*max_dim_range)  # kept: the draw order of older versions
        real_max = float(extent.max()) * s
        s *= miniature_size(real_max, max_dim_range) / real_max
    s = round(s, 5)
    return Instance(info=info, params=params, scale=s, size=extent * s, color=color)


def common_scale(instances: Sequence[Instance], max_dim: float) -> list[Instance]:
    """Shrink a whole group by one factor so its largest object's largest dimension is at
    most ``max_dim``: exact real relative scale (a model-railway world), unlike the
    per-object :func:`miniature_size`."""
    biggest = max(float(i.size.max()) for i in instances)
    k = min(1.0, max_dim / biggest)
    return [
        Instance(i.info, i.params, round(i.scale * k, 5), i.size * (round(i.scale * k, 5) / i.scale), i.color)
        for i in instances
    ]


def draw_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """``float(rng.uniform(low, high))``, bit for bit and from the same draw: numpy computes
    ``low + (high - low) * next_double``, which is this expression on ``rng.random()``. A
    scalar ``uniform`` call costs ~2.4 µs of argument handling, ``random`` ~0.7 µs, and
    placement loops draw hundreds of thousands of scalars per dataset. Like numpy, a
    reversed or infinite range is an error, not a draw."""
    low, high = float(low), float(high)
    span = high - low
    if not 0.0 <= span < math.inf:
        raise ValueError(f"draw_uniform: need a finite range with low <= high, got [{low}, {high})")
    return low + span * rng.random()


def make_object(obj_id: str, inst: Instance, x: float, y: float, yaw: float, z: float = 0.0) -> SceneObject:
    yaw = round(float(yaw) % 360.0, 4)
    return SceneObject(
        id=obj_id,
        asset_id=inst.info.asset_id,
        category=inst.info.category,
        pose=Pose(position=(round(float(x), 5), round(float(y), 5), round(float(z), 5)), yaw=yaw),
        scale=inst.scale,
        size=(float(inst.size[0]), float(inst.size[1]), float(inst.size[2])),
        has_front=bool(inst.info.has_front),
        symmetric=bool(inst.info.symmetric),
        color=inst.color,
        params=dict(inst.params),
    )


def footprint(inst: Instance, x: float, y: float, yaw: float) -> Rect:
    """``Rect.of(make_object(..., inst, x, y, yaw))`` without the object: placement loops
    try many poses per accepted one, so they test the footprint first and make the object
    only for the pose they keep (the same rounding as :func:`make_object`)."""
    return Rect(round(float(x), 5), round(float(y), 5), float(inst.size[0]) / 2, float(inst.size[1]) / 2,
                round(float(yaw) % 360.0, 4))


def renumber(objects: list[SceneObject]) -> list[SceneObject]:
    """Give objects the ids obj0, obj1, ... in list order."""
    for i, o in enumerate(objects):
        o.id = f"obj{i}"
    return objects


# --------------------------------------------------------------------------- footprints


#: Plain-float separating-axis margins (metres) closer to zero than this are re-tested
#: with numpy's dot products, whose rounding the samplers' past layouts depend on.
_SAT_SLACK = 1e-9


@dataclass(frozen=True)
class Rect:
    """An oriented rectangle on the ground: centre, half extents along its own x/y, yaw (deg)."""

    cx: float
    cy: float
    hx: float
    hy: float
    yaw: float = 0.0

    @classmethod
    def of(cls, obj: SceneObject) -> Rect:
        """The ground footprint of an upright object (its bbox seen from above)."""
        x, y, _ = obj.pose.position
        return cls(float(x), float(y), obj.size[0] / 2, obj.size[1] / 2, obj.pose.yaw)

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """Its unit x and y axes (read-only; computed once: a room's layout asks each placed
        rect for them in every overlap test of every placement try)."""
        cached = self.__dict__.get("_axes")
        if cached is None:
            c, s = self._cos_sin()
            cached = (np.array([c, s]), np.array([-s, c]))
            for a in cached:
                a.setflags(write=False)
            self.__dict__["_axes"] = cached  # frozen dataclass: a plain cache slot, not a field
        return cached

    def _cos_sin(self) -> tuple[float, float]:
        """cos and sin of the yaw as plain floats: exactly the entries of :meth:`axes`,
        without building arrays for the many rects a sampler makes and rejects at once."""
        cached = self.__dict__.get("_cs")
        if cached is None:
            cached = self.__dict__["_cs"] = (math.cos(math.radians(self.yaw)), math.sin(math.radians(self.yaw)))
        return cached

    def corners(self) -> np.ndarray:
        ax, ay = self.axes()
        c = np.array([self.cx, self.cy])
        return np.array([c + sx * self.hx * ax + sy * self.hy * ay for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))])

    def inflated(self, margin: float) -> Rect:
        return Rect(self.cx, self.cy, self.hx + margin, self.hy + margin, self.yaw)

    def radius_along(self, u: np.ndarray) -> float:
        ax, ay = self.axes()
        return self.hx * abs(float(ax @ u)) + self.hy * abs(float(ay @ u))

    def overlaps(self, other: Rect, gap: float = 0.0) -> bool:
        """Separating-axis test; True unless some edge normal separates the two by > gap.

        A False answer guarantees a Euclidean clearance of at least ``gap``.
        """
        # Far apart: the centre offset is within 45 degrees of one of this rect's axes, so
        # its projection there is >= |d| / sqrt(2), and no rect reaches further along any
        # direction than its half diagonal: that axis separates them (by a margin far above
        # rounding), which the loop below would find too. Cheap, and room furnishing tests
        # every placement try against every placed rect, most of them far away.
        dx, dy = other.cx - self.cx, other.cy - self.cy
        reach = math.hypot(self.hx, self.hy) + math.hypot(other.hx, other.hy) + gap
        if dx * dx + dy * dy > 2.0 * reach * reach * (1.0 + 1e-6) + 1e-9:
            return False
        # The same four axis tests on plain floats first. They may differ from numpy's
        # (fused) 2-vector dot products in the last bits, ~1e-15 m here, so they decide
        # only when every axis clears its threshold by more than _SAT_SLACK either way;
        # the rare case within it gets the exact numpy test below.
        c1, s1 = self._cos_sin()
        c2, s2 = other._cos_sin()
        clear = True
        for ux, uy in ((c1, s1), (-s1, c1), (c2, s2), (-s2, c2)):
            margin = (abs(dx * ux + dy * uy) - gap
                      - self.hx * abs(c1 * ux + s1 * uy) - self.hy * abs(c1 * uy - s1 * ux)
                      - other.hx * abs(c2 * ux + s2 * uy) - other.hy * abs(c2 * uy - s2 * ux))
            if margin > _SAT_SLACK:
                return False
            if margin > -_SAT_SLACK:
                clear = False
        if clear:
            return True
        d = np.array([dx, dy])
        for u in (*self.axes(), *other.axes()):
            if abs(float(d @ u)) > self.radius_along(u) + other.radius_along(u) + gap:
                return False
        return True

    def inside_box(self, xmin: float, xmax: float, ymin: float, ymax: float, margin: float = 0.0) -> bool:
        # The corners as :meth:`corners` computes them, c + sx*hx*ax + sy*hy*ay with the
        # same float operations in the same order, on plain floats (samplers call this per
        # try): a sign flip is exact, so (sx*hx)*c = sx*(hx*c) and the four corners share
        # four products.
        xs, ys = self._corner_floats()
        return (
            min(xs) >= xmin + margin - 1e-9
            and max(xs) <= xmax - margin + 1e-9
            and min(ys) >= ymin + margin - 1e-9
            and max(ys) <= ymax - margin + 1e-9
        )

    def _corner_floats(self) -> tuple[tuple[float, float, float, float], tuple[float, float, float, float]]:
        """x and y of the corners in :meth:`corners` order, bit for bit its values."""
        c, s = self._cos_sin()
        cx, cy = self.cx, self.cy
        p, q = self.hx * c, self.hy * s  # x: cx + sx*p - sy*q
        r, t = self.hx * s, self.hy * c  # y: cy + sx*r + sy*t
        x1, x2, y1, y2 = cx + p, cx - p, cy + r, cy - r
        return (x1 - q, x2 - q, x2 + q, x1 + q), (y1 + t, y2 + t, y2 - t, y1 - t)

    def distance_to_point(self, p: np.ndarray) -> float:
        ax, ay = self.axes()
        d = np.asarray(p, dtype=float) - np.array([self.cx, self.cy])
        qx = max(abs(float(d @ ax)) - self.hx, 0.0)
        qy = max(abs(float(d @ ay)) - self.hy, 0.0)
        return math.hypot(qx, qy)


def any_overlap(rect: Rect, others: Iterable[Rect], gap: float) -> bool:
    return any(rect.overlaps(o, gap) for o in others)


# --------------------------------------------------------------------------- cameras


def fit_distance(radius: float, fov_y: float, width: int, height: int, fill: float) -> float:
    """Distance at which a sphere of ``radius`` spans ``fill`` of the narrower field of view."""
    if not 0 < fill < 1:
        raise ValueError(f"fill must be in (0, 1), got {fill}")
    half_v = math.radians(fov_y) / 2
    half_h = math.atan(math.tan(half_v) * width / height)
    half = min(half_v, half_h)
    return radius / math.sin(fill * half)


def orbit_camera(
    target: Sequence[float],
    distance: float,
    azimuth: float,
    elevation: float,
    *,
    fov_y: float = 45.0,
    width: int = 256,
    height: int = 256,
    name: str = "main",
) -> Camera:
    """A camera on a sphere around ``target`` looking at it.

    ``azimuth`` is the world-frame direction (degrees, CCW from +X) from the target to
    the camera, ``elevation`` the angle above the horizontal. An object with yaw equal
    to ``azimuth`` faces this camera.
    """
    a, e = math.radians(azimuth), math.radians(elevation)
    t = np.asarray(target, dtype=float)
    pos = t + distance * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])
    return Camera(
        name=name,
        position=(round(float(pos[0]), 5), round(float(pos[1]), 5), round(float(pos[2]), 5)),
        look_at=(round(float(t[0]), 5), round(float(t[1]), 5), round(float(t[2]), 5)),
        fov_y=round(float(fov_y), 4),
        width=int(width),
        height=int(height),
    )


def sample_sun(
    rng: np.random.Generator,
    elevation: tuple[float, float] = (35.0, 70.0),
    intensity: tuple[float, float] = (0.9, 1.2),
    ambient: tuple[float, float] = (0.3, 0.45),
) -> Light:
    az = math.radians(float(rng.uniform(0, 360)))
    el = math.radians(float(rng.uniform(*elevation)))
    d = -np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    warmth = float(rng.uniform(-0.05, 0.05))
    return Light(
        direction=(round(float(d[0]), 5), round(float(d[1]), 5), round(float(d[2]), 5)),
        color=(round(1.0 + min(warmth, 0.0), 4), 1.0, round(1.0 - max(warmth, 0.0), 4)),
        intensity=round(float(rng.uniform(*intensity)), 4),
        ambient=round(float(rng.uniform(*ambient)), 4),
    )


def jitter_color(rng: np.random.Generator, base: Sequence[float], amount: float = 0.04) -> RGB:
    c = np.clip(np.asarray(base, dtype=float) + rng.uniform(-amount, amount, 3), 0.0, 1.0)
    return (round(float(c[0]), 4), round(float(c[1]), 4), round(float(c[2]), 4))


# --------------------------------------------------------------------------- visibility


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise (in u-right, v-down pixel axes: the sign is consistent) hull."""
    pts = sorted({(float(p[0]), float(p[1])) for p in points})
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, float]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def _boxes_meet(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    """Whether two (u_min, v_min, u_max, v_max) boxes overlap or touch; a hull lies inside
    its box, so a hull whose box misses the grid's box covers none of its points."""
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _in_hull(hull: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Whether each point lies inside (or on) the counter-clockwise hull: every edge's
    cross product at once, element by element the same floats as one edge at a time."""
    if len(hull) < 3:
        return np.zeros(len(pts), dtype=bool)
    a, b = hull, np.roll(hull, -1, axis=0)
    ex, ey = (b[:, 0] - a[:, 0])[:, None], (b[:, 1] - a[:, 1])[:, None]
    cr = ex * (pts[:, 1] - a[:, 1:2]) - ey * (pts[:, 0] - a[:, 0:1])
    return (cr >= 0).all(axis=0)


class Visibility:
    """How one object appears in a perspective camera (from its oriented bounding box).

    ``visible_fraction`` is worked out on first read: samplers reject most layouts on
    ``inside`` or on one object's fraction, so the other objects' grids are never tested
    (the same value as computing them all up front)."""

    __slots__ = ("object_id", "box", "depth", "in_front", "inside", "_shared", "_index", "_fraction")

    def __init__(self, object_id: str, box: tuple[float, float, float, float], depth: float,
                 in_front: bool, inside: bool, shared: _Projected, index: int) -> None:
        self.object_id = object_id
        self.box = box  # u_min, v_min, u_max, v_max (pixels)
        self.depth = depth  # camera-frame z of the bbox centre
        self.in_front = in_front  # every bbox corner is in front of the camera
        self.inside = inside  # the projected box lies inside the image (with the given margin)
        self._shared, self._index = shared, index
        self._fraction: float | None = None

    @property
    def visible_fraction(self) -> float:
        """Share of its projected hull not covered by nearer hulls."""
        if self._fraction is None:
            self._fraction = self._shared.fraction(self._index)
        return self._fraction

    def __repr__(self) -> str:
        return (f"Visibility({self.object_id!r}, box={self.box}, depth={self.depth}, in_front={self.in_front}, "
                f"inside={self.inside}, visible_fraction={self.visible_fraction})")


class _Projected:
    """Every object's projected hull and box in one camera, shared by its :class:`Visibility` records."""

    def __init__(self, uvs: list[np.ndarray | None], infos: list[tuple[Any, float, bool, bool]], samples: int) -> None:
        self.uvs, self.infos, self.samples = uvs, infos, samples
        self._hulls: list[np.ndarray | None] = [None] * len(uvs)

    def hull(self, i: int) -> np.ndarray:
        """Object ``i``'s projected hull, built on first use: most layouts are rejected on
        ``inside`` or on one object's fraction, so most hulls were never read (measured:
        a fifth of DORI's visibility time went to hulls)."""
        h = self._hulls[i]
        if h is None:
            uv = self.uvs[i]
            h = self._hulls[i] = _convex_hull(uv) if uv is not None else np.zeros((0, 2))
        return h

    @timing.timed("visibility")
    def fraction(self, i: int) -> float:
        box, depth, front, _ = self.infos[i]
        if not front:
            return 0.0
        samples = self.samples
        t = (np.arange(samples) + 0.5) / samples
        # the grid row by row (what meshgrid + ravel gives), without building two grids
        pts = np.empty((samples * samples, 2))
        pts[:, 0] = np.tile(box[0] + t * (box[2] - box[0]), samples)
        pts[:, 1] = np.repeat(box[1] + t * (box[3] - box[1]), samples)
        pts = pts[_in_hull(self.hull(i), pts)]
        if not len(pts):
            return 0.0
        covered = np.zeros(len(pts), dtype=bool)
        for j, (box_j, depth_j, front_j, _) in enumerate(self.infos):
            if j != i and front_j and depth_j < depth and _boxes_meet(box_j, box):
                # test only the points not yet covered: the same answer for less work
                open_ = np.flatnonzero(~covered)
                if not len(open_):
                    break
                covered[open_] = _in_hull(self.hull(j), pts[open_])
        return 1.0 - float(covered.mean())


@timing.timed("visibility")
def visibility(
    objects: Sequence[SceneObject], camera: Camera, *, margin: float = 0.0, samples: int = 24,
    corners: Sequence[np.ndarray] | None = None,
) -> list[Visibility]:
    """Geometric visibility of each object's bbox in ``camera`` (perspective only).

    An object's visible fraction is estimated on a ``samples`` x ``samples`` grid over
    its projected box: grid points inside the convex hull of its projected corners that
    fall inside the hull of any object whose centre is nearer to the camera count as
    covered. Bboxes enclose the meshes, so this overestimates occlusion: a threshold
    on it is a conservative guarantee. ``corners``: each object's :meth:`SceneObject.corners`,
    when the caller has them already (a sampler framed its camera on them).
    """
    if camera.projection != "perspective":
        raise ValueError("visibility() needs a perspective camera")
    uvs: list[np.ndarray | None] = []
    infos = []
    # Camera.project's arithmetic with the camera's matrices looked up once per call
    # instead of twice per object (samplers run this for every candidate layout); only
    # the centre's depth is used, so its pixel is not computed
    ext, k = camera._matrices()
    rot_t, shift, k_t = ext[:3, :3].T, ext[:3, 3], k.T
    for n, o in enumerate(objects):
        pc = (o.corners() if corners is None else corners[n]) @ rot_t + shift
        z = pc[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = (pc @ k_t)[:, :2] / z[:, None]
        zc = (o.center()[None] @ rot_t + shift)[:, 2]
        front = bool(np.all(z > 1e-3))
        box = (float(uv[:, 0].min()), float(uv[:, 1].min()), float(uv[:, 0].max()), float(uv[:, 1].max()))
        inside = front and (
            box[0] >= margin
            and box[1] >= margin
            and box[2] <= camera.width - margin
            and box[3] <= camera.height - margin
        )
        uvs.append(uv if front else None)  # its hull is built when a fraction needs it
        infos.append((box, float(zc[0]), front, inside))
    shared = _Projected(uvs, infos, samples)
    return [Visibility(o.id, *infos[i], shared, i) for i, o in enumerate(objects)]
