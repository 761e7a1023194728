"""SpinBench's metrics as one streaming accumulator: chance-adjusted and Cohen's kappa
per subtype, pairwise consistency and the CCCC..WWWW patterns within variant groups, and
the premise / frame-of-reference gaps.

Memory: per subtype a few counts and a label confusion; per (repeat, group) one small
int — bit 2i says variant i was seen, bit 2i+1 that it was right — since consistency
needs the outcomes of a group together. The formulas are those of :mod:`.metrics`.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from perspecta.suites.spin.metrics import NO_ANSWER, PATTERNS, VARIANT_ORDER


def _rank(v: str) -> tuple[int, str]:
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def cohen_from_counts(pairs: dict[tuple[str, str], int]) -> float:
    """Cohen's kappa from (gold, predicted) label counts (as ``metrics.cohen_kappa``)."""
    labels = sorted({a for a, _ in pairs} | {p for _, p in pairs}, key=repr)
    index = {lab: i for i, lab in enumerate(labels)}
    cm = np.zeros((len(labels), len(labels)))
    for (a, p), c in pairs.items():
        cm[index[a], index[p]] += c
    n = cm.sum()
    p_o = np.trace(cm) / n
    p_e = float(cm.sum(axis=1) @ cm.sum(axis=0)) / (n * n)
    return float("nan") if p_e == 1.0 else float((p_o - p_e) / (1.0 - p_e))


def chance_kappa(correct: float, n: float, inv_k_sum: float) -> float:
    p_e = inv_k_sum / n
    return (correct / n - p_e) / (1.0 - p_e)


def _acc(g: list[float] | None) -> float | None:
    return g[1] / g[0] if g and g[0] else None


class SpinMetrics:
    """One run's SpinBench counters (see the module docstring)."""

    def __init__(self) -> None:
        self.kappa: dict[str, list[float]] = {}  # subtype -> [n, correct, sum 1/k, min k]
        self.confusion: Counter[tuple[str, str, str]] = Counter()
        self.groups: dict[tuple[int, str], int] = {}
        self.gap: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])  # key -> [n, correct, sum 1/k]
        self.variants: dict[str, int] = {v: i for i, v in enumerate(VARIANT_ORDER)}

    def add(self, r: dict[str, Any]) -> None:
        if r["status"] == "failed" or r.get("correct") is None:
            return  # failed requests have no outcome to agree or disagree with
        task, subtype = r["task"], r.get("subtype", "") or ""
        correct = bool(r["correct"])
        n_opt = int(r.get("n_options") or 0)
        md = r.get("metadata") or {}
        sub = subtype or task
        k = self.kappa.get(sub)
        if k is None:
            k = self.kappa[sub] = [0, 0, 0.0, n_opt]
        k[0] += 1
        k[1] += correct
        k[2] += 1.0 / n_opt if n_opt else 0.0
        k[3] = min(k[3], n_opt)
        self.confusion[(sub, str(r.get("answer")), str(r.get("prediction") or NO_ANSWER))] += 1
        group = r.get("group") or ""
        if group:
            self._set(int(r.get("repeat", 0)), group, r.get("variant", "base"), correct)
        if task == "relation_transformation" and isinstance(md.get("premise"), bool):
            self._gap("premise/with" if md["premise"] else "premise/without", correct, n_opt)
        if task in ("dynamic_rotation", "canonical_view") and md.get("domain") == "person":
            frame = {"object": "own", "viewer": "viewer"}.get(md.get("frame_of_reference"))
            if frame:
                self._gap(f"frame_of_reference/{task}/{frame}", correct, n_opt)

    def _set(self, repeat: int, group: str, variant: str, correct: bool) -> None:
        i = self.variants.setdefault(variant, len(self.variants))
        key = (repeat, group)
        mask = self.groups.get(key, 0)
        if mask >> (2 * i) & 1:
            raise ValueError(f"group {group!r} (repeat {repeat}) has two records of variant {variant!r}")
        self.groups[key] = mask | (1 << 2 * i) | (int(correct) << (2 * i + 1))

    def _gap(self, key: str, correct: bool, n_opt: int) -> None:
        g = self.gap[key]
        g[0] += 1
        g[1] += correct
        g[2] += 1.0 / n_opt if n_opt else 0.0

    def merge(self, other: SpinMetrics) -> None:
        for sub, (n, c, inv, kmin) in other.kappa.items():
            k = self.kappa.setdefault(sub, [0, 0, 0.0, kmin])
            k[0] += n
            k[1] += c
            k[2] += inv
            k[3] = min(k[3], kmin)
        self.confusion.update(other.confusion)
        names = sorted(other.variants, key=other.variants.__getitem__)
        for (repeat, group), mask in other.groups.items():
            for i, variant in enumerate(names):
                if mask >> (2 * i) & 1:
                    self._set(repeat, group, variant, bool(mask >> (2 * i + 1) & 1))
        for key, (n, c, inv) in other.gap.items():
            g = self.gap[key]
            g[0] += n
            g[1] += c
            g[2] += inv

    def result(self) -> dict[str, Any]:
        return {"kappa": self.kappa_by_subtype(), "consistency": self.consistency(), "patterns": self.patterns(),
                "gaps": self.gaps()}

    def kappa_by_subtype(self) -> dict[str, Any]:
        if any(v[3] < 2 for v in self.kappa.values()):
            bad = sorted({int(v[3]) for v in self.kappa.values() if v[3] < 2})
            return {"error": f"ValueError: every item needs at least 2 options, got {bad}"}
        confusion: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
        for (sub, a, p), c in self.confusion.items():
            confusion[sub][(a, p)] = c
        out: dict[str, Any] = {"kappa": {}, "cohen_kappa": {}, "accuracy": {}, "n": {}}
        for sub, (n, correct, inv_k, _k) in sorted(self.kappa.items()):
            out["kappa"][sub] = chance_kappa(correct, n, inv_k)
            out["cohen_kappa"][sub] = cohen_from_counts(confusion[sub])
            out["accuracy"][sub] = correct / n
            out["n"][sub] = int(n)
        return out

    def _outcomes(self, mask: int) -> dict[int, bool]:
        return {i: bool(mask >> (2 * i + 1) & 1) for i in range(len(self.variants)) if mask >> (2 * i) & 1}

    def consistency(self) -> dict[str, Any]:
        variants = sorted(self.variants, key=self.variants.__getitem__)
        order = sorted(range(len(variants)), key=lambda i: _rank(variants[i]))
        by_pair: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        per_group = []
        for mask in self.groups.values():
            g = self._outcomes(mask)
            if len(g) < 2:
                continue
            present = [i for i in order if i in g]
            agree = pairs = 0
            for a, b in itertools.combinations(present, 2):
                same = g[a] == g[b]
                cell = by_pair[f"{variants[a]}~{variants[b]}"]
                cell[0] += same
                cell[1] += 1
                agree += same
                pairs += 1
            per_group.append(agree / pairs)
        return {"consistency": float(np.mean(per_group)) if per_group else None, "n_groups": len(per_group),
                "by_pair": {k: v[0] / v[1] for k, v in sorted(by_pair.items())}}

    def patterns(self) -> dict[str, Any]:
        counts = dict.fromkeys(PATTERNS, 0)
        full = sum(1 << 2 * i for i in range(len(VARIANT_ORDER)))
        seen_bits = sum(1 << 2 * i for i in range(len(self.variants)))
        for mask in self.groups.values():
            if mask & seen_bits == full:
                counts["".join("C" if mask >> (2 * i + 1) & 1 else "W" for i in range(len(VARIANT_ORDER)))] += 1
        total = sum(counts.values())
        return {"patterns": counts, "n_groups": total,
                "perfect_rate": (counts["CCCC"] + counts["WWWW"]) / total if total else None}

    def gaps(self) -> dict[str, Any]:
        gap = self.gap
        out: dict[str, Any] = {}
        aw, awo = _acc(gap.get("premise/with")), _acc(gap.get("premise/without"))
        out["premise"] = {"with": aw, "without": awo, "gap": None if aw is None or awo is None else aw - awo}
        for task in ("dynamic_rotation", "canonical_view"):
            ao = _acc(gap.get(f"frame_of_reference/{task}/own"))
            av = _acc(gap.get(f"frame_of_reference/{task}/viewer"))
            out[f"frame_of_reference/{task}"] = {"own": ao, "viewer": av,
                                                  "gap": None if ao is None or av is None else ao - av}
        return out

    def gap_kappa(self, key: str) -> float | None:
        g = self.gap.get(key)
        if not g or not g[0] or g[2] / g[0] >= 1.0:
            return None
        return chance_kappa(g[1], g[0], g[2])
