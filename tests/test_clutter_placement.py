"""sample_clutter's placement tries on plain floats must answer exactly as the rects they
stand for: ``footprint(...).inside_box`` and ``any_overlap(footprint(...), placed, gap)``,
near-touching pairs included (the samplers' random streams, so the datasets, depend on it)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from perspecta.world.samplers.clutter import _hits_placed, _inside_area
from perspecta.world.samplers.common import any_overlap, footprint


def _inst(sx: float, sy: float) -> SimpleNamespace:
    return SimpleNamespace(size=np.array([sx, sy, 0.3]))


def _placed(inst: SimpleNamespace, x: float, y: float, yaw: float) -> tuple:
    r = footprint(inst, x, y, yaw)
    hx, hy = float(inst.size[0]) / 2, float(inst.size[1]) / 2
    c, s = math.cos(math.radians(r.yaw)), math.sin(math.radians(r.yaw))
    return (r.cx, r.cy, hx, hy, c, s, math.hypot(hx, hy), r)


def test_tries_answer_as_the_rects_do() -> None:
    rng = np.random.default_rng(11)
    seen = {"outside": 0, "hit": 0, "free": 0, "touching": 0}
    for _ in range(4000):
        ax, ay = rng.uniform(0.3, 2.0, 2)
        gap = float(rng.choice([0.0, 0.02, 0.1]))
        placed = []
        for _k in range(int(rng.integers(0, 5))):
            inst = _inst(*rng.uniform(0.05, 0.8, 2))
            placed.append(_placed(inst, *rng.uniform(-ax, ax, 1), *rng.uniform(-ay, ay, 1), rng.uniform(0, 360)))
        inst = _inst(*rng.uniform(0.05, 0.8, 2))
        hx, hy = float(inst.size[0]) / 2, float(inst.size[1]) / 2
        x, y, yaw = float(rng.uniform(-ax, ax)), float(rng.uniform(-ay, ay)), float(rng.uniform(0, 360))
        if placed and rng.random() < 0.3:  # just touching a placed rect along an axis: the exact fallback
            o = placed[0][7]
            yaw, x = o.yaw, o.cx + (o.hx + hx + gap) * math.cos(math.radians(o.yaw))
            y = o.cy + (o.hx + hx + gap) * math.sin(math.radians(o.yaw))
            seen["touching"] += 1
        r = footprint(inst, x, y, yaw)
        pose = _inside_area(hx, hy, x, y, yaw, float(ax), float(ay))
        assert (pose is not None) == r.inside_box(-float(ax), float(ax), -float(ay), float(ay))
        if pose is None:
            seen["outside"] += 1
            continue
        assert pose[:2] == (r.cx, r.cy)
        want = any_overlap(r, [p[7] for p in placed], gap)
        assert _hits_placed(pose, hx, hy, placed, gap, inst, x, y, yaw) == want
        seen["hit" if want else "free"] += 1
    assert min(seen.values()) > 100, seen
