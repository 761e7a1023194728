"""Typed question facts (perspecta.suites.facts): the metadata keys a task's generator
writes and its ``derive`` reads back, declared once as a dataclass."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from perspecta.dataset.item import Item
from perspecta.suites.facts import Facts, FactsError
from perspecta.suites.lrr.position import RegionsFacts
from perspecta.suites.spin.perspective import TransformFacts
from perspecta.suites.spin.rotation import MentalFacts


@dataclass(frozen=True, kw_only=True)
class PairFacts(Facts):
    x_id: str
    asked: str | None
    route: list[int] | None
    names: dict[str, str]
    scale: float = 1.0


def _item(md: dict) -> Item:
    return Item(id="s/t/base/000001", suite="s", task="t", question="<image>", images=["a.png"],
                answer_type="mcq", answer="A", metadata=md)


def test_round_trip_keeps_keys_values_and_order_through_json() -> None:
    facts = PairFacts(x_id="obj1", asked=None, route=[1, -1], names={"obj1": "mug"}, scale=0.8)
    md = {"family": "f", **facts.to_metadata(), "frames": []}
    line = json.dumps(md)
    assert list(json.loads(line)) == ["family", "x_id", "asked", "route", "names", "scale", "frames"]
    assert PairFacts.from_item(_item(json.loads(line))) == facts


def test_missing_key_names_item_key_and_class() -> None:
    with pytest.raises(FactsError, match=r"item s/t/base/000001: metadata has no 'names' \(a PairFacts fact\)"):
        PairFacts.from_item(_item({"x_id": "obj1", "asked": None, "route": None}))


def test_mistyped_values_are_refused() -> None:
    good = {"x_id": "obj1", "asked": "left", "route": None, "names": {"obj1": "mug"}}
    for key, bad in (("x_id", 3), ("asked", 1.5), ("route", [1, "x"]), ("names", {"obj1": 2}), ("scale", True)):
        with pytest.raises(FactsError, match=rf"metadata\['{key}'\]"):
            PairFacts.from_item(_item({**good, key: bad}))


def test_default_fills_a_key_older_datasets_lack_and_int_reads_as_float() -> None:
    got = PairFacts.from_item(_item({"x_id": "a", "asked": "b", "route": [2], "names": {}}))
    assert got.scale == 1.0
    assert PairFacts.from_item(_item({"x_id": "a", "asked": "b", "route": [2], "names": {}, "scale": 2})).scale == 2


def test_reads_only_declared_fields() -> None:
    md = {"scene_ids": ["s0", "s1"], "true_regions": ["top-left", "centre"], "asked_regions": ["centre", "centre"],
          "category": "chair", "unrelated": object()}
    facts = RegionsFacts.from_item(_item(md))
    assert facts.to_metadata() == {k: md[k] for k in ("scene_ids", "asked_regions")}
    assert list(facts.to_metadata(between={"scene_ids": {"true_regions": md["true_regions"]}})) == [
        "scene_ids", "true_regions", "asked_regions"]
    with pytest.raises(ValueError, match="written twice"):
        facts.to_metadata(between={"scene_ids": {"asked_regions": []}})
    with pytest.raises(ValueError, match="no field"):
        facts.to_metadata(between={"category": {"x": 1}})


def test_task_facts_classes_check_their_values() -> None:
    ok = {"target_id": "obj0", "angle_deg": 90, "direction": "clockwise"}
    assert MentalFacts.from_item(_item(ok)).distractor_gap_deg == 30.0  # the paper's floor when absent
    with pytest.raises(FactsError, match="new_camera"):
        TransformFacts.from_item(_item({"asked_relation": "left_right", "asked": "left", "view": "back",
                                        "route_quarter_turns": None, "x_id": "a", "y_id": "b", "names": {}}))
