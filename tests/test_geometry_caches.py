"""Caches that make scene sampling cheaper must give exactly the uncached answers."""

from __future__ import annotations

import numpy as np

from perspecta.assets.library import AssetLibrary
from perspecta.assets.mesh import Mesh, MeshPart, flat_normals
from perspecta.world.samplers.common import Rect


def _part(shift: float) -> MeshPart:
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0]], dtype=np.float32) + shift
    return MeshPart(pos, flat_normals(pos))


def test_mesh_bounds_follow_replaced_positions_and_parts() -> None:
    mesh = Mesh([_part(0.0)])
    lo, hi = mesh.bounds()
    assert lo.tolist() == [0, 0, 0] and hi.tolist() == [1, 2, 0]
    lo[0] = 99  # the caller's copy, not the cache
    assert mesh.bounds()[0].tolist() == [0, 0, 0]
    mesh.parts[0].positions = mesh.parts[0].positions + 1  # a new array: re-measured
    assert mesh.bounds()[1].tolist() == [2, 3, 1]
    mesh.parts.append(_part(5.0))
    assert mesh.extent().tolist() == [5, 6, 4]


def test_library_extent_is_the_meshes_extent() -> None:
    library = AssetLibrary.default()
    for info in library.all()[:6]:
        params = {"seed": 3} if info.source == "proc" else {}
        want = library.load_mesh(info.asset_id, params).extent()
        got = library.extent(info.asset_id, params)
        assert np.array_equal(got, want)
        got[0] = -1.0  # a copy each time
        assert np.array_equal(library.extent(info.asset_id, params), want)


def test_rect_axes_are_computed_once_and_read_only() -> None:
    r = Rect(0.0, 0.0, 1.0, 0.5, yaw=30.0)
    ax, ay = r.axes()
    assert r.axes()[0] is ax
    assert np.allclose(ax, [np.cos(np.radians(30)), np.sin(np.radians(30))])
    assert not ax.flags.writeable
    assert r == Rect(0.0, 0.0, 1.0, 0.5, yaw=30.0)  # the cache is not a field
    assert r.overlaps(Rect(1.2, 0.0, 0.5, 0.5)) and not r.overlaps(Rect(3.0, 0.0, 0.5, 0.5))


def test_camera_projection_follows_edits_to_the_camera() -> None:
    from perspecta.world.scene import Camera

    cam = Camera(position=(0.0, -4.0, 1.5), look_at=(0.0, 0.0, 0.5), width=256, height=256)
    pts = np.array([[0.3, 0.2, 0.4], [-1.0, 1.0, 0.0]])
    fresh = lambda c: (pts @ c.extrinsic()[:3, :3].T + c.extrinsic()[:3, 3])  # noqa: E731
    uv, z = cam.project(pts)
    assert np.array_equal(z, fresh(cam)[:, 2])
    cam.position = (1.0, -4.0, 1.5)  # a mutable dataclass: the cache must notice
    cam.width = 512
    uv2, z2 = cam.project(pts)
    assert np.array_equal(z2, fresh(cam)[:, 2]) and not np.array_equal(uv, uv2)
    assert "_matrices_cache" not in Camera.from_dict(cam.metadata()).__dict__
    assert Camera.from_dict(cam.metadata()) == cam


def _numpy_sat(a, b, gap: float) -> bool:
    """The separating-axis test on numpy 2-vectors, as Rect.overlaps computed it before its
    plain-float pass (the reference whose rounding past layouts depend on)."""
    import numpy as np

    d = np.array([b.cx - a.cx, b.cy - a.cy])
    return not any(abs(float(d @ u)) > a.radius_along(u) + b.radius_along(u) + gap for u in (*a.axes(), *b.axes()))


def test_rect_fast_paths_answer_like_the_numpy_tests() -> None:
    """overlaps (plain floats, numpy only near the threshold), inside_box and footprint give
    the answers of the numpy SAT, of corners() and of Rect.of(make_object(...)) on random
    rects, touching pairs (margins at the threshold) included."""
    import math

    import numpy as np

    from perspecta.assets.library import AssetLibrary
    from perspecta.world.samplers.common import Instance, Rect, footprint, make_object

    rng = np.random.default_rng(4)
    near = 0
    for _ in range(40000):
        a = Rect(*rng.uniform(-3, 3, 2), *rng.uniform(0.05, 1.5, 2), float(rng.choice([0.0, 90.0, rng.uniform(0, 360)])))
        if rng.random() < 0.3:  # b exactly touching a along a's x axis (the slack path)
            c, s = math.cos(math.radians(a.yaw)), math.sin(math.radians(a.yaw))
            hx = float(rng.uniform(0.05, 1.5))
            dist = a.hx + hx
            b = Rect(a.cx + dist * c, a.cy + dist * s, hx, float(rng.uniform(0.05, 1.5)), a.yaw)
            near += 1
        else:
            b = Rect(*rng.uniform(-3, 3, 2), *rng.uniform(0.05, 1.5, 2), float(rng.uniform(0, 360)))
        gap = float(rng.choice([0.0, 0.05, 0.2]))
        assert a.overlaps(b, gap) == _numpy_sat(a, b, gap)
        box = tuple(float(v) for v in (-2.5, 2.5, -2.0, 2.0))
        corners = a.corners()
        inside = bool(corners[:, 0].min() >= box[0] - 1e-9 and corners[:, 0].max() <= box[1] + 1e-9
                      and corners[:, 1].min() >= box[2] - 1e-9 and corners[:, 1].max() <= box[3] + 1e-9)
        assert a.inside_box(*box) == inside
        xs, ys = a._corner_floats()
        assert xs == tuple(corners[:, 0].tolist()) and ys == tuple(corners[:, 1].tolist())
    assert near > 10000
    info = AssetLibrary.default().all()[0]
    for _ in range(2000):
        inst = Instance(info, {}, 1.0, rng.uniform(0.1, 2.0, 3))
        x, y, yaw = rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-720, 720)
        assert footprint(inst, x, y, yaw) == Rect.of(make_object("o", inst, x, y, yaw))


def test_wrap180_scalars_and_cached_rotations_match_the_array_arithmetic() -> None:
    """wrap180's plain-float path gives the array path's floats; rotation_matrix's cache
    returns the computed matrix bit for bit, a fresh copy each time, and keeps -0.0
    apart from 0.0."""
    import math

    import numpy as np

    from perspecta.world.orientation import wrap180
    from perspecta.world.rotation import rotation_matrix

    rng = np.random.default_rng(1)
    values = list(rng.uniform(-2000, 2000, 20000)) + [0.0, -0.0, 180.0, -180.0, 540.0, -540.0, 1e-300, -1e-300, 360.0]
    for v in values:
        fast = wrap180(float(v))
        slow = float(wrap180(np.array([v]))[0])
        assert math.copysign(1, fast) == math.copysign(1, slow) and (fast == slow), v
    assert math.isnan(wrap180(float("nan")))
    for _ in range(2000):
        y, p, r = (float(x) for x in rng.uniform(-400, 400, 3))
        first, again = rotation_matrix(y, p, r), rotation_matrix(y, p, r)
        assert first.tobytes() == again.tobytes() and first is not again
        first[0, 0] = 99.0  # a caller's edit stays its own
        assert rotation_matrix(y, p, r)[0, 0] != 99.0
    def fresh(y: float, p: float, r: float) -> np.ndarray:
        cy, sy, cp, sp = math.cos(math.radians(y)), math.sin(math.radians(y)), math.cos(math.radians(p)), math.sin(math.radians(p))
        cr, sr = math.cos(math.radians(r)), math.sin(math.radians(r))
        return (np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]]) @ np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
                @ np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]]))

    for angles in [(0.0, -0.0, 0.0), (-0.0, 0.0, -0.0), (-0.0, -0.0, -0.0), (90.0, -0.0, 180.0), *rng.uniform(-400, 400, (200, 3))]:
        y, p, r = (float(a) for a in angles)
        assert rotation_matrix(y, p, r).tobytes() == fresh(y, p, r).tobytes()


def test_bbox_distance_cache_returns_the_solved_distance() -> None:
    """The kept box distance is the solver's own float for those exact poses and sizes, and
    a moved box is solved again."""
    import numpy as np

    from perspecta.world.orientation import _bbox_distance, bbox_distance
    from perspecta.world.scene import Pose, SceneObject

    rng = np.random.default_rng(2)

    def obj(i: int) -> SceneObject:
        return SceneObject(f"o{i}", "proc:box", "box", Pose(tuple(float(v) for v in rng.uniform(-3, 3, 3)),
                           yaw=float(rng.uniform(0, 360))), size=tuple(float(v) for v in rng.uniform(0.2, 1.5, 3)))

    objs = [obj(i) for i in range(12)]
    for a in objs:
        for b in objs:
            first = bbox_distance(a, b)
            assert first == _bbox_distance(a, b) == bbox_distance(a, b)
    a, b = objs[0], objs[1]
    moved = SceneObject(b.id, b.asset_id, b.category, Pose((b.pose.position[0] + 5.0, *b.pose.position[1:]), yaw=b.pose.yaw),
                        size=b.size)
    assert bbox_distance(a, moved) == _bbox_distance(a, moved) != bbox_distance(a, b)


def test_visibility_projects_like_camera_project() -> None:
    """visibility() projects with the camera's matrices looked up once: boxes, depths and
    fractions must be Camera.project's to the bit (they decide which layouts samplers keep)."""
    from perspecta.world.samplers.common import _convex_hull, _Projected, visibility
    from perspecta.world.scene import Camera, Pose, SceneObject

    rng = np.random.default_rng(4)
    for _ in range(300):
        objs = [SceneObject(f"o{i}", "a", "c", Pose(tuple(rng.uniform(-1.5, 1.5, 2)) + (0.0,), yaw=float(rng.uniform(0, 360)),
                                                     pitch=float(rng.choice([0.0, 90.0]))),
                            size=tuple(rng.uniform(0.05, 1.2, 3))) for i in range(int(rng.integers(1, 6)))]
        eye = rng.uniform(-6, 6, 3)
        eye[2] = abs(eye[2]) + 0.2
        cam = Camera(position=tuple(eye), look_at=tuple(rng.uniform(-0.5, 0.5, 3)), fov_y=float(rng.uniform(30, 70)),
                     width=320, height=240)
        got = visibility(objs, cam, margin=2.0)
        given = visibility(objs, cam, margin=2.0, corners=[o.corners() for o in objs])  # the samplers' shortcut
        assert [(v.box, v.depth, v.inside, v.visible_fraction) for v in given] == \
            [(v.box, v.depth, v.inside, v.visible_fraction) for v in got]
        infos, hulls = [], []
        for o in objs:  # the arithmetic visibility() had before, through Camera.project
            uv, z = cam.project(o.corners())
            _, zc = cam.project(o.center()[None])
            front = bool(np.all(z > 1e-3))
            box = (float(uv[:, 0].min()), float(uv[:, 1].min()), float(uv[:, 0].max()), float(uv[:, 1].max()))
            infos.append((box, float(zc[0]), front))
            hulls.append(_convex_hull(uv) if front else np.zeros((0, 2)))
        ref = _Projected([None] * len(objs), [(b, d, f, False) for b, d, f in infos], 24)
        ref._hulls = hulls
        for i, (v, (box, depth, front)) in enumerate(zip(got, infos)):
            assert (v.box, v.depth, v.in_front) == (box, depth, front)
            assert v.visible_fraction == ref.fraction(i)


def test_panorama_longitudes_equal_the_one_point_function() -> None:
    """The batched longitudes (forward heading worked out once) are panorama_longitude's
    floats; a point straight above the camera still raises."""
    import pytest

    from perspecta.world.scene import Camera
    from perspecta.world.viewing import panorama_longitude, panorama_longitudes

    rng = np.random.default_rng(9)
    for _ in range(200):
        cam = Camera(name="pano", position=tuple(rng.uniform(-3, 3, 3)), look_at=tuple(rng.uniform(-3, 3, 3)),
                     width=64, height=32, projection="equirect")
        pts = rng.uniform(-5, 5, (9, 3))
        pts[0, :2] = np.asarray(cam.position)[:2] + rng.choice([0.0, -0.0, 0.5], 2)  # near the axis, signed zeros
        if np.hypot(*(pts[0, :2] - np.asarray(cam.position)[:2])) < 1e-9:
            pts[0, 0] += 0.25
        assert panorama_longitudes(pts, cam) == [panorama_longitude(p, cam) for p in pts]
    with pytest.raises(ValueError):
        panorama_longitudes(np.array([[*cam.position[:2], 9.0]]), cam)


def test_camera_rotation_equals_numpy_cross_and_norm() -> None:
    """rotation_world_to_cam works on plain floats; every camera (and so every render and
    projection) depends on it being np.cross / np.linalg.norm's result to the bit."""
    from perspecta.world.scene import Camera

    def numpy_rotation(cam: Camera) -> np.ndarray:
        eye = np.asarray(cam.position, dtype=float)
        fwd = np.asarray(cam.look_at, dtype=float) - eye
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, np.asarray(cam.up, dtype=float))
        if np.linalg.norm(right) < 1e-9:
            right = np.cross(fwd, np.array([0.0, 1.0, 0.0]))
        right /= np.linalg.norm(right)
        return np.stack([right, np.cross(fwd, right), fwd])

    rng = np.random.default_rng(11)
    for i in range(5000):
        eye = tuple(round(float(x), 5) for x in rng.normal(0, 5, 3))
        target = (eye[0], eye[1], eye[2] - 2.0) if i % 50 == 0 else tuple(rng.normal(0, 1, 3))  # straight down too
        up = (0, 0, 1) if i % 3 else tuple(rng.normal(0, 1, 3))
        cam = Camera(position=eye, look_at=target, up=up)
        assert cam.rotation_world_to_cam().tobytes() == numpy_rotation(cam).tobytes()


def test_mesh_column_bounds_equal_the_axis_reductions_to_the_bit() -> None:
    """Mesh.bounds reduces copied rows; zeros of either sign (canonical meshes stand on
    z = 0) must come out as numpy's axis-0 min / max give them."""
    from perspecta.assets.mesh import _column_bounds

    rng = np.random.default_rng(3)
    for k in range(3000):
        n = int(rng.integers(1, 80))
        pts = (rng.choice([0.0, -0.0, 1.0, -1.0, 2.5], size=(n, 3)) if k % 2
               else rng.normal(size=(n, 3))).astype(np.float32)
        ref, got = (pts.min(axis=0), pts.max(axis=0)), _column_bounds(pts)
        assert all(a.tobytes() == b.tobytes() and a.dtype == b.dtype for a, b in zip(ref, got))
