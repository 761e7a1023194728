"""Turning streamed counters into the numbers ``perspecta score`` reports.

:func:`summarize_run` returns the same shape as one entry of
:func:`perspecta.score.metrics.summarize` (accuracy blocks and every suite metric), from
counts instead of record lists; the formulas are those of the suite modules. The one
deliberate difference: the 95% interval resamples correct counts binomially (the same
distribution as resampling 0/1 records with replacement, drawn from counts).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from perspecta.report.aggregate import (ANSWERED, CHANCE_N, CHANCE_SUM, CORRECT, N, OK, UNPARSED, Aggregator,
                                        RunState)
from perspecta.score.metrics import BOOTSTRAP
from perspecta.suites.dori import scoring as dori_scoring
from perspecta.suites.lrr.scoring import task_score
from perspecta.suites.spin.metrics import PATTERNS as SPIN_PATTERNS
from perspecta.suites.spin.metrics import VARIANT_ORDER


def binomial_ci(correct: int, n: int, *, draws: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap of an accuracy from its counts (fixed seed, so reports are stable)."""
    if n == 0:
        return None
    rng = np.random.default_rng(seed)
    means = rng.binomial(n, correct / n, size=draws) / n
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def block(st: RunState, level: str, name: str) -> dict[str, Any]:
    """The accuracy block of one group of a run (as :func:`perspecta.score.metrics.accuracy_block`)."""
    per_repeat = {rep: c for (lv, nm, rep), c in st.cells.items() if lv == level and nm == name}
    return block_from_cells(per_repeat)


def block_from_cells(per_repeat: dict[int, list[float]]) -> dict[str, Any]:
    """Accuracy over every record (failed and unparsed count wrong), coverage and the labelled
    answered-only accuracy beside it — as :func:`perspecta.score.metrics.accuracy_block`."""
    tot = [sum(c[i] for c in per_repeat.values()) for i in range(7)]
    n, answered, correct = int(tot[N]), int(tot[ANSWERED]), int(tot[CORRECT])
    out: dict[str, Any] = {
        "n": n, "answered": answered, "ok": int(tot[OK]), "unparsed": int(tot[UNPARSED]), "failed": n - answered,
        "correct": correct, "coverage": answered / n if n else 0.0,
        "accuracy": correct / n if n else None,
        "accuracy_answered": correct / answered if answered else None,
        "ci95": binomial_ci(correct, n),
    }
    if tot[CHANCE_N]:
        out["chance_level"] = tot[CHANCE_SUM] / tot[CHANCE_N]
    reps = sorted(rep for rep, c in per_repeat.items() if c[N])
    if len(reps) > 1:
        accs = [per_repeat[k][CORRECT] / per_repeat[k][N] for k in reps]
        std = float(np.std(accs, ddof=1))
        out["repeats"] = {"n": len(accs), "mean": float(np.mean(accs)), "std": std, "sem": std / math.sqrt(len(accs))}
    return out


def names(st: RunState, level: str) -> list[str]:
    return sorted({nm for (lv, nm, _rep) in st.cells if lv == level})


def summarize_run(st: RunState, agg: Aggregator) -> dict[str, Any]:
    run: dict[str, Any] = {"model": st.model, "prompt_mode": st.prompt_mode, "dataset": st.dataset,
                           **block(st, "all", "all")}
    for key, level in (("by_suite", "suite"), ("by_task", "task"), ("by_subtype", "subtype")):
        run[key] = {nm: block(st, level, nm) for nm in names(st, level)}
    metrics: dict[str, dict[str, Any]] = {}
    suites = set(run["by_suite"])
    if "spin" in suites:
        metrics["spin"] = {"kappa": spin_kappa(st), "consistency": spin_consistency(st, agg),
                           "patterns": spin_patterns(st, agg), "gaps": spin_gaps(st)}
    if "dori" in suites:
        metrics["dori"] = dori_metrics(st)
    if "pcsr" in suites:
        metrics["pcsr"] = {"strict_relaxed": {
            "strict": {k: v[0] / v[2] for k, v in sorted(st.pcsr.items())},
            "relaxed": {k: v[1] / v[2] for k, v in sorted(st.pcsr.items())},
            "n": {k: int(v[2]) for k, v in sorted(st.pcsr.items())}}}
    if "lrr" in suites:
        metrics["lrr"] = {"score": {"error": st.lrr_error} if st.lrr_error else {st.prompt_mode: lrr_summary(st)}}
    run["suite_metrics"] = metrics
    return run


# ---------------------------------------------------------------------- SpinBench


def cohen_from_counts(pairs: dict[tuple[str, str], int]) -> float:
    """Cohen's kappa from (gold, predicted) label counts (as ``spin.metrics.cohen_kappa``)."""
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


def spin_kappa(st: RunState) -> dict[str, Any]:
    if any(v[3] < 2 for v in st.spin_kappa.values()):
        bad = sorted({int(v[3]) for v in st.spin_kappa.values() if v[3] < 2})
        return {"error": f"ValueError: every item needs at least 2 options, got {bad}"}
    confusion: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for (sub, a, p), c in st.spin_confusion.items():
        confusion[sub][(a, p)] = c
    out: dict[str, Any] = {"kappa": {}, "cohen_kappa": {}, "accuracy": {}, "n": {}}
    for sub, (n, correct, inv_k, _k) in sorted(st.spin_kappa.items()):
        out["kappa"][sub] = chance_kappa(correct, n, inv_k)
        out["cohen_kappa"][sub] = cohen_from_counts(confusion[sub])
        out["accuracy"][sub] = correct / n
        out["n"][sub] = int(n)
    return out


def _group_outcomes(mask: int, n_variants: int) -> dict[int, bool]:
    return {i: bool(mask >> (2 * i + 1) & 1) for i in range(n_variants) if mask >> (2 * i) & 1}


def _rank(v: str) -> tuple[int, str]:
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), v)


def spin_consistency(st: RunState, agg: Aggregator) -> dict[str, Any]:
    variants = agg.variant_names()
    order = sorted(range(len(variants)), key=lambda i: _rank(variants[i]))
    by_pair: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_group = []
    for mask in st.spin_groups.values():
        g = _group_outcomes(mask, len(variants))
        if len(g) < 2:
            continue
        present = [i for i in order if i in g]
        agree = 0
        pairs = 0
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


def spin_patterns(st: RunState, agg: Aggregator) -> dict[str, Any]:
    counts = dict.fromkeys(SPIN_PATTERNS, 0)
    full = sum(1 << 2 * i for i in range(len(VARIANT_ORDER)))
    seen_bits = sum(1 << 2 * i for i in range(len(agg.variants)))
    for mask in st.spin_groups.values():
        if mask & seen_bits == full:
            counts["".join("C" if mask >> (2 * i + 1) & 1 else "W" for i in range(len(VARIANT_ORDER)))] += 1
    total = sum(counts.values())
    return {"patterns": counts, "n_groups": total,
            "perfect_rate": (counts["CCCC"] + counts["WWWW"]) / total if total else None}


def _acc(g: list[float] | None) -> float | None:
    return g[1] / g[0] if g and g[0] else None


def spin_gaps(st: RunState) -> dict[str, Any]:
    gap = st.spin_gap
    out: dict[str, Any] = {}
    aw, awo = _acc(gap.get("premise/with")), _acc(gap.get("premise/without"))
    out["premise"] = {"with": aw, "without": awo, "gap": None if aw is None or awo is None else aw - awo}
    for task in ("dynamic_rotation", "canonical_view"):
        ao, av = _acc(gap.get(f"frame_of_reference/{task}/own")), _acc(gap.get(f"frame_of_reference/{task}/viewer"))
        out[f"frame_of_reference/{task}"] = {"own": ao, "viewer": av,
                                              "gap": None if ao is None or av is None else ao - av}
    return out


def gap_kappa(st: RunState, key: str) -> float | None:
    g = st.spin_gap.get(key)
    if not g or not g[0] or g[2] / g[0] >= 1.0:
        return None
    return chance_kappa(g[1], g[0], g[2])


# ---------------------------------------------------------------------- DORI, LRR


def dori_metrics(st: RunState) -> dict[str, Any]:
    soft = {k: {"n": int(v[0]), "hard": v[1] / v[0], "soft": v[2] / v[0]} for k, v in sorted(st.dori_soft.items())}
    per_kind: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for (kind, g, p), c in st.dori_errors.items():
        per_kind[kind][(g, p)] += c
    by_type: dict[str, Any] = {}
    totals: Counter[str] = Counter()
    n_errors = 0
    for kind, pairs in sorted(per_kind.items()):
        n = sum(pairs.values())
        n_errors += n
        pattern_count: Counter[str] = Counter()
        for (g, p), c in pairs.items():
            for pat in st.dori_error_patterns[(kind, g, p)]:
                pattern_count[pat] += c
        totals.update(pattern_count)
        by_type[kind] = {
            "n_errors": n,
            "pairs": [{"true": g, "predicted": p, "count": c, "share": c / n, "frequent": c / n > dori_scoring.SYSTEMATIC_SHARE,
                       "patterns": st.dori_error_patterns[(kind, g, p)]} for (g, p), c in pairs.most_common()],
            "patterns": {p: pattern_count[p] / n for p in dori_scoring.PATTERNS if pattern_count[p]},
        }
    comp = [sum(c[i] for c in st.dori_compound.values()) for i in range(5)]
    n = comp[0]
    decomposition = {"n": 0} if n == 0 else {
        "n": n, "order_swap": comp[1] / n, "vertical_axis_turn_accuracy": comp[2] / n,
        "horizontal_axis_tip_accuracy": comp[3] / n, "both_wrong": comp[4] / n}
    return {
        "soft_accuracy": {"soft_accuracy": soft},
        "error_patterns": {"error_patterns": {
            "by_type": by_type, "n_errors": n_errors,
            "pattern_share": {p: (totals[p] / n_errors if n_errors else 0.0) for p in dori_scoring.PATTERNS}}},
        "compound_decomposition": {"compound_decomposition": decomposition},
        "accuracy_by_n_options": {"accuracy_by_n_options": {
            str(k): {"n": v[0], "accuracy": v[1] / v[0], "chance": 1.0 / k if k else None}
            for k, v in sorted(st.dori_n_options.items())}},
    }


def compound_by_repeat(st: RunState) -> dict[str, tuple[float, float]]:
    """Table 11's shares as mean ± std over repeats (std 0 with one repeat)."""
    rows = [c for _rep, c in sorted(st.dori_compound.items()) if c[0]]
    out = {}
    for i, name in enumerate(("order_swap", "vertical_axis_turn_accuracy", "horizontal_axis_tip_accuracy",
                              "both_wrong"), start=1):
        vals = [c[i] / c[0] for c in rows]
        out[name] = (float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0)
    return out


def lrr_summary(st: RunState) -> dict[str, Any]:
    """As ``lrr.scoring.lrr_score`` for one prompt mode (failed records count as wrong)."""

    def summary(col: int) -> dict[str, Any]:
        acc = {k: 100.0 * v[col] / v[0] for k, v in sorted(st.lrr.items())}
        scores = {k: task_score(p) for k, p in acc.items()}
        return {"accuracy": {k: round(v, 4) for k, v in acc.items()},
                "score": {k: round(v, 4) for k, v in scores.items()},
                "total": round(sum(scores.values()), 4), "max_total": 100.0 * len(scores),
                "n": {k: int(v[0]) for k, v in sorted(st.lrr.items())}}

    return {**summary(1), "paper_rule": summary(2)}
