"""Process CPU of one serial generation by stage (the bench's serial run, alone), for
interleaved before/after comparisons on a shared machine:

    PYTHONPATH=<tree>/src python benchmarks/generate/stage_cpu.py SUITE N

A 1-unit-per-task run (seed 99) first warms the process (imports, asset index, GL
context), then ``--n N --seed 123`` runs under :func:`perspecta.timing.collect`."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from perspecta import timing
from perspecta.dataset.generate import GenerationConfig, generate_dataset, one_rasteriser_thread


def main() -> None:
    suite, n = sys.argv[1], int(sys.argv[2])
    one_rasteriser_thread()
    with tempfile.TemporaryDirectory(prefix="perspecta-stages-") as tmp:
        generate_dataset(Path(tmp) / "warm", GenerationConfig(suites=[suite], n=1, seed=99), workers=1)
        start = time.process_time()
        with timing.collect() as tally:
            generate_dataset(Path(tmp) / "d", GenerationConfig(suites=[suite], n=n, seed=123), workers=1)
        cpu = time.process_time() - start
    stages = sorted(tally.seconds.items(), key=lambda kv: -kv[1])
    print(suite, f"cpu {cpu:.2f}", " ".join(f"{k}={v:.2f}({v / cpu:.0%})" for k, v in stages))


if __name__ == "__main__":
    main()
