"""SpinBench metrics: kappa against sklearn and hand-worked values, consistency and the
CCCC..WWWW patterns on hand-worked groups."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from perspecta.score.records import ScoredRecord
from perspecta.suites.registry import suite_spec
from perspecta.suites.spin.metrics import (
    PATTERNS,
    chance_kappa,
    cohen_kappa,
    consistency,
    gaps,
    group_consistency,
    kappa_by_subtype,
    pattern,
    pattern_counts,
)


def rec(group: str, variant: str, correct: bool | None, *, status: str = "ok", repeat: int = 0,
        subtype: str = "s", n_options: int = 2, answer: str = "A", prediction: str | None = None,
        task: str = "relation_grounding", metadata: dict | None = None) -> ScoredRecord:
    if prediction is None and status == "ok":
        prediction = answer if correct else "B"
    return ScoredRecord(item_id=f"{group}/{variant}", suite="spin", task=task, model="m", answer=answer,
                        status=status, prediction=prediction, correct=correct, group=group, variant=variant,
                        repeat=repeat, subtype=subtype, n_options=n_options, metadata=metadata or {})


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
            y_pred = ["<none>" if rng.random() < 0.2 else p for p in y_pred]  # unparsed answers
        ours = cohen_kappa(y_true, y_pred)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # sklearn warns on 0/0
            theirs = float(sk.cohen_kappa_score(y_true, y_pred))
        if math.isnan(theirs):
            assert math.isnan(ours)
        else:
            assert abs(ours - theirs) < 1e-9, (y_true, y_pred, ours, theirs)
            checked += 1
    assert checked > 250


def test_cohen_kappa_hand_worked() -> None:
    # confusion AA=1, AB=1, BB=2: p_o = 3/4; marginals true (2, 2), pred (1, 3): p_e = 8/16
    assert cohen_kappa(list("AABB"), list("ABBB")) == pytest.approx(0.5, abs=1e-12)
    assert cohen_kappa(list("ABAB"), list("BABA")) == pytest.approx(-1.0, abs=1e-12)
    assert math.isnan(cohen_kappa(list("AAA"), list("AAA")))  # chance agreement 1: undefined
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa(["A"], ["A", "B"])


def test_chance_kappa_hand_worked() -> None:
    assert chance_kappa([True, True, False], [2, 2, 2]) == pytest.approx(1 / 3)  # (2/3 - 1/2) / (1/2)
    assert chance_kappa([True, False], [2, 4]) == pytest.approx(0.2)  # p_e = 3/8: (1/2 - 3/8) / (5/8)
    assert chance_kappa([True] * 4, [4] * 4) == pytest.approx(1.0)
    assert chance_kappa([True, False, False, False], [4] * 4) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="at least 2 options"):
        chance_kappa([True], [1])


def test_group_consistency_and_pattern_hand_worked() -> None:
    assert group_consistency([True, True, False, True]) == pytest.approx(0.5)  # 3 of 6 pairs agree
    assert group_consistency([False, False]) == 1.0
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
        # g3: three wrong (one unparsed counts as wrong) -> 1
        rec("g3", "base", False), rec("g3", "symmetric", False),
        rec("g3", "syntactic", False, status="unparsed", prediction=None),
        # g4: complete and all wrong; g5: complete and all right
        *[rec("g4", v, False) for v in ("base", "symmetric", "syntactic", "symmetric+syntactic")],
        *[rec("g5", v, True) for v in ("base", "symmetric", "syntactic", "symmetric+syntactic")],
        # a failed request is no outcome: g6 keeps one variant and drops out
        rec("g6", "base", True), rec("g6", "symmetric", None, status="failed", prediction=None),
    ]


def test_consistency_over_groups_hand_worked() -> None:
    out = consistency(_groups())
    assert out["n_groups"] == 5
    assert out["consistency"] == pytest.approx((0.5 + 0.0 + 1.0 + 1.0 + 1.0) / 5)
    # base~symmetric agrees in g1, g3, g4, g5, not g2
    assert out["by_pair"]["base~symmetric"] == pytest.approx(4 / 5)
    # base~syntactic: g1 disagree, g3 agree, g4 agree, g5 agree
    assert out["by_pair"]["base~syntactic"] == pytest.approx(3 / 4)


def test_pattern_counts_hand_worked() -> None:
    out = pattern_counts(_groups())
    assert out["n_groups"] == 3
    assert out["patterns"]["CCWC"] == 1 and out["patterns"]["WWWW"] == 1 and out["patterns"]["CCCC"] == 1
    assert sum(out["patterns"].values()) == 3 and len(out["patterns"]) == 16
    assert out["perfect_rate"] == pytest.approx(2 / 3)


def test_repeats_are_separate_groups_and_duplicates_are_refused() -> None:
    rs = [rec("g", "base", True, repeat=0), rec("g", "symmetric", True, repeat=0),
          rec("g", "base", True, repeat=1), rec("g", "symmetric", False, repeat=1)]
    assert consistency(rs)["consistency"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="two records of variant"):
        consistency([rec("g", "base", True), rec("g", "base", False)])


def test_kappa_by_subtype_and_gaps() -> None:
    rs = [rec("a", "base", True, subtype="x", n_options=4, answer="C"),
          rec("b", "base", False, subtype="x", n_options=4, answer="D", prediction="C"),
          rec("c", "base", True, subtype="y", n_options=2)]
    out = kappa_by_subtype(rs)
    assert out["kappa"]["x"] == pytest.approx((0.5 - 0.25) / 0.75)
    assert out["accuracy"]["y"] == 1.0 and out["n"]["x"] == 2
    # gold (C, D) vs predicted (C, C): p_o = 1/2, p_e = (1*2 + 1*0)/4 = 1/2 -> 0
    assert out["cohen_kappa"]["x"] == pytest.approx(0.0)
    prem = [rec(f"p{i}", "base", c, task="relation_transformation", metadata={"premise": p})
            for i, (c, p) in enumerate([(True, True), (True, True), (False, False), (True, False)])]
    frames = [rec("r1", "base", True, task="dynamic_rotation", metadata={"domain": "person", "frame_of_reference": "object"}),
              rec("r2", "base", False, task="dynamic_rotation", metadata={"domain": "person", "frame_of_reference": "viewer"})]
    g = gaps(prem + frames)
    assert g["premise"] == {"with": 1.0, "without": 0.5, "gap": 0.5}
    assert g["frame_of_reference/dynamic_rotation"]["gap"] == 1.0
    assert g["frame_of_reference/canonical_view"]["gap"] is None


def test_metrics_are_registered_for_the_suite() -> None:
    assert {"kappa", "consistency", "patterns", "gaps"} <= set(suite_spec("spin").metrics().result())
