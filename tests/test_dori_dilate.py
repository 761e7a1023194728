"""DORI's tag leader clearance grows the other objects' mask by a square: the separable
running maximum must give exactly the pixels of ``binary_dilation`` with the full square."""

from __future__ import annotations

import numpy as np
from scipy.ndimage import binary_dilation

from perspecta.suites.dori.common import LEADER_CLEARANCE_PX, _dilate


def test_dilate_equals_binary_dilation_with_the_square() -> None:
    rng = np.random.default_rng(3)
    masks = [rng.random((64, 80)) < p for p in (0.0, 0.002, 0.02, 0.3)]
    blob = np.zeros((96, 70), dtype=bool)
    blob[0:9, 30:50] = True  # touching the top edge
    blob[40:90, 60:70] = True  # and the right one
    blob[50, 5] = True
    masks.append(blob)
    for r in (1, 3, LEADER_CLEARANCE_PX):
        square = np.ones((2 * r + 1, 2 * r + 1), dtype=bool)
        for m in masks:
            got = _dilate(m, r)
            assert got.dtype == bool and got.shape == m.shape
            assert np.array_equal(got, binary_dilation(m, structure=square))
