"""Turning streamed counters into the numbers ``perspecta score`` and the report show.

:func:`summarize_run` gives one run's accuracy blocks (every item asked in the
denominator; failed and unparsed count wrong; coverage beside) and every suite metric,
which is the ``result()`` of the accumulator the suite's spec provides. The 95% interval
resamples correct counts binomially — the same distribution as resampling 0/1 records
with replacement, drawn from counts.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perspecta.report.aggregate import ANSWERED, CHANCE_N, CHANCE_SUM, CORRECT, N, OK, UNPARSED, RunState

BOOTSTRAP = 1000


Z95 = 1.959963984540054


def wilson_interval(correct: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score 95% interval of ``correct`` out of ``n`` (n > 0)."""
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_ci(correct: int, n: int, *, draws: int = BOOTSTRAP, seed: int = 0,
                n_eff: int | None = None) -> tuple[float, float] | None:
    """Percentile bootstrap of an accuracy from its counts (fixed seed, so reports are stable),
    widened to at least the Wilson score interval.

    A percentile bootstrap of 3 right out of 3 (or 0 of 3) has zero width — every resample
    is 100% — so a tiny subtype read "100.0 [100.0, 100.0]", certainty it does not have;
    the Wilson bounds (3/3: [43.9, 100]) keep the interval honest at the edges, as the
    audit's intervals do (:mod:`perspecta.audit.stats`).

    ``n_eff``: the number of independent units behind the ``n`` records — the items, when
    each was asked in several repeats. Repeats of a deterministic model are copies of one
    answer; counting them as n records narrowed the interval by sqrt(repeats) with no new
    information. The accuracy stays correct / n; its spread is taken at ``n_eff`` items
    (for repeats that do vary this is conservative: items are the sampling unit)."""
    if n == 0:
        return None
    p = correct / n
    m = n if n_eff is None else max(1, min(n, n_eff))
    rng = np.random.default_rng(seed)
    means = rng.binomial(m, p, size=draws) / m
    lo, hi = np.percentile(means, [2.5, 97.5])
    w_lo, w_hi = wilson_interval(p * m, m)
    return float(min(lo, w_lo)), float(max(hi, w_hi))


def block(st: RunState, level: str, name: str) -> dict[str, Any]:
    """The accuracy block of one group of a run (as :func:`perspecta.score.metrics.accuracy_block`)."""
    per_repeat = {rep: c for (lv, nm, rep), c in st.cells.items() if lv == level and nm == name}
    return block_from_cells(per_repeat)


def block_from_cells(per_repeat: dict[int, list[float]]) -> dict[str, Any]:
    """Accuracy over every record (failed and unparsed count wrong), coverage and the labelled
    answered-only accuracy beside it — as :func:`perspecta.score.metrics.accuracy_block`."""
    tot = [sum(c[i] for c in per_repeat.values()) for i in range(7)]
    n, answered, correct = int(tot[N]), int(tot[ANSWERED]), int(tot[CORRECT])
    n_items = int(max((c[N] for c in per_repeat.values()), default=0))  # items asked (one repeat's records)
    out: dict[str, Any] = {
        "n": n, "answered": answered, "ok": int(tot[OK]), "unparsed": int(tot[UNPARSED]), "failed": n - answered,
        "correct": correct, "coverage": answered / n if n else 0.0,
        "accuracy": correct / n if n else None,
        "accuracy_answered": correct / answered if answered else None,
        "n_items": n_items,
        "ci95": binomial_ci(correct, n, n_eff=n_items),  # repeats are not new items
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


def summarize_run(st: RunState, agg: object = None) -> dict[str, Any]:
    """One run's summary (``agg`` is accepted for old callers and unused)."""
    run: dict[str, Any] = {"model": st.model, "prompt_mode": st.prompt_mode, "dataset": st.dataset,
                           **block(st, "all", "all")}
    for key, level in (("by_suite", "suite"), ("by_task", "task"), ("by_subtype", "subtype")):
        run[key] = {nm: block(st, level, nm) for nm in names(st, level)}
    metrics: dict[str, Any] = {}
    for suite, acc in sorted(st.suites.items()):
        try:
            metrics[suite] = acc.result()
        except Exception as e:  # a suite's metric bug must not hide the core scores
            metrics[suite] = {"error": f"{e.__class__.__name__}: {e}"}
    run["suite_metrics"] = metrics
    return run
