"""Overlays: pixels land where the geometry says, composites place cells correctly."""

from __future__ import annotations

import numpy as np
import pytest

from perspecta.render.overlay import (
    draw_box,
    draw_dot,
    grid_composite,
    label_size_for,
    side_by_side,
)

RED = (255, 0, 0)


def _solid(h: int, w: int, c: tuple[int, int, int]) -> np.ndarray:
    a = np.zeros((h, w, 3), dtype=np.uint8)
    a[:] = c
    return a


def test_draw_box_outline_pixels() -> None:
    img = _solid(64, 64, (0, 0, 0))
    out = draw_box(img, (10, 12, 40, 30), width=2)
    assert (img == 0).all()  # input untouched
    for y, x in [(12, 25), (13, 25), (30, 25), (29, 25), (20, 10), (20, 11), (20, 40), (20, 39)]:
        assert tuple(out[y, x]) == RED, (y, x)
    for y, x in [(20, 25), (14, 25), (20, 12), (11, 25), (20, 41), (50, 50)]:
        assert tuple(out[y, x]) == (0, 0, 0), (y, x)
    # only the outline changed: 2 px thick on a 31 x 19 box
    changed = (out != 0).any(axis=2).sum()
    assert changed == 31 * 19 - 27 * 15


def test_draw_box_label_tag_above_box_and_readable_at_256() -> None:
    img = _solid(256, 256, (90, 90, 90))
    out = draw_box(img, (100, 120, 200, 220), label="A", color=(0, 0, 255))
    tag = out[:120, 100:160]
    blue = (tag == (0, 0, 255)).all(axis=2)
    rows = np.nonzero(blue.any(axis=1))[0]
    assert rows.max() == 119  # the tag sits on the box's top edge
    assert rows.max() - rows.min() + 1 >= 16  # tall enough to read at 256^2
    # text drawn in white (contrast with the blue tag) inside the tag
    assert (tag[rows.min() : rows.max() + 1] == 255).all(axis=2).sum() > 15
    assert label_size_for(256) >= 16


def test_draw_box_label_moves_inside_when_box_touches_top() -> None:
    out = draw_box(_solid(128, 128, (0, 0, 0)), (10, 0, 60, 50), label="cup", color=(0, 255, 0))
    assert (out[2:12, 14:30] == (0, 255, 0)).all(axis=2).any()


def test_draw_dot_centre_rim_and_bad_input() -> None:
    out = draw_dot(_solid(64, 64, (0, 0, 0)), (20, 30), radius=4, color=(0, 200, 0))
    assert tuple(out[30, 20]) == (0, 200, 0)
    assert tuple(out[30, 25]) == (255, 255, 255)  # rim just outside the radius
    assert tuple(out[30, 30]) == (0, 0, 0)
    with pytest.raises(ValueError):
        draw_dot(np.zeros((8, 8), dtype=np.uint8), (1, 1))
    with pytest.raises(ValueError):
        draw_box(_solid(8, 8, (0, 0, 0)), (5, 5, 1, 1))


def test_side_by_side_layout() -> None:
    a, b = _solid(10, 20, (255, 0, 0)), _solid(14, 6, (0, 0, 255))
    out = side_by_side([a, b], gap=4)
    assert out.shape == (14, 30, 3)
    assert tuple(out[0, 0]) == (255, 0, 0) and tuple(out[9, 19]) == (255, 0, 0)
    assert tuple(out[12, 5]) == (255, 255, 255)  # below the shorter image
    assert (out[:, 20:24] == 255).all()  # the gap
    assert tuple(out[13, 29]) == (0, 0, 255)
    labelled = side_by_side([a, b], labels=["view 1", "view 2"], gap=4)
    strip = labelled.shape[0] - 14
    assert strip > 10
    assert tuple(labelled[strip, 0]) == (255, 0, 0)  # images moved below the caption strip
    assert (labelled[:strip] < 128).all(axis=2).any()  # dark caption text


def test_grid_composite_places_cells() -> None:
    a, b = _solid(32, 32, (200, 0, 0)), _solid(32, 32, (0, 0, 200))
    out = grid_composite([a, b], cells=[(0, 2), (1, 1)])
    assert out.shape == (96, 96, 3)
    assert tuple(out[16, 80]) == (200, 0, 0)  # row 0, col 2
    assert tuple(out[48, 48]) == (0, 0, 200)  # row 1, col 1
    for y, x in [(16, 16), (80, 80), (48, 16), (16, 48)]:
        assert tuple(out[y, x]) == (0, 0, 0)
    # fixed cell size: 32 px images shrink into 16 px cells
    small = grid_composite([a, b], cells=[(2, 0), (0, 1)], cell_size=16)
    assert small.shape == (48, 48, 3)
    assert tuple(small[40, 8]) == (200, 0, 0) and tuple(small[8, 24]) == (0, 0, 200)
    # labels: a white tag in the cell's top-left corner, centre untouched
    lab = grid_composite([_solid(128, 128, (0, 120, 0))], cells=[(1, 2)], labels=["1"])
    cell = lab[128:256, 256:384]
    assert (cell[:30, :30] == 255).all(axis=2).sum() > 20
    assert tuple(cell[100, 100]) == (0, 120, 0)
    assert np.array_equal(lab, grid_composite([_solid(128, 128, (0, 120, 0))], [(1, 2)], labels=["1"]))


def test_grid_composite_rejects_bad_cells() -> None:
    a = _solid(8, 8, (1, 2, 3))
    with pytest.raises(ValueError, match="outside"):
        grid_composite([a], cells=[(3, 0)])
    with pytest.raises(ValueError, match="twice"):
        grid_composite([a, a], cells=[(0, 0), (0, 0)])
    with pytest.raises(ValueError, match="cells"):
        grid_composite([a, a], cells=[(0, 0)])
