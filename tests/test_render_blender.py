"""Blender Cycles renderer: geometry of the three layers, colours, panorama direction.

The rendering tests need the optional ``bpy`` wheel and are skipped without it; the
expected values are worked out by hand from the scene geometry, not read off a render.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh

from perspecta.assets.library import AssetInfo, AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart, flat_normals
from perspecta.render.blender import linear_to_srgb8, read_exr, srgb_to_linear
from perspecta.world.scene import Camera, Ground, Light, Pose, Scene, SceneObject

SRC = Path(__file__).resolve().parents[1] / "src"
RED = (0.9, 0.1, 0.1)  # the +X face
BLUE = (0.15, 0.3, 0.85)  # every other face


QUADRANTS = {  # texture quadrant (as stored, row 0 = top) -> sRGB uint8 colour
    "top_left": (20, 180, 20),
    "top_right": (20, 40, 200),
    "bottom_left": (200, 20, 20),
    "bottom_right": (230, 230, 230),
}


class BoxSource:
    """A unit cube (bottom centre at the origin) whose +X face alone is red, and a
    1 m textured poster in the plane x = 0 facing +X."""

    name = "test"

    def list(self) -> list[AssetInfo]:
        return [
            AssetInfo("test:box", "box", "test", (1.0, 1.0, 1.0)),
            AssetInfo("test:poster", "poster", "test", (0.0, 1.0, 1.0)),
        ]

    def load(self, info: AssetInfo, params: dict[str, Any]) -> Mesh:
        if info.asset_id == "test:poster":
            return self._poster()
        box = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
        box.apply_translation((0.0, 0.0, 0.5))
        tri = np.asarray(box.vertices)[box.faces]  # (F, 3, 3)
        plus_x = np.all(np.isclose(tri[:, :, 0], 0.5), axis=1)
        parts = []
        for sel, color in ((plus_x, RED), (~plus_x, BLUE)):
            pos = tri[sel].reshape(-1, 3)
            parts.append(MeshPart(pos, flat_normals(pos), color, tintable=False))
        return Mesh(parts)

    @staticmethod
    def _poster() -> Mesh:
        # Seen from +X (looking toward -X), image-right is world +Y (right = forward x up),
        # so u = 0.5 + y grows to the right and
        # v = z grows upward (uv (0, 0) = bottom-left of the texture, as in OBJ).
        corners = np.array([[0, 0.5, 0], [0, -0.5, 0], [0, -0.5, 1], [0, 0.5, 1]], dtype=float)
        pos = corners[[0, 1, 2, 0, 2, 3]]
        uvs = np.stack([0.5 + pos[:, 1], pos[:, 2]], axis=1)
        tex = np.zeros((32, 32, 3), dtype=np.uint8)
        tex[:16, :16] = QUADRANTS["top_left"]
        tex[:16, 16:] = QUADRANTS["top_right"]
        tex[16:, :16] = QUADRANTS["bottom_left"]
        tex[16:, 16:] = QUADRANTS["bottom_right"]
        return Mesh([MeshPart(pos, flat_normals(pos), (1.0, 1.0, 1.0), uvs=uvs, texture=tex)])


def box(oid: str, x: float, y: float, scale: float = 1.0, asset: str = "box") -> SceneObject:
    return SceneObject(
        id=oid,
        asset_id=f"test:{asset}",
        category=asset,
        pose=Pose((x, y, 0.0)),
        scale=scale,
        size=(scale, scale, scale),
        has_front=False,
    )


def make_scene(objects: list[SceneObject]) -> Scene:
    return Scene(
        scene_id="blender-test",
        seed=0,
        kind="studio",
        objects=objects,
        light=Light(direction=(-0.4, 0.3, -1.0), intensity=1.0, ambient=0.35),
        ground=Ground(size=30.0),
    )


@pytest.fixture(scope="module")
def renderer() -> Any:
    pytest.importorskip(
        "bpy",
        reason="optional Blender renderer: install the bpy wheel with "
        "pip install 'perspecta[blender]' (Python 3.11) to run these tests",
    )
    from perspecta.render.blender import BlenderRenderer

    r = BlenderRenderer(AssetLibrary([BoxSource()]), samples=4, denoise=True)
    yield r
    r.close()


@pytest.fixture(scope="module")
def checks_dir() -> Path:
    d = Path("/tmp/blender_checks")
    d.mkdir(parents=True, exist_ok=True)
    return d


def save_png(path: Path, rgb: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(rgb).save(path)


# ---------------------------------------------------------------------------- no bpy needed
def test_module_import_does_not_load_bpy() -> None:
    code = (
        "import sys; import perspecta.render.blender, perspecta.render.base; "
        "assert 'bpy' not in sys.modules, 'bpy imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC)})


def test_missing_bpy_gives_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from perspecta.render.blender import BlenderRenderer

    monkeypatch.setitem(sys.modules, "bpy", None)  # makes `import bpy` raise ImportError
    with pytest.raises(ImportError, match=r"perspecta\[blender\]"):
        BlenderRenderer()


def test_srgb_round_trip() -> None:
    # sRGB 0.6 is linear ((0.6 + 0.055) / 1.055) ** 2.4 = 0.31855 (IEC 61966-2-1);
    # encoding it back gives 0.6 * 255 = 153; out-of-range values clip
    assert srgb_to_linear((0.6,))[0] == pytest.approx(0.31855, abs=1e-4)
    assert srgb_to_linear((0.02,))[0] == pytest.approx(0.02 / 12.92, abs=1e-9)  # linear toe
    encoded = linear_to_srgb8(np.array([0.31855, 0.0, 1.0, 2.0, -1.0]))
    assert encoded.tolist() == [153, 0, 255, 255, 0]


def test_read_exr_rejects_other_files(tmp_path: Path) -> None:
    p = tmp_path / "x.exr"
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    with pytest.raises(ValueError, match="not an OpenEXR"):
        read_exr(p)


# ---------------------------------------------------------------------------- rendering
@pytest.mark.blender
def test_perspective_mask_depth_and_background(renderer: Any, checks_dir: Path) -> None:
    # Camera 8 m in front (-Y) of the x = 0 plane, eye height 1.5 m, looking level.
    # A 0.6 m box at (1, 0) sits right of and below the image centre.
    obj = box("b", 1.0, 0.0, scale=0.6)
    scene = make_scene([obj])
    cam = Camera(
        position=(0.0, -8.0, 1.5), look_at=(0.0, 0.0, 1.5), fov_y=30.0, width=96, height=96
    )
    res = renderer.render(scene, cam)
    save_png(checks_dir / "perspective_box.png", res.rgb)

    assert res.rgb.shape == (96, 96, 3) and res.rgb.dtype == np.uint8
    assert res.depth.shape == (96, 96) and res.depth.dtype == np.float32
    assert res.instance.shape == (96, 96) and res.instance.dtype == np.int32
    assert set(np.unique(res.instance).tolist()) == {0, 1}

    # f = 48 / tan(15 deg) = 179.1 px; the box centre (1, 0, 0.3) is 8 m deep,
    # 1 m right, 1.2 m down -> (48 + 22.4, 48 + 26.9).
    f = 48.0 / math.tan(math.radians(15.0))
    expected = np.array([48.0 + f * 1.0 / 8.0, 48.0 + f * 1.2 / 8.0])
    (uv,), _ = cam.project(obj.center())
    assert np.allclose(uv, expected, atol=1e-6)
    ys, xs = np.nonzero(res.instance == 1)
    centroid = np.array([xs.mean() + 0.5, ys.mean() + 0.5])
    assert np.linalg.norm(centroid - uv) < 2.0, (centroid, uv)
    # front face is 0.6 m square at 7.7 m: ~14 px wide; with the visible top and side ~230 px
    assert 180 < len(xs) < 300

    # The -Y face is the plane y = -0.3, i.e. planar depth 7.7 m everywhere on it,
    # although the ray length there is ~7.8 m (1 m off-axis) - Cycles' Z is planar.
    u, v = int(round(48 + f * 1.0 / 7.7)), int(round(48 + f * 1.35 / 7.7))
    assert res.instance[v, u] == 1
    assert res.depth[v, u] == pytest.approx(7.7, abs=0.01)

    # The top rows see sky: background, infinite depth. The ground is finite but index 0.
    assert np.all(np.isinf(res.depth[:5])) and np.all(res.instance[:5] == 0)
    ground_z = 1.5 * f / (90.5 - 48.0)  # row 90 (centre 90.5): ray meets z = 0 at this depth
    assert res.instance[90, 10] == 0
    assert res.depth[90, 10] == pytest.approx(ground_z, rel=0.03)  # sample-0 jitter


@pytest.mark.blender
def test_plus_x_face_colour_seen_from_plus_x(renderer: Any, checks_dir: Path) -> None:
    scene = make_scene([box("b", 0.0, 0.0)])
    results = {}
    for side in (+1, -1):
        cam = Camera(
            position=(6.0 * side, 0.0, 0.5), look_at=(0.0, 0.0, 0.5), fov_y=30.0,
            width=64, height=64,
        )
        res = renderer.render(scene, cam)
        results[side] = res.rgb[26:38, 26:38].reshape(-1, 3).astype(float).mean(axis=0)
        if side == 1:
            save_png(checks_dir / "plus_x_face.png", res.rgb)
            # the +X face is the plane x = 0.5, 5.5 m from the camera
            assert res.depth[32, 32] == pytest.approx(5.5, abs=0.01)
    r, g, b = results[+1]
    assert r > 110 and r > 2.5 * max(g, b), results[+1]  # red face toward +X
    r, g, b = results[-1]
    assert b > 70 and b > 1.5 * max(r, g), results[-1]  # the opposite (-X) face is blue


@pytest.mark.blender
def test_equirect_longitude_grows_to_the_right(renderer: Any, checks_dir: Path) -> None:
    # Observer at eye height 0.5 facing +X; "right" is then -Y. Box 1 stands 3 m to
    # the right, box 2 3 m to the left, so they should centre at u = 0.75 W and 0.25 W.
    scene = make_scene([box("right", 0.0, -3.0), box("left", 0.0, 3.0)])
    # look_at is 5.7 deg below the horizon: the panorama must stay level (DESIGN.md)
    cam = Camera(position=(0.0, 0.0, 0.5), look_at=(5.0, 0.0, 0.0), width=128, height=64,
                 projection="equirect")
    res = renderer.render(scene, cam)
    save_png(checks_dir / "equirect_two_boxes.png", res.rgb)
    for idx, u_expected in ((1, 0.75 * 128), (2, 0.25 * 128)):
        ys, xs = np.nonzero(res.instance == idx)
        assert len(xs) > 20
        assert xs.mean() + 0.5 == pytest.approx(u_expected, abs=2.0)
        assert ys.mean() + 0.5 == pytest.approx(32.0, abs=3.0)  # centred on the horizon
    # Equirect depth is Euclidean distance. The near face of the right box is the
    # plane y = -2.5; pixel (31, 96) looks 1.4 deg past "right" and 1.4 deg up.
    lon = (96 + 0.5) / 128 * 360.0 - 180.0
    lat = (32 - 31.5) / 64 * 180.0
    expected = 2.5 / (math.cos(math.radians(lon - 90.0)) * math.cos(math.radians(lat)))
    assert res.instance[31, 96] == 1
    assert res.depth[31, 96] == pytest.approx(expected, abs=0.015)
    # Row 56 looks 67.5 deg down at the ground in every direction: the distance is
    # 0.5 / sin(67.5 deg) = 0.541 m whatever the longitude (a planar depth would not be).
    for col in (10, 45, 64, 80, 120):
        assert res.instance[56, col] == 0
        assert res.depth[56, col] == pytest.approx(0.5 / math.sin(math.radians(67.5)), rel=0.03)


@pytest.mark.blender
def test_texture_orientation(renderer: Any, checks_dir: Path) -> None:
    scene = make_scene([box("p", 0.0, 0.0, asset="poster")])
    scene.light = Light(direction=(-1.0, 0.0, -0.2), intensity=1.0, ambient=0.4)  # lights +X
    cam = Camera(position=(3.0, 0.0, 0.5), look_at=(0.0, 0.0, 0.5), fov_y=30.0, width=64, height=64)
    res = renderer.render(scene, cam)
    save_png(checks_dir / "texture_quadrants.png", res.rgb)
    # the 1 m poster spans 64 / (2 tan 15) / 3 = 39.8 px around the centre: sample
    # the middle of each quadrant, 10 px from the centre
    seen = {
        "top_left": res.rgb[22, 22],
        "top_right": res.rgb[22, 42],
        "bottom_left": res.rgb[42, 22],
        "bottom_right": res.rgb[42, 42],
    }
    for name, rgb in seen.items():
        ref = np.asarray(QUADRANTS[name], dtype=float)
        dominant = int(np.argmax(ref)) if np.ptp(ref) > 0 else None
        if dominant is None:  # white quadrant: bright and grey
            assert rgb.min() > 120 and np.ptp(rgb.astype(int)) < 40, (name, rgb)
        else:
            others = [int(rgb[k]) for k in range(3) if k != dominant]
            assert int(rgb[dominant]) > 2 * max(others), (name, rgb)


@pytest.mark.blender
def test_two_renders_are_identical(renderer: Any) -> None:
    scene = make_scene([box("b", 0.0, 0.0), box("c", 1.2, 1.0, scale=0.5)])
    cam = Camera(
        position=(3.0, -3.0, 2.0), look_at=(0.0, 0.0, 0.5), fov_y=45.0, width=64, height=64
    )
    a = renderer.render(scene, cam)
    b = renderer.render(scene, cam)
    assert np.array_equal(a.rgb, b.rgb)
    assert np.array_equal(a.depth, b.depth)
    assert np.array_equal(a.instance, b.instance)
    assert set(np.unique(a.instance).tolist()) == {0, 1, 2}


@pytest.mark.blender
def test_bad_input_is_rejected(renderer: Any) -> None:
    from perspecta.render.blender import BlenderRenderer

    with pytest.raises(ValueError, match="samples"):
        BlenderRenderer(samples=0)
    scene = make_scene([box("b", 0.0, 0.0)])
    with pytest.raises(ValueError, match="AssetLibrary"):
        BlenderRenderer(library=None).render(scene, Camera(width=32, height=32))
    with pytest.raises(ValueError, match="fov_y"):
        renderer.render(scene, Camera(fov_y=0.0, width=32, height=32))
