"""The suite's report section: accuracy per height-ratio band and run."""

from __future__ import annotations

from perspecta.report.context import Context, Section
from perspecta.report.tables import DASH, Table, pct

from perspecta_taller.task import SUITE


def build(ctx: Context) -> Section:
    sec = Section("taller", "Taller — which of two objects is taller",
                  "Accuracy % per band of the height ratio (taller / shorter); every item asked counts.")
    pairs = ctx.with_suite(SUITE)
    if not pairs:
        sec.omitted = "no taller records in the results"
        return sec
    bands = sorted({b for run, _ in pairs for b in run["suite_metrics"][SUITE]["by_height_ratio"]})
    table = Table("taller-ratio", "Taller: accuracy % by height ratio", ["model", *bands], sortable=True)
    for run, _ in pairs:
        cells = run["suite_metrics"][SUITE]["by_height_ratio"]
        table.rows.append([ctx.label(run), *[pct(cells[b]["accuracy"]) if b in cells else DASH for b in bands]])
    sec.blocks.append(table)
    return sec
