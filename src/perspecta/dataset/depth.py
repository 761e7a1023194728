"""Ground-truth depth maps stored beside rendered images (``generate --with-depth``).

Each rendered view's depth (from the renderer's own depth buffer, on the image's pixel
grid) is written as a lossless 16-bit greyscale PNG named ``<image stem>_depth.png``
next to the RGB image. A code ``c`` means ``c * SCALE_M`` metres: camera-frame z for
perspective views, distance from the camera centre for equirect panoramas (the
renderer's convention, :class:`perspecta.render.base.RenderResult`). Code 0 means no
surface (sky/background); ``MAX_CODE`` means at or beyond ``MAX_CODE * SCALE_M``. The
manifest's ``depth`` record states this and maps every image to its depth file.

Why 16-bit millimetres: Perspecta scenes span centimetres (DORI studio objects) to
tens of metres (LRR outdoor layouts); 1 mm steps up to 65.5 m keep all of them
without a per-image scale, so codes compare across images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

SUFFIX = "_depth.png"
SCALE_M = 0.001  # metres per code
NO_SURFACE = 0
MAX_CODE = 65535


def depth_rel(image_rel: str) -> str:
    """The dataset-relative depth file of an image: ``<stem>_depth.png`` beside it."""
    p = Path(image_rel)
    return (p.parent / f"{p.stem}{SUFFIX}").as_posix()


def encode(depth: np.ndarray) -> np.ndarray:
    """Metres -> uint16 codes (0 = no surface, saturating at ``MAX_CODE``)."""
    d = np.asarray(depth, dtype=np.float64)
    valid = np.isfinite(d) & (d > 0)
    codes = np.where(valid, np.clip(np.rint(np.where(valid, d, 0.0) / SCALE_M), 1, MAX_CODE), NO_SURFACE)
    return codes.astype(np.uint16)


def decode(codes: np.ndarray) -> np.ndarray:
    """uint16 codes -> metres (float32), ``inf`` where there is no surface."""
    c = np.asarray(codes)
    return np.where(c == NO_SURFACE, np.inf, c.astype(np.float64) * SCALE_M).astype(np.float32)


def write_png(path: Path, depth: np.ndarray) -> None:
    """Write ``depth`` (metres) as a 16-bit PNG, atomically and with stable bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".png.tmp")
    Image.fromarray(encode(depth)).save(tmp, format="PNG", optimize=False, compress_level=6)
    tmp.replace(path)


def read_codes(path: Path) -> np.ndarray:
    """The raw uint16 codes of a depth PNG; ValueError if it is not a 16-bit greyscale PNG."""
    with Image.open(path) as img:
        if img.format != "PNG" or img.mode not in ("I;16", "I;16B", "I;16L"):
            raise ValueError(f"{path}: expected a 16-bit greyscale PNG, got {img.format} mode {img.mode}")
        return np.asarray(img).astype(np.uint16)


def manifest_record(files: dict[str, str], without: dict[str, str]) -> dict[str, Any]:
    """The manifest's ``depth`` entry: encoding, scale, image -> depth file, images lacking one (and why)."""
    return {
        "encoding": "png16",
        "scale_m": SCALE_M,
        "no_surface": NO_SURFACE,
        "max_code": MAX_CODE,
        "meaning": "perspective views: camera-frame z; equirect panoramas: distance from the camera centre",
        "source": "renderer depth buffer (ground truth)",
        "files": dict(sorted(files.items())),
        "without": dict(sorted(without.items())),
    }
