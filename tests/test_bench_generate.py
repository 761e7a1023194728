"""`perspecta bench generate`'s arithmetic and tables (no generation: synthetic runs)."""

from __future__ import annotations

from collections import Counter

from perspecta.bench_generate import SuiteRun, _parse_renders, format_tables


def _run() -> SuiteRun:
    return SuiteRun("s", items=10, images=8, cpu_s=20.0, wall_s={1: 24.0, 2: 14.0}, units_s={1: 20.0, 2: 10.5},
                    cli_cpu_s={1: 22.0, 2: 24.2},
                    stages=Counter({"render.color": 10.0, "png.encode": 2.0}),
                    renders=Counter({(256, 256, "perspective"): 8, (256, 256, "perspective ids"): 4}),
                    raw_cpu_s=9.0, own_frame_cpu_s=13.0 / 8)


def test_scaling_and_share_of_bound_use_the_phase_asked_for() -> None:
    r = _run()
    assert r.scaling("units") == 20.0 / 10.5
    assert r.scaling("command") == 24.0 / 14.0
    assert r.bound_cpu_s == 13.0  # each saved image rendered once at the own frames' mean cost
    assert r.share_of_bound(2, "units") == 13.0 / 2 / 10.5  # bound on 2 cores over the 2-worker wall
    assert r.share_of_bound(2, "command") == 13.0 / 2 / 14.0
    assert r.cpu_share == 13.0 / 20.0
    assert SuiteRun("t").scaling() is None and SuiteRun("t").share_of_bound() is None


def test_summary_prints_both_figures_per_suite() -> None:
    text = format_tables([_run()], units=2)
    line = next(ln for ln in text.splitlines() if ln.startswith("- s:"))
    assert "scaling 1→2 1.90× (1.71×)" in line
    assert "share of bound on 2 workers 62% (46%)" in line
    assert "CPU of the 2-worker command / 1-worker 1.10×" in line
    assert "| s | 10 | 8 | 12 |" in text


def test_mask_only_renders_are_counted_apart() -> None:
    counts = Counter({"render 512x512 perspective": 3, "render 256x256 perspective ids": 2, "image 512x512": 3})
    assert _parse_renders(counts) == Counter({(512, 512, "perspective"): 3, (256, 256, "perspective ids"): 2})
