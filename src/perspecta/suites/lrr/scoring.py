"""LRR scoring: yes/no extraction and the paper's chance-normalised task score.

The paper scores task i with accuracy p_i (percent) as s_i = 2 (p_i - 50) 1[p_i >= 50]:
chance (50) and anything below give 0, a perfect task gives 100; the total S is the
sum over tasks. We treat each (task, variant) as a task, so the Clear variants count
separately as in the paper's tables.

Answer extraction: the paper calls any response without the word "No" a "yes". That
rewards empty or off-topic output, so records are scored by the harness's one answer
grammar (:func:`perspecta.score.extract.parse`, docs/scoring.md): an explicit answer,
or a reply that starts or concludes with yes/no; hedges ("no idea", "yes and no") and
replies without an answer are unparsed and count wrong. :func:`parse_yes_no` exposes
that same reading (``mode="strict"``) beside the paper's rule (``mode="paper"``, kept
to reproduce its numbers in the report's "paper's parsing rule" column).
"""

from __future__ import annotations

import re
from typing import Literal

from perspecta.score.extract import yes_no
from perspecta.score.records import ScoredRecord

ParseMode = Literal["strict", "paper"]

_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def task_score(accuracy_percent: float) -> float:
    """s = 2 (p - 50) if p >= 50 else 0, for an accuracy p in percent (0..100)."""
    p = float(accuracy_percent)
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"accuracy must be a percentage in [0, 100], got {accuracy_percent}")
    return 2.0 * (p - 50.0) if p >= 50.0 else 0.0


def total_score(accuracies_percent: dict[str, float]) -> float:
    """S = sum of the task scores."""
    return sum(task_score(p) for p in accuracies_percent.values())


def parse_yes_no(text: str | None, mode: ParseMode = "strict") -> str | None:
    """"yes", "no", or None when the response gives no usable answer.

    strict: the harness's answer grammar for a yes/no item (:func:`perspecta.score.extract.yes_no`),
    the very reading every LRR record is scored with.
    paper: "no" if the word "no" occurs anywhere (any case), else "yes" — even for an
    empty response, exactly as the paper scores its direct-answer mode.
    """
    if mode == "paper":
        found = text is not None and any(m.group(1).lower() == "no" for m in _WORD.finditer(text))
        return "no" if found else "yes"
    if mode != "strict":
        raise ValueError(f"unknown parse mode {mode!r}; use 'strict' or 'paper'")
    return yes_no(text)


def task_key(record: ScoredRecord) -> str:
    """The scoring unit: the task, with non-base variants (Clear) as separate tasks."""
    return record.task if record.variant in ("", "base") else f"{record.task}/{record.variant}"


def paper_rule(record: ScoredRecord) -> dict[str, float]:
    """Per record: 1.0/0.0 for whether the paper's "no 'No' means yes" rule is right."""
    if record.status == "failed" or record.response is None:
        return {}
    return {"paper_rule_correct": 1.0 if parse_yes_no(record.response, "paper") == record.answer else 0.0}
