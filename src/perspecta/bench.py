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


def _generate_rate(units: int, workers: int, renderer: str) -> float:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    config = GenerationConfig(suites=["dori"], n=units, seed=123, renderer=renderer)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = generate_dataset(Path(tmp) / "d", config, workers=workers)
        secs = time.perf_counter() - start
    return manifest["counts"]["items"] / secs


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def run_render_bench(*, frames: int = 30, renderers: list[str] | None = None, units: int = 40) -> str:
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
        "| end-to-end `generate` (dori, 256², gl) | items/s | items/s per worker | vs raw 256² render |",
        "|---|---|---|---|",
    ]
    if "gl" in raw_256:
        for w in (1, 2):
            rate = _generate_rate(units, w, "gl")
            lines.append(f"| {w} worker(s), {units} units/task | {rate:.1f} | {rate / w:.1f} | {rate / raw_256['gl']:.2f}× |")
    return "\n".join(lines)
