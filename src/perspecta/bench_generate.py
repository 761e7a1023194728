"""``perspecta bench generate``: every registered suite at its default settings, end to end,
beside the raw renderer rendering the same frames in the same process.

Two kinds of figure, because the machine may be shared:

* **CPU shares** (steady under load): a serial run is timed with :mod:`perspecta.timing`,
  which charges the process CPU time of each generic stage (sampling, render passes,
  panorama remap, masks, overlays, PNG encoding, writing) of every unit; the raw
  renderer then renders the anchors' scene once per frame the suite rendered, at the
  same sizes and projections, and "share of raw bound" is that raw CPU over the suite's.
* **Wall rates** (what a user waits for, noisy under load): items/s and images/s of
  ``perspecta generate`` in a fresh process with 1 and 2 local workers, start-up included
  (so use enough ``--units`` that start-up is small beside the work).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from perspecta import timing

#: Stages in table order; whatever else a run spends (start-up, final assembly) is "other".
STAGES = ("sample", "visibility", "task", "render.setup", "render.color", "render.ids", "panorama.remap",
          "masks", "overlay", "png.encode", "write", "check")


@dataclass
class SuiteRun:
    suite: str
    items: int = 0
    images: int = 0
    cpu_s: float = 0.0  # process CPU of the serial run
    wall_s: dict[int, float] = field(default_factory=dict)  # workers -> wall seconds of the command
    units_s: dict[int, float] = field(default_factory=dict)  # workers -> wall seconds of its units' phase
    cli_cpu_s: dict[int, float] = field(default_factory=dict)  # workers -> CPU of the command, workers included
    stages: Counter[str] = field(default_factory=Counter)
    renders: Counter[tuple[int, int, str]] = field(default_factory=Counter)
    raw_cpu_s: float = 0.0  # raw renderer CPU for the same frames, on the anchors' scene
    own_frame_cpu_s: float = 0.0  # raw renderer CPU per colour frame of the suite's own scenes (warm)

    @property
    def n_renders(self) -> int:
        return sum(self.renders.values())

    def scaling(self, phase: str = "units") -> float | None:
        """Wall(1 worker) / wall(2 workers) of the units' phase or the whole command."""
        walls = self.units_s if phase == "units" else self.wall_s
        return walls[1] / walls[2] if 1 in walls and 2 in walls else None

    def cpu_ratio(self) -> float | None:
        """CPU of the 2-worker command over the 1-worker one (start-up, duplicated work)."""
        c = self.cli_cpu_s
        return c[2] / c[1] if 1 in c and 2 in c and c[1] > 0 else None

    @property
    def bound_cpu_s(self) -> float:
        """The raw-render bound for the suite's own images: each saved image rendered once,
        at the mean warm cost of the suite's own colour frames. Rejected renders, mask-only
        renders and everything that is not rendering are the overhead."""
        return self.own_frame_cpu_s * self.images

    def share_of_bound(self, workers: int = 2, phase: str = "units") -> float | None:
        """The raw-render bound on ``workers`` cores (its serial CPU / workers) over the
        suite's wall time with ``workers`` workers."""
        walls = self.units_s if phase == "units" else self.wall_s
        return self.bound_cpu_s / workers / walls[workers] if workers in walls else None

    @property
    def cpu_share(self) -> float:
        """The bound's CPU over the serial run's CPU (steadier than wall on a shared machine)."""
        return self.bound_cpu_s / self.cpu_s if self.cpu_s else 0.0


def _generate(suite: str, units: int, workers: int, seed: int,
              tasks: list[str] | None = None) -> tuple[float, float, dict]:
    """(wall s, process CPU s, manifest) of one fresh generation of ``suite``."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    config = GenerationConfig(suites=[suite], n=units, seed=seed, tasks=tasks)
    with tempfile.TemporaryDirectory(prefix="perspecta-bench-gen-") as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        manifest = generate_dataset(Path(tmp) / "d", config, workers=workers)
        return time.perf_counter() - wall, time.process_time() - cpu, manifest


def _cli_wall(suite: str, units: int, workers: int, seed: int) -> tuple[float, float, float]:
    """Wall seconds of ``perspecta generate`` in a fresh process: (the whole command, what a
    user waits for: interpreter start, imports, final assembly included; its units' phase:
    from the first unit's dispatch to the last one's end, the pool's start-up and shutdown
    included). Interpreter start, imports and assembly are serial and the same for any
    worker count, so the units' phase is what ``--workers`` can speed up. Third: the CPU
    seconds of the command and its pool workers, which load on the machine does not
    inflate: more CPU with 2 workers than with 1 is work the pool adds."""
    import os
    import resource
    import subprocess
    import sys

    with tempfile.TemporaryDirectory(prefix="perspecta-bench-gen-") as tmp:
        marks = Path(tmp) / "marks.txt"
        cmd = [sys.executable, "-m", "perspecta.cli", "generate", "--suite", suite, "--n", str(units),
               "--seed", str(seed), "--workers", str(workers), "--out", str(Path(tmp) / "d")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, timing.WALL_MARKS_ENV: str(marks)})
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # descendants reaped: the pool's workers too
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[2:])} failed: {done.stderr.strip()[-300:]}")
        stamps = dict(line.split() for line in marks.read_text(encoding="utf-8").splitlines())
        return wall, float(stamps["units.end"]) - float(stamps["units.start"]), cpu


def _parse_renders(counts: Counter[str]) -> Counter[tuple[int, int, str]]:
    out: Counter[tuple[int, int, str]] = Counter()
    for key, n in counts.items():
        if key.startswith("render "):  # "render WxH projection[ ids]"
            size, projection = key.split(maxsplit=2)[1:]
            w, h = size.split("x")
            out[(int(w), int(h), projection)] += n
    return out


def own_frame_cpu(frames: list[tuple[object, object, bool]], repeats: int, most: int = 40) -> float:
    """Mean process CPU seconds of one colour render of the suite's own (scene, camera)
    frames on a fresh raw renderer, each rendered once untimed first (uploads, targets),
    then ``repeats`` times; at most ``most`` frames, evenly spread over the run."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    colour = [(scene, camera) for scene, camera, color in frames if color]
    if not colour:
        return 0.0
    chosen = colour[:: max(1, -(-len(colour) // most))]
    renderer = get_renderer("gl", library=AssetLibrary.default())
    total = 0.0
    try:
        for scene, camera in chosen:
            renderer.render(scene, camera)  # warm-up
            start = time.process_time()
            for _ in range(repeats):
                renderer.render(scene, camera)
            total += (time.process_time() - start) / repeats
    finally:
        renderer.close()
    return total / len(chosen)


def raw_render_cpu(frames: Counter[tuple[int, int, str]], repeats: int) -> float:
    """Process CPU seconds the raw renderer needs for ``frames`` (size, projection -> count;
    a projection ending in " ids" is a mask-only render), each timed on the anchors' scene
    (:func:`perspecta.bench.bench_scene`) ``repeats`` times."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.bench import bench_scene, panorama_scene
    from perspecta.render.base import get_renderer

    library = AssetLibrary.default()
    renderer = get_renderer("gl", library=library)
    total = 0.0
    try:
        for (w, h, kind), n in sorted(frames.items()):
            projection, color = kind.split()[0], not kind.endswith(" ids")
            scene = panorama_scene(library) if projection == "equirect" else bench_scene(library, w)
            camera = replace(scene.cameras[0], width=w, height=h)
            renderer.render(scene, camera, color=color)  # warm-up: targets, uploads
            start = time.process_time()
            for _ in range(repeats):
                renderer.render(scene, camera, color=color)
            total += n * (time.process_time() - start) / repeats
    finally:
        renderer.close()
    return total


def measure_suite(suite: str, units: int, *, workers: tuple[int, ...] = (1, 2), repeats: int = 3,
                  seed: int = 123) -> SuiteRun:
    """One suite: a timed serial run, then the other worker counts, then the raw renders."""
    from perspecta.suites import registry

    run = SuiteRun(suite)
    # one unit first, untimed: the process's one-off costs (lazy imports, asset index)
    # belong to no suite, and the 2-worker processes pay theirs inside their wall time anyway
    _generate(suite, 1, 1, seed + 1, tasks=[registry.tasks(suite)[0].key])
    with timing.collect() as tally:
        wall, cpu, manifest = _generate(suite, units, 1, seed)
    run.cpu_s = cpu
    run.items, run.images = manifest["counts"]["items"], manifest["counts"]["images"]
    run.stages = Counter(tally.seconds)
    run.renders = _parse_renders(tally.counts)
    for w in workers:
        run.wall_s[w], run.units_s[w], run.cli_cpu_s[w] = _cli_wall(suite, units, w, seed)
    run.raw_cpu_s = raw_render_cpu(run.renders, repeats)
    run.own_frame_cpu_s = own_frame_cpu(tally.notes.get("frames", []), max(1, repeats // 2))
    return run


def measure_all(units: int, *, suites: list[str] | None = None, workers: tuple[int, ...] = (1, 2),
                repeats: int = 3, say=None) -> list[SuiteRun]:
    from perspecta.dataset.generate import one_rasteriser_thread
    from perspecta.suites import registry

    one_rasteriser_thread()  # the same one-thread renderer as every generation worker
    runs = []
    for suite in suites or registry.suites():
        if say:
            say(f"bench generate: {suite} ...")
        runs.append(measure_suite(suite, units, workers=workers, repeats=repeats))
    return runs


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _times(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def format_summary(runs: list[SuiteRun]) -> str:
    """One line per suite with the two figures issue 21 asks for, from this one run."""
    lines = ["Summary (targets: scaling 1→2 ≥ 1.8×, share of the raw-render bound on 2 workers ≥ 60%; "
             "units' phase, and the whole command in brackets):", ""]
    for r in runs:
        lines.append(f"- {r.suite}: scaling 1→2 {_times(r.scaling('units'))} ({_times(r.scaling('command'))}); "
                     f"share of bound on 2 workers {_pct(r.share_of_bound(2, 'units'))} "
                     f"({_pct(r.share_of_bound(2, 'command'))}); CPU share, serial {r.cpu_share:.0%}; "
                     f"CPU of the 2-worker command / 1-worker {_times(r.cpu_ratio())}")
    return "\n".join(lines)


def format_tables(runs: list[SuiteRun], units: int) -> str:
    workers = sorted({w for r in runs for w in r.wall_s})
    head = " | ".join(f"{w}w items/s | {w}w images/s" for w in workers)
    lines = [format_summary(runs), "",
             f"Units per task: {units}; default settings; wall rates are `perspecta generate` in a fresh "
             "process, start-up included (interpreter, imports, worker start-up, GL context, final assembly). "
             "The units' phase runs from the first unit's dispatch to the last one's end (pool start-up and "
             "shutdown included). The raw-render bound is each saved image rendered once at the mean warm "
             "cost of the suite's own colour frames (re-rendered after the serial run); on N workers, that "
             "CPU / N. The last column is the older, looser figure: the anchors' scene rendered for every "
             "frame the suite rendered (rejected and mask-only renders included), over the serial CPU.", "",
             f"| suite | items | images | renders | {head} | scaling 1→2 (units / command) | share of bound, "
             "2w (units / command) | CPU s/item | raw CPU per own frame | bound CPU | CPU share, serial | "
             "anchors' scene, all frames |",
             "|---|---:|---:|---:|" + "---:|---:|" * len(workers) + "---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        rates = " | ".join(f"{r.items / r.wall_s[w]:.2f} | {r.images / r.wall_s[w]:.2f}" for w in workers)
        lines.append(f"| {r.suite} | {r.items} | {r.images} | {r.n_renders} | {rates} | "
                     f"{_times(r.scaling('units'))} / {_times(r.scaling('command'))} | "
                     f"{_pct(r.share_of_bound(2, 'units'))} / {_pct(r.share_of_bound(2, 'command'))} | "
                     f"{r.cpu_s / max(r.items, 1):.3f} | {r.own_frame_cpu_s * 1000:.0f} ms | {r.bound_cpu_s:.1f} s | "
                     f"{r.cpu_share:.0%} | {r.raw_cpu_s / r.cpu_s:.0%} |")
    lines += ["", "Where the CPU of the serial run goes (share of its process CPU; stages are exclusive):", "",
              "| suite | " + " | ".join(STAGES) + " | other |", "|---|" + "---:|" * (len(STAGES) + 1)]
    for r in runs:
        other = r.cpu_s - sum(r.stages.values())
        cells = [f"{r.stages.get(s, 0.0) / r.cpu_s:.0%}" for s in STAGES] + [f"{other / r.cpu_s:.0%}"]
        lines.append(f"| {r.suite} | " + " | ".join(cells) + " |")
    lines += ["", "Frames rendered (size, projection: count):", ""]
    for r in runs:
        frames = ", ".join(f"{w}×{h} {p}: {n}" for (w, h, p), n in sorted(r.renders.items()))
        lines.append(f"- {r.suite}: {frames} ({r.n_renders / max(r.images, 1):.2f} renders per saved image)")
    return "\n".join(lines)


def run_generate_bench(units: int = 4, *, suites: list[str] | None = None, repeats: int = 3, say=None) -> str:
    from perspecta.bench import machine_description

    runs = measure_all(units, suites=suites, repeats=repeats, say=say)
    return f"Machine: {machine_description()}\n\n" + format_tables(runs, units)
