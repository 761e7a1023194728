"""Ground-truth depth maps: ``generate --with-depth``, ``validate``, ``eval --input depth-concat``.

The depth-concat run goes over real HTTP to the local fake server, which records the size
of every image it receives: each must be one image of twice the width of the plain run's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from perspecta.cli import app
from perspecta.dataset.depth import decode, read_codes
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.validate import validate_dataset
from perspecta.models.fake_server import FakeServer

TASKS = ["dori/view_parallelism", "dori/canonical_orientation", "spin/identity_matching", "lrr/pos_c"]


@pytest.fixture(scope="module")
def with_depth(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("depth") / "ds"
    generate_dataset(out, GenerationConfig(suites=["dori", "spin", "lrr"], n=1, seed=2, tasks=TASKS, with_depth=True))
    return out


def test_depth_maps_are_stored_checked_and_match_the_render(with_depth: Path, tmp_path: Path) -> None:
    manifest = json.loads((with_depth / "manifest.json").read_text())
    depth = manifest["depth"]
    items = [json.loads(x) for x in (with_depth / "items.jsonl").read_text().splitlines()]
    images = {p for it in items for p in it["images"]}
    assert set(depth["files"]) == images and depth["without"] == {}
    grid = next(v for k, v in depth["files"].items() if "/pos_c/" in k)  # three renders in a 3x3 black grid
    grid_m = decode(read_codes(with_depth / grid))
    cell = grid_m.shape[0] // 3
    filled = [np.isfinite(grid_m[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell]).mean() > 0.3
              for r in range(3) for c in range(3)]
    assert sum(filled) == 3  # depth in the three picture cells, "no surface" in the black ones
    assert manifest["config"]["with_depth"] is True and "--with-depth" in manifest["created_by_command"]
    for image, rel in depth["files"].items():
        codes = read_codes(with_depth / rel)
        assert codes.dtype == np.uint16 and rel in manifest["checksums"]
        rgb = np.asarray(Image.open(with_depth / image).convert("RGB"))
        assert codes.shape == rgb.shape[:2]
        metres = decode(codes)
        finite = np.isfinite(metres)
        assert finite.any() and 0.05 < float(np.median(metres[finite])) < 100.0
    # DORI view parallelism has a ground plane (a surface everywhere below the horizon)
    # while DORI canonical orientation has no ground: its background has no surface
    vp = next(v for k, v in depth["files"].items() if "view_parallelism" in k)
    co = next(v for k, v in depth["files"].items() if "canonical" in k)
    assert np.isfinite(decode(read_codes(with_depth / vp))).mean() > 0.4
    assert 0.0 < np.isfinite(decode(read_codes(with_depth / co))).mean() < 0.6
    report = validate_dataset(with_depth, derive_answers=False)
    assert report.ok, report.errors
    assert report.counts["depth_maps"] == len(depth["files"]) and not report.warnings

    broken = tmp_path / "broken"
    shutil.copytree(with_depth, broken)
    rel = sorted(depth["files"].values())[0]
    Image.new("L", (8, 8)).save(broken / rel)  # an 8-bit image of the wrong size
    errors = validate_dataset(broken, derive_answers=False).errors
    assert any("16-bit" in e and rel in e for e in errors)
    assert any("checksum mismatch" in e and rel in e for e in errors)
    (broken / rel).unlink()
    assert any(f"{rel}: missing depth map" in e for e in validate_dataset(broken, derive_answers=False).errors)


def test_depth_concat_sends_one_image_of_twice_the_width(with_depth: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["eval", str(with_depth), "--model", "openai:fake", "--suite", "dori", "--suite", "spin",
            "--no-progress", "--concurrency", "2"]
    with FakeServer() as server:
        plain = runner.invoke(app, [*args, "--base-url", server.url, "--out", str(tmp_path / "rgb")])
        assert plain.exit_code == 0, plain.output
        rgb_sizes = sorted(s for req in server.stats.image_sizes for s in req)
        n_requests = len(server.stats.image_sizes)
        server.stats.reset()
        res = runner.invoke(app, [*args, "--base-url", server.url, "--out", str(tmp_path / "depth"),
                                  "--input", "depth-concat"])
        assert res.exit_code == 0, res.output
        depth_sizes = sorted(s for req in server.stats.image_sizes for s in req)
    assert len(server.stats.image_sizes) == n_requests and len(depth_sizes) == len(rgb_sizes) > 0
    assert depth_sizes == sorted((2 * w, h) for w, h in rgb_sizes)  # one image each, twice as wide
    run = json.loads(next((tmp_path / "depth").glob("run-*.json")).read_text())
    assert run["config"]["inputs"]["depth"] is True


def test_depth_concat_image_is_the_view_then_its_depth(with_depth: Path) -> None:
    from perspecta.models.base import InputSettings
    from perspecta.models.images import load_image

    depth = json.loads((with_depth / "manifest.json").read_text())["depth"]
    image = next(k for k in depth["files"] if "view_parallelism" in k)
    both = np.asarray(load_image(with_depth / image, InputSettings(max_side=128, depth=True)))
    left, right = both[:, :128], both[:, 128:]
    assert both.shape == (128, 256, 3)
    assert np.array_equal(left, np.asarray(load_image(with_depth / image, InputSettings(max_side=128))))
    assert np.array_equal(right[..., 0], right[..., 1])  # grey
    codes = np.asarray(Image.fromarray(read_codes(with_depth / depth["files"][image])).resize((128, 128), Image.NEAREST))
    near, far = codes == codes[codes > 0].min(), codes == codes.max()
    assert right[..., 0][near].mean() > right[..., 0][far].mean()  # nearer is brighter
    assert (right[..., 0][codes == 0] == 0).all()  # no surface is black


def test_depth_concat_without_depth_maps_is_one_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    generate_dataset(plain, GenerationConfig(suites=["spin"], n=1, seed=2, tasks=["spin/identity_matching"]))
    assert "depth" not in json.loads((plain / "manifest.json").read_text())
    assert not list(plain.rglob("*_depth.png"))
    res = CliRunner().invoke(app, ["eval", str(plain), "--model", "baseline:chance", "--input", "depth-concat",
                                   "--out", str(tmp_path / "r"), "--no-progress"])
    assert res.exit_code == 2 and "--with-depth" in res.output
    assert not (tmp_path / "r" / "results.jsonl").exists()
    res = CliRunner().invoke(app, ["eval", str(plain), "--model", "baseline:chance", "--input", "depth",
                                   "--out", str(tmp_path / "r"), "--no-progress"])
    assert res.exit_code == 2 and "--input must be rgb or depth-concat" in res.output


def test_render_log_finds_the_render_behind_an_annotated_repainted_or_turned_image() -> None:
    from types import SimpleNamespace

    from perspecta.suites.depth_log import RenderLog

    rng = np.random.default_rng(0)
    renders = []
    for _ in range(3):
        depth = np.full((32, 32), np.inf, dtype=np.float32)
        depth[4:20, 6:30] = rng.uniform(1, 5, (16, 24))  # an asymmetric object on empty background
        renders.append(SimpleNamespace(rgb=rng.integers(0, 255, (32, 32, 3), dtype=np.uint8), depth=depth))
    it = iter(renders)
    log = RenderLog(SimpleNamespace(render=lambda scene, cam: next(it), name="fake"))
    for _ in renders:
        log.render(None, None)
    assert log.name == "fake"  # the proxy forwards everything else
    target = renders[1]
    shown = target.rgb.copy()
    shown[~np.isfinite(target.depth)] = (200, 200, 200)  # background repainted
    shown[5:7, 8:12] = (255, 0, 0)  # a small overlay on the object
    turned = np.rot90(shown, 1)
    depth, why = log.depth_for(turned)
    assert why == "" and np.array_equal(depth, np.rot90(target.depth, 1))
    assert np.array_equal(log.depth_for(renders[2].rgb)[0], renders[2].depth)
    collage = np.zeros((32, 32, 3), dtype=np.uint8)
    collage[:16, :16] = renders[0].rgb[::2, ::2]  # a collage of scaled views matches no render
    depth, why = log.depth_for(collage)
    assert depth is None and "collage" in why
    grid = np.zeros((96, 96, 3), dtype=np.uint8)  # whole renders in cells of a black 3x3 grid
    grid[:32, 32:64], grid[64:, :32] = renders[0].rgb, renders[2].rgb
    grid[1:4, 33:36] = 255  # a tag in the cell's corner
    depth, why = log.depth_for(grid)
    assert why == "" and np.array_equal(depth[:32, 32:64], renders[0].depth)
    assert np.array_equal(depth[64:, :32], renders[2].depth) and np.isinf(depth[:32, :32]).all()
