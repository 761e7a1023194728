"""Performance benchmarks behind ``perspecta bench``.

Every figure of one call is measured in the same process on the same machine, so the
ratios it prints (end-to-end generation vs the raw renderer, 2 workers vs 1) are
comparable even on a noisy machine; absolute numbers are not.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

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


def _generate_timed(units: int, workers: int, renderer: str) -> tuple[float, int]:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    config = GenerationConfig(suites=["dori"], n=units, seed=123, renderer=renderer,
                              tasks=["dori/view_parallelism"])
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = generate_dataset(Path(tmp) / "d", config, workers=workers)
        return time.perf_counter() - start, manifest["counts"]["items"]


def _generate_rates(units: int, workers: int, renderer: str) -> tuple[float, float, float]:
    """(wall items/s of a run of ``units``, steady-state items/s, fixed start-up seconds).

    Two runs of different sizes separate the per-item cost from the fixed cost
    (process start, imports, asset listing, final assembly)."""
    t1, i1 = _generate_timed(units, workers, renderer)
    t2, i2 = _generate_timed(4 * units, workers, renderer)
    steady = (i2 - i1) / max(t2 - t1, 1e-9)
    return i1 / t1, steady, max(0.0, t1 - i1 / steady)


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
        pano = panorama_scene(library)
        tpano = _time_frames(r, pano, pano.cameras[0], max(2, n // 5))
        raw_256[name] = 1.0 / t256
        rows.append(f"| {name} ({r.version}) | {1 / t256:.1f} | {1 / t512:.1f} | {tpano:.3f} |")
        r.close()
    lines = [
        f"Machine: {machine_description()}",
        "",
        "| renderer | 256² images/s | 512² images/s | 1024×512 panorama s |",
        "|---|---|---|---|",
        *rows,
        "",
        "| end-to-end `generate` (dori/view_parallelism, 256², gl; 2 items per rendered image) | wall items/s "
        f"({units} units) | steady items/s | steady items/s per worker | start-up s | steady images/s vs raw render |",
        "|---|---|---|---|---|---|",
    ]
    if "gl" in raw_256:
        steady_1 = None
        for w in (1, 2):
            wall, steady, startup = _generate_rates(units, w, "gl")
            steady_1 = steady_1 or steady
            lines.append(f"| {w} worker(s) | {wall:.1f} | {steady:.1f} | {steady / w:.1f} | {startup:.1f} | "
                         f"{steady / 2 / raw_256['gl']:.2f}× |")
        lines.append(f"\nScaling 1 → 2 workers (steady): {steady / steady_1:.2f}×")
    return "\n".join(lines)
