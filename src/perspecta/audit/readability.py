"""Per-task distributions of the readability contract (``metadata["readability"]``).

Generators record how readable each item is -- object pixels and box sides, how much of
an object a marker covers, how far an angle sits from its answer-bin edge, how clearly
the winner of a comparison wins. The audit shows the weak end (minimum) and the middle
(median) of each per task, so a dataset whose contract is met only on average is seen.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from perspecta.dataset.item import Item

# quantity -> what a low value means; marker_cover is reported too (high = worse)
QUANTITIES = {
    "object_pixels": "pixels of the smallest named object",
    "object_box_min_side": "shorter side of its box (px)",
    "marker_cover": "share of an object covered by a marker",
    "bin_margin_deg": "degrees from the nearest answer-bin edge",
    "bin_margin_share": "that margin as a share of the bin width",
    "apparent_margin_share": "uncompensated-perspective reading's margin, share of the bin",
    "winner_margin_ratio": "winner's margin over the contract minimum",
}


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def item_quantities(readability: Any) -> dict[str, list[float]]:
    """The values one item contributes (objects give one value each)."""
    out: dict[str, list[float]] = defaultdict(list)
    if not isinstance(readability, dict):
        return out
    objects = readability.get("objects")
    if isinstance(objects, dict):
        for rec in objects.values():
            if not isinstance(rec, dict):
                continue
            if (px := _number(rec.get("pixels"))) is not None:
                out["object_pixels"].append(px)
            box = rec.get("box")
            if isinstance(box, list) and len(box) == 2 and all(_number(v) is not None for v in box):
                out["object_box_min_side"].append(min(float(v) for v in box))
            if (cover := _number(rec.get("marker_cover"))) is not None:
                out["marker_cover"].append(cover)
    bins = readability.get("bin_margin")
    if isinstance(bins, dict) and (deg := _number(bins.get("deg"))) is not None:
        out["bin_margin_deg"].append(deg)
        width = _number(bins.get("bin_width"))
        if width:
            out["bin_margin_share"].append(deg / width)
    apparent = readability.get("apparent_bin_margin")
    if isinstance(apparent, dict) and (deg := _number(apparent.get("deg"))) is not None:
        width = _number(apparent.get("bin_width"))
        if width:
            out["apparent_margin_share"].append(deg / width)
    win = readability.get("winner_margin")
    if isinstance(win, dict):
        value, least = _number(win.get("value")), _number(win.get("min"))
        if value is not None and least:
            out["winner_margin_ratio"].append(value / least)
    return out


def summarise(items: list[Item]) -> dict[str, dict[str, Any]]:
    """``{suite/task: {"items": n, "quantities": {quantity: {n, min, median, max}}}}`` for
    tasks whose items carry ``metadata["readability"]`` (tasks without it are left out)."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    n_items: dict[str, int] = defaultdict(int)
    for it in items:
        r = it.metadata.get("readability")
        if r is None:
            continue
        key = f"{it.suite}/{it.task}"
        n_items[key] += 1
        for q, vs in item_quantities(r).items():
            values[key][q].extend(vs)
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(n_items):
        quantities = {}
        for q in QUANTITIES:
            vs = values[key].get(q)
            if vs:
                a = np.asarray(vs)
                quantities[q] = {"n": len(vs), "min": round(float(a.min()), 4),
                                 "median": round(float(np.median(a)), 4), "max": round(float(a.max()), 4)}
        out[key] = {"items": n_items[key], "quantities": quantities}
    return out
