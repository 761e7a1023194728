"""SpinBench's metrics: chance-corrected kappa, pairwise consistency, the 16 four-variant
answer patterns, and the premise and frame-of-reference gaps.

Kappa comes in the two forms the paper's citations (Cohen 1960; Coenen 2014) give:

* :func:`chance_kappa` — accuracy normalised by the chance rate of a k-option MCQ,
  ``(acc - p_e) / (1 - p_e)`` with ``p_e`` the mean of ``1/k`` over the items. This is
  what makes tasks with 2, 3 and 4 options comparable (0 = guessing, 1 = perfect) and
  is the per-subtype ``kappa`` reported.
* :func:`cohen_kappa` — Cohen's kappa between gold and predicted labels, with ``p_e``
  from the two label distributions (identical to ``sklearn.metrics.cohen_kappa_score``);
  reported as ``cohen_kappa``. It also penalises a model that always answers "A".

Consistency (paper B.2.2): two variants of one question agree when both are right or
both wrong; a group's consistency is the share of agreeing pairs, and the metric is
the mean over groups. Perfect rate is the share of 4-variant groups answered CCCC or
WWWW.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from perspecta.score.records import ScoredRecord

VARIANT_ORDER = ("base", "symmetric", "syntactic", "symmetric+syntactic")
PATTERNS = tuple("".join(p) for p in itertools.product("CW", repeat=4))  # CCCC, CCCW, ..., WWWW
NO_ANSWER = "<none>"


def cohen_kappa(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
    """Cohen's kappa of two label sequences (unweighted), NaN when chance agreement is 1."""
    if len(y_true) != len(y_pred):
        raise ValueError(f"label sequences differ in length: {len(y_true)} vs {len(y_pred)}")
    if not len(y_true):
        raise ValueError("cohen_kappa needs at least one label pair")
    labels = sorted(set(y_true) | set(y_pred), key=repr)
    index = {lab: i for i, lab in enumerate(labels)}
    cm = np.zeros((len(labels), len(labels)), dtype=float)
    np.add.at(cm, ([index[t] for t in y_true], [index[p] for p in y_pred]), 1.0)
    n = cm.sum()
    p_o = np.trace(cm) / n
    p_e = float(cm.sum(axis=1) @ cm.sum(axis=0)) / (n * n)
    if p_e == 1.0:
        return float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def chance_kappa(correct: Sequence[bool], n_options: Sequence[int]) -> float:
    """Accuracy corrected for the chance rate ``1/k`` of each item's k options."""
    if len(correct) != len(n_options) or not len(correct):
        raise ValueError("chance_kappa needs equally long, non-empty correct/n_options")
    ks = np.asarray(n_options, dtype=float)
    if np.any(ks < 2):
        raise ValueError(f"every item needs at least 2 options, got {sorted(set(n_options))}")
    acc = float(np.mean(np.asarray(correct, dtype=float)))
    p_e = float(np.mean(1.0 / ks))
    return (acc - p_e) / (1.0 - p_e)


def group_consistency(outcomes: Sequence[bool]) -> float:
    """Share of pairs among one group's outcomes that agree (both right or both wrong)."""
    if len(outcomes) < 2:
        raise ValueError("a group needs at least two variants for consistency")
    pairs = list(itertools.combinations(outcomes, 2))
    return sum(a == b for a, b in pairs) / len(pairs)


def pattern(outcomes_by_variant: dict[str, bool]) -> str:
    """The C/W pattern of a 4-variant group in the order base, symmetric, syntactic, both."""
    if set(outcomes_by_variant) != set(VARIANT_ORDER):
        raise ValueError(f"a pattern needs exactly the variants {VARIANT_ORDER}, got {sorted(outcomes_by_variant)}")
    return "".join("C" if outcomes_by_variant[v] else "W" for v in VARIANT_ORDER)


# --------------------------------------------------------------------------- over records


def _scored(records: Sequence[ScoredRecord]) -> list[ScoredRecord]:
    """Records with an outcome: answered (right or wrong) or unparsed (wrong); failures out."""
    return [r for r in records if r.status != "failed" and r.correct is not None]


def _groups(records: Sequence[ScoredRecord]) -> dict[tuple[int, str], dict[str, bool]]:
    groups: dict[tuple[int, str], dict[str, bool]] = defaultdict(dict)
    for r in _scored(records):
        if r.group:
            key = (r.repeat, r.group)
            if r.variant in groups[key]:
                raise ValueError(f"group {r.group!r} (repeat {r.repeat}) has two records of variant {r.variant!r}")
            groups[key][r.variant] = bool(r.correct)
    return groups


def kappa_by_subtype(records: Sequence[ScoredRecord]) -> dict[str, Any]:
    by: dict[str, list[ScoredRecord]] = defaultdict(list)
    for r in _scored(records):
        by[r.subtype or r.task].append(r)
    out: dict[str, Any] = {"kappa": {}, "cohen_kappa": {}, "accuracy": {}, "n": {}}
    for sub, rs in sorted(by.items()):
        out["kappa"][sub] = chance_kappa([bool(r.correct) for r in rs], [r.n_options for r in rs])
        out["cohen_kappa"][sub] = cohen_kappa([r.answer for r in rs], [r.prediction or NO_ANSWER for r in rs])
        out["accuracy"][sub] = float(np.mean([bool(r.correct) for r in rs]))
        out["n"][sub] = len(rs)
    return out


def consistency(records: Sequence[ScoredRecord]) -> dict[str, Any]:
    """Mean pairwise consistency over groups with 2+ variants, overall and per augmentation
    pair type (base vs symmetric, base vs syntactic, base vs both, ...)."""
    groups = [g for g in _groups(records).values() if len(g) >= 2]
    by_pair: dict[str, list[bool]] = defaultdict(list)
    for g in groups:
        for a, b in itertools.combinations(sorted(g, key=_variant_rank), 2):
            by_pair[f"{a}~{b}"].append(g[a] == g[b])
    return {
        "consistency": float(np.mean([group_consistency(list(g.values())) for g in groups])) if groups else None,
        "n_groups": len(groups),
        "by_pair": {k: float(np.mean(v)) for k, v in sorted(by_pair.items())},
    }


def _variant_rank(v: str) -> tuple[int, str]:
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def pattern_counts(records: Sequence[ScoredRecord]) -> dict[str, Any]:
    """Counts of the 16 patterns over complete 4-variant groups, and the perfect rate."""
    counts = dict.fromkeys(PATTERNS, 0)
    for g in _groups(records).values():
        if set(g) == set(VARIANT_ORDER):
            counts[pattern(g)] += 1
    total = sum(counts.values())
    return {"patterns": counts, "n_groups": total,
            "perfect_rate": (counts["CCCC"] + counts["WWWW"]) / total if total else None}


def _accuracy(rs: list[ScoredRecord]) -> float | None:
    return float(np.mean([bool(r.correct) for r in rs])) if rs else None


def gaps(records: Sequence[ScoredRecord]) -> dict[str, Any]:
    """Premise gap (relation transformation with minus without the premise) and
    frame-of-reference gap (people's own frame minus the viewer's, for dynamic rotation
    and canonical view selection)."""
    rs = _scored(records)
    w = [r for r in rs if r.task == "relation_transformation" and r.metadata.get("premise") is True]
    wo = [r for r in rs if r.task == "relation_transformation" and r.metadata.get("premise") is False]
    out: dict[str, Any] = {}
    aw, awo = _accuracy(w), _accuracy(wo)
    out["premise"] = {"with": aw, "without": awo, "gap": None if aw is None or awo is None else aw - awo}
    for task in ("dynamic_rotation", "canonical_view"):
        own = [r for r in rs if r.task == task and r.metadata.get("domain") == "person"
               and r.metadata.get("frame_of_reference") == "object"]
        view = [r for r in rs if r.task == task and r.metadata.get("domain") == "person"
                and r.metadata.get("frame_of_reference") == "viewer"]
        ao, av = _accuracy(own), _accuracy(view)
        out[f"frame_of_reference/{task}"] = {"own": ao, "viewer": av, "gap": None if ao is None or av is None else ao - av}
    return out
