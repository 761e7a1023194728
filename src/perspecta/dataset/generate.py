"""Turn (suites, n, seed) into a dataset directory, serially or across processes.

Work is cut into *units* — (suite, task, index) — each with its own derived seed
(:mod:`perspecta.suites.context`). A unit renders its images, then writes one part
file atomically; a unit whose part file exists is finished, which is all ``--resume``
needs. Only when every unit is done are ``items.jsonl``, ``scenes.jsonl`` and finally
``manifest.json`` assembled (each by temp file + rename), in unit order, so N workers
produce exactly the bytes of a serial run and an interrupted run never looks complete.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import multiprocessing as mp

import perspecta
from perspecta.dataset.io import sha256_file, write_json_atomic, write_jsonl_atomic
from perspecta.dataset.schema import check_item

PARTS_DIR = ".parts"


@dataclass(frozen=True)
class Unit:
    suite: str
    task: str
    index: int

    def part_path(self, root: Path) -> Path:
        return root / PARTS_DIR / self.suite / self.task / f"{self.index:06d}.json"


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

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"--n must be at least 1, got {self.n}")
        if self.seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {self.seed}")
        if self.image_size is not None and not 16 <= self.image_size <= 4096:
            raise ValueError(f"--image-size must be between 16 and 4096, got {self.image_size}")
        if not self.suites:
            raise ValueError("no suites to generate")
        bad = set(self.splits) - {"train", "val", "test"}
        if bad or not self.splits or any(v < 0 for v in self.splits.values()) or sum(self.splits.values()) <= 0:
            raise ValueError(f"--split takes train/val/test with non-negative fractions, got {self.splits}")

    def task_config(self, suite: str) -> dict[str, Any]:
        sized = {} if self.image_size is None else {"image_size": self.image_size}
        return {**sized, "splits": self.splits, **self.suite_config.get(suite, {})}


def plan_units(config: GenerationConfig) -> list[Unit]:
    from perspecta.suites import registry

    chosen = [t for suite in config.suites for t in registry.tasks(suite)]
    if config.tasks is not None:
        unknown = sorted(set(config.tasks) - {t.key for t in chosen})
        if unknown:
            raise KeyError(f"unknown task(s) {', '.join(unknown)}; see `perspecta suites`")
        chosen = [t for t in chosen if t.key in config.tasks]
    return [Unit(t.suite, t.name, i) for t in chosen for i in range(config.n)]


class _Worker:
    """Per-process state: one asset library and one renderer, reused for every unit."""

    def __init__(self, out: Path, config: GenerationConfig) -> None:
        from perspecta.assets.library import AssetLibrary
        from perspecta.render.base import get_renderer

        self.out = out
        self.config = config
        self.library = AssetLibrary.default()
        self.renderer = get_renderer(config.renderer, library=self.library)

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
            out_dir=self.out,
            config=self.config.task_config(unit.suite),
        )
        items = registry.get_task(unit.suite, unit.task).generate(ctx)
        records = [it.to_dict() for it in items]
        for rec in records:
            errors = check_item(rec)
            if errors:
                raise ValueError(f"task {unit.suite}/{unit.task} made an invalid item {rec.get('id')}: {errors}")
        part = {
            "items": records,
            "scenes": [s.to_dict() for s in ctx.scenes],
            "images": ctx.images,
        }
        write_json_atomic(unit.part_path(self.out), part)
        return len(records)


_WORKER: _Worker | None = None


def _init_worker(out: Path, config: GenerationConfig) -> None:
    global _WORKER
    # One rasteriser thread per worker process: the processes already fill the cores,
    # and llvmpipe's own threads would only contend with them.
    os.environ.setdefault("LP_NUM_THREADS", "1")
    _WORKER = _Worker(out, config)


def _run_unit(unit: Unit) -> int:
    assert _WORKER is not None
    return _WORKER.run(unit)


def _iter_unit_results(
    units: list[Unit], out: Path, config: GenerationConfig, workers: int
) -> Iterator[int]:
    if workers <= 1:
        worker = _Worker(out, config)
        for u in units:
            yield worker.run(u)
        worker.renderer.close()
        return
    # "spawn": a forked child would inherit the parent's GL/EGL state.
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(out, config)) as pool:
        yield from pool.map(_run_unit, units, chunksize=max(1, min(8, len(units) // (workers * 4) or 1)))


def generate_dataset(
    out: Path,
    config: GenerationConfig,
    *,
    workers: int = 1,
    resume: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate (or finish, with ``resume``) a dataset at ``out``; return its manifest."""
    from perspecta.render.base import check_renderer_name

    out = Path(out)
    check_renderer_name(config.renderer)
    units = plan_units(config)  # unknown suites fail here, before anything is written
    manifest_path = out / "manifest.json"
    if out.exists() and any(out.iterdir()) and not resume:
        raise FileExistsError(f"{out} is not empty; pass --resume to continue it or choose another --out")
    if resume and manifest_path.exists():
        old = json.loads(manifest_path.read_text())
        if old.get("config") != _config_record(config):
            raise ValueError(f"{out} was generated with a different configuration; cannot resume it")
        return old  # already complete
    out.mkdir(parents=True, exist_ok=True)
    _check_resume_config(out, config, resume)
    todo = [u for u in units if not u.part_path(out).exists()]
    done = len(units) - len(todo)
    if on_progress:
        on_progress(done, len(units))
    for _ in _iter_unit_results(todo, out, config, workers):
        done += 1
        if on_progress:
            on_progress(done, len(units))
    return _assemble(out, config, units)


def _check_resume_config(out: Path, config: GenerationConfig, resume: bool) -> None:
    """Parts of an unfinished run are only reused under the configuration that made them."""
    stamp = out / PARTS_DIR / "config.json"
    record = _config_record(config)
    if stamp.exists():
        if json.loads(stamp.read_text()) != record:
            raise ValueError(f"{out} holds an unfinished run with a different configuration; cannot resume it")
    else:
        write_json_atomic(stamp, record)


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
            + f" --split {format_splits(config.splits)}")


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


def _config_record(config: GenerationConfig) -> dict[str, Any]:
    return {
        "suites": config.suites,
        "n": config.n,
        "seed": config.seed,
        "renderer": config.renderer,
        "image_size": config.image_size,
        "suite_config": config.suite_config,
        "splits": config.splits,
        "tasks": config.tasks,
    }


def _assemble(out: Path, config: GenerationConfig, units: list[Unit]) -> dict[str, Any]:
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    items: list[dict[str, Any]] = []
    scenes: list[dict[str, Any]] = []
    images: list[str] = []
    for u in units:
        part = json.loads(u.part_path(out).read_text())
        items += part["items"]
        scenes += part["scenes"]
        images += part["images"]
    write_jsonl_atomic(out / "items.jsonl", items)
    write_jsonl_atomic(out / "scenes.jsonl", scenes)

    library = AssetLibrary.default()
    asset_ids = sorted({o["asset_id"] for s in scenes for o in s["objects"]})
    assets = []
    for a in asset_ids:
        info = library.get(a)
        assets.append({"asset_id": a, "license": info.license, "attribution": info.attribution})
    renderer = get_renderer(config.renderer, library=library)
    renderer_record = {"name": renderer.name, "version": renderer.version}
    renderer.close()

    checksums = {p: sha256_file(out / p) for p in ["items.jsonl", "scenes.jsonl", *sorted(set(images))]}
    by_task = Counter(f"{it['suite']}/{it['task']}" for it in items)
    manifest = {
        "name": "+".join(config.suites),
        "generator": {"package": "perspecta", "version": perspecta.__version__},
        "created_by_command": _command_for(config),
        "config": _config_record(config),
        "seed": config.seed,
        "suites": {
            s: {"tasks": sorted({u.task for u in units if u.suite == s}), "n": config.n, "config": config.task_config(s)}
            for s in config.suites
        },
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
    write_json_atomic(out / "manifest.json", manifest)
    shutil.rmtree(out / PARTS_DIR, ignore_errors=True)
    return manifest


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
