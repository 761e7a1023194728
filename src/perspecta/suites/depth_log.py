"""Which render a saved image came from, so its depth can be stored without task changes.

With ``generate --with-depth`` the task context wraps the renderer in :class:`RenderLog`,
which keeps the unit's recent renders. When a task saves an image, the log finds the
render it was made from: tasks save a render as is, with an overlay drawn on it (boxes,
dots, labels), with its background repainted, or flipped/rotated (DORI canonical
orientation). So a render matches when, after one of the eight flips/quarter turns, its
*surface* pixels (finite depth) are nearly all equal to the saved image; among matches the
one agreeing on most surface pixels, then on most pixels overall, wins (a scene rendered
with and without distractors differs exactly where the distractors are). The depth is
transformed the same way. An image that matches no render — a composite of several
views, such as a grid — gets no depth file, and the reason is recorded in the manifest.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

MIN_SURFACE_AGREEMENT = 0.9  # fraction of surface pixels that must be unchanged
KEEP = 32  # renders remembered per unit (a unit saves its images soon after rendering them)

Transform = Callable[[np.ndarray], np.ndarray]
_TRANSFORMS: list[tuple[str, Transform, bool]] = [  # (name, fn, needs a square image)
    ("identity", lambda a: a, False),
    ("flip_lr", lambda a: a[:, ::-1], False),
    ("flip_ud", lambda a: a[::-1], False),
    ("rot180", lambda a: a[::-1, ::-1], False),
    ("rot90", lambda a: np.rot90(a, 1), True),
    ("rot270", lambda a: np.rot90(a, 3), True),
    ("transpose", lambda a: np.swapaxes(a, 0, 1), True),
    ("antitranspose", lambda a: np.rot90(a, 2).swapaxes(0, 1), True),
]


class RenderLog:
    """A renderer proxy that remembers (rgb, depth) of its last ``KEEP`` renders."""

    def __init__(self, renderer: Any) -> None:
        self._renderer = renderer
        self._renders: deque[tuple[np.ndarray, np.ndarray]] = deque(maxlen=KEEP)

    def render(self, scene: Any, camera: Any) -> Any:
        result = self._renderer.render(scene, camera)
        self._renders.append((result.rgb, result.depth))
        return result

    def __getattr__(self, name: str) -> Any:  # name, version, close, ... of the wrapped renderer
        return getattr(self._renderer, name)

    def depth_for(self, rgb: np.ndarray) -> tuple[np.ndarray | None, str]:
        """(depth on ``rgb``'s pixel grid, "") or (None, why not)."""
        rgb = np.asarray(rgb)
        best: tuple[float, float] | None = None
        found: np.ndarray | None = None
        for r_rgb, r_depth in reversed(self._renders):
            if r_rgb.shape[:2] != rgb.shape[:2] and r_rgb.shape[:2] != rgb.shape[1::-1]:
                continue
            for _, fn, square in _TRANSFORMS:
                if square and r_rgb.shape[0] != r_rgb.shape[1]:
                    continue
                t_rgb = fn(r_rgb)
                if t_rgb.shape != rgb.shape:
                    continue
                same = np.all(t_rgb == rgb, axis=-1)
                surface = np.isfinite(fn(r_depth))
                on_surface = float(same[surface].mean()) if surface.any() else 0.0
                score = (on_surface, float(same.mean()))
                if on_surface >= MIN_SURFACE_AGREEMENT and (best is None or score > best):
                    best, found = score, fn(r_depth)
                if score == (1.0, 1.0):
                    return np.ascontiguousarray(found), ""
        if found is None:
            return None, "not a single render (e.g. a composite of several views)"
        return np.ascontiguousarray(found), ""
