"""Procedural ground textures: tiles, paving and grass, deterministic from a seed.

Why: on a plain ground an object that moves between two frames leaves no trace but
its own pixels, and a tipped object has nothing to rest against; a patterned ground
gives motion and contact a visible reference. Textures are made with numpy (a random
lattice and arithmetic only, no FFT), so the same seed gives the same bytes; every
texture tiles seamlessly and is mapped onto the ground by world x/y, one repeat per
``4 * pattern_size`` metres.

Both renderers use :func:`ground_texture` and :func:`ground_uvs`, so a scene's ground
looks the same in either.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

GROUND_MATERIALS = ("plain", "tiles", "paving", "grass")
TEXTURE_SIDE = 512  # pixels per repeat
REPEAT_UNITS = 4  # pattern units (tiles, paver widths, grass cells) per texture repeat


def check_material(material: str) -> str:
    if material not in GROUND_MATERIALS:
        raise ValueError(f"unknown ground material {material!r}; choose one of {', '.join(GROUND_MATERIALS)}")
    return material


def _value_noise(rng: np.random.Generator, n: int, cells: int) -> np.ndarray:
    """Seamless (n, n) value noise in [0, 1]: a random ``cells`` x ``cells`` lattice,
    smoothstep-interpolated with wrap-around."""
    lattice = rng.random((cells, cells))
    x = np.arange(n) * cells / n
    i0 = np.floor(x).astype(int)
    f = x - i0
    f = f * f * (3 - 2 * f)
    i1 = (i0 + 1) % cells
    # along x once per lattice row (cells x n), then pick rows: the same products and
    # sums per pixel as interpolating the full (n, n) grids, in a fraction of the work
    rows = lattice[:, i0] * (1 - f)[None, :] + lattice[:, i1] * f[None, :]
    top, bottom = rows[i0], rows[i1]  # fresh arrays: scaled in place
    top *= (1 - f)[:, None]
    bottom *= f[:, None]
    top += bottom
    return top


def _fbm(rng: np.random.Generator, n: int, octaves: tuple[int, ...]) -> np.ndarray:
    """Sum of value-noise octaves (amplitude halves per octave), rescaled to [0, 1]."""
    out = np.zeros((n, n))
    amp, total = 1.0, 0.0
    for cells in octaves:
        out += amp * _value_noise(rng, n, cells)
        total += amp
        amp *= 0.5
    out /= total
    return (out - out.min()) / max(out.max() - out.min(), 1e-9)


def _tiles(rng: np.random.Generator, n: int) -> np.ndarray:
    """4 x 4 square ceramic tiles, each a slightly different shade, with dark grout."""
    base = np.array([0.78, 0.74, 0.66]) if rng.random() < 0.5 else np.array([0.70, 0.71, 0.72])
    cell = n // REPEAT_UNITS
    shade = 1.0 + rng.uniform(-0.10, 0.10, (REPEAT_UNITS, REPEAT_UNITS))
    idx = np.arange(n) // cell
    img = base[None, None, :] * shade[idx][:, idx][..., None]
    img *= (0.93 + 0.07 * _fbm(rng, n, (32, 64)))[..., None]  # glaze mottling
    pos = np.arange(n) % cell
    grout = max(2, cell // 32)
    line = (pos < grout)[:, None] | (pos < grout)[None, :]
    img[line] = np.array([0.32, 0.31, 0.29])
    return img


def _paving(rng: np.random.Generator, n: int) -> np.ndarray:
    """Running-bond pavers (2:1), strongly varied red-brown and grey, with joints."""
    palette = np.array([[0.55, 0.30, 0.22], [0.62, 0.38, 0.28], [0.45, 0.27, 0.21],
                        [0.58, 0.56, 0.52], [0.50, 0.40, 0.34]])
    rows = 2 * REPEAT_UNITS
    ph = n // rows  # paver height (half its length)
    pw = 2 * ph
    y = np.arange(n)[:, None]
    x = np.arange(n)[None, :]
    row = y // ph
    xs = (x + (row % 2) * ph) % n
    col = xs // pw
    ids = rng.integers(0, len(palette), (rows, n // pw))
    shade = rng.uniform(0.85, 1.12, (rows, n // pw))
    img = palette[ids[row, col]] * shade[row, col][..., None]
    img *= (0.88 + 0.12 * _fbm(rng, n, (16, 64, 128)))[..., None]
    joint = max(2, ph // 12)
    line = ((y % ph) < joint) | ((xs % pw) < joint)
    img[np.broadcast_to(line, (n, n))] = np.array([0.28, 0.27, 0.25])
    return img


def _grass(rng: np.random.Generator, n: int) -> np.ndarray:
    """Lawn: light and dark patches at several scales plus per-pixel blades."""
    patches = _fbm(rng, n, (4, 8, 16))
    detail = _fbm(rng, n, (64, 128))
    blades = rng.random((n, n))
    t = np.clip(0.55 * patches + 0.3 * detail + 0.15 * blades, 0, 1)[..., None]
    dark = np.array([0.12, 0.26, 0.07])
    light = np.array([0.45, 0.58, 0.18])
    img = dark + (light - dark) * t
    dry = _fbm(rng, n, (8, 32)) > 0.78  # a few dry, yellower spots
    img[dry] = img[dry] * 0.6 + np.array([0.58, 0.52, 0.28]) * 0.4
    return img


_MAKERS = {"tiles": _tiles, "paving": _paving, "grass": _grass}


@lru_cache(maxsize=16)
def ground_texture(material: str, seed: int) -> np.ndarray:
    """The (TEXTURE_SIDE, TEXTURE_SIDE, 3) sRGB uint8 texture of ``material``."""
    check_material(material)
    if material == "plain":
        raise ValueError("the plain ground has no texture")
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, GROUND_MATERIALS.index(material)])
    img = _MAKERS[material](rng, TEXTURE_SIDE)
    out = np.clip(np.rint(img * 255.0), 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


def ground_uvs(positions: np.ndarray, pattern_size: float) -> np.ndarray:
    """Texture coordinates of ground vertices from their world x/y (one repeat per
    ``REPEAT_UNITS * pattern_size`` metres)."""
    if not pattern_size > 0:
        raise ValueError(f"ground pattern_size must be positive, got {pattern_size}")
    return (np.asarray(positions, dtype=np.float64)[:, :2] / (REPEAT_UNITS * pattern_size)).astype(np.float32)
