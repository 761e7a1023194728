"""A suite from another package: ``examples/perspecta-taller`` installed with pip (offline,
no build isolation, into a temporary target) and run end to end through the CLI —
generate, validate, eval, score, audit, report — with nothing in perspecta naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import perspecta

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "perspecta-taller"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--target", str(target), str(EXAMPLE)],
                          capture_output=True, text=True, check=False, cwd=build,
                          env=dict(os.environ, PIP_NO_INPUT="1", TMPDIR=str(build)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(target.glob("perspecta_taller-*.dist-info/entry_points.txt")), "no entry point metadata installed"
    src = Path(perspecta.__file__).resolve().parents[1]  # the perspecta under test
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(target), str(src)]))


def cli(env: dict[str, str], *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "perspecta.cli", *args], env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert proc.returncode in ok, f"perspecta {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n" \
                                  f"{proc.stderr[-3000:]}"
    return proc


def test_installed_suite_runs_end_to_end(env: dict[str, str], tmp_path: Path) -> None:
    assert "which_taller" in cli(env, "suites").stdout
    ds, res, rep = tmp_path / "ds", tmp_path / "res", tmp_path / "report"
    cli(env, "generate", "--suite", "taller", "--n", "12", "--seed", "3", "--workers", "1", "--out", str(ds))
    items = [json.loads(line) for line in (ds / "items.jsonl").read_text().splitlines()]
    assert len(items) == 12 and {it["suite"] for it in items} == {"taller"}
    cli(env, "validate", str(ds))  # every answer re-derived from the stored scenes
    cli(env, "eval", str(ds), "-m", "baseline:oracle", "-m", "baseline:chance", "--out", str(res))
    cli(env, "score", str(res), "--json", str(tmp_path / "summary.json"))
    runs = {r["model"]: r for r in json.loads((tmp_path / "summary.json").read_text())["runs"]}
    assert runs["baseline:oracle"]["accuracy"] == 1.0 and runs["baseline:oracle"]["n"] == 12
    bands = runs["baseline:chance"]["suite_metrics"]["taller"]["by_height_ratio"]  # the suite's own accumulator
    assert sum(b["n"] for b in bands.values()) == 12
    audit = cli(env, "audit", str(ds), "--json", str(ds / "audit.json"), ok=(0, 1, 3))  # 3: 12 items judge nothing
    assert (ds / "audit.json").is_file(), audit.stdout
    assert any(k.startswith("taller") for k in json.dumps(json.loads((ds / "audit.json").read_text())).split('"'))
    cli(env, "report", str(res), "--out", str(rep), "--examples", "0")
    md = (rep / "report.md").read_text()
    assert "Taller — which of two objects is taller" in md and "Taller: accuracy % by height ratio" in md
