"""The render layer alone, on a suite's own render sequence, for before/after comparisons:

    PYTHONPATH=<tree>/src python benchmarks/render/replay.py capture SUITE N FRAMES.pkl
    PYTHONPATH=<tree>/src python benchmarks/render/replay.py replay FRAMES.pkl

``capture`` runs ``generate --n N --seed 123`` serially and keeps every render call's
(scene, camera, color) in order. ``replay`` renders that sequence on a fresh renderer,
cold (each new mesh, texture, ground and shadow map made as in the suite), reading the
instance layer as the tasks do, and prints the process CPU of the render calls by
timing stage. Why: the suite's serial CPU also holds sampling, task code and PNG
encoding, whose noise on a shared machine hides a few-percent change in rendering; the
replay times nothing else and runs the same frames in both trees (capture once).
"""

from __future__ import annotations

import copy
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def capture(suite: str, n: int, out: Path) -> None:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset, one_rasteriser_thread
    from perspecta.render import gl

    one_rasteriser_thread()
    calls: list[tuple[Any, Any, bool]] = []
    original = gl.GLRenderer.render

    def recording(self: Any, scene: Any, camera: Any, *, color: bool = True) -> Any:
        calls.append((copy.deepcopy(scene), copy.deepcopy(camera), color))
        return original(self, scene, camera, color=color)

    gl.GLRenderer.render = recording  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="perspecta-replay-") as tmp:
            generate_dataset(Path(tmp) / "d", GenerationConfig(suites=[suite], n=n, seed=123), workers=1)
    finally:
        gl.GLRenderer.render = original  # type: ignore[method-assign]
    out.write_bytes(pickle.dumps(calls))
    print(f"{suite}: {len(calls)} renders ({sum(c for *_, c in calls)} with colour) -> {out}")


def replay(frames: Path) -> None:
    from perspecta import timing
    from perspecta.dataset.generate import one_rasteriser_thread
    from perspecta.render.gl import GLRenderer

    one_rasteriser_thread()
    calls = pickle.loads(frames.read_bytes())
    renderer = GLRenderer()
    try:
        renderer.render(calls[0][0], calls[0][1])  # context and shader compiles: not the suite's cost
        with timing.collect() as tally:
            start = time.process_time()
            for scene, camera, color in calls:
                renderer.render(scene, camera, color=color).instance.sum()
            cpu = time.process_time() - start
    finally:
        renderer.close()
    stages = sorted((k, v) for k, v in tally.seconds.items() if k.startswith(("render", "panorama")))
    print(f"{frames.stem}: cpu {cpu:.3f}", " ".join(f"{k}={v:.3f}" for k, v in stages))


if __name__ == "__main__":
    if sys.argv[1:2] == ["capture"]:
        capture(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
    elif sys.argv[1:2] == ["replay"]:
        replay(Path(sys.argv[2]))
    else:
        sys.exit(__doc__)
