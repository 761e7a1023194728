"""SH3D furniture source: catalogue parsing, frame conversion, caching, allow-list."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from perspecta.assets import sh3d
from perspecta.assets.sh3d import (
    ALLOWLIST_PATH,
    SH3DSource,
    detect_license,
    load_allowlist,
    parse_properties,
    read_catalogue,
)

INSTALLED = SH3DSource(allowlist={"models": {}}).available()
needs_package = pytest.mark.skipif(
    not INSTALLED,
    reason="Debian package sweethome3d-furniture not installed "
    "(apt-get install sweethome3d-furniture, or set PERSPECTA_SH3D_DIR)",
)


# ------------------------------------------------------------------ synthetic catalogue


def _box(lo: tuple[float, float, float], hi: tuple[float, float, float], base: int) -> tuple[list[str], list[str]]:
    """OBJ lines for an axis-aligned box (8 vertices, 6 quads), vertex numbering from base+1."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    vs = [(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)]
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    v_lines = [f"v {x} {y} {z}" for x, y, z in vs]
    f_lines = ["f " + " ".join(str(base + i + 1) for i in q) for q in quads]
    return v_lines, f_lines


def _write_catalogue(path: Path, rotation: str | None, obj_parts: dict[str, tuple], size_cm: tuple) -> None:
    """A one-model .sh3f: OBJ made of named boxes (one material each), MTL, LICENSE."""
    lines, mtl, base = ["mtllib thing.mtl"], [], 0
    for i, (name, (lo, hi)) in enumerate(obj_parts.items()):
        v, f = _box(lo, hi, base)
        base += 8
        lines += v + [f"usemtl {name}"] + f
        mtl += [f"newmtl {name}", f"Kd {0.1 * (i + 1)} 0.5 0.5", ""]
    w, d, h = size_cm
    props = [
        "id=Test#catalogue",
        "name=Test catalogue",
        "id#1=Test#thing",
        "name#1=Thing \\u00e9",
        "category#1=Miscellaneous",
        "icon#1=/test/thing.png",
        "model#1=/test/thing/thing.obj",
        f"width#1={w}",
        f"depth#1={d}",
        f"height#1={h}",
        "creator#1=Someone",
    ]
    if rotation:
        props.append(f"modelRotation#1={rotation}")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("PluginFurnitureCatalog.properties", "\n".join(props) + "\n")
        zf.writestr("LICENSE.TXT", "This file is under the Creative Commons Zero (Public Domain) license")
        zf.writestr("test/thing/thing.obj", "\n".join(lines) + "\n")
        zf.writestr("test/thing/thing.mtl", "\n".join(mtl) + "\n")


def _part(mesh, name):
    (p,) = [p for p in mesh.parts if p.name == name]
    return p.positions.min(axis=0), p.positions.max(axis=0)


def test_parse_properties_handles_java_syntax() -> None:
    text = "# comment\n! other\nkey1 = a\\\n    b\nkey2:c\nkey3 d e\nname#4=Bill 10\\u20ac\n"
    props = parse_properties(text)
    assert props == {"key1": "ab", "key2": "c", "key3": "d e", "name#4": "Bill 10\u20ac"}


def test_detect_license_reads_the_released_under_clause() -> None:
    assert detect_license("Released under Creative Commons Attribution 3.0 ... Public Domain") == "CC-BY-3.0"
    assert detect_license("licensed under the Creative Commons Attribution 3.0 United States") == "CC-BY-3.0-US"
    assert detect_license("Creative Commons Zero (Public Domain)") == "CC0-1.0"
    assert detect_license("all rights reserved") is None


def test_modelrotation_and_axis_mapping_on_synthetic_model(tmp_path: Path) -> None:
    # Authored Z-up with the front toward -Y and the model's left toward +X; the
    # catalogue's row-major modelRotation [[1,0,0],[0,0,1],[0,-1,0]] turns that into
    # SH3D's +Y up / front +Z. Body 2 x 5 x 2 file units incl. a nose at the front
    # (file y in [-3,-2]) and a post at the back left (file x in [0.8,1], y in [1,2]).
    parts = {
        "body": ((-1, -2, 0), (1, 2, 1)),
        "nose": ((-0.2, -3, 0), (0.2, -2, 0.5)),
        "post": ((0.8, 1, 1), (1.0, 2, 2)),
    }
    cat = tmp_path / "Test.sh3f"
    _write_catalogue(cat, "1 0 0 0 0 1 0 -1 0", parts, (40, 250, 100))
    _, models = read_catalogue(cat)
    assert [m.id for m in models] == ["Test#thing"]
    assert models[0].name == "Thing \u00e9"
    src = SH3DSource(tmp_path, {"models": {"Test#thing": {"category": "box"}}}, use_disk_cache=False)
    (info,) = src.list()
    assert info.asset_id == "sh3d:test/thing"
    assert info.size == pytest.approx((2.5, 0.4, 1.0))  # depth, width, height in metres
    assert info.license == "CC0-1.0"
    mesh = src.load(info, {})
    lo, hi = mesh.bounds()
    np.testing.assert_allclose(lo, [-1.25, -0.2, 0.0], atol=1e-6)
    np.testing.assert_allclose(hi, [1.25, 0.2, 1.0], atol=1e-6)
    # scale: X_sh3d 0.4 m / 2 units, Y_sh3d 1 m / 2 units, Z_sh3d 2.5 m / 5 units
    nlo, nhi = _part(mesh, "nose")
    np.testing.assert_allclose(nlo, [0.75, -0.04, 0.0], atol=1e-6)  # front end: +X
    np.testing.assert_allclose(nhi, [1.25, 0.04, 0.25], atol=1e-6)
    plo, phi = _part(mesh, "post")
    np.testing.assert_allclose(plo, [-1.25, 0.16, 0.5], atol=1e-6)  # back, left (+Y), top
    np.testing.assert_allclose(phi, [-0.75, 0.2, 1.0], atol=1e-6)
    # outward normals survive the non-uniform scale: the nose's front face points +X
    nose = [p for p in mesh.parts if p.name == "nose"][0]
    front_face = np.isclose(nose.positions[:, 0], 1.25).reshape(-1, 3).all(axis=1)
    n = nose.normals.reshape(-1, 3, 3)[front_face]
    np.testing.assert_allclose(np.abs(n[..., 0]), 1.0, atol=1e-6)


def test_front_minus_z_turns_the_model_around(tmp_path: Path) -> None:
    parts = {"body": ((-1, 0, -2), (1, 1, 2)), "nose": ((-0.2, 0, -3), (0.2, 0.5, -2))}  # nose at -Z
    _write_catalogue(tmp_path / "Test.sh3f", None, parts, (20, 50, 10))
    src = SH3DSource(tmp_path, {"models": {"Test#thing": {"category": "box", "front": "-Z"}}}, use_disk_cache=False)
    (info,) = src.list()
    nlo, nhi = _part(src.load(info, {}), "nose")
    assert nlo[0] == pytest.approx(0.15) and nhi[0] == pytest.approx(0.25)  # 0.5 m deep, nose 0.1 m


def test_allowlist_validation_names_the_field() -> None:
    with pytest.raises(ValueError, match="'front'"):
        load_allowlist({"models": {"a#b": {"category": "chair", "front": "+Y"}}})
    with pytest.raises(ValueError, match="'category'"):
        load_allowlist({"models": {"a#b": {"front": "+Z"}}})
    with pytest.raises(ValueError, match="unknown field"):
        load_allowlist({"models": {"a#b": {"category": "chair", "colour": "red"}}})


# ------------------------------------------------------------------ the Debian package


@needs_package
def test_catalogue_parses() -> None:
    header, models = read_catalogue(sh3d.DEFAULT_DIR / "BlendSwap-CC-0.sh3f")
    assert header["name"] == "Blend Swap CC-0"
    assert len(models) == 175
    arm = {m.id: m for m in models}["Blend Swap CC-0#armchair"]
    assert (arm.width, arm.depth, arm.height) == (59.4, 62.7, 105.0)
    assert arm.model == "blendswap-cc-0/armchair/armchair.obj"
    assert arm.creator == "Absfrm"


@needs_package
def test_known_model_has_catalogue_size_and_sits_on_the_ground(tmp_path: Path) -> None:
    src = SH3DSource(cache_dir=tmp_path)
    info = next(i for i in src.list() if i.extra["sh3d_id"] == "Scopia#cat")
    mesh = src.load(info, {})
    lo, hi = mesh.bounds()
    # catalogue: width 22.9, depth 34, height 45.6 cm -> canonical (X, Y, Z) = (0.34, 0.229, 0.456)
    np.testing.assert_allclose(hi - lo, [0.34, 0.229, 0.456], atol=0.01)
    assert lo[2] == pytest.approx(0.0, abs=1e-5)
    np.testing.assert_allclose((lo + hi)[:2] / 2, [0, 0], atol=1e-5)
    assert info.license == "CC-BY-3.0" and "Scopia" in info.attribution


@needs_package
def test_real_car_faces_plus_x(tmp_path: Path) -> None:
    # A hatchback: the bonnet (front quarter) is much lower than the roof over the rear quarter.
    src = SH3DSource(cache_dir=tmp_path)
    info = next(i for i in src.list() if i.extra["sh3d_id"] == "Blend Swap CC-BY#fordFocus")
    mesh = src.load(info, {})
    pos = np.concatenate([p.positions for p in mesh.parts])
    length = pos[:, 0].max() - pos[:, 0].min()
    front_top = pos[pos[:, 0] > 0.3 * length, 2].max()
    rear_top = pos[pos[:, 0] < -0.3 * length, 2].max()
    assert front_top < rear_top - 0.2
    assert (hi := pos.max(axis=0))[0] == pytest.approx(4.358 / 2, abs=0.01) and hi[1] == pytest.approx(2.045 / 2, abs=0.01)


@needs_package
def test_disk_cache_hit_returns_identical_arrays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = SH3DSource(cache_dir=tmp_path)
    info = next(i for i in src.list() if i.extra["sh3d_id"] == "Reallusion#girlStanding")
    first = src.load(info, {})
    assert len(list((tmp_path / "sh3d").glob("*.npz"))) == 1
    assert any(p.texture is not None for p in first.parts)

    def no_conversion(*a, **k):
        raise AssertionError("the cache should have been used")

    monkeypatch.setattr(SH3DSource, "load_model", no_conversion)
    second = SH3DSource(cache_dir=tmp_path).load(info, {})
    assert len(first.parts) == len(second.parts)
    for a, b in zip(first.parts, second.parts):
        np.testing.assert_array_equal(a.positions, b.positions)
        np.testing.assert_array_equal(a.normals, b.normals)
        assert a.color == b.color and a.name == b.name and a.tintable == b.tintable
        assert (a.uvs is None) == (b.uvs is None) and (a.texture is None) == (b.texture is None)
        if a.texture is not None:
            np.testing.assert_array_equal(a.uvs, b.uvs)
            np.testing.assert_array_equal(a.texture, b.texture)


@needs_package
def test_extent_record_equals_the_meshs_extent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library measures an SH3D asset once; a fresh library reads the record (no mesh
    load) and gets the same floats and dtype; a corrupt record is dropped, not trusted."""
    from perspecta.assets.library import AssetLibrary

    src = SH3DSource(cache_dir=tmp_path)
    info = next(i for i in src.list() if i.extra["sh3d_id"] == "Reallusion#girlStanding")
    first = AssetLibrary([src]).extent(info.asset_id)
    want = src.load(info, {}).extent()
    assert first.dtype == want.dtype and np.array_equal(first, want)
    records = list((tmp_path / "sh3d").glob("*.extent.json"))
    assert len(records) == 1

    def no_load(*a, **k):
        raise AssertionError("the extent record should have been used")

    monkeypatch.setattr(SH3DSource, "load", no_load)
    again = AssetLibrary([SH3DSource(cache_dir=tmp_path)]).extent(info.asset_id)
    assert again.dtype == want.dtype and np.array_equal(again, want)
    monkeypatch.undo()
    records[0].write_text("{not json")
    third = AssetLibrary([SH3DSource(cache_dir=tmp_path)]).extent(info.asset_id)
    assert np.array_equal(third, want)


@needs_package
def test_every_allowlist_entry_is_a_usable_model() -> None:
    src = SH3DSource()
    raw = yaml.safe_load(ALLOWLIST_PATH.read_text())["models"]
    assert 80 <= len(raw) <= 200
    models = {m.id: m for m in src.models()}
    for model_id, entry in src.allowlist.items():
        assert model_id in models, model_id
        m = models[model_id]
        assert not m.door_or_window, model_id
        assert m.elevation == 0, f"{model_id} is wall/ceiling mounted"
        assert entry.category == entry.category.lower() and " " not in entry.category
        with zipfile.ZipFile(m.catalogue_path) as zf:
            assert m.model in zf.namelist(), model_id
    infos = src.list()
    assert len(infos) == len(raw)
    assert len({i.asset_id for i in infos}) == len(infos)
    by_id = {i.extra["sh3d_id"]: i for i in infos}
    # names mislead: the CC0 "Motorbike" is a spring rider
    assert by_id["Blend Swap CC-0#motorbike"].category == "toy"
    # a model's own licence file overrides its catalogue's (CC-BY inside the CC-0 catalogue)
    assert by_id["Blend Swap CC-0#winchesterSofa"].license == "CC-BY-3.0"
    assert by_id["Blend Swap CC-0#chicken"].license == "CC0-1.0"
    assert by_id["Reallusion#male01"].license == "CC-BY-3.0-US"
    for needed in ("chair", "sofa", "bed", "table", "car", "person", "dog", "cat", "toilet", "refrigerator"):
        assert any(i.category == needed for i in infos), needed


def test_available_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PERSPECTA_SH3D_DIR", str(tmp_path / "nowhere"))
    assert not SH3DSource().available()
    assert SH3DSource().list() == []
    _write_catalogue(tmp_path / "X.sh3f", None, {"body": ((0, 0, 0), (1, 1, 1))}, (1, 1, 1))
    monkeypatch.setenv("PERSPECTA_SH3D_DIR", str(tmp_path))
    assert SH3DSource().available()
