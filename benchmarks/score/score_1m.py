"""`perspecta score` on a synthetic million-record results log: wall seconds and peak RSS.

Usage (from the repository root, the package importable):
    python benchmarks/score/score_1m.py [--records 1000000] [--src DIR ...]

Writes the log once (``perspecta.bench.synthetic_records``: 20 models, every installed
suite's bench shapes) to /tmp, then runs ``python -m perspecta.cli score`` on it as a
child process per ``--src`` (a checkout's ``src`` directory, e.g. an older commit's
worktree, to compare before and after on the same file) and prints one JSON line each:
wall seconds and the child's peak resident memory (``/usr/bin/time``'s maximum RSS).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--src", action="append", default=[], help="src directory to score with (repeatable)")
    ap.add_argument("--log", type=Path, default=None, help="results log (default: /tmp/perspecta-score-<N>.jsonl)")
    args = ap.parse_args()
    log = args.log or Path(f"/tmp/perspecta-score-{args.records}.jsonl")
    if not log.is_file():
        from perspecta.bench import synthetic_records

        t = time.perf_counter()
        synthetic_records(log, args.records)
        print(json.dumps({"wrote": str(log), "records": args.records, "seconds": round(time.perf_counter() - t, 1)}))
    for src in args.src or [str(Path(__file__).resolve().parents[2] / "src")]:
        env = dict(os.environ, PYTHONPATH=src)
        out = log.with_suffix(".summary.json")
        t = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "TIME %e %U %S %M", sys.executable, "-m", "perspecta.cli",
                               "score", str(log), "--json", str(out), "--level", "by_suite"],
                              env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"score failed with {src}: {proc.stderr[-2000:]}")
        _, _elapsed, user, system, max_kb = proc.stderr.strip().splitlines()[-1].split()
        summary = json.loads(out.read_text())
        print(json.dumps({"src": src, "seconds": round(wall, 2), "cpu_s": round(float(user) + float(system), 2),
                          "peak_rss_mb": round(int(max_kb) / 1024, 1), "runs": len(summary["runs"]),
                          "records": sum(r["n"] for r in summary["runs"])}))


if __name__ == "__main__":
    main()
