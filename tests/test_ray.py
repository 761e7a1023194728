"""The Ray executors on a real local Ray instance (2 CPUs, no dashboard), started once for this module.

Generation: same seed → the same bytes as the local executor, also through an fsspec
URL, and a worker killed mid-shard still yields a complete dataset. Evaluation: real
HTTP to two fake OpenAI servers and baselines, the local runner's answers, and a
``kill -9`` of the driver then a rerun asks for nothing twice.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import ray  # noqa: F401  (the `ray` extra, installed by scripts/setup.sh)
from typer.testing import CliRunner

from perspecta.cli import app
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.validate import validate_dataset
from perspecta.models.fake_server import FakeServer
from perspecta.run import EvalConfig, evaluate
from perspecta.scale import ray_cluster
from perspecta.scale.ray_eval import evaluate_ray
from perspecta.scale.ray_generate import KILL_ONCE_ENV
from perspecta.score.metrics import read_records

SRC = Path(__file__).resolve().parents[1] / "src"
GEN = dict(suites=["dori", "lrr"], n=4, seed=21, tasks=["dori/view_parallelism", "lrr/pos"])
FAST = dict(timeout_s=2.0, backoff_base_s=0.005, backoff_max_s=0.02, progress=False)


@pytest.fixture(scope="module")
def ray_address():
    import ray

    started = ray_cluster.connect(num_cpus=2)
    yield ray.get_runtime_context().gcs_address
    if started:
        ray_cluster.disconnect()


@pytest.fixture(scope="module")
def local_dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("local") / "d"
    generate_dataset(out, GenerationConfig(**GEN))
    return out


@pytest.fixture(scope="module")
def eval_dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("eval") / "d"
    generate_dataset(out, GenerationConfig(suites=["dori"], n=3, seed=11,
                                           tasks=["dori/view_parallelism", "dori/directional_facing",
                                                  "dori/inter_object_direction"]))
    return out


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_ray_is_not_imported_by_the_local_path(tmp_path: Path) -> None:
    code = ("import sys, perspecta, perspecta.cli\n"
            "from perspecta.dataset.generate import GenerationConfig, generate_dataset\n"
            f"generate_dataset({str(tmp_path / 'd')!r}, GenerationConfig(suites=['dori'], n=1, "
            "tasks=['dori/view_parallelism']))\n"
            "assert 'ray' not in sys.modules, 'ray imported'\nprint('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(SRC)})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_ray_generation_has_the_local_bytes_on_a_path_and_a_url(ray_address, local_dataset, tmp_path) -> None:
    want = digests(local_dataset)
    assert any(k.endswith(".png") for k in want) and "manifest.json" in want
    generate_dataset(tmp_path / "ray", GenerationConfig(**GEN), executor="ray", workers=2)
    assert digests(tmp_path / "ray") == want
    generate_dataset(f"file://{tmp_path / 'url'}", GenerationConfig(**GEN), executor="ray")
    assert digests(tmp_path / "url") == want


def test_killed_ray_worker_is_retried_without_duplicates_or_losses(ray_address, local_dataset, tmp_path,
                                                                  monkeypatch) -> None:
    marker = tmp_path / "killed-once"
    monkeypatch.setenv(KILL_ONCE_ENV, str(marker))
    out = tmp_path / "d"
    # one slot → shards of two units: the kill lands after the first unit of a shard,
    # so the retry must skip that unit and still do the second
    manifest = generate_dataset(out, GenerationConfig(**GEN), executor="ray", workers=1)
    assert marker.exists(), "no worker was killed: the test proves nothing"
    report = validate_dataset(out)
    assert report.ok, report.errors[:5]
    ids = [line for line in (out / "items.jsonl").read_text().splitlines()]
    assert manifest["counts"]["items"] == len(ids) == len(set(ids))
    assert digests(out) == digests(local_dataset)  # exact: nothing lost, duplicated or reordered


def test_memory_url_works_in_process_and_is_refused_for_ray(ray_address, local_dataset) -> None:
    import fsspec

    url = "memory://perspecta-test/d"
    generate_dataset(url, GenerationConfig(**GEN))
    fs = fsspec.filesystem("memory")
    for rel, digest in digests(local_dataset).items():
        assert hashlib.sha256(fs.cat_file(f"/perspecta-test/d/{rel}")).hexdigest() == digest, rel
    with pytest.raises(ValueError, match="one process"):
        generate_dataset("memory://perspecta-test/other", GenerationConfig(**GEN), executor="ray")


def test_cli_generate_with_ray_then_validate(ray_address, tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli"
    r = runner.invoke(app, ["generate", "--out", str(out), "--suite", "dori", "--task", "dori/view_parallelism",
                            "--n", "2", "--seed", "3", "--executor", "ray", "--ray-address", ray_address])
    assert r.exit_code == 0, r.output
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0
    bad = runner.invoke(app, ["generate", "--out", str(tmp_path / "x"), "--suite", "dori", "--executor", "dask"])
    assert bad.exit_code == 2 and "--executor must be one of" in bad.output


def test_ray_eval_spreads_over_two_servers_and_matches_the_local_runner(ray_address, eval_dataset, tmp_path) -> None:
    models = ["openai:fake", "baseline:oracle", "baseline:chance"]
    with FakeServer(latency_s=0.01) as s1, FakeServer(latency_s=0.01) as s2:
        runs = evaluate_ray(eval_dataset, models, tmp_path / "ray", EvalConfig(concurrency=4, **FAST),
                            base_urls=[s1.url, s2.url])
        per_server = [sum(s.stats.requests.values()) for s in (s1, s2)]
        asked = s1.stats.requests + s2.stats.requests
        local = [evaluate(eval_dataset, m, tmp_path / "local", config=EvalConfig(**FAST), base_url=s1.url)
                 for m in models]
    n_items = len(local[0].records())
    assert all(per_server) and sum(per_server) == n_items, per_server  # both endpoints worked, once per item
    assert set(asked.values()) == {1}
    served = dict(zip((r.model for r, _ in runs), (s for _, s in runs)))
    assert sum(served["openai:fake"].values()) == n_items
    got = {(r.model, r.item_id): (r.prediction, r.status) for r in read_records(tmp_path / "ray")}
    want = {(r.model, r.item_id): (r.prediction, r.status) for res in local for r in res.records()}
    assert got == want and len(got) == 3 * n_items
    assert all(r.correct for r in read_records(tmp_path / "ray") if r.model == "baseline:oracle")


def test_ray_eval_kill_9_then_rerun_asks_nothing_twice(ray_address, eval_dataset, tmp_path) -> None:
    out = tmp_path / "out"
    with FakeServer(latency_s=0.1) as s1, FakeServer(latency_s=0.1) as s2:
        cmd = [sys.executable, "-m", "perspecta.cli_eval", "eval", str(eval_dataset), "--model", "openai:fake",
               "--base-url", s1.url, "--base-url", s2.url, "--out", str(out), "--concurrency", "2",
               "--no-progress", "--executor", "ray", "--ray-address", ray_address]
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        log = out / "results.jsonl"
        deadline = time.time() + 90
        while time.time() < deadline and proc.poll() is None:
            if log.is_file() and log.read_bytes().count(b"\n") >= 4:
                break
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        before = {r.item_id for r in read_records(out)}
        # the dead driver's actors may finish their requests in flight before Ray reaps them
        first, quiet_since = s1.stats.requests + s2.stats.requests, time.time()
        while time.time() - quiet_since < 1.0:
            time.sleep(0.1)
            now = s1.stats.requests + s2.stats.requests
            if now != first:
                first, quiet_since = now, time.time()
        for s in (s1, s2):
            s.stats.reset()
        rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        second = s1.stats.requests + s2.stats.requests
    final = read_records(out)
    total = len(final)
    assert 4 <= len(before) < total, "the kill must land mid-run"
    assert set(second.values()) == {1}  # nothing asked twice by the rerun
    assert sum(second.values()) <= total - len(before)  # only what was not recorded before the kill
    assert len({r.item_id for r in final}) == total and all(r.status == "ok" for r in final)
    print(f"ray kill -9: {len(before)} recorded, {sum(first.values())} asked before, "
          f"{sum(second.values())} on rerun, {total} total")
