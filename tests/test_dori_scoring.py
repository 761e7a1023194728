"""DORI scoring on hand-built scored records: soft credit per task, and the streaming
accumulator's soft accuracy, error-pattern analysis, compound-rotation decomposition and
accuracy by number of options against hand-worked values — every record asked in each
denominator (failed and unparsed are wrong, soft 0) except the error patterns, which are
over wrong answers naming an option — and the seeded random-guess baseline."""

from __future__ import annotations

from typing import Any

import pytest

from perspecta.score.records import ScoredRecord
from perspecta.score.registry import record_scorers_for
from perspecta.suites.registry import suite_spec
from perspecta.suites.dori import scoring
from perspecta.suites.dori.accumulate import DoriMetrics
from perspecta.suites.dori.scoring import chance_records, soft_score, systematic_patterns


def rec(task: str, gold: Any, pred: Any, granularity: str = "granular", **meta: Any) -> ScoredRecord:
    """A record whose option A holds the gold value and B the predicted one (A again if equal)."""
    values = {"A": gold} if pred == gold else {"A": gold, "B": pred}
    label = "A" if pred == gold else "B"
    return ScoredRecord(item_id=f"dori/{task}/x", suite="dori", task=task, model="m", answer="A", status="ok",
                        prediction=label, correct=label == "A", subtype=f"{task}_{granularity}",
                        granularity=granularity, n_options=len(values),
                        metadata={"option_values": values, "answer_value": gold, **meta})


def no_answer(task: str, gold: Any, status: str, granularity: str = "granular") -> ScoredRecord:
    """A failed request or an unparsed reply to an item whose answer is ``gold`` (4 options)."""
    values = {"A": gold, "B": None, "C": "x", "D": "y"}
    return ScoredRecord(item_id=f"dori/{task}/x", suite="dori", task=task, model="m", answer="A", status=status,
                        prediction=None, correct=None if status == "failed" else False,
                        subtype=f"{task}_{granularity}", granularity=granularity, n_options=4,
                        metadata={"option_values": values, "answer_value": gold})


def fold(records: list[ScoredRecord], *, with_scores: bool = True) -> dict[str, Any]:
    """The accumulator's result; ``with_scores`` as `perspecta eval` writes records (soft stored)."""
    acc = DoriMetrics()
    for r in records:
        if with_scores:
            r.scores.update(soft_score(r))
        acc.add(r.to_dict())
    return acc.result()


@pytest.mark.parametrize(("task", "gold", "pred", "meta", "expected"), [
    # view parallelism: the true angle 92 is 43 degrees from the 135-180 bin -> half; 80 is 55 away -> none
    ("view_parallelism", [65.0, 95.0], [135.0, 180.0], {"camera_plane_angle": 92.0}, 0.5),
    ("view_parallelism", [65.0, 95.0], [135.0, 180.0], {"camera_plane_angle": 80.0}, 0.0),
    ("view_parallelism", [0.0, 15.0], [65.0, 95.0], {"camera_plane_angle": 14.0}, 0.0),  # 51 away
    # directional facing: only the mirror bin
    ("directional_facing", {"side": "left", "range": [0.0, 45.0]}, {"side": "right", "range": [0.0, 45.0]}, {}, 0.5),
    ("directional_facing", {"side": "left", "range": [0.0, 45.0]}, {"side": "left", "range": [45.0, 90.0]}, {}, 0.0),
    # single axis: one 45-degree step away (circularly)
    ("single_axis_rotation", 90, 45, {}, 0.5),
    ("single_axis_rotation", 0, 315, {}, 0.5),
    ("single_axis_rotation", 90, 180, {}, 0.0),
    # compound: exactly one component right
    ("compound_rotation", [90, 180], [90, 0], {}, 0.5),
    ("compound_rotation", [90, 180], [180, 90], {}, 0.0),
    # inter-object: adjacent magnitude, same direction (no rotation / 180 count as either direction)
    ("inter_object_direction", {"dir": "cw", "range": [5.0, 45.0]}, {"dir": "cw", "range": [45.0, 90.0]}, {}, 0.5),
    ("inter_object_direction", {"dir": "cw", "range": [5.0, 45.0]}, {"dir": "ccw", "range": [45.0, 90.0]}, {}, 0.0),
    ("inter_object_direction", {"dir": "cw", "range": [5.0, 45.0]}, {"dir": "none", "range": [0.0, 5.0]}, {}, 0.5),
    ("inter_object_direction", {"dir": "cw", "range": [5.0, 45.0]}, {"dir": "cw", "range": [90.0, 135.0]}, {}, 0.0),
    # viewer-scene: the opposite direction only
    ("viewer_scene_direction", 90, 270, {}, 0.5),
    ("viewer_scene_direction", 180, 0, {}, 0.0),
    ("viewer_scene_direction", 90, 180, {}, 0.0),
    # canonical: the same two operations in swapped order
    ("canonical_orientation", ["rot90", "flip_h"], ["flip_h", "rot90"], {}, 0.5),
    ("canonical_orientation", ["rot90", "flip_h"], ["rot90"], {}, 0.0),
    # "Cannot be determined" on either side earns nothing partial
    ("single_axis_rotation", None, 45, {}, 0.0),
    ("single_axis_rotation", 45, None, {}, 0.0),
])
def test_soft_credit_by_hand(task: str, gold: Any, pred: Any, meta: dict, expected: float) -> None:
    assert soft_score(rec(task, gold, pred, **meta)) == {"soft": expected}


def test_soft_is_hard_for_coarse_and_absent_for_failed() -> None:
    assert soft_score(rec("single_axis_rotation", "clockwise", "either", "coarse")) == {"soft": 0.0}
    assert soft_score(rec("single_axis_rotation", "clockwise", "clockwise", "coarse")) == {"soft": 1.0}
    failed = rec("viewer_scene_direction", 90, 270)
    failed.status, failed.prediction, failed.correct = "failed", None, None
    assert soft_score(failed) == {}
    unparsed = rec("viewer_scene_direction", 90, 270)
    unparsed.status, unparsed.prediction, unparsed.correct = "unparsed", None, False
    assert soft_score(unparsed) == {"soft": 0.0}


def test_registered_with_the_harness() -> None:
    assert scoring.soft_score in record_scorers_for("dori")
    assert {"soft_accuracy", "error_patterns", "compound_decomposition", "accuracy_by_n_options"} <= set(
        suite_spec("dori").metrics().result())


@pytest.mark.parametrize("with_scores", [True, False])  # soft stored by eval, or recomputed from the record
def test_soft_accuracy_metric_by_hand(with_scores: bool) -> None:
    rs = [rec("compound_rotation", [90, 90], [90, 90]), rec("compound_rotation", [90, 180], [90, 0]),
          rec("compound_rotation", [0, 90], [180, 0]), rec("viewer_scene_direction", 90, 270)]
    out = fold(rs, with_scores=with_scores)["soft_accuracy"]["soft_accuracy"]
    # compound: hard 1/3; soft (1 + 0.5 + 0) / 3 = 0.5.  viewer-scene: hard 0, soft 0.5
    assert out["compound_rotation_granular"] == {"n": 3, "failed": 0, "unparsed": 0, "hard": pytest.approx(1 / 3),
                                                 "soft": pytest.approx(0.5)}
    assert out["viewer_scene_direction_granular"] == {"n": 1, "failed": 0, "unparsed": 0, "hard": 0.0, "soft": 0.5}


def test_failed_and_unparsed_lower_soft_and_hard_accuracy() -> None:
    """Old behaviour: failed records were skipped (viewer-scene soft 0.5 over 1 record); now
    they are asked items with no credit: (0.5 + 0 + 0) / 3."""
    vs = "viewer_scene_direction"
    rs = [rec(vs, 90, 270), no_answer(vs, 90, "failed"), no_answer(vs, 90, "unparsed"), rec(vs, 90, 90)]
    out = fold(rs)
    soft = out["soft_accuracy"]["soft_accuracy"]["viewer_scene_direction_granular"]
    assert soft == {"n": 4, "failed": 1, "unparsed": 1, "hard": 0.25, "soft": pytest.approx((1 + 0.5) / 4)}
    assert out["accuracy_by_n_options"]["accuracy_by_n_options"]["4"] == {
        "n": 2, "failed": 1, "unparsed": 1, "accuracy": 0.0, "chance": 0.25}
    # error patterns: the one wrong answer naming an option; the two without a prediction apart
    ep = out["error_patterns"]["error_patterns"]
    assert (ep["n_errors"], ep["failed"], ep["unparsed"]) == (1, 1, 1)


def test_error_patterns_by_hand() -> None:
    vp = "view_parallelism"
    rs = [rec(vp, [0.0, 15.0], [65.0, 95.0]), rec(vp, [0.0, 15.0], [65.0, 95.0]),
          rec(vp, [135.0, 180.0], [65.0, 95.0]), rec(vp, [0.0, 15.0], None), rec(vp, [65.0, 95.0], [65.0, 95.0])]
    out = fold(rs)["error_patterns"]["error_patterns"]
    t = out["by_type"]["view_parallelism_granular"]
    assert t["n_errors"] == 4  # the fifth record is right
    assert t["patterns"] == {"perpendicular_confusion": 0.5, "angle_compression": 0.25, "uncertainty_cascade": 0.25}
    top = t["pairs"][0]
    assert (top["true"], top["predicted"], top["count"], top["share"], top["frequent"]) == (
        "[0.0, 15.0]", "[65.0, 95.0]", 2, 0.5, True)
    assert out["pattern_share"]["frontal_bias"] == 0.0 and out["n_errors"] == 4


@pytest.mark.parametrize(("task", "gran", "gold", "pred", "patterns"), [
    ("directional_facing", "granular", {"side": "left", "range": [0.0, 45.0]},
     {"side": "right", "range": [0.0, 45.0]}, ["directional_reversal", "frontal_bias"]),
    ("directional_facing", "coarse", "away", "toward", ["directional_reversal", "frontal_bias"]),
    ("directional_facing", "granular", {"side": "left", "range": [135.0, 180.0]},
     {"side": "left", "range": [45.0, 90.0]}, ["angle_compression"]),
    ("single_axis_rotation", "granular", 90, 45, ["angle_compression"]),
    ("single_axis_rotation", "granular", 90, 270, ["rotational_symmetry_confusion"]),
    ("single_axis_rotation", "granular", 90, 0, ["frontal_bias"]),
    ("viewer_scene_direction", "granular", 270, 90, ["rotational_symmetry_confusion"]),
    ("viewer_scene_direction", "granular", 180, 90, ["rotational_symmetry_confusion"]),
    ("viewer_scene_direction", "granular", 270, None, ["uncertainty_cascade"]),
    ("inter_object_direction", "granular", {"dir": "ccw", "range": [45.0, 90.0]},
     {"dir": "cw", "range": [45.0, 90.0]}, ["directional_reversal"]),
    ("canonical_orientation", "granular", None, [], ["frontal_bias"]),
    ("view_parallelism", "coarse", [65.0, 95.0], [0.0, 15.0], ["perpendicular_confusion", "frontal_bias"]),
    ("view_parallelism", "coarse", [0.0, 15.0], None, ["uncertainty_cascade"]),  # "cannot determine" -> "no change"
    ("canonical_orientation", "coarse", None, "canonical", ["frontal_bias"]),
])
def test_pattern_types_follow_the_papers_table(task: str, gran: str, gold: Any, pred: Any, patterns: list) -> None:
    assert scoring.patterns_of(task, gran, gold, pred) == patterns


def test_systematic_needs_three_models() -> None:
    vp = "view_parallelism"
    frequent = [rec(vp, [0.0, 15.0], [65.0, 95.0])]
    by_model = {m: fold(frequent)["error_patterns"] for m in ("a", "b", "c")}
    by_model["d"] = fold([rec(vp, [135.0, 180.0], [65.0, 95.0])])["error_patterns"]
    found = systematic_patterns(by_model)
    assert [(f["true"], f["predicted"], f["models"]) for f in found] == [("[0.0, 15.0]", "[65.0, 95.0]", ["a", "b", "c"])]
    assert found[0]["patterns"] == ["perpendicular_confusion"]
    assert systematic_patterns({m: by_model[m] for m in ("a", "b", "d")}) == []


def test_compound_decomposition_by_hand() -> None:
    cr = "compound_rotation"
    rs = [rec(cr, [90, 180], [180, 90]),  # order swap (and both components wrong)
          rec(cr, [90, 0], [90, 180]),  # turn right, tip wrong
          rec(cr, [0, 90], [0, 90]),  # both right
          rec(cr, [270, 90], None),  # "cannot be determined": both wrong
          rec(cr, [180, 0], [90, 90]),  # both wrong
          rec(cr, None, [90, 90]),  # control item: not decomposed
          no_answer(cr, [90, 90], "failed"), no_answer(cr, [0, 180], "unparsed")]  # both wrong
    out = fold(rs)["compound_decomposition"]["compound_decomposition"]
    assert out == {"n": 7, "failed": 1, "unparsed": 1, "order_swap": 1 / 7, "vertical_axis_turn_accuracy": 2 / 7,
                   "horizontal_axis_tip_accuracy": 1 / 7, "both_wrong": 5 / 7}


def test_accuracy_by_n_options() -> None:
    rs = [rec("viewer_scene_direction", 90, 90), rec("viewer_scene_direction", 90, 270)]  # 1 and 2 options
    out = fold(rs)["accuracy_by_n_options"]["accuracy_by_n_options"]
    assert out == {"1": {"n": 1, "failed": 0, "unparsed": 0, "accuracy": 1.0, "chance": 1.0},
                   "2": {"n": 1, "failed": 0, "unparsed": 0, "accuracy": 0.0, "chance": 0.5}}


def test_two_halves_merged_equal_the_whole(rounded) -> None:
    vp, cr = "view_parallelism", "compound_rotation"
    rs = [rec(vp, [0.0, 15.0], [65.0, 95.0], camera_plane_angle=10.0), rec(vp, [0.0, 15.0], [0.0, 15.0]),
          rec(vp, [135.0, 180.0], [65.0, 95.0], camera_plane_angle=140.0), no_answer(vp, [0.0, 15.0], "failed"),
          rec(cr, [90, 180], [180, 90]), rec(cr, [90, 0], [90, 180]), no_answer(cr, [0, 90], "unparsed"),
          rec("single_axis_rotation", "clockwise", "none", "coarse")]
    for i, r in enumerate(rs):
        r.repeat = i % 2
        r.scores.update(soft_score(r))
    whole = DoriMetrics()
    a, b = DoriMetrics(), DoriMetrics()
    for i, r in enumerate(rs):
        whole.add(r.to_dict())
        (a if i % 3 else b).add(r.to_dict())
    a.merge(b)
    assert rounded(a.result()) == rounded(whole.result())
    assert a.tg == whole.tg and a.compound_by_repeat() == whole.compound_by_repeat()


def test_random_guess_baseline_hits_one_over_n() -> None:
    items = []
    for i in range(6000):
        n = (3, 5, 9)[i % 3]
        labels = [chr(65 + j) for j in range(n)]
        items.append({"id": f"dori/t/base/{i}", "suite": "dori", "task": "single_axis_rotation",
                      "subtype": f"t{n}", "granularity": "coarse", "answer": labels[i % n],
                      "options": [{"label": lab} for lab in labels],
                      "metadata": {"option_values": {lab: lab for lab in labels}, "answer_value": labels[i % n]}})
    recs = chance_records(items, seed=0)
    assert [r.prediction for r in recs] == [r.prediction for r in chance_records(items, seed=0)]  # seeded
    for n in (3, 5, 9):
        acc = sum(r.correct for r in recs if r.subtype == f"t{n}") / 2000
        assert abs(acc - 1 / n) < 0.03
