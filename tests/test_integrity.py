"""Issue 15, parts 2, 4 and 5: numbers that count every item, the image sizes each paper's
protocol sends, and results folders that can be neither corrupted nor mixed.

Every test here runs the real CLI or runner on real generated datasets, against the real
local HTTP server (perspecta.models.fake_server) where a model is needed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from perspecta.cli import app
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.models.fake_server import FakeServer
from perspecta.run import evaluate
from perspecta.run.cache import ResponseCache
from perspecta.score.metrics import read_records

FAST = dict(timeout_s=5.0, backoff_base_s=0.005, backoff_max_s=0.02, progress=False)
runner = CliRunner()


def _make(root: Path, name: str, config: GenerationConfig) -> Path:
    out = root / name
    if not (out / "manifest.json").exists():
        generate_dataset(out, config)
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Three DORI view-parallelism units (6 items, 3 images)."""
    return _make(tmp_path_factory.getbasetemp(), "integrity-dori-vp-n3-s3",
                 GenerationConfig(suites=["dori"], n=3, seed=3, tasks=["dori/view_parallelism"]))


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Path:
    """The same task and item ids from another seed: other scenes and answers."""
    return _make(tmp_path_factory.getbasetemp(), "integrity-dori-vp-n3-s4",
                 GenerationConfig(suites=["dori"], n=3, seed=4, tasks=["dori/view_parallelism"]))


def _cli(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _one_line_error(result, *needles: str) -> None:
    out = "\n".join(ln for ln in result.output.splitlines() if "━" not in ln).strip()  # minus progress bars
    assert result.exit_code != 0, out
    assert "Traceback" not in out and result.exception is None or isinstance(result.exception, SystemExit), out
    assert out.startswith("error:") and len(out.splitlines()) <= 3, out  # one message (rich may wrap it)
    for n in needles:
        assert n in " ".join(out.split()), out


# ---------------------------------------------------------------------- part 2


def test_eval_exits_nonzero_when_every_request_fails(small: Path, tmp_path: Path) -> None:
    with FakeServer(fail_rate=1.0, kinds=("500",)) as server:
        r = _cli("eval", small, "-m", "openai:fake", "--base-url", server.url, "--retries", "0",
                 "--out", tmp_path / "r", "--no-progress")
    assert r.exit_code == 1
    text = " ".join(r.output.split())
    assert "every request failed" in text and "6 of 6 items failed (100.0%)" in text


def test_eval_failed_share_says_requests_not_items_with_repeats(small: Path, tmp_path: Path) -> None:
    """Round 6: with --repeats 2 the line read "12 of 12 items failed" for 6 items."""
    with FakeServer(fail_rate=1.0, kinds=("500",)) as server:
        r = _cli("eval", small, "-m", "openai:fake", "--base-url", server.url, "--retries", "0", "--repeats", "2",
                 "--out", tmp_path / "r", "--no-progress")
    text = " ".join(r.output.split())
    assert "12 of 12 requests (6 items × repeats/modes) failed (100.0%)" in text, text


def test_eval_reports_failed_share_and_counts_failed_as_wrong(small: Path, tmp_path: Path) -> None:
    with FakeServer() as server:
        evaluate(small, "openai:fake", tmp_path / "r", base_url=server.url, **FAST)
    # a second model whose server always fails on half the items is what a flaky server gives
    records = read_records(tmp_path / "r")
    from perspecta.score.metrics import accuracy_block

    for r in records[:2]:
        r.status, r.correct, r.prediction = "failed", None, None
    b = accuracy_block(records)
    right = sum(bool(r.correct) for r in records)
    assert b["n"] == 6 and b["accuracy"] == right / 6 and b["coverage"] == 4 / 6


# ---------------------------------------------------------------------- part 4


@pytest.fixture(scope="module")
def pcsr_and_spin(tmp_path_factory) -> Path:
    return _make(tmp_path_factory.getbasetemp(), "integrity-pcsr-spin-n1",
                 GenerationConfig(suites=["pcsr", "spin"], n=1, seed=2,
                                  tasks=["pcsr/counting", "spin/canonical_view"]))


def test_models_see_images_as_the_suite_made_them(pcsr_and_spin: Path, tmp_path: Path) -> None:
    """By default nothing is shrunk: PCSR panoramas reach the model at 1024x512 and SpinBench
    images at the 512 px they were rendered at; the paper's 256 px is an explicit flag."""
    sizes = {}
    for suite in ("pcsr", "spin"):
        with FakeServer() as server:
            evaluate(pcsr_and_spin, "openai:fake", tmp_path / suite, base_url=server.url, suites=[suite], **FAST)
            sizes[suite] = {tuple(s) for req in server.stats.image_sizes for s in req}
    assert sizes["pcsr"] == {(1024, 512)}
    made = {Image.open(p).size for p in (pcsr_and_spin / "images").rglob("*.png") if p.relative_to(pcsr_and_spin).parts[1] == "spin"}
    assert sizes["spin"] and sizes["spin"] == made and all(max(s) == 512 for s in sizes["spin"])
    run = json.loads((tmp_path / "pcsr" / "run-openai_fake.json").read_text())
    assert run["images_sent"] == {"pcsr": {"max_side": None, "sizes": ["1024x512"]}}
    run = json.loads((tmp_path / "spin" / "run-openai_fake.json").read_text())
    assert run["images_sent"]["spin"]["max_side"] is None


def test_paper_protocol_of_256_px_is_a_flag(pcsr_and_spin: Path, tmp_path: Path) -> None:
    with FakeServer() as server:
        r = _cli("eval", pcsr_and_spin, "-m", "openai:fake", "--base-url", server.url, "--suite", "spin",
                 "--image-max-side", "256", "--out", tmp_path / "r", "--no-progress")
        assert r.exit_code == 0, r.output
        sent = {tuple(s) for req in server.stats.image_sizes for s in req}
    assert sent and all(max(s) == 256 for s in sent)


def test_image_max_side_overrides_every_suite(pcsr_and_spin: Path, tmp_path: Path) -> None:
    with FakeServer() as server:
        r = _cli("eval", pcsr_and_spin, "-m", "openai:fake", "--base-url", server.url, "--suite", "pcsr",
                 "--image-max-side", "300", "--out", tmp_path / "r", "--no-progress")
        assert r.exit_code == 0, r.output
        assert {tuple(s) for req in server.stats.image_sizes for s in req} == {(300, 150)}


# ---------------------------------------------------------------------- part 5: torn tails


def test_torn_last_line_of_results_is_quarantined_not_a_bad_middle_line(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    evaluate(small, "baseline:chance", out, **FAST)
    log = out / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    torn = lines[-1][: len(lines[-1]) // 2]
    log.write_bytes(b"".join(lines[:-1]) + torn)  # killed mid-line
    evaluate(small, "baseline:chance", out, **FAST)  # resumes: re-asks the torn item
    records = read_records(out)  # would raise on a bad middle line
    assert len(records) == 6 and all(r.status == "ok" for r in records)
    assert (out / "results.jsonl.torn").read_bytes() == torn + b"\n"
    assert _cli("score", out).exit_code == 0
    assert _cli("report", out, "--out", tmp_path / "rep", "--examples", "0").exit_code == 0


def test_torn_last_line_of_the_cache_is_quarantined(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = ResponseCache(path)
    cache.put("k1", "b", "text one", {})
    cache.close()
    with open(path, "ab") as f:
        f.write(b'{"key": "k2", "backend": "b", "te')
    cache = ResponseCache(path)
    cache.put("k3", "b", "text three", {})
    cache.close()
    again = ResponseCache(path)  # every line readable: nothing repaired into a bad middle line
    assert again.get("k1")["text"] == "text one" and again.get("k3")["text"] == "text three"
    assert again.get("k2") is None and len(again) == 2
    assert path.with_name("cache.jsonl.torn").read_bytes().startswith(b'{"key": "k2"')


# ---------------------------------------------------------------------- part 5: resume never mixes


def test_resume_refuses_another_dataset_with_the_same_item_ids(small: Path, other: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    evaluate(small, "baseline:oracle", out, **FAST)
    before = (out / "results.jsonl").read_bytes()
    with pytest.raises(ValueError, match="another dataset"):
        evaluate(other, "baseline:oracle", out, **FAST)
    r = _cli("eval", other, "-m", "baseline:oracle", "--out", out, "--no-progress")
    _one_line_error(r, "another dataset", "new --out")
    assert (out / "results.jsonl").read_bytes() == before  # nothing kept, rewritten or mixed
    fresh = evaluate(other, "baseline:oracle", tmp_path / "new", **FAST)
    assert all(rec.correct for rec in fresh.records())


def test_resume_refuses_other_generation_settings(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    with FakeServer() as server:
        evaluate(small, "openai:fake", out, base_url=server.url, **FAST)
        with pytest.raises(ValueError, match="other generation"):
            evaluate(small, "openai:fake", out, base_url=server.url, max_tokens=7, **FAST)
        again = evaluate(small, "openai:fake", out, base_url=server.url, **FAST)  # same settings: resumes
    assert again.counts.get("resumed") == 6 and not again.counts.get("requested")


# ---------------------------------------------------------------------- part 5: one-line errors


@pytest.mark.parametrize("args,needles", [
    (["--retries", "-1"], ["--retries must be 0 or more"]),
    (["--limit", "-1"], ["--limit must be at least 1"]),
    (["--image-max-side", "0"], ["--image-max-side must be at least"]),
    (["--max-tokens", "0"], ["--max-tokens must be at least 1"]),
    (["--suite", "nosuch"], ["unknown suite 'nosuch'", "known suites: dori"]),
])
def test_eval_bad_options_one_line(small: Path, tmp_path: Path, args: list[str], needles: list[str]) -> None:
    _one_line_error(_cli("eval", small, "-m", "baseline:chance", "--out", tmp_path / "r", "--no-progress", *args),
                    *needles)
    assert not (tmp_path / "r" / "results.jsonl").exists()


def test_eval_hf_model_that_does_not_exist(small: Path, tmp_path: Path) -> None:
    _one_line_error(_cli("eval", small, "-m", "hf:/nonexistent", "--out", tmp_path / "r", "--no-progress"),
                    "no model directory at /nonexistent")


def test_out_that_is_a_file_or_unwritable(small: Path, tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    below = afile / "sub"  # a path no one can create, root included
    for out in (afile, below):
        _one_line_error(_cli("eval", small, "-m", "baseline:chance", "--out", out, "--no-progress"), "--out")
        _one_line_error(_cli("generate", "--task", "dori/view_parallelism", "--n", "1", "--out", out), "--out")
        _one_line_error(_cli("export", small, "--to", "hf", "--out", out), "--out")
    evaluate(small, "baseline:chance", tmp_path / "r", **FAST)
    for bad in (tmp_path, below):  # a directory, and a place that cannot be written
        _one_line_error(_cli("score", tmp_path / "r", "--json", bad), "--json")


def test_generate_split_must_sum_to_one_and_suite_must_exist(tmp_path: Path) -> None:
    _one_line_error(_cli("generate", "--suite", "dori", "--n", "1", "--split", "train=0.5", "--out", tmp_path / "g"),
                    "must sum to 1")
    _one_line_error(_cli("generate", "--suite", "nosuch", "--n", "1", "--out", tmp_path / "g2"),
                    "unknown suite 'nosuch'", "dori, lrr, pcsr, spin")
    assert not (tmp_path / "g").exists()


def test_missing_or_truncated_image_fails_that_item_only(small: Path, tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    shutil.copytree(small, ds)
    from perspecta.run.dataset import load_dataset

    items = load_dataset(ds).items
    images = sorted({it.images[0] for it in items})
    assert len(images) >= 3
    (ds / images[0]).unlink()
    trunc = ds / images[1]
    trunc.write_bytes(trunc.read_bytes()[:200])
    with FakeServer() as server:
        result = evaluate(ds, "openai:fake", tmp_path / "r", base_url=server.url, **FAST)
    by_id = {r.item_id: r for r in result.records()}
    assert len(by_id) == len(items)
    for it in items:
        rec = by_id[it.id]
        if it.images[0] in images[:2]:
            assert rec.status == "failed" and "image unreadable" in rec.error, rec
        else:
            assert rec.status == "ok"
