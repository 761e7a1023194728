"""DORI's metrics as one streaming accumulator: soft accuracy, error patterns, the
compound-rotation decomposition and accuracy by number of options.

Every record asked is in the denominators of soft / hard accuracy, Table 2's cells,
accuracy by number of options and the compound decomposition: a failed request or an
unparsed reply is a wrong answer with soft credit 0 (and "both components wrong"). Each
of these figures carries how many of its records failed or were unparsed. The error
patterns alone are over wrong answers that name an option — a confusion needs a
predicted value — and report how many records had no prediction beside them.

Counts only (per question type, per confusion pair, per repeat), so memory grows with
the number of distinct groups, never with records. ``perspecta score`` and the report
both read :meth:`DoriMetrics.result`; the report's DORI section also reads the per
(task, granularity, repeat) cells and the prompt styles seen.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from perspecta.score.records import ScoredRecord
from perspecta.suites.dori import scoring


# a soft-accuracy cell: n asked, hard correct, soft credit, unparsed, failed
N, HARD, SOFT, UNPARSED, FAILED = range(5)


def _cell() -> list[float]:
    return [0, 0, 0.0, 0, 0]


def _asked(cell: list[float], unparsed: int, failed: int) -> dict[str, int]:
    """n asked and how many of them failed or were unparsed."""
    return {"n": int(cell[0]), "failed": int(cell[failed]), "unparsed": int(cell[unparsed])}


class DoriMetrics:
    """One run's DORI counters (see the module docstring)."""

    def __init__(self) -> None:
        self.soft: dict[str, list[float]] = defaultdict(_cell)  # kind -> a soft-accuracy cell
        # (task, granularity, repeat) -> a soft-accuracy cell: Table 2's cells and appendix K's error bars
        self.tg: dict[tuple[str, str, int], list[float]] = defaultdict(_cell)
        self.errors: Counter[tuple[str, str, str]] = Counter()
        self.error_patterns: dict[tuple[str, str, str], list[str]] = {}
        self.no_prediction: list[int] = [0, 0]  # [unparsed, failed]: records with no confusion to count
        # repeat -> [n, order swap, turn right, tip right, both wrong, unparsed, failed]
        self.compound: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
        self.n_options: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # k -> [n, correct, unparsed, failed]
        self.prompt_styles: set[str] = set()  # the items' prompt_style (Table 7's ablation)

    def add(self, r: dict[str, Any]) -> None:
        md = r.get("metadata") or {}
        if md.get("prompt_style"):
            self.prompt_styles.add(str(md["prompt_style"]))
        task, gran, repeat = r["task"], r.get("granularity"), int(r.get("repeat", 0))
        failed, unparsed = r["status"] == "failed", r["status"] == "unparsed"
        correct = not failed and bool(r.get("correct"))  # a failed request is a wrong answer ...
        kind = r.get("subtype") or f"{task}_{gran}"
        scores = r.get("scores") or {}
        if failed:
            soft = 0.0  # ... with no soft credit
        else:
            soft = scores["soft"] if "soft" in scores else scoring.soft_score(ScoredRecord.from_dict(r)).get("soft", 0.0)
        for cell in (self.soft[kind], self.tg[(task, str(gran), repeat)]):
            cell[N] += 1
            cell[HARD] += correct
            cell[SOFT] += soft
            cell[UNPARSED] += unparsed
            cell[FAILED] += failed
        no = self.n_options[int(r.get("n_options") or md.get("n_options", 0))]
        no[0] += 1
        no[1] += correct
        no[2] += unparsed
        no[3] += failed
        self.no_prediction[0] += unparsed
        self.no_prediction[1] += failed
        values = md.get("option_values") or {}
        gold = md.get("answer_value")
        pred_label = r.get("prediction")
        ok = pred_label is not None and pred_label in values
        pred = values[pred_label] if ok else None
        if ok and not correct:
            key = (kind, scoring.text_of(gold), scoring.text_of(pred))
            self.errors[key] += 1
            if key not in self.error_patterns:
                self.error_patterns[key] = scoring.patterns_of(task, gran, gold, pred)
        if task == "compound_rotation" and gran == "granular" and gold is not None:
            c = self.compound[repeat]
            p = pred if ok else None
            c[0] += 1
            c[1] += p is not None and gold[0] != gold[1] and list(p) == [gold[1], gold[0]]
            c[2] += p is not None and p[0] == gold[0]
            c[3] += p is not None and p[1] == gold[1]
            c[4] += p is None or (p[0] != gold[0] and p[1] != gold[1])
            c[5] += unparsed
            c[6] += failed

    def merge(self, other: DoriMetrics) -> None:
        for mine, theirs in ((self.soft, other.soft), (self.tg, other.tg), (self.compound, other.compound),
                             (self.n_options, other.n_options)):
            for k, v in theirs.items():
                cell = mine[k]
                for i, x in enumerate(v):
                    cell[i] += x
        self.errors.update(other.errors)
        self.no_prediction = [a + b for a, b in zip(self.no_prediction, other.no_prediction)]
        for k, v in other.error_patterns.items():
            self.error_patterns.setdefault(k, v)
        self.prompt_styles |= other.prompt_styles

    def result(self) -> dict[str, Any]:
        soft = {k: {**_asked(v, UNPARSED, FAILED), "hard": v[HARD] / v[N], "soft": v[SOFT] / v[N]}
                for k, v in sorted(self.soft.items())}
        per_kind: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
        for (kind, g, p), c in self.errors.items():
            per_kind[kind][(g, p)] += c
        by_type: dict[str, Any] = {}
        totals: Counter[str] = Counter()
        n_errors = 0
        for kind, pairs in sorted(per_kind.items()):
            n = sum(pairs.values())
            n_errors += n
            pattern_count: Counter[str] = Counter()
            for (g, p), c in pairs.items():
                for pat in self.error_patterns[(kind, g, p)]:
                    pattern_count[pat] += c
            totals.update(pattern_count)
            by_type[kind] = {
                "n_errors": n,
                # ties by name, so merged shards list the pairs as one pass does
                "pairs": [{"true": g, "predicted": p, "count": c, "share": c / n,
                           "frequent": c / n > scoring.SYSTEMATIC_SHARE, "patterns": self.error_patterns[(kind, g, p)]}
                          for (g, p), c in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))],
                "patterns": {p: pattern_count[p] / n for p in scoring.PATTERNS if pattern_count[p]},
            }
        comp = [sum(c[i] for c in self.compound.values()) for i in range(7)]
        n = comp[0]
        decomposition = {"n": 0} if n == 0 else {
            **_asked(comp, 5, 6), "order_swap": comp[1] / n, "vertical_axis_turn_accuracy": comp[2] / n,
            "horizontal_axis_tip_accuracy": comp[3] / n, "both_wrong": comp[4] / n}
        return {
            "soft_accuracy": {"soft_accuracy": soft},
            "error_patterns": {"error_patterns": {
                "by_type": by_type, "n_errors": n_errors,
                "pattern_share": {p: (totals[p] / n_errors if n_errors else 0.0) for p in scoring.PATTERNS},
                # records with no prediction (no confusion to count), outside n_errors and the shares
                "unparsed": self.no_prediction[0], "failed": self.no_prediction[1]}},
            "compound_decomposition": {"compound_decomposition": decomposition},
            "accuracy_by_n_options": {"accuracy_by_n_options": {
                str(k): {**_asked(v, 2, 3), "accuracy": v[1] / v[0], "chance": 1.0 / k if k else None}
                for k, v in sorted(self.n_options.items())}},
        }

    def compound_by_repeat(self) -> dict[str, tuple[float, float | None]]:
        """Table 11's shares as mean ± std over repeats (std None with one repeat: one value has
        no spread, and "± 0.0" would claim it was measured)."""
        rows = [c for _rep, c in sorted(self.compound.items()) if c[0]]
        out = {}
        for i, name in enumerate(("order_swap", "vertical_axis_turn_accuracy", "horizontal_axis_tip_accuracy",
                                  "both_wrong"), start=1):
            vals = [c[i] / c[0] for c in rows]
            out[name] = (float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else None)
        return out


def accuracy_facets(r: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Extra accuracy groupings of a DORI record: (task, granularity) — Table 2's cells — and
    the target's object category and source, when the item records them."""
    md = r.get("metadata") or {}
    facets = [("dori_tg", f"{r['task']}/{r.get('granularity')}")]
    facets += [(level, str(md[level])) for level in ("category", "source") if md.get(level) is not None]
    return tuple(facets)
