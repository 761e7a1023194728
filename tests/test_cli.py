"""The command line as a user runs it (real subprocesses, real files)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "perspecta.cli", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "d1"
    r = cli("generate", "--suite", "dori", "--n", "3", "--seed", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "dori/view_parallelism" in r.stdout
    return out


def test_validate_passes_on_generated_data(dataset: Path) -> None:
    r = cli("validate", str(dataset))
    assert r.returncode == 0, r.stdout + r.stderr


def test_validate_fails_and_names_a_missing_image(dataset: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(dataset, broken)
    first = json.loads((broken / "items.jsonl").read_text().splitlines()[0])
    (broken / first["images"][0]).unlink()
    r = cli("validate", str(broken))
    assert r.returncode == 1
    assert first["images"][0] in r.stdout


def test_validate_fails_on_a_broken_json_line(dataset: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(dataset, broken)
    lines = (broken / "items.jsonl").read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]
    (broken / "items.jsonl").write_text("\n".join(lines) + "\n")
    r = cli("validate", str(broken))
    assert r.returncode == 1
    assert ":3" in r.stdout  # the line number of the broken record


def test_suites_lists_the_dori_task() -> None:
    r = cli("suites")
    assert r.returncode == 0
    assert "view_parallelism" in r.stdout


def test_assets_list_json_has_procedural_families() -> None:
    r = cli("assets", "list", "--json", "--source", "proc")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    ids = {rec["asset_id"] for rec in records}
    assert {"proc:car", "proc:person", "proc:chair", "proc:dog", "proc:ball"} <= ids
    assert all(rec["license"] for rec in records)


def test_assets_thumb_writes_a_four_view_sheet(tmp_path: Path) -> None:
    out = tmp_path / "car.png"
    r = cli("assets", "thumb", "proc:car", "--out", str(out), "--size", "128")
    assert r.returncode == 0, r.stderr
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape[1] == 4 * 128
    # the +X (front) arrow is drawn in each tile, in its exact axis colour
    red = np.all(img == (230, 40, 40), axis=-1)
    for k in range(4):
        assert red[:, k * 128 : (k + 1) * 128].sum() > 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suite", "nope"], "unknown suite 'nope'"),
        (["--suite", "dori", "--renderer", "povray"], "unknown renderer 'povray'"),
        (["--suite", "dori", "--n", "0"], "--n must be at least 1"),
        (["--suite", "dori", "--seed", "-3"], "--seed must be a non-negative integer"),
        (["--suite", "dori", "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_generate_rejects_bad_arguments_before_writing(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "never"
    r = cli("generate", *args, "--out", str(out))
    assert r.returncode == 2
    assert message in " ".join(r.stdout.split())
    assert not out.exists()


def test_generate_refuses_a_non_empty_directory(dataset: Path) -> None:
    before = (dataset / "items.jsonl").read_bytes()
    r = cli("generate", "--suite", "dori", "--n", "3", "--seed", "2", "--out", str(dataset))
    assert r.returncode == 2
    assert "--resume" in r.stdout
    assert (dataset / "items.jsonl").read_bytes() == before
