"""SpinBench's metrics as one streaming accumulator: chance-adjusted and Cohen's kappa
per subtype, pairwise consistency and the CCCC..WWWW patterns within variant groups, and
the premise / frame-of-reference gaps.

Every record asked is in every denominator: a failed request or an unparsed reply is a
wrong answer (a W in its group, :data:`~.metrics.NO_ANSWER` for Cohen's kappa), and each
figure carries how many of its records were failed or unparsed, so coverage stays visible.

Memory: per subtype a few counts and a label confusion; per (repeat, group) one small
int — four bits per variant: seen, right, unparsed, failed — since consistency needs the
outcomes of a group together. The formulas are those of :mod:`.metrics`.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from perspecta.suites.spin.metrics import (
    NO_ANSWER,
    PATTERNS,
    VARIANT_ORDER,
    chance_kappa,
    cohen_kappa,
    agree,
    group_consistency,
    pattern,
)

_STRIDE = 4  # bits per variant in a group's mask
_SEEN, _RIGHT, _UNPARSED, _FAILED = 1, 2, 4, 8


def _outcome(bits: int) -> bool | None:
    """A variant's outcome for consistency: right, wrong, or None when it has no answer."""
    return None if bits & (_FAILED | _UNPARSED) else bool(bits & _RIGHT)


def _rank(v: str) -> tuple[int, str]:
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def _acc(g: list[float] | None) -> float | None:
    return g[1] / g[0] if g and g[0] else None


def _asked(g: list[float] | None) -> dict[str, int]:
    """n asked, and how many of them failed or were unparsed, of a gap cell."""
    return {"n": int(g[0]), "failed": int(g[4]), "unparsed": int(g[3])} if g else {"n": 0, "failed": 0, "unparsed": 0}


class SpinMetrics:
    """One run's SpinBench counters (see the module docstring)."""

    def __init__(self) -> None:
        self.kappa: dict[str, list[float]] = {}  # subtype -> [n, correct, sum 1/k, min k, unparsed, failed]
        self.confusion: Counter[tuple[str, str, str]] = Counter()
        self.groups: dict[tuple[int, str], int] = {}
        # key -> [n, correct, sum 1/k, unparsed, failed]
        self.gap: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0, 0, 0])
        self.variants: dict[str, int] = {v: i for i, v in enumerate(VARIANT_ORDER)}

    def add(self, r: dict[str, Any]) -> None:
        task, subtype = r["task"], r.get("subtype", "") or ""
        status = r["status"]
        failed, unparsed = status == "failed", status == "unparsed"
        correct = not failed and bool(r.get("correct"))  # a failed request is a wrong answer
        n_opt = int(r.get("n_options") or 0)
        md = r.get("metadata") or {}
        sub = subtype or task
        k = self.kappa.get(sub)
        if k is None:
            k = self.kappa[sub] = [0, 0, 0.0, n_opt, 0, 0]
        k[0] += 1
        k[1] += correct
        k[2] += 1.0 / n_opt if n_opt else 0.0
        k[3] = min(k[3], n_opt)
        k[4] += unparsed
        k[5] += failed
        self.confusion[(sub, str(r.get("answer")), str(r.get("prediction") or NO_ANSWER))] += 1
        bits = _SEEN | (_RIGHT * correct) | (_UNPARSED * unparsed) | (_FAILED * failed)
        group = r.get("group") or ""
        if group:
            self._set(int(r.get("repeat", 0)), group, r.get("variant", "base"), bits)
        if task == "relation_transformation" and isinstance(md.get("premise"), bool):
            self._gap("premise/with" if md["premise"] else "premise/without", bits, n_opt)
        if task in ("dynamic_rotation", "canonical_view") and md.get("domain") == "person":
            frame = {"object": "own", "viewer": "viewer"}.get(md.get("frame_of_reference"))
            if frame:
                self._gap(f"frame_of_reference/{task}/{frame}", bits, n_opt)

    def _set(self, repeat: int, group: str, variant: str, bits: int) -> None:
        i = self.variants.setdefault(variant, len(self.variants))
        key = (repeat, group)
        mask = self.groups.get(key, 0)
        if mask >> (_STRIDE * i) & _SEEN:
            raise ValueError(f"group {group!r} (repeat {repeat}) has two records of variant {variant!r}")
        self.groups[key] = mask | bits << (_STRIDE * i)

    def _gap(self, key: str, bits: int, n_opt: int) -> None:
        g = self.gap[key]
        g[0] += 1
        g[1] += bool(bits & _RIGHT)
        g[2] += 1.0 / n_opt if n_opt else 0.0
        g[3] += bool(bits & _UNPARSED)
        g[4] += bool(bits & _FAILED)

    def merge(self, other: SpinMetrics) -> None:
        for sub, (n, c, inv, kmin, unparsed, failed) in other.kappa.items():
            k = self.kappa.setdefault(sub, [0, 0, 0.0, kmin, 0, 0])
            k[0] += n
            k[1] += c
            k[2] += inv
            k[3] = min(k[3], kmin)
            k[4] += unparsed
            k[5] += failed
        self.confusion.update(other.confusion)
        names = sorted(other.variants, key=other.variants.__getitem__)
        for (repeat, group), mask in other.groups.items():
            for i, variant in enumerate(names):
                bits = mask >> (_STRIDE * i) & 0xF
                if bits & _SEEN:
                    self._set(repeat, group, variant, bits)
        for key, v in other.gap.items():
            g = self.gap[key]
            for i, x in enumerate(v):
                g[i] += x

    def result(self) -> dict[str, Any]:
        return {"kappa": self.kappa_by_subtype(), "consistency": self.consistency(), "patterns": self.patterns(),
                "gaps": self.gaps()}

    def kappa_by_subtype(self) -> dict[str, Any]:
        """Per subtype over every record asked: chance-corrected and Cohen's kappa, accuracy,
        n, and how many of the n failed or were unparsed (both count wrong)."""
        if any(v[3] < 2 for v in self.kappa.values()):
            bad = sorted({int(v[3]) for v in self.kappa.values() if v[3] < 2})
            return {"error": f"ValueError: every item needs at least 2 options, got {bad}"}
        confusion: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
        for (sub, a, p), c in self.confusion.items():
            confusion[sub][(a, p)] = c
        out: dict[str, Any] = {"kappa": {}, "cohen_kappa": {}, "accuracy": {}, "n": {}, "failed": {}, "unparsed": {}}
        for sub, (n, correct, inv_k, _k, unparsed, failed) in sorted(self.kappa.items()):
            out["kappa"][sub] = chance_kappa(correct, n, inv_k)
            out["cohen_kappa"][sub] = cohen_kappa(confusion[sub])
            out["accuracy"][sub] = correct / n
            out["n"][sub] = int(n)
            out["failed"][sub] = int(failed)
            out["unparsed"][sub] = int(unparsed)
        return out

    def _variant_bits(self, mask: int) -> dict[int, int]:
        """variant index -> its bits, for the variants a group's mask has seen."""
        return {i: b for i in range(len(self.variants)) if (b := mask >> (_STRIDE * i) & 0xF) & _SEEN}

    def consistency(self) -> dict[str, Any]:
        """Mean pairwise consistency over groups with 2+ variants (a pair with a failed or
        unparsed variant never agrees, see :func:`.metrics.agree`), overall and per
        augmentation pair; with the records those groups hold and how many of them failed
        or were unparsed."""
        variants = sorted(self.variants, key=self.variants.__getitem__)
        order = sorted(range(len(variants)), key=lambda i: _rank(variants[i]))
        by_pair: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        per_group = []
        counts = Counter()
        for mask in self.groups.values():
            g = self._variant_bits(mask)
            if len(g) < 2:
                continue
            present = [i for i in order if i in g]
            outcome = {i: _outcome(g[i]) for i in present}
            for a, b in itertools.combinations(present, 2):
                cell = by_pair[f"{variants[a]}~{variants[b]}"]
                cell[0] += agree(outcome[a], outcome[b])
                cell[1] += 1
            per_group.append(group_consistency([outcome[i] for i in present]))
            counts.update(_status_counts(g.values()))
        return {"consistency": float(np.mean(per_group)) if per_group else None, "n_groups": len(per_group),
                "n_records": counts["n"], "failed": counts["failed"], "unparsed": counts["unparsed"],
                "by_pair": {k: v[0] / v[1] for k, v in sorted(by_pair.items())}}

    def patterns(self) -> dict[str, Any]:
        """The 16 patterns over complete 4-variant groups (failed / unparsed = W), the perfect
        rate, and the records of those groups with how many failed or were unparsed."""
        counts = dict.fromkeys(PATTERNS, 0)
        status = Counter()
        perfect = 0
        wanted = {self.variants[v] for v in VARIANT_ORDER}
        for mask in self.groups.values():
            g = self._variant_bits(mask)
            if set(g) == wanted:
                counts[pattern({v: bool(g[self.variants[v]] & _RIGHT) for v in VARIANT_ORDER})] += 1
                status.update(_status_counts(g.values()))
                # perfectly consistent: four answers that agree (four failures are not)
                perfect += all(_outcome(b) is not None for b in g.values()) and len(
                    {_outcome(b) for b in g.values()}) == 1
        total = sum(counts.values())
        return {"patterns": counts, "n_groups": total, "n_records": status["n"], "failed": status["failed"],
                "unparsed": status["unparsed"], "perfect_rate": perfect / total if total else None}

    def gaps(self) -> dict[str, Any]:
        """Premise gap (relation transformation with − without a premise) and frame-of-reference
        gap (people's own frame − the viewer's), accuracies over every record asked, with the
        counts of each side."""
        gap = self.gap
        out: dict[str, Any] = {}
        w, wo = gap.get("premise/with"), gap.get("premise/without")
        aw, awo = _acc(w), _acc(wo)
        out["premise"] = {"with": aw, "without": awo, "gap": None if aw is None or awo is None else aw - awo,
                          "counts": {"with": _asked(w), "without": _asked(wo)}}
        for task in ("dynamic_rotation", "canonical_view"):
            own, view = gap.get(f"frame_of_reference/{task}/own"), gap.get(f"frame_of_reference/{task}/viewer")
            ao, av = _acc(own), _acc(view)
            out[f"frame_of_reference/{task}"] = {"own": ao, "viewer": av,
                                                  "gap": None if ao is None or av is None else ao - av,
                                                  "counts": {"own": _asked(own), "viewer": _asked(view)}}
        return out

    def gap_kappa(self, key: str) -> float | None:
        g = self.gap.get(key)
        if not g or not g[0] or g[2] / g[0] >= 1.0:
            return None
        return chance_kappa(g[1], g[0], g[2])


def _status_counts(bits: Any) -> Counter[str]:
    """n, failed and unparsed among the variant bits of one group."""
    c: Counter[str] = Counter()
    for b in bits:
        c["n"] += 1
        c["failed"] += bool(b & _FAILED)
        c["unparsed"] += bool(b & _UNPARSED)
    return c
