"""A four-view sheet of one asset with its canonical axes drawn, to check annotations by eye.

If the red arrow (+X, front) does not come out of the object's face, headlights or
open side, the asset's ``front`` annotation is wrong; if the blue arrow (+Z) does not
point up, its ``up`` is wrong.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from perspecta.assets.library import AssetLibrary
from perspecta.world.scene import Camera, Ground, Pose, Scene, SceneObject

VIEWS = (("front", 0.0), ("left", 90.0), ("back", 180.0), ("right", 270.0))
AXES = (((1.0, 0.0, 0.0), (230, 40, 40), "+X front"), ((0.0, 1.0, 0.0), (40, 170, 40), "+Y left"),
        ((0.0, 0.0, 1.0), (50, 80, 230), "+Z up"))


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[float, float], tip: tuple[float, float],
           colour: tuple[int, int, int], label: str, font: ImageFont.ImageFont, width: int) -> None:
    """An arrow with a head at ``tip`` and its label just beyond the head, so the
    direction reads unambiguously even when the label overlaps the object."""
    draw.line([start, tip], fill=colour, width=width)
    d = np.subtract(tip, start)
    length = float(np.hypot(*d))
    if length < 1.0:  # pointing straight at or away from the camera
        draw.ellipse([tip[0] - 3, tip[1] - 3, tip[0] + 3, tip[1] + 3], outline=colour, width=width)
        draw.text((tip[0] + 5, tip[1] + 5), label, fill=colour, font=font)
        return
    d /= length
    normal = np.array([-d[1], d[0]])
    head = 4.0 * width
    base = np.asarray(tip) - d * head
    draw.polygon([tuple(tip), tuple(base + normal * head / 2), tuple(base - normal * head / 2)], fill=colour)
    where = np.asarray(tip) + d * (head + 2)
    draw.text(tuple(where), label, fill=colour, font=font, anchor=("l" if d[0] >= 0 else "r") + "m")


def thumbnail_sheet(library: AssetLibrary, asset_id: str, out: Path, *, size: int = 256, params: dict | None = None) -> Path:
    from perspecta.render.base import get_renderer

    info = library.get(asset_id)
    params = params or {}
    ext = library.load_mesh(asset_id, params).extent()
    obj = SceneObject(id="obj0", asset_id=asset_id, category=info.category, pose=Pose(), size=tuple(float(v) for v in ext),
                      has_front=info.has_front, symmetric=info.symmetric, params=params)
    radius = float(np.linalg.norm(ext)) / 2 or 1.0
    centre = (0.0, 0.0, float(ext[2]) / 2)
    renderer = get_renderer("gl", library=library)
    tiles = []
    font = ImageFont.load_default(size=max(10, size // 16))
    try:
        for name, azimuth in VIEWS:
            dist = radius / math.tan(math.radians(20)) * 1.15
            a = math.radians(azimuth)
            eye = (centre[0] + dist * math.cos(a) * 0.94, centre[1] + dist * math.sin(a) * 0.94, centre[2] + dist * 0.34)
            cam = Camera(position=eye, look_at=centre, fov_y=40.0, width=size, height=size)
            scene = Scene(scene_id=f"thumb-{name}", seed=0, kind="studio", objects=[obj], cameras=[cam], ground=Ground())
            img = Image.fromarray(renderer.render(scene, cam).rgb)
            draw = ImageDraw.Draw(img)
            origin = np.array(centre)
            length = radius * 0.8
            for axis, colour, label in AXES:
                (u0, v0), (u1, v1) = cam.project(np.stack([origin, origin + np.array(axis) * length]))[0]
                _arrow(draw, (u0, v0), (u1, v1), colour, label, font, width=max(2, size // 96))
            draw.text((6, 4), f"{name} view", fill=(0, 0, 0), font=font)
            tiles.append(img)
    finally:
        renderer.close()
    sheet = Image.new("RGB", (size * 4, size + size // 8), (255, 255, 255))
    for i, t in enumerate(tiles):
        sheet.paste(t, (i * size, size // 8))
    ImageDraw.Draw(sheet).text((6, 2), f"{asset_id}  ({info.category}, front: {'yes' if info.has_front else 'none'})",
                               fill=(0, 0, 0), font=font)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return out


def category_sheet(library: AssetLibrary, category: str, out: Path, *, size: int = 192, columns: int = 6) -> Path:
    """One labelled front-left three-quarter view of every asset of ``category``, to check
    that a person would call each of them by the category's name."""
    from perspecta.render.base import get_renderer

    infos = library.by_category(category)
    if not infos:
        raise ValueError(f"no assets in category {category!r}; see `perspecta assets list`")
    renderer = get_renderer("gl", library=library)
    font = ImageFont.load_default(size=max(10, size // 14))
    tiles = []
    try:
        for info in infos:
            ext = library.load_mesh(info.asset_id, {}).extent()
            obj = SceneObject(id="obj0", asset_id=info.asset_id, category=category, pose=Pose(),
                              size=tuple(float(v) for v in ext), has_front=info.has_front)
            radius = float(np.linalg.norm(ext)) / 2 or 1.0
            centre = (0.0, 0.0, float(ext[2]) / 2)
            dist = radius / math.tan(math.radians(20)) * 1.1
            a = math.radians(35.0)
            eye = (dist * math.cos(a) * 0.94, dist * math.sin(a) * 0.94, centre[2] + dist * 0.3)
            cam = Camera(position=eye, look_at=centre, fov_y=40.0, width=size, height=size)
            scene = Scene(scene_id="sheet", seed=0, kind="studio", objects=[obj], cameras=[cam], ground=Ground())
            img = Image.fromarray(renderer.render(scene, cam).rgb)
            draw = ImageDraw.Draw(img)
            name = info.asset_id.split("/")[-1] if "/" in info.asset_id else info.asset_id
            h = info.real_size[2]
            draw.text((4, 2), name, fill=(0, 0, 0), font=font)
            draw.text((4, size - font.size - 4), f"{h:.2f} m tall", fill=(0, 0, 0), font=font)
            tiles.append(img)
    finally:
        renderer.close()
    rows = (len(tiles) + columns - 1) // columns
    cols = min(columns, len(tiles))
    sheet = Image.new("RGB", (size * cols, size * rows + size // 8), (255, 255, 255))
    for i, t in enumerate(tiles):
        sheet.paste(t, ((i % cols) * size, size // 8 + (i // cols) * size))
    ImageDraw.Draw(sheet).text((6, 2), f"category: {category} ({len(tiles)} assets)", fill=(0, 0, 0), font=font)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(out)
    return out
