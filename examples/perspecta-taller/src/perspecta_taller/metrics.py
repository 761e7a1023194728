"""The suite's own metric, streamed: accuracy per band of the height ratio (how much taller
the taller object is). Every asked record counts; failed and unparsed ones count wrong."""

from __future__ import annotations

from typing import Any

BANDS = ((1.0, 1.2), (1.2, 1.4), (1.4, 1.7), (1.7, 100.0))


def band_of(ratio: float) -> str:
    for lo, hi in BANDS:
        if lo <= ratio < hi:
            return f"{lo:g}-{hi:g}" if hi < 100 else f">={lo:g}"
    return "other"


class RatioAccuracy:
    def __init__(self) -> None:
        self.cells: dict[str, list[int]] = {}  # band -> [asked, correct]

    def add(self, record: dict[str, Any]) -> None:
        ratio = (record.get("metadata") or {}).get("height_ratio")
        cell = self.cells.setdefault(band_of(float(ratio)) if ratio is not None else "unknown", [0, 0])
        cell[0] += 1
        cell[1] += bool(record.get("correct"))

    def merge(self, other: RatioAccuracy) -> None:
        for band, (n, c) in other.cells.items():
            cell = self.cells.setdefault(band, [0, 0])
            cell[0] += n
            cell[1] += c

    def result(self) -> dict[str, Any]:
        return {"by_height_ratio": {band: {"n": n, "accuracy": c / n} for band, (n, c) in sorted(self.cells.items())}}
