"""The leaderboard (accuracy, kappa, the figures suites declare as leaderboard columns, per
suite) and the subtype heatmaps (SpinBench Fig. 3/33/34, for every suite)."""

from __future__ import annotations

import math

import numpy as np

from perspecta.report import figures
from perspecta.report.context import Context, Section
from perspecta.report.sections.common import kappa_of, mean_sd, pm, run_kappa
from perspecta.report.summary import block, names
from perspecta.report.tables import DASH, Table, num, pct, pct_ci
from perspecta.suites.registry import suite_spec
from perspecta.suites.spec import LeaderboardColumn


def _declared_columns(suites: list[str]) -> list[tuple[str, LeaderboardColumn]]:
    """(suite, column) for every leaderboard column the runs' suites declare in their specs."""
    return [(s, col) for s in suites if (spec := suite_spec(s)) is not None for col in spec.leaderboard_metrics]


def leaderboard(ctx: Context) -> Section:
    suites = sorted({s for r in ctx.runs for s in r["by_suite"]})
    declared = _declared_columns(suites)
    sec = Section("leaderboard", "Leaderboard",
                  "Accuracy over every item asked (failed requests and unparsed replies count as wrong) with a 95% "
                  "interval (percentile bootstrap, never narrower than Wilson's); coverage = answered / asked beside it; answered-only accuracy (correct / "
                  "answered) is secondary. κ = (acc − p_e)/(1 − p_e) over the multiple-choice and yes/no records, "
                  "p_e the mean chance rate 1/k, failed and unparsed counting wrong; "
                  + "".join(f"{col.meaning}; " for _, col in declared if col.meaning)
                  + "click a column header to sort.")
    if not ctx.runs and not ctx.human:
        sec.omitted = "no scored records"
        return sec
    table = Table("leaderboard", "Leaderboard", ["model", "mode", "n", "accuracy % [95% CI]", "coverage %", "κ",
                                                 *[col.header for _, col in declared], *[f"{s} %" for s in suites],
                                                 "answered-only acc. %"], sortable=True)
    for run, st in sorted(zip(ctx.runs, ctx.states), key=lambda p: -(p[0]["accuracy"] or 0.0)):
        table.rows.append([ctx.label(run), run["prompt_mode"], str(run["n"]), pct_ci(run["accuracy"], run["ci95"]),
                           pct(run["coverage"]), num(run_kappa(st)),
                           *[pct(col.value(run["suite_metrics"].get(s) or {})) for s, col in declared],
                           *[pct(run["by_suite"].get(s, {}).get("accuracy")) for s in suites],
                           pct(run.get("accuracy_answered"))])
    if ctx.human:
        accs = [block(h, "all", "all")["accuracy"] for h in ctx.human]
        m, sd = mean_sd(accs)
        per_suite = []
        for s in suites:
            sm, ssd = mean_sd([block(h, "suite", s)["accuracy"] for h in ctx.human if s in names(h, "suite")])
            per_suite.append(pm(sm, ssd))
        km, _ = mean_sd([run_kappa(h) for h in ctx.human])
        table.rows.append([f"Human ({len(ctx.human)} annotators)", DASH,
                           str(sum(block(h, "all", "all")["n"] for h in ctx.human)),
                           pm(m, sd) + (" (SD)" if sd is not None else ""), DASH, num(km),
                           *[DASH for _ in declared], *per_suite, DASH])
    for run in ctx.runs:
        if run.get("missing"):
            sec.notes.append(f"{ctx.label(run)}: {run['missing']} of its {run['n']} items asked have no record "
                             "(an interrupted run?); they count as failed in every figure.")
    sec.blocks.append(table)
    sec.blocks.append(_runs_table(ctx))
    return sec


def _runs_table(ctx: Context) -> Table:
    """What each run was: its dataset, suite settings, the image sizes sent, and a prior's source."""
    table = Table("runs", "Runs: dataset, settings, images sent",
                  ["run", "dataset", "suite settings", "images sent (longest side requested: sizes)", "prior learned from"])
    for run in ctx.runs:
        info = ctx.info(run)
        sent = info.get("images_sent") or {}
        images = "; ".join(f"{s} {v['max_side'] or 'native'}: {', '.join(v['sizes'])}" for s, v in sent.items())
        config = ", ".join(f"{s}.{k}={v}" for s, kv in (info.get("suite_config") or {}).items() for k, v in kv.items())
        prior = info.get("prior_source") or {}
        table.rows.append([ctx.label(run), run.get("dataset") or DASH, config or "defaults", images or DASH,
                           f"{prior['kind']} ({prior.get('items', '?')} items)" if prior else DASH])
    return table


def heatmaps(ctx: Context) -> Section:
    sec = Section("heatmaps", "Subtype heatmaps",
                  "κ (chance-adjusted: 0 = guessing, 1 = perfect) and raw accuracy per subtype and run, "
                  "as SpinBench Fig. 3/33/34; κ is over the subtype's multiple-choice and yes/no records (open answers "
                  "have no chance level). Grey cells: no data (or only open answers).")
    if not ctx.runs:
        sec.omitted = "no model runs"
        return sec
    labels = [ctx.label(r) for r in ctx.runs]
    for suite in sorted({s for r in ctx.runs for s in r["by_suite"]}):
        subs = sorted({k for r in ctx.runs for k in r["by_subtype"] if k.startswith(suite + "/")})
        acc = np.full((len(subs), len(ctx.runs)), math.nan)
        kap = np.full_like(acc, math.nan)
        for j, (run, st) in enumerate(zip(ctx.runs, ctx.states)):
            for i, sub in enumerate(subs):
                b = run["by_subtype"].get(sub)
                if b and b["accuracy"] is not None:
                    acc[i, j] = 100 * b["accuracy"]
                    # over the subtype's records with a chance rate only: PCSR subtypes mix open
                    # answers (chance ~0) with options, and all-record accuracy against the
                    # options' chance read a guesser as below chance
                    k = kappa_of(block(st, "kappa_pool", sub))
                    kap[i, j] = math.nan if k is None else k
        rows = [s.rsplit("/", 1)[1] or s.split("/")[1] for s in subs]  # the subtype (task when it has none)
        if not np.all(np.isnan(kap)):
            path, fig = ctx.figure(f"heatmap-kappa-{suite}", f"{suite}: κ per subtype")
            figures.heatmap(kap, rows, labels, fig.title, path, vmin=-1.0, vmax=1.0)
            sec.blocks.append(fig)
        path, fig = ctx.figure(f"heatmap-accuracy-{suite}", f"{suite}: accuracy % per subtype")
        figures.heatmap(acc, rows, labels, fig.title, path, vmin=0.0, vmax=100.0, fmt="{:.0f}")
        sec.blocks.append(fig)
    return sec
