"""The audit as rich tables: every cell, the worst gap per suite, readability."""

from __future__ import annotations

from rich import box
from rich.table import Table

from perspecta.audit.core import POOLED, AuditResult, Cell
from perspecta.audit.features import FAMILIES, FAMILY_TITLES
from perspecta.audit.readability import QUANTITIES
from perspecta.audit.stats import Estimate


def pts(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}"


def estimate(e: Estimate | None) -> str:
    return "—" if e is None else f"{pts(e.value)} [{pts(e.lo)},{pts(e.hi)}]"


def verdict(c: Cell) -> str:
    if c.control:
        return "control"
    if not c.judged:
        return "too few"
    return "FAIL" if c.fail else "ok"


def gap_text(c: Cell) -> str:
    if c.gap is None:
        return "—"
    return f"{100 * c.gap:+.0f} (≥{100 * c.gap_lo:+.0f}) {c.worst}"  # type: ignore[operator]


def cells_table(result: AuditResult) -> Table:
    t = Table(title=f"Skill-free scores (%, out-of-fold, 95% interval) — {result.dataset}", box=box.SIMPLE_HEAD,
              caption=f"FAIL = lower end of the worst predictor's interval more than {100 * result.threshold:g} "
                      f"points above chance; cells with < {result.min_clusters} clusters are not judged.")
    t.add_column("task / subtype", overflow="fold", min_width=30)
    t.add_column("n (clusters)", justify="right", no_wrap=True)
    t.add_column("chance", justify="right", no_wrap=True)
    t.add_column("top answer", overflow="ellipsis", max_width=24, no_wrap=True)
    t.add_column("top letter", no_wrap=True)
    for fam in FAMILIES:
        t.add_column(FAMILY_TITLES[fam], justify="right", no_wrap=True)
    t.add_column("worst gap (lower)", no_wrap=True)
    t.add_column("verdict", no_wrap=True)
    for c in result.cells:
        name = f"{c.suite}/{c.task}" if c.subtype is None else f"  {c.subtype}"
        pooled = c.task == POOLED
        if pooled:
            name += " (all tasks pooled)"
        if c.control:
            name += " (text-only control)"
        letter = "—" if c.letter_share is None else f"{pts(c.letter_share.value)} {c.top_letter}"
        style = "bold red" if c.fail else ("dim" if not c.judged or c.control else None)
        t.add_row(name, f"{c.n} ({c.clusters})", pts(c.chance), "—" if pooled else f"{pts(c.answer_share.value)} {c.top_answer}",
                  letter, *(estimate(c.predictors.get(f)) for f in FAMILIES), gap_text(c), verdict(c),
                  style=style)
    return t


def worst_table(result: AuditResult) -> Table:
    """One row per suite: its cell with the highest gap lower bound (judged cells first)."""
    t = Table(title="Worst skill-free gap per suite (points)", box=box.SIMPLE_HEAD)
    t.add_column("suite", no_wrap=True)
    t.add_column("task / subtype", overflow="fold", min_width=24)
    for col in ("predictor", "score", "chance", "gap (lower)", "verdict"):
        t.add_column(col, no_wrap=True, justify="left" if col in ("predictor", "verdict") else "right")
    worst = result.worst_by_suite()
    for suite in sorted({c.suite for c in result.cells}):
        c = worst.get(suite)
        if c is None:  # no cell with clusters enough for two folds
            t.add_row(suite, "—", "—", "—", "—", "—", "too few")
            continue
        w = c.worst
        score = c.predictors.get(w) if w else None
        gap = "—" if c.gap is None else f"{100 * c.gap:+.0f} (≥{100 * c.gap_lo:+.0f})"  # type: ignore[operator]
        t.add_row(suite, c.key.split("/", 1)[1], w or "—", pts(score.value if score else None), pts(c.chance), gap,
                  verdict(c), style="bold red" if c.fail else None)
    return t


def evidence_lines(result: AuditResult) -> list[str]:
    seen: set[tuple[str, str, str]] = set()
    lines = []
    for c in result.failures:
        key = (c.suite, c.task, c.worst or "")
        if c.evidence and key not in seen:
            seen.add(key)
            lines.append(f"{c.suite}/{c.task} [{FAMILY_TITLES[c.worst or 'prior']}]: " + "; ".join(c.evidence))
    return lines


def readability_table(result: AuditResult) -> Table | None:
    if not result.readability:
        return None
    t = Table(title="Readability contract per task (min / median / max)", box=box.SIMPLE_HEAD)
    t.add_column("task")
    t.add_column("items", justify="right")
    for q in QUANTITIES:
        t.add_column(q.replace("_", " "), justify="right")
    for task, rec in result.readability.items():
        qs = rec["quantities"]
        t.add_row(task, str(rec["items"]),
                  *(f"{qs[q]['min']:g} / {qs[q]['median']:g} / {qs[q]['max']:g}" if q in qs else "—"
                    for q in QUANTITIES))
    return t
