"""Psychometric curves: accuracy per run against every difficulty knob the records span.

Items carry the knob values they were generated with (``metadata["knobs"]``); a dataset
made with ``perspecta generate --sweep KNOB=a:b:n`` spans one knob evenly. For each
(suite, task, knob) whose records hold at least three distinct numeric values, every run
gets its accuracy per value with a 95% Wilson interval and a logistic fitted from chance
to 1 (:mod:`perspecta.report.psychometric`), summarised by the knob value where the fit
crosses 75% correct. Generic: nothing here knows a suite by name.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from perspecta.report import figures
from perspecta.report.aggregate import RunState
from perspecta.report.context import Context, Section
from perspecta.report.psychometric import FLAT_ALPHA, MIN_VALUES, TARGET, fit_curve, wilson_interval
from perspecta.report.tables import DASH, Table

GRID = 200  # points of each drawn curve


def _slug(*parts: str) -> str:
    return "curve-" + "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p) for p in parts)


def items_at(cell: list) -> int:
    """The items behind a knob cell's records: the largest one-repeat count (all records when the
    cell has no per-repeat counts)."""
    return max(cell[3].values()) if len(cell) > 3 and cell[3] else int(cell[0])


def _label(ctx: Context, st: RunState) -> str:
    return st.model if st.is_human else ctx.label(st)


def build(ctx: Context) -> Section:
    sec = Section("curves", "Psychometric curves",
                  f"Accuracy % against each difficulty knob the items span (≥ {MIN_VALUES} distinct values; make "
                  "such a dataset with `perspecta generate --sweep KNOB=a:b:n`), per run, with 95% Wilson "
                  "intervals; failed and unparsed answers count wrong. The line is the maximum-likelihood fit "
                  "p(x) = c + (1 − c)·sigmoid(a + b·x) rising from the chance rate c of the records to 1; the "
                  f"threshold is the knob value where it crosses {100 * TARGET:.0f}%. *flat*: a likelihood-ratio "
                  f"test finds no slope (p ≥ {FLAT_ALPHA}); *not reached in range*: the fit stays below "
                  f"{100 * TARGET:.0f}% over the swept values.")
    states = [*ctx.states, *ctx.human]
    # (suite, task, knob) -> run index -> value -> [n, correct, chance sum]
    groups: dict[tuple[str, str, str], dict[int, dict[float, list[float]]]] = defaultdict(dict)
    for i, st in enumerate(states):
        for (suite, task, knob, value), cell in st.knobs.items():
            groups[(suite, task, knob)].setdefault(i, {})[value] = cell
    spanned = {key: per_run for key, per_run in groups.items()
               if len({v for cells in per_run.values() for v in cells}) >= MIN_VALUES}
    if not spanned:
        sec.omitted = (f"no task's records span a difficulty knob (≥ {MIN_VALUES} distinct values of one "
                       "knob in metadata[\"knobs\"]); generate a dataset with --sweep KNOB=a:b:n")
        return sec
    for (suite, task, knob), per_run in sorted(spanned.items()):
        _curve(ctx, sec, states, suite, task, knob, per_run)
    return sec


def _curve(ctx: Context, sec: Section, states: list[RunState], suite: str, task: str, knob: str,
           per_run: dict[int, dict[float, list[float]]]) -> None:
    values = sorted({v for cells in per_run.values() for v in cells})
    name = f"{suite}/{task}"
    table = Table(_slug(suite, task, knob), f"{name}: accuracy % vs {knob} (columns: its values)",
                  ["run", *[f"{v:g}" for v in values], "chance %", "slope b (LR p)",
                   f"{100 * TARGET:.0f}% threshold"], sortable=True)
    series = {}
    for i in sorted(per_run, key=lambda j: _label(ctx, states[j])):
        cells = per_run[i]
        xs = sorted(cells)
        chance = sum(cells[v][2] for v in xs) / sum(cells[v][0] for v in xs)
        # with --repeats R each item is R records; a temperature-0 model's repeats are copies of one
        # answer, so the intervals and the slope's likelihood-ratio test are taken at the items
        # (the accuracy stays correct / records), as the headline interval is (docs/scoring.md)
        n = [float(items_at(cells[v])) for v in xs]
        k = [cells[v][1] * items_at(cells[v]) / cells[v][0] for v in xs]
        reps = max(len(cells[v][3]) if len(cells[v]) > 3 else 1 for v in xs)
        cis = [wilson_interval(c, t) for c, t in zip(k, n)]
        row = [_label(ctx, states[i])]
        ci = dict(zip(xs, cis))
        row += [f"{100 * cells[v][1] / cells[v][0]:.0f} [{100 * ci[v][0]:.0f}, {100 * ci[v][1]:.0f}] "
                f"(n={items_at(cells[v]):.0f}" + (f" × {reps} repeats)" if reps > 1 else ")") if v in cells else DASH
                for v in values]
        row.append(f"{100 * chance:.0f}")
        s = {"xs": xs, "acc": [c / t for c, t in zip(k, n)], "lo": [c[0] for c in cis], "hi": [c[1] for c in cis],
             "chance": chance, "curve": None, "threshold": None, "flat": False}
        if len(xs) < MIN_VALUES:
            row += [DASH, f"too few values ({len(xs)})"]
        else:
            fit = fit_curve(xs, k, n, chance)
            row += [f"{fit.b:+.3g} (p={fit.lr_p:.2g})", fit.describe(knob)]
            grid = np.linspace(fit.x_min, fit.x_max, GRID)
            s["curve"] = (grid, fit.predict(grid))
            s["threshold"] = fit.threshold
            s["flat"] = fit.verdict == "flat"
        table.rows.append(row)
        series[row[0]] = s
    sec.blocks.append(table)
    path, fig = ctx.figure(table.slug, f"{name}: accuracy vs {knob}",
                           f"Points: accuracy with 95% Wilson intervals; lines: logistic fits from chance (grey) to "
                           f"1, dashed when flat; dotted verticals: {100 * TARGET:.0f}% thresholds.")
    figures.psychometric(series, fig.title, knob, path, target=TARGET)
    sec.blocks.append(fig)

