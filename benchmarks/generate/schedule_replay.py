"""Replay a suite's measured unit costs on two ideal cores: plan order (the pool's old
``pool.map``) against ``LongestFirst`` (docs/performance.md, round 3).

    PYTHONPATH=src python benchmarks/generate/schedule_replay.py --suite lrr --n 4

runs ``--n`` units per task serially (seed 123), records each unit's process CPU
seconds, then schedules those costs both ways, and over 300 bootstrap redraws of each
task's costs (standing in for other seeds). CPU seconds do not depend on the machine's
load, so the ratios hold on a shared machine where wall-clock scaling does not."""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from perspecta.dataset import generate as g


def unit_costs(suite: str, n: int, seed: int) -> dict[g.Unit, float]:
    costs: dict[g.Unit, float] = {}
    run = g.UnitWorker.run

    def timed(self: g.UnitWorker, unit: g.Unit) -> int:
        start = time.process_time()
        out = run(self, unit)
        costs[unit] = time.process_time() - start
        return out

    g.UnitWorker.run = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="perspecta-replay-") as tmp:
            g.one_rasteriser_thread()
            g.generate_dataset(Path(tmp) / "d", g.GenerationConfig(suites=[suite], n=n, seed=seed), workers=1)
    finally:
        g.UnitWorker.run = run  # type: ignore[method-assign]
    return costs


def plan_makespan(units: list[g.Unit], cost: dict[g.Unit, float], workers: int = 2) -> float:
    free = [0.0] * workers
    for u in units:
        w = free.index(min(free))
        free[w] += cost[u]
    return max(free)


def longest_first_makespan(units: list[g.Unit], cost: dict[g.Unit, float], workers: int = 2) -> float:
    order = g.LongestFirst(units)
    clock = [0.0] * workers
    running: list[tuple[g.Unit, float] | None] = [None] * workers
    while order or any(r is not None for r in running):
        for w in range(workers):
            if running[w] is None and order:
                u = order.pop()
                running[w] = (u, clock[w] + cost[u])
        w = min((w for w in range(workers) if running[w] is not None), key=lambda w: running[w][1])  # type: ignore[index]
        u, end = running[w]  # type: ignore[misc]
        order.record(u, cost[u])
        clock[w], running[w] = end, None
        for o in range(workers):
            if running[o] is None:
                clock[o] = max(clock[o], end)
    return max(clock)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", required=True)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--seed", type=int, default=123)
    args = ap.parse_args()
    cost = unit_costs(args.suite, args.n, args.seed)
    units = g.plan_units(g.GenerationConfig(suites=[args.suite], n=args.n, seed=args.seed))
    total = sum(cost.values())
    p, lf = plan_makespan(units, cost), longest_first_makespan(units, cost)
    print(f"{args.suite}: {len(units)} units, {total:.1f} s CPU; 2 ideal cores: plan order {total / p:.2f}x, "
          f"longest task first {total / lf:.2f}x")
    rnd = random.Random(0)
    by_task: dict[str, list[float]] = {}
    for u, c in cost.items():
        by_task.setdefault(u.task, []).append(c)
    ps, ls = [], []
    for _ in range(300):
        redraw = {u: rnd.choice(by_task[u.task]) for u in units}
        t = sum(redraw.values())
        ps.append(t / plan_makespan(units, redraw))
        ls.append(t / longest_first_makespan(units, redraw))
    print(f"  300 redraws: plan order mean {sum(ps) / len(ps):.3f}x (worst {min(ps):.2f}), "
          f"longest task first mean {sum(ls) / len(ls):.3f}x (worst {min(ls):.2f})")


if __name__ == "__main__":
    main()
