"""Procedural asset families built from a few primitives, seeded per instance.

Each family is a short builder that turns a ``numpy.random.Generator`` into a
:class:`~perspecta.assets.mesh.Mesh` in the canonical frame (metres, +X front,
+Y left, +Z up, origin at the bottom centre of the bounding box). The seed in
``params["seed"]`` fixes proportions and colours, so a scene stores one integer
and every renderer rebuilds the identical mesh.

Front-bearing families carry cues that read at 256 px from any side (headlights
and grille vs red tail-lights, a face vs hair at the back, an open seat vs a
backrest, a head vs a tail). The symmetric controls (ball, cylinder, box, table)
have no front; questions about their facing are answered "Cannot be determined".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import trimesh

from perspecta.assets.library import AssetInfo
from perspecta.assets.mesh import Mesh, MeshPart, flat_normals

RGB = tuple[float, float, float]
ArrayLike3 = Sequence[float] | np.ndarray

_UNIT_SPHERE = trimesh.creation.icosphere(subdivisions=2)


def _soup(tm: trimesh.Trimesh) -> np.ndarray:
    return np.asarray(tm.vertices, dtype=np.float64)[np.asarray(tm.faces)].reshape(-1, 3)


def _axis_frame(p0: ArrayLike3, p1: ArrayLike3) -> tuple[np.ndarray, np.ndarray, float]:
    """Rotation taking +Z to the direction p0->p1, the midpoint, and the length."""
    a, b = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    d = b - a
    length = float(np.linalg.norm(d))
    if length < 1e-9:
        raise ValueError(f"degenerate segment {a} -> {b}")
    u = d / length
    return _align_z(float(u[0]), float(u[1]), float(u[2])), (a + b) / 2, length


@lru_cache(maxsize=1024)
def _align_z(x: float, y: float, z: float) -> np.ndarray:
    """``align_vectors(+Z, (x, y, z))``, kept per direction: most parts are upright (legs,
    posts, plain cylinders), so one direction recurs in nearly every build. Read-only,
    since every caller shares it."""
    rot = trimesh.geometry.align_vectors([0.0, 0.0, 1.0], [x, y, z])[:3, :3].copy()
    rot.flags.writeable = False
    return rot


@lru_cache(maxsize=1)
def _box_unit() -> np.ndarray:
    tm = trimesh.creation.box()  # corners at +-0.5
    return np.asarray(tm.vertices, dtype=np.float64)[np.asarray(tm.faces)].reshape(-1, 3)


def _box_soup(size: ArrayLike3) -> np.ndarray:
    """``_soup(trimesh.creation.box(extents=size))`` without building a Trimesh (its
    constructor was most of a plain box's build, which scene samplers run for every
    candidate seed): trimesh scales the +-0.5 corners by the extents, the same single
    product per coordinate as here, so the floats are the same."""
    return _box_unit() * np.asarray(size, dtype=np.float64)


@lru_cache(maxsize=8)
def _cylinder_unit(sections: int) -> np.ndarray:
    return _soup(trimesh.creation.cylinder(radius=1.0, height=2.0, sections=sections))


def _cylinder_soup(radius: float, height: float, sections: int) -> np.ndarray:
    """``_soup(trimesh.creation.cylinder(radius, height, sections))`` from a unit template.

    trimesh revolves the profile (0, -h/2), (r, -h/2), (r, h/2), (0, h/2): every x, y is
    (cos, sin) of a fixed angle times 0 or r, every z is +-h/2, and the merged duplicate
    vertices are exact copies. The template (r = 1, h/2 = 1) times (r, r, h/2) is thus the
    same product per coordinate. Outside the sizes where that was checked bit for bit
    (tests/test_procedural.py) trimesh builds it as before."""
    half = abs(float(height)) / 2.0
    r = float(radius)
    # trimesh drops triangles of area under 1e-8 (a cap wedge is ~r² sin(2π/sections) / 2)
    if not (1e-3 <= r <= 100.0 and 1e-3 <= half <= 100.0 and 3 <= sections <= 64):
        return _soup(trimesh.creation.cylinder(radius=radius, height=height, sections=sections))
    return _cylinder_unit(int(sections)) * np.array([r, r, half])


@lru_cache(maxsize=64)
def _capsule_soup_kept(length: float, radius: float) -> np.ndarray:
    p = _soup(trimesh.creation.capsule(height=length, radius=radius, count=[12, 12]))
    p.setflags(write=False)
    return p


def _capsule_soup(length: float, radius: float) -> np.ndarray:
    """``_soup(trimesh.creation.capsule(length, radius, [12, 12]))``, kept per exact
    (length, radius): a family draws one leg or arm size per pair, so half the capsules
    of a person or quadruped repeat one built just before (measured: 60 distinct of 120
    per 20 dogs); trimesh's build was most of a quadruped's. A copy out."""
    return _capsule_soup_kept(length, radius).copy()


class _Builder:
    """Collects named primitive parts; ``finish`` moves the origin to the bottom centre."""

    def __init__(self) -> None:
        self.parts: list[MeshPart] = []

    def _add(
        self,
        name: str,
        pos: np.ndarray,
        nrm: np.ndarray | None,
        color: RGB,
        tint: bool,
        linear: np.ndarray | None = None,
        offset: ArrayLike3 = (0.0, 0.0, 0.0),
    ) -> None:
        lin = np.eye(3) if linear is None else np.asarray(linear, dtype=float)
        p = pos @ lin.T + np.asarray(offset, dtype=float)
        if nrm is None:
            n = flat_normals(p)
        else:  # normals transform with the inverse transpose of the linear map
            n = nrm @ np.linalg.inv(lin)
            n /= np.linalg.norm(n, axis=1, keepdims=True)
        c = tuple(float(np.clip(v, 0.0, 1.0)) for v in color)
        self.parts.append(MeshPart(p, n, color=c, tintable=tint, name=name))  # type: ignore[arg-type]

    def box(self, name: str, size: ArrayLike3, center: ArrayLike3, color: RGB, tint: bool = False) -> None:
        self._add(name, _box_soup(size), None, color, tint, offset=center)

    def ellipsoid(
        self, name: str, radii: ArrayLike3, center: ArrayLike3, color: RGB, tint: bool = False,
        rot: np.ndarray | None = None,
    ) -> None:
        """A smooth-shaded ellipsoid (unit icosphere scaled by ``radii``, then rotated)."""
        lin = np.diag(np.asarray(radii, dtype=float))
        if rot is not None:
            lin = rot @ lin
        p = _soup(_UNIT_SPHERE)
        self._add(name, p, p.copy(), color, tint, lin, center)

    def cylinder(
        self, name: str, p0: ArrayLike3, p1: ArrayLike3, radius: float, color: RGB,
        tint: bool = False, sections: int = 24,
    ) -> None:
        """A cylinder from p0 to p1 with radial side normals and flat caps."""
        rot, mid, length = _axis_frame(p0, p1)
        p = _cylinder_soup(radius, length, sections)
        fn = flat_normals(p).astype(np.float64)
        radial = p * np.array([1.0, 1.0, 0.0])
        radial /= np.maximum(np.linalg.norm(radial, axis=1, keepdims=True), 1e-12)
        n = np.where(np.abs(fn[:, 2:3]) > 0.99, fn, radial)
        self._add(name, p, n, color, tint, rot, mid)

    def capsule(
        self, name: str, p0: ArrayLike3, p1: ArrayLike3, radius: float, color: RGB, tint: bool = False
    ) -> None:
        """A smooth capsule whose axis runs from p0 to p1 (ends bulge out by ``radius``)."""
        rot, mid, length = _axis_frame(p0, p1)
        p = _capsule_soup(float(length), float(radius))
        core = np.zeros_like(p)
        core[:, 2] = np.clip(p[:, 2], -length / 2, length / 2)
        self._add(name, p, p - core, color, tint, rot, mid)

    def hull(self, name: str, points: ArrayLike3, color: RGB, tint: bool = False) -> None:
        """The flat-shaded convex hull of ``points`` (tapered boxes, wedges)."""
        tm = trimesh.convex.convex_hull(np.asarray(points, dtype=float))
        self._add(name, _soup(tm), None, color, tint)

    def cone(self, name: str, base: ArrayLike3, apex: ArrayLike3, radius: float, color: RGB,
             tint: bool = False) -> None:
        rot, mid, length = _axis_frame(base, apex)
        p = _soup(trimesh.creation.cone(radius=radius, height=length, sections=12))
        p[:, 2] -= length / 2
        self._add(name, p, None, color, tint, rot, mid)

    def torus(self, name: str, center: ArrayLike3, axis: ArrayLike3, major: float, minor: float,
              color: RGB, tint: bool = False) -> None:
        c = np.asarray(center, dtype=float)
        rot, _, _ = _axis_frame(c, c + np.asarray(axis, dtype=float))
        p = _soup(trimesh.creation.torus(major, minor, major_sections=24, minor_sections=10))
        self._add(name, p, None, color, tint, rot, c)

    def finish(self) -> Mesh:
        lo = np.min([p.positions.min(axis=0) for p in self.parts], axis=0)
        hi = np.max([p.positions.max(axis=0) for p in self.parts], axis=0)
        shift = np.array([-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]], dtype=np.float32)
        for part in self.parts:
            part.positions = np.ascontiguousarray(part.positions + shift, dtype=np.float32)
        return Mesh(self.parts)


def _pick(rng: np.random.Generator, palette: Sequence[RGB], jitter: float = 0.04) -> RGB:
    """One palette colour with a little per-channel noise, so instances differ subtly."""
    base = np.asarray(palette[int(rng.integers(len(palette)))], dtype=float)
    c = np.clip(base + rng.uniform(-jitter, jitter, 3), 0.0, 1.0)
    return (float(c[0]), float(c[1]), float(c[2]))


def _shade(c: RGB, k: float) -> RGB:
    return (c[0] * k, c[1] * k, c[2] * k)


BLACK: RGB = (0.04, 0.04, 0.045)
TYRE: RGB = (0.07, 0.07, 0.075)
GLASS: RGB = (0.13, 0.17, 0.23)
HEADLIGHT: RGB = (1.0, 0.97, 0.72)
TAILLIGHT: RGB = (0.95, 0.06, 0.04)
WHITE: RGB = (0.95, 0.95, 0.93)

CAR_PAINT: list[RGB] = [
    (0.92, 0.92, 0.9), (0.68, 0.70, 0.73), (0.16, 0.17, 0.19), (0.42, 0.44, 0.47),
    (0.62, 0.07, 0.07), (0.10, 0.22, 0.55), (0.12, 0.38, 0.22), (0.85, 0.55, 0.10),
    (0.30, 0.55, 0.80),
]
SKIN: list[RGB] = [(0.96, 0.80, 0.69), (0.87, 0.67, 0.52), (0.72, 0.52, 0.38), (0.50, 0.34, 0.24),
                   (0.36, 0.24, 0.17)]
HAIR: list[RGB] = [(0.08, 0.06, 0.05), (0.25, 0.15, 0.08), (0.48, 0.30, 0.15), (0.80, 0.65, 0.35),
                   (0.55, 0.55, 0.55)]
CLOTH: list[RGB] = [(0.75, 0.15, 0.15), (0.15, 0.35, 0.70), (0.20, 0.55, 0.30), (0.90, 0.75, 0.20),
                    (0.55, 0.25, 0.60), (0.92, 0.92, 0.9), (0.95, 0.50, 0.15), (0.20, 0.60, 0.65)]
PANTS: list[RGB] = [(0.15, 0.20, 0.35), (0.22, 0.22, 0.24), (0.45, 0.38, 0.28), (0.30, 0.33, 0.40)]
WOOD: list[RGB] = [(0.55, 0.36, 0.20), (0.70, 0.52, 0.32), (0.36, 0.22, 0.12), (0.82, 0.70, 0.52)]
PAINTED: list[RGB] = [(0.85, 0.25, 0.20), (0.20, 0.45, 0.75), (0.25, 0.60, 0.35), (0.92, 0.92, 0.88),
                      (0.95, 0.75, 0.20), (0.30, 0.30, 0.32)]
BRIGHT: list[RGB] = [(0.90, 0.15, 0.15), (0.15, 0.40, 0.85), (0.20, 0.70, 0.30), (0.95, 0.80, 0.15),
                     (0.95, 0.50, 0.10), (0.60, 0.25, 0.70), (0.92, 0.92, 0.90)]


def _car(b: _Builder, rng: np.random.Generator) -> None:
    L, W, H = rng.uniform(3.8, 4.7), rng.uniform(1.7, 1.9), rng.uniform(1.38, 1.62)
    r = rng.uniform(0.30, 0.35)
    paint = _pick(rng, CAR_PAINT)
    z0, zb = 0.6 * r, rng.uniform(0.56, 0.62) * H  # body bottom, belt line
    hood = rng.uniform(0.27, 0.32) * L  # bonnet longer than the boot: the cabin sits back
    b.box("body", (L, W - 0.06, zb - z0), (0, 0, (z0 + zb) / 2), paint, True)
    xf, xr = L / 2 - hood, -L / 2 + rng.uniform(0.35, 0.5)  # cabin foot, front and rear
    zt = H - 0.06
    cabin = [(xf, s * (W / 2 - 0.08), zb) for s in (-1, 1)] + [(xr, s * (W / 2 - 0.08), zb) for s in (-1, 1)]
    cabin += [(xf - 0.75 * (zt - zb) / 0.55, s * (W / 2 - 0.22), zt) for s in (-1, 1)]
    cabin += [(xr + 0.35, s * (W / 2 - 0.22), zt) for s in (-1, 1)]
    b.hull("windows", cabin, GLASS)
    xtf, xtr = xf - 0.75 * (zt - zb) / 0.55, xr + 0.35
    b.box("roof", (xtf - xtr + 0.04, W - 0.40, 0.06), ((xtf + xtr) / 2, 0, zt + 0.03), paint, True)
    for side, s in (("left", 1), ("right", -1)):
        b.box(f"mirror_{side}", (0.12, 0.14, 0.1), (xf - 0.05, s * (W / 2 + 0.02), zb + 0.06), paint, True)
        y = s * (W / 2 - 0.27)
        b.box(f"headlight_bezel_{side}", (0.03, 0.40, 0.18), (L / 2 + 0.005, y, zb - 0.13), BLACK)
        b.box(f"headlight_{side}", (0.04, 0.34, 0.13), (L / 2 + 0.012, y, zb - 0.13), HEADLIGHT)
        b.box(f"taillight_bezel_{side}", (0.03, 0.34, 0.2), (-L / 2 - 0.005, s * (W / 2 - 0.22), zb - 0.12), BLACK)
        b.box(f"taillight_{side}", (0.04, 0.28, 0.15), (-L / 2 - 0.012, s * (W / 2 - 0.22), zb - 0.12), TAILLIGHT)
        # side markers let the front and back read in pure side views too
        ys = s * (W / 2 - 0.02)
        b.box(f"marker_front_{side}", (0.18, 0.03, 0.08), (L / 2 - 0.12, ys, zb - 0.13), (1.0, 0.62, 0.1))
        b.box(f"marker_rear_{side}", (0.18, 0.03, 0.1), (-L / 2 + 0.12, ys, zb - 0.12), TAILLIGHT)
        for end, x in (("front", L / 2 - 0.2 * L), ("rear", -L / 2 + 0.19 * L)):
            yw = s * (W / 2 - 0.11)
            b.cylinder(f"wheel_{end}_{side}", (x, yw - 0.11, r), (x, yw + 0.11, r), r, TYRE)
            b.cylinder(f"hubcap_{end}_{side}", (x, yw, r), (x, yw + s * 0.115, r), 0.55 * r, (0.72, 0.72, 0.74))
    b.box("grille", (0.04, W - 1.02, 0.2), (L / 2 + 0.01, 0, zb - 0.16), BLACK)
    b.box("bumper_front", (0.08, W - 0.1, 0.12), (L / 2, 0, z0 + 0.08), BLACK)
    b.box("plate_rear", (0.03, 0.5, 0.12), (-L / 2 - 0.012, 0, z0 + 0.22), (0.92, 0.90, 0.78))


def _person(b: _Builder, rng: np.random.Generator) -> None:
    H = rng.uniform(1.55, 1.9)
    skin, hair = _pick(rng, SKIN, 0.02), _pick(rng, HAIR, 0.03)
    shirt, pants = _pick(rng, CLOTH), _pick(rng, PANTS)
    r = H * rng.uniform(0.060, 0.066)  # head radius
    zc = H - 1.13 * r  # hair reaches 1.13 r above the head centre
    hip, shoulder = H * rng.uniform(0.48, 0.52), H * 0.815
    sw, hw = H * rng.uniform(0.105, 0.12), H * rng.uniform(0.085, 0.1)  # half shoulder/hip width
    torso = ((0.1, hw, hip - 0.03), (0.11, sw, shoulder - 0.05), (0.08, sw - 0.05, shoulder + 0.01))
    b.hull("torso", [(fx * x, s * y, z) for fx in (-1, 1) for s in (-1, 1) for x, y, z in torso], shirt, True)
    b.cylinder("neck", (0, 0, shoulder - 0.02), (0, 0, zc - 0.6 * r), 0.45 * r, skin)
    b.ellipsoid("head", (r, 0.92 * r, 1.05 * r), (0, 0, zc), skin)
    b.ellipsoid("hair", (1.0 * r, 0.99 * r, 0.95 * r), (-0.14 * r, 0, zc + 0.18 * r), hair)
    for side, s in (("left", 1), ("right", -1)):
        b.ellipsoid(f"face_eye_white_{side}", (0.2 * r,) * 3, (0.80 * r, s * 0.33 * r, zc + 0.12 * r), WHITE)
        b.ellipsoid(f"face_eye_{side}", (0.12 * r,) * 3, (0.96 * r, s * 0.33 * r, zc + 0.12 * r), BLACK)
        b.capsule(f"arm_{side}", (0, s * (sw + 0.035), shoulder - 0.04), (0.06, s * (sw + 0.06), hip - 0.02),
                  0.04 * H / 1.7, shirt, True)
        b.ellipsoid(f"hand_{side}", (0.045, 0.03, 0.06), (0.07, s * (sw + 0.06), hip - 0.09), skin)
        b.capsule(f"leg_{side}", (0, s * hw * 0.55, hip - 0.04), (0, s * hw * 0.6, 0.11), 0.058 * H / 1.7,
                  pants, True)
        b.box(f"foot_{side}", (0.27, 0.1, 0.08), (0.075, s * hw * 0.6, 0.04), BLACK)
    b.ellipsoid("face_nose", (0.22 * r, 0.12 * r, 0.2 * r), (0.98 * r, 0, zc - 0.1 * r), _shade(skin, 0.88))
    b.box("face_mouth", (0.1 * r, 0.42 * r, 0.09 * r), (0.87 * r, 0, zc - 0.45 * r), (0.55, 0.12, 0.12))


def _chair(b: _Builder, rng: np.random.Generator) -> None:
    d, w = rng.uniform(0.42, 0.52), rng.uniform(0.42, 0.52)
    sh, top, t = rng.uniform(0.42, 0.48), rng.uniform(0.80, 0.98), rng.uniform(0.035, 0.05)
    frame = _pick(rng, WOOD if rng.random() < 0.6 else PAINTED)
    cushion = _pick(rng, BRIGHT) if rng.random() < 0.5 else frame
    leg = rng.uniform(0.03, 0.045)
    b.box("seat", (d, w, t), (0, 0, sh - t / 2), cushion, True)
    for fx, fname in ((1, "front"), (-1, "back")):
        for s, side in ((1, "left"), (-1, "right")):
            x, y = fx * (d / 2 - leg / 2), s * (w / 2 - leg / 2)
            zt = top if fx < 0 else sh - t  # the rear legs rise into the backrest posts
            b.box(f"leg_{fname}_{side}", (leg, leg, zt), (x, y, zt / 2), frame, True)
    bz0 = sh + rng.uniform(0.12, 0.2)
    b.box("backrest", (0.03, w - 2 * leg, top - bz0), (-d / 2 + leg / 2, 0, (bz0 + top) / 2), cushion, True)
    b.box("backrest_rail", (leg, w, 0.05), (-d / 2 + leg / 2, 0, top - 0.025), frame, True)
    b.box("stretcher_left", (d - 2 * leg, 0.02, 0.03), (0, w / 2 - leg / 2, 0.15), frame, True)
    b.box("stretcher_right", (d - 2 * leg, 0.02, 0.03), (0, -w / 2 + leg / 2, 0.15), frame, True)


@dataclass(frozen=True)
class _Species:
    """Proportions of a four-legged animal, as (low, high) ranges in metres."""

    body: tuple[tuple[float, float], tuple[float, float], tuple[float, float]]  # length, width, height
    leg: tuple[float, float]  # leg length below the body's underside
    head: tuple[float, float]  # head radius
    neck_up: float  # how far the head rises above the back, in head radii
    neck_fwd: float  # how far the head sits in front of the chest, in head radii
    neck_r: float  # neck radius in head radii
    snout: float  # snout length in head radii (0: none)
    ears: str  # "floppy" | "pointed" | "side"
    tail: tuple[float, float, float]  # length, radius, droop (-1 down .. 1 up)
    coats: tuple[RGB, ...]
    head_coat: RGB | None = None  # a fixed head/leg colour (sheep: dark face)
    snout_r: float = 0.5  # snout half-width in head radii
    snout_drop: float = 0.3  # how far the snout hangs below the eyes' level, in head radii


DOG = _Species(((0.46, 0.54), (0.25, 0.30), (0.24, 0.28)), (0.19, 0.25), (0.085, 0.1), 1.6, 0.2, 0.6, 0.9,
               "floppy", (0.2, 0.026, 0.7),
               ((0.55, 0.35, 0.18), (0.82, 0.62, 0.32), (0.12, 0.10, 0.09), (0.90, 0.86, 0.78), (0.45, 0.42, 0.40)))
CAT = _Species(((0.30, 0.36), (0.12, 0.15), (0.13, 0.16)), (0.11, 0.14), (0.055, 0.065), 1.2, 0.2, 0.6, 0.35,
               "pointed", (0.22, 0.016, 0.75),
               ((0.92, 0.55, 0.2), (0.25, 0.25, 0.27), (0.10, 0.10, 0.10), (0.85, 0.83, 0.80), (0.55, 0.45, 0.35)))
HORSE_COATS: tuple[RGB, ...] = ((0.45, 0.26, 0.13), (0.20, 0.12, 0.08), (0.75, 0.72, 0.68), (0.10, 0.09, 0.08),
                              (0.58, 0.32, 0.15))
SHEEP = _Species(((0.85, 1.0), (0.50, 0.58), (0.50, 0.58)), (0.32, 0.38), (0.10, 0.115), 0.5, 0.6, 1.0, 0.9,
                 "side", (0.12, 0.05, -0.6),
                 ((0.93, 0.91, 0.85), (0.85, 0.80, 0.70), (0.96, 0.95, 0.92)), head_coat=(0.12, 0.11, 0.10))


def _quadruped(b: _Builder, rng: np.random.Generator, sp: _Species) -> None:
    """Body, four legs, neck and head at +X (eyes, snout, nose, ears), tail at -X."""
    bl, bw, bh = (rng.uniform(*r) for r in sp.body)
    leg, hr = rng.uniform(*sp.leg), rng.uniform(*sp.head)
    coat = _pick(rng, sp.coats, 0.03)
    dark = sp.head_coat or _shade(coat, 0.6)
    head_c = sp.head_coat or coat
    zb = leg + bh / 2  # body centre height
    b.ellipsoid("body", (bl / 2, bw / 2, bh / 2), (0, 0, zb), coat, True)
    lr = 0.17 * bw if sp.head_coat is None else 0.09 * bw
    for fx, fname in ((1, "front"), (-1, "back")):
        for s, side in ((1, "left"), (-1, "right")):
            x, y = fx * bl * 0.32, s * bw * 0.28
            b.capsule(f"leg_{fname}_{side}", (x, y, zb), (x, y, lr), lr, sp.head_coat or coat, sp.head_coat is None)
    hx, hz = bl / 2 + sp.neck_fwd * hr, zb + bh / 2 + sp.neck_up * hr * 0.6
    b.capsule("neck", (bl * 0.36, 0, zb + bh * 0.1), (hx - 0.4 * hr, 0, hz - 0.2 * hr), sp.neck_r * hr, coat, True)
    b.ellipsoid("head", (1.05 * hr, 0.85 * hr, 0.9 * hr), (hx, 0, hz), head_c, sp.head_coat is None)
    if sp.snout > 0:
        sl = sp.snout * hr
        sr, sz = sp.snout_r * hr, hz - sp.snout_drop * hr
        b.ellipsoid("snout", (sl / 2 + 0.3 * hr, sr, 0.9 * sr), (hx + 0.55 * hr + sl / 2, 0, sz), head_c,
                    sp.head_coat is None)
        b.ellipsoid("nose", (0.18 * hr, 0.6 * sr, 0.4 * sr), (hx + 0.8 * hr + sl, 0, sz + 0.12 * hr), BLACK)
    for s, side in ((1, "left"), (-1, "right")):
        eye = (hx + 0.78 * hr, s * 0.42 * hr, hz + 0.28 * hr)
        b.ellipsoid(f"eye_white_{side}", (0.2 * hr,) * 3, eye, WHITE)
        b.ellipsoid(f"eye_{side}", (0.13 * hr,) * 3, (eye[0] + 0.1 * hr, eye[1], eye[2]), BLACK)
        if sp.ears == "pointed":
            b.cone(f"ear_{side}", (hx - 0.2 * hr, s * 0.5 * hr, hz + 0.6 * hr),
                   (hx - 0.25 * hr, s * 0.62 * hr, hz + 1.35 * hr), 0.28 * hr, dark)
        elif sp.ears == "floppy":
            b.ellipsoid(f"ear_{side}", (0.3 * hr, 0.12 * hr, 0.6 * hr), (hx - 0.2 * hr, s * 0.9 * hr, hz - 0.1 * hr),
                        dark)
        else:
            b.ellipsoid(f"ear_{side}", (0.22 * hr, 0.5 * hr, 0.12 * hr), (hx - 0.2 * hr, s * 1.1 * hr, hz + 0.3 * hr),
                        dark)
    tl, tr, up = sp.tail
    t0 = np.array([-bl * 0.46, 0, zb + bh * 0.25])
    direction = np.array([-np.sqrt(1 - up * up), 0, up])
    b.capsule("tail", t0, t0 + direction * tl * rng.uniform(0.85, 1.15), tr, dark if sp.head_coat is None else coat)


def _ring(centre: ArrayLike3, ry: float, rz: float, n: int = 10, dx: float = 0.0) -> list[tuple[float, float, float]]:
    """Points of an upright ellipse in the y-z plane around ``centre`` (for hulls)."""
    cx, cy, cz = (float(c) for c in centre)
    return [(cx + dx * math.cos(2 * math.pi * k / n), cy + ry * math.cos(2 * math.pi * k / n),
             cz + rz * math.sin(2 * math.pi * k / n)) for k in range(n)]


def _horse(b: _Builder, rng: np.random.Generator) -> None:
    """A horse, built to read as one and not as a big dog: long thin legs with dark
    hooves, a deep barrel, a long neck rising forward at ~50 degrees, a long narrow head
    angled down to the muzzle, a dark mane along the neck and a long hanging tail.
    Withers ~1.45-1.6 m, ~2.5 m from muzzle to tail."""
    bl, bw, bh = rng.uniform(1.45, 1.65), rng.uniform(0.42, 0.5), rng.uniform(0.55, 0.64)
    leg = rng.uniform(0.82, 0.92)  # ground to the belly
    coat = _pick(rng, HORSE_COATS, 0.03)
    dark = _shade(coat, 0.35) if sum(coat) > 0.6 else (0.05, 0.045, 0.04)
    zb = leg + bh / 2
    b.ellipsoid("body", (bl / 2, bw / 2, bh / 2), (0, 0, zb), coat, True)
    b.ellipsoid("body_chest", (0.3, bw / 2 * 0.95, bh / 2 * 0.95), (bl * 0.34, 0, zb + 0.02), coat, True)
    b.ellipsoid("body_rump", (0.32, bw / 2, bh / 2 * 0.98), (-bl * 0.32, 0, zb + 0.03), coat, True)
    for fx, fname in ((1, "front"), (-1, "back")):
        for s, side in ((1, "left"), (-1, "right")):
            x, y = fx * bl * 0.34, s * bw * 0.26
            b.capsule(f"leg_{fname}_{side}_upper", (x, y, zb - 0.05), (x - fx * 0.03, y, leg * 0.55), 0.085, coat, True)
            b.capsule(f"leg_{fname}_{side}", (x - fx * 0.03, y, leg * 0.6), (x, y, 0.1), 0.045, coat, True)
            b.cylinder(f"leg_{fname}_{side}_hoof", (x + 0.01, y, 0.0), (x + 0.01, y, 0.1), 0.06, dark)
    # neck: a tapered hull from the chest up and forward to the poll
    rise = rng.uniform(0.6, 0.7)
    base = np.array([bl * 0.38, 0.0, zb + bh * 0.1])
    poll = base + np.array([rise * 0.7, 0.0, rise])
    b.hull("neck", _ring(base, 0.17, 0.24, dx=0.08) + _ring(poll, 0.09, 0.11, dx=0.04), coat, True)
    # head: long and narrow, from the poll forward and down to the muzzle
    muzzle = poll + np.array([0.42, 0.0, -0.3]) * rng.uniform(0.95, 1.08)
    b.hull("head", _ring(poll + np.array([0.04, 0, 0.02]), 0.11, 0.12, dx=0.06) + _ring(muzzle, 0.075, 0.085, dx=0.05),
           coat, True)
    tip = muzzle + np.array([0.05, 0.0, -0.01])
    b.ellipsoid("nose", (0.04, 0.065, 0.05), tip, dark)
    for s, side in ((1, "left"), (-1, "right")):
        eye = poll + np.array([0.14, s * 0.1, 0.0])
        b.ellipsoid(f"eye_white_{side}", (0.03, 0.025, 0.028), eye, WHITE)
        b.ellipsoid(f"eye_{side}", (0.022, 0.02, 0.022), eye + np.array([0.008, s * 0.01, 0]), BLACK)
        ear = poll + np.array([-0.02, s * 0.06, 0.1])
        b.cone(f"ear_{side}", ear, ear + np.array([-0.02, s * 0.02, 0.14]), 0.035, coat)
    # mane along the top of the neck, and a forelock
    crest = [(base[0] - 0.12, 0.0, zb + bh / 2 + 0.02), (poll[0] - 0.06, 0.0, poll[2] + 0.1)]
    b.hull("mane", [(x, s * 0.05, z + dz) for x, _, z in crest for s in (-1, 1) for dz in (-0.09, 0.05)], dark)
    # tail: from the top of the rump, hanging down in a long thick switch
    t0 = np.array([-bl / 2 - 0.02, 0.0, zb + bh * 0.3])
    t1 = t0 + np.array([-0.16, 0.0, -0.18])
    t2 = t1 + np.array([-0.06, 0.0, -rng.uniform(0.55, 0.7)])
    b.capsule("tail", t0, t1, 0.05, dark)
    b.hull("tail_switch", _ring(t1, 0.06, 0.05, dx=0.04) + _ring(t2, 0.09, 0.04, dx=0.07), dark)


def _ball(b: _Builder, rng: np.random.Generator) -> None:
    r = rng.uniform(0.11, 0.3)
    b.ellipsoid("ball", (r, r, r), (0, 0, r), _pick(rng, BRIGHT), True)


def _cylinder(b: _Builder, rng: np.random.Generator) -> None:
    r, h = rng.uniform(0.15, 0.35), rng.uniform(0.4, 1.1)
    b.cylinder("cylinder", (0, 0, 0), (0, 0, h), r, _pick(rng, BRIGHT), True, sections=32)


def _box(b: _Builder, rng: np.random.Generator) -> None:
    s = rng.uniform(0.3, 0.7, 3)
    b.box("box", s, (0, 0, s[2] / 2), _pick(rng, BRIGHT + [(0.72, 0.56, 0.38)]), True)


def _table(b: _Builder, rng: np.random.Generator) -> None:
    d, w = rng.uniform(0.7, 0.9), rng.uniform(1.0, 1.6)
    h, t, leg = rng.uniform(0.72, 0.78), rng.uniform(0.03, 0.05), rng.uniform(0.04, 0.06)
    c = _pick(rng, WOOD + PAINTED[3:4])
    b.box("top", (d, w, t), (0, 0, h - t / 2), c, True)
    for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        b.box("leg", (leg, leg, h - t), (sx * (d / 2 - 0.05), sy * (w / 2 - 0.05), (h - t) / 2), c, True)


def _mug(b: _Builder, rng: np.random.Generator) -> None:
    r, h = rng.uniform(0.038, 0.05), rng.uniform(0.085, 0.11)
    c = _pick(rng, BRIGHT)
    b.cylinder("body", (0, 0, 0), (0, 0, h), r, c, True, sections=32)
    b.cylinder("inside", (0, 0, h - 0.012), (0, 0, h + 0.0005), 0.85 * r, (0.18, 0.10, 0.06), sections=32)
    b.torus("handle", (0, -r, h * 0.5), (1, 0, 0), 0.3 * h, 0.16 * r, c, True)


FamilyBuilder = Callable[[_Builder, np.random.Generator], None]


@dataclass(frozen=True)
class Family:
    build: FamilyBuilder
    has_front: bool
    symmetric: bool
    description: str


FAMILIES: dict[str, Family] = {
    "car": Family(_car, True, False, "saloon car: headlights and grille at +X, red tail-lights at -X"),
    "person": Family(_person, True, False, "standing person: face and feet toward +X, hair at the back"),
    "chair": Family(_chair, True, False, "dining chair: open seat at +X, backrest at -X"),
    "dog": Family(lambda b, g: _quadruped(b, g, DOG), True, False, "dog: head at +X, tail at -X"),
    "cat": Family(lambda b, g: _quadruped(b, g, CAT), True, False, "cat: head at +X, tail up at -X"),
    "horse": Family(_horse, True, False, "horse: long legs, long neck and head at +X, mane, hanging tail at -X"),
    "figure": Family(lambda b, g: _quadruped(b, g, SHEEP), True, False,
                     "sheep-like animal figure with a dark face at +X (a heading target)"),
    "ball": Family(_ball, False, True, "plain ball"),
    "cylinder": Family(_cylinder, False, True, "plain upright cylinder"),
    "box": Family(_box, False, True, "plain box"),
    "table": Family(_table, False, True, "plain four-legged table"),
    "mug": Family(_mug, False, False, "mug with a handle on its right (-Y): asymmetric but frontless"),
}


def _seed(params: dict[str, Any] | None) -> int:
    seed = (params or {}).get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"procedural params['seed'] must be an int, got {seed!r}")
    if seed < 0:
        raise ValueError(f"procedural params['seed'] must be >= 0, got {seed}")
    return int(seed)


def build(family: str, seed: int = 0) -> Mesh:
    """Build one instance of ``family``; the same seed always gives the same mesh."""
    if family not in FAMILIES:
        raise KeyError(f"unknown procedural family {family!r}; choose from {sorted(FAMILIES)}")
    b = _Builder()
    FAMILIES[family].build(b, np.random.default_rng(_seed({"seed": seed})))
    return b.finish()


@lru_cache(maxsize=4096)
def _extent(family: str, seed: int) -> tuple[float, float, float]:
    e = build(family, seed).extent()
    return (round(float(e[0]), 4), round(float(e[1]), 4), round(float(e[2]), 4))


class ProceduralSource:
    """The built-in families as an :class:`~perspecta.assets.library.AssetSource`."""

    name = "proc"

    def list(self) -> list[AssetInfo]:
        return [
            AssetInfo(
                asset_id=f"proc:{fam}",
                category=fam,
                source=self.name,
                size=_extent(fam, 0),
                has_front=spec.has_front,
                symmetric=spec.symmetric,
                license="CC0-1.0",
                attribution="Perspecta procedural",
                name=fam,
                extra={"description": spec.description, "params": {"seed": "int >= 0 (default 0)"}},
            )
            for fam, spec in FAMILIES.items()
        ]

    def _family(self, info: AssetInfo) -> str:
        prefix, _, fam = info.asset_id.partition(":")
        if prefix != self.name or fam not in FAMILIES:
            raise KeyError(f"{info.asset_id!r} is not a procedural asset; choose from {sorted(FAMILIES)}")
        return fam

    def load(self, info: AssetInfo, params: dict[str, Any]) -> Mesh:
        return build(self._family(info), _seed(params))

    def size_for(self, info: AssetInfo, params: dict[str, Any] | None = None) -> tuple[float, float, float]:
        """The native extent of one seeded instance (``info.size`` is seed 0's)."""
        return _extent(self._family(info), _seed(params))
