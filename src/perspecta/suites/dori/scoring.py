"""DORI scoring per record: soft credit and the error-pattern types of a confusion (the
paper's appendix L), and the cross-model systematic-pattern rule. The run-level figures
(soft accuracy, error patterns, the compound-rotation decomposition, accuracy by number of
options) are folded from these by :class:`perspecta.suites.dori.accumulate.DoriMetrics`.

Every DORI item stores ``metadata["option_values"]`` (label -> machine-readable value:
a bin, an angle, an operation list; None for "Cannot be determined") and
``metadata["answer_value"]``, so these rules compare values, never option wording.

Soft credit (granular items only; coarse soft = hard), 0.5 for a near miss:

==========================  ===============================================================
view_parallelism            predicted bin within 45 degrees of the true angle
directional_facing          the mirror bin only (same range, other side of the image)
single_axis_rotation        a step 45 degrees (circularly) from the right one
compound_rotation           exactly one of the two components right
inter_object_direction      the adjacent magnitude range in the same direction ("no
                            rotation" and "about 180" count as either direction)
viewer_scene_direction      the opposite direction only (90 <-> 270)
canonical_orientation       the same two operations in the swapped order
==========================  ===============================================================

The paper's single-axis rule contradicts its own example (45-for-90 denied, 135-for-180
allowed); we apply the stated 45-degree window symmetrically.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from perspecta.score.records import ScoredRecord

PATTERNS = ("perpendicular_confusion", "directional_reversal", "angle_compression", "frontal_bias",
            "rotational_symmetry_confusion", "uncertainty_cascade")
SYSTEMATIC_SHARE = 0.05  # a confusion pair is systematic above 5% of a model's errors ...
SYSTEMATIC_MODELS = 3  # ... in at least three models
_MAG = {"none": 0, "either": 4}
_RANGE_INDEX = {(5.0, 45.0): 1, (45.0, 90.0): 2, (90.0, 135.0): 3}


def _values(rec: ScoredRecord) -> tuple[Any, Any, bool]:
    """(gold value, predicted value, prediction is a real option)."""
    vals = rec.metadata.get("option_values") or {}
    gold = rec.metadata.get("answer_value")
    if rec.prediction is None or rec.prediction not in vals:
        return gold, None, False
    return gold, vals[rec.prediction], True


def _circ(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _inter_mag(v: dict[str, Any]) -> int:
    return _MAG.get(v["dir"]) if v["dir"] in _MAG else _RANGE_INDEX[(float(v["range"][0]), float(v["range"][1]))]  # type: ignore[return-value]


def soft_credit(task: str, granularity: str | None, gold: Any, pred: Any, metadata: dict[str, Any]) -> float:
    """Credit in {0, 0.5, 1} for predicting value ``pred`` when the answer's value is ``gold``."""
    if pred == gold:
        return 1.0
    if granularity != "granular" or gold is None or pred is None:
        return 0.0
    if task == "view_parallelism":
        angle = metadata.get("camera_plane_angle")
        if angle is None:
            return 0.0
        lo, hi = pred
        gap = lo - angle if angle < lo else angle - hi if angle > hi else 0.0
        return 0.5 if gap <= 45.0 else 0.0
    if task == "directional_facing":
        return 0.5 if pred["range"] == gold["range"] and pred["side"] != gold["side"] else 0.0
    if task == "single_axis_rotation":
        return 0.5 if _circ(pred, gold) == 45.0 else 0.0
    if task == "compound_rotation":
        return 0.5 if (pred[0] == gold[0]) != (pred[1] == gold[1]) else 0.0
    if task == "inter_object_direction":
        if abs(_inter_mag(pred) - _inter_mag(gold)) != 1:
            return 0.0
        directionless = {"none", "either"}
        same = pred["dir"] == gold["dir"] or pred["dir"] in directionless or gold["dir"] in directionless
        return 0.5 if same else 0.0
    if task == "viewer_scene_direction":
        return 0.5 if gold % 180 != 0 and pred == (360 - gold) % 360 else 0.0
    if task == "canonical_orientation":
        return 0.5 if len(gold) == 2 and list(pred) == list(reversed(gold)) else 0.0
    return 0.0


def soft_score(rec: ScoredRecord) -> dict[str, float]:
    """``scores["soft"]`` for one record (absent for failed requests, like ``correct``)."""
    if rec.status == "failed":
        return {}
    gold, pred, ok = _values(rec)
    if not ok:
        return {"soft": 0.0}
    if rec.correct:
        return {"soft": 1.0}
    return {"soft": soft_credit(rec.task, rec.granularity, gold, pred, rec.metadata)}


def patterns_of(task: str, granularity: str | None, gold: Any, pred: Any) -> list[str]:
    """The paper's error-pattern types that the confusion gold -> pred belongs to."""
    if pred == gold:
        return []
    if pred is None:  # "Cannot be determined" chosen for an object that has an answer
        return ["uncertainty_cascade"] if gold is not None else []
    if gold is None:
        return ["frontal_bias"] if task == "canonical_orientation" and pred in ("canonical", []) else []
    found: list[str] = []
    g = granularity == "granular"
    if task == "view_parallelism":
        # both levels store the bin [low, high]: toward = [0, 15], sideways = [65, 95], away = [135, 180]
        g_lo, p_lo = float(gold[0]), float(pred[0])
        if {g_lo, p_lo} == {0.0, 65.0}:
            found.append("perpendicular_confusion")
        if g_lo == 135.0 and p_lo == 65.0:
            found.append("angle_compression")
        if p_lo == 0.0:
            found.append("frontal_bias")
    elif task == "directional_facing":
        if not g:
            if {gold, pred} in ({"leftward", "rightward"}, {"toward", "away"}):
                found.append("directional_reversal")
            if pred == "toward":
                found.append("frontal_bias")
        else:
            gi, pi = gold["range"][0] // 45, pred["range"][0] // 45
            if (gi == pi and gold["side"] != pred["side"]) or {gi, pi} == {0, 3}:
                found.append("directional_reversal")
            if pi == 0:
                found.append("frontal_bias")
            elif pred["side"] == gold["side"] and pi < gi:
                found.append("angle_compression")
    elif task == "single_axis_rotation":
        if not g:
            if {gold, pred} == {"clockwise", "counter-clockwise"}:
                found.append("directional_reversal")
            if pred == "none":
                found.append("frontal_bias")
        else:
            if pred == 0:
                found.append("frontal_bias")
            elif (gold <= 180) == (pred <= 180) and 0 < _circ(pred, 0) < _circ(gold, 0):
                found.append("angle_compression")
            if gold != 0 and (pred == (360 - gold) % 360 or _circ(pred, gold) == 180):
                found.append("rotational_symmetry_confusion")
    elif task == "inter_object_direction" and g:
        if {gold["dir"], pred["dir"]} == {"cw", "ccw"} and gold["range"] == pred["range"]:
            found.append("directional_reversal")
        if gold["dir"] == pred["dir"] and 1 <= _inter_mag(pred) < _inter_mag(gold):
            found.append("angle_compression")
        if pred["dir"] == "none":
            found.append("frontal_bias")
    elif task == "inter_object_direction":
        if {gold, pred} == {"same", "opposite"}:
            found.append("directional_reversal")
    elif task == "viewer_scene_direction" and g:
        if gold != 0 and pred != 0 and (pred == (360 - gold) % 360 or _circ(pred, gold) == 90):
            found.append("rotational_symmetry_confusion")
        if gold != 0 and pred == 0:
            found.append("frontal_bias")
    elif task == "canonical_orientation" and pred in ("canonical", []):
        found.append("frontal_bias")
    return found


def text_of(value: Any) -> str:
    """An option value as the error tables show it (None is "Cannot be determined")."""
    return "Cannot be determined" if value is None else str(value)


def systematic_patterns(by_model: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The paper's criterion across models: confusion pairs frequent (> 5% of a model's errors
    on that question type) in at least three models. ``by_model`` maps a model name to its
    ``error_patterns`` metric output."""
    seen: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    info: dict[tuple[str, str, str], list[str]] = {}
    for model, out in by_model.items():
        for k, t in out["error_patterns"]["by_type"].items():
            for p in t["pairs"]:
                if p["frequent"]:
                    key = (k, p["true"], p["predicted"])
                    seen[key].append(model)
                    info[key] = p["patterns"]
    return [{"type": k, "true": t, "predicted": p, "models": sorted(ms), "patterns": info[(k, t, p)]}
            for (k, t, p), ms in sorted(seen.items()) if len(ms) >= SYSTEMATIC_MODELS]


def chance_records(items: Iterable[dict[str, Any]], seed: int, model: str = "baseline:uniform") -> list[ScoredRecord]:
    """A seeded uniform random guess over each item's option labels, as scored records."""
    rng = np.random.default_rng(seed)
    out = []
    for it in items:
        labels = [o["label"] for o in it["options"]]
        guess = labels[int(rng.integers(len(labels)))]
        rec = ScoredRecord(item_id=it["id"], suite=it["suite"], task=it["task"], model=model, answer=it["answer"],
                           status="ok", prediction=guess, correct=guess == it["answer"], subtype=it["subtype"],
                           granularity=it["granularity"], n_options=len(labels), metadata=it["metadata"])
        rec.scores.update(soft_score(rec))
        out.append(rec)
    return out
