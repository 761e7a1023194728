"""GLRenderer and panorama geometry against hand-computed expectations.

The scenes use a private asset source (unit boxes built from trimesh primitives) so
these tests depend only on the mesh/library contracts, not on other asset sources.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from perspecta.assets.library import AssetInfo, AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart, flat_normals
from perspecta.render.panorama import (
    equirect_lut,
    longitude_latitude_to_pixel,
    pixel_to_longitude_latitude,
    project_equirect,
    world_to_longitude_latitude,
)
from perspecta.world.scene import Camera, Light, Pose, Room, Scene, SceneObject

RED = (0.9, 0.1, 0.1)
BLUE = (0.2, 0.3, 0.8)
GREY = (0.8, 0.8, 0.8)


def _box_soup() -> tuple[np.ndarray, np.ndarray]:
    m = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    tri = np.asarray(m.triangles, dtype=np.float32).copy()
    tri[:, :, 2] += 0.5  # origin at the bottom centre
    n = flat_normals(tri.reshape(-1, 3)).reshape(-1, 3, 3)
    return tri, n


def _panel_mesh() -> Mesh:
    """A 1 m square facing +X (x = 0), textured top half red, bottom half green."""
    p = np.array(
        [[0, -0.5, 0], [0, 0.5, 0], [0, 0.5, 1], [0, -0.5, 0], [0, 0.5, 1], [0, -0.5, 1]],
        dtype=np.float32,
    )
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], dtype=np.float32)
    tex = np.zeros((8, 8, 3), dtype=np.uint8)
    tex[:4] = (230, 20, 20)  # image top rows -> v = 1 (OBJ convention)
    tex[4:] = (20, 200, 20)
    n = np.tile(np.array([1, 0, 0], dtype=np.float32), (6, 1))
    return Mesh([MeshPart(p, n, (1.0, 1.0, 1.0), uvs=uv, texture=tex)])


class BoxSource:
    """test:box (grey unit box) and test:cube_px (blue cube whose +X face is red)."""

    name = "test"

    def __init__(self) -> None:
        self.loads = 0

    def list(self) -> list[AssetInfo]:
        return [
            AssetInfo("test:box", "box", "test", (1, 1, 1), has_front=False),
            AssetInfo("test:cube_px", "cube", "test", (1, 1, 1)),
            AssetInfo("test:panel", "panel", "test", (0.01, 1, 1)),
        ]

    def load(self, info: AssetInfo, params: dict) -> Mesh:
        self.loads += 1
        if info.asset_id == "test:panel":
            return _panel_mesh()
        tri, n = _box_soup()
        if info.asset_id == "test:box":
            return Mesh([MeshPart(tri.reshape(-1, 3), n.reshape(-1, 3), GREY)])
        px = n[:, 0, 0] > 0.9
        return Mesh(
            [
                MeshPart(tri[~px].reshape(-1, 3), n[~px].reshape(-1, 3), BLUE),
                MeshPart(tri[px].reshape(-1, 3), n[px].reshape(-1, 3), RED, tintable=False),
            ]
        )


@pytest.fixture(scope="module")
def source() -> BoxSource:
    return BoxSource()


@pytest.fixture(scope="module")
def renderer(source: BoxSource):
    from perspecta.render.gl import GLRenderer

    r = GLRenderer(AssetLibrary([source]), ssaa=2, shadow_map_size=1024)
    yield r
    r.close()


def _scene(objects: list[SceneObject], **kw) -> Scene:
    return Scene("t", 0, "studio", objects, [], **kw)


def _srgb8(lin: float) -> float:
    """Hand-written sRGB encoding for expected values."""
    c = min(max(lin, 0.0), 1.0)
    s = c * 12.92 if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055
    return 255 * s


def _lin(s: float) -> float:
    return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4


# ---------------------------------------------------------------- perspective


def test_version_and_name(renderer) -> None:
    assert renderer.name == "gl"
    assert renderer.version.startswith("moderngl-5.13")
    assert "llvmpipe" in renderer.version or "/" in renderer.version


def test_mask_matches_camera_projection(renderer) -> None:
    obj = SceneObject("a", "test:box", "box", Pose((0.6, 0.4, 0.0), yaw=25), scale=0.5,
                      size=(0.5, 0.5, 0.5))
    cam = Camera(position=(3.0, -2.0, 1.6), look_at=(0.0, 0.0, 0.3), fov_y=50, width=160, height=120)
    res = renderer.render(_scene([obj]), cam)
    assert res.rgb.shape == (120, 160, 3) and res.rgb.dtype == np.uint8
    assert res.depth.shape == (120, 160) and res.depth.dtype == np.float32
    assert res.instance.shape == (120, 160) and res.instance.dtype == np.int32
    ys, xs = np.nonzero(res.instance == 1)
    assert len(xs) > 200
    # The silhouette of a convex box is the hull of its projected corners: its pixel
    # bounding box must match to the pixel (pixel i covers [i, i + 1)).
    uv, _ = cam.project(obj.corners())
    assert abs(xs.min() - uv[:, 0].min()) <= 1.0 and abs(xs.max() + 1 - uv[:, 0].max()) <= 1.0
    assert abs(ys.min() - uv[:, 1].min()) <= 1.0 and abs(ys.max() + 1 - uv[:, 1].max()) <= 1.0
    # and the mask centroid sits near the projected centre
    c_uv, _ = cam.project(obj.center())
    assert np.hypot(xs.mean() + 0.5 - c_uv[0, 0], ys.mean() + 0.5 - c_uv[0, 1]) < 2.0


def test_depth_and_face_colour_from_plus_x(renderer) -> None:
    obj = SceneObject("a", "test:cube_px", "cube", Pose((0.0, 0.0, 0.0)))
    cam = Camera(position=(4.0, 0.0, 0.5), look_at=(0.0, 0.0, 0.5), fov_y=40, width=96, height=96)
    res = renderer.render(_scene([obj]), cam)
    # the +X face is the plane x = 0.5, perpendicular to the view axis: z = 4 - 0.5
    assert res.instance[48, 48] == 1
    assert res.depth[48, 48] == pytest.approx(3.5, abs=1e-4)
    assert res.depth[40:56, 40:56] == pytest.approx(3.5, abs=1e-4)
    # Expected colour, by hand: Lambert with the default sun (-0.4, 0.3, -1) on normal +X,
    # hemispherical ambient 0.35 * mix(0.55, 1, 0.5) (the sky fill comes from the side
    # opposite the sun, -X here, so it adds nothing), plus the sun highlight and the
    # Fresnel sky reflection seen head-on, all in linear light, then sRGB.
    from perspecta.render.gl import ALBEDO_FLOOR, SPECULAR

    d = np.array([-0.4, 0.3, -1.0]) / np.linalg.norm([-0.4, 0.3, -1.0])
    ndl = max(-d[0], 0.0)
    light = 0.35 * 0.775 + ndl
    v = np.array([1.0, 0.0, 0.0])
    h = (v - d) / np.linalg.norm(v - d)
    highlight = SPECULAR * ndl * max(h[0], 0.0) ** 40
    t = (0.0 + 0.2) / 0.6  # smoothstep(-0.2, 0.4, z of the reflected ray = 0)
    env = 0.35 * (0.55 + 0.45 * (3 * t * t - 2 * t ** 3))
    reflection = SPECULAR * 0.04 * env
    expected = [_srgb8(max(_lin(c), ALBEDO_FLOOR) * light + highlight + reflection) for c in RED]
    assert np.abs(res.rgb[48, 48].astype(float) - expected).max() <= 2.0
    # background (sky) has infinite depth and id 0
    assert np.isinf(res.depth[0, 0]) and res.instance[0, 0] == 0


def test_black_object_keeps_its_shape(renderer) -> None:
    """A near-black box is not a silhouette: its pixels are well above black and its
    three visible faces (top, sunny side, shadow side) differ in brightness."""
    obj = SceneObject("a", "test:box", "box", Pose((0.0, 0.0, 0.0), yaw=20), color=(0.02, 0.02, 0.02))
    cam = Camera(position=(3.0, -2.2, 2.2), look_at=(0, 0, 0.5), width=96, height=96)
    res = renderer.render(_scene([obj], light=Light(direction=(0.5, 0.4, -0.8))), cam)
    mask = res.instance == 1
    lum = res.rgb.astype(float) @ np.array([0.2126, 0.7152, 0.0722])
    assert mask.sum() > 1000
    assert lum[mask].mean() > 35.0  # the pure-Lambert renderer gave 5.6
    # face brightness levels: a silhouette has one level; a lit box has three
    levels = np.unique(np.round(lum[mask] / 6.0))
    counts = [(np.round(lum[mask] / 6.0) == lv).sum() for lv in levels]
    assert sum(c > 100 for c in counts) >= 3


def test_plus_x_face_only_visible_from_plus_x(renderer) -> None:
    obj = SceneObject("a", "test:cube_px", "cube", Pose((0.0, 0.0, 0.0)), color=(0.1, 0.8, 0.1))
    front = renderer.render(
        _scene([obj]), Camera(position=(3, 0.3, 1.2), look_at=(0, 0, 0.5), width=64, height=64)
    )
    back = renderer.render(
        _scene([obj]), Camera(position=(-3, 0.3, 1.2), look_at=(0, 0, 0.5), width=64, height=64)
    )

    def reddish(rgb: np.ndarray) -> int:
        r, g, b = (rgb[..., i].astype(int) for i in range(3))
        return int(((r > 120) & (g < 60) & (b < 60)).sum())

    assert reddish(front.rgb) > 300  # the red face is not tintable: it stays red
    assert reddish(back.rgb) == 0
    # the tint recolours the tintable body green
    body = back.rgb[back.instance == 1].astype(int)
    assert (body[:, 1] > body[:, 0] + 40).mean() > 0.9


def test_two_renders_bit_identical(renderer, source) -> None:
    from perspecta.render.gl import GLRenderer

    objs = [
        SceneObject("a", "test:cube_px", "cube", Pose((0, 0, 0), yaw=30)),
        SceneObject("b", "test:box", "box", Pose((1.2, 0.8, 0)), scale=0.6, color=(0.9, 0.7, 0.2)),
    ]
    cam = Camera(position=(3, -2.5, 2), look_at=(0, 0, 0.4), width=96, height=80)
    a = renderer.render(_scene(objs), cam)
    b = renderer.render(_scene(objs), cam)
    other = GLRenderer(AssetLibrary([source]), ssaa=2, shadow_map_size=1024)
    try:
        c = other.render(_scene(objs), cam)
    finally:
        other.close()
    for r in (b, c):
        assert np.array_equal(a.rgb, r.rgb)
        assert np.array_equal(a.depth, r.depth)
        assert np.array_equal(a.instance, r.instance)
    assert set(np.unique(a.instance)) == {0, 1, 2}


def test_shadow_falls_away_from_the_sun(renderer) -> None:
    # sun travelling toward +X at 53 deg elevation: a 1 m box at the origin throws a
    # shadow over x in (0.5, 1.25] on the ground
    obj = SceneObject("a", "test:box", "box", Pose((0, 0, 0)))
    scene = _scene([obj], light=Light(direction=(0.6, 0.0, -0.8), ambient=0.35))
    cam = Camera(position=(0.5, -6, 5), look_at=(0.5, 0, 0), width=128, height=128)
    res = renderer.render(scene, cam)
    (u_s, v_s), (u_l, v_l), (u_w, v_w) = cam.project(
        np.array([[0.9, 0.0, 0.0], [0.9, 2.2, 0.0], [-0.9, 0.0, 0.0]])
    )[0]
    shadow = res.rgb[int(v_s), int(u_s)].astype(float)
    lit = res.rgb[int(v_l), int(u_l)].astype(float)
    sunny_side = res.rgb[int(v_w), int(u_w)].astype(float)
    assert res.instance[int(v_s), int(u_s)] == 0 and np.isfinite(res.depth[int(v_s), int(u_s)])
    assert shadow.mean() < 0.8 * lit.mean()
    assert abs(sunny_side.mean() - lit.mean()) < 6  # no shadow toward the sun


def test_textured_part_uses_obj_uv_convention(renderer) -> None:
    obj = SceneObject("p", "test:panel", "panel", Pose((0, 0, 0)))
    cam = Camera(position=(3, 0, 0.5), look_at=(0, 0, 0.5), fov_y=30, width=64, height=64)
    res = renderer.render(_scene([obj], ground=None), cam)
    (u_top, v_top), (u_bot, v_bot) = cam.project(np.array([[0, 0, 0.8], [0, 0, 0.2]]))[0]
    top = res.rgb[int(v_top), int(u_top)].astype(int)
    bot = res.rgb[int(v_bot), int(u_bot)].astype(int)
    assert top[0] > top[1] + 80  # red at the top (v = 1 is the image's top row)
    assert bot[1] > bot[0] + 80


def test_room_is_lit_through_the_ceiling(renderer) -> None:
    room = Room(width=6, depth=5, height=2.6)
    scene = Scene("r", 0, "room", [], [], ground=None, room=room)
    cam = Camera(position=(0, -2, 1.5), look_at=(0, 1, 0.8), fov_y=70, width=96, height=96)
    res = renderer.render(scene, cam)
    assert np.isfinite(res.depth).all() and (res.instance == 0).all()  # closed box
    # the floor gets the sun on top of ambient light (the shell casts no shadow)
    (u, v), = cam.project(np.array([[0.0, 0.0, 0.0]]))[0]
    floor = res.rgb[int(v), int(u)].astype(float)
    ambient_only = [_srgb8(_lin(c) * 0.5) for c in room.floor_color]
    assert (floor > np.array(ambient_only) + 15).all()
    assert res.rgb.mean() > 90  # walls and ceiling readable, not black


def test_gpu_mesh_cache_per_asset_and_params(renderer, source) -> None:
    objs = [
        SceneObject("a", "test:box", "box", Pose((0, 0, 0)), params={"seed": 1}),
        SceneObject("b", "test:box", "box", Pose((1.5, 0, 0)), params={"seed": 1}),
        SceneObject("c", "test:box", "box", Pose((-1.5, 0, 0)), params={"seed": 2}),
    ]
    cam = Camera(position=(0, -6, 2), look_at=(0, 0, 0.5), width=48, height=32)
    renderer.render(_scene(objs), cam)
    before = source.loads
    renderer.render(_scene(objs), cam)
    assert source.loads == before
    keys = [k for k in renderer._meshes if k.startswith("test:box{") and "seed" in k]
    assert sorted(keys) == ['test:box{"seed": 1}', 'test:box{"seed": 2}']


def test_bad_cameras_are_rejected(renderer) -> None:
    obj = SceneObject("a", "test:box", "box")
    with pytest.raises(ValueError, match="2:1"):
        renderer.render(_scene([obj]), Camera(projection="equirect", width=100, height=100))
    with pytest.raises(ValueError, match="projection"):
        renderer.render(_scene([obj]), Camera(projection="fisheye"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fov_y"):
        renderer.render(_scene([obj]), Camera(fov_y=0))


def test_msaa_mode_is_deterministic(source) -> None:
    from perspecta.render.gl import GLRenderer

    obj = SceneObject("a", "test:cube_px", "cube", Pose((0, 0, 0), yaw=30))
    cam = Camera(position=(3, -2, 2), look_at=(0, 0, 0.4), width=64, height=64)
    with GLRenderer(AssetLibrary([source]), ssaa=1, msaa=4, shadow_map_size=512) as r:
        a, b = r.render(_scene([obj]), cam), r.render(_scene([obj]), cam)
    assert np.array_equal(a.rgb, b.rgb)
    # edge pixels are blends, i.e. the image is anti-aliased
    assert len(np.unique(a.rgb.reshape(-1, 3), axis=0)) > 20


# ---------------------------------------------------------------- panoramas


def test_longitude_latitude_pixel_convention() -> None:
    w, h = 1024, 512
    u, v = longitude_latitude_to_pixel(np.array([0.0, 90.0, -90.0, 180.0, 0.0]),
                                       np.array([0.0, 0.0, 0.0, 0.0, 90.0]), w, h)
    assert np.allclose(u, [512, 768, 256, 0, 512])
    assert np.allclose(v, [256, 256, 256, 256, 0])
    lon, lat = pixel_to_longitude_latitude(np.array([0.0, 512.0, 1023.5]), np.array([512.0, 128.0, 0.0]), w, h)
    assert np.allclose(lon, [-180, 0, 179.82421875]) and np.allclose(lat, [-90, 45, 90])
    rng = np.random.default_rng(0)
    lo, la = rng.uniform(-180, 180, 50), rng.uniform(-89, 89, 50)
    back = pixel_to_longitude_latitude(*longitude_latitude_to_pixel(lo, la, w, h), w, h)
    assert np.allclose(back[0], lo) and np.allclose(back[1], la)


def test_world_to_longitude_latitude_turns_right() -> None:
    cam = Camera(position=(0, 0, 1), look_at=(0, 5, 3), projection="equirect", width=64, height=32)
    # forward = +Y (pitch ignored); right = forward x up = +X; behind = -Y
    lon, lat, dist = world_to_longitude_latitude(
        cam, np.array([[0, 5, 1], [3, 0, 1], [-3, 0, 1], [0, -2, 1], [0, 1, 2]])
    )
    assert np.allclose(lon[:3], [0, 90, -90]) and abs(abs(lon[3]) - 180) < 1e-9
    assert np.allclose(lat, [0, 0, 0, 0, 45]) and np.allclose(dist[:4], [5, 3, 3, 2])


def test_equirect_lut_is_cached() -> None:
    assert equirect_lut(64, 32, 16) is equirect_lut(64, 32, 16)
    lut = equirect_lut(64, 32, 16)
    assert np.allclose(lut.bilinear_weight.sum(axis=0), 1.0, atol=1e-6)


PANO_CAM = Camera(position=(0, 0, 1.0), look_at=(0, 4, 1.0), projection="equirect", width=256, height=128)


def test_face_coordinates_equal_the_matrix_product_and_einsum() -> None:
    """The LUT's per-ray face and face-frame coordinates, taken component by component,
    equal the matrix form they replace on random rays (axis-aligned and zero components
    included) and on a panorama's own rays; only zero signs may differ."""
    from perspecta.render.panorama import _FACE_AXES, _face_coordinates

    rng = np.random.default_rng(3)
    d = rng.normal(size=(50_000, 3))
    d[rng.random(d.shape) < 0.05] = 0.0
    d[:6] = np.concatenate([np.eye(3), -np.eye(3)])
    d[6:10] = [[1.0, 1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, -1.0, -1.0], [1.0, 1.0, 1.0]]
    d = d[np.linalg.norm(d, axis=1) > 0]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    face, pc = _face_coordinates(d)
    want_face = np.argmax(d @ _FACE_AXES[:, 2, :].T, axis=1)
    np.testing.assert_array_equal(face, want_face)
    np.testing.assert_array_equal(pc, np.einsum("nij,nj->ni", _FACE_AXES[want_face], d))
    lut = equirect_lut(64, 32, 16)  # every face used, forward component positive
    assert set(np.unique(lut.nearest_index // (18 * 18))) == set(range(6))
    assert (lut.ray_scale >= 1.0).all()


def test_panorama_places_objects_by_longitude(renderer) -> None:
    objs = [
        SceneObject("right", "test:box", "box", Pose((3.0, 0.0, 0.0))),  # lon +90
        SceneObject("behind", "test:box", "box", Pose((0.0, -3.0, 0.0))),  # lon 180
        SceneObject("left", "test:box", "box", Pose((-3.0, 0.0, 0.0)), scale=0.5),  # lon -90
    ]
    res = renderer.render(_scene(objs), PANO_CAM)
    w, h = PANO_CAM.width, PANO_CAM.height
    assert res.rgb.shape == (h, w, 3)
    ys, xs = np.nonzero(res.instance == 1)
    assert abs(xs.mean() + 0.5 - 0.75 * w) < 1.5
    # its centre (z = 0.5) is 0.5 m below the eye at 3 m: latitude -atan(0.5 / 3)
    _, v = longitude_latitude_to_pixel(0.0, -math.degrees(math.atan2(0.5, 3.0)), w, h)
    assert abs(ys.mean() + 0.5 - v) < 2.0
    # straight behind: straddles the seam, both image edges
    cols = np.nonzero((res.instance == 2).any(axis=0))[0]
    assert 0 in cols and w - 1 in cols and not (res.instance[:, w // 2 - 20 : w // 2 + 20] == 2).any()
    ys3, xs3 = np.nonzero(res.instance == 3)
    assert abs(xs3.mean() + 0.5 - 0.25 * w) < 1.5
    # the oracle's projection agrees with the render
    uv, _ = project_equirect(PANO_CAM, objs[0].center())
    assert abs(uv[0, 0] - 0.75 * w) < 1e-9


def test_colour_only_render_draws_the_same_pixels_without_layers(renderer) -> None:
    """``layers=False`` (PCSR's colour pass after its masks were measured) skips the id /
    depth pass and returns the same rgb as a full render, perspective and panorama; its
    empty layers make any use of them fail."""
    objs = [SceneObject("a", "test:box", "box", Pose((3.0, 0.0, 0.0))),
            SceneObject("b", "test:box", "box", Pose((0.0, 4.0, 0.0)), scale=0.5)]
    scene = _scene(objs)
    persp = Camera(position=(0, -3, 1.5), look_at=(1, 2, 0.5), width=96, height=64)
    for cam in (PANO_CAM, persp):
        full = renderer.render(scene, cam)
        only = renderer.render(scene, cam, layers=False)
        assert (full.instance > 0).any() and np.array_equal(only.rgb, full.rgb)
        assert only.instance.shape == (0, 0) and only.depth.shape == (0, 0)
        again = renderer.render(scene, cam)  # and a full render after it still has its layers
        assert np.array_equal(again.instance, full.instance) and np.array_equal(again.depth, full.depth)
    with pytest.raises(ValueError, match="nothing to draw"):
        renderer.render(scene, persp, color=False, layers=False)


def test_panorama_depth_is_euclidean(renderer) -> None:
    obj = SceneObject("a", "test:box", "box", Pose((0.0, 3.0, 0.0)), scale=1.0)
    res = renderer.render(_scene([obj]), PANO_CAM)
    w, h = PANO_CAM.width, PANO_CAM.height
    # ground below at latitude -30 deg: the eye is 1 m up, so the ray travels 1 / sin 30 = 2 m
    u, v = longitude_latitude_to_pixel(-90.0, -30.0, w, h)
    assert res.instance[int(v), int(u)] == 0
    lon, lat = pixel_to_longitude_latitude(int(u) + 0.5, int(v) + 0.5, w, h)
    assert res.depth[int(v), int(u)] == pytest.approx(1.0 / math.sin(math.radians(-lat)), rel=2e-3)
    # the box's near face (y = 2.5) straight ahead, slightly below the horizon
    u, v = longitude_latitude_to_pixel(0.0, -5.0, w, h)
    lon, lat = pixel_to_longitude_latitude(int(u) + 0.5, int(v) + 0.5, w, h)
    expected = 2.5 / (math.cos(math.radians(lat)) * math.cos(math.radians(lon)))
    assert res.instance[int(v), int(u)] == 1
    assert res.depth[int(v), int(u)] == pytest.approx(expected, rel=2e-3)
    assert np.isinf(res.depth[0]).all()  # sky at the zenith row


def test_panorama_forward_matches_perspective(renderer) -> None:
    obj = SceneObject("a", "test:cube_px", "cube", Pose((0.0, 3.0, 0.5), yaw=-90))  # red face toward -Y
    scene = _scene([obj])
    pano = renderer.render(scene, PANO_CAM)
    persp = renderer.render(
        scene, Camera(position=PANO_CAM.position, look_at=PANO_CAM.look_at, fov_y=60, width=64, height=64)
    )
    centre = persp.rgb[32, 32].astype(int)
    assert centre[0] > 120 and centre[1] < 60  # looking at the red face
    pano_px = pano.rgb[PANO_CAM.height // 2, PANO_CAM.width // 2].astype(int)
    assert np.abs(pano_px - centre).max() <= 3
    assert pano.depth[PANO_CAM.height // 2, PANO_CAM.width // 2] == pytest.approx(2.5, rel=1e-3)


def test_mesh_cache_is_bounded_but_keeps_the_current_scene(source) -> None:
    from perspecta.render.gl import GLRenderer

    objs = [SceneObject(f"o{i}", "test:box", "box", Pose((1.2 * i - 2.4, 0, 0)), scale=0.5,
                        params={"seed": i}) for i in range(5)]
    cam = Camera(position=(0, -6, 2), look_at=(0, 0, 0.3), width=64, height=32)
    with GLRenderer(AssetLibrary([source]), mesh_cache_size=2, shadow_map_size=256) as r:
        res = r.render(_scene(objs), cam)  # more meshes than the cache holds: all drawn
        assert set(np.unique(res.instance)) == {0, 1, 2, 3, 4, 5}
        assert len(r._meshes) == 5
        r.render(_scene(objs[:1]), cam)
        assert len(r._meshes) == 2 and 'test:box{"seed": 0}' in r._meshes


def test_panorama_directions_on_every_cube_face(renderer) -> None:
    # small boxes 4 m away in directions covering the up, down, back and front/right
    # faces (and a face edge); each mask must centre on its (longitude, latitude)
    dirs = [(120.0, 60.0), (-60.0, -65.0), (-150.0, 20.0), (45.0, 0.0), (10.0, 80.0)]
    basis = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # PANO_CAM fwd/right/up
    objs = []
    for i, (lon, lat) in enumerate(dirs):
        lo, la = math.radians(lon), math.radians(lat)
        local = np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])
        c = np.asarray(PANO_CAM.position) + 4.0 * local @ basis
        objs.append(SceneObject(f"o{i}", "test:box", "box", Pose((c[0], c[1], c[2] - 0.1)),
                                scale=0.2, size=(0.2, 0.2, 0.2)))
    res = renderer.render(_scene(objs, ground=None), PANO_CAM)
    w, h = PANO_CAM.width, PANO_CAM.height
    for i, (lon, lat) in enumerate(dirs):
        ys, xs = np.nonzero(res.instance == i + 1)
        assert len(xs) > 3, (lon, lat)
        got_lon, got_lat = pixel_to_longitude_latitude(xs.mean() + 0.5, ys.mean() + 0.5, w, h)
        assert abs(got_lon - lon) < 3.0 and abs(got_lat - lat) < 3.0, (lon, lat, got_lon, got_lat)
        # the box's near face is ~3.9 m away in that direction
        assert 3.8 < float(res.depth[ys, xs].min()) < 4.0


# ---------------------------------------------------------------- ground materials


def _ground_scene(material: str | None, seed: int = 5) -> Scene:
    ground = {"size": 30.0, "color": [0.6, 0.6, 0.58], "sky_color": [0.78, 0.85, 0.95]}
    if material is not None:
        ground["material"] = material
    d = {"scene_id": "g", "seed": seed, "kind": "studio", "ground": ground,
         "objects": [{"id": "a", "asset_id": "test:box", "category": "box", "scale": 0.5,
                      "size": [0.5, 0.5, 0.5], "pose": {"position": [0.0, 0.0, 0.0]}}]}
    return Scene.from_dict(d)


def test_old_ground_records_render_as_plain(renderer) -> None:
    """A record written before ground materials existed renders byte-identically to an
    explicit plain ground, and differently from a textured one."""
    cam = Camera(position=(3, -2, 1.5), look_at=(0, 0, 0.2), width=64, height=64)
    old = renderer.render(_ground_scene(None), cam)
    plain = renderer.render(_ground_scene("plain"), cam)
    tiles = renderer.render(_ground_scene("tiles"), cam)
    assert _ground_scene(None).ground.material == "plain"
    assert np.array_equal(old.rgb, plain.rgb)
    assert not np.array_equal(old.rgb, tiles.rgb)


def test_textured_ground_shows_camera_motion(renderer) -> None:
    """Moving the camera 15 cm sideways changes ground pixels far more on a textured
    ground than on a plain one (where only shading gradients move)."""
    def change(material: str) -> float:
        a = Camera(position=(3, -2, 1.5), look_at=(0, 0, 0.2), width=96, height=96)
        b = Camera(position=(3.15, -1.9, 1.5), look_at=(0.15, 0.1, 0.2), width=96, height=96)
        ra, rb = (renderer.render(_ground_scene(material), c) for c in (a, b))
        ground = (ra.instance == 0) & (rb.instance == 0) & np.isfinite(ra.depth) & np.isfinite(rb.depth)
        return float(np.abs(ra.rgb.astype(float) - rb.rgb.astype(float))[ground].mean())

    plain = change("plain")
    for material in ("tiles", "paving", "grass"):
        assert change(material) > max(20 * plain, 2.0), material  # plain: ~0.1


def test_ground_texture_is_deterministic_and_seeded() -> None:
    from perspecta.render.ground import ground_texture

    a = ground_texture("grass", 3)
    assert a.shape == (512, 512, 3) and a.dtype == np.uint8
    ground_texture.cache_clear()
    assert np.array_equal(a, ground_texture("grass", 3))
    assert not np.array_equal(a, ground_texture("grass", 4))
    with pytest.raises(ValueError, match="unknown ground material 'lava'"):
        ground_texture("lava", 0)


def test_mask_only_render_has_the_full_renders_layers(renderer) -> None:
    """color=False skips the shadow and colour passes; depth and ids must not change
    (perspective, and an equirect panorama in a room), and its rgb is unusable."""
    objs = [
        SceneObject("a", "test:cube_px", "cube", Pose((0, 0, 0), yaw=30)),
        SceneObject("b", "test:box", "box", Pose((1.2, 0.8, 0)), scale=0.6, color=(0.9, 0.7, 0.2)),
    ]
    cam = Camera(position=(3, -2.5, 2), look_at=(0, 0, 0.4), width=96, height=80)
    room = Scene("r", 0, "room", objs, [], ground=None, room=Room(width=6, depth=5, height=2.6))
    pano = Camera(position=(0.5, -1.5, 1.2), look_at=(0.5, 0, 1.2), width=128, height=64, projection="equirect")
    for scene, camera in ((_scene(objs), cam), (room, pano)):
        full = renderer.render(scene, camera)
        ids = renderer.render(scene, camera, color=False)
        assert np.array_equal(full.depth, ids.depth)
        assert np.array_equal(full.instance, ids.instance)
        assert ids.rgb.size == 0
        assert set(np.unique(full.instance)) >= {1, 2}
        again = renderer.render(scene, camera)  # a mask-only render leaves no state behind
        assert np.array_equal(full.rgb, again.rgb)


def test_shadow_map_reuse_matches_a_fresh_renderer(renderer, source) -> None:
    """A repeat of the same casters and sun reuses the shadow map; any change redraws it.
    Every render must equal the one a fresh renderer (no cached map) makes."""
    from perspecta.render.gl import GLRenderer

    # two casters, one moved against the other (a lone box moved casts the same map:
    # the map is fitted to the casters' bounds)
    still = SceneObject("b", "test:box", "box", Pose((-1.0, 0.5, 0)), scale=0.5)
    objs = [SceneObject("a", "test:box", "box", Pose((0, 0, 0), yaw=20)), still]
    moved = [SceneObject("a", "test:box", "box", Pose((0.7, -0.6, 0), yaw=20)), still]
    cam = Camera(position=(3, -2.5, 2), look_at=(0, 0, 0.4), width=64, height=64)
    side = Camera(position=(-2.5, -3, 1.5), look_at=(0, 0, 0.4), width=64, height=64)
    sequence = [(_scene(objs), cam), (_scene(objs), side), (_scene(moved), cam), (_scene(objs), side)]
    for scene, camera in sequence:
        got = renderer.render(scene, camera).rgb
        with GLRenderer(AssetLibrary([source]), ssaa=2, shadow_map_size=1024) as fresh:
            want = fresh.render(scene, camera).rgb
        assert np.array_equal(got, want)
    # the shadow is really there: the moved box changes the picture of the same camera
    assert not np.array_equal(renderer.render(sequence[0][0], cam).rgb, renderer.render(sequence[2][0], cam).rgb)


def test_gpu_mesh_box_is_the_uploaded_vertices_box(env) -> None:
    """The GPU mesh's lo / hi (frustum culling, shadow fitting) come from Mesh.bounds cast
    to float32: the very values of the uploaded float32 vertices' min and max."""
    lib, renderer = env
    picked = [a for a in lib.all() if a.source == "proc"][:6] + [a for a in lib.all() if a.source != "proc"][:6]
    for info in picked:
        mesh = lib.load_mesh(info.asset_id, {"seed": 3} if info.source == "proc" else {})
        with renderer._context():
            gm = renderer._upload(mesh)
        try:
            allv = np.concatenate([np.asarray(p.positions, dtype=np.float32) for p in mesh.parts if len(p.positions)])
            assert gm.lo.dtype == np.float32 and gm.lo.tobytes() == allv.min(0).tobytes(), info.asset_id
            assert gm.hi.tobytes() == allv.max(0).tobytes(), info.asset_id
        finally:
            with renderer._context():
                gm.release()
