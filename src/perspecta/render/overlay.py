"""2D overlays drawn after rendering: boxes, dots, labels and multi-image composites.

Marks are drawn with Pillow from *projected* 3D geometry (never read back from the
renderer), so an overlay means the same thing under every renderer. Everything is
deterministic: Pillow's bundled scalable font (``ImageFont.load_default(size=...)``),
no anti-aliased text randomness, fixed resampling filters.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from perspecta import timing

Color = tuple[int, int, int]


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled scalable font at ``size`` pixels (cached)."""
    return ImageFont.load_default(size=max(8, int(size)))


def label_size_for(image_side: int) -> int:
    """Label font size in pixels for an image whose shorter side is ``image_side``.

    ~18 px at 256, so a label stays readable after a VLM resizes a 256 image.
    """
    return max(12, round(image_side / 14))


def _as_image(rgb: np.ndarray) -> Image.Image:
    a = np.asarray(rgb)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {a.dtype} {a.shape}")
    return Image.fromarray(a, mode="RGB")


def _color(c: Sequence[int]) -> Color:
    if len(c) != 3 or not all(0 <= int(v) <= 255 for v in c):
        raise ValueError(f"colour must be three integers in 0..255, got {c!r}")
    r, g, b = (int(v) for v in c)
    return (r, g, b)


def _text_on(fill: Color) -> Color:
    """Black or white, whichever reads better on ``fill``."""
    lum = 0.299 * fill[0] + 0.587 * fill[1] + 0.114 * fill[2]
    return (0, 0, 0) if lum > 140 else (255, 255, 255)


def _draw_label(
    draw: ImageDraw.ImageDraw,
    anchor_xy: tuple[float, float],
    text: str,
    fill: Color,
    size: int,
    bounds: tuple[int, int],
    above: bool = True,
) -> None:
    """A filled tag with ``text`` whose bottom-left (or top-left) corner sits at anchor_xy,
    shifted to stay inside the image."""
    f = font(size)
    l, t, r, b = draw.textbbox((0, 0), text, font=f)
    pad = max(2, size // 6)
    w, h = r - l + 2 * pad, b - t + 2 * pad
    x = anchor_xy[0]
    y = anchor_xy[1] - h if above else anchor_xy[1]
    if y < 0:
        y = anchor_xy[1] if above else 0
    x = min(max(0, x), max(0, bounds[0] - w))
    y = min(max(0, y), max(0, bounds[1] - h))
    x, y = round(x), round(y)
    draw.rectangle((x, y, x + w - 1, y + h - 1), fill=fill)
    draw.text((x + pad - l, y + pad - t), text, font=f, fill=_text_on(fill))


@timing.timed("overlay")
def draw_box(
    rgb: np.ndarray,
    box_xyxy: Sequence[float],
    label: str | None = None,
    color: Sequence[int] = (255, 0, 0),
    width: int | None = None,
) -> np.ndarray:
    """A rectangle outline (x0, y0, x1, y1 in pixels, inclusive) with an optional tag above it.

    Returns a new array; the input is not modified.
    """
    img = _as_image(rgb)
    if len(box_xyxy) != 4:
        raise ValueError(f"box must be (x0, y0, x1, y1), got {box_xyxy!r}")
    x0, y0, x1, y1 = (float(v) for v in box_xyxy)
    if not (x1 >= x0 and y1 >= y0):
        raise ValueError(f"box corners out of order: {box_xyxy!r}")
    col = _color(color)
    side = min(img.size)
    lw = width if width is not None else max(2, round(side / 128))
    draw = ImageDraw.Draw(img)
    draw.rectangle((round(x0), round(y0), round(x1), round(y1)), outline=col, width=lw)
    if label:
        _draw_label(draw, (x0, y0), label, col, label_size_for(side), img.size, above=True)
    return np.asarray(img).copy()


@timing.timed("overlay")
def draw_dot(
    rgb: np.ndarray,
    xy: Sequence[float],
    label: str | None = None,
    color: Sequence[int] = (255, 0, 0),
    radius: float | None = None,
) -> np.ndarray:
    """A filled dot with a white rim at pixel ``xy`` and an optional tag beside it."""
    img = _as_image(rgb)
    if len(xy) != 2:
        raise ValueError(f"xy must be (x, y), got {xy!r}")
    x, y = (float(v) for v in xy)
    col = _color(color)
    side = min(img.size)
    r = radius if radius is not None else max(3.0, side / 64)
    if r <= 0:
        raise ValueError(f"radius must be positive, got {r}")
    draw = ImageDraw.Draw(img)
    rim = max(1, round(r / 3))
    draw.ellipse((x - r - rim, y - r - rim, x + r + rim, y + r + rim), fill=(255, 255, 255))
    draw.ellipse((x - r, y - r, x + r, y + r), fill=col)
    if label:
        _draw_label(draw, (x + r + rim + 2, y - r), label, col, label_size_for(side), img.size,
                    above=False)
    return np.asarray(img).copy()


@timing.timed("overlay")
def side_by_side(
    images: Sequence[np.ndarray],
    labels: Sequence[str] | None = None,
    gap: int = 8,
    background: Sequence[int] = (255, 255, 255),
) -> np.ndarray:
    """Images in one row, top-aligned, ``gap`` pixels apart, each with an optional caption
    in a strip above it (for multi-view items packed into one image)."""
    if not images:
        raise ValueError("side_by_side needs at least one image")
    if labels is not None and len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} images")
    if gap < 0:
        raise ValueError(f"gap must be >= 0, got {gap}")
    ims = [_as_image(a) for a in images]
    bg = _color(background)
    size = label_size_for(min(min(im.size) for im in ims))
    strip = 0
    if labels is not None and any(labels):
        probe = ImageDraw.Draw(ims[0])
        l, t, r, b = probe.textbbox((0, 0), "Ag", font=font(size))
        strip = (b - t) + 2 * max(3, size // 3)
    width = sum(im.width for im in ims) + gap * (len(ims) - 1)
    height = max(im.height for im in ims) + strip
    canvas = Image.new("RGB", (width, height), bg)
    draw = ImageDraw.Draw(canvas)
    x = 0
    fg = _text_on(bg)
    for i, im in enumerate(ims):
        canvas.paste(im, (x, strip))
        if strip and labels is not None and labels[i]:
            f = font(size)
            l, t, r, b = draw.textbbox((0, 0), labels[i], font=f)
            tx = x + (im.width - (r - l)) / 2 - l
            ty = (strip - (b - t)) / 2 - t
            draw.text((round(tx), round(ty)), labels[i], font=f, fill=fg)
        x += im.width + gap
    return np.asarray(canvas).copy()


@timing.timed("overlay")
def grid_composite(
    images: Sequence[np.ndarray],
    cells: Sequence[tuple[int, int]],
    grid: tuple[int, int] = (3, 3),
    cell_size: int | tuple[int, int] | None = None,
    labels: Sequence[str] | None = None,
    background: Sequence[int] = (0, 0, 0),
) -> np.ndarray:
    """LRR-style composite: a ``grid`` = (rows, cols) canvas with each image placed in its
    (row, col) cell, scaled to fit and centred, with an optional tag in the cell's
    top-left corner. ``cell_size`` is (width, height) or a square side; by default the
    largest image's size."""
    if len(images) != len(cells):
        raise ValueError(f"{len(images)} images but {len(cells)} cells")
    if labels is not None and len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} images")
    rows, cols = grid
    if rows <= 0 or cols <= 0:
        raise ValueError(f"grid must be positive, got {grid!r}")
    seen = set()
    for rc in cells:
        r, c = rc
        if not (0 <= r < rows and 0 <= c < cols):
            raise ValueError(f"cell {rc!r} outside a {rows}x{cols} grid")
        if (r, c) in seen:
            raise ValueError(f"cell {rc!r} used twice")
        seen.add((r, c))
    ims = [_as_image(a) for a in images]
    if cell_size is None:
        if not ims:
            raise ValueError("cell_size is required when there are no images")
        cw = max(im.width for im in ims)
        ch = max(im.height for im in ims)
    elif isinstance(cell_size, int):
        cw = ch = cell_size
    else:
        cw, ch = cell_size
    if cw <= 0 or ch <= 0:
        raise ValueError(f"cell_size must be positive, got {cell_size!r}")
    canvas = Image.new("RGB", (cols * cw, rows * ch), _color(background))
    draw = ImageDraw.Draw(canvas)
    size = label_size_for(min(cw, ch))
    for i, (im, (r, c)) in enumerate(zip(ims, cells)):
        scale = min(cw / im.width, ch / im.height)
        if scale != 1.0:
            nw, nh = max(1, round(im.width * scale)), max(1, round(im.height * scale))
            im = im.resize((nw, nh), Image.Resampling.LANCZOS)
        ox = c * cw + (cw - im.width) // 2
        oy = r * ch + (ch - im.height) // 2
        canvas.paste(im, (ox, oy))
        if labels is not None and labels[i]:
            _draw_label(draw, (ox + 2, oy + 2), labels[i], (255, 255, 255), size,
                        (ox + im.width, oy + im.height), above=False)
    return np.asarray(canvas).copy()
