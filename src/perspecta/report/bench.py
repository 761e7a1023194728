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


def write_synthetic_results(path: Path, n_records: int, seed: int = 0) -> None:
    """``n_records`` scored-record lines, seeded, cycling through every installed suite's
    ``bench_records`` shapes (variant groups where a shape has them)."""
    from perspecta.bench import synthetic_record, synthetic_shapes

    rng = np.random.default_rng(seed)
    shapes = synthetic_shapes()
    per_model = max(1, n_records // len(MODELS))
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        for model in MODELS:
            correct = rng.random(per_model) < rng.uniform(0.3, 0.9)
            for i in range(per_model):
                if written >= n_records:
                    break
                suite, shape = shapes[(i // 4) % len(shapes)]
                f.write(json.dumps(synthetic_record(suite, shape, i, model, bool(correct[i]), i // 4)) + "\n")
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
