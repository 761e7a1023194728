"""Tests of the item/manifest schema checks and the dataset file readers/writers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perspecta.dataset.io import (
    DatasetError,
    read_items,
    read_manifest,
    read_scenes,
    sha256_file,
    write_json_atomic,
    write_jsonl_atomic,
)
from perspecta.dataset.item import Item, Option, letter_options
from perspecta.dataset.schema import (
    ITEM_FIELDS,
    check_item,
    check_manifest,
    check_relative_path,
    ensure_item,
)
from perspecta.world.scene import Camera, Pose, Scene, SceneObject


def mcq(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": "dori/facing/base/000003",
        "suite": "dori",
        "task": "facing",
        "question": "<image>\nWhich way does the chair face?",
        "images": ["images/dori/facing/000003_main.png"],
        "answer_type": "mcq",
        "answer": "B",
        "options": [{"label": "A", "text": "left"}, {"label": "B", "text": "right"}, {"label": "C", "text": "toward"}],
        "granularity": "coarse",
        "group": "dori/facing/000003",
        "variant": "base",
        "split": "test",
        "scene_id": "dori-facing-000003",
        "seed": 12345,
        "metadata": {"yaw": 30.0},
    }
    d.update(over)
    return d


def only(errors: list[str]) -> str:
    assert len(errors) == 1, errors
    return errors[0]


def test_item_fields_table_matches_item_dataclass() -> None:
    # if Item gains a field, the schema must learn its type too
    assert set(ITEM_FIELDS) == set(Item.__dataclass_fields__)


def test_valid_items_pass() -> None:
    assert check_item(mcq()) == []
    assert check_item(mcq(id="dori/facing/symmetric+syntactic/000003-1", variant="symmetric+syntactic")) == []
    # minimal: only the required fields (variant defaults to base)
    minimal = {k: mcq()[k] for k in ("id", "suite", "task", "question", "images", "answer_type", "answer", "options")}
    assert check_item(minimal) == []
    yesno = mcq(answer_type="yesno", answer="no", options=[], granularity=None)
    assert check_item(yesno) == []
    open_ = mcq(answer_type="open", answer="3", options=[], answer_aliases=["three"])
    assert check_item(open_) == []
    two_images = mcq(
        question="<image> then <image>: which is the first view rotated?",
        images=["images/a.png", "images/b.png"],
        options=[{"label": "A", "image": 0}, {"label": "B", "image": 1}],
        answer="A",
    )
    assert check_item(two_images) == []


def test_item_round_trip_through_to_dict() -> None:
    item = Item(
        id="spin/rot/base/000001", suite="spin", task="rot", question="<image> ?", images=["images/x.png"],
        answer_type="mcq", answer="A", options=letter_options(["cw", "ccw"]), group="g", scene_id="s",
    )
    assert ensure_item(item) is item
    assert Item.from_dict(item.to_dict()) == item


def test_answer_not_among_labels() -> None:
    assert only(check_item(mcq(answer="D"))) == "field 'answer': 'D' not among option labels A, B, C"


def test_missing_and_mistyped_fields() -> None:
    d = mcq()
    del d["answer"]
    assert only(check_item(d)) == "field 'answer': missing (required)"
    assert only(check_item(mcq(seed="7"))) == "field 'seed': expected an integer, got string"
    assert only(check_item(mcq(seed=True))) == "field 'seed': expected an integer, got boolean"
    assert only(check_item(mcq(images="a.png", question="?"))) == "field 'images': expected a list, got string"
    assert only(check_item(mcq(colour="red"))).startswith("field 'colour': unknown field")
    assert check_item([1, 2]) == ["item must be a JSON object, got list"]


def test_id_format_and_consistency() -> None:
    assert only(check_item(mcq(id="dori/facing/000003"))).startswith("field 'id': 'dori/facing/000003' does not match")
    assert only(check_item(mcq(id="dori/facing/base/0 3"))).startswith("field 'id'")
    assert only(check_item(mcq(id="spin/facing/base/000003"))) == (
        "field 'id': suite part 'spin' differs from field 'suite' 'dori'"
    )
    assert only(check_item(mcq(id="dori/facing/symmetric/000003"))) == (
        "field 'id': variant part 'symmetric' differs from field 'variant' 'base'"
    )
    d = mcq(id="dori/facing/symmetric/000003")
    del d["variant"]  # defaults to base
    assert "variant part 'symmetric'" in only(check_item(d))


def test_options_rules() -> None:
    dup = mcq(options=[{"label": "A", "text": "x"}, {"label": "A", "text": "y"}], answer="A")
    assert only(check_item(dup)) == "field 'options[1].label': duplicate label 'A'"
    both = mcq(options=[{"label": "A", "text": "x", "image": 0}, {"label": "B", "text": "y"}], answer="A")
    assert only(check_item(both)) == "field 'options[0]': needs exactly one of 'text' or 'image'"
    neither = mcq(options=[{"label": "A"}, {"label": "B", "text": "y"}], answer="A")
    assert only(check_item(neither)) == "field 'options[0]': needs exactly one of 'text' or 'image'"
    out_of_range = mcq(options=[{"label": "A", "image": 1}, {"label": "B", "text": "y"}], answer="A")
    assert only(check_item(out_of_range)) == "field 'options[0].image': index 1 out of range for 1 image(s)"
    assert only(check_item(mcq(options=[], answer="A"))) == "field 'options': an mcq item needs at least 2 options, got 0"
    extra = mcq(options=[{"label": "A", "text": "x", "score": 1}, {"label": "B", "text": "y"}], answer="A")
    assert only(check_item(extra)).startswith("field 'options[0].score': unknown option field")


def test_yesno_and_open_rules() -> None:
    assert only(check_item(mcq(answer_type="yesno", answer="Yes", options=[]))) == (
        "field 'answer': 'Yes' is not 'yes' or 'no' (answer_type yesno)"
    )
    errs = check_item(mcq(answer_type="yesno", answer="yes"))
    assert errs == ["field 'options': must be empty for answer_type yesno, got 3"]
    assert only(check_item(mcq(answer_type="open", answer="  ", options=[]))).startswith("field 'answer': empty")
    assert only(check_item(mcq(answer_type="free"))) == "field 'answer_type': 'free' is not one of mcq, yesno, open"


def test_image_markers_and_enums() -> None:
    assert only(check_item(mcq(question="Which way does the chair face?"))) == (
        "field 'question': has 0 <image> marker(s) but 'images' has 1 entry"
    )
    assert only(check_item(mcq(granularity="fine"))) == "field 'granularity': 'fine' is not one of coarse, granular, null"
    assert only(check_item(mcq(split="dev"))) == "field 'split': 'dev' is not one of test, train, val"


@pytest.mark.parametrize(
    "path, fragment",
    [
        ("../outside.png", "'..'"),
        ("images/../../x.png", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x.png", "absolute"),
        ("images\\a.png", "backslash"),
        ("images//a.png", "not normalised"),
        ("./images/a.png", "not normalised"),
        ("", "empty path"),
    ],
)
def test_bad_image_paths(path: str, fragment: str) -> None:
    err = only(check_item(mcq(images=[path])))
    assert err.startswith("field 'images[0]': ") and fragment in err
    assert check_relative_path("images/dori/a.png") is None


def test_ensure_item_raises_with_all_errors() -> None:
    item = Item(id="x", suite="dori", task="t", question="q", images=[], answer_type="mcq", answer="Z",
                options=letter_options(["only"]))
    with pytest.raises(ValueError, match="field 'id'.*field 'options'.*field 'answer'"):
        ensure_item(item)


def good_manifest() -> dict[str, Any]:
    return {
        "name": "demo",
        "generator": {"package": "perspecta", "version": "0.1.0"},
        "created_by_command": ["perspecta", "generate", "--suite", "dori"],
        "seed": 0,
        "suites": {"dori": {"tasks": ["facing"], "n": 10, "config": {"views": 1}}},
        "renderer": {"name": "moderngl", "version": "5.13.0"},
        "counts": {"items": 10, "images": 10, "scenes": 10, "by_task": {"dori/facing": 10}},
        "checksums": {"items.jsonl": "0" * 64},
        "assets": [{"asset_id": "proc/chair", "license": "CC0-1.0", "attribution": "procedural"}],
    }


def test_check_manifest() -> None:
    assert check_manifest(good_manifest()) == []
    m = good_manifest()
    del m["generator"]["version"]
    m["seed"] = "0"
    m["checksums"]["../x"] = "ABC"
    m["assets"][0].pop("license")
    errs = check_manifest(m)
    assert "field 'generator.version': missing (required)" in errs
    assert "field 'seed': expected an integer, got string" in errs
    assert any(e.startswith("field 'checksums': path '../x'") for e in errs)
    assert "field 'checksums.../x': expected 64 lowercase hex digits (sha256), got 'ABC'" in errs
    assert "field 'assets[0].license': missing (required)" in errs
    assert len(errs) == 5, errs
    assert check_manifest([]) == ["manifest must be a JSON object, got list"]


# --------------------------------------------------------------------------- io


def test_write_and_read_items_round_trip(tmp_path: Path) -> None:
    items = [
        Item.from_dict(mcq()),
        Item.from_dict(mcq(id="dori/facing/base/000004", answer_type="yesno", answer="yes", options=[],
                           metadata={"yaw": np.float32(1.5), "ids": np.arange(2), "n": np.int64(3)})),
    ]
    path = tmp_path / "sub" / "items.jsonl"
    assert write_jsonl_atomic(path, items) == 2
    back = read_items(path)
    assert [i.id for i in back] == ["dori/facing/base/000003", "dori/facing/base/000004"]
    assert back[0] == items[0]
    assert back[1].metadata == {"yaw": 1.5, "ids": [0, 1], "n": 3}
    assert back[0].options[1] == Option(label="B", text="right")
    assert [p.name for p in path.parent.iterdir()] == ["items.jsonl"]  # no temp file left


def test_read_items_reports_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(mcq()) + "\n\n" + json.dumps(mcq(answer="Q")) + "\n")
    with pytest.raises(DatasetError) as e:
        read_items(path)
    assert str(e.value) == f"{path}:3: field 'answer': 'Q' not among option labels A, B, C"
    path.write_text(json.dumps(mcq()) + "\n" + '{"id": "x", "suite":\n')
    with pytest.raises(DatasetError, match=r"items.jsonl:2: invalid JSON: Expecting value \(column 21\)"):
        read_items(path)
    path.write_text(json.dumps(mcq())[:-1] + ', "seed": NaN}\n')
    with pytest.raises(DatasetError, match=r":1: invalid JSON: NaN is not valid JSON"):
        read_items(path)
    with pytest.raises(DatasetError, match="items file not found"):
        read_items(tmp_path / "nope.jsonl")


def test_write_refuses_nan_and_keeps_old_file(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    write_jsonl_atomic(path, [{"a": 1}])
    before = path.read_bytes()
    with pytest.raises(DatasetError, match="NaN"):
        write_jsonl_atomic(path, [{"a": 2}, {"b": float("nan")}])
    assert path.read_bytes() == before  # the failed write did not touch the file
    assert sorted(os.listdir(tmp_path)) == ["items.jsonl"]


def test_json_atomic_and_sha256(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    write_json_atomic(path, good_manifest())
    assert read_manifest(path) == good_manifest()
    (tmp_path / "abc.txt").write_bytes(b"abc")
    # sha256("abc"), FIPS 180-2 test vector
    assert sha256_file(tmp_path / "abc.txt") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    path.write_text("[1]")
    with pytest.raises(DatasetError, match="must be a JSON object"):
        read_manifest(path)
    path.write_text('{"a": 1,\n  "b": }')
    with pytest.raises(DatasetError, match=r"manifest.json:2: invalid JSON"):
        read_manifest(path)


def test_read_scenes(tmp_path: Path) -> None:
    s = Scene("s1", 3, "studio", [SceneObject("o1", "proc/chair", "chair", Pose((1.0, 2.0, 0.0), yaw=90.0))],
              [Camera(position=(0.0, -3.0, 1.0), look_at=(0.0, 0.0, 0.5))])
    path = tmp_path / "scenes.jsonl"
    write_jsonl_atomic(path, [s])
    scenes = read_scenes(path)
    assert list(scenes) == ["s1"] and scenes["s1"] == s
    write_jsonl_atomic(path, [s, s])
    with pytest.raises(DatasetError, match=r"scenes.jsonl:2: field 'scene_id': duplicate 's1' \(first at line 1\)"):
        read_scenes(path)
    path.write_text('{"scene_id": "s2", "seed": 1}\n')
    with pytest.raises(DatasetError, match=r":1: field 'kind': missing"):
        read_scenes(path)


def test_item_option_lookups() -> None:
    from perspecta.dataset.item import label_of_image

    it = Item.from_dict(mcq())
    it.options = [Option("A", "left"), Option("B", "right"), Option("C", image=2)]
    assert it.label_of("right") == "B"
    assert it.label_of_image(2) == "C" and label_of_image(it.options, 2) == "C"
    assert it.option("A").text == "left"
    with pytest.raises(ValueError, match="'up' is not among its options"):
        it.label_of("up")
    with pytest.raises(ValueError, match="no option labelled 'D'"):
        it.option("D")
