"""The opt-in stage timer: inert unless collecting, exclusive across nesting, and the real
generation path reports its stages (render passes, PNG encoding) through it."""

from __future__ import annotations

import time
from pathlib import Path

from perspecta import timing


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_nothing_is_recorded_outside_collect() -> None:
    with timing.stage("x"):
        _spin(0.01)
    timing.count("y")
    assert timing.start() is None and timing.stop(None, "z") is None
    with timing.collect() as tally:
        pass
    assert not tally.seconds and not tally.counts


def test_nested_stages_are_exclusive_and_marks_time_consecutive_steps() -> None:
    @timing.timed("inner")
    def inner() -> None:
        _spin(0.05)

    with timing.collect() as tally:
        with timing.stage("outer"):
            _spin(0.05)
            inner()
        mark = timing.start()
        _spin(0.03)
        mark = timing.stop(mark, "a")
        _spin(0.03)
        timing.stop(mark, "b")
        timing.count("frames", 2)
    assert 0.045 <= tally.seconds["outer"] < 0.09  # its own 0.05 s, not the inner 0.05 s
    assert 0.045 <= tally.seconds["inner"] < 0.09
    assert 0.025 <= tally.seconds["a"] < 0.06 and 0.025 <= tally.seconds["b"] < 0.06
    assert tally.counts["frames"] == 2


def test_a_stage_left_open_by_an_exception_is_closed_by_its_parent() -> None:
    with timing.collect() as tally:
        try:
            with timing.stage("outer"):
                timing.start()  # never stopped
                raise RuntimeError
        except RuntimeError:
            pass
        with timing.stage("after"):
            pass
    assert set(tally.seconds) == {"outer", "after"}


def test_generation_reports_its_render_and_png_stages(tmp_path: Path) -> None:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset, plan_units
    from perspecta.suites import registry

    suite = registry.suites()[0]
    task = registry.tasks(suite)[0].key
    config = GenerationConfig(suites=[suite], n=1, seed=3, tasks=[task])
    with timing.collect() as tally:
        manifest = generate_dataset(tmp_path / "d", config, workers=1)
    assert len(plan_units(config)) == 1
    assert {"task", "render.color", "render.ids", "png.encode", "write"} <= set(tally.seconds)
    images = sum(n for k, n in tally.counts.items() if k.startswith("image "))
    assert images == manifest["counts"]["images"] > 0
    assert sum(n for k, n in tally.counts.items() if k.startswith("render ")) >= 1
