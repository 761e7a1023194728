"""`perspecta bench all` plumbing: every section runs and lands in one Markdown table; an absent
peer venv is a "not set up" row, not a failure. The figures themselves are not checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from perspecta.bench import SETUP_PEERS, BenchSizes, _harness_rows, run_score_bench
from perspecta.cli import app
from perspecta.suites import registry


def test_score_bench_reads_and_summarises_every_synthetic_record() -> None:
    r = run_score_bench(400)
    assert r["records"] == 400 and r["runs"] == 20 and r["records_per_s"] > 0


def test_missing_peer_venv_is_a_not_set_up_row(tmp_path: Path) -> None:
    sizes = BenchSizes(harness_items=10, harness_concurrency=(2,), peers=("lmms-eval", "inspect-ai"))
    rows, report = _harness_rows(sizes, tmp_path / "no-venvs", say=None)
    by_name = {name: figure for name, figure, _ in rows}
    assert by_name["harness lmms-eval"] == SETUP_PEERS and by_name["harness inspect-ai"] == SETUP_PEERS
    assert by_name["harness perspecta, concurrency 2"].endswith("req/s")
    assert "| perspecta | 2 |" in report


@pytest.mark.slow
def test_bench_all_quick_prints_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    r = CliRunner().invoke(app, ["bench", "all", "--quick", "--out", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("# perspecta bench") and "Machine: " in text
    for row in ("| render gl 256²", "| generate local, 2 workers", "| generate local, scaling 1 → 2 workers",
                "| generate ray, 2 workers", "| generate ray, scaling 1 → 2 workers", "| storage per 1K items",
                "| harness perspecta, concurrency 4", "| score (read + summarize)", "| report"):
        assert row in text, row
    for suite in registry.suites():  # a row per registered suite
        assert f"| generate {suite} (all tasks, defaults)" in text, suite
    assert "failed:" not in text, text
