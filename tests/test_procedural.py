"""Procedural families: canonical frame, front cues, seeded variation, well-formed soups."""

from __future__ import annotations

import numpy as np
import pytest

from perspecta.assets.library import AssetLibrary
from perspecta.assets.mesh import Mesh
from perspecta.assets.procedural import FAMILIES, ProceduralSource, build

SEEDS = (0, 1, 2, 3)


def parts(mesh: Mesh, prefix: str) -> np.ndarray:
    pts = [p.positions for p in mesh.parts if p.name.startswith(prefix)]
    assert pts, f"no part named {prefix}*"
    return np.concatenate(pts)


def centroid(mesh: Mesh, prefix: str) -> np.ndarray:
    return parts(mesh, prefix).mean(axis=0)


def test_catalogue_lists_every_family_with_flags() -> None:
    infos = {i.asset_id: i for i in ProceduralSource().list()}
    for fam in ("car", "person", "chair", "dog", "ball", "cylinder", "box", "table"):
        assert f"proc:{fam}" in infos
    for fam in ("car", "person", "chair", "dog", "cat", "horse", "figure"):
        assert infos[f"proc:{fam}"].has_front and not infos[f"proc:{fam}"].symmetric
    for fam in ("ball", "cylinder", "box", "table"):
        assert not infos[f"proc:{fam}"].has_front and infos[f"proc:{fam}"].symmetric
    assert not infos["proc:mug"].has_front and not infos["proc:mug"].symmetric
    for info in infos.values():
        assert info.source == "proc" and info.category == info.asset_id.split(":")[1]
        assert info.license == "CC0-1.0" and info.attribution == "Perspecta procedural"
        np.testing.assert_allclose(info.size, build(info.category, 0).extent(), atol=1e-3)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_canonical_origin_and_wellformed_soup(family: str) -> None:
    for seed in (0, 5):
        mesh = build(family, seed)
        lo, hi = mesh.bounds()
        assert abs(lo[2]) < 1e-5  # stands on z = 0
        np.testing.assert_allclose((lo[:2] + hi[:2]) / 2, 0.0, atol=1e-5)  # centred in x, y
        assert any(p.tintable for p in mesh.parts)
        for p in mesh.parts:
            assert p.positions.dtype == np.float32 and p.positions.shape == p.normals.shape
            assert len(p.positions) % 3 == 0 and len(p.positions) > 0
            assert np.isfinite(p.positions).all()
            np.testing.assert_allclose(np.linalg.norm(p.normals, axis=1), 1.0, atol=1e-4)
            tri = p.positions.reshape(-1, 3, 3).astype(float)
            area = np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
            assert (area > 1e-12).all(), f"{family}/{p.name} has degenerate triangles"
            assert all(0.0 <= c <= 1.0 for c in p.color)


@pytest.mark.parametrize(
    ("family", "lo", "hi"),
    [
        ("car", (3.7, 1.6, 1.3), (4.9, 2.1, 1.7)),
        ("person", (0.2, 0.45, 1.5), (0.5, 0.85, 1.95)),
        ("chair", (0.4, 0.4, 0.75), (0.6, 0.6, 1.0)),
        ("dog", (0.65, 0.15, 0.5), (0.95, 0.35, 0.8)),
        ("cat", (0.4, 0.08, 0.3), (0.7, 0.2, 0.6)),
        ("horse", (2.0, 0.35, 1.6), (2.9, 0.7, 2.3)),
        ("ball", (0.2, 0.2, 0.2), (0.62, 0.62, 0.62)),
        ("table", (0.7, 1.0, 0.7), (0.9, 1.6, 0.8)),
        ("mug", (0.07, 0.1, 0.08), (0.11, 0.16, 0.12)),
    ],
)
def test_real_world_sizes_across_seeds(family: str, lo: tuple, hi: tuple) -> None:
    for seed in SEEDS:
        e = build(family, seed).extent()
        assert (e >= np.array(lo)).all() and (e <= np.array(hi)).all(), (family, seed, e)


@pytest.mark.parametrize("seed", SEEDS)
def test_car_front_and_back(seed: int) -> None:
    car = build("car", seed)
    half = car.extent()[0] / 2
    assert centroid(car, "headlight_left")[0] > 0.4 * half
    assert centroid(car, "headlight_right")[0] > 0.4 * half
    assert centroid(car, "grille")[0] > 0.4 * half
    assert centroid(car, "taillight")[0] < -0.4 * half
    # the cabin sits back: the windows' centre is behind the car's middle
    assert centroid(car, "windows")[0] < 0
    # headlights on the left (+Y) and right (-Y) sides
    assert centroid(car, "headlight_left")[1] > 0.3 > -0.3 > centroid(car, "headlight_right")[1]
    # the car rests on its tyres: the lowest points belong to the wheels
    assert parts(car, "wheel")[:, 2].min() < 1e-5
    assert parts(car, "body")[:, 2].min() > 0.1


@pytest.mark.parametrize("seed", SEEDS)
def test_person_faces_plus_x(seed: int) -> None:
    p = build("person", seed)
    torso, head = centroid(p, "torso"), centroid(p, "head")
    for eye in ("face_eye_left", "face_eye_right"):
        assert centroid(p, eye)[0] > torso[0] + 0.05
    assert centroid(p, "face_nose")[0] > head[0] + 0.05
    assert centroid(p, "hair")[0] < head[0]  # hair is at the back of the head
    assert centroid(p, "face_eye_left")[1] > 0 > centroid(p, "face_eye_right")[1]
    assert centroid(p, "foot")[0] > centroid(p, "leg")[0]  # toes point forward
    assert parts(p, "foot")[:, 2].min() < 1e-5
    assert head[2] > 0.8 * p.extent()[2]


@pytest.mark.parametrize("seed", SEEDS)
def test_chair_backrest_behind_open_seat(seed: int) -> None:
    c = build("chair", seed)
    d = c.extent()[0]
    assert centroid(c, "backrest")[0] < -0.35 * d / 2
    assert abs(centroid(c, "seat")[0]) < 0.05
    assert parts(c, "backrest")[:, 2].max() == pytest.approx(c.extent()[2], abs=1e-4)
    assert parts(c, "seat")[:, 2].max() < 0.55


@pytest.mark.parametrize("family", ["dog", "cat", "horse", "figure"])
def test_animals_head_front_tail_back(family: str) -> None:
    for seed in SEEDS:
        a = build(family, seed)
        head, tail = centroid(a, "head"), centroid(a, "tail")
        assert head[0] > 0.2 * a.extent()[0] / 2 and tail[0] < 0
        # a horse's eyes sit at the back of its long head; other animals' ahead of its centre
        behind = centroid(a, "neck")[0] if family == "horse" else head[0]
        assert centroid(a, "eye_left")[0] > behind and centroid(a, "eye_left")[1] > 0
        assert parts(a, "leg")[:, 2].min() < 1e-5  # stands on its legs
        if family != "cat":
            assert centroid(a, "nose")[0] > head[0]


def test_horse_reads_as_a_horse_not_a_dog() -> None:
    """Proportions a person uses to tell a horse from a dog: legs longer than the body is
    deep, a neck rising well above the back, a head much longer than it is tall, a tail
    hanging most of the way down the hind legs."""
    for seed in SEEDS:
        h = build("horse", seed)
        body = parts(h, "body")
        back, belly = body[:, 2].max(), body[:, 2].min()
        assert belly > 1.15 * (back - belly)  # long legs (a dog: ~0.8)
        assert parts(h, "head")[:, 2].max() > back + 0.45  # head carried high on the neck
        head = parts(h, "head")
        assert np.ptp(head[:, 0]) > 1.4 * np.ptp(head[:, 1])  # long narrow head
        assert parts(h, "tail")[:, 2].min() < belly  # the tail hangs below the belly
        assert len(parts(h, "mane")) > 0


def test_mug_handle_on_right() -> None:
    m = build("mug", 0)
    # the handle ring is centred one body radius (>= 3.8 cm) to the body's right (-Y)
    assert centroid(m, "handle")[1] < centroid(m, "body")[1] - 0.035


def test_ball_smooth_normals_point_outward() -> None:
    ball = build("ball", 2)
    r = ball.extent()[2] / 2
    p = ball.parts[0]
    radial = p.positions - np.array([0, 0, r], dtype=np.float32)
    np.testing.assert_allclose(np.linalg.norm(radial, axis=1), r, rtol=1e-4)
    np.testing.assert_allclose(p.normals, radial / r, atol=1e-4)
    np.testing.assert_allclose(ball.extent(), [2 * r] * 3, rtol=1e-3)  # icosphere has +-x, y, z vertices


def test_tintable_only_on_paint() -> None:
    car = {p.name: p.tintable for p in build("car", 1).parts}
    assert car["body"] and car["roof"]
    assert not any(v for k, v in car.items() if k.startswith(("headlight", "taillight", "wheel", "windows")))
    person = {p.name: p.tintable for p in build("person", 1).parts}
    assert person["torso"] and not person["face_eye_left"] and not person["head"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_seed_determinism_and_variation(family: str) -> None:
    a, b, c = build(family, 11), build(family, 11), build(family, 12)
    assert [p.name for p in a.parts] == [p.name for p in b.parts]
    for pa, pb in zip(a.parts, b.parts):
        assert np.array_equal(pa.positions, pb.positions) and pa.color == pb.color
    size_change = np.abs(a.extent() - c.extent()).max()
    color_change = max(np.abs(np.subtract(pa.color, pc.color)).max() for pa, pc in zip(a.parts, c.parts))
    assert size_change > 0.005 or color_change > 0.05


def test_source_through_library_and_bad_input() -> None:
    src = ProceduralSource()
    lib = AssetLibrary([src])
    mesh = lib.load_mesh("proc:car", {"seed": 3})
    np.testing.assert_allclose(mesh.extent(), build("car", 3).extent())
    np.testing.assert_allclose(src.size_for(lib.get("proc:dog"), {"seed": 4}), build("dog", 4).extent(), atol=1e-3)
    assert lib.get("proc:table").size == src.size_for(lib.get("proc:table"))
    with pytest.raises(TypeError):
        lib.load_mesh("proc:dog", {"seed": "7"})
    with pytest.raises(TypeError):
        lib.load_mesh("proc:dog", {"seed": 1.5})
    with pytest.raises(ValueError):
        lib.load_mesh("proc:dog", {"seed": -1})
    with pytest.raises(KeyError):
        build("unicorn")
    with pytest.raises(KeyError):
        src.load(lib.get("proc:dog").__class__(asset_id="sh3d:x", category="x", source="sh3d", size=(1, 1, 1)), {})


def test_box_and_cylinder_templates_give_trimeshs_floats_bit_for_bit() -> None:
    """The scaled unit templates must equal trimesh's own primitives exactly (any last-bit
    difference would move every generated image of a plain box or cylinder)."""
    import numpy as np
    import trimesh

    from perspecta.assets.procedural import _box_soup, _cylinder_soup, _soup

    rng = np.random.default_rng(0)
    for _ in range(300):
        size = rng.uniform(1e-3, 5.0, 3)
        assert np.array_equal(_box_soup(size), _soup(trimesh.creation.box(extents=size)))
        r, h = float(np.exp(rng.uniform(np.log(1e-3), np.log(100)))), float(np.exp(rng.uniform(np.log(1e-3), np.log(100))))
        for sections in (3, 8, 12, 24, 32, 64):
            ours = _cylinder_soup(r, h, sections)
            theirs = _soup(trimesh.creation.cylinder(radius=r, height=h, sections=sections))
            assert ours.tobytes() == theirs.tobytes(), (r, h, sections)  # signs of zeros too


def test_kept_capsules_equal_trimeshs_and_stay_unedited() -> None:
    """A capsule served from the per-size cache has trimesh's floats, a caller editing its
    copy does not reach the kept one, and a quadruped built warm (legs of repeated sizes)
    equals the same seed built with the cache emptied."""
    import numpy as np
    import trimesh

    from perspecta.assets import procedural as P

    for length, radius in ((0.31, 0.04), (0.31, 0.04), (0.0, 0.05), (1.7, 0.12)):
        got = P._capsule_soup(length, radius)
        want = P._soup(trimesh.creation.capsule(height=length, radius=radius, count=[12, 12]))
        assert got.tobytes() == want.tobytes()
        got[:] = 9.0
    assert not (P._capsule_soup(0.31, 0.04) == 9.0).any()
    for family in ("dog", "horse", "person"):
        warm = [P.build(family, s) for s in (3, 4, 3)]
        P._capsule_soup_kept.cache_clear()
        cold = P.build(family, 3)
        for a in (warm[0], warm[2]):
            assert [p.positions.tobytes() for p in a.parts] == [p.positions.tobytes() for p in cold.parts]
            assert [p.normals.tobytes() for p in a.parts] == [p.normals.tobytes() for p in cold.parts]
