"""DORI: Tables 2/3 (task × coarse/granular, hard and soft), appendix K error bars over
repeats, Table 10 (systematic error patterns), Table 11 (compound-rotation components),
Fig. 10 (accuracy vs number of options), and breakdowns by object category and asset source."""

from __future__ import annotations

import math

import numpy as np

from perspecta.report import figures
from perspecta.report.context import Context, Section
from perspecta.report.sections.common import is_baseline
from perspecta.report.summary import block, names
from perspecta.report.tables import DASH, Table, asked, asked_of, pct
from perspecta.suites.dori import scoring as dori_scoring

GRANULARITIES = ("coarse", "granular")


def _tg(st, task: str, gran: str) -> tuple[float | None, float | None, float | None]:
    """(hard, soft, sem of hard over repeats) of one task × granularity."""
    cells = [(rep, c) for (t, g, rep), c in st.suites["dori"].tg.items() if t == task and g == gran and c[0]]
    if not cells:
        return None, None, None
    n = sum(c[0] for _, c in cells)
    hard = sum(c[1] for _, c in cells) / n
    soft = sum(c[2] for _, c in cells) / n
    per = [c[1] / c[0] for _, c in sorted(cells)]
    sem = float(np.std(per, ddof=1) / math.sqrt(len(per))) if len(per) > 1 else None
    return hard, soft, sem


def build(ctx: Context) -> Section:
    sec = Section("dori", "DORI — object orientation",
                  "Hard accuracy and soft accuracy (0.5 credit for the near misses of the DORI paper) per task "
                  "and granularity, as Tables 2/3; C = coarse, G = granular. Every item asked is in each "
                  "denominator: a failed request or an unparsed reply is wrong, with soft credit 0; the n columns "
                  "say how many were asked and how many of those failed or were unparsed.")
    pairs = ctx.with_suite("dori")
    if not pairs:
        sec.omitted = "no DORI records in the results"
        return sec
    tasks = sorted({t for _, st in pairs for (t, _g, _r) in st.suites["dori"].tg})
    cols = [f"{t} {g[0].upper()}" for t in tasks for g in GRANULARITIES]
    table = Table("dori-tasks", "DORI accuracy per task (hard / soft % of every item asked, ± SEM over repeats)",
                  ["model", "n asked", *cols, "avg C", "avg G"], sortable=True)
    bars: dict[str, list[float]] = {}
    errs: dict[str, list[float]] = {}
    any_repeats = False
    for run, st in pairs:
        b = run["by_suite"]["dori"]
        row = [ctx.label(run), asked_of(b)]
        avg: dict[str, list[float]] = {g: [] for g in GRANULARITIES}
        bars[ctx.label(run)], errs[ctx.label(run)] = [], []
        for t in tasks:
            for g in GRANULARITIES:
                hard, soft, sem = _tg(st, t, g)
                if hard is None:
                    row.append(DASH)
                    bars[ctx.label(run)].append(math.nan)
                    errs[ctx.label(run)].append(0.0)
                    continue
                avg[g].append(hard)
                any_repeats |= sem is not None
                row.append(f"{pct(hard)} / {pct(soft)}" + (f" ± {pct(sem)}" if sem is not None else ""))
                bars[ctx.label(run)].append(100 * hard)
                errs[ctx.label(run)].append(100 * sem if sem is not None else 0.0)
        row += [pct(float(np.mean(avg[g]))) if avg[g] else DASH for g in GRANULARITIES]
        table.rows.append(row)
    sec.blocks.append(table)
    path, fig = ctx.figure("dori-error-bars", "DORI hard accuracy per task, mean ± SEM over repeats (appendix K)")
    figures.grouped_bars(cols, bars, fig.title, "accuracy %", path, errors=errs)
    sec.blocks.append(fig)
    if not any_repeats:
        sec.notes.append("Error bars: no run has more than one repeat (evaluate with --repeats N to get them).")
    _prompt_ablation(ctx, sec, pairs)
    _error_patterns(ctx, sec, pairs)
    _compound(ctx, sec, pairs)
    _n_options(ctx, sec, pairs)
    for meta in ("category", "source"):
        _breakdown(ctx, sec, pairs, meta)
    return sec


def _prompt_ablation(ctx: Context, sec: Section, pairs) -> None:
    """Table 7: the same model and prompt mode on DORI with the structured and the unstructured prompt."""
    by_model: dict[tuple[str, str], dict[str, tuple[dict, object]]] = {}
    for run, st in pairs:
        if len(st.suites["dori"].prompt_styles) == 1:
            by_model.setdefault((run["model"], run["prompt_mode"]), {})[next(iter(st.suites["dori"].prompt_styles))] = (run, st)
    styles = sorted({s for v in by_model.values() for s in v})
    table = Table("dori-prompt-ablation", "DORI prompt ablation (Table 7): accuracy % per prompt style, "
                  "same model and mode", ["model", "mode", *[f"{s} %" for s in styles],
                                         f"Δ ({styles[0]} − {styles[1]})" if len(styles) >= 2 else "Δ"])
    for (model, mode), runs in sorted(by_model.items()):
        if len(runs) < 2:
            continue
        accs = [runs[s][0]["by_suite"]["dori"]["accuracy"] if s in runs else None for s in styles]
        delta = accs[0] - accs[1] if len(accs) >= 2 and None not in accs[:2] else None
        table.rows.append([model, mode, *[pct(a) for a in accs], DASH if delta is None else f"{100 * delta:+.1f}"])
    if table.rows:
        sec.blocks.append(table)
    else:
        sec.notes.append("Prompt ablation (Table 7) omitted: no model was run on DORI data of two prompt styles "
                         "(generate with --suite-config dori.prompt_style=unstructured and report both results).")


def _error_patterns(ctx: Context, sec: Section, pairs) -> None:
    by_run = {ctx.label(r): r["suite_metrics"]["dori"]["error_patterns"] for r, _ in pairs}
    # the paper counts *models*: a model's runs (prompt styles, modes, datasets) pool into one vote
    by_model: dict[str, dict] = {}
    for run, _ in pairs:
        if is_baseline(run["model"]):  # a chance baseline's random confusions are no model's systematic error
            continue
        merged = by_model.setdefault(run["model"], {"error_patterns": {"by_type": {}}})["error_patterns"]["by_type"]
        for kind, t in run["suite_metrics"]["dori"]["error_patterns"]["error_patterns"]["by_type"].items():
            seen = merged.setdefault(kind, {"pairs": []})["pairs"]
            for p in t["pairs"]:
                if p["frequent"] and not any((q["true"], q["predicted"]) == (p["true"], p["predicted"]) for q in seen):
                    seen.append(p)
    systematic = dori_scoring.systematic_patterns(by_model)
    t10 = Table("dori-systematic-errors", "Systematic error patterns (Table 10): confusion pairs above "
                f"{100 * dori_scoring.SYSTEMATIC_SHARE:.0f}% of a run's confusions (wrong answers naming an option; "
                f"failed and unparsed replies name none) in ≥ {dori_scoring.SYSTEMATIC_MODELS} distinct models "
                "(baseline:* runs are not models)",
                ["question type", "true answer", "predicted", "models", "pattern type"])
    for s in systematic:
        t10.rows.append([s["type"], s["true"], s["predicted"], ", ".join(s["models"]),
                         ", ".join(p.replace("_", " ") for p in s["patterns"]) or DASH])
    if len(by_model) < dori_scoring.SYSTEMATIC_MODELS:
        t10.note = (f"Needs errors of at least {dori_scoring.SYSTEMATIC_MODELS} distinct models; this report has "
                    f"{len(by_model)} ({len(by_run)} runs).")
    sec.blocks.append(t10)
    share = Table("dori-pattern-share", "Share of each run's DORI confusions per pattern type (%): over the wrong "
                  "answers that name an option; replies without a prediction are counted apart, not in the shares",
                  ["model", "confusions", "no prediction", *[p.replace("_", " ") for p in dori_scoring.PATTERNS]],
                  sortable=True)
    for label, out in by_run.items():
        ep = out["error_patterns"]
        missing = ep.get("failed", 0) + ep.get("unparsed", 0)
        share.rows.append([label, str(ep["n_errors"]),
                           f"{missing} ({ep.get('failed', 0)} failed, {ep.get('unparsed', 0)} unparsed)" if missing
                           else "0", *[pct(ep["pattern_share"][p]) for p in dori_scoring.PATTERNS]])
    sec.blocks.append(share)


def _compound(ctx: Context, sec: Section, pairs) -> None:
    table = Table("dori-compound", "Compound-rotation decomposition, granular (Table 11; mean ± SD over repeats, "
                  "no ± with one repeat; % "
                  "of every item asked; failed and unparsed replies count as both wrong)",
                  ["model", "n asked", "order swap", "vertical-axis turn right", "horizontal-axis tip right",
                   "both wrong"])
    for run, st in pairs:
        dec = run["suite_metrics"]["dori"]["compound_decomposition"]["compound_decomposition"]
        if not dec["n"]:
            continue
        d = st.suites["dori"].compound_by_repeat()
        table.rows.append([ctx.label(run), asked_of(dec),
                           *[pct(m) if s is None else f"{pct(m)} ± {pct(s)}" for m, s in d.values()]])
    if table.rows:
        sec.blocks.append(table)
    else:
        sec.notes.append("Table 11 omitted: no granular compound-rotation records.")


def _n_options(ctx: Context, sec: Section, pairs) -> None:
    series = {}
    chance: dict[int, float] = {}
    counts = []
    for run, _ in pairs:
        by_n = run["suite_metrics"]["dori"]["accuracy_by_n_options"]["accuracy_by_n_options"]
        ks = sorted(int(k) for k in by_n if int(k) > 0)
        series[ctx.label(run)] = (ks, [100 * by_n[str(k)]["accuracy"] for k in ks])
        chance.update({k: 100 * by_n[str(k)]["chance"] for k in ks})
        n, failed, unparsed = (sum(by_n[str(k)][f] for k in ks) for f in ("n", "failed", "unparsed"))
        counts.append(f"{ctx.label(run)} {asked(n, failed, unparsed)}")
    ks = sorted(chance)
    if not ks:
        sec.notes.append("Fig. 10 omitted: no records with a number of options.")
        return
    path, fig = ctx.figure("dori-n-options", "DORI accuracy vs number of options (Fig. 10)",
                           "Accuracy over every item asked, failed and unparsed counting wrong; n asked: "
                           + "; ".join(counts))
    figures.lines(series, fig.title, "number of options", "accuracy %", path,
                  reference=(ks, [chance[k] for k in ks], "chance"))
    sec.blocks.append(fig)


def _breakdown(ctx: Context, sec: Section, pairs, meta: str) -> None:
    keys = sorted({k for _, st in pairs for k in names(st, meta)})
    if not keys:
        sec.notes.append(f"Breakdown by {meta} omitted: DORI records carry no metadata[{meta!r}].")
        return
    table = Table(f"dori-by-{meta}", f"DORI accuracy by object {meta} (% of every item asked, n asked)",
                  [meta, *[ctx.label(r) for r, _ in pairs]])
    for k in keys:
        row = [k]
        for _, st in pairs:
            b = block(st, meta, k) if k in names(st, meta) else None
            row.append(DASH if not b or b["accuracy"] is None
                       else f"{pct(b['accuracy'])} ({asked_of(b)})")
        table.rows.append(row)
    sec.blocks.append(table)
