"""User mesh folders: sidecar parsing, frame conversion, errors that name the field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from perspecta.assets.user import SidecarError, UserSource, canonical_rotation

# An asymmetric test object in canonical terms (metres): a body 2.0 deep (x), 1.0 wide
# (y), 0.5 tall (z); a nose 0.5 long sticking out of the front (+X) at mid-width; a post
# at the back-left corner rising to 1.5. Written to files in other axis conventions.
BODY = ((-1.0, -0.5, 0.0), (1.0, 0.5, 0.5))
NOSE = ((1.0, -0.1, 0.0), (1.5, 0.1, 0.2))
POST = ((-1.0, 0.3, 0.5), (-0.8, 0.5, 1.5))
# expected canonical result: bounding box x in [-1, 1.5] re-centred -> [-1.25, 1.25]
SHIFT = np.array([-0.25, 0.0, 0.0])


def _box_triangles(lo, hi) -> np.ndarray:
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = np.array([(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)], dtype=float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = [(q[0], q[1], q[2]) for q in quads] + [(q[0], q[2], q[3]) for q in quads]
    return v[np.array(tris)]  # (12, 3, 3)


def _object_in_file_frame(to_file: np.ndarray, units_per_metre: float) -> list[np.ndarray]:
    """The three boxes as triangles in file coordinates: file = to_file @ canonical."""
    return [(_box_triangles(*b) @ to_file.T) * units_per_metre for b in (BODY, NOSE, POST)]


def _write_obj(path: Path, boxes: list[np.ndarray]) -> None:
    lines, n = [], 0
    for tris in boxes:
        for t in tris:
            lines += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in t]
            lines.append(f"f {n + 1} {n + 2} {n + 3}")
            n += 3
    path.write_text("\n".join(lines) + "\n")


def _write_ply(path: Path, boxes: list[np.ndarray], colours: list[tuple[int, int, int]]) -> None:
    verts, faces = [], []
    for tris, c in zip(boxes, colours):
        for t in tris:
            base = len(verts)
            verts += [tuple(p) for p in t]
            faces.append((base, base + 1, base + 2, *c))
    head = [
        "ply", "format ascii 1.0", f"element vertex {len(verts)}",
        "property float x", "property float y", "property float z",
        f"element face {len(faces)}", "property list uchar int vertex_indices",
        "property uchar red", "property uchar green", "property uchar blue", "end_header",
    ]  # fmt: skip
    body = [f"{x:.6f} {y:.6f} {z:.6f}" for x, y, z in verts]
    body += [f"3 {a} {b} {c} {r} {g} {bl}" for a, b, c, r, g, bl in faces]
    path.write_text("\n".join(head + body) + "\n")


def _check_canonical(mesh, scale: float = 1.0) -> None:
    pos = np.concatenate([p.positions for p in mesh.parts]).astype(np.float64)
    np.testing.assert_allclose(pos.min(axis=0), (np.array([-1.0, -0.5, 0.0]) + SHIFT) * scale, atol=1e-5)
    np.testing.assert_allclose(pos.max(axis=0), (np.array([1.5, 0.5, 1.5]) + SHIFT) * scale, atol=1e-5)
    nose = pos[pos[:, 0] > (1.0 + SHIFT[0]) * scale + 1e-6]  # only the nose sticks out at the front
    np.testing.assert_allclose(nose[:, 1].min(), -0.1 * scale, atol=1e-5)
    np.testing.assert_allclose(nose[:, 1].max(), 0.1 * scale, atol=1e-5)
    post = pos[pos[:, 2] > 0.5 * scale + 1e-6]  # only the post rises above the body
    assert post[:, 1].min() == pytest.approx(0.3 * scale, abs=1e-5)  # on the left (+Y)
    assert post[:, 0].max() == pytest.approx((-0.8 + SHIFT[0]) * scale, abs=1e-5)  # at the back


def test_canonical_rotation_is_proper_and_maps_axes() -> None:
    R = canonical_rotation("+Y", "+Z")  # glTF convention: +Y up, front +Z
    np.testing.assert_array_equal(R @ [0, 0, 1], [1, 0, 0])  # front -> +X
    np.testing.assert_array_equal(R @ [0, 1, 0], [0, 0, 1])  # up -> +Z
    np.testing.assert_array_equal(R @ [1, 0, 0], [0, 1, 0])  # facing +Z with +Y up, +X is the left
    assert np.linalg.det(R) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        canonical_rotation("+Y", "-Y")


def test_obj_with_y_up_front_z_in_centimetres(tmp_path: Path) -> None:
    # file axes: +Y up, front +Z, so canonical (x, y, z) -> file (y, z, x)
    to_file = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    _write_obj(tmp_path / "thing.obj", _object_in_file_frame(to_file, 100.0))
    (tmp_path / "thing.obj.perspecta.yaml").write_text(
        "category: toy\nup: '+Y'\nfront: '+Z'\nunit_scale: 0.01\nlicense: CC0-1.0\nattribution: me\n"
    )
    src = UserSource([tmp_path], use_disk_cache=False)
    (info,) = src.list()
    assert info.asset_id == "user:thing" and info.category == "toy" and info.source == "user"
    assert info.has_front and info.license == "CC0-1.0" and info.attribution == "me"
    assert info.size == pytest.approx((2.5, 1.0, 1.5), abs=1e-5)
    _check_canonical(src.load(info, {}))


def test_ply_z_up_front_minus_y_rescaled_by_height(tmp_path: Path) -> None:
    # file axes: +Z up, front -Y (left = +X); millimetres, then rescaled to 3 m tall
    to_file = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], dtype=float)
    colours = [(200, 0, 0), (0, 200, 0), (0, 0, 200)]
    _write_ply(tmp_path / "thing.ply", _object_in_file_frame(to_file, 1000.0), colours)
    (tmp_path / "thing.ply.perspecta.json").write_text(
        json.dumps({"category": "toy", "up": "+Z", "front": "-Y", "unit_scale": 0.001,
                    "height": 3.0, "license": "CC-BY-4.0", "symmetric": False})
    )
    src = UserSource(tmp_path, use_disk_cache=False)
    (info,) = src.list()
    mesh = src.load(info, {})
    _check_canonical(mesh, scale=2.0)  # 1.5 m tall -> 3 m
    # per-face colours become parts; the green nose is the part at the front
    by_colour = {p.color: p for p in mesh.parts}
    assert set(by_colour) == {(200 / 255, 0.0, 0.0), (0.0, 200 / 255, 0.0), (0.0, 0.0, 200 / 255)}
    nose = by_colour[(0.0, 200 / 255, 0.0)]
    assert nose.positions[:, 0].min() == pytest.approx((1.0 - 0.25) * 2.0, abs=1e-5)
    assert not nose.tintable  # the file has its own colours


def test_folder_list_and_front_none(tmp_path: Path) -> None:
    to_file = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    (tmp_path / "sub").mkdir()
    _write_obj(tmp_path / "sub" / "a.obj", _object_in_file_frame(to_file, 1.0))
    _write_obj(tmp_path / "sub" / "b.obj", _object_in_file_frame(to_file, 1.0))
    (tmp_path / "sub" / "perspecta-assets.yaml").write_text(
        "assets:\n"
        "  - {file: a.obj, category: toy, up: '+Y', front: '+Z', license: CC0-1.0}\n"
        "  - {file: b.obj, category: box, up: '+Y', front: none, license: CC0-1.0, symmetric: true, id: plain-box}\n"
    )
    infos = {i.asset_id: i for i in UserSource([tmp_path], use_disk_cache=False).list()}
    assert set(infos) == {"user:sub/a", "user:plain-box"}
    assert infos["user:sub/a"].has_front
    assert not infos["user:plain-box"].has_front and infos["user:plain-box"].symmetric
    # untextured, uncoloured OBJ: parts are tintable
    mesh = UserSource([tmp_path], use_disk_cache=False).load(infos["user:sub/a"], {})
    assert all(p.tintable for p in mesh.parts)


def test_disk_cache_round_trip(tmp_path: Path) -> None:
    to_file = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    assets = tmp_path / "assets"
    assets.mkdir()
    _write_obj(assets / "t.obj", _object_in_file_frame(to_file, 1.0))
    (assets / "t.obj.perspecta.yaml").write_text("category: toy\nup: +Y\nfront: +Z\nlicense: CC0-1.0\n")
    src = UserSource([assets], cache_dir=tmp_path / "cache")
    (info,) = src.list()
    assert len(list((tmp_path / "cache" / "user").glob("*.npz"))) == 1
    a = load_entry_direct(assets)
    b = UserSource([assets], cache_dir=tmp_path / "cache").load(info, {})
    for pa, pb in zip(a.parts, b.parts):
        np.testing.assert_array_equal(pa.positions, pb.positions)


def test_corrupt_cache_entry_is_discarded(tmp_path: Path) -> None:
    from perspecta.assets import cache

    path = cache.cache_path("user", "x", {"k": 1}, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a zip")
    assert cache.load_mesh(path) is None
    assert not path.exists()


def test_cache_root_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from perspecta.assets import cache

    monkeypatch.setenv("PERSPECTA_CACHE", str(tmp_path / "pc"))
    assert cache.cache_root() == tmp_path / "pc" / "assets"
    monkeypatch.delenv("PERSPECTA_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "perspecta" / "assets"


def load_entry_direct(assets: Path):
    from perspecta.assets.user import load_entry, read_sidecars

    (entry,) = read_sidecars(assets)
    return load_entry(entry)


GOOD = {"category": "toy", "up": "+Y", "front": "+Z", "license": "CC0-1.0"}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"category": None}, "category"),
        ({"license": None}, "license"),
        ({"up": "+W"}, "up"),
        ({"front": "sideways"}, "front"),
        ({"front": "-Y"}, "front"),  # parallel to up
        ({"file": "missing.obj"}, "file"),
        ({"unit_scale": -2}, "unit_scale"),
        ({"height": "tall"}, "height"),
        ({"symmetric": "yes"}, "symmetric"),
        ({"categroy": "toy"}, "categroy"),  # typo -> unknown field
    ],
)
def test_malformed_sidecar_names_file_and_field(tmp_path: Path, change: dict, field: str) -> None:
    _write_obj(tmp_path / "t.obj", [_box_triangles(*BODY)])
    data = {**GOOD, **change}
    data = {k: v for k, v in data.items() if v is not None}
    sidecar = tmp_path / "t.obj.perspecta.json"
    sidecar.write_text(json.dumps(data))
    with pytest.raises(SidecarError) as exc:
        UserSource([tmp_path], use_disk_cache=False).list()
    assert str(sidecar) in str(exc.value)
    assert f"'{field}'" in str(exc.value)


def test_folder_list_entry_without_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "perspecta-assets.yaml").write_text("- {category: toy, up: +Y, front: +Z, license: CC0-1.0}\n")
    with pytest.raises(SidecarError, match=r"perspecta-assets.yaml entry 0: field 'file'"):
        UserSource([tmp_path], use_disk_cache=False).list()


def test_unparseable_sidecar_and_missing_folder(tmp_path: Path) -> None:
    _write_obj(tmp_path / "t.obj", [_box_triangles(*BODY)])
    (tmp_path / "t.obj.perspecta.yaml").write_text("category: [unclosed\n")
    with pytest.raises(SidecarError, match="t.obj.perspecta.yaml: not valid YAML"):
        UserSource([tmp_path], use_disk_cache=False).list()
    with pytest.raises(SidecarError, match="does not exist"):
        UserSource([tmp_path / "nope"], use_disk_cache=False).list()
