"""The shortcut audit of the evaluated dataset (``perspecta audit``), when its JSON is
found: ``--audit FILE``, else ``audit.json`` inside the dataset directory (where
``perspecta run`` writes it). The audit says what a model could score without the skill,
so the leaderboard above can be read against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perspecta.audit import AUDIT_FILE
from perspecta.report.context import Context, Section
from perspecta.report.load import dataset_from_runs
from perspecta.report.tables import DASH, Table, pct

PREDICTORS = ("prior", "text", "ids", "images", "features")


def find_audit(ctx: Context) -> Path | None:
    if ctx.options.audit is not None:
        return ctx.options.audit
    root = ctx.dataset.root if ctx.dataset is not None else ctx.options.dataset or dataset_from_runs(ctx.files)
    if root is not None and (Path(root) / AUDIT_FILE).is_file():
        return Path(root) / AUDIT_FILE
    return None


def _est(e: dict[str, Any] | None) -> str:
    return DASH if e is None else f"{pct(e['value'], 0)} [{pct(e['lo'], 0)}, {pct(e['hi'], 0)}]"


def _verdict(c: dict[str, Any]) -> str:
    return "control" if c["control"] else "too few" if not c["judged"] else "FAIL" if c["fail"] else "ok"


def build(ctx: Context) -> Section:
    sec = Section("audit", "Shortcut audit",
                  "What a model could score on each task and subtype WITHOUT the skill: out-of-fold accuracy (%) "
                  "of five skill-free predictors, cross-validated by scene/group, with intervals that hold "
                  "together at 95%. FAIL = the lower end of the best predictor's interval more than the threshold "
                  "above chance. See docs/audit.md.")
    path = find_audit(ctx)
    if path is None:
        sec.omitted = f"no audit found (run `perspecta audit DATASET --json DATASET/{AUDIT_FILE}` or pass --audit)"
        return sec
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cells = data["cells"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sec.omitted = f"{path}: not an audit JSON ({type(e).__name__}: {e})"
        return sec
    table = Table("audit", f"Skill-free scores of {data.get('dataset', path.parent)} "
                  f"({sum(bool(c['judged']) and not c['control'] for c in cells)} judged cell(s), "
                  f"{len(data.get('failures', []))} failing, threshold "
                  f"{100 * float(data.get('threshold', 0.05)):g} points)",
                  ["task / subtype", "n", "chance %", "top answer %", *PREDICTORS, "worst gap (lower)", "verdict"],
                  sortable=True)
    for c in cells:
        name = f"{c['suite']}/{c['task']}" + (f" / {c['subtype']}" if c["subtype"] else "")
        gap = DASH if c["gap"] is None else f"{100 * c['gap']:+.0f} (≥{100 * c['gap_lo']:+.0f}) {c['worst']}"
        table.rows.append([name + (" (text-only control)" if c["control"] else ""), str(c["n"]),
                           pct(c["chance"], 0), f"{pct(c['answer_share']['value'], 0)} {c['answer_share']['top']}",
                           *(_est(c["predictors"].get(p)) for p in PREDICTORS), gap, _verdict(c)])
    sec.blocks.append(table)
    if not any(c["judged"] and not c["control"] for c in cells):
        sec.notes.append("Nothing judged: no cell has enough scene clusters for a verdict, so this audit neither "
                         "passes nor fails the dataset (0 failing cells means nothing here). Audit a larger "
                         "dataset (e.g. `perspecta generate --n 60`) to learn whether it has shortcuts.")
    for c in cells:
        if c.get("fail") and c.get("evidence"):
            sec.notes.append(f"{c['suite']}/{c['task']}{' / ' + c['subtype'] if c['subtype'] else ''} "
                             f"[{c['worst']}]: " + "; ".join(c["evidence"]))
    readability = data.get("readability") or {}
    if readability:
        qs = sorted({q for rec in readability.values() for q in rec.get("quantities", {})})
        rt = Table("audit-readability", "Readability contract per task (min / median)", ["task", "items", *qs])
        for task, rec in readability.items():
            got = rec.get("quantities", {})
            rt.rows.append([task, str(rec.get("items", "")),
                            *(f"{got[q]['min']:g} / {got[q]['median']:g}" if q in got else DASH for q in qs)])
        sec.blocks.append(rt)
    return sec
