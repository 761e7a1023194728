"""``perspecta bench harness``: client overhead of our evaluation harness vs two peers.

What is measured, and why this way:

* A **zero-latency OpenAI-compatible server** (below: a plain asyncio HTTP/1.1 server,
  no framework) runs in its own process pinned to one core and answers every chat
  completion at once. With the model taken out, what is left is the client: reading
  items, encoding images, building JSON, HTTP, logging.
* Each client (ours, lmms-eval's ``async_openai``, inspect_ai's ``openai-api``) runs in a
  **child process pinned to the other core**, on the same items, against the same
  server, in the same run. The child reports its own CPU time (``getrusage``, self +
  children) split at the point where imports and set-up are done, so "CPU per item" is
  the evaluation itself and start-up is reported separately.
* **req/s** is taken from the server's clock: the window between the first and the
  last request of a run, so no client's start-up or shutdown dilutes it. The server
  also counts requests and images received, which proves each client really sent all
  items with their images.

The peers live in their own venvs (``benchmarks/harness/setup_peers.sh``); a peer whose
venv is missing is skipped with a message, never faked.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

from perspecta.bench import machine_description
from perspecta.suites.registry import bench_task

PEERS = ("lmms-eval", "inspect-ai")
DEFAULT_CONCURRENCY = (1, 16, 64)
SERVER_ANSWER = "A"

# =========================================================================== server


@dataclass
class ServerStats:
    """What the server saw since the last reset (read by the benchmark via GET /_stats)."""

    requests: int = 0  # chat completions answered
    images: int = 0  # image parts carried as data: URLs
    bad: int = 0  # requests answered with an error (malformed body, unknown path)
    first: float | None = None  # time.time() of the first completion
    last: float | None = None

    def record(self, n_images: int) -> None:
        now = time.time()
        if self.first is None:
            self.first = now
        self.last = now
        self.requests += 1
        self.images += n_images


def _count_images(body: dict[str, Any]) -> int:
    """Image parts with an inline data URL, across all messages (the protocol's real shape)."""
    n = 0
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = part.get("image_url", {})
                    url = url.get("url", "") if isinstance(url, dict) else url
                    if isinstance(url, str) and url.startswith("data:image/"):
                        n += 1
    return n


def _completion(body: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-bench-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "bench"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": SERVER_ANSWER},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
    }


def _sse(body: dict[str, Any], n: int) -> bytes:
    """The same answer as a server-sent-event stream, for clients that ask for ``stream``."""
    base = {"id": f"chatcmpl-bench-{n}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "bench")}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": SERVER_ANSWER},
                              "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


class _HTTP(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, Content-Length and chunked request bodies; nothing else is needed."""

    def __init__(self, stats: ServerStats) -> None:
        self.stats = stats
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while self.transport is not None and not self.transport.is_closing():
            parsed = self._parse()
            if parsed is None:
                return
            self._handle(*parsed)

    def _parse(self) -> tuple[str, str, dict[str, str], bytes] | None:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        method, target, _ = (head[0].split(" ", 2) + ["", ""])[:3]
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        start = end + 4
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body, consumed = self._dechunk(start)
            if body is None:
                return None
        else:
            length = int(headers.get("content-length", "0") or 0)
            if len(self.buf) < start + length:
                return None
            body, consumed = bytes(self.buf[start:start + length]), start + length
        del self.buf[:consumed]
        return method, target.split("?", 1)[0], headers, body

    def _dechunk(self, pos: int) -> tuple[bytes | None, int]:
        out = bytearray()
        while True:
            eol = self.buf.find(b"\r\n", pos)
            if eol < 0:
                return None, 0
            size = int(bytes(self.buf[pos:eol]).split(b";")[0], 16)
            if size == 0:
                trailer_end = self.buf.find(b"\r\n\r\n", eol)
                if trailer_end < 0:
                    return None, 0
                return bytes(out), trailer_end + 4
            if len(self.buf) < eol + 2 + size + 2:
                return None, 0
            out += self.buf[eol + 2:eol + 2 + size]
            pos = eol + 2 + size + 2

    def _send(self, status: str, payload: bytes, ctype: str = "application/json", close: bool = False) -> None:
        assert self.transport is not None
        head = (f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(payload)}\r\n"
                f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n")
        self.transport.write(head.encode("latin-1") + payload)
        if close:
            self.transport.close()

    def _handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> None:
        close = headers.get("connection", "").lower() == "close"
        if method == "POST" and path.endswith("/chat/completions"):
            try:
                body = json.loads(raw)
                problem = None if isinstance(body, dict) and isinstance(body.get("messages"), list) \
                    else "body has no messages list"
            except ValueError as exc:
                problem = str(exc)
            if problem is not None:
                self.stats.bad += 1
                err = {"error": {"message": f"bad request: {problem}", "type": "invalid_request_error"}}
                self._send("400 Bad Request", json.dumps(err).encode(), close=close)
                return
            self.stats.record(_count_images(body))
            if body.get("stream"):
                self._send("200 OK", _sse(body, self.stats.requests), "text/event-stream", close)
            else:
                self._send("200 OK", json.dumps(_completion(body, self.stats.requests)).encode(), close=close)
        elif method == "GET" and path.endswith("/models"):
            data = {"object": "list", "data": [{"id": "bench", "object": "model", "owned_by": "perspecta"}]}
            self._send("200 OK", json.dumps(data).encode(), close=close)
        elif method == "GET" and path == "/_stats":
            self._send("200 OK", json.dumps(asdict(self.stats)).encode(), close=close)
        elif method == "POST" and path == "/_reset":
            self.stats.__init__()  # type: ignore[misc]
            self._send("200 OK", b"{}", close=close)
        else:
            self.stats.bad += 1
            self._send("404 Not Found", b'{"error": {"message": "not found"}}', close=close)


async def serve(port: int = 0, on_ready: Any = None) -> None:
    """Serve on 127.0.0.1 (never another interface) until cancelled; ``on_ready(port)`` once bound."""
    loop = asyncio.get_running_loop()
    stats = ServerStats()
    server = await loop.create_server(lambda: _HTTP(stats), "127.0.0.1", port, backlog=1024)
    if on_ready is not None:
        on_ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def _pin(cpu: int | None) -> None:
    if cpu is not None and hasattr(os, "sched_setaffinity") and cpu in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {cpu})


class ServerProcess:
    """The zero-latency server in its own process (optionally pinned to ``cpu``)."""

    def __init__(self, cpu: int | None = None, startup_timeout: float = 20.0) -> None:
        cmd = [sys.executable, "-m", "perspecta.bench_harness", "serve"]
        if cpu is not None:
            cmd += ["--cpu", str(cpu)]
        env = dict(os.environ, PYTHONPATH=_src_path())
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "port N", printed once bound
        if not line.startswith("port "):
            self.close()
            raise RuntimeError(f"benchmark server did not start (said {line!r})")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _call(self, method: str, path: str) -> dict[str, Any]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                     data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def stats(self) -> ServerStats:
        return ServerStats(**self._call("GET", "/_stats"))

    def reset(self) -> None:
        self._call("POST", "/_reset")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _src_path() -> str:
    """PYTHONPATH for our own children: this package's parent, before whatever was there."""
    here = str(Path(__file__).resolve().parents[1])
    rest = os.environ.get("PYTHONPATH", "")
    return here + (os.pathsep + rest if rest else "")


# =========================================================================== measurement


def cpu_seconds() -> float:
    """User + system CPU of this process and its waited-for children (threads included)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


@dataclass
class RunResult:
    """One client at one concurrency. ``error`` set = the run did not complete (the figures are not used)."""

    client: str
    concurrency: int
    n_items: int
    requests: int = 0
    images: int = 0
    server_rps: float = 0.0
    run_cpu_s: float = 0.0  # client CPU after start-up (the evaluation itself)
    run_wall_s: float = 0.0
    startup_cpu_s: float = 0.0
    startup_wall_s: float = 0.0
    total_wall_s: float = 0.0  # spawn to exit, as a user waits
    total_cpu_s: float = 0.0  # the child and its waited-for descendants, spawn to exit (os.wait4)
    error: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_ms_per_item(self) -> float:
        return 1000.0 * self.run_cpu_s / self.n_items if self.n_items else float("nan")


def _wait_with_usage(proc: subprocess.Popen, timeout: float) -> tuple[int | None, Any, bytes]:
    """Wait for ``proc`` with ``os.wait4`` (its rusage covers the child and the descendants it
    waited for); kill it after ``timeout``. Returns (exit code or None if killed, rusage, output)."""
    assert proc.stdout is not None
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and anything it started (start_new_session)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        _, raw, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(raw)  # reaped here; keep Popen from waiting again
    reader.join()
    return (None if timed_out.is_set() else proc.returncode), usage, b"".join(out)


def run_client(client: str, cmd: list[str], *, concurrency: int, n_items: int, server: ServerProcess,
               cpu: int | None, env: dict[str, str] | None = None, timeout: float = 1800.0,
               n_images: int | None = None) -> RunResult:
    """Spawn one client driver, wait for it, and combine its own report with the server's counts.

    The driver protocol (ours and the peers' scripts in ``benchmarks/harness``): it is given
    ``--result PATH`` and writes there a JSON object with ``startup_cpu_s``, ``startup_wall_s``,
    ``run_cpu_s``, ``run_wall_s`` (from :func:`cpu_seconds` / ``time.perf_counter``).
    ``n_images`` = image parts the items carry in all (default one per item); the server
    must have received at least that many, and ``n_items`` requests.
    """
    n_images = n_items if n_images is None else n_images
    result = RunResult(client=client, concurrency=concurrency, n_items=n_items)
    server.reset()
    with tempfile.TemporaryDirectory(prefix="perspecta-bench-") as tmp:
        out = Path(tmp) / "result.json"
        full = cmd + ["--result", str(out), "--work", tmp]
        start = time.perf_counter()
        proc = subprocess.Popen(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp,
                                start_new_session=True)  # its own process group: a timeout ends all of it
        if cpu is not None and cpu in os.sched_getaffinity(0):
            os.sched_setaffinity(proc.pid, {cpu})  # before its interpreter is up; threads it starts inherit
        status, usage, log = _wait_with_usage(proc, timeout)
        result.total_wall_s = time.perf_counter() - start
        result.total_cpu_s = usage.ru_utime + usage.ru_stime
        if status is None:
            result.error = f"timed out after {timeout:.0f} s"
        tail = log.decode("utf-8", "replace").strip().splitlines()[-15:]
        if result.error is None and status != 0:
            result.error = f"exit code {status}: " + " | ".join(tail[-5:])
        if result.error is None:
            try:
                own = json.loads(out.read_text())
                for key in ("startup_cpu_s", "startup_wall_s", "run_cpu_s", "run_wall_s"):
                    setattr(result, key, float(own[key]))
                result.notes = {k: v for k, v in own.items() if not k.endswith("_s")}
            except (OSError, ValueError, KeyError) as exc:
                result.error = f"driver wrote no usable result ({exc}): " + " | ".join(tail[-5:])
    stats = server.stats()
    result.requests, result.images = stats.requests, stats.images
    if stats.first is not None and stats.last is not None and stats.requests > 1:
        result.server_rps = (stats.requests - 1) / max(stats.last - stats.first, 1e-9)
    if result.error is None and (stats.requests < n_items or stats.images < n_images):
        result.error = (f"server saw {stats.requests} requests / {stats.images} images for {n_items} items "
                        f"with {n_images} images (the client did not send every item with its images)")
    return result


# =========================================================================== our client


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def evaluate_ours(dataset: Path, base_url: str, out: Path, concurrency: int) -> dict[str, Any]:
    """One evaluation of ``dataset`` by our harness against ``base_url``, exactly as ``perspecta eval``
    runs it (fresh ``out``, so its response cache is empty and every item is requested)."""
    from perspecta.run import evaluate

    result = evaluate(dataset, "openai:bench", out, base_url=base_url, concurrency=concurrency, progress=False)
    counts = {k: int(v) for k, v in result.counts.items()}
    if counts.get("failed") or counts.get("unparsed") or counts.get("cached") or counts.get("resumed"):
        raise RuntimeError(f"our run did not request and parse every item: {counts}")
    return {"counts": counts}


def _our_client_main(args: list[str]) -> int:
    """Child process: evaluate the dataset with our harness against the server; report CPU/wall."""
    import argparse

    p = argparse.ArgumentParser(prog="perspecta.bench_harness client")
    p.add_argument("--dataset", required=True)
    p.add_argument("--base-url", required=True)
    p.add_argument("--concurrency", type=int, required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args(args)
    t0, c0 = time.perf_counter(), cpu_seconds()
    for module in ("perspecta.run", "perspecta.models.openai_http"):  # what a real run imports: start-up
        importlib.import_module(module)

    t1, c1 = time.perf_counter(), cpu_seconds()
    notes = evaluate_ours(Path(a.dataset), a.base_url, Path(a.work) / "out", a.concurrency)
    t2, c2 = time.perf_counter(), cpu_seconds()
    _write_json_atomic(Path(a.result), {"startup_cpu_s": c1 - c0, "startup_wall_s": t1 - t0,
                                        "run_cpu_s": c2 - c1, "run_wall_s": t2 - t1, **notes})
    return 0


# =========================================================================== the benchmark


def default_venv_root() -> Path:
    return Path(os.environ.get("PERSPECTA_PEER_VENVS", Path.home() / ".cache" / "perspecta" / "bench-peers"))


def default_drivers_dir() -> Path:
    """``benchmarks/harness`` of the source checkout this module runs from."""
    return Path(__file__).resolve().parents[2] / "benchmarks" / "harness"


def peer_command(peer: str, venv_root: Path, drivers: Path) -> tuple[list[str] | None, str]:
    """(command prefix, "") for a usable peer, or (None, why it is skipped)."""
    venv = venv_root / peer
    python = venv / "bin" / "python"
    script = drivers / f"drive_{peer.replace('-', '_')}.py"
    if not script.is_file():
        return None, f"driver {script} not found (run from a source checkout)"
    if not python.is_file() or not (venv / ".perspecta-req-sha256").is_file():
        return None, (f"no complete venv at {venv}; create it with `bash benchmarks/harness/setup_peers.sh {peer}`")
    return [str(python), str(script)], ""


def ensure_dataset(n_items: int = 1000, seed: int = 0, units: int | None = None, root: Path | None = None) -> Path:
    """The benchmark's items: the first ``n_items`` one-image MCQ items of a DORI dataset with
    ``units`` units per task (default: enough at 10 such items per unit, from its 5 one-image
    tasks x coarse/granular), generated once into the cache and reused by every later run."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    units = units or max(1, -(-n_items // 10))
    root = root or Path(os.environ.get("PERSPECTA_CACHE", Path.home() / ".cache" / "perspecta")) / "bench-harness"
    suite, _task = bench_task()  # the suite whose one-image MCQ items the harness asks
    full = root / f"{suite}-n{units}-seed{seed}"
    config = GenerationConfig(suites=[suite], n=units, seed=seed)
    try:
        generate_dataset(full, config, resume=True)
    except ValueError as e:  # a cache made under another configuration: it is only a cache
        if "different configuration" not in str(e):
            raise
        shutil.rmtree(full)
        shutil.rmtree(full.with_name(f"{full.name}-mcq1-{n_items}"), ignore_errors=True)
        generate_dataset(full, config)
    return select_single_image_mcq(full, root / f"{suite}-n{units}-seed{seed}-mcq1-{n_items}", n_items)


def select_single_image_mcq(src: Path, dst: Path, limit: int) -> Path:
    """A dataset of the first ``limit`` MCQ items of ``src`` that carry exactly one image.

    It shares ``src``'s images and scenes (symlinks) and copies its manifest with a note of
    the selection, written last, so an interrupted selection is redone, never half-used.
    """
    if (dst / "manifest.json").is_file():
        return dst
    lines = [ln for ln in (src / "items.jsonl").read_text(encoding="utf-8").splitlines() if ln.strip()]
    chosen = []
    for line in lines:
        item = json.loads(line)
        if item.get("answer_type") == "mcq" and len(item.get("images", [])) == 1:
            chosen.append(line)
            if len(chosen) == limit:
                break
    if len(chosen) < limit:
        raise ValueError(f"{src} has only {len(chosen)} one-image MCQ items; {limit} requested (generate more units)")
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("images", "scenes.jsonl"):
        link = dst / name
        if not link.exists():
            link.symlink_to((src / name).resolve())
    (dst / "items.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    manifest["selection"] = {"from": str(src), "rule": "first one-image mcq items", "items": limit}
    _write_json_atomic(dst / "manifest.json", manifest)
    return dst


def _dataset_facts(dataset: Path) -> tuple[int, int, int, float]:
    """(items, image parts over all items, distinct images, mean image bytes)."""
    items = [json.loads(line) for line in (dataset / "items.jsonl").read_text().splitlines() if line.strip()]
    images = {p for it in items for p in it["images"]}
    mean = sum((dataset / p).stat().st_size for p in images) / max(len(images), 1)
    return len(items), sum(len(it["images"]) for it in items), len(images), mean


def run_harness_bench(
    concurrency: tuple[int, ...] = DEFAULT_CONCURRENCY,
    n_items: int = 1000,
    seed: int = 0,
    units: int | None = None,
    dataset: Path | None = None,
    peers: tuple[str, ...] = PEERS,
    venv_root: Path | None = None,
    drivers: Path | None = None,
    timeout: float = 1800.0,
    progress: Any = None,
) -> str:
    """Run every client at every concurrency against one zero-latency server; return a Markdown report.

    ``dataset`` = an existing dataset directory used as it is (default: ``n_items`` one-image
    MCQ items of DORI, see :func:`ensure_dataset`). Peers without a venv are skipped with the
    reason in the report.
    """
    say = progress or (lambda msg: None)
    dataset = Path(dataset) if dataset is not None else ensure_dataset(n_items, seed, units)
    n_items, n_parts, n_images, mean_bytes = _dataset_facts(dataset)
    venv_root = Path(venv_root) if venv_root is not None else default_venv_root()
    drivers = Path(drivers) if drivers is not None else default_drivers_dir()
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    server_cpu, client_cpu = (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)

    clients: list[tuple[str, list[str]]] = [("perspecta", [sys.executable, "-m", "perspecta.bench_harness", "client"])]
    skipped: list[str] = []
    for peer in peers:
        cmd, why = peer_command(peer, venv_root, drivers)
        if cmd is None:
            skipped.append(f"{peer}: skipped - {why}")
            say(f"{peer}: skipped - {why}")
        else:
            clients.append((peer, cmd))

    results: list[RunResult] = []
    env = dict(os.environ, PYTHONPATH=_src_path(), TOKENIZERS_PARALLELISM="false")
    with ServerProcess(cpu=server_cpu) as server:
        for conc in concurrency:  # interleaved, so slow drift on a shared machine hits every client alike
            for name, cmd in clients:
                say(f"{name} at concurrency {conc} ...")
                full = cmd + ["--dataset", str(dataset), "--base-url", server.base_url, "--concurrency", str(conc)]
                r = run_client(name, full, concurrency=conc, n_items=n_items, server=server, cpu=client_cpu,
                               env=env, timeout=timeout, n_images=n_parts)
                say(f"  {r.server_rps:.0f} req/s, {r.cpu_ms_per_item:.1f} ms CPU/item" if r.error is None
                    else f"  failed: {r.error}")
                results.append(r)
    pinning = (f"server pinned to CPU {server_cpu}, each client to CPU {client_cpu}" if server_cpu is not None
               else "only one CPU available: server and client share it (no pinning)")
    return format_report(results, skipped=skipped, machine=machine_description(), pinning=pinning,
                         dataset=dataset, n_items=n_items, n_images=n_images, mean_bytes=mean_bytes)


def _ratio(peer: RunResult | None, ours: RunResult | None, attr: str) -> float | None:
    if peer is None or ours is None or peer.error or ours.error:
        return None
    a, b = getattr(peer, attr), getattr(ours, attr)
    return a / b if b > 0 else None


def format_report(results: list[RunResult], *, skipped: list[str], machine: str, pinning: str, dataset: Path,
                  n_items: int, n_images: int, mean_bytes: float) -> str:
    """Markdown: one row per (client, concurrency), then the overhead ratios against ours."""
    method = ("- req/s: server clock, first to last request of the run. CPU/item: the client process's "
              "user+system CPU after start-up, divided by the items. Start-up: imports and set-up before the run. "
              "Total CPU: the client process and its children from spawn to exit (`os.wait4`).")
    header = ("| client | concurrency | req/s | client CPU ms/item | run wall s | start-up s | total wall s "
              "| total CPU s | requests / images seen |")
    lines = [
        "# Harness overhead against a zero-latency OpenAI-compatible server",
        "",
        f"- Machine: {machine}; {pinning}.",
        f"- Items: {n_items} items ({n_images} distinct images, mean {mean_bytes / 1024:.1f} KiB) from `{dataset}`.",
        method,
        "",
        header,
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if r.error:
            lines.append(f"| {r.client} | {r.concurrency} | failed | | | | {r.total_wall_s:.1f} | | "
                         f"{r.requests} / {r.images}: {r.error.replace('|', '/')[:200]} |")
        else:
            lines.append(f"| {r.client} | {r.concurrency} | {r.server_rps:.0f} | {r.cpu_ms_per_item:.2f} | "
                         f"{r.run_wall_s:.1f} | {r.startup_wall_s:.1f} | {r.total_wall_s:.1f} | {r.total_cpu_s:.1f} | "
                         f"{r.requests} / {r.images} |")
    by = {(r.client, r.concurrency): r for r in results}
    peers = sorted({r.client for r in results} - {"perspecta"})
    lowest: float | None = None
    uncompared: list[str] = []  # (peer, concurrency) cells with no ratio: a run failed or is absent
    if peers:
        lines += ["", ("Ratios, peer ÷ perspecta (CPU: how many times more client CPU per item the peer spends; "
                       "req/s: perspecta's throughput over the peer's):"), "",
                  "| peer | concurrency | CPU/item ratio | req/s ratio |", "|---|---:|---:|---:|"]
        for peer in peers:
            for conc in sorted({r.concurrency for r in results}):
                ours, theirs = by.get(("perspecta", conc)), by.get((peer, conc))
                cpu_ratio = _ratio(theirs, ours, "cpu_ms_per_item")
                rps_ratio = _ratio(ours, theirs, "server_rps")
                if cpu_ratio is not None:
                    lowest = cpu_ratio if lowest is None else min(lowest, cpu_ratio)
                else:
                    uncompared.append(f"{peer} at concurrency {conc}")
                lines.append(f"| {peer} | {conc} | {_fmt_ratio(cpu_ratio)} | {_fmt_ratio(rps_ratio)} |")
    lines.append("")
    if lowest is None:
        lines.append("Goal (>= 5x less client CPU per item than every peer): not evaluated - no peer run completed.")
    else:
        # "met" only when every peer was compared at every concurrency: a run that failed has no
        # ratio, and leaving it out of the minimum must not turn into a claim about that peer
        verdict = ("NOT met" if lowest < 5.0 else "met" if not skipped and not uncompared
                   else "met for the comparisons that completed")
        lines.append(f"Goal (>= 5x less client CPU per item than every peer): {verdict}; "
                     f"lowest measured ratio {lowest:.1f}x"
                     + (f"; not compared: {', '.join(uncompared)}" if uncompared else "") + ".")
    for s in skipped:
        lines.append(f"- {s}")
    return "\n".join(lines) + "\n"


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        cpu = int(argv[argv.index("--cpu") + 1]) if "--cpu" in argv else None
        port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
        _pin(cpu)

        def ready(bound: int) -> None:
            print(f"port {bound}", flush=True)

        try:
            asyncio.run(serve(port, ready))
        except KeyboardInterrupt:
            pass
        return 0
    if argv[:1] == ["client"]:
        return _our_client_main(argv[1:])
    if argv[:1] == ["run"]:  # the whole benchmark, as `perspecta bench harness` runs it
        report = run_harness_bench(progress=lambda msg: print(msg, file=sys.stderr, flush=True))
        print(report)
        return 0
    print("usage: python -m perspecta.bench_harness run | serve [--cpu N] [--port P] | client ...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
