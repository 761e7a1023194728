"""LRR-Bench's score as a streaming accumulator: per task key (Clear variants apart) the
records, the correct ones and the ones the paper's parsing rule gets right."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from perspecta.score.records import ScoredRecord
from perspecta.suites.lrr import scoring


class LrrMetrics:
    """One run (so one prompt mode): failed and unparsed records are in the denominator."""

    def __init__(self) -> None:
        self.tasks: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])  # key -> [n, correct, paper-rule]
        self.prompt_mode: str | None = None
        self.error: str | None = None

    def add(self, r: dict[str, Any]) -> None:
        self.prompt_mode = self.prompt_mode or r.get("prompt_mode", "direct")
        answer_type = r.get("answer_type", "mcq")
        if answer_type != "yesno":
            self.error = (f"ValueError: record {r['item_id']}: LRR scores yes/no items, "
                          f"got answer_type {answer_type!r}")
            return
        variant = r.get("variant", "base")
        key = r["task"] if variant in ("", "base") else f"{r['task']}/{variant}"
        paper = (r.get("scores") or {}).get("paper_rule_correct")
        if paper is None:
            paper = scoring.paper_rule(ScoredRecord.from_dict(r)).get("paper_rule_correct", 0.0)
        t = self.tasks[key]
        t[0] += 1
        t[1] += bool(r.get("correct"))
        t[2] += paper

    def merge(self, other: LrrMetrics) -> None:
        self.prompt_mode = self.prompt_mode or other.prompt_mode
        self.error = self.error or other.error
        for key, v in other.tasks.items():
            t = self.tasks[key]
            for i, x in enumerate(v):
                t[i] += x

    def _summary(self, col: int) -> dict[str, Any]:
        acc = {k: 100.0 * v[col] / v[0] for k, v in sorted(self.tasks.items())}
        scores = {k: scoring.task_score(p) for k, p in acc.items()}
        return {"accuracy": {k: round(v, 4) for k, v in acc.items()},
                "score": {k: round(v, 4) for k, v in scores.items()},
                "total": round(sum(scores.values()), 4), "max_total": 100.0 * len(scores),
                "n": {k: int(v[0]) for k, v in sorted(self.tasks.items())}}

    def result(self) -> dict[str, Any]:
        if self.error:
            return {"score": {"error": self.error}}
        return {"score": {self.prompt_mode or "direct": {**self._summary(1), "paper_rule": self._summary(2)}}}
