"""The renderer protocol: a scene and one of its cameras in, pixels out.

Every renderer returns the same three aligned layers so that overlays, occlusion
levels and visibility questions never depend on which renderer made the image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from perspecta.world.scene import Camera, Scene


@dataclass
class RenderResult:
    rgb: np.ndarray  # (H, W, 3) uint8, sRGB
    depth: np.ndarray  # (H, W) float32; perspective: camera-frame z in metres; equirect:
    # distance from the camera centre in metres; np.inf where nothing was hit
    instance: np.ndarray  # (H, W) int32; 0 = background/ground/room, i + 1 = scene.objects[i]


class Renderer(Protocol):
    name: str

    @property
    def version(self) -> str: ...

    def render(self, scene: Scene, camera: Camera, *, color: bool = True) -> RenderResult:
        """Render ``camera`` (perspective or equirect, per ``camera.projection``).
        ``color=False``: the caller reads only ``depth`` / ``instance``; a renderer may skip
        the colour work and return an empty ``rgb`` (the layers must not change)."""
        ...

    def close(self) -> None: ...


RENDERERS = ("gl", "blender")


def check_renderer_name(name: str) -> str:
    """The canonical name for ``name``, or a ValueError listing the choices."""
    aliases = {"gl": "gl", "moderngl": "gl", "default": "gl", "blender": "blender", "cycles": "blender"}
    if name not in aliases:
        raise ValueError(f"unknown renderer {name!r}; choose one of {', '.join(RENDERERS)}")
    return aliases[name]


def get_renderer(name: str = "gl", **kwargs: object) -> Renderer:
    """The one way to obtain a renderer by the name the CLI's ``--renderer`` takes."""
    if check_renderer_name(name) == "gl":
        from perspecta.render.gl import GLRenderer

        return GLRenderer(**kwargs)  # type: ignore[arg-type]
    from perspecta.render.blender import BlenderRenderer

    return BlenderRenderer(**kwargs)  # type: ignore[arg-type]
