"""SpinBench tasks: every derive() on hand-built scenes with hand-worked answers, and a
small generated dataset that validates and has the promised shape.

Hand scenes put the reference camera on -Y looking toward +Y, so the image's right is
world +X, "closer" is more negative Y, and an object with yaw -90 faces the camera.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from perspecta.dataset.item import Item, Option, letter_options
from perspecta.suites.spin import identity, perspective, relations, rotation
from perspecta.world.scene import Camera, Pose, Scene, SceneObject


def obj(oid: str, x: float, y: float, yaw: float = 0.0, *, asset: str = "proc:chair", cat: str = "chair",
        size: tuple[float, float, float] = (0.2, 0.2, 0.2)) -> SceneObject:
    return SceneObject(id=oid, asset_id=asset, category=cat, pose=Pose((x, y, 0.0), yaw), size=size)


def cam(name: str = "main", pos: tuple[float, float, float] = (0.0, -5.0, 2.0)) -> Camera:
    return Camera(name=name, position=pos, look_at=(0.0, 0.0, 0.1))


def mk(task: str, options: list[Option], md: dict, images: int = 1) -> Item:
    return Item(id=f"spin/{task}/base/000000", suite="spin", task=task, question="<image>" * images,
                images=[f"i{k}.png" for k in range(images)], answer_type="mcq", answer="A", options=options,
                scene_id="s", metadata=md)


def scenes(objects: list[SceneObject], cameras: list[Camera]) -> dict[str, Scene]:
    return {"s": Scene(scene_id="s", seed=0, kind="clutter", objects=objects, cameras=cameras)}


# --------------------------------------------------------------------------- grounding


GROUND = scenes([obj("a", -1.0, -1.0), obj("b", 1.0, 1.0)], [cam()])  # a: left and closer


@pytest.mark.parametrize(
    ("relation", "form", "asked", "x", "y", "texts", "want"),
    [
        ("left_right", "which", "left", "a", "b", ["mug", "ball"], "mug"),
        ("left_right", "which", "right", "a", "b", ["mug", "ball"], "ball"),  # symmetric flips the answer
        ("left_right", "is", None, "a", "b", ["left", "right"], "left"),
        ("left_right", "is", None, "b", "a", ["left", "right"], "right"),  # symmetric + syntactic
        ("front_behind", "which", "front", "a", "b", ["mug", "ball"], "mug"),
        ("front_behind", "is", None, "b", "a", ["in front of", "behind"], "behind"),
        ("near_far", "which", "farther", "a", "b", ["mug", "ball"], "ball"),
        ("near_far", "is", None, "a", "b", ["closer", "farther"], "closer"),
    ],
)
def test_grounding_derive(relation, form, asked, x, y, texts, want) -> None:
    options = letter_options(texts)
    md = {"relation": relation, "form": form, "asked": asked, "x_id": x, "y_id": y,
          "names": {"a": "mug", "b": "ball"}, "frames": [{"camera": "main", "objects": ["a", "b"]}]}
    assert relations.derive_grounding(mk("relation_grounding", options, md), GROUND) == options[texts.index(want)].label


def test_grounding_refuses_a_tie() -> None:
    tie = scenes([obj("a", -0.01, 0.0), obj("b", 0.01, 0.0)], [cam()])
    md = {"relation": "left_right", "form": "which", "asked": "left", "x_id": "a", "y_id": "b",
          "names": {"a": "mug", "b": "ball"}, "frames": [{"camera": "main", "objects": ["a", "b"]}]}
    with pytest.raises(ValueError, match="within the margin"):
        relations.derive_grounding(mk("relation_grounding", letter_options(["mug", "ball"]), md), tie)


@pytest.mark.parametrize(("end", "want"), [((0.5, 0.0), "to the right"), ((-0.5, 0.0), "to the left"),
                                           ((0.0, -0.6), "toward the viewer (to the front)"),
                                           ((0.0, 0.6), "away from the viewer (to the back)")])
def test_translation_derive(end, want) -> None:
    sc = scenes([obj("a", 0.0, 0.0), obj("a@t1", *end)], [cam()])
    texts = list(relations.MOVE_TEXT.values())
    options = letter_options(texts)
    md = {"object_id": "a", "moved_id": "a@t1",
          "frames": [{"camera": "main", "objects": ["a"]}, {"camera": "main", "objects": ["a@t1"]}]}
    assert relations.derive_translation(mk("dynamic_translation", options, md, 2), sc) == options[texts.index(want)].label


# --------------------------------------------------------------------------- rotation family


@pytest.mark.parametrize(
    ("turn", "fr", "want"),
    [
        (45.0, "world", "counter-clockwise"), (-90.0, "world", "clockwise"),
        (45.0, "own", "to their own left"), (-45.0, "own", "to their own right"),
        # facing the camera (yaw -90) and turning to their own left, the face swings to the viewer's right
        (45.0, "viewer", "toward the viewer's right"), (-90.0, "viewer", "toward the viewer's left"),
    ],
)
def test_rotation_derive(turn, fr, want) -> None:
    sc = scenes([obj("p", 0, 0, -90.0), obj("p@t1", 0, 0, -90.0 + turn)], [cam()])
    texts = list(rotation.TURN_TEXT[fr].values())
    options = letter_options(texts)
    md = {"turn_frame": fr, "frames": [{"camera": "main", "objects": ["p"]}, {"camera": "main", "objects": ["p@t1"]}]}
    assert rotation.derive_rotation(mk("dynamic_rotation", options, md, 2), sc) == options[texts.index(want)].label


def test_a_half_turn_has_no_direction() -> None:
    sc = scenes([obj("p", 0, 0, 0.0), obj("p@t1", 0, 0, 180.0)], [cam()])
    md = {"turn_frame": "world", "frames": [{"camera": "main", "objects": ["p"]}, {"camera": "main", "objects": ["p@t1"]}]}
    with pytest.raises(ValueError, match="no clear direction"):
        rotation.derive_rotation(mk("dynamic_rotation", letter_options(["clockwise", "counter-clockwise"]), md, 2), sc)


@pytest.mark.parametrize(("view_frame", "asked", "want_cam"),
                         [("own", "left", "c_left"), ("own", "right", "c_right"), ("own", "back", "c_back"),
                          ("viewer", "left", "c_right"), ("viewer", "right", "c_left")])
def test_canonical_view_derive(view_frame, asked, want_cam) -> None:
    # object faces +X (yaw 0): its left is +Y, its right -Y, its back -X
    cams = [cam("main", (5.0, 0.0, 1.0)), cam("c_back", (-5.0, 0.0, 1.0)), cam("c_left", (0.0, 5.0, 1.0)),
            cam("c_right", (0.0, -5.0, 1.0))]
    sc = scenes([obj("o", 0, 0, 0.0)], cams)
    names = ["c_back", "c_left", "c_right"]
    options = [Option(label=chr(65 + i), image=i + 1) for i in range(3)]
    md = {"view_frame": view_frame, "asked_view": asked,
          "frames": [{"camera": c.name, "objects": ["o"]} for c in cams]}
    assert rotation.derive_canonical(mk("canonical_view", options, md, 4), sc) == options[names.index(want_cam)].label


def test_mental_rotation_derive() -> None:
    # reference yaw 10; 90 degrees clockwise from above is yaw -80
    copies = [obj(f"o@opt{k}", 0, 0, 10.0 + t) for k, t in enumerate([0.0, 90.0, -90.0, 180.0])]
    sc = scenes([obj("o", 0, 0, 10.0), *copies], [cam()])
    options = [Option(label=chr(65 + i), image=i + 1) for i in range(4)]
    md = {"target_id": "o", "angle_deg": 90.0, "direction": "clockwise",
          "frames": [{"camera": "main", "objects": ["o"]}] + [{"camera": "main", "objects": [c.id]} for c in copies]}
    assert rotation.derive_mental(mk("mental_rotation", options, md, 5), sc) == "C"
    md["direction"] = "counter-clockwise"
    assert rotation.derive_mental(mk("mental_rotation", options, md, 5), sc) == "B"


def test_identity_derive() -> None:
    other = obj("o1", 0, 0, asset="proc:dog", cat="dog")
    sc = scenes([obj("o0", 0, 0), other], [cam()])
    options = [Option(label=chr(65 + i), image=i) for i in range(3)]
    md = {"frames": [{"camera": "main", "objects": [i]} for i in ("o0", "o0", "o1")]}
    assert identity.derive(mk("identity_matching", options, md, 3), sc) == "C"
    md = {"frames": [{"camera": "main", "objects": [i]} for i in ("o0", "o0", "o0")]}
    with pytest.raises(ValueError, match="odd object"):
        identity.derive(mk("identity_matching", options, md, 3), sc)


# --------------------------------------------------------------------------- perspective taking


def _pt_scene() -> dict[str, Scene]:
    # x at -X (left of the viewer on -Y), y at +X; "viewer's left side" is az 270 - 90 = 180, i.e. -X
    sc = scenes([obj("x", -0.5, 0.0), obj("y", 0.5, 0.0)], [cam()])["s"]
    for v in ("back", "left", "right"):
        sc.cameras.append(perspective.view_camera(sc, v, f"view_{v}"))
    return {"s": sc}


@pytest.mark.parametrize(("view", "kind", "asked", "want"),
                         [("back", "left_right", "left", "y"),  # left and right swap from the back
                          ("left", "near_far", "closer", "x"),  # the left-hand object is nearer the left side
                          ("right", "near_far", "closer", "y"), ("right", "near_far", "farther", "x")])
def test_relation_transformation_derive(view, kind, asked, want) -> None:
    sc = _pt_scene()
    options = letter_options(["x", "y"])
    md = {"asked_relation": kind, "asked": asked, "new_camera": f"view_{view}", "x_id": "x", "y_id": "y",
          "names": {"x": "x", "y": "y"}, "frames": [{"camera": "main", "objects": ["x", "y"]}]}
    assert perspective.derive_transform(mk("relation_transformation", options, md), sc) == ("A" if want == "x" else "B")


def test_view_cameras_and_selection_derive() -> None:
    sc = _pt_scene()
    s = sc["s"]
    assert s.camera("view_left").position[0] == pytest.approx(s.camera("main").position[1], abs=1e-4)  # main at -5 Y, left side at -5 X
    assert perspective.view_of(s, "view_right") == "right" and perspective.view_of(s, "view_back") == "back"
    options = [Option(label=chr(65 + i), image=i + 1) for i in range(3)]
    md = {"asked_view": "left", "frames": [{"camera": c, "objects": ["x", "y"]}
                                           for c in ("main", "view_back", "view_right", "view_left")]}
    assert perspective.derive_selection(mk("view_selection", options, md, 4), sc) == "C"


# --------------------------------------------------------------------------- generated items


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from perspecta.dataset.generate import GenerationConfig, generate_dataset

    out = tmp_path_factory.mktemp("spin") / "d"
    generate_dataset(out, GenerationConfig(suites=["spin"], n=2, seed=3, image_size=384))
    return out


def test_generated_dataset_validates_with_groups(small_dataset: Path) -> None:
    from perspecta.dataset.validate import validate_dataset

    report = validate_dataset(small_dataset)
    assert report.ok, report.errors[:5]
    assert not report.warnings, report.warnings[:5]
    items = [json.loads(line) for line in (small_dataset / "items.jsonl").read_text().splitlines()]
    tasks = Counter(it["task"] for it in items)
    assert set(tasks) == {"identity_matching", "relation_grounding", "dynamic_translation", "dynamic_rotation",
                          "canonical_view", "mental_rotation", "view_selection", "relation_transformation"}
    groups: dict[str, list[dict]] = defaultdict(list)
    for it in items:
        groups[it["group"]].append(it)
        assert it["question"].count("<image>") == len(it["images"])
        letters = ", ".join(o["label"] for o in it["options"])
        assert it["question"].endswith(f"({letters}).")
        assert it["metadata"]["n_options"] == len(it["options"])
        assert it["metadata"]["paper_subtype"] and it["subtype"]
    grounding = [g for g in groups.values() if g[0]["task"] == "relation_grounding"]
    for g in grounding:  # the four controlled forms of one question
        assert sorted(it["variant"] for it in g) == ["base", "symmetric", "symmetric+syntactic", "syntactic"]
        base = next(it for it in g if it["variant"] == "base")
        sym = next(it for it in g if it["variant"] == "symmetric")
        text = {o["label"]: o["text"] for o in base["options"]}
        text_s = {o["label"]: o["text"] for o in sym["options"]}
        assert text[base["answer"]] != text_s[sym["answer"]]  # flipping the relation flips the answer


def test_spinbench_export(small_dataset: Path, tmp_path: Path) -> None:
    from perspecta.suites.spin.export import export_spinbench

    out = tmp_path / "spinbench.jsonl"
    n = export_spinbench(small_dataset, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    items = [json.loads(line) for line in (small_dataset / "items.jsonl").read_text().splitlines()]
    assert n == len(rows) == len(items)
    for row, it in zip(rows, items):
        assert set(row) == {"problem", "answer", "images", "metadata"}
        assert row["answer"] == it["answer"] and row["problem"].count("<image>") == len(row["images"])
        assert row["metadata"]["task_type"] == it["metadata"]["paper_subtype"]
    assert any(r["metadata"]["task_type"] == "infinigen_spatial_relation_grounding_left_right"
               or r["metadata"]["task_type"].startswith("infinigen_spatial") for r in rows)
    with pytest.raises(FileNotFoundError):
        export_spinbench(tmp_path / "nowhere", out)
