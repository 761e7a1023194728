"""What the GL renderer keeps between renders (texture pool, shadow map, lazily computed
depth) must never change a pixel: a warm renderer that has drawn other scenes gives the
same layers as a fresh one, and a changed scene or light is never served stale data."""

from __future__ import annotations

import numpy as np
import pytest

from perspecta.assets.library import AssetInfo, AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart
from perspecta.render.base import RenderResult
from perspecta.world.scene import Camera, Light, Pose, Room, Scene, SceneObject


def _panel(shade: int) -> Mesh:
    """A 1 m textured square facing +X; ``shade`` picks the texture's colours. Every
    call builds new arrays, as a procedural source does for each variant."""
    p = np.array([[0, -0.5, 0], [0, 0.5, 0], [0, 0.5, 1], [0, -0.5, 0], [0, 0.5, 1], [0, -0.5, 1]],
                 dtype=np.float32)
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], dtype=np.float32)
    tex = np.zeros((16, 16, 3), dtype=np.uint8)
    tex[:8] = (230, 20 + 100 * shade, 20)
    tex[8:] = (20, 200, 20 + 100 * shade)
    n = np.tile(np.array([1, 0, 0], dtype=np.float32), (6, 1))
    return Mesh([MeshPart(p, n, (1.0, 1.0, 1.0), uvs=uv, texture=tex)])


class PanelSource:
    """test:panel with params {"shade": k, "copy": c}: ``copy`` makes another mesh (another
    GPU-mesh cache key) with the same texture pixels."""

    name = "test"

    def list(self) -> list[AssetInfo]:
        return [AssetInfo("test:panel", "panel", "test", (0.01, 1, 1))]

    def load(self, info: AssetInfo, params: dict) -> Mesh:
        return _panel(int(params.get("shade", 0)))


@pytest.fixture()
def library() -> AssetLibrary:
    return AssetLibrary([PanelSource()])


def _panels(*params: dict, light: Light | None = None) -> Scene:
    objs = [SceneObject(f"p{i}", "test:panel", "panel", Pose((0.0, 1.2 * i - 0.6, 0.0), yaw=10 * i), params=p)
            for i, p in enumerate(params)]
    return Scene("t", 0, "studio", objs, [], **({"light": light} if light else {}))


CAM = Camera(position=(3.5, -0.5, 1.4), look_at=(0, 0, 0.5), fov_y=45, width=80, height=64)


def _fresh(library: AssetLibrary, scene: Scene, camera: Camera = CAM) -> RenderResult:
    from perspecta.render.gl import GLRenderer

    with GLRenderer(library) as r:
        return r.render(scene, camera)


def _same(a: RenderResult, b: RenderResult) -> bool:
    return (np.array_equal(a.rgb, b.rgb) and np.array_equal(a.depth, b.depth)
            and np.array_equal(a.instance, b.instance))


def test_texture_pool_shares_equal_pixels_and_never_a_changed_texture(library) -> None:
    from perspecta.render.gl import GLRenderer

    twins = _panels({"shade": 0, "copy": 1}, {"shade": 0, "copy": 2})
    changed = _panels({"shade": 0, "copy": 1}, {"shade": 1, "copy": 2})
    with GLRenderer(library) as r:
        a = r.render(twins, CAM)
        meshes = [r._gpu_mesh("test:panel", o.params) for o in twins.objects]
        assert meshes[0] is not meshes[1]  # two GPU meshes ...
        assert meshes[0].parts[0][3].tex is meshes[1].parts[0][3].tex  # ... one texture: equal pixels
        b = r.render(changed, CAM)
        tex = r._gpu_mesh("test:panel", changed.objects[1].params).parts[0][3].tex
        assert tex is not meshes[0].parts[0][3].tex  # other pixels, another texture
        again = r.render(twins, CAM)
    assert _same(a, _fresh(library, twins)) and _same(again, a)
    assert _same(b, _fresh(library, changed))
    assert not np.array_equal(a.rgb, b.rgb)  # the changed texture shows


def test_shadow_map_is_redrawn_when_only_the_light_changes(library) -> None:
    """The shadow map is kept per (sun, casters); a new sun direction must redraw it."""
    from perspecta.render.gl import GLRenderer

    params = ({"shade": 0}, {"shade": 1})
    first = _panels(*params, light=Light(direction=(0.5, 0.6, -0.62)))
    turned = _panels(*params, light=Light(direction=(-0.6, 0.4, -0.69)))
    with GLRenderer(library) as r:
        got = [r.render(s, CAM) for s in (first, turned, first)]
    assert _same(got[0], _fresh(library, first)) and _same(got[2], got[0])
    assert _same(got[1], _fresh(library, turned))
    assert not np.array_equal(got[0].rgb, got[1].rgb)


def test_depth_read_late_equals_depth_read_at_once(library) -> None:
    """A panorama's depth is remapped on first read; reading it after the renderer has
    drawn other views (and after a mask-only render) gives the eager values."""
    from perspecta.render.gl import GLRenderer

    room = Scene("r", 0, "room", _panels({"shade": 0}, {"shade": 1}).objects, [], ground=None,
                 room=Room(width=5, depth=4, height=2.6))
    pano = Camera(position=(1.5, -0.5, 1.2), look_at=(0, 0, 1.0), width=128, height=64, projection="equirect")
    with GLRenderer(library) as r:
        late = r.render(room, pano)
        masks = r.render(room, pano, color=False)
        r.render(_panels({"shade": 1}), CAM)
        now = r.render(room, pano)
        now_depth = now.depth.copy()
        late_depth = late.depth
    assert np.array_equal(late_depth, now_depth) and np.array_equal(masks.depth, now_depth)
    assert late_depth.dtype == np.float32 and np.isfinite(late_depth).all()  # a room: every ray hits
    assert _same(late, _fresh(library, room, pano))


def test_render_result_computes_a_lazy_depth_once() -> None:
    calls = []

    def depth() -> np.ndarray:
        calls.append(1)
        return np.ones((2, 3), dtype=np.float32)

    res = RenderResult(np.zeros((2, 3, 3), np.uint8), depth, np.zeros((2, 3), np.int32))
    assert not calls
    assert res.depth is res.depth and len(calls) == 1
    res.depth = np.zeros((2, 3), np.float32)
    assert not res.depth.any()


def test_id_layer_marks_background_and_whole_instance_numbers(library) -> None:
    from perspecta.render.gl import GLRenderer

    scene = _panels({"shade": 0}, {"shade": 1})
    sky = Camera(position=(3.5, -0.5, 1.4), look_at=(3.5, -0.5, 3.0), fov_y=45, width=32, height=32)
    with GLRenderer(library) as r:
        res = r.render(Scene("t", 0, "studio", scene.objects, [], ground=None), CAM)
        up = r.render(scene, sky)
    assert set(np.unique(res.instance)) == {0, 1, 2}
    assert np.isinf(res.depth[res.instance == 0]).all()  # no ground: background is "no hit"
    assert np.isfinite(res.depth[res.instance > 0]).all() and (res.depth[res.instance > 0] > 0).all()
    assert np.isinf(up.depth).all() and not up.instance.any()  # looking at the sky only


def test_colour_render_reuses_a_mask_only_renders_layers_of_the_same_view(library) -> None:
    """A colour render right after a mask-only render of the same view takes its id and
    depth layers (no second id pass); a moved object, another camera or another instance
    number must not: each render equals a fresh renderer's."""
    from perspecta.render.gl import GLRenderer

    scene = _panels({"shade": 0}, {"shade": 1})
    moved = _panels({"shade": 0}, {"shade": 1})
    moved.objects[1].pose = Pose((0.0, 0.9, 0.0), yaw=25)
    # a panel behind the camera is culled: the same draws, each one instance number up
    behind = SceneObject("b", "test:panel", "panel", Pose((9.0, 0.0, 0.0)), params={"shade": 2})
    shifted = Scene("t", 0, "studio", [behind, *scene.objects], [])
    other = Camera(position=(3.0, 1.0, 1.6), look_at=(0, 0, 0.5), fov_y=45, width=80, height=64)
    with GLRenderer(library) as r:
        masks = r.render(scene, CAM, color=False)
        masks.instance[:] = 7  # a caller editing its layers must not reach the kept copy
        full = r.render(scene, CAM)
        assert _same(full, _fresh(library, scene))
        # the kept layers really serve the next colour render of this view
        key = next(reversed(r._id_frames))
        meshes, zcam, inst = r._id_frames[key]
        r._id_frames[key] = (meshes, zcam, np.full_like(inst, 5))
        assert (r.render(scene, CAM).instance == 5).all()
        for changed, cam in ((moved, CAM), (scene, other), (shifted, CAM)):
            r.render(scene, CAM, color=False)
            got = r.render(changed, cam)
            want = _fresh(library, changed, cam)
            assert _same(got, want)
            assert not np.array_equal(got.instance, full.instance)


def test_textures_are_made_on_the_first_colour_draw_only(library) -> None:
    """A mask-only render uploads no texture (neither a mesh's nor the grass ground's);
    the colour render after it still equals a fresh renderer's, pixel for pixel."""
    from perspecta.render.gl import GLRenderer
    from perspecta.world.scene import Ground

    scene = _panels({"shade": 0}, {"shade": 1})
    scene.ground = Ground(material="grass")
    with GLRenderer(library) as r:
        masks = r.render(scene, CAM, color=False)
        skins = [p[3] for o in scene.objects for p in r._gpu_mesh("test:panel", o.params).parts]
        skins += [p[3] for p in r._static_mesh(scene).parts]
        assert len(skins) == 3 and all(s is not None and s.tex is None for s in skins)
        full = r.render(scene, CAM)
        assert all(s.tex is not None for s in skins)
    fresh = _fresh(library, scene)
    assert _same(full, fresh)
    assert np.array_equal(masks.instance, fresh.instance) and np.array_equal(masks.depth, fresh.depth)
