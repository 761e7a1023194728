"""PCSR strict/relaxed scoring and GRPO rewards on hand-written completions."""

from __future__ import annotations

import pytest

from perspecta.score.records import ScoredRecord
from perspecta.score.registry import record_scorers_for
from perspecta.suites.pcsr.rewards import (
    WEIGHTS,
    accuracy_reward,
    combined_reward,
    format_reward,
    make_reward,
    reasoning_reward,
)
from perspecta.suites.pcsr.scoring import (
    extract_answer,
    relaxed_match,
    score_response,
    strict_match,
)

ROOM = ["chair", "table", "coffee table", "sofa", "TV", "plant", "refrigerator"]


# ------------------------------------------------------------------ extraction


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>the sofa is near</think><answer>Sofa</answer>", "Sofa"),
        ("<think>x</think><answer> left </answer>", "left"),
        ("<think>maybe <answer>left</answer></think>", None),  # answer only inside think
        ("<think>unclosed reasoning says right", None),  # unclosed think hides the rest
        ("<answer>a</answer> then <answer>b</answer>", "b"),  # last tag wins
        ("no tags at all, the answer is chair", "no tags at all, the answer is chair"),
        ("<answer>left", "left"),  # broken tag: fallback text without the tag
        ("", None),
        (None, None),
    ],
)
def test_extract_answer(response: str | None, expected: str | None) -> None:
    assert extract_answer(response) == expected


def test_fallback_is_bounded_to_200_characters() -> None:
    text = "x" * 500
    assert extract_answer(text) == "x" * 200


# ------------------------------------------------------------------ strict


@pytest.mark.parametrize(
    ("pred", "gold", "ok"),
    [
        ("Left.", "left", True),
        ("the refrigerator", "refrigerator", True),
        ("washing_machine", "washing machine", True),
        ("(B)", "B", True),
        ("on your left", "left", False),
        ("3 chairs", "3", False),
        ("", "left", False),
    ],
)
def test_strict(pred: str, gold: str, ok: bool) -> None:
    assert strict_match(pred, gold) is ok


# ------------------------------------------------------------------ relaxed


@pytest.mark.parametrize(
    ("pred", "gold", "ok"),
    [
        ("on your left", "left", True),  # intent canonicalisation
        ("In front of you.", "front", True),
        ("ahead", "front", True),
        ("behind me", "behind", True),
        ("three", "3", True),  # number word
        ("There are 3 chairs.", "3", True),  # bounded substring
        ("2 or 3", "3", False),  # names a rival candidate
        ("fridge", "refrigerator", True),  # domain synonym
        ("couch", "sofa", True),
        ("television", "TV", True),
        ("office chair", "chair", True),  # instance -> class
        ("chair 2", "chair", True),
        ("second chair", "chair", True),
        ("coffee table", "table", False),  # the longer phrase is another category
        ("table", "coffee table", False),
        ("left or right", "left", False),
        ("right", "left", False),
        ("It is the plant in the corner near the window by the door of the room today", "plant", False),  # too long
        ("sofa", "chair", False),
    ],
)
def test_relaxed_open(pred: str, gold: str, ok: bool) -> None:
    cands = ROOM + ["left", "right", "front", "behind"] + [str(i) for i in range(11)]
    assert relaxed_match(pred, gold, candidates=cands) is ok


def test_relaxed_uses_item_aliases() -> None:
    assert relaxed_match("hob", "stove", aliases=["hob"])
    assert not relaxed_match("hob", "stove")


@pytest.mark.parametrize(
    ("pred", "ok"),
    [("B", True), ("b)", True), ("Option B", True), ("B. sofa", True), ("sofa", True), ("the couch", True),
     ("A", False), ("chair", False), ("sofa or chair", False)],
)
def test_relaxed_mcq(pred: str, ok: bool) -> None:
    options = {"A": "chair", "B": "sofa", "C": "TV", "D": "plant"}
    assert relaxed_match(pred, "B", answer_type="mcq", options=options) is ok


@pytest.mark.parametrize(("pred", "ok"), [("Option A", True), ("The answer is A", True), ("a", True), ("A sofa", False)])
def test_relaxed_mcq_letter_a_is_not_an_article(pred: str, ok: bool) -> None:
    options = {"A": "chair", "B": "sofa"}
    assert relaxed_match(pred, "A", answer_type="mcq", options=options) is ok


def test_relaxed_is_never_stricter_than_strict() -> None:
    s = score_response("<think>t</think><answer>left</answer>", "left", {}, "open")
    assert s == {"strict": 1.0, "relaxed": 1.0}
    s = score_response("<think>t</think><answer>to your left</answer>", "left", {"candidates": ["left", "right"]}, "open")
    assert s == {"strict": 0.0, "relaxed": 1.0}


def test_record_scorer_registered_and_handles_failures() -> None:
    scorers = record_scorers_for("pcsr")
    assert scorers, "pcsr registers a record scorer"
    ok = ScoredRecord(item_id="i", suite="pcsr", task="relative_distance", model="m", answer="sofa", status="ok",
                      response="<think>..</think><answer>couch</answer>", answer_type="open",
                      metadata={"answer_aliases": ["couch"], "candidates": ROOM})
    failed = ScoredRecord(item_id="i", suite="pcsr", task="t", model="m", answer="sofa", status="failed")
    merged: dict[str, float] = {}
    for fn in scorers:
        merged.update(fn(ok))
    assert merged == {"strict": 0.0, "relaxed": 1.0}
    assert scorers[0](failed) == {"strict": 0.0, "relaxed": 0.0}


# ------------------------------------------------------------------ rewards

GOOD = "<think>The sofa is 1 m from the TV, the plant 3 m. So the sofa.</think><answer>sofa</answer>"
TAGLESS = "sofa"
INSIDE = "<think>It is the sofa. <answer>sofa</answer></think>"
WORDY = "<think>The sofa is nearest.</think><answer>I believe it is the big sofa by the wall</answer>"
MISMATCH = "<think>Comparing distances, the plant is nearest.</think><answer>sofa</answer>"
TRAILING = "<think>sofa</think><answer>sofa</answer> extra words after"
NO_CANDIDATE = "<think>Hard to say from here.</think><answer>sofa</answer>"


def test_format_reward_grades_structure() -> None:
    got = format_reward([GOOD, TAGLESS, INSIDE, WORDY, TRAILING, "<answer>sofa</answer><think>x</think>"])
    # good: all four parts; tagless: nothing; answer inside think: only the think part;
    # wordy answer: not short; trailing text: not clean; answer before think: think only
    assert got == [1.0, 0.0, 0.25, 0.75, 0.75, 0.25]


def test_accuracy_reward_task_aware() -> None:
    comps = [GOOD, TAGLESS, INSIDE, WORDY, MISMATCH]
    got = accuracy_reward(comps, answer=["sofa"] * 5, answer_aliases=[["couch"]] * 5,
                          candidates=[ROOM] * 5)
    # tagless falls back to the text; inside-think answers do not count; the wordy answer
    # names the sofa only (bounded substring); the mismatch still answers sofa
    assert got == [1.0, 1.0, 0.0, 1.0, 1.0]
    mcq = accuracy_reward(["<think>x</think><answer>C</answer>", "<think>x</think><answer>TV</answer>"],
                          answer=["C", "C"], answer_type=["mcq", "mcq"],
                          options=[[{"label": "A", "text": "sofa"}, {"label": "C", "text": "TV"}]] * 2)
    assert mcq == [1.0, 1.0]


def test_accuracy_reward_needs_answer_column() -> None:
    with pytest.raises(ValueError):
        accuracy_reward([GOOD])


def test_reasoning_reward_consistency() -> None:
    got = reasoning_reward([GOOD, MISMATCH, NO_CANDIDATE, TAGLESS, INSIDE], candidates=[ROOM] * 5)
    assert got == [1.0, 0.0, 0.5, 0.0, 0.0]


def test_reasoning_reward_reads_candidates_from_metadata_and_messages() -> None:
    msgs = [[{"role": "assistant", "content": MISMATCH}], [{"role": "assistant", "content": GOOD}]]
    meta = [{"candidates": ROOM}, {"candidates": ROOM}]
    assert reasoning_reward(msgs, metadata=meta) == [0.0, 1.0]


def test_combined_reward_weight_sets() -> None:
    kw = {"answer": ["sofa", "sofa"], "candidates": [ROOM, ROOM]}
    main = combined_reward([GOOD, MISMATCH], **kw)
    # GOOD: 0.6*1 + 0.2*1 + 0.2*1; MISMATCH: 0.6*1 + 0.2*1 + 0.2*0
    assert main == pytest.approx([1.0, 0.8])
    no_reason = make_reward("no_reason")([GOOD, INSIDE], **kw)
    assert no_reason == pytest.approx([1.0, 0.25 * 0.25])
    assert set(WEIGHTS) == {"main", "reason_free", "balanced", "no_reason"}
    assert all(abs(sum(w) - 1.0) < 1e-9 for w in WEIGHTS.values())
    with pytest.raises(ValueError):
        make_reward("nope")


# ------------------------------------------------------------------ run metric


def test_strict_relaxed_accuracy_counts_every_record(rounded) -> None:
    """Per task, per (task, format) and overall over every record asked: a failed request
    and an unparsed reply score 0 on both; two merged shards give the figures of one pass."""
    from perspecta.suites.pcsr.accumulate import PcsrMetrics

    def r(task: str, response: str | None, status: str = "ok", answer_type: str = "open") -> dict:
        return ScoredRecord(item_id=f"pcsr/{task}/x", suite="pcsr", task=task, model="m", answer="sofa",
                            status=status, response=response, answer_type=answer_type,  # type: ignore[arg-type]
                            metadata={"answer_aliases": ["couch"], "candidates": ROOM}).to_dict()

    records = [r("relative_distance", "<answer>sofa</answer>"),  # strict and relaxed
               r("relative_distance", "<answer>the couch</answer>"),  # relaxed only
               r("relative_distance", None, status="failed"),
               r("relative_distance", "<answer>chair</answer>", answer_type="mcq"),
               r("counting", "I cannot tell.", status="unparsed")]
    whole, a, b = PcsrMetrics(), PcsrMetrics(), PcsrMetrics()
    for i, rec in enumerate(records):
        whole.add(rec)
        (a if i % 2 else b).add(rec)
    out = whole.result()["strict_relaxed"]
    assert out["n"] == {"counting": 1, "counting/open": 1, "overall": 5, "relative_distance": 4,
                        "relative_distance/mcq": 1, "relative_distance/open": 3}
    assert out["strict"]["relative_distance"] == 0.25 and out["relaxed"]["relative_distance"] == 0.5
    assert out["relaxed"]["relative_distance/open"] == pytest.approx(2 / 3)
    assert out["relaxed"]["overall"] == 0.4 and out["strict"]["counting"] == 0.0
    a.merge(b)
    assert rounded(a.result()) == rounded(whole.result())
