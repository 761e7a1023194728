"""`perspecta bench harness` plumbing: the zero-latency server speaks the real protocol and
counts what it receives; the client measurement combines driver, os.wait4 and server
figures; the report computes ratios and skips absent peers. No peer venvs are used."""

from __future__ import annotations

import base64
import http.client
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from perspecta.bench_harness import (
    RunResult,
    ServerProcess,
    cpu_seconds,
    format_report,
    peer_command,
    run_client,
    run_harness_bench,
)

PNG_URL = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()


def _body(n_images: int, **extra) -> bytes:
    parts = [{"type": "image_url", "image_url": {"url": PNG_URL}} for _ in range(n_images)]
    parts.append({"type": "image_url", "image_url": {"url": "https://example.invalid/x.png"}})  # not inline: not counted
    parts.append({"type": "text", "text": "Which way does it face? Reply with a letter."})
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": parts}], **extra}).encode()


@pytest.fixture(scope="module")
def server():
    with ServerProcess() as s:
        yield s


def test_server_speaks_chat_completions_and_counts_inline_images(server):
    server.reset()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/v1/chat/completions", body=_body(2), headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = json.loads(resp.read())
    assert resp.status == 200
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "A"}
    assert data["choices"][0]["finish_reason"] == "stop"

    # same connection (keep-alive), body sent chunked in two pieces
    body = _body(1)
    conn.putrequest("POST", "/v1/chat/completions")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    for piece in (body[:50], body[50:]):
        conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    conn.send(b"0\r\n\r\n")
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["choices"][0]["message"]["content"] == "A"

    conn.request("POST", "/v1/chat/completions", body=b'{"messages": ')  # truncated JSON
    resp = conn.getresponse()
    assert resp.status == 400 and b"bad request" in resp.read()

    conn.request("POST", "/v1/chat/completions", body=_body(1, stream=True))
    resp = conn.getresponse()
    text = resp.read().decode()
    assert resp.getheader("Content-Type") == "text/event-stream"
    assert '"content": "A"' in text and text.endswith("data: [DONE]\n\n")
    conn.close()

    stats = server.stats()
    assert (stats.requests, stats.images, stats.bad) == (3, 2 + 1 + 1, 1)
    assert stats.first is not None and stats.last >= stats.first
    server.reset()
    assert server.stats().requests == 0


def test_cpu_seconds_sees_busy_work():
    c0 = cpu_seconds()
    end = time.process_time() + 0.2  # by CPU clock: the machine may be busy with other work
    while time.process_time() < end:
        pass
    assert cpu_seconds() - c0 >= 0.19


DRIVER = textwrap.dedent('''
    import argparse, http.client, json, resource, sys, time
    p = argparse.ArgumentParser()
    for a in ("--dataset", "--base-url", "--concurrency", "--result", "--work"):
        p.add_argument(a)
    p.add_argument("--requests", type=int)
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--sleep", type=float, default=0.0)
    a = p.parse_args()
    cpu = lambda: sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                      for f in ("ru_utime", "ru_stime"))
    time.sleep(a.sleep)
    if a.exit:
        print("driver failing on purpose"); sys.exit(a.exit)
    c0, t0 = cpu(), time.perf_counter()
    host, port = a.base_url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port))
    for _ in range(a.requests):
        conn.request("POST", "/v1/chat/completions", body=BODY)
        conn.getresponse().read()
    end = time.process_time() + 0.3
    while time.process_time() < end:  # 0.3 s of client CPU the measurement must see
        pass
    json.dump({"startup_cpu_s": c0, "startup_wall_s": 0.0, "run_cpu_s": cpu() - c0,
               "run_wall_s": time.perf_counter() - t0, "sent": a.requests}, open(a.result, "w"))
''')


def _driver(tmp_path: Path, *args: str) -> list[str]:
    script = tmp_path / "driver.py"
    script.write_text(f"BODY = {_body(1)!r}\n" + DRIVER)
    return [sys.executable, str(script), "--dataset", "x", "--base-url", "", "--concurrency", "1", *args]


def _cmd(cmd: list[str], server: ServerProcess) -> list[str]:
    cmd = list(cmd)
    cmd[cmd.index("--base-url") + 1] = server.base_url
    return cmd


def test_run_client_combines_driver_wait4_and_server_figures(server, tmp_path):
    r = run_client("fake", _cmd(_driver(tmp_path, "--requests", "5"), server), concurrency=1, n_items=5,
                   server=server, cpu=None)
    assert r.error is None, r.error
    assert (r.requests, r.images) == (5, 5)
    assert r.run_cpu_s >= 0.25  # the driver's busy loop
    assert r.total_cpu_s >= r.run_cpu_s  # wait4 covers the whole child
    assert r.total_wall_s >= r.run_wall_s > 0
    assert r.server_rps > 0
    assert r.notes == {"sent": 5}
    assert r.cpu_ms_per_item == pytest.approx(1000 * r.run_cpu_s / 5)


def test_run_client_reports_missing_requests_exit_codes_and_timeouts(server, tmp_path):
    short = run_client("fake", _cmd(_driver(tmp_path, "--requests", "3"), server), concurrency=1, n_items=4,
                       server=server, cpu=None)
    assert short.error and "server saw 3 requests / 3 images for 4 items" in short.error

    failed = run_client("fake", _cmd(_driver(tmp_path, "--requests", "1", "--exit", "3"), server), concurrency=1,
                        n_items=1, server=server, cpu=None)
    assert failed.error and failed.error.startswith("exit code 3") and "failing on purpose" in failed.error

    t0 = time.perf_counter()
    slow = run_client("fake", _cmd(_driver(tmp_path, "--requests", "1", "--sleep", "30"), server), concurrency=1,
                      n_items=1, server=server, cpu=None, timeout=1.0)
    assert slow.error == "timed out after 1 s"
    assert time.perf_counter() - t0 < 10


def _res(client: str, conc: int, cpu_ms: float, rps: float, error: str | None = None) -> RunResult:
    return RunResult(client=client, concurrency=conc, n_items=1000, requests=1000, images=1000, server_rps=rps,
                     run_cpu_s=cpu_ms, run_wall_s=1.0, error=error)


def _report(results: list[RunResult], skipped: list[str] | None = None) -> str:
    return format_report(results, skipped=skipped or [], machine="test box", pinning="none", dataset=Path("d"),
                         n_items=1000, n_images=500, mean_bytes=8192)


def test_report_ratios_and_goal_verdict():
    met = _report([_res("perspecta", 1, 2.0, 800), _res("lmms-eval", 1, 40.0, 40), _res("inspect-ai", 1, 25.0, 32)])
    assert "| lmms-eval | 1 | 20.0x | 20.0x |" in met  # 40 / 2 ms; 800 / 40 req/s
    assert "| inspect-ai | 1 | 12.5x | 25.0x |" in met  # 25 / 2 ms; 800 / 32 req/s
    assert "| perspecta | 1 | 800 | 2.00 |" in met
    assert "met; lowest measured ratio 12.5x" in met

    missed = _report([_res("perspecta", 16, 2.0, 800), _res("inspect-ai", 16, 8.0, 100)])
    assert "NOT met; lowest measured ratio 4.0x" in missed

    failed = _report([_res("perspecta", 1, 2.0, 800), _res("lmms-eval", 1, 0.0, 0, error="exit code 1: boom")],
                     skipped=["inspect-ai: skipped - no venv"])
    assert "| lmms-eval | 1 | failed |" in failed and "exit code 1: boom" in failed
    assert "| lmms-eval | 1 | - | - |" in failed
    assert "not evaluated" in failed and "- inspect-ai: skipped - no venv" in failed

    # a peer that failed at one concurrency was never compared there: no plain "met"
    partial = _report([_res("perspecta", 1, 2.0, 800), _res("lmms-eval", 1, 40.0, 40),
                       _res("perspecta", 16, 2.0, 800), _res("lmms-eval", 16, 0.0, 0, error="timed out after 600 s")])
    assert "met for the comparisons that completed; lowest measured ratio 20.0x; " \
           "not compared: lmms-eval at concurrency 16." in partial


def test_absent_peer_venv_is_skipped_with_the_setup_command(tmp_path):
    drivers = Path(__file__).resolve().parents[1] / "benchmarks" / "harness"
    cmd, why = peer_command("lmms-eval", tmp_path / "venvs", drivers)
    assert cmd is None and "setup_peers.sh lmms-eval" in why
    half = tmp_path / "venvs" / "inspect-ai" / "bin"  # a venv without the install stamp is not used
    half.mkdir(parents=True)
    (half / "python").write_text("")
    cmd, why = peer_command("inspect-ai", tmp_path / "venvs", drivers)
    assert cmd is None and "no complete venv" in why


def _tiny_dataset(root: Path) -> Path:
    """Five schema-valid items: four MCQ with one PNG, one MCQ with two (which selection drops)."""
    from PIL import Image

    from perspecta.dataset.item import Item, letter_options
    from perspecta.dataset.schema import check_item

    (root / "images").mkdir(parents=True)
    lines = []
    for i in range(5):
        n_img = 2 if i == 2 else 1
        paths = []
        for k in range(n_img):
            rel = f"images/{i:06d}_{k}.png"
            Image.new("RGB", (256, 256), (40 * i, 90, 200 - 30 * k)).save(root / rel)
            paths.append(rel)
        item = Item(id=f"dori/view_parallelism/base/{i:06d}-coarse", suite="dori", task="view_parallelism",
                    question="<image>" * n_img + "\nWhich way does Object A face?\nA. Toward\nB. Away",
                    images=paths, answer_type="mcq", answer="B", options=letter_options(["Toward", "Away"]))
        assert check_item(item.to_dict()) == []
        lines.append(json.dumps(item.to_dict()))
    (root / "items.jsonl").write_text("\n".join(lines) + "\n")
    (root / "scenes.jsonl").write_text("")
    (root / "manifest.json").write_text(json.dumps({"name": "tiny"}))
    return root


def test_selection_keeps_the_first_one_image_mcq_items(tmp_path):
    from perspecta.bench_harness import select_single_image_mcq

    src = _tiny_dataset(tmp_path / "src")
    dst = select_single_image_mcq(src, tmp_path / "sel", 3)
    ids = [json.loads(line)["id"].split("/")[-1] for line in (dst / "items.jsonl").read_text().splitlines()]
    assert ids == ["000000-coarse", "000001-coarse", "000003-coarse"]  # 000002 has two images
    assert (dst / "images" / "000003_0.png").is_file()
    assert json.loads((dst / "manifest.json").read_text())["selection"]["items"] == 3
    with pytest.raises(ValueError, match="only 4 one-image MCQ items; 5 requested"):
        select_single_image_mcq(src, tmp_path / "too-many", 5)


def test_end_to_end_on_a_tiny_dataset_without_peers(tmp_path):
    ds = _tiny_dataset(tmp_path / "ds")
    report = run_harness_bench(concurrency=(1, 4), dataset=ds, venv_root=tmp_path / "no-venvs", timeout=120)
    assert "Items: 5 items (6 distinct images" in report
    for conc in (1, 4):
        row = next(line for line in report.splitlines() if line.startswith(f"| perspecta | {conc} |"))
        assert "failed" not in row and row.endswith("| 5 / 6 |")
    assert "lmms-eval: skipped" in report and "inspect-ai: skipped" in report
    assert "not evaluated" in report
