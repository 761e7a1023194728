"""SpinBench's ``render_checked`` decides readability on masks before any colour pass:
a draw it rejects costs no colour render, and the frames it keeps are pixel for pixel
what a fresh renderer draws in colour (the id layers it reuses are the colour render's own)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from perspecta.assets.library import AssetInfo, AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart
from perspecta.suites.spin.common import Unreadable, frame, render_checked
from perspecta.world.scene import Camera, Pose, Scene, SceneObject


class _Panels:
    """test:panel, a 1 m textured square facing +X (a texture, so a colour pass has work)."""

    name = "test"

    def list(self) -> list[AssetInfo]:
        return [AssetInfo("test:panel", "panel", "test", (0.01, 1, 1))]

    def load(self, info: AssetInfo, params: dict) -> Mesh:
        p = np.array([[0, -0.5, 0], [0, 0.5, 0], [0, 0.5, 1], [0, -0.5, 0], [0, 0.5, 1], [0, -0.5, 1]],
                     dtype=np.float32)
        uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], dtype=np.float32)
        tex = np.zeros((16, 16, 3), dtype=np.uint8)
        tex[:8] = (230, 60, 20)
        tex[8:] = (20, 200, 120)
        n = np.tile(np.array([1, 0, 0], dtype=np.float32), (6, 1))
        return Mesh([MeshPart(p, n, (1.0, 1.0, 1.0), uvs=uv, texture=tex)])


class _Counting:
    """A real GL renderer that logs whether each render drew colour."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, []

    def render(self, scene, camera, *, color=True):
        self.calls.append(color)
        return self.inner.render(scene, camera, color=color)


def _scene() -> Scene:
    objs = [SceneObject("a", "test:panel", "panel", Pose((0.0, -0.7, 0.0), yaw=10)),
            SceneObject("b", "test:panel", "panel", Pose((0.0, 0.7, 0.0), yaw=-15))]
    cams = [Camera(name="main", position=(3.5, -0.5, 1.4), look_at=(0, 0, 0.5), width=160, height=128),
            Camera(name="side", position=(3.0, 1.2, 1.6), look_at=(0, 0, 0.5), width=160, height=128),
            Camera(name="away", position=(3.5, 0.0, 1.4), look_at=(9, 0, 1.4), width=160, height=128)]
    return Scene("t", 0, "studio", objs, cams)


@pytest.fixture()
def library() -> AssetLibrary:
    return AssetLibrary([_Panels()])


def test_kept_frames_equal_fresh_colour_renders_and_rejects_draw_no_colour(library) -> None:
    from perspecta.render.gl import GLRenderer

    scene = _scene()
    frames = [frame("main", ["a", "b"]), frame("side", ["b", "a"])]
    with GLRenderer(library) as gl:
        r = _Counting(gl)
        ctx = SimpleNamespace(renderer=r)
        results, record = render_checked(ctx, scene, frames, {"left": ("a", [0, 1]), "right": ("b", [0])})
        assert r.calls == [False, False, True, True]  # masks first, colour once they pass
        assert record["objects"]["left"]["pixels"] >= 600

        r.calls.clear()
        with pytest.raises(Unreadable):  # nothing of "a" in a camera looking away
            render_checked(ctx, scene, [frame("main", ["a", "b"]), frame("away", ["a", "b"])],
                           {"left": ("a", [0, 1])})
        assert r.calls == [False, False]

        r.calls.clear()
        masks, _ = render_checked(ctx, scene, frames, {"left": ("a", [0, 1])}, color=False)
        assert r.calls == [False, False] and all(m.rgb.size == 0 for m in masks)
    for got, f in zip(results, frames):
        with GLRenderer(library) as fresh:
            sub = Scene("t", 0, "studio", [scene.object(i) for i in f["objects"]], scene.cameras)
            want = fresh.render(sub, scene.camera(f["camera"]))
        assert np.array_equal(got.rgb, want.rgb) and got.rgb.size > 0
        assert np.array_equal(got.instance, want.instance) and np.array_equal(got.depth, want.depth)
