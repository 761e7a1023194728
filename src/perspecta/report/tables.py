"""Report tables: one small record rendered both as Markdown and (by the template) as HTML.

Cells are pre-formatted strings so the Markdown and HTML show the same digits; the
HTML sorts numerically by the leading number of a cell (``—`` sorts last).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

DASH = "—"


def pct(x: float | None, digits: int = 1) -> str:
    """A share as a percentage, or a dash when there is no value."""
    return DASH if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}"


def num(x: float | None, digits: int = 3) -> str:
    return DASH if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def signed(x: float | None, digits: int = 3) -> str:
    return DASH if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.{digits}f}"


def asked(n: int, failed: int = 0, unparsed: int = 0) -> str:
    """The records in a figure's denominator, with how many of them had no answer, so a
    reader sees coverage beside the figure: ``40``, ``40 (3 failed, 1 unparsed)``."""
    missing = [f"{k} {what}" for k, what in ((failed, "failed"), (unparsed, "unparsed")) if k]
    return f"{n} ({', '.join(missing)})" if missing else str(n)


def asked_of(counts: Mapping[str, int]) -> str:
    """:func:`asked` of a mapping with ``n`` and optionally ``failed`` / ``unparsed`` (an accuracy
    block, a suite metric's counts)."""
    return asked(counts["n"], counts.get("failed", 0), counts.get("unparsed", 0))


def pct_ci(acc: float | None, ci: tuple[float, float] | None) -> str:
    if acc is None:
        return DASH
    return pct(acc) + (f" [{pct(ci[0])}, {pct(ci[1])}]" if ci else "")


@dataclass
class Table:
    slug: str  # file name under tables/ and HTML anchor
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    sortable: bool = False

    def to_markdown(self) -> str:
        def esc(text: str) -> str:
            return str(text).replace("|", "\\|").replace("\n", " ")

        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        if not self.rows:
            return "\n".join(lines + ["(no rows)", ""])
        lines.append("| " + " | ".join(esc(c) for c in self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"
