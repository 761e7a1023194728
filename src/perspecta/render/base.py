"""The renderer protocol: a scene and one of its cameras in, pixels out.

Every renderer returns the same three aligned layers so that overlays, occlusion
levels and visibility questions never depend on which renderer made the image.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from perspecta.world.scene import Camera, Scene


class RenderResult:
    """``rgb`` (H, W, 3) uint8 sRGB; ``depth`` (H, W) float32 (perspective: camera-frame z
    in metres; equirect: distance from the camera centre in metres; np.inf where nothing
    was hit); ``instance`` (H, W) int32 (0 = background/ground/room, i + 1 =
    scene.objects[i]).

    ``depth`` may be given as a zero-argument function: it is then computed on first
    read and kept. Why: generation reads a render's instance layer (masks, readability)
    but its depth only with ``--with-depth``, and a panorama's depth remap is a sizeable
    part of its read-back; the function holds plain arrays, never renderer state, so a
    late read gives the same values as an eager one."""

    def __init__(self, rgb: np.ndarray, depth: np.ndarray | Callable[[], np.ndarray],
                 instance: np.ndarray) -> None:
        self.rgb = rgb
        self.instance = instance
        if callable(depth):
            self._depth: np.ndarray | None = None
            self._make_depth: Callable[[], np.ndarray] | None = depth
        else:
            self._depth, self._make_depth = depth, None

    @property
    def depth(self) -> np.ndarray:
        if self._depth is None:
            assert self._make_depth is not None
            self._depth, self._make_depth = self._make_depth(), None
        return self._depth

    @depth.setter
    def depth(self, value: np.ndarray) -> None:
        self._depth, self._make_depth = value, None

    def __repr__(self) -> str:
        return f"RenderResult(rgb {self.rgb.shape}, instance {self.instance.shape})"


class Renderer(Protocol):
    name: str

    @property
    def version(self) -> str: ...

    def render(self, scene: Scene, camera: Camera, *, color: bool = True, layers: bool = True) -> RenderResult:
        """Render ``camera`` (perspective or equirect, per ``camera.projection``).
        ``color=False``: the caller reads only ``depth`` / ``instance``; a renderer may skip
        the colour work and return an empty ``rgb`` (the layers must not change).
        ``layers=False``: the caller reads only ``rgb``; a renderer may skip the layers and
        return them empty (the rgb must not change)."""
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
