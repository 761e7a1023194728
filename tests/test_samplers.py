"""Scene samplers: determinism, geometry constraints and clear failures.

A small in-test asset source provides furniture boxes with known sizes (so room tests
do not depend on the SH3D package); procedural families supply the rest.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import trimesh

from perspecta.assets.library import AssetInfo, AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart, flat_normals
from perspecta.assets.procedural import ProceduralSource
from perspecta.world.samplers import (
    Rect,
    SamplingError,
    sample_clutter,
    sample_room,
    sample_studio,
    visibility,
)
from perspecta.world.scene import Camera, Pose, Scene, SceneObject

# category: (depth x, width y, height z, has_front)
FURNITURE: dict[str, tuple[float, float, float, bool]] = {
    "bed": (2.05, 1.6, 0.55, True),
    "nightstand": (0.4, 0.45, 0.55, True),
    "wardrobe": (0.6, 1.2, 2.0, True),
    "desk": (0.6, 1.2, 0.75, True),
    "tv": (0.2, 1.0, 0.6, True),
    "lamp": (0.35, 0.35, 1.6, False),
    "plant": (0.4, 0.4, 1.0, False),
    "armchair": (0.8, 0.8, 0.9, True),
    "sofa": (0.9, 2.0, 0.85, True),
    "coffee_table": (0.6, 1.1, 0.45, False),
    "bookcase": (0.35, 0.9, 1.9, True),
    "cabinet": (0.5, 0.8, 0.9, True),
    "refrigerator": (0.7, 0.7, 1.8, True),
    "stove": (0.6, 0.6, 0.9, True),
    "sink": (0.55, 0.6, 0.9, True),
    "toilet": (0.7, 0.4, 0.8, True),
    "bathtub": (0.75, 1.7, 0.55, True),
}
# pieces that must stand with their back to a wall, front into the room
WALL_CATEGORIES = {"bed", "nightstand", "wardrobe", "desk", "tv", "sofa", "bookcase", "cabinet",
                   "refrigerator", "stove", "sink", "toilet", "bathtub"}  # fmt: skip


def box_mesh(size: tuple[float, float, float]) -> Mesh:
    tm = trimesh.creation.box(extents=size)
    tm.apply_translation((0.0, 0.0, size[2] / 2))
    pos = tm.vertices[tm.faces].reshape(-1, 3)
    return Mesh([MeshPart(pos, flat_normals(pos))])


class FurnitureSource:
    """Boxes of fixed sizes standing in for furniture."""

    name = "test"

    def list(self) -> list[AssetInfo]:
        return [
            AssetInfo(f"test:{c}", c, self.name, (d, w, h), has_front=f)
            for c, (d, w, h, f) in FURNITURE.items()
        ]

    def load(self, info: AssetInfo, params: dict[str, Any]) -> Mesh:
        d, w, h, _ = FURNITURE[info.category]
        return box_mesh((d, w, h))


class OnlySource:
    """A source offering just the given procedural families (for impossible requests)."""

    name = "proc"

    def __init__(self, families: list[str]) -> None:
        self.inner = ProceduralSource()
        self.families = families

    def list(self) -> list[AssetInfo]:
        return [a for a in self.inner.list() if a.category in self.families]

    def load(self, info: AssetInfo, params: dict[str, Any]) -> Mesh:
        return self.inner.load(info, params)


@pytest.fixture(scope="module")
def proc_lib() -> AssetLibrary:
    return AssetLibrary([ProceduralSource()], cache_size=256)


@pytest.fixture(scope="module")
def room_lib() -> AssetLibrary:
    return AssetLibrary([ProceduralSource(), FurnitureSource()], cache_size=256)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- helpers


def footprints_intersect(a: SceneObject, b: SceneObject, n: int = 15) -> bool:
    """Independent of Rect: sample a grid over each footprint, test it in the other's frame."""
    for p, q in ((a, b), (b, a)):
        t = np.linspace(-0.5, 0.5, n)
        gx, gy = np.meshgrid(t * p.size[0], t * p.size[1])
        local = np.stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)], axis=1)
        world = local @ p.pose.rotation().T + p.position
        in_q = (world - q.position) @ q.pose.rotation()  # world -> q's frame
        if np.any((np.abs(in_q[:, 0]) < q.size[0] / 2) & (np.abs(in_q[:, 1]) < q.size[1] / 2)):
            return True
    return False


def assert_size_from_mesh(scene: Scene, lib: AssetLibrary) -> None:
    for o in scene.objects:
        extent = lib.load_mesh(o.asset_id, o.params).extent()
        np.testing.assert_allclose(o.size, extent * o.scale, rtol=1e-6, atol=1e-9)
        info = lib.get(o.asset_id)
        assert (o.has_front, o.symmetric, o.category) == (info.has_front, info.symmetric, info.category)
        if o.asset_id.startswith("proc:"):
            assert isinstance(o.params.get("seed"), int)


# ----------------------------------------------------------------------------- footprints


def test_rect_overlap_hand_cases() -> None:
    a = Rect(0.0, 0.0, 0.5, 0.5)
    assert not a.overlaps(Rect(1.05, 0.0, 0.5, 0.5), gap=0.04)  # 5 cm apart
    assert a.overlaps(Rect(1.05, 0.0, 0.5, 0.5), gap=0.1)
    assert a.overlaps(Rect(0.9, 0.9, 0.5, 0.5))
    # a unit square turned 45 degrees reaches sqrt(0.5) = 0.7071 along x
    assert a.overlaps(Rect(1.2, 0.0, 0.5, 0.5, 45.0))  # 0.5 + 0.7071 > 1.2
    assert not a.overlaps(Rect(1.25, 0.0, 0.5, 0.5, 45.0))
    # long thin rectangles crossing like a plus sign: no corner inside the other
    assert Rect(0, 0, 2.0, 0.1).overlaps(Rect(0, 0, 2.0, 0.1, 90.0))
    assert Rect(0, 0, 1.0, 0.5, 90.0).inside_box(-0.5, 0.5, -1.0, 1.0)
    assert not Rect(0, 0, 1.0, 0.5).inside_box(-0.5, 0.5, -1.0, 1.0)


def test_visibility_hand_cases() -> None:
    cam = Camera(position=(-5.0, 0.0, 0.5), look_at=(0.0, 0.0, 0.5), fov_y=40.0, width=200, height=200)

    def cube(oid: str, x: float, y: float) -> SceneObject:
        return SceneObject(oid, "x", "box", Pose((x, y, 0.0)), size=(1.0, 1.0, 1.0))

    near, behind, aside = cube("a", 0.0, 0.0), cube("b", 2.0, 0.0), cube("c", 0.0, 2.5)
    vis = {v.object_id: v for v in visibility([near, behind, aside], cam)}
    assert vis["a"].visible_fraction == 1.0
    assert vis["b"].visible_fraction == 0.0  # same size, farther: its silhouette is inside a's
    assert vis["c"].visible_fraction == 1.0
    # focal length 100 / tan(20 deg) = 274.7 px; the near face (x = -0.5, 4.5 m away) spans
    # +-0.5 m -> +-30.5 px around the centre, the far face +-25 px; the box is the near face
    f = 100 / math.tan(math.radians(20))
    assert vis["a"].box == pytest.approx((100 - 0.5 * f / 4.5, 100 - 0.5 * f / 4.5, 100 + 0.5 * f / 4.5, 100 + 0.5 * f / 4.5))
    assert vis["a"].inside and vis["a"].in_front
    assert not vis["c"].inside  # 2.5 m to the side at 5 m: outside a 40 degree frame


# ----------------------------------------------------------------------------- studio


def test_studio_deterministic(proc_lib: AssetLibrary) -> None:
    a = sample_studio(rng(7), proc_lib, scene_id="s7", seed=7)
    b = sample_studio(rng(7), proc_lib, scene_id="s7", seed=7)
    c = sample_studio(rng(8), proc_lib, scene_id="s8", seed=8)
    assert a.to_json() == b.to_json()
    assert a.to_json() != c.to_json()
    assert Scene.from_json(a.to_json()).to_json() == a.to_json()
    assert (a.scene_id, a.seed, a.kind) == ("s7", 7, "studio")


@pytest.mark.parametrize("seed", range(6))
def test_studio_object_centred_and_framed(proc_lib: AssetLibrary, seed: int) -> None:
    scene = sample_studio(rng(seed), proc_lib, scene_id="s", seed=seed, image_size=(320, 240))
    [obj] = scene.objects
    assert obj.id == "obj0" and obj.pose.position == (0.0, 0.0, 0.0)
    cam = scene.camera("main")
    uv, z = cam.project(obj.center()[None])
    assert z[0] > 0
    np.testing.assert_allclose(uv[0], (160.0, 120.0), atol=0.05)
    corners, _ = cam.project(obj.corners())
    assert corners[:, 0].min() > 0 and corners[:, 0].max() < 320
    assert corners[:, 1].min() > 0 and corners[:, 1].max() < 240
    # "fills a good part": the projected box spans at least a quarter of the frame height
    # or width (sphere fill >= 0.55 of the fov)
    span = max((corners[:, 0].max() - corners[:, 0].min()) / 320, (corners[:, 1].max() - corners[:, 1].min()) / 240)
    assert span > 0.25
    assert cam.position[2] > 0
    assert_size_from_mesh(scene, proc_lib)


def test_studio_fixed_yaw_azimuth_distance(proc_lib: AssetLibrary) -> None:
    scene = sample_studio(
        rng(3), proc_lib, scene_id="s", seed=3, asset_id="proc:car", yaw=30.0,
        camera_azimuth=30.0, camera_elevation=0.0, camera_distance=9.0,
    )  # fmt: skip
    obj, cam = scene.objects[0], scene.camera("main")
    assert obj.asset_id == "proc:car" and obj.pose.yaw == 30.0
    np.testing.assert_allclose(obj.front_vector(), (math.cos(math.radians(30)), 0.5, 0.0), atol=1e-9)
    to_cam = np.asarray(cam.position) - obj.center()
    assert np.linalg.norm(to_cam) == pytest.approx(9.0, abs=1e-4)
    # elevation 0 and azimuth 30: the camera is straight ahead of the car's front
    np.testing.assert_allclose(to_cam / 9.0, (math.cos(math.radians(30)), 0.5, 0.0), atol=1e-5)


def test_studio_bad_category(proc_lib: AssetLibrary) -> None:
    with pytest.raises(ValueError, match="spaceship"):
        sample_studio(rng(0), proc_lib, scene_id="s", seed=0, categories=["spaceship"])


# ----------------------------------------------------------------------------- clutter


@pytest.mark.parametrize("style", ["tabletop", "street"])
def test_clutter_deterministic(proc_lib: AssetLibrary, style: str) -> None:
    a = sample_clutter(rng(11), proc_lib, scene_id="c", seed=11, style=style)
    b = sample_clutter(rng(11), proc_lib, scene_id="c", seed=11, style=style)
    assert a.to_json() == b.to_json()
    assert a.kind == "clutter"


@pytest.mark.parametrize("style,seed", [("tabletop", s) for s in range(4)] + [("street", s) for s in range(4)])
def test_clutter_constraints(proc_lib: AssetLibrary, style: str, seed: int) -> None:
    from perspecta.world.samplers.clutter import TABLETOP_SIZES, placed_objects, support_of

    scene = sample_clutter(rng(seed), proc_lib, scene_id="c", seed=seed, style=style, min_visible=0.7)
    objs = placed_objects(scene)
    n = len(objs)
    assert 2 <= n <= 8
    assert [o.id for o in objs] == [f"obj{i}" for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            assert not footprints_intersect(objs[i], objs[j])
    cam = scene.camera("main")
    table = support_of(scene)
    assert (table is not None) == (style == "tabletop")
    for o in objs:
        assert o.pose.position[2] == pytest.approx(0.0 if table is None else table.size[2], abs=1e-4)
        uv, z = cam.project(o.corners())
        assert np.all(z > 0)
        assert uv[:, 0].min() >= 0 and uv[:, 0].max() <= cam.width
        assert uv[:, 1].min() >= 0 and uv[:, 1].max() <= cam.height
    assert all(v.visible_fraction >= 0.7 for v in visibility(objs, cam))
    assert_size_from_mesh(scene, proc_lib)
    if style == "tabletop":  # tabletop things at their real size, on a table
        assert all(max(o.size) <= TABLETOP_SIZES[o.category][1] * 1.25 + 1e-6 for o in objs)
    else:  # street objects keep their real size
        assert all(o.scale == 1.0 for o in scene.objects)
        allowed = {"car", "person", "dog", "cat", "horse", "bicycle"}
        assert {o.category for o in scene.objects} <= allowed


def test_clutter_fixed_categories_and_yaws(proc_lib: AssetLibrary) -> None:
    scene = sample_clutter(
        rng(5), proc_lib, scene_id="c", seed=5, style="street",
        object_categories=["car", "car"], yaws=[90.0, 270.0],
    )  # fmt: skip
    assert [o.category for o in scene.objects] == ["car", "car"]
    assert [o.pose.yaw for o in scene.objects] == [90.0, 270.0]
    # opposite headings: fronts are antiparallel
    assert scene.objects[0].front_vector() @ scene.objects[1].front_vector() == pytest.approx(-1.0)


def test_clutter_impossible_request_raises(proc_lib: AssetLibrary) -> None:
    with pytest.raises(SamplingError, match=r"8 objects.*after 5 attempts"):
        sample_clutter(
            rng(0), proc_lib, scene_id="c", seed=0, style="tabletop",
            object_categories=["box"] * 8, area=(0.3, 0.3), max_attempts=5,
        )  # fmt: skip
    with pytest.raises(ValueError, match="n_objects"):
        sample_clutter(rng(0), proc_lib, scene_id="c", seed=0, n_objects=(5, 2))


# ----------------------------------------------------------------------------- room


def wall_contact(obj: SceneObject, scene: Scene) -> np.ndarray | None:
    """The inward normal of the wall the object's back touches (within 5 cm), or None."""
    room = scene.room
    assert room is not None
    back = obj.position[:2] - obj.front_vector()[:2] * obj.size[0] / 2
    walls = [
        (room.width / 2 - back[0], (-1.0, 0.0)),
        (back[0] + room.width / 2, (1.0, 0.0)),
        (room.depth / 2 - back[1], (0.0, -1.0)),
        (back[1] + room.depth / 2, (0.0, 1.0)),
    ]
    dist, normal = min(walls)
    return np.array(normal) if dist < 0.05 else None


ROOM_CASES = [(t, s) for t in ("bedroom", "living_room", "kitchen", "bathroom", "office") for s in (0, 1)]


@pytest.mark.parametrize("room_type,seed", ROOM_CASES)
def test_room_constraints(room_lib: AssetLibrary, room_type: str, seed: int) -> None:
    scene = sample_room(rng(seed), room_lib, scene_id="r", seed=seed, room_type=room_type)
    room = scene.room
    assert scene.kind == "room" and room is not None and room.room_type == room_type
    objs = scene.objects
    assert len(objs) >= 4
    assert [o.id for o in objs] == [f"obj{i}" for i in range(len(objs))]
    for o in objs:  # inside the room, under the ceiling
        c = o.corners()
        assert np.all(np.abs(c[:, 0]) <= room.width / 2 + 1e-6)
        assert np.all(np.abs(c[:, 1]) <= room.depth / 2 + 1e-6)
        assert c[:, 2].max() < room.height
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            assert not footprints_intersect(objs[i], objs[j]), (objs[i].category, objs[j].category)
    for o in objs:  # wall pieces: back to a wall, front pointing into the room
        if o.category in WALL_CATEGORIES:
            n = wall_contact(o, scene)
            assert n is not None, f"{o.category} is not against a wall"
            f = o.front_vector()[:2]
            assert f @ n == pytest.approx(1.0, abs=1e-6)
            assert f @ (-o.position[:2]) > 0  # toward the room centre
    pano = scene.camera("pano")
    assert (pano.projection, pano.width, pano.height) == ("equirect", 1024, 512)
    assert 1.5 <= pano.position[2] <= 1.6 and pano.look_at[2] == pano.position[2]
    eye = np.asarray(pano.position[:2])
    assert abs(eye[0]) <= room.width / 2 - 0.45 and abs(eye[1]) <= room.depth / 2 - 0.45
    for o in objs:  # the observer stands in free floor space
        assert Rect.of(o).distance_to_point(eye) >= 0.4
    assert scene.camera("view").projection == "perspective"
    assert_size_from_mesh(scene, room_lib)


def test_room_deterministic(room_lib: AssetLibrary) -> None:
    a = sample_room(rng(21), room_lib, scene_id="r", seed=21)
    b = sample_room(rng(21), room_lib, scene_id="r", seed=21)
    assert a.to_json() == b.to_json()
    assert Scene.from_json(a.to_json()).to_json() == a.to_json()


def test_room_arrangements(room_lib: AssetLibrary) -> None:
    """Nightstands flank the bed; chairs face their table; some category repeats."""
    repeats = 0
    for seed in range(4):
        bed_scene = sample_room(rng(seed), room_lib, scene_id="r", seed=seed, room_type="bedroom")
        [bed] = [o for o in bed_scene.objects if o.category == "bed"]
        stands = [o for o in bed_scene.objects if o.category == "nightstand"]
        assert stands, "a bedroom has at least one nightstand here (the test library has them)"
        for s in stands:
            assert s.pose.yaw == bed.pose.yaw
            lateral = np.cross(np.append(bed.front_vector()[:2], 0), np.append(s.position[:2] - bed.position[:2], 0))[2]
            assert bed.size[1] / 2 + s.size[1] / 2 < abs(lateral) < bed.size[1] / 2 + s.size[1] / 2 + 0.2
        kitchen = sample_room(rng(seed), room_lib, scene_id="k", seed=seed, room_type="kitchen")
        tables = [o for o in kitchen.objects if o.category == "table"]
        for ch in (o for o in kitchen.objects if o.category == "chair"):
            nearest = min(tables, key=lambda t: np.linalg.norm(t.position - ch.position))
            d = nearest.position[:2] - ch.position[:2]
            assert ch.front_vector()[:2] @ (d / np.linalg.norm(d)) > 0.9
        counts: dict[str, int] = {}
        for o in kitchen.objects + bed_scene.objects:
            counts[o.category] = counts.get(o.category, 0) + 1
        repeats += any(c >= 2 for c in counts.values())
    assert repeats >= 2


def test_room_living_room_tv_faces_sofa(room_lib: AssetLibrary) -> None:
    scene = sample_room(rng(2), room_lib, scene_id="r", seed=2, room_type="living_room")
    [sofa] = [o for o in scene.objects if o.category == "sofa"]
    for tv in (o for o in scene.objects if o.category == "tv"):
        assert tv.front_vector() @ sofa.front_vector() == pytest.approx(-1.0)


def test_room_procedural_fallbacks() -> None:
    lib = AssetLibrary([ProceduralSource()])
    scene = sample_room(rng(4), lib, scene_id="r", seed=4, room_type="office")
    desks = [o for o in scene.objects if o.category == "table" and wall_contact(o, scene) is not None]
    assert desks, "office desks fall back to procedural tables against a wall"


def test_room_impossible_requests() -> None:
    lib = AssetLibrary([OnlySource(["person", "ball"])])
    with pytest.raises(SamplingError, match="at most 1 pieces"):
        sample_room(rng(0), lib, scene_id="r", seed=0, room_type="bathroom")
    big = AssetLibrary([FurnitureSource()])
    with pytest.raises(SamplingError, match="after 3 attempts"):
        sample_room(rng(0), big, scene_id="r", seed=0, room_type="bedroom", room_size=(1.5, 1.5), max_attempts=3)
    with pytest.raises(ValueError, match="room_type"):
        sample_room(rng(0), big, scene_id="r", seed=0, room_type="garage")


def test_draw_uniform_is_numpys_uniform_bit_for_bit() -> None:
    """``draw_uniform`` replaces ``float(rng.uniform(lo, hi))`` in placement loops: same
    value from the same draw, for the ranges samplers use (symmetric, offset, degrees,
    numpy-float bounds, empty ranges), and the streams stay in step; a reversed range is
    refused by both."""
    from perspecta.world.samplers.common import draw_uniform

    ranges = np.random.default_rng(3)
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    for i in range(20000):
        half = float(ranges.uniform(0.3, 8.0))
        lo, hi = [(-half, half), (0.0, 360.0), (-half + 0.3, half - 0.3), (np.float64(half), np.float64(half) * 3),
                  (half, half)][i % 5]
        assert draw_uniform(b, lo, hi) == float(a.uniform(lo, hi)), (lo, hi)
    assert a.random() == b.random()  # one draw each: the streams never drift
    for rng_call in (lambda: a.uniform(1.0, -1.0), lambda: draw_uniform(b, 1.0, -1.0)):
        with pytest.raises(ValueError):
            rng_call()


def test_room_may_fit_never_rejects_what_fits_accepts() -> None:
    """Room placement rejects most tries on ``may_fit`` before making the object; it must
    only reject tries ``fits`` rejects (so the kept layouts, and the random stream, stay),
    and its footprint must be the made object's."""
    from perspecta.world.samplers.common import Instance, Rect, footprint, make_object
    from perspecta.world.samplers.room import _Layout
    from perspecta.world.scene import Room

    rng = np.random.default_rng(8)
    info = AssetInfo("proc:box", "box", "procedural", (1.0, 1.0, 1.0))
    rejected = 0
    for _ in range(40):
        layout = _Layout(Room(width=float(rng.uniform(3, 6)), depth=float(rng.uniform(3, 6)), height=2.6))
        for k in range(60):
            inst = Instance(info, {}, 1.0, rng.uniform(0.2, 1.6, 3) * (1, 1, 2.2))
            x, y = (float(v) for v in rng.uniform(-3, 3, 2))
            yaw = float(rng.choice([0.0, 90.0, float(rng.uniform(0, 360))]))
            margin = float(rng.choice([0.0, 0.3]))
            rect = footprint(inst, x, y, yaw)
            obj = make_object(f"o{k}", inst, x, y, yaw)
            assert rect == Rect.of(obj)
            clear = layout.clearance_rect(obj, float(rng.choice([0.0, 0.6])))
            fits = layout.fits(obj, rect, clear, k % 3, margin)
            if not layout.may_fit(inst, rect, margin):
                assert not fits
                rejected += 1
            elif fits:
                layout.add(obj, clear, k % 3, "k")
    assert rejected > 500  # the shortcut is exercised
