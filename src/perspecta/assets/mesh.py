"""The in-memory mesh every asset source produces and every renderer consumes.

A mesh is a list of parts; each part is a triangle soup (three vertices per face,
no index buffer) with one base colour and optionally a texture. Triangle soups keep
renderers trivial (flat arrays straight into a vertex buffer) and make per-part
materials, which SH3D's multi-material OBJ files need, a plain loop.

All coordinates are in the asset's *canonical* frame: metres, +X front, +Y left,
+Z up, origin at the bottom centre of the bounding box.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MeshPart:
    positions: np.ndarray  # (N, 3) float32, N divisible by 3
    normals: np.ndarray  # (N, 3) float32, unit length
    color: tuple[float, float, float] = (0.7, 0.7, 0.7)  # sRGB base colour in [0, 1]
    uvs: np.ndarray | None = None  # (N, 2) float32 when textured
    texture: np.ndarray | None = None  # (H, W, 3) uint8 sRGB when textured
    tintable: bool = True  # an object's colour override recolours tintable parts
    name: str = ""

    def __post_init__(self) -> None:
        self.positions = np.ascontiguousarray(self.positions, dtype=np.float32).reshape(-1, 3)
        self.normals = np.ascontiguousarray(self.normals, dtype=np.float32).reshape(-1, 3)
        if self.uvs is not None:
            self.uvs = np.ascontiguousarray(self.uvs, dtype=np.float32).reshape(-1, 2)


@dataclass
class Mesh:
    parts: list[MeshPart] = field(default_factory=list)
    # (the position arrays it was computed from, lo, hi): samplers ask a cached mesh for
    # its extent once per placement try, and furniture meshes have 10^5 vertices
    # (measured: 15% of a PCSR unit recomputing the same bounds)
    _bounds: tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray] | None = field(
        default=None, init=False, repr=False, compare=False)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        arrays = tuple(p.positions for p in self.parts)
        cached = self._bounds
        if cached is None or len(cached[0]) != len(arrays) or any(a is not b for a, b in zip(cached[0], arrays)):
            cached = self._bounds = (arrays, *_column_bounds(np.concatenate(arrays)))
        return cached[1].copy(), cached[2].copy()

    def extent(self) -> np.ndarray:
        lo, hi = self.bounds()
        return hi - lo

    @property
    def n_triangles(self) -> int:
        return sum(len(p.positions) // 3 for p in self.parts)


def _column_bounds(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``points.min(axis=0), points.max(axis=0)`` of an (N, 3) array, ~20x faster: numpy
    reduces a 3-wide axis 0 element by element, a contiguous row in vector steps, so the
    columns are copied into rows first. Min and max pick one of the elements, so the
    values are the same, with one exception: 0.0 and -0.0 compare equal, and which one a
    reduction picks depends on its order. So a zero in the answer is checked: when the
    column's zeros all have one sign, that is the answer whatever the order (canonical
    meshes stand on z = 0, so this is the common case); mixed signs take the original
    reduction."""
    rows = np.ascontiguousarray(points.T)
    lo, hi = rows.min(axis=1), rows.max(axis=1)
    for out in (lo, hi):
        for j in np.flatnonzero(out == 0):
            signs = np.signbit(rows[j][rows[j] == 0])
            if signs.all() or not signs.any():
                out[j] = -0.0 if signs[0] else 0.0
            else:
                return points.min(axis=0), points.max(axis=0)
    return lo, hi


def flat_normals(positions: np.ndarray) -> np.ndarray:
    """Per-vertex normals of a triangle soup, one face normal repeated three times."""
    tri = np.asarray(positions, dtype=np.float64).reshape(-1, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    return np.repeat(n, 3, axis=0).astype(np.float32)


def finish_triangles(
    positions: np.ndarray, normals: np.ndarray | None, uvs: np.ndarray | None, *, mirrored: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Tidy a transformed triangle soup: restore counter-clockwise winding after a
    mirroring transform, and make normals unit length (face normals where the file
    gave none or degenerate ones). Shared by every file-based asset source."""
    if mirrored:
        order = [0, 2, 1]
        positions = positions.reshape(-1, 3, 3)[:, order].reshape(-1, 3)
        if normals is not None:
            normals = normals.reshape(-1, 3, 3)[:, order].reshape(-1, 3)
        if uvs is not None:
            uvs = uvs.reshape(-1, 3, 2)[:, order].reshape(-1, 2)
    if normals is None:
        return positions, flat_normals(positions), uvs
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    good = np.isfinite(length[:, 0]) & (length[:, 0] > 1e-12)
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=good[:, None])
    if not good.all():
        normals[~good] = flat_normals(positions)[~good]
    return positions, normals, uvs
