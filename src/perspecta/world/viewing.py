"""Viewer-dependent geometry: image-plane boxes and regions, viewer-frame relations,
instance-mask visibility, equirectangular panoramas and fields of view.

The camera-free half lives in :mod:`perspecta.world.orientation`; import both through
:mod:`perspecta.world.oracle`. Conventions (shared DESIGN.md): pixel coordinates are
u right, v down, continuous, with pixel (j, i) covering [j, j+1) x [i, i+1); camera
frame is OpenCV (x right, y down, z forward). Relations that could be too close to
call take a margin and return None then, so generators can reject ambiguous samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from perspecta import timing
from perspecta.world.orientation import (
    PointLike,
    bearing,
    direction_from_heading,
    dominant_direction,
    ground_axes,
    ground_unit,
    heading_of,
    point_of,
    wrap180,
    wrap360,
)
from perspecta.world.scene import Camera, SceneObject

BBox = tuple[float, float, float, float]
Region = Literal["top-left", "top-right", "bottom-left", "bottom-right", "centre"]

# the 12 edges of SceneObject.corners(): index = 4*ix + 2*iy + iz, edges differ in one bit
_BOX_EDGES = [(i, i | bit) for i in range(8) for bit in (1, 2, 4) if not i & bit]


def _require_perspective(camera: Camera, what: str) -> None:
    if camera.projection != "perspective":
        raise ValueError(f"{what} needs a perspective camera; use the panorama_* functions for equirect")


# ------------------------------------------------------------------ image plane


def projected_bbox(obj: SceneObject, camera: Camera, *, near: float = 0.01) -> BBox | None:
    """Pixel box (u0, v0, u1, v1) of the object's 8 bounding-box corners, clipped to the image.

    Box edges that cross the plane ``z = near`` (camera frame) are cut there first, so
    an object that reaches behind the camera still gets the right (image-filling) box.
    None if the box is entirely behind the camera or entirely outside the image.
    """
    _require_perspective(camera, "projected_bbox")
    pc = camera.to_camera(obj.corners())
    pts = [pc[i] for i in range(8) if pc[i, 2] >= near]
    for i, j in _BOX_EDGES:
        zi, zj = pc[i, 2], pc[j, 2]
        if (zi < near) != (zj < near):
            t = (near - zi) / (zj - zi)
            pts.append(pc[i] + t * (pc[j] - pc[i]))
    if not pts:
        return None
    p = np.array(pts)
    k = camera.intrinsics()
    uv = (p @ k.T)[:, :2] / p[:, 2:3]
    u0, v0 = uv.min(axis=0)
    u1, v1 = uv.max(axis=0)
    u0, u1 = max(u0, 0.0), min(u1, float(camera.width))
    v0, v1 = max(v0, 0.0), min(v1, float(camera.height))
    if u1 <= u0 or v1 <= v0:
        return None
    return (float(u0), float(v0), float(u1), float(v1))


def view_fraction(obj: SceneObject, camera: Camera) -> float:
    """Fraction (0..1) of the object's 8 box corners that lie in the camera's view frustum
    (in front of the camera and inside the image). Always 1.0 for an equirect camera.

    Corner-based, so it measures "is the whole box in frame" well but says 0 for a
    box so close that it overflows the frame on all sides; use :func:`projected_bbox`
    or mask areas to ask whether anything of it shows."""
    if camera.projection == "equirect":
        return 1.0
    uv, z = camera.project(obj.corners())
    with np.errstate(invalid="ignore"):
        ok = (z > 0) & (uv[:, 0] >= 0) & (uv[:, 0] <= camera.width) & (uv[:, 1] >= 0) & (uv[:, 1] <= camera.height)
    return float(ok.mean())


def in_view(obj: SceneObject, camera: Camera, *, min_fraction: float = 1.0) -> bool:
    """True if at least ``min_fraction`` of the box corners are in the frustum (default:
    the whole box is in frame)."""
    return view_fraction(obj, camera) >= min_fraction - 1e-12


def image_region(
    obj: SceneObject, camera: Camera, *, margin: float = 0.1, centre_half: float = 1.0 / 6.0,
    centre_margin: float = 0.0,
) -> Region | None:
    """LRR's five absolute image positions from the centre of :func:`projected_bbox`.

    With (x, y) the box centre as fractions of width/height and dx = x - 0.5,
    dy = y - 0.5: "centre" if max(|dx|, |dy|) <= ``centre_half``; else a quadrant
    ("top" = small v) when both |dx| and |dy| are at least ``margin``; otherwise None
    (straddles a midline). None too when max(|dx|, |dy|) lies within ``centre_margin`` of
    the centre square's edge (a person cannot tell "centre" from a quadrant there: a blind
    judge found a box centre 0.7 px outside it), and when the object is not in the image.
    """
    box = projected_bbox(obj, camera)
    if box is None:
        return None
    dx = (box[0] + box[2]) / 2 / camera.width - 0.5
    dy = (box[1] + box[3]) / 2 / camera.height - 0.5
    if abs(max(abs(dx), abs(dy)) - centre_half) < centre_margin:
        return None
    if max(abs(dx), abs(dy)) <= centre_half:
        return "centre"
    if min(abs(dx), abs(dy)) < margin:
        return None
    return f"{'top' if dy < 0 else 'bottom'}-{'left' if dx < 0 else 'right'}"  # type: ignore[return-value]


def camera_depth(p: PointLike, camera: Camera) -> float:
    """Camera-frame depth z (metres along the optical axis) of a point or object centre."""
    return float(camera.to_camera(point_of(p)[None])[0, 2])


def camera_distance(p: PointLike, camera: Camera) -> float:
    """Euclidean distance (metres) from the camera centre to a point or object centre."""
    return float(np.linalg.norm(point_of(p) - np.asarray(camera.position, dtype=float)))


def depth_order(
    objects: Sequence[SceneObject], camera: Camera, *, key: Literal["depth", "distance"] = "depth"
) -> list[SceneObject]:
    """Objects sorted nearest first by camera-frame depth of their centres (or Euclidean
    distance with ``key="distance"``; equirect cameras always use distance)."""
    if key == "depth" and camera.projection == "perspective":
        return sorted(objects, key=lambda o: camera_depth(o, camera))
    if key not in ("depth", "distance"):
        raise ValueError(f"unknown key {key!r}")
    return sorted(objects, key=lambda o: camera_distance(o, camera))


# ------------------------------------------------------- viewer-frame relations


def left_right(
    a: PointLike,
    b: PointLike,
    camera: Camera,
    *,
    margin: float = 0.0,
    pixel_margin: float = 0.0,
    angle_margin: float = 0.0,
) -> Literal["left", "right"] | None:
    """Is A left or right of B as the viewer sees it?

    Perspective: from the camera-frame x of the centres AND their projected u; both
    must agree (they can disagree when depths differ a lot) and exceed ``margin``
    metres / ``pixel_margin`` pixels, else None. None too if either centre is behind
    the camera. Equirect: from longitudes (see :func:`panorama_longitude`): "left" if
    A is counter-clockwise of B by more than ``angle_margin`` degrees; None if the
    shorter arc between them crosses the seam (image order and viewer order
    disagree) or they are within ``angle_margin`` of opposite.
    """
    if camera.projection == "equirect":
        la, lb = panorama_longitude(a, camera), panorama_longitude(b, camera)
        d = float(wrap180(la - lb))
        if abs(d) <= angle_margin or abs(d) >= 180.0 - angle_margin or (d < 0) != (la < lb):
            return None
        return "left" if d < 0 else "right"
    pts = np.stack([point_of(a), point_of(b)])
    pc = camera.to_camera(pts)
    if pc[0, 2] <= 0 or pc[1, 2] <= 0:
        return None
    uv, _ = camera.project(pts)
    dx = pc[0, 0] - pc[1, 0]
    du = uv[0, 0] - uv[1, 0]
    if abs(dx) <= margin or abs(du) <= pixel_margin or (dx < 0) != (du < 0) or dx == 0 or du == 0:
        return None
    return "left" if dx < 0 else "right"


def front_behind(a: PointLike, b: PointLike, camera: Camera, *, margin: float = 0.0) -> Literal["front", "behind"] | None:
    """Is A in front of (closer to the viewer than) or behind B? From camera-frame depth
    of the centres (Euclidean distance for equirect cameras); None if the difference is
    at most ``margin`` metres or (perspective) either centre is behind the camera."""
    if camera.projection == "equirect":
        da, db = camera_distance(a, camera), camera_distance(b, camera)
    else:
        da, db = camera_depth(a, camera), camera_depth(b, camera)
        if da <= 0 or db <= 0:
            return None
    if abs(da - db) <= margin:
        return None
    return "front" if da < db else "behind"


def near_far(a: PointLike, b: PointLike, camera: Camera, *, margin: float = 0.0) -> Literal["closer", "farther"] | None:
    """Is A closer to or farther from the camera than B? Euclidean distance from the
    camera centre to the object centres; None within ``margin`` metres. Differs from
    :func:`front_behind` for objects far off the optical axis."""
    da, db = camera_distance(a, camera), camera_distance(b, camera)
    if abs(da - db) <= margin:
        return None
    return "closer" if da < db else "farther"


def motion_direction(
    start: PointLike, end: PointLike, camera: Camera, *, min_distance: float = 0.05, dominance: float = 2.0
) -> Literal["left", "right", "toward", "away", "up", "down"] | None:
    """SpinBench/LRR translation: which way did an object move as the viewer sees it?

    Components of the displacement along the camera's ground-plane right and forward
    directions and world up; "toward"/"away" = toward/away from the camera. None if
    it moved less than ``min_distance`` metres or no component is ``dominance`` times
    the next largest.
    """
    rh, fh = ground_axes(camera)
    d = point_of(end) - point_of(start)
    comps = {"right": float(d @ rh), "away": float(d @ fh), "up": float(d[2])}
    return dominant_direction(comps, {"right": "left", "away": "toward", "up": "down"}, min_distance, dominance)  # type: ignore[return-value]


# ------------------------------------------------------------------------ masks


@timing.timed("masks")
def mask_area(instance_mask: np.ndarray, object_index: int) -> int:
    """Pixels of scene.objects[object_index] in an instance mask (label object_index + 1)."""
    return int(np.count_nonzero(np.asarray(instance_mask) == object_index + 1))


@timing.timed("masks")
def mask_bbox(instance_mask: np.ndarray, object_index: int) -> tuple[int, int, int, int] | None:
    """Pixel box (u0, v0, u1, v1) of scene.objects[object_index] in an instance mask, with
    u1/v1 exclusive (pixel edges, comparable to :func:`projected_bbox`); None if absent."""
    m = np.asarray(instance_mask)
    if m.ndim != 2:
        raise ValueError(f"instance mask must be 2D, got shape {m.shape}")
    rows = np.flatnonzero((m == object_index + 1).any(axis=1))
    cols = np.flatnonzero((m == object_index + 1).any(axis=0))
    if rows.size == 0:
        return None
    return (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)


@timing.timed("masks")
def visible_fraction(instance_mask: np.ndarray, solo_mask: np.ndarray, object_index: int) -> float:
    """Fraction of object i's silhouette that is visible in the full render.

    ``instance_mask`` is the full scene's mask (label i + 1 = scene.objects[i]);
    ``solo_mask`` is a render of the object alone from the same camera: a boolean mask,
    or an instance mask in which every nonzero pixel is the object (so it works
    whether the solo scene re-indexes the object or not). Returns 0.0 if the object has
    no pixels even alone (out of frame); check :func:`mask_area` to tell the cases apart.
    """
    full = np.asarray(instance_mask)
    solo = np.asarray(solo_mask)
    if full.shape != solo.shape:
        raise ValueError(f"mask shapes differ: {full.shape} vs {solo.shape}")
    alone = int(np.count_nonzero(solo))
    if alone == 0:
        return 0.0
    return min(1.0, mask_area(full, object_index) / alone)


def occlusion_level(fraction: float, *, partial: float = 0.95, full: float = 0.25) -> Literal["none", "partial", "full"]:
    """SpinBench's occlusion levels from a :func:`visible_fraction`.

    "none" if at least ``partial`` of the object is visible (0.95 tolerates edge
    contact), "full" if at most ``full`` is (most of it hidden), else "partial".
    """
    if not 0.0 <= full < partial <= 1.0:
        raise ValueError(f"need 0 <= full < partial <= 1, got full={full}, partial={partial}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"visible fraction must be in [0, 1], got {fraction}")
    if fraction >= partial:
        return "none"
    if fraction <= full:
        return "full"
    return "partial"


# --------------------------------------------------------------------- panoramas


def _pano_forward(camera: Camera) -> np.ndarray:
    return ground_unit(np.asarray(camera.look_at, dtype=float) - np.asarray(camera.position, dtype=float))


def panorama_longitude(point: PointLike, camera: Camera) -> float:
    """Longitude (degrees, (-180, 180]) of a point in the camera's level equirect panorama.

    0 = the camera's forward direction (position -> look_at) on the ground plane,
    increasing to the RIGHT (clockwise seen from above); the seam is at +-180 (behind).
    Only the camera position and look-at are used (not its up vector or pitch): the
    panorama is always level. Raises ValueError for a point straight above/below.
    """
    d = point_of(point) - np.asarray(camera.position, dtype=float)
    return float(wrap180(-bearing((0.0, 0.0, 0.0), heading_of(_pano_forward(camera)), d)))


def panorama_longitudes(points: np.ndarray, camera: Camera) -> list[float]:
    """``[panorama_longitude(p, camera) for p in points]`` for (N, 3) points, with the
    camera's forward heading worked out once instead of per point (a room's upper-bound
    facts ask for nine per object on every candidate room). The same float operations
    per point, in the same order, so the same values."""
    pos = np.asarray(camera.position, dtype=float)
    u = direction_from_heading(heading_of(_pano_forward(camera)))
    ux, uy = float(u[0]), float(u[1])
    out = []
    for p in np.asarray(points, dtype=float):
        d = p - pos
        vx, vy = float(d[0]), float(d[1])
        if math.hypot(vx, vy) < 1e-9:
            raise ValueError("angle undefined: a vector has no horizontal component")
        angle = wrap180(math.degrees(math.atan2(ux * vy - uy * vx, ux * vx + uy * vy)))
        out.append(float(wrap180(-float(angle))))
    return out


def panorama_latitude(point: PointLike, camera: Camera) -> float:
    """Latitude (degrees, [-90, 90]) of a point above (+) or below (-) the camera's
    horizontal plane."""
    d = point_of(point) - np.asarray(camera.position, dtype=float)
    return math.degrees(math.atan2(d[2], math.hypot(d[0], d[1])))


def panorama_pixel(
    point: PointLike, camera: Camera, *, width: int | None = None, height: int | None = None
) -> tuple[float, float]:
    """Continuous equirect pixel (u, v) of a point: u = (lon/360 + 0.5) W wrapped into
    [0, W), v = (0.5 - lat/180) H. Size defaults to the camera's width/height."""
    w = camera.width if width is None else width
    h = camera.height if height is None else height
    u = (panorama_longitude(point, camera) / 360.0 + 0.5) * w
    v = (0.5 - panorama_latitude(point, camera) / 180.0) * h
    return (float(u % w), float(v))


def longitude_extent(obj: SceneObject, camera: Camera) -> tuple[float, float]:
    """The smallest longitude arc covering the object's box corners, as (start, end) with
    the arc running clockwise (increasing longitude) from start to end. When it
    crosses the seam, start > end (e.g. (170, -170))."""
    lons = np.sort([panorama_longitude(c, camera) for c in obj.corners()])
    gaps = np.diff(np.concatenate([lons, [lons[0] + 360.0]]))
    k = int(np.argmax(gaps))  # the largest empty gap is outside the arc
    return (float(lons[(k + 1) % len(lons)]), float(lons[k]))


def straddles_seam(obj: SceneObject, camera: Camera) -> bool:
    """PCSR ego-distortion: is the object split across the panorama's +-180 seam?"""
    start, end = longitude_extent(obj, camera)
    return start > end


def longitude_separation(a: PointLike, b: PointLike, camera: Camera) -> float:
    """Unsigned angular separation (degrees, [0, 180]) of two points around the observer,
    measured the short way (across the seam if shorter)."""
    return abs(float(wrap180(panorama_longitude(a, camera) - panorama_longitude(b, camera))))


def nearest_to_longitude(
    objects: Sequence[SceneObject], camera: Camera, longitude: float = 0.0, *, margin: float = 0.0
) -> SceneObject | None:
    """The object whose centre is angularly closest to ``longitude`` (default: the view
    centre). PCSR egocentric rotation "what is in front after turning 90 right" is
    ``nearest_to_longitude(objs, move_camera(cam, turn=90))``. None if empty or the
    runner-up is within ``margin`` degrees."""
    if not objects:
        return None
    ranked = sorted(
        ((abs(float(wrap180(panorama_longitude(o, camera) - longitude))), i, o) for i, o in enumerate(objects)),
        key=lambda t: (t[0], t[1]),
    )
    if len(ranked) > 1 and ranked[1][0] - ranked[0][0] < margin:
        return None
    return ranked[0][2]


# ------------------------------------------------------------------ field of view


def horizontal_fov(camera: Camera) -> float:
    """Horizontal field of view (degrees) of a perspective camera, from fov_y and aspect."""
    _require_perspective(camera, "horizontal_fov")
    return math.degrees(2 * math.atan(math.tan(math.radians(camera.fov_y) / 2) * camera.width / camera.height))


def in_fov(point: PointLike, position: PointLike, yaw_deg: float, fov_deg: float) -> bool:
    """PCSR limited-FOV visibility: is the point within a horizontal field of view?

    The observer stands at ``position`` facing heading ``yaw_deg`` (object-yaw
    convention: 0 = +X, 90 = +Y, CCW from above) with a horizontal FOV of ``fov_deg``;
    true if the point's ground-plane bearing is within +-fov/2 (boundary included).
    Occlusion is not considered; combine with mask visibility for that.
    """
    if not 0.0 < fov_deg <= 360.0:
        raise ValueError(f"fov must be in (0, 360], got {fov_deg}")
    return abs(bearing(position, yaw_deg, point)) <= fov_deg / 2 + 1e-9


def objects_in_fov(
    objects: Sequence[SceneObject],
    position: PointLike,
    yaw_deg: float,
    fov_deg: float,
    *,
    require: Literal["center", "any", "all"] = "center",
) -> list[SceneObject]:
    """Objects inside the horizontal FOV (see :func:`in_fov`), in input order. ``require``:
    the centre must be inside, or any / all of the 8 box corners."""
    out = []
    for o in objects:
        if require == "center":
            ok = in_fov(o, position, yaw_deg, fov_deg)
        elif require in ("any", "all"):
            hits = [in_fov(c, position, yaw_deg, fov_deg) for c in o.corners()]
            ok = any(hits) if require == "any" else all(hits)
        else:
            raise ValueError(f"unknown require {require!r}")
        if ok:
            out.append(o)
    return out


# ------------------------------------------------------------ camera direction


def camera_yaw(camera: Camera) -> float:
    """Heading (degrees, (-180, 180], object-yaw convention: CCW from +X) of the camera's
    ground-plane forward, for use with :func:`in_fov` / :func:`objects_in_fov`. Add 180
    for the direction back toward the camera (the yaw of an object facing it)."""
    return heading_of(_pano_forward(camera))


def camera_azimuth(camera: Camera) -> float:
    """Orbit azimuth (degrees, [0, 360), CCW from +X) of the camera around its look-at
    point: the ground direction from the look-at point to the camera, the ``azimuth`` of
    :func:`perspecta.world.samplers.orbit_camera` (an object with this yaw faces it)."""
    d = np.asarray(camera.position, dtype=float) - np.asarray(camera.look_at, dtype=float)
    return wrap360(float(np.degrees(np.arctan2(d[1], d[0]))))


def camera_elevation(camera: Camera) -> float:
    """Orbit elevation (degrees, [-90, 90]) of the camera above its look-at point, the
    ``elevation`` of :func:`perspecta.world.samplers.orbit_camera`."""
    d = np.asarray(camera.position, dtype=float) - np.asarray(camera.look_at, dtype=float)
    return float(np.degrees(np.arcsin(d[2] / np.linalg.norm(d))))


def ground_ahead(camera: Camera, bearing_deg: float, distance: float) -> np.ndarray:
    """Ground point (z = 0) at ``distance`` metres from the camera's foot, ``bearing_deg``
    to the right (clockwise from above) of its ground-plane forward direction."""
    base = math.radians(camera_yaw(camera) - bearing_deg)
    pos = np.asarray(camera.position, dtype=float)
    return np.array([pos[0] + distance * math.cos(base), pos[1] + distance * math.sin(base), 0.0])
