"""Metrics over scored records and the ``score``/``eval`` commands (standalone Typer app)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from perspecta.cli_eval import app
from perspecta.score.metrics import (
    accuracy_block,
    bootstrap_ci,
    read_records,
    summarize,
)
from perspecta.score.records import ScoredRecord
from perspecta.suites import registry
from perspecta.suites.spec import Suite


def rec(i: int, status: str, correct: bool | None, *, repeat: int = 0, suite: str = "zz_test",
        task: str = "t", subtype: str = "s") -> ScoredRecord:
    return ScoredRecord(item_id=f"{suite}/{task}/base/{i:06d}", suite=suite, task=task, model="m", answer="A",
                        status=status, correct=correct, prediction="A" if status == "ok" else None,  # type: ignore[arg-type]
                        subtype=subtype, n_options=4, repeat=repeat)


def test_accuracy_counts_every_item_failed_and_unparsed_wrong() -> None:
    records = ([rec(i, "ok", True) for i in range(6)] + [rec(6, "ok", False)]
               + [rec(7, "unparsed", False)] + [rec(8, "failed", None), rec(9, "failed", None)])
    b = accuracy_block(records)
    # 6 right out of 10 asked; coverage 8/10; answered-only 6/8 is the labelled secondary number
    assert (b["n"], b["answered"], b["ok"], b["unparsed"], b["failed"]) == (10, 8, 7, 1, 2)
    assert b["accuracy"] == 6 / 10 and b["coverage"] == 0.8 and b["accuracy_answered"] == 6 / 8
    assert b["chance_level"] == 0.25
    lo, hi = b["ci95"]
    assert lo < 0.6 < hi and 0.2 < lo and hi <= 1.0


def test_accuracy_with_mostly_failed_requests_is_not_flattered() -> None:
    """Issue 15: 89 failed of 168 with 4 right among the 79 answered showed 5.1% for n=168."""
    records = ([rec(i, "ok", i < 4) for i in range(79)] + [rec(79 + i, "failed", None) for i in range(89)])
    b = accuracy_block(records)
    assert b["n"] == 168 and b["accuracy"] == 4 / 168 and round(100 * b["accuracy"], 1) == 2.4
    assert round(100 * b["accuracy_answered"], 1) == 5.1 and round(100 * b["coverage"], 1) == 47.0


def test_bootstrap_ci_degenerate_and_width() -> None:
    lo, hi = bootstrap_ci(np.ones(20))  # 20 of 20: Wilson's lower bound, not a zero-width [1, 1]
    assert hi == 1.0 and abs(lo - 0.839) < 0.001
    assert bootstrap_ci(np.array([])) is None
    lo, hi = bootstrap_ci(np.array([1.0, 0.0] * 200))  # p = 0.5, n = 400: +-1.96*0.025 = +-0.049
    assert abs(lo - 0.451) < 0.02 and abs(hi - 0.549) < 0.02


def test_repeats_mean_and_sem() -> None:
    # repeat 0: 3/4 right, repeat 1: 1/4 right -> mean 0.5, std 0.3536, sem 0.25
    records = [rec(i, "ok", i < 3, repeat=0) for i in range(4)] + [rec(i, "ok", i < 1, repeat=1) for i in range(4)]
    r = accuracy_block(records)["repeats"]
    assert r["n"] == 2 and r["mean"] == 0.5 and abs(r["sem"] - 0.25) < 1e-12


class _CountOk:
    """A minimal accumulator: records with an extracted answer."""

    def __init__(self) -> None:
        self.ok = 0

    def add(self, r: dict) -> None:
        self.ok += r["status"] == "ok"

    def merge(self, other: "_CountOk") -> None:
        self.ok += other.ok

    def result(self) -> dict:
        return {"count_ok": {"ok": self.ok}}


class _Broken(_CountOk):
    def result(self) -> dict:
        raise RuntimeError("bug in a suite metric")


def test_summarize_groups_and_calls_registered_suite_metrics() -> None:
    registry.register_suite(Suite(name="zz_test", package="perspecta.suites.spec", metrics=_CountOk))
    try:
        _check_summary()
    finally:
        registry.unregister_suite("zz_test")
    registry.register_suite(Suite(name="zz_test", package="perspecta.suites.spec", metrics=_Broken))
    try:
        run = summarize([rec(0, "ok", True)])["runs"][0]
        assert "bug in a suite metric" in run["suite_metrics"]["zz_test"]["error"]
        assert run["accuracy"] == 1.0  # a broken suite metric does not hide the core scores
    finally:
        registry.unregister_suite("zz_test")


def _check_summary() -> None:
    records = [rec(0, "ok", True, subtype="a"), rec(1, "ok", False, subtype="b"), rec(2, "unparsed", False, subtype="b")]
    s = summarize(records)
    run = s["runs"][0]
    assert run["by_subtype"]["zz_test/t/a"]["accuracy"] == 1.0
    assert run["by_subtype"]["zz_test/t/b"]["accuracy"] == 0.0
    assert run["suite_metrics"]["zz_test"]["count_ok"] == {"ok": 2}
    a, b = _CountOk(), _CountOk()  # merging two shards gives the count of both
    for i, r in enumerate(records):
        (a if i % 2 else b).add(r.to_dict())
    a.merge(b)
    assert a.result() == {"count_ok": {"ok": 2}}


def test_read_records_last_wins_and_torn_tail_is_skipped(tmp_path: Path) -> None:
    log = tmp_path / "results.jsonl"
    first, retry = rec(0, "failed", None), rec(0, "ok", True)
    log.write_text(json.dumps(first.to_dict()) + "\n" + json.dumps(retry.to_dict()) + "\n" + '{"item_id": "zz')
    got = read_records(tmp_path)
    assert len(got) == 1 and got[0].status == "ok"


def test_eval_and_score_commands(tmp_path: Path) -> None:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    ds = tmp_path.parent / "perspecta-eval-dori-n3-seed11"
    if not (ds / "manifest.json").exists():
        generate_dataset(ds, GenerationConfig(suites=["dori"], n=3, seed=11))
    runner = CliRunner()
    out = tmp_path / "res"
    r = runner.invoke(app, ["eval", str(ds), "--model", "baseline:oracle", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "baseline:oracle" in r.output
    r = runner.invoke(app, ["score", str(out)])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"][0]["accuracy"] == 1.0
    r = runner.invoke(app, ["eval", str(ds), "--model", "baseline:blind", "--out", str(out)])
    assert r.exit_code == 2 and "needs a text backend" in r.output
    r = runner.invoke(app, ["score", str(tmp_path / "nothing")])
    assert r.exit_code == 2 and "not found" in r.output
