"""SpinBench metrics: the streaming accumulator against hand-worked values and sklearn's
Cohen's kappa, with every record asked in each denominator (a failed or unparsed record
is a wrong answer: a W in its group, its own "no answer" label for Cohen's kappa)."""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pytest

from perspecta.score.records import ScoredRecord
from perspecta.suites.registry import suite_spec
from perspecta.suites.spin.accumulate import SpinMetrics
from perspecta.suites.spin.metrics import NO_ANSWER, PATTERNS, chance_kappa, cohen_kappa, group_consistency, pattern

V4 = ("base", "symmetric", "syntactic", "symmetric+syntactic")


def rec(group: str, variant: str, correct: bool | None, *, status: str = "ok", repeat: int = 0,
        subtype: str = "s", n_options: int = 2, answer: str = "A", prediction: str | None = None,
        task: str = "relation_grounding", metadata: dict | None = None) -> ScoredRecord:
    if prediction is None and status == "ok":
        prediction = answer if correct else "B"
    return ScoredRecord(item_id=f"{group}/{variant}", suite="spin", task=task, model="m", answer=answer,
                        status=status, prediction=prediction, correct=correct, group=group, variant=variant,
                        repeat=repeat, subtype=subtype, n_options=n_options, metadata=metadata or {})


def failed(group: str, variant: str, **kw) -> ScoredRecord:
    return rec(group, variant, None, status="failed", **kw)


def unparsed(group: str, variant: str, **kw) -> ScoredRecord:
    return rec(group, variant, False, status="unparsed", **kw)


def fold(records: list[ScoredRecord]) -> dict:
    acc = SpinMetrics()
    for r in records:
        acc.add(r.to_dict())
    return acc.result()


def test_cohen_kappa_matches_sklearn_on_random_label_sets() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    checked = 0
    for trial in range(300):
        n = int(rng.integers(1, 60))
        k = int(rng.integers(1, 6))
        labels = [chr(ord("A") + i) for i in range(k)]
        y_true = [labels[i] for i in rng.integers(0, k, n)]
        # mix of agreeing and random predictions so kappa spans negative to 1
        agree = rng.random(n) < rng.random()
        y_pred = [t if a else labels[int(rng.integers(0, k))] for t, a in zip(y_true, agree)]
        if trial % 7 == 0:
            y_pred = [NO_ANSWER if rng.random() < 0.2 else p for p in y_pred]  # failed / unparsed answers
        ours = cohen_kappa(Counter(zip(y_true, y_pred)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns on 0/0
            theirs = float(sk.cohen_kappa_score(y_true, y_pred))
        if math.isnan(theirs):
            assert math.isnan(ours)
        else:
            assert abs(ours - theirs) < 1e-9, (y_true, y_pred, ours, theirs)
            checked += 1
    assert checked > 250


def test_accumulated_cohen_kappa_matches_sklearn_with_failures() -> None:
    """The accumulator's per-subtype Cohen's kappa is sklearn's on (gold, prediction or
    "no answer"), failed records included; dropping the failures would give another value."""
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    records = []
    for i in range(80):
        gold = "ABC"[int(rng.integers(3))]
        kind = rng.random()
        if kind < 0.15:
            records.append(failed(f"g{i}", "base", answer=gold, n_options=3))
        elif kind < 0.25:
            records.append(unparsed(f"g{i}", "base", answer=gold, n_options=3))
        else:
            pred = gold if rng.random() < 0.6 else "ABC"[int(rng.integers(3))]
            records.append(rec(f"g{i}", "base", pred == gold, answer=gold, prediction=pred, n_options=3))
    got = fold(records)["kappa"]
    y_true = [r.answer for r in records]
    y_pred = [r.prediction or NO_ANSWER for r in records]
    assert got["cohen_kappa"]["s"] == pytest.approx(float(sk.cohen_kappa_score(y_true, y_pred)), abs=1e-12)
    answered = [r for r in records if r.status != "failed"]
    without_failed = float(sk.cohen_kappa_score([r.answer for r in answered],
                                                [r.prediction or NO_ANSWER for r in answered]))
    assert got["cohen_kappa"]["s"] < without_failed
    n_failed = sum(r.status == "failed" for r in records)
    n_unparsed = sum(r.status == "unparsed" for r in records)
    assert (got["n"]["s"], got["failed"]["s"], got["unparsed"]["s"]) == (80, n_failed, n_unparsed)
    assert n_failed and n_unparsed


def test_cohen_kappa_hand_worked() -> None:
    # confusion AA=1, AB=1, BB=2: p_o = 3/4; marginals true (2, 2), pred (1, 3): p_e = 8/16
    assert cohen_kappa(Counter(zip("AABB", "ABBB"))) == pytest.approx(0.5, abs=1e-12)
    assert cohen_kappa(Counter(zip("ABAB", "BABA"))) == pytest.approx(-1.0, abs=1e-12)
    assert math.isnan(cohen_kappa(Counter(zip("AAA", "AAA"))))  # chance agreement 1: undefined
    with pytest.raises(ValueError, match="at least one"):
        cohen_kappa({})


def test_chance_kappa_hand_worked() -> None:
    assert chance_kappa(2, 3, 3 * 0.5) == pytest.approx(1 / 3)  # (2/3 - 1/2) / (1/2)
    assert chance_kappa(1, 2, 0.5 + 0.25) == pytest.approx(0.2)  # p_e = 3/8: (1/2 - 3/8) / (5/8)
    assert chance_kappa(1, 4, 1.0) == pytest.approx(0.0)


def test_group_consistency_and_pattern_hand_worked() -> None:
    assert group_consistency([True, True, False, True]) == pytest.approx(0.5)  # 3 of 6 pairs agree
    assert group_consistency([False, False]) == 1.0
    assert group_consistency([None, None]) == 0.0  # two missing answers do not agree
    assert group_consistency([True, None, True]) == pytest.approx(1 / 3)
    assert pattern({"base": True, "symmetric": True, "syntactic": False, "symmetric+syntactic": True}) == "CCWC"
    with pytest.raises(ValueError):
        pattern({"base": True, "symmetric": True})
    assert len(PATTERNS) == 16 and PATTERNS[0] == "CCCC" and PATTERNS[-1] == "WWWW"


def _groups() -> list[ScoredRecord]:
    return [
        # g1: C C W C -> 3 of 6 pairs agree
        rec("g1", "base", True), rec("g1", "symmetric", True), rec("g1", "syntactic", False),
        rec("g1", "symmetric+syntactic", True),
        # g2: base right, symmetric wrong -> 0
        rec("g2", "base", True), rec("g2", "symmetric", False),
        # g3: two wrong and one unparsed (no answer: agrees with nothing) -> 1 of 3 pairs
        rec("g3", "base", False), rec("g3", "symmetric", False), unparsed("g3", "syntactic"),
        # g4: complete and all wrong; g5: complete and all right
        *[rec("g4", v, False) for v in V4],
        *[rec("g5", v, True) for v in V4],
        # g6: base right, the symmetric request failed: a W, so the pair disagrees -> 0
        rec("g6", "base", True), failed("g6", "symmetric"),
        # g7: complete; the syntactic request failed: C C W C -> 3 of 6 pairs agree
        rec("g7", "base", True), rec("g7", "symmetric", True), failed("g7", "syntactic"),
        rec("g7", "symmetric+syntactic", True),
    ]


def test_consistency_over_groups_hand_worked() -> None:
    out = fold(_groups())["consistency"]
    assert out["n_groups"] == 7
    assert out["consistency"] == pytest.approx((0.5 + 0.0 + 1 / 3 + 1.0 + 1.0 + 0.0 + 0.5) / 7)
    assert (out["n_records"], out["failed"], out["unparsed"]) == (4 + 2 + 3 + 4 + 4 + 2 + 4, 2, 1)
    # base~symmetric agrees in g1, g3, g4, g5, g7, not g2 or g6 (a failed variant agrees with nothing)
    assert out["by_pair"]["base~symmetric"] == pytest.approx(5 / 7)
    # base~syntactic: g1 disagree, g3 disagree (unparsed), g4 agree, g5 agree, g7 disagree (failed)
    assert out["by_pair"]["base~syntactic"] == pytest.approx(2 / 5)


def test_failures_lower_consistency_where_skipping_them_would_not() -> None:
    """Old behaviour: a failed variant dropped out and an all-right group with one failure
    scored 1.0. Now it is a W: two right + one failed = 1 of 3 pairs agree."""
    out = fold([rec("g", "base", True), rec("g", "symmetric", True), failed("g", "syntactic")])["consistency"]
    assert out["consistency"] == pytest.approx(1 / 3)
    assert fold([rec("g", "base", True), failed("g", "symmetric")])["consistency"]["n_groups"] == 1
    # a run whose every request failed is not consistent: failures never agree with each other
    all_failed = fold([failed("g", v) for v in V4])
    assert all_failed["consistency"]["consistency"] == 0.0
    assert all_failed["patterns"]["patterns"]["WWWW"] == 1 and all_failed["patterns"]["perfect_rate"] == 0.0


def test_pattern_counts_hand_worked() -> None:
    out = fold(_groups())["patterns"]
    assert out["n_groups"] == 4  # g1, g4, g5, g7
    assert out["patterns"]["CCWC"] == 2 and out["patterns"]["WWWW"] == 1 and out["patterns"]["CCCC"] == 1
    assert sum(out["patterns"].values()) == 4 and len(out["patterns"]) == 16
    assert out["perfect_rate"] == pytest.approx(2 / 4)
    assert (out["n_records"], out["failed"], out["unparsed"]) == (16, 1, 0)


def test_repeats_are_separate_groups_and_duplicates_are_refused() -> None:
    rs = [rec("g", "base", True, repeat=0), rec("g", "symmetric", True, repeat=0),
          rec("g", "base", True, repeat=1), rec("g", "symmetric", False, repeat=1)]
    assert fold(rs)["consistency"]["consistency"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="two records of variant"):
        fold([rec("g", "base", True), failed("g", "base")])


def test_kappa_by_subtype_counts_failed_and_unparsed_as_wrong() -> None:
    rs = [rec("a", "base", True, subtype="x", n_options=4, answer="C"),
          rec("b", "base", False, subtype="x", n_options=4, answer="D", prediction="C"),
          failed("c", "base", subtype="x", n_options=4, answer="C"),
          unparsed("d", "base", subtype="x", n_options=4, answer="D"),
          rec("e", "base", True, subtype="y", n_options=2), failed("f", "base", subtype="y", n_options=2)]
    out = fold(rs)["kappa"]
    # x: 1 right of 4 asked, p_e = 1/4 -> kappa 0 (the answered-only 1/2 would give 1/3)
    assert out["accuracy"]["x"] == 0.25 and out["kappa"]["x"] == pytest.approx(0.0)
    assert (out["n"]["x"], out["failed"]["x"], out["unparsed"]["x"]) == (4, 1, 1)
    # gold C D C D vs predicted C C <none> <none>: p_o = 1/4; marginals gold (C 2, D 2),
    # pred (C 2, <none> 2): p_e = 2*2/16 = 1/4 -> kappa 0
    assert out["cohen_kappa"]["x"] == pytest.approx(0.0)
    # y: 1 of 2 right, 2 options -> kappa 0 (it was 1.0 with the failure left out)
    assert out["accuracy"]["y"] == 0.5 and out["kappa"]["y"] == pytest.approx(0.0)


def test_gaps_count_every_record_asked() -> None:
    prem = [rec(f"p{i}", "base", c, task="relation_transformation", metadata={"premise": p})
            for i, (c, p) in enumerate([(True, True), (True, True), (False, False), (True, False)])]
    prem.append(failed("p9", "base", task="relation_transformation", metadata={"premise": True}))
    person = {"domain": "person"}
    frames = [rec("r1", "base", True, task="dynamic_rotation", metadata={**person, "frame_of_reference": "object"}),
              unparsed("r3", "base", task="dynamic_rotation", metadata={**person, "frame_of_reference": "object"}),
              rec("r2", "base", False, task="dynamic_rotation", metadata={**person, "frame_of_reference": "viewer"})]
    g = fold(prem + frames)["gaps"]
    # with a premise: 2 right of 3 asked (one failed); without: 1 of 2
    assert g["premise"]["with"] == pytest.approx(2 / 3) and g["premise"]["without"] == 0.5
    assert g["premise"]["gap"] == pytest.approx(2 / 3 - 0.5)
    assert g["premise"]["counts"]["with"] == {"n": 3, "failed": 1, "unparsed": 0}
    fr = g["frame_of_reference/dynamic_rotation"]
    assert (fr["own"], fr["viewer"], fr["gap"]) == (0.5, 0.0, 0.5)
    assert fr["counts"]["own"] == {"n": 2, "failed": 0, "unparsed": 1}
    assert g["frame_of_reference/canonical_view"]["gap"] is None


def test_two_halves_merged_equal_the_whole(rounded) -> None:
    records = _groups() + [rec(f"k{i}", "base", i % 3 == 0, subtype="k", n_options=3, answer="ABC"[i % 3],
                               prediction="ABC"[(i * 2) % 3]) for i in range(9)]
    records += [failed("k9", "base", subtype="k", n_options=3, task="relation_transformation",
                       metadata={"premise": False})]
    whole = fold(records)
    a, b = SpinMetrics(), SpinMetrics()
    for i, r in enumerate(records):
        (a if i % 2 else b).add(r.to_dict())
    a.merge(b)
    assert rounded(a.result()) == rounded(whole)


def test_metrics_are_registered_for_the_suite() -> None:
    spec = suite_spec("spin")
    assert {"kappa", "consistency", "patterns", "gaps"} <= set(spec.metrics().result())
    (col,) = spec.leaderboard_metrics
    assert col.value(fold(_groups())) == pytest.approx(fold(_groups())["consistency"]["consistency"])
