"""Benchmark of ``perspecta report`` on synthetic scored records (a figure, not a test).

:func:`run_report_bench` writes N records spread over the four suites and several models
(records shaped like the runner's: metadata, groups and variants, per-record scores)
to a temporary ``results.jsonl``, then builds the report in a child process and reads
the child's wall time, CPU time (wall time on a shared machine overstates the cost)
and peak RSS. It does so at N/4 and N records: peak memory that
barely moves between the two shows the report streams rather than holding records.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

MODELS = tuple(f"openai:model-{k}-{s}b" for k, s in ((1, 7), (1, 72), (2, 8), (2, 32), (3, 4), (3, 13)))
_CHILD = """
import json, resource, sys, time
from pathlib import Path
from perspecta.report.build import build_report
from perspecta.report.context import ReportOptions
t = time.perf_counter()
res = build_report([Path(sys.argv[1])], Path(sys.argv[2]), ReportOptions(examples=0))
u = resource.getrusage(resource.RUSAGE_SELF)
# VmHWM belongs to this process image; ru_maxrss survives exec on Linux, so a child of
# a large parent (e.g. `perspecta bench all` after the scoring benchmark) would report
# the parent's peak instead of its own
try:
    hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    hwm = u.ru_maxrss
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_s": u.ru_utime + u.ru_stime, "records": res.n_records,
                  "peak_rss_mb": hwm / 1024}))
"""


def _templates() -> list[dict[str, Any]]:
    """One record shape per suite family of items (fields the report reads)."""
    dori_vals = {"A": None, "B": [0.0, 15.0], "C": [65.0, 95.0], "D": [135.0, 180.0]}
    return [
        {"suite": "dori", "task": "view_parallelism", "granularity": "granular", "answer_type": "mcq", "n_options": 4,
         "metadata": {"option_values": dori_vals, "answer_value": [0.0, 15.0], "camera_plane_angle": 10.0,
                      "category": "chair", "source": "procedural"}},
        {"suite": "dori", "task": "compound_rotation", "granularity": "granular", "answer_type": "mcq", "n_options": 4,
         "metadata": {"option_values": {"A": [90, 0], "B": [0, 90], "C": [90, 90], "D": [180, 0]},
                      "answer_value": [90, 0], "category": "car", "source": "sh3d"}},
        {"suite": "spin", "task": "relation_transformation", "answer_type": "mcq", "n_options": 2,
         "metadata": {"premise": True}},
        {"suite": "spin", "task": "dynamic_rotation", "answer_type": "mcq", "n_options": 3,
         "metadata": {"domain": "person", "frame_of_reference": "viewer"}},
        {"suite": "pcsr", "task": "counting", "answer_type": "open", "n_options": 0, "metadata": {}},
        {"suite": "lrr", "task": "pos", "answer_type": "yesno", "n_options": 0, "metadata": {}},
    ]


def write_synthetic_results(path: Path, n_records: int, seed: int = 0) -> None:
    """``n_records`` scored-record lines, seeded; SpinBench items come in 4-variant groups."""
    rng = np.random.default_rng(seed)
    templates = _templates()
    variants = ("base", "symmetric", "syntactic", "symmetric+syntactic")
    per_model = max(1, n_records // len(MODELS))
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        for model in MODELS:
            correct = rng.random(per_model) < rng.uniform(0.3, 0.9)
            for i in range(per_model):
                if written >= n_records:
                    break
                t = templates[(i // 4) % len(templates)]
                ok = bool(correct[i])
                labels = ["A", "B", "C", "D"][: max(2, t["n_options"])]
                answer = "yes" if t["answer_type"] == "yesno" else labels[1]
                pred = answer if ok else ("no" if t["answer_type"] == "yesno" else labels[2 % len(labels)])
                rec = {"item_id": f"{t['suite']}/{t['task']}/{i}", "suite": t["suite"], "task": t["task"],
                       "model": model, "answer": answer, "status": "ok", "prediction": pred, "correct": ok,
                       "response": f"Answer: {pred}", "error": None, "subtype": f"{t['task']}_{i % 3}",
                       "granularity": t.get("granularity"), "variant": variants[i % 4] if t["suite"] == "spin" else "base",
                       "group": f"g{i // 4}" if t["suite"] == "spin" else "", "split": "test",
                       "answer_type": t["answer_type"], "n_options": t["n_options"], "prompt_mode": "direct",
                       "repeat": 0, "metadata": t["metadata"], "latency_s": 0.5,
                       "scores": {"dori": {"soft": float(ok)}, "pcsr": {"strict": float(ok), "relaxed": float(ok)},
                                  "lrr": {"paper_rule_correct": float(ok)}}.get(t["suite"], {})}
                f.write(json.dumps(rec) + "\n")
                written += 1


def _measure(results: Path, out: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(results), str(out)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"report benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_report_bench(n_records: int = 1_000_000) -> dict[str, Any]:
    """Seconds and peak RSS (MB) of ``perspecta report`` at ``n_records`` and a quarter of it."""
    if n_records < 8:
        raise ValueError(f"n_records must be at least 8, got {n_records}")
    sizes = sorted({max(8, n_records // 4), n_records})
    out: dict[str, Any] = {"runs": []}
    with tempfile.TemporaryDirectory(prefix="perspecta-report-bench-") as tmp:
        for n in sizes:
            results = Path(tmp) / f"results-{n}.jsonl"
            write_synthetic_results(results, n)
            m = _measure(results, Path(tmp) / f"report-{n}")
            m["file_mb"] = results.stat().st_size / 2**20
            out["runs"].append({"n_records": n, **m})
            results.unlink()
    small, large = out["runs"][0], out["runs"][-1]
    out["records_per_s"] = large["records"] / large["seconds"]
    out["rss_growth_mb"] = large["peak_rss_mb"] - small["peak_rss_mb"]
    return out
