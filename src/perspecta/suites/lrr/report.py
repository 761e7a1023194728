"""LRR-Bench: per-task accuracy and score (Table II), a radar of the best run per model
family (Fig. 10), and direct vs reasoning prompt modes."""

from __future__ import annotations

from collections import defaultdict

from perspecta.report import figures
from perspecta.report.context import Context, Section
from perspecta.report.sections.common import repeat_error_bars
from perspecta.report.tables import DASH, Table, asked_of, num, pct


def _score(run):
    s = run["suite_metrics"]["lrr"]["score"]
    return None if "error" in s else s[run["prompt_mode"]]


def build(ctx: Context) -> Section:
    sec = Section("lrr", "LRR-Bench — positions and movement",
                  "Per-task accuracy % with the paper's score s = 2(p − 50) for p ≥ 50, else 0 (chance scores 0, "
                  "perfect 100); S is the sum over tasks. Unparsed and failed responses count as wrong.")
    pairs = [(run, st) for run, st in ctx.with_suite("lrr")]
    for run, _ in pairs:
        if _score(run) is None:
            sec.notes.append(f"{ctx.label(run)}: {run['suite_metrics']['lrr']['score']['error']}")
    pairs = [(run, st) for run, st in pairs if _score(run) is not None]
    if not pairs:
        sec.omitted = "no LRR records in the results"
        return sec
    tasks = sorted({t for run, _ in pairs for t in _score(run)["accuracy"]})
    table = Table("lrr-tasks", "LRR accuracy % (score) per task (Table II), over every item asked",
                  ["model", "n asked", *tasks, "S", "max"], sortable=True)
    for run, _ in pairs:
        s = _score(run)
        table.rows.append([ctx.label(run), asked_of(run["by_suite"]["lrr"]),
                           *[f"{s['accuracy'][t]:.1f} ({s['score'][t]:.1f})" if t in s["accuracy"]
                                             else DASH for t in tasks], f"{s['total']:.1f}", f"{s['max_total']:.0f}"])
    sec.blocks.append(table)
    best: dict[str, dict] = {}
    for run, _ in pairs:
        fam = ctx.family_of(run["model"])
        if fam not in best or _score(run)["total"] > _score(best[fam])["total"]:
            best[fam] = run
    series = {f"{fam}: {ctx.label(run)}": [_score(run)["score"].get(t, 0.0) for t in tasks]
              for fam, run in sorted(best.items())}
    if len(tasks) >= 3:
        path, fig = ctx.figure("lrr-radar", "LRR task scores of the best run per model family (Fig. 10)")
        figures.radar(tasks, series, fig.title, path)
        sec.blocks.append(fig)
    else:
        sec.notes.append("Radar (Fig. 10) omitted: fewer than 3 LRR tasks.")
    _modes(ctx, sec, pairs)
    repeat_error_bars(ctx, sec, "lrr")
    return sec


def _modes(ctx: Context, sec: Section, pairs) -> None:
    # per (model, dataset): a model run on two datasets must not compare one's direct with the
    # other's reasoning mode (the later dataset's run used to replace the earlier's in this dict)
    by_model: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for run, _ in pairs:
        by_model[(run["model"], run.get("dataset", ""))][run["prompt_mode"]] = run
    table = Table("lrr-modes", "LRR direct answers vs reasoning prompt modes (Tables II/III)",
                  ["model", "mode", "mean accuracy %", "S", "S (paper's parsing rule)", "Δ S vs direct"])
    for _key, modes in sorted(by_model.items()):
        if len(modes) < 2:
            continue
        base = _score(modes["direct"])["total"] if "direct" in modes else None
        for mode, run in sorted(modes.items()):
            s = _score(run)
            acc = sum(s["accuracy"].values()) / len(s["accuracy"]) / 100 if s["accuracy"] else None
            table.rows.append([ctx.label(run), mode, pct(acc), f"{s['total']:.1f}", f"{s['paper_rule']['total']:.1f}",
                               DASH if base is None or mode == "direct" else num(s["total"] - base, 1)])
    if table.rows:
        sec.blocks.append(table)
    else:
        sec.notes.append("Direct vs reasoning omitted: no model was run in more than one prompt mode.")
