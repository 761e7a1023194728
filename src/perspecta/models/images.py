"""Image preparation for backends: read, resize and base64-encode each file once.

Peers spend most of their per-item time re-encoding images (see shared ANCHORS.md);
here every (path, input settings) pair is encoded exactly once per process and the
data URL reused. Images already within ``max_side`` are sent byte for byte without
decoding; larger ones are downscaled (Lanczos) and re-encoded as PNG.

Depth beside the image (``eval --input depth-concat``, SpinBench's Depth Input setting)
needs the ground-truth depth map stored next to the image as ``<stem>_depth.png`` by
``generate --with-depth`` (:mod:`perspecta.dataset.depth`; or a float ``.npy``); a
dataset without them is an error. The image is first brought to ``max_side``, then its
depth map, shown as grey inverse depth (near = bright, no surface = black, as
monocular depth estimators display it), is pasted to its right: one image of twice
the width.
"""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path

import numpy as np
from PIL import Image

from perspecta.models.base import InputSettings


class MissingDepthError(FileNotFoundError):
    pass


def depth_path(image: Path) -> Path:
    for suffix in ("_depth.png", "_depth.npy"):
        p = image.with_name(image.stem + suffix)
        if p.is_file():
            return p
    raise MissingDepthError(
        f"depth input requested but {image.name} has no depth map beside it "
        f"({image.stem}_depth.png or .npy); generate the dataset with --with-depth"
    )


def _depth_image(path: Path, size: tuple[int, int]) -> Image.Image:
    from perspecta.dataset.depth import decode, read_codes

    d = np.load(path).astype(np.float64) if path.suffix == ".npy" else decode(read_codes(path)).astype(np.float64)
    finite = np.isfinite(d) & (d > 0)
    inv = np.where(finite, 1.0 / np.where(finite, d, 1.0), 0.0)
    lo, hi = (inv[finite].min(), inv[finite].max()) if finite.any() else (0.0, 1.0)
    g = np.where(finite, 40.0 + 215.0 * (inv - lo) / max(hi - lo, 1e-12), 0.0)
    img = Image.fromarray(np.rint(g).astype(np.uint8), "L")
    return img.convert("RGB").resize(size, Image.Resampling.NEAREST)


def _max_side(settings: InputSettings) -> int | None:
    if isinstance(settings.max_side, str):  # "suite": a Request resolves it from its item's suite
        raise ValueError("image size not resolved: use InputSettings.for_suite(suite) or an explicit max_side")
    return settings.max_side


def load_image(path: Path, settings: InputSettings) -> Image.Image:
    """The PIL image a backend should see under ``settings``."""
    img = Image.open(path).convert("RGB")
    side = _max_side(settings)
    if side and max(img.size) > side:
        img.thumbnail((side, side), Image.Resampling.LANCZOS)
    if settings.depth:
        depth = _depth_image(depth_path(path), img.size)
        both = Image.new("RGB", (img.width * 2, img.height))
        both.paste(img, (0, 0))
        both.paste(depth, (img.width, 0))
        img = both
    return img


def _encode(path: Path, settings: InputSettings) -> tuple[str, bytes]:
    """(mime type, bytes) of the image as sent."""
    if not settings.depth:
        with Image.open(path) as probe:
            fmt, size = probe.format, probe.size
        side = _max_side(settings)
        if fmt in ("PNG", "JPEG") and (not side or max(size) <= side):
            return ("image/png" if fmt == "PNG" else "image/jpeg"), path.read_bytes()
    buf = io.BytesIO()
    load_image(path, settings).save(buf, format="PNG")
    return "image/png", buf.getvalue()


class ImageEncoder:
    """Thread-safe cache of ``data:`` URLs keyed by (resolved path, settings)."""

    def __init__(self) -> None:
        self._urls: dict[tuple[str, InputSettings], str] = {}
        self._lock = threading.Lock()
        self.encodes = 0  # how many files were actually read and encoded (tests check reuse)

    def data_url(self, path: Path, settings: InputSettings) -> str:
        key = (str(Path(path).resolve()), settings)
        url = self._urls.get(key)
        if url is None:
            mime, data = _encode(Path(path), settings)
            url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            with self._lock:
                self._urls[key] = url
                self.encodes += 1
        return url
