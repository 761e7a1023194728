"""Environment maps: the CC0 HDRI skies of Debian's ``blender-data`` as background and ambient.

A scene with ``environment = "hdri:<name>"`` shows the equirectangular HDRI behind its
geometry (instead of the flat sky gradient) and takes the colour of its ambient light
from the map's irradiance, so a forest scene is lit green-grey from below and a sunset
scene warm. The sun (direction, shadows) stays the scene's :class:`Light`;
:func:`sun_direction` estimates where the map's own sun is, for samplers that want
the two to agree.

Why these maps: they are the eight 1024 x 512 CC0 skies by Greg Zaal (HDRI Haven) that
Blender ships as studio lights, packaged by Debian (``blender-data``), so nothing is
downloaded. They are DWAB-compressed half-float EXR, which only the OpenEXR library
decodes (a pure-numpy reader like the one for Blender's own output would have to
implement DWAB's DCT, Huffman and zlib stages); the ``openexr`` wheel (pinned: the
decoder's output feeds the rendered bytes, ~5 MB, numpy only) is the one new
dependency, imported only when a scene asks for an HDRI.

Mapping: Blender's equirectangular convention, so both renderers agree: world
direction d -> u = 0.5 - atan2(d.y, d.x) / 2pi (the image centre looks along +X,
+Y is to its left), v = 0.5 + asin(d.z) / pi (v = 0 at the image's bottom row).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

HDRI_DIR = Path("/usr/share/blender/datafiles/studiolights/world")
# Exposure: the map's 90th-percentile luminance becomes this linear value, so skies and
# walls read as bright but unclipped whatever the map's absolute radiance.
BACKGROUND_LEVEL = 0.85
BACKGROUND_PERCENTILE = 90.0


def hdri_dir() -> Path:
    return Path(os.environ.get("PERSPECTA_HDRI_DIR", HDRI_DIR))


def available_hdris() -> list[str]:
    """Names of the installed HDRI maps (empty when ``blender-data`` is missing)."""
    d = hdri_dir()
    return sorted(p.stem for p in d.glob("*.exr")) if d.is_dir() else []


def parse_environment(spec: str | None) -> str | None:
    """The HDRI name of ``spec`` ("hdri:<name>"), None for no environment, or a clear error."""
    if spec is None or spec == "":
        return None
    kind, _, name = spec.partition(":")
    if kind != "hdri" or not name:
        raise ValueError(f"scene.environment must be 'hdri:<name>' or null, got {spec!r}")
    names = available_hdris()
    if name not in names:
        where = hdri_dir()
        if not names:
            raise ValueError(
                f"environment {spec!r}: no HDRI maps in {where}; install Debian's blender-data "
                "(scripts/setup.sh does) or set PERSPECTA_HDRI_DIR"
            )
        raise ValueError(f"environment {spec!r}: unknown HDRI; choose one of {', '.join(names)}")
    return name


@lru_cache(maxsize=8)
def load_hdri(name: str) -> np.ndarray:
    """The map as (H, W, 3) float32 linear radiance, row 0 = top (zenith)."""
    try:
        import OpenEXR
    except ImportError:
        raise RuntimeError(
            f"environment 'hdri:{name}' needs the OpenEXR Python package (a perspecta "
            "dependency): rerun scripts/setup.sh or pip install openexr==3.5.3"
        ) from None
    path = hdri_dir() / f"{name}.exr"
    with OpenEXR.File(str(path)) as f:
        channels = f.channels()
        if "RGB" in channels:
            rgb = np.asarray(channels["RGB"].pixels, dtype=np.float32)
        else:
            rgb = np.stack([np.asarray(channels[c].pixels, dtype=np.float32) for c in "RGB"], axis=-1)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.shape[1] != 2 * rgb.shape[0]:
        raise ValueError(f"{path}: expected a 2:1 equirectangular RGB image, got {rgb.shape}")
    rgb = np.nan_to_num(np.maximum(rgb, 0.0), posinf=0.0)
    rgb.setflags(write=False)
    return rgb


def _directions(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """World directions (h, w, 3) of pixel centres and their solid angles (h, w)."""
    lat = math.pi / 2 - (np.arange(h) + 0.5) / h * math.pi  # row 0 = top
    u = (np.arange(w) + 0.5) / w
    lon = (0.5 - u) * 2 * math.pi  # inverse of u = 0.5 - lon / 2pi
    cl = np.cos(lat)[:, None]
    d = np.stack([cl * np.cos(lon)[None, :], cl * np.sin(lon)[None, :], np.broadcast_to(np.sin(lat)[:, None], (h, w))], -1)
    omega = np.broadcast_to(cl * (math.pi / h) * (2 * math.pi / w), (h, w))
    return d, omega


def _luminance(rgb: np.ndarray) -> np.ndarray:
    return rgb @ np.array([0.2126, 0.7152, 0.0722], dtype=rgb.dtype)


@dataclass(frozen=True)
class EnvironmentLight:
    """What the renderers need from one map."""

    name: str
    image: np.ndarray  # (H, W, 3) float32 linear, already multiplied by ``exposure``
    exposure: float
    ambient_up: np.ndarray  # linear RGB, luminance 1: colour of light from the upper hemisphere
    ambient_down: np.ndarray  # linear RGB, relative to ambient_up's luminance (ground bounce)


@lru_cache(maxsize=8)
def environment_light(name: str) -> EnvironmentLight:
    """Exposure and ambient colours of one map (cosine-weighted irradiance on +Z / -Z)."""
    rgb = load_hdri(name)
    h, w, _ = rgb.shape
    lum = _luminance(rgb)
    exposure = BACKGROUND_LEVEL / max(float(np.percentile(lum, BACKGROUND_PERCENTILE)), 1e-6)
    small = rgb.reshape(h // 8, 8, w // 8, 8, 3).mean(axis=(1, 3))
    d, omega = _directions(h // 8, w // 8)
    up = (small * (np.maximum(d[..., 2], 0) * omega)[..., None]).sum((0, 1))
    down = (small * (np.maximum(-d[..., 2], 0) * omega)[..., None]).sum((0, 1))
    norm = max(float(_luminance(up)), 1e-9)
    image = np.minimum(rgb * exposure, 60000.0).astype(np.float32)  # fits a half-float texture
    image.setflags(write=False)
    return EnvironmentLight(name, image, exposure, up / norm, np.minimum(down / norm, 1.0))


def sun_direction(name: str) -> tuple[float, float, float]:
    """Unit vector from the map's brightest upper-hemisphere region toward the scene
    (a ``Light.direction``), for samplers that want shadows to match the sky."""
    rgb = load_hdri(name)
    h, w, _ = rgb.shape
    small = _luminance(rgb.reshape(h // 8, 8, w // 8, 8, 3).mean(axis=(1, 3)))[: h // 16]
    i, j = np.unravel_index(int(np.argmax(small)), small.shape)
    d, _ = _directions(h // 8, w // 8)
    v = -d[i, j]
    return (round(float(v[0]), 5), round(float(v[1]), 5), round(float(v[2]), 5))
