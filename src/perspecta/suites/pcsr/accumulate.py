"""PCSR-Bench's strict / relaxed accuracy as a streaming accumulator: per task, per
(task, answer type) and overall, sums of the two per-record scores and a count."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from perspecta.score.records import ScoredRecord
from perspecta.suites.pcsr import scoring


class PcsrMetrics:
    def __init__(self) -> None:
        self.sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])  # key -> [strict, relaxed, n]

    def add(self, r: dict[str, Any]) -> None:
        """Every record counts (a failed or unparsed one scores 0 on both)."""
        scores = r.get("scores") or {}
        s = scores if "strict" in scores else scoring.pcsr_record_scores(ScoredRecord.from_dict(r))
        task = r["task"]
        for key in (task, f"{task}/{r.get('answer_type', 'mcq')}", "overall"):
            acc = self.sums[key]
            acc[0] += s["strict"]
            acc[1] += s["relaxed"]
            acc[2] += 1

    def merge(self, other: PcsrMetrics) -> None:
        for key, v in other.sums.items():
            acc = self.sums[key]
            for i, x in enumerate(v):
                acc[i] += x

    def result(self) -> dict[str, Any]:
        items = sorted(self.sums.items())
        return {"strict_relaxed": {"strict": {k: v[0] / v[2] for k, v in items},
                                   "relaxed": {k: v[1] / v[2] for k, v in items},
                                   "n": {k: int(v[2]) for k, v in items}}}
