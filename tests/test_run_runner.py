"""The runner against a real local OpenAI-compatible HTTP server (perspecta.models.fake_server).

The server answers a letter chosen by a hash of the prompt text and records, per prompt
text, how many requests arrived and which answer it sent, so these tests can check that
every scored prediction is the server's real answer (none guessed), that failures are
recorded, and that a rerun after ``kill -9`` asks for nothing twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.models.base import InputSettings, Request
from perspecta.models.fake_server import FakeServer, request_key
from perspecta.models.images import ImageEncoder, MissingDepthError
from perspecta.models.openai_http import build_content
from perspecta.run import EvalConfig, evaluate
from perspecta.run.dataset import load_dataset
from perspecta.run.prompts import build_prompt
from perspecta.score.metrics import read_records

SRC = Path(__file__).resolve().parents[1] / "src"
FAST = dict(timeout_s=0.25, backoff_base_s=0.005, backoff_max_s=0.02, progress=False)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Every DORI task, 3 units each; shared (by path) with the other test_models_/test_run_ files."""
    out = tmp_path_factory.getbasetemp() / "perspecta-eval-dori-n3-seed11"
    if not (out / "manifest.json").exists():
        generate_dataset(out, GenerationConfig(suites=["dori"], n=3, seed=11))
    return out


def server_texts(ds: Path, mode: str = "direct") -> dict[str, str]:
    """item id -> the text the server sees for that item (its counters' key)."""
    data = load_dataset(ds)
    enc = ImageEncoder()
    return {it.id: request_key([{"content": build_content(
        Request(it, build_prompt(it, mode), [data.image_path(p) for p in it.images]), enc)}])
        for it in data.items}


def test_flaky_server_every_item_real_answer_or_failed(dataset: Path, tmp_path: Path) -> None:
    texts = server_texts(dataset)
    with FakeServer(fail_rate=0.3, hang_s=0.6, nonsense_rate=0.1, seed=1) as server:
        result = evaluate(dataset, "openai:fake", tmp_path, base_url=server.url, concurrency=8, max_retries=5, **FAST)
        stats = server.stats
    records = read_records(tmp_path)
    assert len(records) == len(texts) >= 20 and {r.item_id for r in records} == set(texts)
    assert set(stats.failures) == {"429", "500", "hang", "truncated", "garbage"}  # every failure kind was injected
    assert sum(stats.failures.values()) >= 8
    for r in records:
        text = texts[r.item_id]
        if r.status == "ok":  # the prediction is exactly what the server answered
            assert r.prediction == stats.answers[text]
            assert r.correct == (r.prediction == r.answer)
        elif r.status == "unparsed":
            assert r.response == "I am not sure what the picture shows." and r.correct is False
        else:
            assert r.status == "failed" and r.prediction is None and r.correct is None and r.error
        assert stats.answered[text] <= 1  # a valid answer was never asked for again
    assert result.counts["retries"] >= 8
    assert sum(r.status == "unparsed" for r in records) >= 1
    assert set(stats.images) == {len(it.images) for it in load_dataset(dataset).items}  # all images sent


def test_exhausted_retries_are_recorded_failed_then_rerun_fixes_only_those(dataset: Path, tmp_path: Path) -> None:
    texts = server_texts(dataset)
    with FakeServer(fail_rate=0.5, hang_s=0.6, seed=3) as server:
        evaluate(dataset, "openai:fake", tmp_path, base_url=server.url, concurrency=8, max_retries=0, **FAST)
        first = {r.item_id: r for r in read_records(tmp_path)}
        failed = {i for i, r in first.items() if r.status == "failed"}
        assert 0.25 * len(texts) <= len(failed) <= 0.75 * len(texts)
        errors = " ".join(first[i].error or "" for i in failed)
        for needle in ("HTTP 429", "HTTP 500", "timeout after", "unparseable JSON"):
            assert needle in errors
        assert all(first[i].prediction is None and first[i].correct is None for i in failed)
        server.stats.reset()
        server.fail_rate = 0.0
        again = evaluate(dataset, "openai:fake", tmp_path, base_url=server.url, concurrency=8, **FAST)
        assert again.counts == {"resumed": len(texts) - len(failed), "requested": len(failed), "ok": len(failed),
                                "retries": 0}
        assert set(server.stats.requests) == {texts[i] for i in failed}
    final = read_records(tmp_path)
    assert len(final) == len(texts) and all(r.status == "ok" for r in final)


def test_kill_9_then_rerun_requests_nothing_twice_and_loses_nothing(dataset: Path, tmp_path: Path) -> None:
    texts = server_texts(dataset)
    by_text = {t: i for i, t in texts.items()}
    out = tmp_path / "out"
    concurrency = 4
    with FakeServer(latency_s=0.08) as server:
        cmd = [sys.executable, "-m", "perspecta.cli_eval", "eval", str(dataset), "--model", "openai:fake",
               "--base-url", server.url, "--out", str(out), "--concurrency", str(concurrency), "--no-progress"]
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        log = out / "results.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline:
            if log.is_file() and log.read_bytes().count(b"\n") >= 12:
                break
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        before = {r.item_id for r in read_records(out)}
        assert 12 <= len(before) < len(texts), "the kill must land mid-run"
        answered_before = Counter(server.stats.answered)
        server.stats.reset()

        rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        second = Counter(server.stats.requests)
    # nothing recorded before the kill was requested again, nothing was requested twice
    assert not {by_text[t] for t in second} & before
    assert all(c == 1 for c in second.values())
    # only responses in flight at the kill (sent by the server, never written) may repeat
    repeated = [t for t in second if answered_before[t]]
    print(f"kill -9: {len(before)} recorded before, {sum(second.values())} requested on rerun, "
          f"{len(repeated)} in flight at the kill")
    assert len(repeated) <= concurrency
    final = read_records(out)
    assert sorted(r.item_id for r in final) == sorted(texts) and all(r.status == "ok" for r in final)


def test_cache_answers_a_second_run_without_requests(dataset: Path, tmp_path: Path) -> None:
    cache = tmp_path / "shared-cache.jsonl"
    with FakeServer() as server:
        evaluate(dataset, "openai:fake", tmp_path / "a", base_url=server.url, cache_path=cache, limit=2, **FAST)
        n = sum(server.stats.requests.values())
        b = evaluate(dataset, "openai:fake", tmp_path / "b", base_url=server.url, cache_path=cache, limit=2, **FAST)
        assert n == 7 * 2  # limit=2 items per task, 7 DORI tasks
        assert sum(server.stats.requests.values()) == n  # the second run asked nothing
        assert b.counts["cached"] == n and "requested" not in b.counts


def test_prompt_modes_and_seeded_repeats(dataset: Path, tmp_path: Path) -> None:
    with FakeServer() as server:
        res = evaluate(dataset, "openai:fake", tmp_path, base_url=server.url, limit=1, suites=["dori"],
                       prompt_modes=["cot", "think"], repeats=2, temperature=0.7, seed=5, **FAST)
        n = 7  # one item per DORI task
        assert res.counts["requested"] == n * 2 * 2
        assert Counter(server.stats.seeds) == {5: 2 * n, 6: 2 * n}
        cot_text = next(t for t in server.stats.requests if "step by step" in t)
        assert "<answer></answer>" in cot_text
    recs = read_records(tmp_path)
    assert Counter((r.prompt_mode, r.repeat) for r in recs) == {("cot", 0): 7, ("cot", 1): 7,
                                                                ("think", 0): 7, ("think", 1): 7}


def test_api_key_sent_but_never_logged(dataset: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PERSPECTA_API_KEY", "sk-secret-123")
    with FakeServer() as server:
        evaluate(dataset, "openai:fake", tmp_path, base_url=server.url, limit=1, **FAST)
        assert server.stats.auth == {"Bearer sk-secret-123"}
    for f in tmp_path.iterdir():
        assert "sk-secret-123" not in f.read_text()


def test_depth_input_needs_saved_depth(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(MissingDepthError, match="generated without them .regenerate with --with-depth"):
        evaluate(dataset, "baseline:chance", tmp_path, inputs=InputSettings(depth=True), progress=False)
    assert not (tmp_path / "results.jsonl").exists()


def test_bad_config_is_a_clear_error(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="prompt mode"):
        EvalConfig(prompt_modes=["fancy"])
    with pytest.raises(ValueError, match="no items in split 'train'"):
        evaluate(dataset, "baseline:chance", tmp_path, split="train", progress=False)
    with pytest.raises(ValueError, match="unknown backend kind"):
        evaluate(dataset, "gpt:4", tmp_path, progress=False)
