"""Difficulty knobs (presets, overrides, sweeps) and readability contracts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from perspecta.dataset.generate import GenerationConfig, parse_sweep
from perspecta.suites.context import TaskContext
from perspecta.world import readability


def _ctx(index: int = 0, **config: object) -> TaskContext:
    return TaskContext(suite="s", task="t", index=index, root_seed=0, library=None, renderer=None,  # type: ignore[arg-type]
                       out_dir=None, config=dict(config))  # type: ignore[arg-type]


PRESETS = {"easy": 60, "standard": 30, "hard": 10}


def test_knob_reads_the_preset_and_records_it() -> None:
    ctx = _ctx(difficulty="hard")
    assert ctx.knob("angle", PRESETS) == 10
    assert ctx.knobs == {"angle": 10}
    assert _ctx().knob("angle", PRESETS) == 30  # standard is the default


def test_override_beats_preset_and_sweep_beats_override() -> None:
    assert _ctx(angle=45).knob("angle", PRESETS) == 45
    sweep = parse_sweep("angle=10:90:5")
    assert sweep["values"] == [10, 30, 50, 70, 90]
    got = [_ctx(i, angle=45, sweep=sweep).knob("angle", PRESETS) for i in range(7)]
    assert got == [10, 30, 50, 70, 90, 10, 30]
    assert _ctx(0, sweep=sweep).knob("other", PRESETS) == 30


@pytest.mark.parametrize("bad", ["angle", "angle=1:2", "angle=a:b:3", "=1:2:3", "angle=1:2:1"])
def test_bad_sweeps_are_clear_errors(bad: str) -> None:
    with pytest.raises(ValueError, match="sweep"):
        parse_sweep(bad)


def test_fractional_sweep_and_unknown_difficulty() -> None:
    assert parse_sweep("gap=0.1:0.2:3")["values"] == [0.1, 0.15, 0.2]
    with pytest.raises(ValueError, match="difficulty"):
        GenerationConfig(suites=["x"], difficulty="brutal")


def test_object_facts_measure_pixels_box_and_marker_cover() -> None:
    ids = np.zeros((100, 100), dtype=np.int32)
    ids[10:50, 20:30] = 3  # 10 wide, 40 tall
    marker = np.zeros((100, 100), dtype=bool)
    marker[10:14, 20:30] = True  # covers 40 of 400 px
    facts = readability.object_facts(ids, 3, marker)
    assert facts == {"pixels": 400, "box": [10, 40], "marker_cover": 0.1}
    problems = readability.object_problems("person", facts)
    assert any("400 visible px" in p for p in problems)
    assert any("10x40" in p for p in problems)
    assert any("markers cover 10%" in p for p in problems)
    ids[:] = 0
    ids[0:60, 0:60] = 3
    assert readability.object_problems("chair", readability.object_facts(ids, 3)) == []


def test_bin_margin_and_winner_margin() -> None:
    # 45°-wide compass bins centred on 0°: edges at 22.5 + 45k
    assert readability.bin_margin(20.0, 45.0, offset_deg=22.5)["deg"] == pytest.approx(2.5)
    assert readability.bin_margin(0.0, 45.0, offset_deg=22.5)["deg"] == pytest.approx(22.5)
    near_edge = {"bin_margin": readability.bin_margin(20.0, 45.0, offset_deg=22.5)}
    assert readability.problems(near_edge) and "bin edge" in readability.problems(near_edge)[0]
    assert readability.problems({"bin_margin": readability.bin_margin(5.0, 45.0, offset_deg=22.5)}) == []
    tie = {"winner_margin": {"value": 0.009, "min": 0.25, "unit": "m"}}
    assert "clear-winner" in readability.problems(tie)[0]


def test_a_recorded_contract_may_tighten_but_not_loosen() -> None:
    ok = {"contract": {"min_box_side": 64}, "objects": {"a": {"pixels": 5000, "box": [70, 70], "marker_cover": 0}}}
    assert readability.problems(ok) == []
    loose = {"contract": {"min_box_side": 8, "max_marker_cover": 0.5}}
    assert "looser" in readability.problems(loose)[0]


def test_validate_rejects_an_item_whose_recorded_facts_break_the_contract(tmp_path) -> None:
    from perspecta.dataset.generate import generate_dataset
    from perspecta.dataset.validate import validate_dataset

    out = tmp_path / "d"
    generate_dataset(out, GenerationConfig(suites=["dori"], n=1, seed=3, tasks=["dori/view_parallelism"]))
    assert validate_dataset(out, derive_answers=False).ok
    lines = (out / "items.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["metadata"]["readability"] = {"objects": {"target": {"pixels": 90, "box": [6, 15], "marker_cover": 0.0}}}
    lines[0] = json.dumps(rec)
    (out / "items.jsonl").write_text("\n".join(lines) + "\n")
    report = validate_dataset(out, derive_answers=False)
    assert any("unreadable: target: 90 visible px" in e for e in report.errors)
