"""SpinBench: consistency ranking and accuracy-vs-consistency (Fig. 4), the CCCC…WWWW
patterns (Fig. 35), consistency by augmentation (Fig. 36), own vs viewer frame (Table 3),
the premise gap, the CoT delta (Table 2) and scaling with model size (Fig. 7)."""

from __future__ import annotations

from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from perspecta.report import figures
from perspecta.report.context import Context, Section
from perspecta.report.sections.common import is_baseline, kappa_of, mean_sd, pm, repeat_error_bars
from perspecta.report.tables import DASH, Table, asked, asked_of, num, pct, signed
from perspecta.suites.spin.metrics import PATTERNS

BASELINE_MODE = "direct"


def build(ctx: Context) -> Section:
    sec = Section("spin", "SpinBench — perspective taking and rotation",
                  "κ is accuracy corrected for each item's chance rate 1/k; consistency is the share of agreeing "
                  "(both answered, and both right or both wrong) variant pairs of one question, averaged over "
                  "groups. Every record asked counts: a failed request or an unparsed reply is a wrong answer (a W "
                  "in its pattern) that agrees with no other variant; the n columns say how many records were "
                  "asked and how many of those failed or were unparsed.")
    pairs = ctx.with_suite("spin")
    if not pairs:
        sec.omitted = "no SpinBench records in the results"
        return sec
    _consistency(ctx, sec, pairs)
    _patterns(ctx, sec, pairs)
    _augmentation(ctx, sec, pairs)
    _frames(ctx, sec, pairs)
    _cot(ctx, sec, pairs)
    _scaling(ctx, sec, pairs)
    repeat_error_bars(ctx, sec, "spin")
    return sec


def _spin(run):
    return run["suite_metrics"]["spin"]


def _consistency(ctx: Context, sec: Section, pairs) -> None:
    rows = []
    for run, _ in pairs:
        c = _spin(run)["consistency"]["consistency"]
        acc = run["by_suite"]["spin"]["accuracy"]
        rows.append((ctx.label(run), acc, c))
    table = Table("spin-consistency", "SpinBench accuracy and consistency (Fig. 4), over every record asked",
                  ["model", "accuracy %", "n asked", "consistency %", "groups (2+ variants)", "records in them",
                   "perfect (CCCC+WWWW) %"], sortable=True)
    for (label, acc, c), (run, _) in sorted(zip(rows, pairs), key=lambda p: -(p[0][2] or -1)):
        pat, con, b = _spin(run)["patterns"], _spin(run)["consistency"], run["by_suite"]["spin"]
        table.rows.append([label, pct(acc), asked_of(b), pct(c), str(con["n_groups"]),
                           asked(con["n_records"], con["failed"], con["unparsed"]), pct(pat["perfect_rate"])])
    sec.blocks.append(table)
    have = [(lab, a, c) for lab, a, c in rows if a is not None and c is not None]
    # the correlation is across models: the oracle's (100, 100) and chance's point would set it
    models = [(lab, a, c) for (lab, a, c), (run, _) in zip(rows, pairs)
              if a is not None and c is not None and not is_baseline(run["model"])]
    if not have:
        sec.notes.append("Fig. 4 omitted: no run has 2+ variants of a group.")
        return
    path, fig = ctx.figure("spin-consistency-ranking", "Runs ranked by SpinBench consistency")
    ranked = sorted(have, key=lambda x: -x[2])
    figures.hbars([r[0] for r in ranked], [100 * r[2] for r in ranked], fig.title, "consistency %", path)
    sec.blocks.append(fig)
    xs, ys = [100 * a for _, a, _ in have], [100 * c for _, _, c in have]
    mx, my = [100 * a for _, a, _ in models], [100 * c for _, _, c in models]
    if len(models) >= 3 and len(set(mx)) > 1 and len(set(my)) > 1:
        r, p = stats.pearsonr(mx, my)
        caption = f"Pearson r = {r:.3f} (p = {p:.3g}, n = {len(models)} model runs; baselines left out)"
    else:
        caption = ("Pearson r needs at least 3 model runs (baselines left out) with differing accuracy and "
                   "consistency.")
    path, fig = ctx.figure("spin-accuracy-vs-consistency", "Accuracy vs consistency (Fig. 4)", caption)
    figures.scatter(xs, ys, [h[0] for h in have], fig.title + " — " + caption, "accuracy %", "consistency %", path)
    sec.blocks.append(fig)


def _patterns(ctx: Context, sec: Section, pairs) -> None:
    runs = [(run, _spin(run)["patterns"]) for run, _ in pairs if _spin(run)["patterns"]["n_groups"]]
    if not runs:
        sec.notes.append("Fig. 35 omitted: no complete 4-variant groups.")
        return
    runs.sort(key=lambda p: -(p[0]["by_suite"]["spin"]["accuracy"] or 0))
    shares = np.array([[100 * pat["patterns"][k] / pat["n_groups"] for k in PATTERNS] for _, pat in runs])
    greens, reds = plt.get_cmap("Greens"), plt.get_cmap("Reds")
    colors = [greens(0.35 + 0.15 * k.count("C")) if k.count("C") >= 2 else reds(0.35 + 0.15 * k.count("W"))
              for k in PATTERNS]
    path, fig = ctx.figure("spin-patterns", "Answer patterns of 4-variant groups, CCCC…WWWW (Fig. 35)")
    figures.stacked_bars([ctx.label(r) for r, _ in runs], list(PATTERNS), shares, colors, fig.title, path)
    sec.blocks.append(fig)
    table = Table("spin-patterns", "Pattern counts per run (base, symmetric, syntactic, both; a failed or unparsed "
                  "variant is a W)", ["model", "groups", "records in them", *PATTERNS])
    for run, pat in runs:
        table.rows.append([ctx.label(run), str(pat["n_groups"]), asked(pat["n_records"], pat["failed"], pat["unparsed"]),
                           *[str(pat["patterns"][k]) for k in PATTERNS]])
    sec.blocks.append(table)


def _augmentation(ctx: Context, sec: Section, pairs) -> None:
    keys = sorted({k for run, _ in pairs for k in _spin(run)["consistency"]["by_pair"]})
    if not keys:
        sec.notes.append("Fig. 36 omitted: no variant pairs.")
        return
    table = Table("spin-augmentation", "Consistency by augmentation pair (%; Fig. 36; a pair with a failed or unparsed "
                  "variant never agrees)", ["model", *keys])
    per_key: dict[str, list[float]] = defaultdict(list)
    for run, _ in pairs:
        bp = _spin(run)["consistency"]["by_pair"]
        table.rows.append([ctx.label(run), *[pct(bp.get(k)) for k in keys]])
        if is_baseline(run["model"]):  # a reference run, not one of the models averaged below
            continue
        for k in keys:
            if k in bp:
                per_key[k].append(100 * bp[k])
    stats_ = [mean_sd(per_key[k]) for k in keys]
    table.rows.append(["mean ± SD over model runs (baselines left out)",
                       *[pm(m, s, scale=1.0) for m, s in stats_]])
    sec.blocks.append(table)
    path, fig = ctx.figure("spin-augmentation", "Consistency by augmentation pair, mean ± SD over model runs (Fig. 36)")
    figures.grouped_bars(keys, {"runs": [m or 0.0 for m, _ in stats_]}, fig.title, "consistency %", path,
                         errors={"runs": [s or 0.0 for _, s in stats_]})
    sec.blocks.append(fig)


def _frames(ctx: Context, sec: Section, pairs) -> None:
    table = Table("spin-frames", "People's own frame vs the viewer's (Table 3; accuracy % and κ over every record "
                  "asked)", ["model", "task", "own n", "own acc", "own κ", "viewer n", "viewer acc", "viewer κ",
                             "gap (own − viewer) acc"])
    for run, st in pairs:
        for task in ("dynamic_rotation", "canonical_view"):
            g = _spin(run)["gaps"][f"frame_of_reference/{task}"]
            if g["own"] is None and g["viewer"] is None:
                continue
            own, view = g["counts"]["own"], g["counts"]["viewer"]
            table.rows.append([ctx.label(run), task, asked_of(own), pct(g["own"]),
                               num(st.suites["spin"].gap_kappa(f"frame_of_reference/{task}/own")),
                               asked_of(view), pct(g["viewer"]),
                               num(st.suites["spin"].gap_kappa(f"frame_of_reference/{task}/viewer")),
                               signed(None if g["gap"] is None else 100 * g["gap"], 1)])
    if table.rows:
        sec.blocks.append(table)
    else:
        sec.notes.append("Table 3 omitted: no person items with own/viewer frames of reference.")
    prem = Table("spin-premise", "Premise gap: relation transformation with − without the premise (accuracy % over "
                 "every record asked)", ["model", "with n", "with premise", "without n", "without premise", "gap"])
    for run, _ in pairs:
        g = _spin(run)["gaps"]["premise"]
        if g["with"] is not None or g["without"] is not None:
            w, wo = g["counts"]["with"], g["counts"]["without"]
            prem.rows.append([ctx.label(run), asked_of(w), pct(g["with"]),
                              asked_of(wo), pct(g["without"]),
                              signed(None if g["gap"] is None else 100 * g["gap"], 1)])
    if prem.rows:
        sec.blocks.append(prem)
    else:
        sec.notes.append("Premise gap omitted: no relation-transformation items with and without a premise.")


def _task_kappa(run) -> dict[str, float | None]:
    return {k.split("/", 1)[1]: kappa_of(b) for k, b in run["by_task"].items() if k.startswith("spin/")}


def _cot(ctx: Context, sec: Section, pairs) -> None:
    # per (model, dataset): on two datasets, one's direct run is no baseline for the other's cot run
    by_model: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for run, _ in pairs:
        by_model[(run["model"], run.get("dataset", ""))][run["prompt_mode"]] = run
    table = Table("spin-cot-delta", f"κ per task: {BASELINE_MODE} vs other prompt modes, Δ = mode − {BASELINE_MODE} "
                  "(Table 2)", ["model", "mode", "task", f"κ {BASELINE_MODE}", "κ mode", "Δ"])
    for _key, modes in sorted(by_model.items()):
        if BASELINE_MODE not in modes:
            continue
        base = _task_kappa(modes[BASELINE_MODE])
        for mode, run in sorted(modes.items()):
            if mode == BASELINE_MODE:
                continue
            other = _task_kappa(run)
            for task in sorted(set(base) & set(other)):
                b, o = base[task], other[task]
                table.rows.append([ctx.label(run), mode, task, num(b), num(o),
                                   signed(None if b is None or o is None else o - b)])
    if table.rows:
        sec.blocks.append(table)
    else:
        sec.notes.append(f"CoT delta (Table 2) omitted: no model was run in {BASELINE_MODE} and another prompt mode "
                         "(evaluate with --prompt-mode direct --prompt-mode cot).")


def _scaling(ctx: Context, sec: Section, pairs) -> None:
    sized = [(run, ctx.size_of(run["model"])) for run, _ in pairs if run["prompt_mode"] == BASELINE_MODE]
    sized = [(run, size) for run, size in sized if size is not None]
    if len(sized) < 2:
        sec.notes.append("Scaling curves (Fig. 7) omitted: give sizes of at least two models "
                         "(--model-size NAME=7B or --sizes FILE).")
        return
    panels: dict[str, dict[str, tuple[list[float], list[float]]]] = defaultdict(dict)
    families: dict[str, list[tuple[float, dict]]] = defaultdict(list)
    for run, size in sized:
        families[ctx.family_of(run["model"])].append((size, run))
    table = Table("spin-scaling", "κ by model size (Fig. 7)", ["family", "model", "size (B)", "overall κ",
                                                                "tasks"])
    for fam, members in sorted(families.items()):
        members.sort(key=lambda m: m[0])
        xs = [s for s, _ in members]
        overall = [kappa_of(run["by_suite"]["spin"]) for _, run in members]
        panels["overall"][fam] = (xs, [np.nan if k is None else k for k in overall])
        for s, run in members:
            tk = _task_kappa(run)
            for task, k in tk.items():
                panels[task].setdefault(fam, ([], []))
                panels[task][fam][0].append(s)
                panels[task][fam][1].append(np.nan if k is None else k)
            table.rows.append([fam, run["model"], f"{s:g}", num(kappa_of(run["by_suite"]["spin"])),
                               "; ".join(f"{t} {num(k, 2)}" for t, k in sorted(tk.items()))])
    path, fig = ctx.figure("spin-scaling", "κ vs model size per family (Fig. 7)")
    figures.lines({}, fig.title, "parameters (B)", "κ", path, logx=True, panels=dict(panels))
    sec.blocks += [fig, table]
