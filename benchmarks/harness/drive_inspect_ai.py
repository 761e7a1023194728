"""Benchmark driver: our items through inspect_ai's ``openai-api`` provider (run in its own venv).

Configuration is what a user would write: a Task over an in-memory dataset whose
samples carry the question text and the image FILE (inspect reads and encodes it),
``generate()`` and a ``match()`` scorer, run with ``max_connections`` = the concurrency
and the default log settings (logging is part of the client's real cost).
"""

from __future__ import annotations

import os

import peer_common as pc

args = pc.parse_args()
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import match
from inspect_ai.solver import generate

os.environ.setdefault("BENCH_API_KEY", "bench")  # openai-api/<service>/... reads <SERVICE>_API_KEY
startup = (pc.cpu_seconds(), pc.time.perf_counter() - pc.T0)

c0, t0 = pc.cpu_seconds(), pc.time.perf_counter()
items = pc.load_items(args.dataset)
samples = [
    Sample(
        id=item["id"],
        input=[ChatMessageUser(content=[*(ContentImage(image=p) for p in item["images"]),
                                        ContentText(text=pc.prompt_text(item))])],
        target=item["answer"],
    )
    for item in items
]
task = Task(dataset=MemoryDataset(samples, name="perspecta-bench"), solver=generate(), scorer=match())
logs = inspect_eval(task, model="openai-api/bench/bench", model_base_url=args.base_url,
                    max_connections=args.concurrency, log_dir=str(args.work / "logs"), display="none",
                    temperature=0.0, max_tokens=16)
run = (pc.cpu_seconds() - c0, pc.time.perf_counter() - t0)

log = logs[0]
if log.status != "success":
    raise SystemExit(f"inspect_ai run ended with status {log.status}: {log.error}")
done = len(log.samples or [])
log_bytes = sum(f.stat().st_size for f in (args.work / "logs").rglob("*") if f.is_file())
pc.write_result(args.result, startup, run, samples=done, log_bytes=log_bytes)
