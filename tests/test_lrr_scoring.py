"""LRR score and yes/no parsing against hand-worked values."""

from __future__ import annotations

import pytest

from perspecta.score.records import ScoredRecord
from perspecta.score.registry import record_scorers_for
from perspecta.suites.lrr.accumulate import LrrMetrics
from perspecta.suites.registry import suite_spec
from perspecta.suites.lrr.scoring import (
    parse_yes_no,
    task_score,
    total_score,
)


@pytest.mark.parametrize(("p", "s"), [(50, 0.0), (75, 50.0), (40, 0.0), (100, 100.0), (0, 0.0), (62.5, 25.0), (51, 2.0)])
def test_task_score_hand_values(p: float, s: float) -> None:
    assert task_score(p) == pytest.approx(s)


def test_task_score_rejects_fractions_and_out_of_range() -> None:
    for bad in (-1, 100.5, 101):
        with pytest.raises(ValueError):
            task_score(bad)


def test_total_score_sums_tasks() -> None:
    # 75 -> 50, 90 -> 80, 30 -> 0
    assert total_score({"pos": 75, "dep": 90, "ca_r": 30}) == pytest.approx(130.0)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Yes", "yes"),
        ("No.", "no"),
        ("  **No**", "no"),
        ("Yes, the car is in the top-left corner.", "yes"),
        ("The sheep walks right but its head points left, so no.", "no"),
        ("Looking at A and B... yes it moved? Actually no.\nAnswer: No", "no"),
        ("No doubt about it. Answer: yes", "yes"),
        ("Nope", "no"),
        ("No idea.", None),
        ("yes and no", None),
        ("I cannot tell from these images.", None),
        ("", None),
        (None, None),
        ("Yesterday the sheep was here; now it is not.", None),  # 'Yesterday' is not 'yes'
        ("Maybe yes, maybe no", None),
    ],
)
def test_parse_strict(text: str | None, want: str | None) -> None:
    assert parse_yes_no(text) == want


def test_strict_parser_is_the_scoring_extractor() -> None:
    """One reading: what parse_yes_no says is what an LRR record is scored with."""
    from perspecta.dataset.item import Item
    from perspecta.score.scoring import score_response

    item = Item(id="lrr/pos/base/0", suite="lrr", task="pos", question="Q", images=[], answer_type="yesno",
                answer="no")
    for text in ("No.", "No idea.", "Yes, it is.", "I cannot tell.", "Nope", "so no"):
        assert score_response(item, model="m", response=text).prediction == parse_yes_no(text)


@pytest.mark.parametrize(
    ("text", "want"),
    [("Yes", "yes"), ("No.", "no"), ("I cannot tell.", "yes"), ("", "yes"), (None, "yes"),
     ("Answer: yes, there is no doubt", "no"), ("Nothing moved", "yes")],
)
def test_parse_paper_rule(text: str | None, want: str) -> None:
    assert parse_yes_no(text, "paper") == want


def test_parse_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError):
        parse_yes_no("Yes", "lenient")  # type: ignore[arg-type]


def _rec(task: str, correct: bool | None, *, variant: str = "base", response: str | None = "x", answer: str = "yes",
         status: str = "ok", mode: str = "direct") -> ScoredRecord:
    return ScoredRecord(item_id=f"lrr/{task}/{variant}/0", suite="lrr", task=task, model="m", answer=answer,
                        status=status, correct=correct, response=response, variant=variant,  # type: ignore[arg-type]
                        answer_type="yesno", prompt_mode=mode)


def lrr_score(records: list[ScoredRecord], *, with_scores: bool = True) -> dict:
    """The accumulator's result of one run (one prompt mode), as `perspecta score` shows it;
    without ``with_scores`` the paper-rule score is recomputed from the response."""
    acc = LrrMetrics()
    for r in records:
        d = r.to_dict()
        if with_scores:
            d["scores"] = {k: v for fn in record_scorers_for("lrr") for k, v in fn(r).items()}
        acc.add(d)
    return acc.result()["score"]


def test_suite_metric_per_task_and_total(rounded) -> None:
    records = (
        [_rec("pos", True, response="Yes")] * 3 + [_rec("pos", False, response="No")]  # 75% -> 50
        + [_rec("obj_hd", True, variant="clear", response="Yes"), _rec("obj_hd", False, variant="clear", response="No")]  # 50% -> 0
        + [_rec("dep", None, response=None, status="failed"), _rec("dep", True, response="Yes")]  # failed counts wrong: 50%
        + [_rec("ca_r", True, mode="reason", response="Answer: Yes")]
    )
    out = lrr_score([r for r in records if r.prompt_mode == "direct"])
    assert lrr_score([r for r in records if r.prompt_mode == "direct"], with_scores=False) == out
    d = out["direct"]
    assert d["accuracy"] == {"dep": 50.0, "obj_hd/clear": 50.0, "pos": 75.0}
    assert d["score"] == {"dep": 0.0, "obj_hd/clear": 0.0, "pos": 50.0}
    assert d["total"] == 50.0 and d["max_total"] == 300.0
    assert d["n"] == {"dep": 2, "obj_hd/clear": 2, "pos": 4}
    # paper rule on the raw responses: pos 'Yes'x3 right, 'No' wrong (gold yes) -> 75;
    # obj_hd: 'Yes' right, 'No' wrong -> 50; dep: no response -> wrong, 'Yes' right -> 50
    assert d["paper_rule"]["accuracy"] == {"dep": 50.0, "obj_hd/clear": 50.0, "pos": 75.0}
    assert lrr_score([r for r in records if r.prompt_mode == "reason"])["reason"]["score"] == {"ca_r": 100.0}
    # two merged shards give the figures of one pass
    mine = [r for r in records if r.prompt_mode == "direct"]
    a, b = LrrMetrics(), LrrMetrics()
    for i, r in enumerate(mine):
        (a if i % 2 else b).add(r.to_dict())
    a.merge(b)
    assert rounded(a.result()["score"]) == rounded(out)


def test_paper_rule_differs_from_strict_on_unparseable_output() -> None:
    # An off-topic response to a "yes" item: strict = unparsed (wrong), paper rule = "yes" (right).
    r = _rec("pos", False, response="The image shows a street.", status="unparsed")
    out = lrr_score([r])["direct"]
    assert out["accuracy"]["pos"] == 0.0
    assert out["paper_rule"]["accuracy"]["pos"] == 100.0


def test_registered_with_the_score_registry() -> None:
    assert suite_spec("lrr").metrics is LrrMetrics
    scorers = record_scorers_for("lrr")
    assert any(s(_rec("pos", True, response="yes")) == {"paper_rule_correct": 1.0} for s in scorers)


def test_metric_rejects_non_yesno_records() -> None:
    r = _rec("pos", True)
    r.answer_type = "mcq"
    assert "LRR scores yes/no items" in lrr_score([r])["error"]
