"""Performance benchmarks behind ``perspecta bench``.

Every figure of one call is measured in the same process on the same machine, so the
ratios it prints (end-to-end generation vs the raw renderer, 2 workers vs 1) are
comparable even on a noisy machine; absolute numbers are not. :func:`run_all` is
``perspecta bench all``: every benchmark in one run, one Markdown table.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from typing import Any

from perspecta.dataset.generate import one_rasteriser_thread
from perspecta.suites.registry import bench_task
from perspecta.world.scene import Camera, Ground, Pose, Room, Scene, SceneObject


def _object(library, idx: int, asset_id: str, xy: tuple[float, float], yaw: float) -> SceneObject:
    info = library.get(asset_id)
    ext = library.load_mesh(asset_id, {}).extent()
    return SceneObject(id=f"obj{idx}", asset_id=asset_id, category=info.category, pose=Pose((xy[0], xy[1], 0.0), yaw),
                       size=tuple(float(v) for v in ext), has_front=info.has_front)


def bench_scene(library, size: int) -> Scene:
    """The anchors' scene: ground plane, five meshes, sun with shadows."""
    specs = [("proc:car", (0.0, 0.0), 30.0), ("proc:person", (-2.5, 1.5), -60.0), ("proc:chair", (2.0, -1.5), 120.0),
             ("proc:dog", (1.5, 2.0), 200.0), ("proc:ball", (-1.8, -1.8), 0.0)]
    objects = [_object(library, i, a, xy, yaw) for i, (a, xy, yaw) in enumerate(specs)]
    cam = Camera(position=(7.0, -7.0, 4.0), look_at=(0.0, 0.0, 0.6), fov_y=45.0, width=size, height=size)
    return Scene(scene_id="bench", seed=0, kind="clutter", objects=objects, cameras=[cam], ground=Ground())


def realism_scene(library, size: int) -> Scene:
    """The bench scene on a grass texture under an HDRI sky (plain sky without
    blender-data or openexr), to price the realism options."""
    from perspecta.render.environment import available_hdris

    scene = bench_scene(library, size)
    scene.ground = Ground(material="grass")
    try:
        import OpenEXR  # noqa: F401

        scene.environment = "hdri:courtyard" if "courtyard" in available_hdris() else None
    except ImportError:
        scene.environment = None
    return scene


def panorama_scene(library) -> Scene:
    scene = bench_scene(library, 256)
    scene.kind = "room"
    scene.ground = None
    scene.room = Room(width=8.0, depth=7.0, height=2.8)
    pano = Camera(name="pano", position=(0.0, -2.8, 1.5), look_at=(0.0, 0.0, 1.5), width=1024, height=512,
                  projection="equirect")
    scene.cameras = [pano]
    return scene


def _time_frames(renderer, scene: Scene, camera: Camera, frames: int) -> float:
    renderer.render(scene, camera)  # warm-up: context, buffers, shader compile
    start = time.perf_counter()
    for _ in range(frames):
        renderer.render(scene, camera)
    return (time.perf_counter() - start) / frames


def _generate_timed(units: int, workers: int, renderer: str, executor: str = "local") -> tuple[float, int, int]:
    """(seconds, items, bytes on disk) of one fresh generation."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    suite, task = bench_task()
    config = GenerationConfig(suites=[suite], n=units, seed=123, renderer=renderer, tasks=[f"{suite}/{task}"])
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = generate_dataset(Path(tmp) / "d", config, workers=workers, executor=executor)
        seconds = time.perf_counter() - start
        size = sum(p.stat().st_size for p in (Path(tmp) / "d").rglob("*") if p.is_file())
        return seconds, manifest["counts"]["items"], size


def _generate_rates(units: int, workers: int, renderer: str,
                    executor: str = "local") -> tuple[float, float, float, float]:
    """(wall items/s of a run of ``units``, steady-state items/s, fixed start-up seconds,
    bytes per item).

    Two runs of different sizes separate the per-item cost from the fixed cost
    (process start, imports, asset listing, final assembly)."""
    t1, i1, _ = _generate_timed(units, workers, renderer, executor)
    t2, i2, size = _generate_timed(4 * units, workers, renderer, executor)
    # noise can make the longer run no slower (tiny --quick sizes): then only its wall rate is meaningful
    steady = (i2 - i1) / (t2 - t1) if t2 > t1 * 1.05 else i2 / t2
    return i1 / t1, steady, max(0.0, t1 - i1 / steady), size / i2


def machine_description() -> str:
    """CPU model, usable cores, OS and versions: printed above every benchmark table."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{cpu}, {cores} cores available, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}")


def run_render_bench(*, frames: int = 30, renderers: list[str] | None = None, units: int = 60) -> str:
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    one_rasteriser_thread()  # raw renders on the same one-thread llvmpipe as every generation worker
    library = AssetLibrary.default()
    rows = []
    raw_256: dict[str, float] = {}
    for name in renderers or ["gl"]:
        r = get_renderer(name, library=library)
        n = frames if name == "gl" else max(2, frames // 10)
        s256 = bench_scene(library, 256)
        s512 = bench_scene(library, 512)
        t256 = _time_frames(r, s256, s256.cameras[0], n)
        t512 = _time_frames(r, s512, s512.cameras[0], n)
        real = realism_scene(library, 512)
        treal = _time_frames(r, real, real.cameras[0], n) if name == "gl" else float("nan")
        pano = panorama_scene(library)
        tpano = _time_frames(r, pano, pano.cameras[0], max(2, n // 5))
        raw_256[name] = 1.0 / t256
        rows.append(f"| {name} ({r.version}) | {1 / t256:.1f} | {1 / t512:.1f} | {1 / treal:.1f} | {tpano:.3f} |")
        r.close()
    lines = [
        f"Machine: {machine_description()}",
        "",
        "Lighting: sun with shadow map + sky fill + object highlights (docs/render.md). "
        "512² is the default perspective size of DORI and SpinBench.",
        "",
        "| renderer | 256² images/s | 512² images/s | 512² grass ground + HDRI sky images/s "
        "| 1024×512 panorama s |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "| end-to-end `generate` (dori/view_parallelism, 256², gl; 2 items per rendered image) | wall items/s "
        f"({units} units) | steady items/s | steady items/s per worker | start-up s | steady images/s vs raw render |",
        "|---|---|---|---|---|---|",
    ]
    if "gl" in raw_256:
        steady_1 = None
        for w in (1, 2):
            wall, steady, startup, _ = _generate_rates(units, w, "gl")
            steady_1 = steady_1 or steady
            lines.append(f"| {w} worker(s) | {wall:.1f} | {steady:.1f} | {steady / w:.1f} | {startup:.1f} | "
                         f"{steady / 2 / raw_256['gl']:.2f}× |")
        lines.append(f"\nScaling 1 → 2 workers (steady): {steady / steady_1:.2f}×")
    return "\n".join(lines)


# --------------------------------------------------------------------------- bench all

Row = tuple[str, str, str]  # (benchmark, headline figure, detail)
SETUP_PEERS = "not set up — run benchmarks/harness/setup_peers.sh"


@dataclass
class BenchSizes:
    """How big each benchmark of ``bench all`` is; :meth:`quick` runs everything in seconds
    (to test the plumbing — its figures are too small to mean much)."""

    frames: int = 30
    units: int = 24  # units of the shorter end-to-end run (the longer one has 4x)
    harness_items: int = 1000
    harness_concurrency: tuple[int, ...] = (16,)
    peers: tuple[str, ...] = ("lmms-eval", "inspect-ai")
    score_records: int = 1_000_000
    report_records: int = 1_000_000
    suite_units: int = 2  # units per task of each suite's rows (`bench generate` at this size)

    @classmethod
    def quick(cls) -> BenchSizes:
        return cls(frames=2, units=1, harness_items=20, harness_concurrency=(4,), peers=(),
                   score_records=2000, report_records=8, suite_units=1)


def _render_rows(frames: int) -> list[Row]:
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    library = AssetLibrary.default()
    r = get_renderer("gl", library=library)
    try:
        s256, s512, pano = bench_scene(library, 256), bench_scene(library, 512), panorama_scene(library)
        t256 = _time_frames(r, s256, s256.cameras[0], frames)
        t512 = _time_frames(r, s512, s512.cameras[0], frames)
        real = realism_scene(library, 512)
        treal = _time_frames(r, real, real.cameras[0], frames)
        tpano = _time_frames(r, pano, pano.cameras[0], max(2, frames // 5))
        version = r.version
    finally:
        r.close()
    return [("render gl 256² (raw renderer)", f"{1 / t256:.1f} images/s", version),
            ("render gl 512² (DORI/SpinBench default)", f"{1 / t512:.1f} images/s", ""),
            ("render gl 512², grass ground + HDRI sky", f"{1 / treal:.1f} images/s",
             real.environment or "no HDRI (blender-data/openexr missing)"),
            ("render gl 1024×512 panorama", f"{tpano:.3f} s/image", "")]


def _generation_rows(units: int) -> list[Row]:
    """Local processes and Ray tasks, 1 then 2 workers, on the same DORI workload."""
    rows: list[Row] = []
    per_item: float | None = None
    for executor in ("local", "ray"):
        started = False
        if executor == "ray":
            try:
                from perspecta.scale import ray_cluster

                started = ray_cluster.connect(num_cpus=2)
            except ValueError as e:  # Ray not installed
                rows.append(("generate, ray executor", f"not available: {e}", ""))
                continue
        try:
            steady: dict[int, float] = {}
            for w in (1, 2):
                wall, steady[w], startup, per_item = _generate_rates(units, w, "gl", executor)
                rows.append((f"generate {executor}, {w} worker{'s' if w > 1 else ''}",
                             f"{steady[w]:.1f} items/s", f"{steady[w] / w:.1f} items/s per worker; wall "
                             f"{wall:.1f} items/s for {units} units; start-up {startup:.1f} s"))
            rows.append((f"generate {executor}, scaling 1 → 2 workers", f"{steady[2] / steady[1]:.2f}×",
                         "steady-state items/s ratio"))
        finally:
            if started:
                ray_cluster.disconnect()
    if per_item is not None:
        rows.append(("storage per 1K items", f"{per_item * 1000 / 2**20:.1f} MiB",
                     "dori/view_parallelism, 256² PNG, 2 items per image, with jsonl + manifest"))
    return rows


def _suite_rows(units: int, repeats: int) -> list[Row]:
    """One row per registered suite: ``perspecta bench generate`` at ``units`` per task."""
    from perspecta.bench_generate import measure_all

    rows: list[Row] = []
    for r in measure_all(units, repeats=repeats):
        rows.append((f"generate {r.suite} (all tasks, defaults), 1 → 2 local workers",
                     f"{r.items / r.wall_s[1]:.2f} → {r.items / r.wall_s[2]:.2f} items/s",
                     f"{r.images / r.wall_s[1]:.2f} → {r.images / r.wall_s[2]:.2f} images/s, wall incl. start-up, "
                     f"{units} units/task; scaling 1 → 2 {r.scaling('units'):.2f}× (units' phase), "
                     f"{r.scaling('command'):.2f}× (whole command); on 2 workers "
                     f"{r.share_of_bound(2, 'units'):.0%} of the raw-render bound for its {r.images} images "
                     f"(`perspecta bench generate` breaks it down)"))
    return rows


def _parse_markdown_rows(report: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in report.splitlines()
            if line.startswith("|") and not line.startswith("|---")]


def _harness_rows(sizes: BenchSizes, venv_root: Path | None, say) -> tuple[list[Row], str]:
    from perspecta.bench_harness import default_drivers_dir, default_venv_root, peer_command, run_harness_bench

    root = venv_root or default_venv_root()
    ready = tuple(p for p in sizes.peers if peer_command(p, root, default_drivers_dir())[0] is not None)
    report = run_harness_bench(concurrency=sizes.harness_concurrency, n_items=sizes.harness_items, peers=ready,
                               venv_root=root, progress=say)
    table = _parse_markdown_rows(report)
    rows: list[Row] = []
    for cells in table:
        if cells[0] == "perspecta" and cells[1].isdigit():
            rows.append((f"harness perspecta, concurrency {cells[1]}", f"{cells[2]} req/s",
                         f"{cells[3]} ms client CPU per item (zero-latency server, {sizes.harness_items} items)"))
    for peer in ("lmms-eval", "inspect-ai"):
        ratios = [c for c in table if c[0] == peer and len(c) == 4]  # the ratio table's rows
        if ratios:
            rows += [(f"harness {peer}, concurrency {c[1]}", f"{c[2]} more client CPU/item than perspecta",
                      f"perspecta req/s ÷ {peer}: {c[3]}") for c in ratios]
        elif peer not in sizes.peers:
            rows.append((f"harness {peer}", "skipped (--quick)", ""))
        elif peer not in ready:
            rows.append((f"harness {peer}", SETUP_PEERS, ""))
        else:
            rows.append((f"harness {peer}", "failed (see the harness report below)", ""))
    return rows, report


def synthetic_shapes() -> list[tuple[str, dict[str, Any]]]:
    """(suite, record shape) of every installed suite's ``bench_records``, in suite-name order."""
    from perspecta.suites.registry import suite_specs

    return [(name, dict(shape)) for name, spec in sorted(suite_specs().items()) for shape in spec.bench_records]


def synthetic_record(suite: str, shape: dict[str, Any], i: int, model: str, ok: bool, group_of: int) -> dict[str, Any]:
    """One scored-record line of ``shape`` (see ``Suite.bench_records``); items of a shape with
    ``variant_groups`` = k come in groups of k variants (``group_of`` numbers the group)."""
    kind, n_opt = shape["answer_type"], shape["n_options"]
    labels = ["A", "B", "C", "D"][: max(2, n_opt)]
    answer = "yes" if kind == "yesno" else labels[1]
    pred = answer if ok else ("no" if kind == "yesno" else labels[2 % len(labels)])
    k = int(shape.get("variant_groups") or 0)
    return {"item_id": f"{suite}/{shape['task']}/{i}", "suite": suite, "task": shape["task"], "model": model,
            "answer": answer, "status": "ok", "prediction": pred, "correct": ok, "response": f"Answer: {pred}",
            "error": None, "subtype": f"{shape['task']}_{i % 3}", "granularity": shape.get("granularity"),
            "variant": VARIANTS[i % k] if k else "base", "group": f"g{group_of}" if k else "", "split": "test",
            "answer_type": kind, "n_options": n_opt, "prompt_mode": "direct", "repeat": 0,
            "metadata": shape.get("metadata", {}), "latency_s": 0.5,
            "scores": {key: float(ok) for key in shape.get("score_keys", ())}}


VARIANTS = ("base", "symmetric", "syntactic", "symmetric+syntactic", "v4", "v5", "v6", "v7")


def synthetic_records(path: Path, n_records: int, *, models: int = 20, seed: int = 0) -> None:
    """``n_records`` scored records over ``models`` models and every installed suite's bench
    shapes (variant groups where a shape has them), shaped like the runner's output, seeded."""
    import orjson

    rng = np.random.default_rng(seed)
    correct = rng.random(n_records) < 0.6
    shapes = synthetic_shapes()
    with open(path, "wb") as f:
        for i in range(n_records):
            suite, shape = shapes[(i // 4) % len(shapes)]
            k = int(shape.get("variant_groups") or 0) or 1
            rec = synthetic_record(suite, shape, i // models, f"openai:model-{i % models}", bool(correct[i]),
                                   i // (k * models))
            rec["variant"] = VARIANTS[(i // models) % k] if shape.get("variant_groups") else "base"
            f.write(orjson.dumps(rec) + b"\n")


def run_score_bench(n_records: int) -> dict[str, float]:
    """What ``perspecta score`` does, timed: read ``results.jsonl`` and summarise every run."""
    from perspecta.score.metrics import summarize_file

    with tempfile.TemporaryDirectory(prefix="perspecta-score-bench-") as tmp:
        path = Path(tmp) / "results.jsonl"
        synthetic_records(path, n_records)
        start = time.perf_counter()
        summary = summarize_file(path)  # one streamed pass: reading and summarising are one loop
        total = time.perf_counter() - start
    n = sum(run["n"] for run in summary["runs"])
    return {"records": n, "runs": len(summary["runs"]), "seconds": total, "records_per_s": n / total}


def _score_rows(n: int) -> list[Row]:
    r = run_score_bench(n)
    return [("score (read + summarize)", f"{r['records_per_s']:,.0f} records/s",
             f"{r['records']:,} records, {r['runs']} models, {r['seconds']:.1f} s (streamed)")]


def _report_rows(n: int) -> list[Row]:
    try:
        from perspecta.report.bench import run_report_bench
    except ImportError:
        return [("report", "not available (perspecta.report.bench is missing)", "")]
    r = run_report_bench(n)
    big = r["runs"][-1]
    return [("report (perspecta report)", f"{r['records_per_s']:,.0f} records/s",
             f"{big['n_records']:,} records in {big['seconds']:.1f} s, peak RSS {big['peak_rss_mb']:.0f} MB "
             f"(+{r['rss_growth_mb']:.0f} MB from {r['runs'][0]['n_records']:,})")]


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def run_all(sizes: BenchSizes | None = None, *, venv_root: Path | None = None, say=None) -> str:
    """Every benchmark in one run, as one Markdown table (then the harness's own report).

    A benchmark that fails prints its error in its row; the others still run."""
    sizes = sizes or BenchSizes()
    say = say or (lambda msg: None)
    load_start = _load()
    rows: list[Row] = []
    harness_report = ""

    def section(name: str, fn) -> None:
        say(f"bench: {name} ...")
        start = time.perf_counter()
        try:
            rows.extend(fn())
        except Exception as e:  # one broken benchmark must not hide the others' figures
            rows.append((name, f"failed: {type(e).__name__}: {str(e)[:300]}", ""))
        say(f"bench: {name} done in {time.perf_counter() - start:.0f} s")

    def harness() -> list[Row]:
        nonlocal harness_report
        found, harness_report = _harness_rows(sizes, venv_root, say)
        return found

    one_rasteriser_thread()  # raw renders on the same one-thread llvmpipe as every generation worker
    section("render", lambda: _render_rows(sizes.frames))
    section("generation", lambda: _generation_rows(sizes.units))
    section("generation per suite", lambda: _suite_rows(sizes.suite_units, 1 if sizes.suite_units == 1 else 3))
    section("harness", harness)
    section("scoring", lambda: _score_rows(sizes.score_records))
    section("report", lambda: _report_rows(sizes.report_records))
    lines = ["# perspecta bench", "", f"Machine: {machine_description()}",
             f"Load average (1/5/15 min) at start {load_start}, at end {_load()} — the machine may be shared.", "",
             "| benchmark | figure | detail |", "|---|---|---|",
             *(f"| {a} | {b} | {c} |" for a, b, c in rows)]
    if harness_report:
        lines += ["", harness_report.replace("# Harness", "## Harness", 1)]
    return "\n".join(lines) + "\n"
