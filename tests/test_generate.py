"""End-to-end generation: determinism, parallel == serial, resume, validation of the output."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.validate import validate_dataset

N = 6
TASKS = ["dori/view_parallelism"]  # one task keeps these end-to-end tests fast


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under root (relative path -> hex)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "d"
    generate_dataset(out, GenerationConfig(suites=["dori"], n=N, seed=7, tasks=TASKS))
    return out


def test_generated_dataset_validates_and_has_both_granularities(serial: Path) -> None:
    report = validate_dataset(serial)
    assert report.ok, report.errors
    items = [json.loads(line) for line in (serial / "items.jsonl").read_text().splitlines()]
    assert len(items) == 2 * N
    assert {it["granularity"] for it in items} == {"coarse", "granular"}
    manifest = json.loads((serial / "manifest.json").read_text())
    assert manifest["counts"]["items"] == 2 * N
    assert manifest["seed"] == 7
    assert all(a["license"] for a in manifest["assets"])
    assert not (serial / ".parts").exists()


def test_same_seed_gives_identical_bytes(serial: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    generate_dataset(again, GenerationConfig(suites=["dori"], n=N, seed=7, tasks=TASKS))
    assert tree_digest(again) == tree_digest(serial)


def test_other_seed_gives_other_dataset(serial: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    generate_dataset(other, GenerationConfig(suites=["dori"], n=N, seed=8, tasks=TASKS))
    assert (other / "items.jsonl").read_bytes() != (serial / "items.jsonl").read_bytes()


def test_two_workers_equal_serial(serial: Path, tmp_path: Path) -> None:
    par = tmp_path / "par"
    generate_dataset(par, GenerationConfig(suites=["dori"], n=N, seed=7, tasks=TASKS), workers=2)
    assert tree_digest(par) == tree_digest(serial)


def test_forked_workers_of_a_fresh_process_equal_serial(serial: Path, tmp_path: Path) -> None:
    """A process that has not rendered forks its pool (the in-process test above spawns,
    since this process holds a GL context): same bytes, and the phase marks are written."""
    out, marks = tmp_path / "fork", tmp_path / "marks.txt"
    code = ("from perspecta.dataset import generate as g; "
            f"assert g._pool_start_method() == 'fork'; "
            f"g.generate_dataset({str(out)!r}, g.GenerationConfig(suites=['dori'], n={N}, seed=7, tasks={TASKS!r}), "
            "workers=2)")
    env = {**os.environ, "PERSPECTA_WALL_MARKS": str(marks)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert tree_digest(out) == tree_digest(serial)
    names = [line.split()[0] for line in marks.read_text().splitlines()]
    assert names == ["units.start", "units.end"]


def test_a_process_that_rendered_spawns_its_pool(serial: Path) -> None:
    from perspecta.dataset.generate import _pool_start_method

    assert _pool_start_method() == "spawn"  # the serial fixture opened a GL context here


def test_refuses_to_overwrite_without_resume(serial: Path) -> None:
    with pytest.raises(FileExistsError):
        generate_dataset(serial, GenerationConfig(suites=["dori"], n=N, seed=7, tasks=TASKS))


def test_resume_refuses_other_configuration(serial: Path) -> None:
    with pytest.raises(ValueError, match="different configuration"):
        generate_dataset(serial, GenerationConfig(suites=["dori"], n=N, seed=8, tasks=TASKS), resume=True)


def test_killed_generation_resumes_to_the_same_bytes(serial: Path, tmp_path: Path) -> None:
    """SIGKILL the CLI mid-run: no manifest is left, and --resume completes to the serial bytes."""
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "perspecta.cli", "generate", "--suite", "dori", "--n", str(N),
           "--seed", "7", "--task", TASKS[0], "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "CI": "1"})
    parts = out / ".parts" / "dori" / "view_parallelism"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if parts.exists() and len(list(parts.glob("*.json"))) >= 2:
            break
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail("generation finished before it could be interrupted; raise N")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "manifest.json").exists()
    assert not validate_dataset(out).ok
    done_before = len(list(parts.glob("*.json")))
    assert 2 <= done_before < N

    result = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert tree_digest(out) == tree_digest(serial)


def test_splits_change_labels_not_scenes(serial: Path, tmp_path: Path) -> None:
    """Splits are assigned per unit (so disjoint by image) and never perturb the sampling."""
    out = tmp_path / "split"
    generate_dataset(out, GenerationConfig(suites=["dori"], n=N, seed=7, tasks=TASKS, splits={"train": 0.5, "test": 0.5}))
    images = {k: v for k, v in tree_digest(out).items() if k.startswith("images/")}
    assert images == {k: v for k, v in tree_digest(serial).items() if k.startswith("images/")}
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    split_of_image: dict[str, set[str]] = {}
    for it in items:
        split_of_image.setdefault(it["images"][0], set()).add(it["split"])
    assert all(len(s) == 1 for s in split_of_image.values())
    assert {it["split"] for it in items} == {"train", "test"}  # 6 units: both occur for this seed
    assert validate_dataset(out).ok


def test_bad_split_specification_is_refused() -> None:
    with pytest.raises(ValueError, match="--split"):
        GenerationConfig(suites=["dori"], splits={"holdout": 1.0})


def test_a_unit_that_cannot_be_made_is_one_line_and_keeps_finished_units(tmp_path: Path) -> None:
    """Knob values no room can satisfy: the CLI names the unit and the task's reason in one
    line (no traceback), exits 1, and the finished units stay for --resume."""
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "perspecta.cli", "generate", "--task", "pcsr/relative_distance",
           "--task", "dori/view_parallelism", "-c", "pcsr.distance_margin_m=6", "--n", "1", "--seed", "3",
           "--workers", "2", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "400"})
    assert proc.returncode == 1, proc.stderr[-2000:]
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text
    line = next(ln for ln in text.splitlines() if "generation stopped" in ln)
    assert "pcsr/relative_distance unit 0" in line and "distance_margin_m" in line and "rooms tried" in line
    assert any((out / ".parts" / "dori" / "view_parallelism").iterdir()), "the finished unit was kept"


def test_pool_takes_each_tasks_first_unit_then_the_costliest_task() -> None:
    """LongestFirst: one probe per task in plan order, then always the task with the highest
    mean cost so far (a task still unmeasured counts as costliest), every unit exactly once."""
    from perspecta.dataset.generate import LongestFirst, Unit

    units = [Unit("s", t, i) for t in ("cheap", "dear", "mid") for i in range(3)]
    order = LongestFirst(units)
    probes = [order.pop() for _ in range(3)]
    assert [u.task for u in probes] == ["cheap", "dear", "mid"]
    order.record(probes[0], 1.0)
    order.record(probes[2], 2.0)
    assert order.pop().task == "dear"  # its probe has not reported: unknown counts as costliest
    order.record(probes[1], 9.0)
    rest = []
    while order:
        u = order.pop()
        rest.append(u.task)
        order.record(u, {"cheap": 1.0, "dear": 9.0, "mid": 2.0}[u.task])
    assert rest == ["dear", "mid", "mid", "cheap", "cheap"]
    assert not order


def test_two_workers_over_several_tasks_equal_serial(tmp_path: Path) -> None:
    """Units of several tasks leave the pool out of plan order (LongestFirst): the dataset
    is still the serial run's, byte for byte."""
    config = dict(suites=["dori"], n=2, seed=5, tasks=["dori/view_parallelism", "dori/directional_facing"])
    generate_dataset(tmp_path / "serial", GenerationConfig(**config))
    generate_dataset(tmp_path / "par", GenerationConfig(**config), workers=2)
    assert tree_digest(tmp_path / "par") == tree_digest(tmp_path / "serial")
