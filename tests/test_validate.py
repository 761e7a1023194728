"""Tests of ``validate_dataset`` on small hand-built datasets.

A test-only suite ``validatetest`` registers two tasks with real ``derive`` functions
(nearest object to the camera; number of objects), so answer re-derivation is
exercised without the built-in suites. Each failure test breaks one thing in an
otherwise valid dataset and checks the report names it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from perspecta.dataset.item import Item
from perspecta.dataset.validate import ValidationReport, format_report, validate_dataset
from perspecta.suites.context import TaskContext
from perspecta.suites.registry import task
from perspecta.world.scene import Camera, Pose, Scene, SceneObject

SUITE = "validatetest"


def _derive_nearest(item: Item, scenes: dict[str, Scene]) -> str:
    """Label of the option naming the category of the object nearest the main camera."""
    scene = scenes[item.scene_id]
    eye = np.asarray(scene.camera("main").position)
    nearest = min(scene.objects, key=lambda o: float(np.linalg.norm(o.center() - eye)))
    return next(o.label for o in item.options if o.text == nearest.category)


def _derive_count(item: Item, scenes: dict[str, Scene]) -> str:
    return str(len(scenes[item.scene_id].objects))


@task(SUITE, "nearest", derive=_derive_nearest)
def _gen_nearest(ctx: TaskContext) -> list[Item]:
    """Test-only task: validation never calls generate."""
    return []


@task(SUITE, "count", derive=_derive_count)
def _gen_count(ctx: TaskContext) -> list[Item]:
    """Test-only task: validation never calls generate."""
    return []


def _obj(oid: str, category: str, xyz: tuple[float, float, float], size: tuple[float, float, float]) -> SceneObject:
    return SceneObject(id=oid, asset_id=f"proc/{category}", category=category, pose=Pose(position=xyz), size=size)


def _scenes() -> list[Scene]:
    cam = Camera(position=(0.0, -4.0, 1.5), look_at=(0.0, 0.0, 0.5))
    # s1: chair centre (0,-1,0.5) is 3.16 m from the camera, table centre (0,2,0.4) 6.09 m.
    s1 = Scene("s1", 11, "studio", [_obj("o1", "chair", (0, -1, 0), (0.5, 0.5, 1.0)),
                                     _obj("o2", "table", (0, 2, 0), (1.0, 1.0, 0.8))], [cam])
    # s2: lamp centre (1,-3,0.75) is 1.25 m away, sofa centre (0,3,0.4) 7.08 m; 3 objects in all.
    s2 = Scene("s2", 12, "studio", [_obj("o1", "lamp", (1, -3, 0), (0.3, 0.3, 1.5)),
                                     _obj("o2", "sofa", (0, 3, 0), (1.0, 2.0, 0.8)),
                                     _obj("o3", "ball", (-2, 0, 0), (0.3, 0.3, 0.3))], [cam])
    return [s1, s2]


def _items() -> list[dict[str, Any]]:
    q = "<image>\nWhich object is nearest to the camera?"

    def mcq(iid: str, group: str, variant: str, image: str, texts: list[str], answer: str, split: str, scene: str) -> dict:
        return {
            "id": iid, "suite": SUITE, "task": "nearest", "question": q, "images": [image],
            "answer_type": "mcq", "answer": answer, "group": group, "variant": variant, "split": split,
            "scene_id": scene, "seed": 1,
            "options": [{"label": chr(65 + i), "text": t} for i, t in enumerate(texts)],
        }

    return [
        mcq(f"{SUITE}/nearest/base/000000", "g0", "base", "images/vt/s1_a.png", ["table", "chair"], "B", "test", "s1"),
        mcq(f"{SUITE}/nearest/symmetric/000000", "g0", "symmetric", "images/vt/s1_a.png", ["chair", "table"], "A", "test", "s1"),
        mcq(f"{SUITE}/nearest/base/000001", "g1", "base", "images/vt/s2_a.png", ["sofa", "lamp", "ball"], "B", "train", "s2"),
        {
            "id": f"{SUITE}/count/base/000000", "suite": SUITE, "task": "count",
            "question": "How many objects are there? <image>", "images": ["images/vt/s2_b.png"],
            "answer_type": "open", "answer": "3", "answer_aliases": ["three"], "group": "g2",
            "split": "train", "scene_id": "s2", "seed": 2,
        },
    ]


IMAGE_COLORS = {"images/vt/s1_a.png": (200, 30, 30), "images/vt/s2_a.png": (30, 200, 30), "images/vt/s2_b.png": (30, 30, 200)}


def _png(path: Path, color: tuple[int, int, int], size: int = 32) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(sum(color))
    arr = np.clip(np.array(color) + rng.integers(-20, 20, (size, size, 3)), 0, 255).astype(np.uint8)
    Image.fromarray(arr).save(path, format="PNG")


def write_items(root: Path, items: list[dict[str, Any]]) -> None:
    (root / "items.jsonl").write_text("".join(json.dumps(d) + "\n" for d in items), encoding="utf-8")


def refresh_manifest(root: Path) -> None:
    """Rewrite manifest.json so counts and checksums describe the files as they are now."""
    items = [json.loads(line) for line in (root / "items.jsonl").read_text().splitlines() if line.strip()]
    images = sorted({p for d in items for p in d["images"]})
    files = ["items.jsonl", "scenes.jsonl", *[p for p in images if (root / p).is_file()]]
    by_task: dict[str, int] = {}
    for d in items:
        by_task[f"{d['suite']}/{d['task']}"] = by_task.get(f"{d['suite']}/{d['task']}", 0) + 1
    n_scenes = sum(1 for line in (root / "scenes.jsonl").read_text().splitlines() if line.strip())
    manifest = {
        "name": "tiny",
        "generator": {"package": "perspecta", "version": "0.1.0"},
        "created_by_command": "hand-built in tests/test_validate.py",
        "seed": 7,
        "suites": {SUITE: {"tasks": sorted({d["task"] for d in items}), "n": 2, "config": {}}},
        "renderer": {"name": "none", "version": "0"},
        "counts": {"items": len(items), "images": len(images), "scenes": n_scenes, "by_task": by_task},
        "checksums": {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in files},
        "assets": [],
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    for rel, color in IMAGE_COLORS.items():
        _png(root / rel, color)
    (root / "scenes.jsonl").write_text("".join(s.to_json() + "\n" for s in _scenes()))
    write_items(root, _items())
    refresh_manifest(root)
    return root


def errors_with(report: ValidationReport, *needles: str) -> list[str]:
    return [e for e in report.errors if all(n in e for n in needles)]


def test_good_dataset_passes(root: Path) -> None:
    report = validate_dataset(root)
    assert report.errors == []
    assert report.warnings == []
    assert report.ok
    assert report.counts["items"] == 4
    assert report.counts["images"] == 3
    assert report.counts["scenes"] == 2
    assert report.counts["groups"] == 3
    assert report.counts["derived"] == 4
    assert report.counts["derived_mismatches"] == 0
    assert report.counts["by_task"] == {f"{SUITE}/count": 1, f"{SUITE}/nearest": 3}
    assert report.counts["by_split"] == {"test": 2, "train": 2}
    text = format_report(report)
    assert text.startswith("OK:") and "4 items, 3 images, 2 scenes" in text


def test_missing_image(root: Path) -> None:
    (root / "images/vt/s2_a.png").unlink()
    report = validate_dataset(root)
    assert not report.ok
    assert errors_with(report, "images/vt/s2_a.png", "missing image file", "items.jsonl:3")
    assert len(report.errors) == 1, report.errors  # not repeated by the checksum check


def test_truncated_png(root: Path) -> None:
    p = root / "images/vt/s2_b.png"
    data = p.read_bytes()
    p.write_bytes(data[: len(data) * 2 // 3])
    refresh_manifest(root)  # so only the decode check can catch it
    report = validate_dataset(root)
    assert len(report.errors) == 1, report.errors
    assert errors_with(report, "images/vt/s2_b.png", "does not decode", "items.jsonl:4")


def test_truncated_png_fails_even_if_pillow_was_relaxed(root: Path) -> None:
    from PIL import ImageFile

    p = root / "images/vt/s1_a.png"
    p.write_bytes(p.read_bytes()[:-40])  # loses the IEND chunk and the end of the data
    refresh_manifest(root)
    old = ImageFile.LOAD_TRUNCATED_IMAGES
    ImageFile.LOAD_TRUNCATED_IMAGES = True
    try:
        report = validate_dataset(root)
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = old
    assert errors_with(report, "images/vt/s1_a.png", "does not decode")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is old


def test_corrupted_png_bytes(root: Path) -> None:
    p = root / "images/vt/s2_a.png"
    data = bytearray(p.read_bytes())
    data[60:80] = b"\x00" * 20  # inside the IDAT chunk: CRC and zlib stream break
    p.write_bytes(bytes(data))
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "images/vt/s2_a.png", "does not decode")


def test_answer_not_among_options(root: Path) -> None:
    items = _items()
    items[2]["answer"] = "D"
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:3", "field 'answer'", "'D' not among option labels A, B, C")


def test_broken_json_line_reports_line_and_continues(root: Path) -> None:
    refresh_manifest(root)
    lines = (root / "items.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]  # cut line 3 mid-object
    bad4 = json.loads(lines[3])
    bad4["split"] = "holdout"
    lines[3] = json.dumps(bad4)
    (root / "items.jsonl").write_text("\n".join(lines) + "\n")
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:3:", "invalid JSON")
    # the validator went on to line 4 and reported its own problem too
    assert errors_with(report, "items.jsonl:4", "field 'split'", "'holdout'")


def test_derived_answer_disagrees(root: Path) -> None:
    items = _items()
    items[0]["answer"] = "A"  # 'table' -- but the chair is nearer
    items[3]["answer"] = "2"  # scene s2 has 3 objects
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:1", "field 'answer'", "stored 'A' but derived 'B'", "'s1'")
    assert errors_with(report, "items.jsonl:4", "stored '2' but derived '3'")
    assert report.counts["derived_mismatches"] == 2
    assert len(report.errors) == 2, report.errors
    # without derivation the same dataset passes
    assert validate_dataset(root, derive_answers=False).ok


def test_checksum_mismatch(root: Path) -> None:
    _png(root / "images/vt/s1_a.png", (10, 10, 10))  # a valid PNG, but not the one recorded
    report = validate_dataset(root)
    assert len(report.errors) == 1, report.errors
    assert errors_with(report, "images/vt/s1_a.png", "checksum mismatch")


def test_items_file_checksum_mismatch(root: Path) -> None:
    with open(root / "items.jsonl", "a") as f:
        f.write("\n")  # harmless blank line, but the bytes changed
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl", "checksum mismatch")


def test_missing_checksum_entry(root: Path) -> None:
    m = json.loads((root / "manifest.json").read_text())
    del m["checksums"]["images/vt/s2_b.png"]
    (root / "manifest.json").write_text(json.dumps(m))
    report = validate_dataset(root)
    assert errors_with(report, "field 'checksums'", "no entry for images/vt/s2_b.png")


def test_path_traversal_image(root: Path) -> None:
    _png(root.parent / "outside.png", (1, 2, 3))
    items = _items()
    items[3]["images"] = ["../outside.png"]
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:4", "field 'images[0]'", "'..'")


def test_symlink_escaping_root(root: Path) -> None:
    _png(root.parent / "outside.png", (1, 2, 3))
    (root / "images/vt/s2_b.png").unlink()
    os.symlink(root.parent / "outside.png", root / "images/vt/s2_b.png")
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "images/vt/s2_b.png", "outside the dataset root")


def test_duplicate_ids(root: Path) -> None:
    items = _items()
    items[2]["id"] = items[0]["id"]
    items[2]["variant"] = "base"
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:3", "field 'id'", "duplicate id (first at line 1)")


def test_cross_split_image_reuse(root: Path) -> None:
    items = _items()
    items[3]["images"] = ["images/vt/s1_a.png"]  # a train item shows a test image
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    hits = errors_with(report, "images/vt/s1_a.png", "different splits test, train")
    assert hits and "items.jsonl:4" in hits[0]
    assert any("s2_b.png" in w and "not referenced" in w for w in report.warnings)


def test_group_rules(root: Path) -> None:
    items = _items()
    items[1]["variant"] = "base"
    items[1]["id"] = f"{SUITE}/nearest/base/000000-1"
    items[3]["group"] = "g1"  # count item joins a nearest group: wrong task, second base
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "group 'g0'", "2 'base' variant(s)")
    assert errors_with(report, "group 'g1'", "disagree on task")
    assert errors_with(report, "group 'g1'", "2 'base' variant(s)")


def test_unknown_scene_and_unknown_task(root: Path) -> None:
    items = _items()
    items[0]["scene_id"] = "s9"
    items[3]["task"] = "nosuchtask"
    items[3]["id"] = f"{SUITE}/nosuchtask/base/000000"
    write_items(root, items)
    refresh_manifest(root)
    report = validate_dataset(root)
    assert errors_with(report, "items.jsonl:1", "field 'scene_id'", "'s9' not in scenes.jsonl")
    assert errors_with(report, f"unknown task {SUITE}/nosuchtask", "items.jsonl:4")


def test_manifest_problems(root: Path) -> None:
    m = json.loads((root / "manifest.json").read_text())
    m["counts"]["items"] = 5
    del m["renderer"]
    m["suites"][SUITE]["tasks"] = ["nearest"]
    (root / "manifest.json").write_text(json.dumps(m))
    report = validate_dataset(root)
    assert errors_with(report, "manifest.json", "field 'counts.items'", "says 5, found 4")
    assert errors_with(report, "manifest.json", "field 'renderer'", "missing")
    assert errors_with(report, "manifest.json", f"task {SUITE}/count not listed")


def test_missing_manifest_and_scenes(root: Path) -> None:
    (root / "manifest.json").unlink()
    (root / "scenes.jsonl").unlink()
    report = validate_dataset(root)
    assert errors_with(report, "manifest.json", "not found")
    assert errors_with(report, "scenes.jsonl", "not found")


def test_not_a_directory(tmp_path: Path) -> None:
    report = validate_dataset(tmp_path / "nope")
    assert not report.ok and "not a directory" in report.errors[0]


def test_format_report_caps_messages() -> None:
    report = ValidationReport(root=Path("/x"), errors=[f"e{i}" for i in range(7)], counts={"items": 3})
    text = format_report(report, max_messages=5)
    assert text.splitlines()[0].startswith("FAILED: /x -- 3 items")
    assert "  e4" in text and "  e5" not in text
    assert "... and 2 more errors" in text
