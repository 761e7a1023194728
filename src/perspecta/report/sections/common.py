"""Small helpers the sections share."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perspecta.report.aggregate import RunState
from perspecta.report.summary import block


BASELINE_PREFIX = "baseline:"


def is_baseline(model: str) -> bool:
    """A reference run (oracle, chance, prior), not a model: shown in per-run tables, left out
    of figures pooled or correlated *across models* — the oracle's 100% in a "model mean" or a
    Pearson r over runs would measure the baselines, not the models."""
    return model.startswith(BASELINE_PREFIX)


def kappa_of(b: dict[str, Any] | None) -> float | None:
    """Chance-corrected kappa (acc - p_e) / (1 - p_e) of an accuracy block with a chance level."""
    if not b or b.get("accuracy") is None or b.get("chance_level") is None or b["chance_level"] >= 1.0:
        return None
    p = b["chance_level"]
    return (b["accuracy"] - p) / (1.0 - p)


def run_kappa(st: RunState, scope: str = "all") -> float | None:
    """Kappa over a run's records that have a chance rate (MCQ and yes/no), for ``scope`` = all or a suite."""
    return kappa_of(block(st, "kappa_pool", scope))


def repeat_error_bars(ctx: Any, sec: Any, suite: str) -> None:
    """Per-task accuracy as mean ± SEM over repeats (a table and a bar chart) for every run of
    ``suite``, so each suite section carries the repeat error bars DORI's appendix K shows."""
    from perspecta.report import figures
    from perspecta.report.summary import names
    from perspecta.report.tables import Table

    pairs = ctx.with_suite(suite)
    tasks = sorted({t for _, st in pairs for t in names(st, "task") if t.startswith(suite + "/")})
    rows, bars, errs = [], {}, {}
    for run, st in pairs:
        reps = [block(st, "task", t).get("repeats") for t in tasks]
        if not any(reps):
            continue
        label = ctx.label(run)
        rows.append([label, *[f"{100 * r['mean']:.1f} ± {100 * r['sem']:.1f} (n={r['n']})" if r else "—"
                              for r in reps]])
        bars[label] = [100 * r["mean"] if r else math.nan for r in reps]
        errs[label] = [100 * r["sem"] if r else 0.0 for r in reps]
    if not rows:
        sec.notes.append("Error bars over repeats: no run has more than one repeat (evaluate with --repeats N).")
        return
    short = [t.split("/", 1)[1] for t in tasks]
    sec.blocks.append(Table(f"{suite}-repeats", f"{suite}: accuracy % per task, mean ± SEM over repeats",
                            ["run", *short], rows))
    path, fig = ctx.figure(f"{suite}-error-bars", f"{suite}: accuracy per task, mean ± SEM over repeats")
    figures.grouped_bars(short, bars, fig.title, "accuracy %", path, errors=errs)
    sec.blocks.append(fig)


def mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample SD; the SD is None for one value — one annotator or one model run has
    no spread, and "± 0.0" would claim one was measured (as Table 11's one-repeat rule)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if not vals:
        return None, None
    return float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else None


def pm(mean: float | None, sd: float | None, scale: float = 100.0, digits: int = 1) -> str:
    """"m ± sd" (scaled, e.g. to %), "m" alone when there is no SD, a dash without a mean."""
    if mean is None:
        return "—"
    text = f"{scale * mean:.{digits}f}"
    return text if sd is None else f"{text} ± {scale * sd:.{digits}f}"
