"""Which render a saved image came from, so its depth can be stored without task changes.

With ``generate --with-depth`` the task context wraps the renderer in :class:`RenderLog`,
which keeps the unit's recent renders. When a task saves an image, the log finds the
render it was made from: tasks save a render as is, with an overlay drawn on it (boxes,
dots, labels), with its background repainted, or flipped/rotated (DORI canonical
orientation). So a render matches when, after one of the eight flips/quarter turns, its
*surface* pixels (finite depth) are nearly all equal to the saved image; among matches the
one agreeing on most surface pixels, then on most pixels overall, wins (a scene rendered
with and without distractors differs exactly where the distractors are). The depth is
transformed the same way. A grid of unscaled renders on a plain background (LRR's 3x3
composite) gets the renders' depths in their cells and "no surface" elsewhere. Any
other image — e.g. views scaled into a collage — gets no depth file, and the reason is
recorded in the manifest.
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

    def render(self, scene: Any, camera: Any, *, color: bool = True, layers: bool = True) -> Any:  # noqa: ARG002
        if not color:  # a mask-only render is never saved, so it is not remembered
            return self._renderer.render(scene, camera, color=False)
        result = self._renderer.render(scene, camera)  # always with layers: the depth is the point
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
            grid = self._grid(rgb)
            if grid is None:
                return None, "not a render or a grid of unscaled renders (e.g. a collage of scaled views)"
            return grid, ""
        return np.ascontiguousarray(found), ""

    def _grid(self, rgb: np.ndarray) -> np.ndarray | None:
        """Depth of ``rgb`` as a grid of whole renders on a uniform background, else None.
        Each cell takes the render agreeing best with it (as :meth:`depth_for` does)."""
        height, width = rgb.shape[:2]
        best: dict[tuple[int, int, int, int], tuple[tuple[float, float], np.ndarray]] = {}
        for r_rgb, r_depth in self._renders:
            h, w = r_rgb.shape[:2]
            if r_rgb.shape[2:] != rgb.shape[2:] or (h, w) == (height, width) or h > height or w > width:
                continue
            surface = np.isfinite(r_depth)
            if not surface.any():
                continue
            for y in range(0, height - h + 1, h):
                for x in range(0, width - w + 1, w):
                    same = np.all(rgb[y:y + h, x:x + w] == r_rgb, axis=-1)
                    score = (float(same[surface].mean()), float(same.mean()))
                    if min(score) >= MIN_SURFACE_AGREEMENT and score > best.get((y, x, h, w), ((0.0, 0.0), None))[0]:
                        best[(y, x, h, w)] = (score, r_depth)
        depth = np.full((height, width), np.inf, dtype=np.float32)
        covered = np.zeros((height, width), dtype=bool)
        for (y, x, h, w), (_, r_depth) in sorted(best.items()):
            if covered[y:y + h, x:x + w].any():
                return None  # overlapping matches: not a clean grid
            depth[y:y + h, x:x + w] = r_depth
            covered[y:y + h, x:x + w] = True
        rest = rgb[~covered]
        if len(best) < 2 or (len(rest) and not np.all(rest == rest[0])):
            return None
        return depth
