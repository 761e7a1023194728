"""Equirectangular panoramas: the pixel convention and the cube-face remap.

Convention (shared with the geometry oracle, see DESIGN.md): width = 2 x height,
longitude 0 at the image centre = the camera's forward direction projected on the
ground plane, longitude increasing to the RIGHT (clockwise seen from above), the
seam at +-180 degrees, latitude +90 at the top row. Pixel coordinates are
continuous with pixel ``i`` covering ``[i, i + 1)``, the same convention as
:meth:`perspecta.world.scene.Camera.project` (so pixel centres sit at ``i + 0.5``).

A panorama is rendered as six 90-degree cube faces from the camera centre and
remapped here in numpy. Faces carry a ``pad``-pixel border (rendered with a slightly
wider field of view) so that every bilinear tap of the remap falls inside a single
face; the lookup table depends only on (width, height, face size, pad) and is cached.
We wrote the remap ourselves instead of using py360convert because we need the
exact same longitude convention as the oracle, nearest-sample lookups for the depth
and instance layers, and a cached table (py360convert recomputes its maps per call).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from perspecta.world.scene import Camera

FACE_NAMES = ("front", "right", "back", "left", "up", "down")

# Rows are the OpenCV camera axes (x right, y down, z forward) of each face, written
# in components along the panorama basis (forward, right, up) — see panorama_basis().
_FACE_AXES = np.array(
    [
        [[0, 1, 0], [0, 0, -1], [1, 0, 0]],  # front
        [[-1, 0, 0], [0, 0, -1], [0, 1, 0]],  # right
        [[0, -1, 0], [0, 0, -1], [-1, 0, 0]],  # back
        [[1, 0, 0], [0, 0, -1], [0, -1, 0]],  # left
        [[0, 1, 0], [1, 0, 0], [0, 0, 1]],  # up (forward at the bottom of the face)
        [[0, 1, 0], [-1, 0, 0], [0, 0, -1]],  # down (forward at the top of the face)
    ],
    dtype=np.float64,
)


def longitude_latitude_to_pixel(
    lon: np.ndarray | float, lat: np.ndarray | float, width: int, height: int
) -> tuple[np.ndarray, np.ndarray]:
    """(longitude, latitude) in degrees -> continuous pixel coordinates (u right, v down).

    Longitude is wrapped to [-180, 180); lon 0 maps to u = width / 2, lon +90 to
    u = 0.75 * width, lat +90 to v = 0 (top), lat -90 to v = height.
    """
    _check_size(width, height)
    lon = np.asarray(lon, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    lon = (lon + 180.0) % 360.0 - 180.0
    u = (lon / 360.0 + 0.5) * width
    v = (0.5 - lat / 180.0) * height
    return u, v


def pixel_to_longitude_latitude(
    u: np.ndarray | float, v: np.ndarray | float, width: int, height: int
) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`longitude_latitude_to_pixel` (degrees; u wraps around the seam)."""
    _check_size(width, height)
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    lon = (u / width - 0.5) * 360.0
    lon = (lon + 180.0) % 360.0 - 180.0
    lat = (0.5 - v / height) * 180.0
    return lon, lat


def panorama_basis(camera: Camera) -> np.ndarray:
    """Rows (forward, right, up) in world coordinates for an equirect camera.

    Forward is the look-at direction projected on the ground plane; right is
    forward x up (so the basis is left-handed, matching "longitude grows to the
    right"). A camera looking straight up or down falls back to its own right axis.
    """
    up = np.array([0.0, 0.0, 1.0])
    fwd = np.asarray(camera.look_at, dtype=float) - np.asarray(camera.position, dtype=float)
    fwd[2] = 0.0
    if np.linalg.norm(fwd) < 1e-9:
        right = camera.rotation_world_to_cam()[0].copy()
        right[2] = 0.0
        if np.linalg.norm(right) < 1e-9:
            right = np.array([0.0, -1.0, 0.0])
        right /= np.linalg.norm(right)
        fwd = np.cross(up, right)
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, up)
    return np.stack([fwd, right, up])


def world_to_longitude_latitude(camera: Camera, points: np.ndarray) -> tuple[np.ndarray, ...]:
    """World points (N, 3) -> (longitude deg, latitude deg, distance m) seen from ``camera``."""
    d = np.atleast_2d(np.asarray(points, dtype=float)) - np.asarray(camera.position, dtype=float)
    local = d @ panorama_basis(camera).T  # components along forward, right, up
    dist = np.linalg.norm(local, axis=1)
    lon = np.degrees(np.arctan2(local[:, 1], local[:, 0]))
    with np.errstate(invalid="ignore", divide="ignore"):
        lat = np.degrees(np.arcsin(np.clip(local[:, 2] / dist, -1.0, 1.0)))
    return lon, lat, dist


def project_equirect(camera: Camera, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World points -> panorama pixel coordinates (N, 2) and Euclidean distance (N,)."""
    lon, lat, dist = world_to_longitude_latitude(camera, points)
    u, v = longitude_latitude_to_pixel(lon, lat, camera.width, camera.height)
    return np.stack([u, v], axis=1), dist


def face_rotations(camera: Camera) -> np.ndarray:
    """(6, 3, 3) world-to-camera (OpenCV) rotations of the cube faces, in FACE_NAMES order."""
    return _FACE_AXES @ panorama_basis(camera)


def face_intrinsics(face_size: int, pad: int) -> np.ndarray:
    """K of a padded face: the central ``face_size`` pixels span exactly 90 degrees."""
    f = face_size / 2.0
    c = (face_size + 2 * pad) / 2.0
    return np.array([[f, 0.0, c], [0.0, f, c], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class EquirectLUT:
    """Flat indices into the stacked padded faces (6, P, P) for every panorama pixel."""

    bilinear_index: np.ndarray  # (4, H*W) int32
    bilinear_weight: np.ndarray  # (4, H*W) float32, sums to 1
    matrix: Any  # scipy.sparse CSR (H*W, 6*P*P): the same bilinear weights, for fast matvecs
    nearest_index: np.ndarray  # (H*W,) int32
    ray_scale: np.ndarray  # (H*W,) float32: Euclidean distance per unit of face-camera z
    width: int
    height: int
    face_size: int
    pad: int


def _face_coordinates(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each unit ray's cube face (the largest forward component) and its face-frame
    coordinates: what ``argmax(d @ forwards.T)`` and ``einsum("nij,nj->ni", axes[face], d)``
    give, bit for bit, without their cost.

    Why: every face axis is a signed unit vector, so each product picks one component of
    ``d`` with its sign (products with 0 are zeros, exact in any order). The matrix product
    went through OpenBLAS, whose threads took ~0.2 s of CPU (and over a second of wall on a
    loaded machine) once per process, before a worker's first panorama; the einsum gathered
    a 3 x 3 matrix per pixel. Only the sign of a zero may differ, and a zero component
    (never the forward one, the largest) only ever enters ``f * 0 / z + p / 2``."""
    col = np.argmax(np.abs(_FACE_AXES), axis=2)  # (6, 3): the component each face axis reads
    sign = np.take_along_axis(_FACE_AXES, col[..., None], axis=2)[..., 0]  # (6, 3): +1 or -1
    forward = np.stack([d[:, col[k, 2]] * sign[k, 2] for k in range(6)], axis=1)
    face = np.argmax(forward, axis=1)
    pc = np.empty_like(d)
    for k in range(6):
        rows = np.flatnonzero(face == k)
        for i in range(3):
            pc[rows, i] = d[rows, col[k, i]] * sign[k, i]
    return face, pc


@lru_cache(maxsize=8)
def equirect_lut(width: int, height: int, face_size: int, pad: int = 1) -> EquirectLUT:
    """Build (once per size) the lookup from panorama pixels to cube-face samples."""
    _check_size(width, height)
    if face_size < 2 or pad < 1:
        raise ValueError(f"need face_size >= 2 and pad >= 1, got {face_size}, {pad}")
    p = face_size + 2 * pad
    u = np.arange(width, dtype=np.float64) + 0.5
    v = np.arange(height, dtype=np.float64) + 0.5
    lon, lat = pixel_to_longitude_latitude(u[None, :], v[:, None], width, height)
    lon, lat = np.radians(lon), np.radians(lat)
    cl = np.cos(lat)
    d = np.stack(
        np.broadcast_arrays(cl * np.cos(lon), cl * np.sin(lon), np.sin(lat)), axis=-1
    ).reshape(-1, 3)
    face, pc = _face_coordinates(d)
    f = face_size / 2.0
    fu = f * pc[:, 0] / pc[:, 2] + p / 2.0  # continuous face pixel coordinates
    fv = f * pc[:, 1] / pc[:, 2] + p / 2.0
    x = fu - 0.5
    y = fv - 0.5
    x0 = np.clip(np.floor(x), 0, p - 2)
    y0 = np.clip(np.floor(y), 0, p - 2)
    wx = np.clip(x - x0, 0.0, 1.0)
    wy = np.clip(y - y0, 0.0, 1.0)
    base = face * p * p
    i00 = base + y0.astype(np.int64) * p + x0.astype(np.int64)
    index = np.stack([i00, i00 + 1, i00 + p, i00 + p + 1]).astype(np.int32)
    weight = np.stack([(1 - wx) * (1 - wy), wx * (1 - wy), (1 - wx) * wy, wx * wy])
    nx = np.clip(np.floor(fu), 0, p - 1).astype(np.int64)
    ny = np.clip(np.floor(fv), 0, p - 1).astype(np.int64)
    nearest = (base + ny * p + nx).astype(np.int32)
    ray_scale = (1.0 / pc[:, 2]).astype(np.float32)  # d is a unit vector
    weight = weight.astype(np.float32)
    for a in (index, weight, nearest, ray_scale):
        a.setflags(write=False)
    n = width * height
    from scipy.sparse import csr_matrix  # lazy: only panoramas need it

    matrix = csr_matrix(
        (weight.T.reshape(-1), index.T.reshape(-1), np.arange(0, 4 * n + 1, 4)),
        shape=(n, 6 * p * p),
    )
    return EquirectLUT(index, weight, matrix, nearest, ray_scale, width, height, face_size, pad)


def remap_colour(lut: EquirectLUT, rgb: np.ndarray) -> np.ndarray:
    """Stacked padded colour faces (6, P, P, 3) -> the panorama's rgb (bilinear): the
    colour part of :func:`remap_faces`, alone for a render that wants no layers."""
    p = lut.face_size + 2 * lut.pad
    if rgb.shape != (6, p, p, 3):
        raise ValueError(f"faces must be (6, {p}, {p}, 3); got {rgb.shape}")
    # scipy's CSR x vector is much faster than x (M, 3) or than fancy-indexing rows
    channels = np.ascontiguousarray(rgb.reshape(-1, 3).T, dtype=np.float32)
    flat = np.empty((lut.height * lut.width, 3), dtype=np.uint8)
    for c in range(3):
        flat[:, c] = np.clip(np.rint(lut.matrix @ channels[c]), 0, 255)
    return flat.reshape(lut.height, lut.width, 3)


def remap_faces(
    lut: EquirectLUT, rgb: np.ndarray | None, zcam: np.ndarray, instance: np.ndarray
) -> tuple[np.ndarray | None, Callable[[], np.ndarray], np.ndarray]:
    """Stacked padded faces (6, P, P, ...) -> panorama rgb, Euclidean depth and ids.

    Colour is bilinear; ids are the nearest face sample. ``zcam`` is each face's
    camera-frame z (np.inf for background): where the four taps lie on one object,
    1 / z is interpolated bilinearly (exact for planar patches, since 1 / z is affine
    in screen space) and converted to the distance along the panorama pixel's own ray;
    elsewhere the nearest sample's z is used along that ray.

    ``rgb`` None (a mask-only render) gives None. The depth comes back as a function that
    computes it when called: it is half of this remap's work and generation reads it
    only with ``--with-depth`` (see :class:`perspecta.render.base.RenderResult`).
    """
    p = lut.face_size + 2 * lut.pad
    if (rgb is not None and rgb.shape != (6, p, p, 3)) or zcam.shape != (6, p, p) or instance.shape != (6, p, p):
        got = None if rgb is None else rgb.shape
        raise ValueError(f"faces must be (6, {p}, {p}[, 3]); got {got}, {zcam.shape}")
    out_rgb = None if rgb is None else remap_colour(lut, rgb)
    z_flat = zcam.reshape(-1)
    hit = np.isfinite(z_flat)
    # background gets id -1 so "all taps share the nearest id" also means "all hit"
    id_flat = np.where(hit, instance.reshape(-1), -1)
    nearest_id = id_flat[lut.nearest_index]
    out_inst = np.maximum(nearest_id, 0).astype(np.int32).reshape(lut.height, lut.width)

    def depth() -> np.ndarray:
        with np.errstate(divide="ignore"):
            inv = np.where(hit, 1.0 / z_flat, 0.0).astype(np.float32)
        same = id_flat[lut.bilinear_index[0]] == nearest_id
        for k in range(1, 4):
            same &= id_flat[lut.bilinear_index[k]] == nearest_id
        inv_acc = lut.matrix @ inv
        z = z_flat[lut.nearest_index]
        with np.errstate(divide="ignore"):
            z = np.where(same, 1.0 / np.where(same, inv_acc, 1.0), z)
        return (z * lut.ray_scale).astype(np.float32).reshape(lut.height, lut.width)

    return out_rgb, depth, out_inst


def _check_size(width: int, height: int) -> None:
    if width <= 0 or height <= 0:
        raise ValueError(f"panorama size must be positive, got {width}x{height}")
