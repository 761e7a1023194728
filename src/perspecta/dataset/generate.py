"""Turn (suites, n, seed) into a dataset directory, serially or across processes.

Work is cut into *units* — (suite, task, index) — each with its own derived seed
(:mod:`perspecta.suites.context`). A unit renders its images, then writes one part
file atomically; a unit whose part file exists is finished, which is all ``--resume``
needs. Only when every unit is done are ``items.jsonl``, ``scenes.jsonl`` and finally
``manifest.json`` assembled (each by temp file + rename), in unit order, so N workers
produce exactly the bytes of a serial run and an interrupted run never looks complete.

Files go through a :mod:`perspecta.scale.store` (a local directory or an fsspec URL),
and units run on an *executor*: ``local`` (this process or a process pool) or ``ray``
(:mod:`perspecta.scale.ray_generate`, shards of units as Ray tasks). Every executor
runs units through the same :class:`UnitWorker`, so they all write the same bytes.
"""

from __future__ import annotations

import json
import os
import shlex
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import multiprocessing as mp

import perspecta
from perspecta import timing
from perspecta.dataset.io import sha256_file
from perspecta.dataset.schema import check_item
from perspecta.scale.store import Store, open_store

PARTS_DIR = ".parts"
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Unit:
    suite: str
    task: str
    index: int

    @property
    def part_rel(self) -> str:
        return f"{PARTS_DIR}/{self.suite}/{self.task}/{self.index:06d}.json"


@dataclass
class GenerationConfig:
    """Everything that determines a dataset's bytes (and is stored in its manifest)."""

    suites: list[str]
    n: int = 20
    seed: int = 0
    renderer: str = "gl"
    image_size: int | None = None  # None: each suite's own default (DORI/Spin 256², LRR 512², PCSR 1024x512)
    suite_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    splits: dict[str, float] = field(default_factory=lambda: {"test": 1.0})
    tasks: list[str] | None = None  # "suite/task" keys to keep; None = every task of the suites
    difficulty: str = "standard"  # preset of every task's difficulty knobs
    sweep: dict[str, Any] | None = None  # {"knob": name, "values": [...]}: span one knob evenly
    with_depth: bool = False  # store each view's ground-truth depth beside it (dataset.depth)

    def __post_init__(self) -> None:
        from perspecta.suites.context import DIFFICULTIES

        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"--difficulty must be one of {', '.join(DIFFICULTIES)}, got {self.difficulty!r}")
        if self.n < 1:
            raise ValueError(f"--n must be at least 1, got {self.n}")
        if self.seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {self.seed}")
        if self.image_size is not None and not 16 <= self.image_size <= 4096:
            raise ValueError(f"--image-size must be between 16 and 4096, got {self.image_size}")
        if not self.suites:
            raise ValueError("no suites to generate")
        bad = set(self.splits) - {"train", "val", "test"}
        if bad or not self.splits or any(v < 0 for v in self.splits.values()):
            raise ValueError(f"--split takes train/val/test with non-negative fractions, got {self.splits}")
        if abs(sum(self.splits.values()) - 1.0) > 1e-6:
            raise ValueError(f"--split fractions must sum to 1, got {format_splits(self.splits)} "
                             f"(sum {sum(self.splits.values()):g}); e.g. train=0.5,test=0.5")

    def task_config(self, suite: str) -> dict[str, Any]:
        sized = {} if self.image_size is None else {"image_size": self.image_size}
        return {**sized, "splits": self.splits, "difficulty": self.difficulty, "sweep": self.sweep,
                **self.suite_config.get(suite, {})}


def plan_units(config: GenerationConfig) -> list[Unit]:
    from perspecta.suites import registry

    chosen = [t for suite in config.suites for t in registry.tasks(suite)]
    if config.tasks is not None:
        unknown = sorted(set(config.tasks) - {t.key for t in chosen})
        if unknown:
            raise KeyError(f"unknown task(s) {', '.join(unknown)}; see `perspecta suites`")
        chosen = [t for t in chosen if t.key in config.tasks]
    return [Unit(t.suite, t.name, i) for t in chosen for i in range(config.n)]


class UnitWorker:
    """Per-process state: one asset library and one renderer, reused for every unit.

    This is the one code path that runs a unit, whatever the executor: render into the
    store's stage, check every item, then commit the unit's part file to the store."""

    def __init__(self, store: Store, config: GenerationConfig) -> None:
        from perspecta.assets.library import AssetLibrary
        from perspecta.render.base import get_renderer

        self.store = store
        self.stage = store.new_stage()
        self.config = config
        self.library = AssetLibrary.default()
        self.renderer = get_renderer(config.renderer, library=self.library)

    def close(self) -> None:
        self.renderer.close()
        self.store.drop_stage(self.stage)

    def run(self, unit: Unit) -> int:
        from perspecta.suites import registry
        from perspecta.suites.context import TaskContext

        ctx = TaskContext(
            suite=unit.suite,
            task=unit.task,
            index=unit.index,
            root_seed=self.config.seed,
            library=self.library,
            renderer=self.renderer,
            out_dir=self.stage,
            config=self.config.task_config(unit.suite),
            with_depth=self.config.with_depth,
        )
        with timing.stage("task"):  # what no finer stage claims: task logic, rejection loops
            try:
                items = registry.get_task(unit.suite, unit.task).generate(ctx)
            except Exception as e:
                raise UnitFailed(unit, e) from e
        mark = timing.start()
        records = [it.to_dict() for it in items]
        for rec in records:
            if ctx.knobs:  # the knobs this unit read; an item's own entries win
                rec["metadata"]["knobs"] = {**ctx.knobs, **rec["metadata"].get("knobs", {})}
            errors = check_item(rec)
            if errors:
                raise ValueError(f"task {unit.suite}/{unit.task} made an invalid item {rec.get('id')}: {errors}")
        mark = timing.stop(mark, "check")
        part = {
            "items": records,
            "scenes": [s.to_dict() for s in ctx.scenes],
            "images": ctx.images,
            # hashed here, while the PNGs are local and hot, so assembly never re-reads them
            "sha256": {rel: sha256_file(self.stage / rel) for rel in [*ctx.images, *ctx.depths.values()]},
        }
        if self.config.with_depth:
            part["depth"], part["no_depth"] = ctx.depths, ctx.no_depth
        self.store.commit_unit(unit.part_rel, part, self.stage)
        timing.stop(mark, "write")
        return len(records)


class UnitFailed(RuntimeError):
    """A task could not generate one unit (e.g. knob values no sampled scene can satisfy).

    Carries one readable line — which unit, and the task's own reason cut to its first
    line — because the error crosses a process pool and ends on a user's terminal; the
    units finished before it stay in the store, so ``--resume`` continues from there."""

    def __init__(self, unit: Unit | str, cause: BaseException | str = "") -> None:
        if isinstance(unit, str):  # unpickled in the parent: the message is already built
            super().__init__(unit)
            return
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
        if len(reason) > 400:
            reason = reason[:400] + " ..."
        name = type(cause).__name__ if isinstance(cause, BaseException) else "error"
        super().__init__(f"{unit.suite}/{unit.task} unit {unit.index}: {name}: {reason}")


_WORKER: UnitWorker | None = None


def one_rasteriser_thread() -> None:
    """One llvmpipe rasteriser thread per worker, whatever the executor and worker count.

    ``--workers N`` then means N cores: N processes fill them, and extra rasteriser
    threads would only contend. Without this the in-process ``--workers 1`` rendered with
    one thread per core while each pool or Ray worker used one, so 1 -> 2 local workers
    compared two cores with two cores (measured 0.91-1.12x against Ray's 1.94x).
    Mesa reads the variable when a process opens its first GL display, so it must run
    before the worker's first render; a user's own LP_NUM_THREADS wins."""
    os.environ.setdefault("LP_NUM_THREADS", "1")


def _init_worker(store_spec: str, config: GenerationConfig) -> None:
    global _WORKER
    one_rasteriser_thread()
    _WORKER = UnitWorker(open_store(store_spec), config)


def _run_unit(unit: Unit) -> tuple[int, float]:
    """Run one unit in a pool worker: (its item count, the worker's CPU seconds for it)."""
    import time

    assert _WORKER is not None
    start = time.process_time()
    n = _WORKER.run(unit)
    return n, time.process_time() - start


class LongestFirst:
    """The order in which a pool takes units: the costliest task's units first.

    Units of one task cost alike, but tasks differ several-fold (an LRR unit renders 1 to
    12 frames), and in plan order a suite's last task ran at the end while the other
    worker had nothing left (LRR scaled 1.56x on 2 workers). So each task's first unit
    goes out first, in plan order, to learn what its units cost (the workers' CPU
    seconds, which load on the machine does not inflate); after that the next unit is
    always from the task with the highest mean cost so far. Short units end the run and
    the workers finish together (longest processing time first). Only the dispatch order
    changes: each unit's seed, and so its bytes, and the assembly order are the plan's."""

    def __init__(self, units: list[Unit]) -> None:
        from collections import deque

        self._queues: dict[tuple[str, str], deque[Unit]] = {}
        for u in units:
            self._queues.setdefault((u.suite, u.task), deque()).append(u)
        self._cost: dict[tuple[str, str], list[float]] = {}
        self._probes: deque[Unit] = deque(q.popleft() for q in self._queues.values())

    def __bool__(self) -> bool:
        return bool(self._probes) or any(self._queues.values())

    def pop(self) -> Unit:
        if self._probes:
            return self._probes.popleft()
        queued = [k for k, q in self._queues.items() if q]  # plan order breaks ties
        # a task whose probe is still running has no cost yet: treat it as the costliest
        key = max(queued, key=lambda k: sum(self._cost[k]) / len(self._cost[k]) if k in self._cost else float("inf"))
        return self._queues[key].popleft()

    def record(self, unit: Unit, cpu_s: float) -> None:
        self._cost.setdefault((unit.suite, unit.task), []).append(cpu_s)


def _worker_renderer_record() -> dict[str, str]:
    """The pool worker's renderer name and version, for the manifest (so the parent never
    opens a GL context of its own just to ask)."""
    assert _WORKER is not None
    return _renderer_record(_WORKER.renderer)


def _renderer_record(renderer: Any) -> dict[str, str]:
    return {"name": renderer.name, "version": renderer.version}


def _pool_start_method() -> str:
    """``fork`` unless this process already opened a GL context, else ``spawn``.

    A spawned worker re-imports perspecta, trimesh and scipy (~2 s of CPU each, measured)
    before its first unit, so on 2 cores the pool's start-up alone cost what 1 worker
    renders in that time; a forked worker shares the parent's imports and asset index and
    starts in milliseconds. A forked child must not inherit live EGL state, though, so a
    process that has rendered (tests, the in-process bench) spawns as before."""
    import sys

    gl = sys.modules.get("perspecta.render.gl")
    if (gl is not None and gl.gl_opened_in_process()) or "fork" not in mp.get_all_start_methods():
        return "spawn"
    return "fork"


def _preload(config: GenerationConfig) -> None:
    """Import what every worker needs (no GL context) once, before forking them."""
    from perspecta.assets import procedural  # noqa: F401  (trimesh, scipy: most of the import time)
    from perspecta.assets.library import AssetLibrary
    from perspecta.render import base

    AssetLibrary.default()
    if base.check_renderer_name(config.renderer) == "gl":
        from perspecta.render import gl  # noqa: F401


def _iter_unit_results(
    units: list[Unit], store: Store, config: GenerationConfig, workers: int,
    info: dict[str, Any] | None = None,
) -> Iterator[int]:
    """Run ``units``; yield each one's item count as it finishes (in any order). ``info``
    receives the workers' ``"renderer"`` record for the manifest."""
    info = {} if info is None else info
    if not units:
        return
    if workers <= 1:
        one_rasteriser_thread()
        worker = UnitWorker(store, config)
        try:
            for u in units:
                yield worker.run(u)
            info["renderer"] = _renderer_record(worker.renderer)
        finally:
            worker.close()
        return
    method = _pool_start_method()
    if method == "fork":
        _preload(config)
    ctx = mp.get_context(method)
    with ProcessPoolExecutor(min(workers, max(1, len(units))), mp_context=ctx, initializer=_init_worker,
                             initargs=(store.spec(), config)) as pool:
        # One unit per dispatch, longest task first (LongestFirst), so the workers end
        # together: chunks of up to 8 units, or a costly task last in plan order, left one
        # worker rendering alone at the end. One unit more than the workers is in flight,
        # queued for whichever worker frees first, so no worker waits for this process
        # to be scheduled (on a loaded machine) between two units.
        order = LongestFirst(units)
        running: dict[Future[tuple[int, float]], Unit] = {}
        while order or running:
            while order and len(running) <= workers:
                unit = order.pop()
                running[pool.submit(_run_unit, unit)] = unit
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                n, cpu_s = fut.result()  # a failed unit raises here; the pool then shuts down
                order.record(running.pop(fut), cpu_s)
                yield n
        info["renderer"] = pool.submit(_worker_renderer_record).result()


def generate_dataset(
    out: str | Path,
    config: GenerationConfig,
    *,
    workers: int | None = 1,
    resume: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Generate (or finish, with ``resume``) a dataset at ``out``; return its manifest.

    ``out`` is a directory or an fsspec URL. ``executor="ray"`` runs shards of units as
    Ray tasks (at most ``workers`` at once; None = every CPU of the cluster) on the Ray
    instance at ``ray_address`` (None: the one already connected, else a local one).
    """
    from perspecta.render.base import check_renderer_name

    if executor not in EXECUTORS:
        raise ValueError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    store = open_store(out)
    if not store.shared_across_processes and (executor != "local" or (workers or 1) > 1):
        raise ValueError(f"{out} lives in one process; use it with the local executor and --workers 1")
    check_renderer_name(config.renderer)
    units = plan_units(config)  # unknown suites fail here, before anything is written
    if store.is_nonempty() and not resume:
        raise FileExistsError(f"{out} is not empty; pass --resume to continue it or choose another --out")
    if resume and store.exists("manifest.json"):
        old = json.loads(store.read_text("manifest.json"))
        if old.get("config") != config_record(config):
            raise ValueError(f"{out} was generated with a different configuration; cannot resume it")
        return old  # already complete
    store.makedirs()
    _check_resume_config(store, config)
    todo = [u for u in units if not store.exists(u.part_rel)]
    done = len(units) - len(todo)
    if on_progress:
        on_progress(done, len(units))
    info: dict[str, Any] = {}
    timing.wall_mark("units.start")  # worker start-up counts as part of the units' phase
    if executor == "ray":
        from perspecta.scale.ray_generate import iter_unit_results_ray

        results = iter_unit_results_ray(todo, store, config, workers=workers, address=ray_address)
    else:
        results = _iter_unit_results(todo, store, config, workers or 1, info)
    for _ in results:
        done += 1
        if on_progress:
            on_progress(done, len(units))
    timing.wall_mark("units.end")
    return _assemble(store, config, units, info.get("renderer"))


def _check_resume_config(store: Store, config: GenerationConfig) -> None:
    """Parts of an unfinished run are only reused under the configuration that made them."""
    stamp = f"{PARTS_DIR}/config.json"
    record = config_record(config)
    if store.exists(stamp):
        if json.loads(store.read_text(stamp)) != record:
            raise ValueError(f"{store.spec()} holds an unfinished run with a different configuration; "
                             "cannot resume it")
    else:
        store.write_json(stamp, record)


def _command_for(config: GenerationConfig) -> str:
    """The canonical command that regenerates this dataset (not argv: resumed and
    parallel runs must write the same manifest bytes as a plain serial run)."""
    suites = " ".join(f"--suite {s}" for s in config.suites)
    if config.tasks is not None:
        suites += "".join(f" --task {t}" for t in config.tasks)
    for suite, settings in sorted(config.suite_config.items()):
        for key, value in sorted(settings.items()):
            text = value if isinstance(value, str) else json.dumps(value)
            suites += " --suite-config " + shlex.quote(f"{suite}.{key}={text}")
    return (f"perspecta generate {suites} --n {config.n} --seed {config.seed} "
            f"--renderer {config.renderer}" + (f" --image-size {config.image_size}" if config.image_size else "")
            + f" --split {format_splits(config.splits)} --difficulty {config.difficulty}"
            + (f" --sweep {format_sweep(config.sweep)}" if config.sweep else "")
            + (" --with-depth" if config.with_depth else ""))


def parse_sweep(text: str) -> dict[str, Any]:
    """``"rotation_deg=10:90:9"`` -> ``{"knob": "rotation_deg", "values": [10, 20, ..., 90]}``:
    n evenly spaced values from a to b inclusive (integers when a, b and the step are)."""
    name, eq, spec = text.partition("=")
    parts = spec.split(":")
    try:
        if not (eq and name.strip() and len(parts) == 3):
            raise ValueError
        a, b, n = float(parts[0]), float(parts[1]), int(parts[2])
    except ValueError:
        raise ValueError(f"--sweep expects KNOB=a:b:n (e.g. rotation_deg=10:90:9), got {text!r}") from None
    if n < 2:
        raise ValueError(f"--sweep needs n >= 2 values, got {n}")
    values = [a + (b - a) * k / (n - 1) for k in range(n)]
    if all(float(v).is_integer() for v in values):
        values = [int(v) for v in values]
    else:
        values = [round(v, 6) for v in values]
    return {"knob": name.strip(), "values": values}


def format_sweep(sweep: dict[str, Any]) -> str:
    v = sweep["values"]
    return f"{sweep['knob']}={v[0]}:{v[-1]}:{len(v)}"


def parse_suite_config(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``["dori.prompt_style=unstructured", "pcsr.room_type=\"kitchen\""]`` -> per-suite config.
    Values are read as JSON when they parse (numbers, lists, booleans), else as strings."""
    out: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, eq, raw = pair.partition("=")
        suite, dot, name = key.partition(".")
        if not (eq and dot and suite and name):
            raise ValueError(f"--suite-config expects suite.key=value, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out.setdefault(suite, {})[name] = value
    return out


def format_splits(splits: dict[str, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in sorted(splits.items()))


def parse_splits(text: str) -> dict[str, float]:
    """``"train=0.8,test=0.2"`` -> ``{"train": 0.8, "test": 0.2}`` (clear error otherwise)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--split expects name=fraction pairs like train=0.8,test=0.2, got {text!r}") from None
    return out


def config_record(config: GenerationConfig) -> dict[str, Any]:
    return {
        "suites": config.suites,
        "n": config.n,
        "seed": config.seed,
        "renderer": config.renderer,
        "image_size": config.image_size,
        "suite_config": config.suite_config,
        "splits": config.splits,
        "tasks": config.tasks,
        "difficulty": config.difficulty,
        "sweep": config.sweep,
        # only when set, so datasets made without depth keep their bytes
        **({"with_depth": True} if config.with_depth else {}),
    }


def _suite_record(suite: str, units: list[Unit], config: GenerationConfig) -> dict[str, Any]:
    from perspecta.suites.context import PNG_COMPRESS_LEVEL, png_compress_level

    record = {"tasks": sorted({u.task for u in units if u.suite == suite}), "n": config.n,
              "config": config.task_config(suite)}
    level = png_compress_level(suite)
    if level != PNG_COMPRESS_LEVEL:  # recorded only when not the default, so other manifests keep their bytes
        record["png_compress_level"] = level
    return record


def _assemble(store: Store, config: GenerationConfig, units: list[Unit],
              renderer_record: dict[str, str] | None = None) -> dict[str, Any]:
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer
    from perspecta.suites.context import DATASET_FORMAT

    items: list[dict[str, Any]] = []
    scenes: list[dict[str, Any]] = []
    scene_ids: set[str] = set()
    images: list[str] = []
    image_sha: dict[str, str] = {}
    depths: dict[str, str] = {}
    no_depth: dict[str, str] = {}
    for u in units:
        part = json.loads(store.read_text(u.part_rel))
        items += part["items"]
        for scene in part["scenes"]:  # units may share a scene (PCSR's rooms): keep it once
            if scene["scene_id"] not in scene_ids:
                scene_ids.add(scene["scene_id"])
                scenes.append(scene)
        images += part["images"]
        image_sha.update(part.get("sha256", {}))  # parts of older versions carry none
        depths.update(part.get("depth", {}))
        no_depth.update(part.get("no_depth", {}))
    if config.sweep and not any(config.sweep["knob"] in it["metadata"].get("knobs", {}) for it in items):
        used = sorted({k for it in items for k in it["metadata"].get("knobs", {})})
        raise ValueError(f"--sweep {config.sweep['knob']}: no generated task reads that knob; "
                         f"knobs read: {', '.join(used) or 'none'}")
    store.write_jsonl("items.jsonl", items)
    store.write_jsonl("scenes.jsonl", scenes)

    library = AssetLibrary.default()
    asset_ids = sorted({o["asset_id"] for s in scenes for o in s["objects"]})
    assets = []
    for a in asset_ids:
        info = library.get(a)
        assets.append({"asset_id": a, "license": info.license, "attribution": info.attribution})
    if renderer_record is None:  # no worker of this process reported it (resumed run, Ray)
        renderer = get_renderer(config.renderer, library=library)
        renderer_record = _renderer_record(renderer)
        renderer.close()

    no_depth = {k: v for k, v in no_depth.items() if k not in depths}  # a shared image one unit stored with depth
    files = ["items.jsonl", "scenes.jsonl", *sorted(set(images)), *sorted(set(depths.values()))]
    checksums = {p: image_sha.get(p) or store.sha256(p) for p in files}
    by_task = Counter(f"{it['suite']}/{it['task']}" for it in items)
    manifest = {
        "name": "+".join(config.suites),
        "generator": {"package": "perspecta", "version": perspecta.__version__, "format": DATASET_FORMAT},
        "created_by_command": _command_for(config),
        "config": config_record(config),
        "seed": config.seed,
        "suites": {s: _suite_record(s, units, config) for s in config.suites},
        "renderer": renderer_record,
        "counts": {
            "items": len(items),
            "images": len(set(images)),
            "scenes": len(scenes),
            "by_task": dict(sorted(by_task.items())),
        },
        "checksums": checksums,
        "assets": assets,
    }
    if config.with_depth:
        from perspecta.dataset.depth import manifest_record

        manifest["depth"] = manifest_record(depths, no_depth)
    store.write_json("manifest.json", manifest)
    store.remove_tree(PARTS_DIR)
    return manifest


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))

