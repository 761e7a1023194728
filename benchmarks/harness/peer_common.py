"""Shared by the peer drivers (run with a PEER venv's python, so standard library only).

Every driver follows the protocol of ``perspecta.bench_harness.run_client``: it gets
``--dataset --base-url --concurrency --result --work`` and writes to ``--result`` a JSON
object with its start-up and run CPU/wall seconds. Items are read straight from our
``items.jsonl``; the prompt wording is ours and the same for both peers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

T0 = time.perf_counter()  # the driver's start, before the peer is imported


def cpu_seconds() -> float:
    """User + system CPU of this process (all threads) and its waited-for children."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", required=True, type=Path)
    p.add_argument("--base-url", required=True)
    p.add_argument("--concurrency", required=True, type=int)
    p.add_argument("--result", required=True, type=Path)
    p.add_argument("--work", required=True, type=Path)
    return p.parse_args()


def load_items(dataset: Path) -> list[dict[str, Any]]:
    """Our items as plain dicts, with the image paths made absolute."""
    items = []
    with open(dataset / "items.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                item = json.loads(line)
                item["images"] = [str((dataset / p).resolve()) for p in item["images"]]
                items.append(item)
    return items


def prompt_text(item: dict[str, Any]) -> str:
    """The question as our harness sends it, minus the ``<image>`` markers (images go first).

    Our questions already list their options and the reply format, so nothing is added;
    every item used here has its marker(s) before the text, so image-first is the same order.
    """
    return item["question"].replace("<image>", "").strip()


def write_result(path: Path, startup: tuple[float, float], run: tuple[float, float], **notes: Any) -> None:
    """``startup``/``run`` = (cpu seconds, wall seconds); written atomically."""
    data = {"startup_cpu_s": startup[0], "startup_wall_s": startup[1],
            "run_cpu_s": run[0], "run_wall_s": run[1], **notes}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)
