"""Answer extraction on hand-written responses; every expected label worked out by reading."""

from __future__ import annotations

import pytest

from perspecta.dataset.item import Item, letter_options
from perspecta.score.extract import extract, is_correct, normalise
from perspecta.score.scoring import score_response

OPTS = ["Facing toward the camera", "Turned sideways, perpendicular to the camera",
        "Facing away from the camera", "Cannot be determined"]


def mcq(answer: str = "C") -> Item:
    return Item(id="t/x/base/000000", suite="dori", task="view_parallelism", question="<image>\nQ?",
                images=["a.png"], answer_type="mcq", answer=answer, options=letter_options(OPTS))


def yesno(answer: str = "yes") -> Item:
    return Item(id="t/y/base/000000", suite="spin", task="y", question="Q?", images=[], answer_type="yesno",
                answer=answer)


def open_item(answer: str, aliases: list[str] | None = None, candidates: list[str] | None = None) -> Item:
    return Item(id="t/o/base/000000", suite="pcsr", task="o", question="Q?", images=[], answer_type="open",
                answer=answer, answer_aliases=aliases or [],
                metadata={"candidates": candidates} if candidates is not None else {})


@pytest.mark.parametrize("text,expected", [
    ("<answer>C</answer>", "C"),
    ("I think B... <answer>(C)</answer>", "C"),  # the tag wins over earlier letters
    ('{"answer": "B", "reasoning": "its face is visible"}', "B"),
    ('"answer": "C", "reasoning": "A car whose back we see"', "C"),
    ("The answer is D because nothing marks a front.", "D"),
    ("Answer: A because its face is visible", "A"),
    ("B", "B"),
    ("(B)", "B"),
    ("B. Turned sideways", "B"),
    ("It is facing away from the camera.", "C"),  # option text, no letter
    ("A car seen from behind, so C.", "C"),  # the article "A" is not a letter
    ("Cannot be determined", "D"),
])
def test_mcq_extraction(text: str, expected: str) -> None:
    assert extract(text, mcq()) == expected


@pytest.mark.parametrize("text", [
    "",
    "I am not sure what the picture shows.",
    "Either B or C could be right.",  # two letters: ambiguous
    "<answer>E</answer>",  # not an option label, not an option text
    "It is facing toward the camera or maybe facing away from the camera.",  # two option texts
    "<answer>B</answer> no wait <answer>D</answer>",  # two different tagged answers
    "A or B", "Answer: B or A", "Both C and A are plausible.",  # issue 15: never credited
])
def test_mcq_unparsed(text: str) -> None:
    assert extract(text, mcq()) is None


def test_option_text_contained_in_longer_option_counts_once() -> None:
    item = Item(id="i", suite="s", task="t", question="Q", images=[], answer_type="mcq", answer="B",
                options=letter_options(["left", "front left"]))
    assert extract("front left", item) == "B"
    assert extract("left", item) == "A"


@pytest.mark.parametrize("text,expected", [
    ("Yes.", "yes"), ("<answer>no</answer>", "no"), ("No, they are not aligned", "no"),
    ("yes and no", None), ("maybe", None),
])
def test_yesno(text: str, expected: str | None) -> None:
    assert extract(text, yesno()) == expected


def test_open_answers_numbers_and_aliases() -> None:
    assert normalise("The Red Mug!") == "red mug"
    assert normalise("three") == "3"
    item = open_item("3", candidates=[str(i) for i in range(11)])
    assert extract("<answer>three</answer>", item) == "3"
    assert extract("I count 3 chairs.", item) == "3"
    assert extract("I count 3 chairs and 2 tables.", item) is None  # two numbers: ambiguous
    car = open_item("red mug", ["mug"], candidates=["red mug", "lamp", "chair"])
    assert extract("<answer>The mug</answer>", car) == "mug"
    assert is_correct("mug", car) and is_correct("red mug", car)
    assert extract("It is the red mug on the left.", car) == "red mug"
    assert not is_correct("blue mug", car)


def test_open_extraction_never_reads_the_gold_answer() -> None:
    """Issue 15: a short reply naming the gold among others was credited; now the reading is the
    same whatever the gold is, and two candidates are no answer."""
    for gold in ("dog", "chair"):
        item = open_item(gold, candidates=["dog", "chair", "lamp"])
        assert extract("dog or chair", item) is None
        assert extract("It is the mug on the left.", open_item(gold)) is None  # a sentence, no known candidate


def test_score_response_statuses() -> None:
    item = mcq("C")
    ok = score_response(item, model="m", response="<answer>C</answer>")
    assert (ok.status, ok.prediction, ok.correct) == ("ok", "C", True)
    wrong = score_response(item, model="m", response="<answer>A</answer>")
    assert (wrong.status, wrong.correct) == ("ok", False)
    unparsed = score_response(item, model="m", response="no idea")
    assert (unparsed.status, unparsed.prediction, unparsed.correct) == ("unparsed", None, False)
    failed = score_response(item, model="m", response=None, error="HTTP 500")
    assert (failed.status, failed.correct, failed.error, failed.response) == ("failed", None, "HTTP 500", None)
    assert ok.n_options == 4 and ok.answer == "C" and ok.suite == "dori"
