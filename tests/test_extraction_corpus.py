"""The extraction corpus: hand-labelled replies in the formats real VLMs produce.

Each line of ``data/extraction_corpus.jsonl`` is a reply, the item's format (answer
type, options, candidates), optionally its question (the relation check reads it) and
what a careful reader concludes (``expected``, null = no single answer). Every reply is
read once per possible gold answer: extraction must give the same reading whatever the
gold is (it never looks at it), that reading must be the expected one, and it is credited
exactly when the expected answer is the gold. A row marked ``known_miss`` is a clear
answer the grammar does not yet read: it must stay unparsed (a false zero, never a guess),
and the test says so when a change starts reading it, so the mark can go.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from perspecta.dataset.item import Item, Option
from perspecta.score.extract import is_correct, parse
from perspecta.score.scoring import score_response

CORPUS = Path(__file__).parent / "data" / "extraction_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _golds(row: dict) -> list[str]:
    if row["kind"] == "mcq":
        return [o["label"] for o in row["options"]]
    if row["kind"] == "yesno":
        return ["yes", "no"]
    return list(row["candidates"])


def _item(row: dict, gold: str) -> Item:
    suite = {"mcq": "dori", "yesno": "lrr", "open": "pcsr"}[row["kind"]]
    return Item(id="corpus/0", suite=suite, task="t", question=row.get("question", "Q"), images=[],
                answer_type=row["kind"],
                answer=gold, options=[Option(**o) for o in row.get("options", [])],
                metadata={"candidates": row["candidates"]} if "candidates" in row else {})


def test_corpus_is_large_and_covers_every_style() -> None:
    assert len(ROWS) >= 200
    styles = Counter(r["style"] for r in ROWS)
    assert {"issue", "tags", "json", "phrase", "boxed", "lead", "tail", "bare", "reasoning"} <= set(styles)
    assert sum(r["expected"] is None for r in ROWS) >= 50  # hedges, refusals, two answers


def test_corpus_zero_false_credits_zero_misreads() -> None:
    """Every reply, under every possible gold: read as labelled, credited only when right."""
    misreads, false_credits, gold_dependent = [], [], []
    for row in ROWS:
        readings = set()
        for gold in _golds(row):
            item = _item(row, gold)
            got = parse(row["reply"], item).answer
            readings.add(got)
            rec = score_response(item, model="m", response=row["reply"])
            should = row["expected"] is not None and is_correct(row["expected"], item) and not row.get("known_miss")
            if bool(rec.correct) and not should:
                false_credits.append((row["reply"], gold, got))
        if len(readings) > 1:
            gold_dependent.append((row["reply"], readings))
        got = readings.pop() if len(readings) == 1 else readings
        if row.get("known_miss"):
            if got is not None:
                misreads.append(("known_miss now read: drop the mark if right", row["reply"], row["expected"], got))
            continue
        if got != row["expected"]:
            misreads.append((row["style"], row["reply"], row["expected"], got))
    assert not gold_dependent, gold_dependent
    assert not misreads, "\n".join(map(repr, misreads))
    assert not false_credits, false_credits


@pytest.mark.parametrize("row", [r for r in ROWS if r["style"] == "issue"], ids=lambda r: r["reply"][:40])
def test_issue_cases(row: dict) -> None:
    for gold in _golds(row):
        assert parse(row["reply"], _item(row, gold)).answer == row["expected"]


def test_known_misses_are_few() -> None:
    """Clear answers left unread are a bounded, visible debt, not a place to park failures."""
    misses = [r for r in ROWS if r.get("known_miss")]
    assert all(r["expected"] is not None for r in misses)
    assert len(misses) <= 0.01 * len(ROWS)


def test_relation_check_uses_the_question() -> None:
    """The same statement answers "which is on the right?" but not "which is on the left?"."""
    row = {"kind": "mcq", "options": [{"label": "A", "text": "laptop"}, {"label": "B", "text": "mug"}]}

    def read(question: str, reply: str) -> str | None:
        return parse(reply, _item({**row, "question": question + "\nA. laptop\nB. mug"}, "A")).answer

    assert read("Which object is on the left?", "The laptop is on the right.") is None
    assert read("Which object is on the right?", "The laptop is on the right.") == "A"
    assert read("Which object is on the left?", "The mug is to the left of the laptop.") == "B"  # laptop: landmark
    assert read("Which object is farther from the viewer?", "The mug is closer, so the laptop is farther.") == "A"
