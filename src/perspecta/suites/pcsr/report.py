"""PCSR-Bench: the T0–T7 table with strict and relaxed accuracy (Table 1) and open vs MCQ."""

from __future__ import annotations

import re

import numpy as np

from perspecta.report.context import Context, Section
from perspecta.report.sections.common import repeat_error_bars
from perspecta.report.tables import DASH, Table, asked_of, pct


def task_codes() -> dict[str, str]:
    """Task name -> "T<k>" from the registered task descriptions ("T3: ..."), so the table follows the suite."""
    from perspecta.suites import registry

    registry.load_builtin_suites()
    out = {}
    for t in registry.tasks("pcsr"):
        m = re.match(r"(T\d+)\b", t.description)
        out[t.name] = m.group(1) if m else t.name
    return out


def build(ctx: Context) -> Section:
    sec = Section("pcsr", "PCSR-Bench — panoramic spatial reasoning",
                  "Relaxed (strict) accuracy % per task, as Table 1: strict = equal after normalisation; relaxed "
                  "adds intent, synonyms, instance-to-class and bounded-substring matches. Avg = mean over tasks, "
                  "relaxed (strict) like every cell.")
    pairs = ctx.with_suite("pcsr")
    if not pairs:
        sec.omitted = "no PCSR records in the results"
        return sec
    codes = task_codes()
    tasks = sorted({k for run, _ in pairs for k in run["suite_metrics"]["pcsr"]["strict_relaxed"]["n"]
                    if "/" not in k and k != "overall"}, key=lambda t: (codes.get(t, "T99"), t))
    table = Table("pcsr-tasks", "PCSR relaxed (strict) accuracy % per task (Table 1)",
                  ["model", "n asked", *[f"{codes.get(t, t)} {t}" for t in tasks], "Avg", "overall (records)"],
                  sortable=True)
    for run, _ in pairs:
        sr = run["suite_metrics"]["pcsr"]["strict_relaxed"]
        cells, relaxed, strict = [], [], []
        for t in tasks:
            if t in sr["n"]:
                cells.append(f"{pct(sr['relaxed'][t])} ({pct(sr['strict'][t])})")
                relaxed.append(sr["relaxed"][t])
                strict.append(sr["strict"][t])
            else:
                cells.append(DASH)
        # Avg as every other cell: relaxed (strict); it showed the relaxed mean alone, unlabelled
        table.rows.append([ctx.label(run), asked_of(run["by_suite"]["pcsr"]), *cells,
                           f"{pct(float(np.mean(relaxed)))} ({pct(float(np.mean(strict)))})" if relaxed else DASH,
                           f"{pct(sr['relaxed']['overall'])} ({pct(sr['strict']['overall'])})"])
    sec.blocks.append(table)
    formats = Table("pcsr-formats", "PCSR open vs multiple-choice answers: relaxed (strict) accuracy %, n",
                    ["model", "answer type", "n", "relaxed", "strict"])
    for run, _ in pairs:
        sr = run["suite_metrics"]["pcsr"]["strict_relaxed"]
        sums: dict[str, list[float]] = {}
        for key, n in sr["n"].items():
            if "/" in key:
                fmt = key.split("/", 1)[1]
                s = sums.setdefault(fmt, [0.0, 0.0, 0])
                s[0] += sr["relaxed"][key] * n
                s[1] += sr["strict"][key] * n
                s[2] += n
        for fmt, (rel, strict, n) in sorted(sums.items()):
            formats.rows.append([ctx.label(run), fmt, str(n), pct(rel / n), pct(strict / n)])
    sec.blocks.append(formats)
    repeat_error_bars(ctx, sec, "pcsr")
    return sec
