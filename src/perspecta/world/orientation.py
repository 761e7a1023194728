"""Orientation and object-frame geometry: the camera-free half of the geometry oracle.

Everything here is a pure function of the scene record (objects, points, cameras as
plain data). Conventions (shared DESIGN.md):

* World: right-handed, metres, +Z up. Ground-plane quantities drop z.
* Angles are degrees. A *heading* is the direction of a vector on the ground plane,
  measured counter-clockwise seen from above from world +X (the same sense as yaw).
* A *signed ground-plane angle* from u to v is positive when v is turned
  counter-clockwise (seen from above) from u, i.e. v points to the LEFT of u.
* Object canonical frame: +X front, +Y left, +Z up. The ground-plane "front" of an
  object is its +X axis projected on the ground, so pitch/roll do not change where it
  faces unless they tip the front straight up or down (then facing is undefined).
* "Clockwise" about the vertical means clockwise seen from above. Object rotations
  (yaw, :func:`rotate_about_vertical`) are counter-clockwise-positive like yaw; camera
  turns (:func:`move_camera`) are clockwise-positive ("turn right") because that is how
  an observer's turn is phrased.

Objects without a declared front (``has_front`` False) have no facing: functions that
need one raise ``ValueError``; :func:`facing_label` instead returns
:data:`CANNOT_DETERMINE`, the correct benchmark answer for them.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Sequence
from typing import Literal, Union

import numpy as np

from perspecta.world.scene import Camera, Pose, SceneObject

PointLike = Union[SceneObject, Sequence[float], np.ndarray]

CANNOT_DETERMINE = "cannot be determined"

_EPS = 1e-9

FacingLabel = Literal["toward", "away", "leftward", "rightward"]
Sector = Literal["front", "behind", "left", "right"]
Side = Literal["left", "right"]


# --------------------------------------------------------------------------- angles


def wrap180(a: float | np.ndarray) -> float | np.ndarray:
    """Wrap an angle (degrees) into (-180, 180]; +180 and -180 both map to +180.

    Works element-wise on arrays; a Python/NumPy scalar in gives a float out.
    """
    if isinstance(a, (float, int)) and math.isfinite(a):
        # scalars (most calls): the same IEEE operations as below (fmod is exact) on a
        # plain float, without numpy's 0-d array round trip
        s = math.fmod(float(a) + 180.0, 360.0)
        return (s + 360.0 if s <= 0.0 else s) - 180.0
    arr = np.asarray(a, dtype=float)
    r = np.fmod(arr + 180.0, 360.0)
    r = np.where(r <= 0.0, r + 360.0, r) - 180.0
    return float(r) if r.ndim == 0 else r


def wrap360(a: float) -> float:
    """Wrap an angle (degrees) into [0, 360).

    Bit-for-bit ``a % 360.0`` except that a tiny negative angle gives 0.0 where ``%``
    rounds up to 360.0 (-0.0 gives 0.0 like ``%``). Generators that store ``round(yaw
    % 360.0, k)`` keep the operator: yaws a hair below 0 occur and are stored as 360.0,
    and switching would change dataset bytes.
    """
    r = math.fmod(float(a), 360.0)
    if r < 0:
        r += 360.0
    return 0.0 if r >= 360.0 or r == 0.0 else r


def ccw_to_clockwise(angle: float) -> float:
    """Express a counter-clockwise-positive rotation as a clockwise amount in [0, 360).

    A rotation of +90 (a quarter turn counter-clockwise) is 270 clockwise; -90 is 90
    clockwise. Used for DORI's "how many degrees clockwise" granular questions.
    """
    return wrap360(-angle)


def turn_direction(angle: float, *, margin: float = 0.0) -> Literal["clockwise", "counter-clockwise"] | None:
    """The shorter way to turn for a signed (CCW-positive) rotation ``angle``.

    None when the turn is within ``margin`` of 0 (no turn needed) or of 180 (both ways
    are equally short), so a generator can reject the sample.
    """
    a = wrap180(angle)
    if abs(a) <= margin or abs(a) >= 180.0 - margin:
        return None
    return "counter-clockwise" if a > 0 else "clockwise"


def signed_angle_xy(u: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray) -> float:
    """Signed ground-plane angle from u to v (degrees, (-180, 180]); positive = v is CCW of u.

    Only the x, y components are used. Raises ValueError if either has no horizontal
    extent (e.g. a vertical vector).
    """
    ux, uy = _xy(u)
    vx, vy = _xy(v)
    if math.hypot(ux, uy) < _EPS or math.hypot(vx, vy) < _EPS:
        raise ValueError("angle undefined: a vector has no horizontal component")
    return float(wrap180(math.degrees(math.atan2(ux * vy - uy * vx, ux * vx + uy * vy))))


def heading_of(v: Sequence[float] | np.ndarray) -> float:
    """Heading (degrees, (-180, 180]) of a vector on the ground plane: 0 = +X, 90 = +Y."""
    return signed_angle_xy((1.0, 0.0), v)


def direction_from_heading(heading: float) -> np.ndarray:
    """Unit ground-plane vector (3D, z = 0) for a heading in degrees (0 = +X, CCW)."""
    h = math.radians(heading)
    return np.array([math.cos(h), math.sin(h), 0.0])


def _xy(v: Sequence[float] | np.ndarray) -> tuple[float, float]:
    a = np.asarray(v, dtype=float).ravel()
    if a.size < 2:
        raise ValueError(f"expected a 2D or 3D vector, got {v!r}")
    return float(a[0]), float(a[1])


def point_of(p: PointLike) -> np.ndarray:
    """A 3D point from an object (its bounding-box centre) or a 2/3-vector (z = 0 if 2D)."""
    if isinstance(p, SceneObject):
        return p.center()
    a = np.asarray(p, dtype=float).ravel()
    if a.size == 2:
        return np.array([a[0], a[1], 0.0])
    if a.size != 3:
        raise ValueError(f"expected a point with 2 or 3 coordinates, got {p!r}")
    return a


# ------------------------------------------------------------------- object facing


def _require_front(obj: SceneObject) -> None:
    if not obj.has_front:
        raise ValueError(f"object {obj.id!r} ({obj.category}) has no declared front")


def front_xy(obj: SceneObject) -> np.ndarray:
    """Unit ground-plane projection (3D, z = 0) of the object's front.

    Raises ValueError for objects without a front, or whose front points straight
    up/down (pitched by +-90), where the ground-plane facing is undefined.
    """
    _require_front(obj)
    f = obj.front_vector()
    n = math.hypot(f[0], f[1])
    if n < 1e-6:
        raise ValueError(f"object {obj.id!r} has its front pointing vertically; facing undefined")
    return np.array([f[0] / n, f[1] / n, 0.0])


def heading(obj: SceneObject) -> float:
    """Heading (degrees) of the object's ground-plane front; equals wrapped yaw when upright."""
    return heading_of(front_xy(obj))


def egocentric_facing(obj: SceneObject, camera: Camera) -> float:
    """Signed angle (degrees, (-180, 180]) of the object's front from its line of sight to the camera.

    Measured on the ground plane from the direction object-centre -> camera position to
    the object's front. 0 = facing the camera, +-180 = facing away. POSITIVE = the front
    is turned counter-clockwise (seen from above) from the to-camera direction, which
    is the same as the front pointing toward the IMAGE RIGHT (exactly so for level
    cameras anywhere in the image, and for any camera pitch when the object is on the
    optical axis). Relative to the line of sight, not the optical axis: an object near
    the image edge that looks at the camera has facing 0 (compare
    :func:`camera_plane_angle`). Raises ValueError if the object has no front or the
    camera is directly above it.
    """
    f = front_xy(obj)
    to_cam = np.asarray(camera.position, dtype=float) - obj.center()
    return signed_angle_xy(to_cam, f)


def camera_plane_angle(obj: SceneObject, camera: Camera) -> float:
    """DORI's view parallelism: unsigned ground-plane angle in [0, 180] between the front
    and the image plane's normal pointing back at the camera (-forward).

    0 = the front surface is parallel to the image plane and faces the camera,
    90 = perpendicular to it (seen side-on), 180 = back turned to the camera. Unlike
    :func:`egocentric_facing` it ignores where the object sits in the image. Raises
    ValueError for frontless objects or a camera looking straight down.
    """
    f = front_xy(obj)
    return abs(signed_angle_xy(-camera.forward(), f))


def facing_label(
    obj: SceneObject,
    camera: Camera,
    *,
    toward_max: float = 45.0,
    away_min: float | None = None,
    margin: float = 0.0,
) -> FacingLabel | str | None:
    """DORI directional facing: "toward" | "away" | "leftward" | "rightward".

    Bins on :func:`egocentric_facing` ``a``: ``|a| <= toward_max`` -> "toward",
    ``|a| >= away_min`` (default ``180 - toward_max``) -> "away", otherwise the sign
    says where the front points in the image: ``a > 0`` -> "rightward", ``a < 0`` ->
    "leftward". With the default 45 the four bins are equal quarter turns.

    Returns :data:`CANNOT_DETERMINE` ("cannot be determined") for an object without a
    front — that is the benchmark's correct answer — and None when ``a`` lies within
    ``margin`` degrees of a bin boundary (too close to call: reject the sample).
    """
    if not obj.has_front:
        return CANNOT_DETERMINE
    if away_min is None:
        away_min = 180.0 - toward_max
    if not 0.0 <= toward_max <= away_min <= 180.0:
        raise ValueError(f"need 0 <= toward_max <= away_min <= 180, got {toward_max}, {away_min}")
    a = egocentric_facing(obj, camera)
    m = abs(a)
    boundaries = [toward_max, away_min]
    if margin > 0 and any(abs(m - b) < margin for b in boundaries):
        return None
    if m <= toward_max:
        return "toward"
    if m >= away_min:
        return "away"
    return "rightward" if a > 0 else "leftward"


def rotation_to_face(obj: SceneObject, target: PointLike) -> float:
    """Shortest yaw rotation (degrees, CCW-positive, (-180, 180]) that turns the object's
    front toward ``target`` (a point or another object's centre) on the ground plane.

    DORI's inter-object granular question "how much must B rotate to face A" is
    ``rotation_to_face(B, A)``; use :func:`ccw_to_clockwise` for a clockwise amount.
    """
    f = front_xy(obj)
    d = point_of(target) - obj.center()
    return signed_angle_xy(f, d)


def rotation_to_face_camera(obj: SceneObject, camera: Camera) -> float:
    """Shortest yaw rotation (CCW-positive) that makes the object face the camera: ``-facing``."""
    return float(wrap180(-egocentric_facing(obj, camera)))


# ----------------------------------------------------------- inter-object orientation


def yaw_difference(a: SceneObject, b: SceneObject) -> float:
    """Heading of b relative to a (degrees, (-180, 180]); positive = b's front is CCW of a's."""
    return signed_angle_xy(front_xy(a), front_xy(b))


def faces(a: SceneObject, b: PointLike, tol: float = 30.0) -> bool:
    """True if a's front points at b's centre within ``tol`` degrees on the ground plane."""
    return abs(rotation_to_face(a, b)) <= tol


def facing_each_other(a: SceneObject, b: SceneObject, tol: float = 30.0) -> bool:
    """DORI "facing each other": each front points at the other's centre within ``tol``."""
    return faces(a, b, tol) and faces(b, a, tol)


def back_to_back(a: SceneObject, b: SceneObject, tol: float = 30.0) -> bool:
    """Each object's back (its -front) points at the other's centre within ``tol``."""
    return abs(rotation_to_face(a, b)) >= 180.0 - tol and abs(rotation_to_face(b, a)) >= 180.0 - tol


def relative_orientation_label(
    a: SceneObject, b: SceneObject, *, tol: float = 30.0
) -> Literal["same", "opposite", "perpendicular"] | None:
    """DORI inter-object direction: do a and b face the same way, opposite ways, or at right angles?

    On ``d = |yaw_difference(a, b)|``: ``d <= tol`` -> "same", ``d >= 180 - tol`` ->
    "opposite", ``|d - 90| <= tol`` -> "perpendicular", otherwise None (oblique:
    reject the sample). ``tol = 45`` makes the three bins a full partition (boundaries
    at 45 and 135 go to same/opposite). Positions are ignored: this is about the
    directions the fronts point, not whether they face each other.
    """
    if not 0.0 < tol <= 45.0:
        raise ValueError(f"tol must be in (0, 45], got {tol}")
    d = abs(yaw_difference(a, b))
    if d <= tol:
        return "same"
    if d >= 180.0 - tol:
        return "opposite"
    if abs(d - 90.0) <= tol:
        return "perpendicular"
    return None


# ------------------------------------------------------- object / observer frames


def bearing(origin: PointLike, facing_heading: float, target: PointLike) -> float:
    """Signed ground-plane angle (degrees) of ``target`` as seen from ``origin`` facing
    heading ``facing_heading``: 0 = straight ahead, +90 = to the LEFT, -90 = to the
    RIGHT, 180 = behind (CCW-positive like every object-frame angle)."""
    d = point_of(target) - point_of(origin)
    return signed_angle_xy(direction_from_heading(facing_heading), d)


def _sector(angle: float, margin: float) -> Sector | None:
    m = abs(angle)
    if margin > 0 and (abs(m - 45.0) < margin or abs(m - 135.0) < margin):
        return None
    if m < 45.0:
        return "front"
    if m > 135.0:
        return "behind"
    return "left" if angle > 0 else "right"


def _side(angle: float, margin: float) -> Side | None:
    m = abs(angle)
    if m <= margin or m >= 180.0 - margin or m == 0.0 or m == 180.0:
        return None
    return "left" if angle > 0 else "right"


def bearing_in_frame(anchor: SceneObject, target: PointLike) -> float:
    """Angle of ``target`` in the anchor's own frame (ground plane): 0 = in front of it,
    +90 = on its left (+Y), -90 = on its right, 180 = behind it."""
    return bearing(anchor, heading(anchor), target)


def relation_in_frame(anchor: SceneObject, target: PointLike, *, margin: float = 0.0) -> Sector | None:
    """Where ``target`` lies in the anchor object's own (allocentric) frame.

    Four 90-degree sectors of :func:`bearing_in_frame`: "front" (|b| < 45), "left"
    (45..135 on the +Y side), "right", "behind" (|b| > 135). Exactly 45/135 fall to
    the side. None when within ``margin`` degrees of a sector boundary.
    """
    return _sector(bearing_in_frame(anchor, target), margin)


def side_in_frame(anchor: SceneObject, target: PointLike, *, margin: float = 0.0) -> Side | None:
    """Binary left/right of ``target`` in the anchor's frame; None within ``margin``
    degrees of straight ahead or straight behind."""
    return _side(bearing_in_frame(anchor, target), margin)


def _observer_heading(position: PointLike, facing: PointLike | float) -> float:
    if isinstance(facing, (int, float)) and not isinstance(facing, bool):
        return float(facing)
    return heading_of(point_of(facing) - point_of(position))


def observer_relation(
    position: PointLike, facing: PointLike | float, target: PointLike, *, margin: float = 0.0
) -> Sector | None:
    """PCSR perspective re-anchoring: standing at ``position`` facing ``facing`` (a point or
    object to look at, or a heading in degrees), is ``target`` in front, behind, left or
    right? Same sectors and margin rule as :func:`relation_in_frame`."""
    return _sector(bearing(position, _observer_heading(position, facing), target), margin)


def observer_side(
    position: PointLike, facing: PointLike | float, target: PointLike, *, margin: float = 0.0
) -> Side | None:
    """PCSR T5 "standing at X facing Y, is Z on your left or right?".

    Sign of the bearing: positive (CCW) = "left". None within ``margin`` degrees of the
    facing line (straight ahead or straight behind).
    """
    return _side(bearing(position, _observer_heading(position, facing), target), margin)


# ------------------------------------------------------------------------ moves


def move_camera(
    camera: Camera,
    *,
    forward: float = 0.0,
    right: float = 0.0,
    up: float = 0.0,
    turn: float = 0.0,
    name: str | None = None,
) -> Camera:
    """A new camera after a hypothetical observer move (metres) and turn (degrees).

    ``forward``/``right`` move along the camera's forward/right directions projected on
    the ground (so a pitched camera walks, it does not dive); ``up`` along world +Z.
    Look-at moves with the camera. Then ``turn`` rotates the view about the vertical
    axis through the new position: POSITIVE = CLOCKWISE seen from above = turning
    RIGHT (note: the opposite sign of object yaw). Pitch and all other fields are kept.
    """
    pos = np.asarray(camera.position, dtype=float)
    look = np.asarray(camera.look_at, dtype=float)
    fwd = look - pos
    fh = np.array([fwd[0], fwd[1], 0.0])
    n = float(np.linalg.norm(fh))
    if n < _EPS and (forward or right or turn):
        raise ValueError("camera looks straight up/down: forward/right/turn are undefined")
    if n >= _EPS:
        fh /= n
    rh = np.array([fh[1], -fh[0], 0.0])  # forward turned 90 deg clockwise
    delta = forward * fh + right * rh + np.array([0.0, 0.0, up])
    new_pos = pos + delta
    v = fwd
    if turn:
        t = math.radians(-turn)  # clockwise-positive turn = negative CCW rotation
        c, s = math.cos(t), math.sin(t)
        v = np.array([c * fwd[0] - s * fwd[1], s * fwd[0] + c * fwd[1], fwd[2]])
    new_look = new_pos + v
    return dataclasses.replace(
        camera,
        name=camera.name if name is None else name,
        position=tuple(float(x) for x in new_pos),  # type: ignore[arg-type]
        look_at=tuple(float(x) for x in new_look),  # type: ignore[arg-type]
    )


def camera_turn(before: Camera, after: Camera) -> float:
    """How far the camera turned between two views (degrees, (-180, 180]), POSITIVE =
    clockwise from above = turned right (same sign as ``move_camera(turn=...)``)."""
    return -signed_angle_xy(before.forward(), after.forward())


def camera_motion_direction(
    before: Camera, after: Camera, *, min_distance: float = 0.05, dominance: float = 2.0
) -> Literal["forward", "backward", "left", "right", "up", "down"] | None:
    """LRR camera movement: the direction the camera moved, in the BEFORE camera's
    ground frame (forward/right on the ground, up = world +Z).

    None if it moved less than ``min_distance`` metres or the largest component is not
    at least ``dominance`` times the next one (a diagonal move has no single answer).
    """
    rh, fh = ground_axes(before)
    d = np.asarray(after.position, dtype=float) - np.asarray(before.position, dtype=float)
    comps = {"forward": float(d @ fh), "right": float(d @ rh), "up": float(d[2])}
    return dominant_direction(comps, {"forward": "backward", "right": "left", "up": "down"}, min_distance, dominance)  # type: ignore[return-value]


def ground_unit(v: Sequence[float] | np.ndarray) -> np.ndarray:
    """A direction flattened onto the ground plane as a 3D unit vector (z = 0); raises
    ValueError for a vertical direction."""
    h = np.array([v[0], v[1], 0.0])
    n = float(np.linalg.norm(h))
    if n < _EPS:
        raise ValueError("direction has no horizontal component")
    return h / n


def ground_axes(camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    """(right, forward) of a camera on the ground plane: its forward flattened to a unit
    vector, and that turned 90 degrees clockwise seen from above (the image's right for
    a camera without roll). Both 3D with z = 0; ValueError for a camera looking
    straight up or down. Ground-frame moves and offsets are measured along these."""
    fh = ground_unit(camera.forward())
    return np.array([fh[1], -fh[0], 0.0]), fh


def dominant_direction(
    comps: dict[str, float], negatives: dict[str, str], min_distance: float, dominance: float
) -> str | None:
    """The direction named by the largest of signed components ``comps`` (its key if
    positive, ``negatives[key]`` if negative), or None when the largest is below
    ``min_distance`` or not ``dominance`` times the runner-up (a diagonal move has no
    single answer). Shared by the object- and camera-motion questions."""
    mags = sorted(((abs(v), k) for k, v in comps.items()), reverse=True)
    (m0, k0), (m1, _) = mags[0], mags[1]
    if m0 < min_distance or m0 < dominance * m1:
        return None
    return k0 if comps[k0] > 0 else negatives[k0]


def rotate_about_vertical(obj: SceneObject, degrees: float, *, pivot: PointLike | None = None) -> SceneObject:
    """A copy of ``obj`` rotated about a vertical axis by ``degrees`` (CCW-positive, like yaw).

    Without ``pivot`` it turns in place about the vertical through its origin (bottom
    centre), i.e. ``yaw += degrees`` — exact even with pitch/roll because the pose is
    ``Rz(yaw) Ry(pitch) Rx(roll)``. With a pivot its position also orbits the pivot.
    """
    pos = np.asarray(obj.pose.position, dtype=float)
    if pivot is not None:
        pv = point_of(pivot)
        t = math.radians(degrees)
        c, s = math.cos(t), math.sin(t)
        dx, dy = pos[0] - pv[0], pos[1] - pv[1]
        pos = np.array([pv[0] + c * dx - s * dy, pv[1] + s * dx + c * dy, pos[2]])
    pose = Pose(
        position=(float(pos[0]), float(pos[1]), float(pos[2])),
        yaw=float(wrap180(obj.pose.yaw + degrees)),
        pitch=obj.pose.pitch,
        roll=obj.pose.roll,
    )
    return dataclasses.replace(obj, pose=pose, params=dict(obj.params))


def heading_matches_motion(obj: SceneObject, start: PointLike, end: PointLike, *, tol: float = 30.0) -> bool:
    """LRR object movement: does the object move the way it faces (within ``tol`` degrees)?"""
    d = point_of(end) - point_of(start)
    return abs(signed_angle_xy(front_xy(obj), d)) <= tol


# -------------------------------------------------------------------- distances

DistanceMode = Literal["center", "bbox"]


def bbox_distance(a: SceneObject, b: SceneObject) -> float:
    """Exact minimum distance (metres) between two oriented bounding boxes; 0 if they touch/overlap.

    Solved as a bound-constrained linear least-squares problem over the two boxes'
    local coordinates (min |R_a u + c_a - R_b w - c_b| with u, w inside the half
    extents), which is convex, so the optimum is the true distance for any rotation.
    """
    # Kept per exact inputs (the box distance depends on nothing else): rankings and
    # chains ask the same pairs of a room again and again, each a scipy solve.
    key = struct.pack("18d", *a.pose.position, a.pose.yaw, a.pose.pitch, a.pose.roll, *a.size,
                      *b.pose.position, b.pose.yaw, b.pose.pitch, b.pose.roll, *b.size)
    hit = _BBOX_DISTANCES.get(key)
    if hit is None:
        hit = _bbox_distance(a, b)
        if len(_BBOX_DISTANCES) >= 8192:
            _BBOX_DISTANCES.clear()
        _BBOX_DISTANCES[key] = hit
    return hit


_BBOX_DISTANCES: dict[bytes, float] = {}


def _bbox_distance(a: SceneObject, b: SceneObject) -> float:
    ra, rb = a.pose.rotation(), b.pose.rotation()
    ca = a.position + ra @ np.array([0.0, 0.0, a.size[2] / 2])
    cb = b.position + rb @ np.array([0.0, 0.0, b.size[2] / 2])
    ha, hb = np.asarray(a.size, float) / 2, np.asarray(b.size, float) / 2
    mat = np.hstack([ra, -rb])
    lo = np.concatenate([-ha, -hb])
    hi = np.concatenate([ha, hb])
    hi = np.maximum(hi, lo + 1e-12)  # lsq_linear needs lo < hi even for flat boxes
    from scipy.optimize import lsq_linear  # lazy: a 0.5 s import most callers never need

    res = lsq_linear(mat, cb - ca, bounds=(lo, hi), method="bvls", tol=1e-12)
    d = float(np.linalg.norm(mat @ res.x - (cb - ca)))
    return 0.0 if d < 1e-9 else d


def distance(a: PointLike, b: PointLike, *, mode: DistanceMode = "center") -> float:
    """Euclidean distance in metres: centre-to-centre (``mode="center"``, points allowed)
    or closest bounding-box surfaces (``mode="bbox"``, both must be objects)."""
    if mode == "center":
        return float(np.linalg.norm(point_of(a) - point_of(b)))
    if mode == "bbox":
        if not (isinstance(a, SceneObject) and isinstance(b, SceneObject)):
            raise ValueError("bbox distance needs two SceneObjects")
        return bbox_distance(a, b)
    raise ValueError(f"unknown distance mode {mode!r}; use 'center' or 'bbox'")


def rank_by_distance(
    anchor: PointLike, candidates: Sequence[SceneObject], *, mode: DistanceMode = "center"
) -> list[tuple[SceneObject, float]]:
    """Candidates with their distance to ``anchor``, nearest first (the anchor itself,
    matched by identity or id, is skipped). Ties keep the input order."""
    skip = anchor.id if isinstance(anchor, SceneObject) else None
    out = [(c, distance(anchor, c, mode=mode)) for c in candidates if c is not anchor and c.id != skip]
    out.sort(key=lambda t: t[1])
    return out


def closest(
    anchor: PointLike, candidates: Sequence[SceneObject], *, mode: DistanceMode = "center", margin: float = 0.0
) -> SceneObject | None:
    """The candidate nearest ``anchor``; None if there is none or the runner-up is within
    ``margin`` metres (PCSR uses the second-closest as the hard distractor)."""
    ranked = rank_by_distance(anchor, candidates, mode=mode)
    if not ranked:
        return None
    if len(ranked) > 1 and ranked[1][1] - ranked[0][1] < margin:
        return None
    return ranked[0][0]


def farthest(
    anchor: PointLike, candidates: Sequence[SceneObject], *, mode: DistanceMode = "center", margin: float = 0.0
) -> SceneObject | None:
    """The candidate farthest from ``anchor``; None if none or the runner-up is within ``margin``."""
    ranked = rank_by_distance(anchor, candidates, mode=mode)
    if not ranked:
        return None
    if len(ranked) > 1 and ranked[-1][1] - ranked[-2][1] < margin:
        return None
    return ranked[-1][0]
