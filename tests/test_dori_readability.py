"""DORI shortcut and readability fixes: stratified answer classes, nuisance changes in
every image pair, real-asset CBD targets, tags beside (not on) targets, and planted
contract violations that must make a unit redraw or fail loudly."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perspecta.assets.library import AssetLibrary
from perspecta.render.base import get_renderer
from perspecta.suites.context import TaskContext
from perspecta.suites.dori import audit_features
from perspecta.suites.dori.common import (
    FRONTLESS_REAL,
    Unreadable,
    balanced_class,
    check_readable,
    draw_tag,
    pick_target,
    render_boxed,
    resample,
)
from perspecta.suites.registry import get_task
from perspecta.world import readability
from perspecta.world.samplers import sample_studio


@pytest.fixture(scope="module")
def lib() -> AssetLibrary:
    return AssetLibrary.default()


@pytest.fixture(scope="module")
def renderer(lib: AssetLibrary):  # type: ignore[no-untyped-def]
    r = get_renderer("gl", library=lib)
    yield r
    r.close()


def ctx_for(lib: AssetLibrary, renderer, tmp: Path, task: str, index: int, seed: int = 3, **config) -> TaskContext:  # type: ignore[no-untyped-def]
    return TaskContext("dori", task, index, seed, lib, renderer, tmp, config={"image_size": 256, **config})


def test_balanced_class_holds_every_class_once_per_block(lib: AssetLibrary, tmp_path: Path) -> None:
    classes = [balanced_class(ctx_for(lib, None, tmp_path, "directional_facing", i), 4, "coarse") for i in range(20)]
    for b in range(4):
        assert sorted(classes[5 * b:5 * b + 5], key=lambda c: -1 if c is None else c) == [None, 0, 1, 2, 3]
    # the order is seeded, not a function of the index: blocks differ, and so do root seeds
    assert len({tuple(map(str, classes[5 * b:5 * b + 5])) for b in range(4)}) > 1
    other = [balanced_class(ctx_for(lib, None, tmp_path, "directional_facing", i, seed=4), 4, "coarse")
             for i in range(20)]
    assert other != classes


def test_cbd_targets_are_mostly_real_assets_and_sources_match(lib: AssetLibrary, tmp_path: Path) -> None:
    cbd = [pick_target(ctx_for(lib, None, tmp_path, "view_parallelism", i), cbd=True) for i in range(200)]
    front = [pick_target(ctx_for(lib, None, tmp_path, "view_parallelism", i), cbd=False) for i in range(200)]
    assert all(not a.has_front for a in cbd) and all(a.has_front for a in front)
    real = sum(a.asset_id in FRONTLESS_REAL for a in cbd)
    assert real >= 0.7 * len(cbd)  # real frontless assets far outnumber primitives
    proc_cbd = sum(a.source == "proc" for a in cbd) / len(cbd)
    proc_front = sum(a.source == "proc" for a in front) / len(front)
    assert abs(proc_cbd - proc_front) < 0.1  # the source says nothing about the key


def test_contract_problems_raise_unreadable() -> None:
    with pytest.raises(Unreadable, match="visible px"):
        check_readable({"objects": {"A": {"pixels": 300, "box": [30, 15], "marker_cover": 0.0}}})
    with pytest.raises(Unreadable, match="markers cover"):
        check_readable({"objects": {"A": {"pixels": 5000, "box": [80, 90], "marker_cover": 0.2}}})
    with pytest.raises(Unreadable, match="bin edge"):
        check_readable({"bin_margin": {"deg": 5.0, "bin_width": 45.0}})
    ok = {"objects": {"A": {"pixels": 5000, "box": [80, 90], "marker_cover": 0.01}},
          "bin_margin": {"deg": 16.0, "bin_width": 45.0}}
    assert check_readable(ok) is ok


def test_narrow_bins_keep_a_third_of_their_width() -> None:
    """A 45-degree bin needs 15 degrees of margin (the generic floor, 1/4, allowed 11.25:
    a careful judge misread such angles); the stricter contract is written into the
    record so `perspecta validate` checks the same floor. Wide bins keep the generic 1/4."""
    with pytest.raises(Unreadable, match="bin edge"):
        check_readable({"bin_margin": {"deg": 12.0, "bin_width": 45.0}})
    narrow = check_readable({"bin_margin": {"deg": 15.5, "bin_width": 45.0}})
    assert narrow["contract"]["min_bin_margin_frac"] == pytest.approx(1 / 3)
    assert readability.problems({**narrow, "bin_margin": {"deg": 12.0, "bin_width": 45.0}})
    wide = check_readable({"bin_margin": {"deg": 40.0, "bin_width": 150.0}})
    assert "contract" not in wide


def test_resample_redraws_then_fails_loudly(lib: AssetLibrary, tmp_path: Path) -> None:
    ctx = ctx_for(lib, None, tmp_path, "view_parallelism", 0)
    seen: list[int] = []

    def flaky(attempt: int) -> str:
        seen.append(attempt)
        if attempt < 2:
            raise Unreadable("planted: too small")
        return "ok"

    assert resample(ctx, flaky, "test") == "ok" and seen == [0, 1, 2]

    def never(attempt: int) -> str:
        raise Unreadable("planted: marker on the face")

    with pytest.raises(RuntimeError, match="unreadable after 4 draws"):
        resample(ctx, never, "test", tries=4)


def test_a_tiny_target_is_refused(lib: AssetLibrary, renderer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # plant a far camera: the object shrinks to a few pixels and must not pass
    scene = sample_studio(np.random.default_rng(0), lib, scene_id="tiny", seed=0, asset_id="proc:person",
                          image_size=256, camera_distance=80.0)
    with pytest.raises(Unreadable, match="visible px|visible box"):
        render_boxed(ctx_for(lib, renderer, tmp_path, "view_parallelism", 0), scene)
    near = sample_studio(np.random.default_rng(0), lib, scene_id="near", seed=0, asset_id="proc:person", image_size=256)
    _, _, facts = render_boxed(ctx_for(lib, renderer, tmp_path, "view_parallelism", 0), near)
    assert facts["marker_cover"] <= readability.DEFAULT_CONTRACT.max_marker_cover


def test_tags_stand_beside_their_objects() -> None:
    inst = np.zeros((256, 256), dtype=np.int32)
    inst[100:200, 60:110] = 1  # object A
    inst[120:180, 160:200] = 2  # object B
    rgb = np.full((256, 256, 3), 128, dtype=np.uint8)
    taken: list[tuple[int, int, int, int]] = []
    out = draw_tag(rgb, inst, 0, "A", taken)
    out = draw_tag(out, inst, 1, "B", taken)
    marks = readability.overlay_mask(rgb, out)
    for idx in (1, 2):
        assert readability.object_facts(inst, idx, marks)["marker_cover"] <= 0.02
    assert len(taken) == 2
    full = np.ones((64, 64), dtype=np.int32)  # no background left: nowhere to put a tag
    with pytest.raises(Unreadable, match="no free spot"):
        draw_tag(np.zeros((64, 64, 3), dtype=np.uint8), full, 0, "A", [])


@pytest.mark.parametrize("task", ["viewer_scene_direction", "compound_rotation"])
def test_every_pair_differs_in_nuisance_not_only_rotated_ones(lib: AssetLibrary, renderer, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                              task: str) -> None:
    items = [it for i in range(5) for it in get_task("dori", task).generate(ctx_for(lib, renderer, tmp_path, task, i))]
    answers = Counter(it.metadata["answer_text"] for it in items)
    assert len(answers) >= 4
    for it in items:
        a, b = (hashlib.md5((tmp_path / p).read_bytes()).hexdigest() for p in it.images)
        assert a != b, f"{it.id}: identical pair ({it.metadata['answer_text']})"
        assert it.metadata["second_image"]["light"] and it.metadata["readability"]["objects"]
    feats = audit_features(items[0].to_dict())
    assert feats["primitive"] in ("yes", "no") and feats["n_images"] == 2.0


def test_studio_distractors_stand_behind_and_clear_of_the_target(lib: AssetLibrary) -> None:
    for seed in range(5):
        scene = sample_studio(np.random.default_rng(seed), lib, scene_id="d", seed=seed, asset_id="proc:person",
                              image_size=128, n_distractors=3, distractor_categories=("chair", "person", "plant"))
        target, cam = scene.objects[0], scene.camera("main")
        to_target = np.asarray(target.pose.position[:2]) - np.asarray(cam.position[:2])
        reach = 0.5 * float(np.hypot(target.size[0], target.size[1]))
        assert len(scene.objects) >= 2 and [o.id for o in scene.objects][0] == "obj0"
        for d in scene.objects[1:]:
            rel = np.asarray(d.pose.position[:2]) - np.asarray(target.pose.position[:2])
            assert float(rel @ to_target) > 0  # farther from the camera than the target: it cannot hide it
            assert float(np.linalg.norm(rel)) > reach + 0.5 * float(np.hypot(d.size[0], d.size[1]))
            assert d.asset_id != target.asset_id
    plain = sample_studio(np.random.default_rng(0), lib, scene_id="p", seed=0, asset_id="proc:person", image_size=128)
    assert len(plain.objects) == 1  # the default draws nothing extra (other suites' bytes unchanged)


def test_the_answer_letter_is_stratified_too(lib: AssetLibrary, tmp_path: Path) -> None:
    from perspecta.suites.dori.common import shuffled

    texts = ["w", "x", "y", "z"]
    letters = []
    for i in range(12):
        opts = shuffled(ctx_for(lib, None, tmp_path, "view_parallelism", i), texts, "y", "coarse")
        assert sorted(o.text for o in opts) == texts
        letters.append(next(o.label for o in opts if o.text == "y"))
    for b in range(3):
        assert sorted(letters[4 * b:4 * b + 4]) == ["A", "B", "C", "D"]
    with pytest.raises(ValueError, match="not among"):
        shuffled(ctx_for(lib, None, tmp_path, "view_parallelism", 0), texts, "q", "coarse")


def test_inter_object_pairs_are_large_oblique_and_have_look_alikes(lib: AssetLibrary, renderer,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path) -> None:
    """Round-2 careful judges misread inter-object facings: both tagged objects must be
    large (the task's contract), seen from a side (never within MIN_OBLIQUE_DEG of
    straight on or behind), and at standard an untagged object shares a tagged one's
    category, so the tag, not the category, picks out A and B."""
    from perspecta.suites.dori import inter_object
    from perspecta.world.oracle import egocentric_facing

    task = inter_object.TASK
    ctx = ctx_for(lib, renderer, tmp_path, task, 1, seed=11, image_size=512)
    items = get_task("dori", task).generate(ctx)
    scenes = {s.scene_id: s for s in ctx.scenes}
    for it in items:
        rec = it.metadata["readability"]
        assert rec["contract"]["min_box_side"] >= 90 and not readability.problems(rec)
        assert ctx.knobs["n_same_category"] == 1
        scene = scenes[it.scene_id]
        pair = [scene.object("obj0"), scene.object("obj1")]
        others = [o.category for o in scene.objects[2:]]
        assert any(o.category in others for o in pair if o.category in inter_object.PAIR_CATEGORIES)
        for o in pair:
            if o.has_front:
                f = abs(egocentric_facing(o, scene.camera("main")))
                assert min(f, 180 - f) >= inter_object.MIN_OBLIQUE_DEG


def test_apparent_margin_is_part_of_the_contract() -> None:
    """The perspective-uncompensated reading is checked like the true angle: a record whose
    apparent reading falls near (or past) the bin's edge breaks a contract that asks for
    a margin; the default floor only asks that it be inside the bin."""
    rec = {"bin_margin": {"deg": 20.0, "bin_width": 45.0},
           "apparent_bin_margin": {"deg": 1.6, "bin_width": 45.0},
           "contract": {"min_apparent_margin_frac": 0.2}}
    assert any("uncompensated-perspective" in p for p in readability.problems(rec))
    assert not readability.problems({**rec, "apparent_bin_margin": {"deg": 9.5, "bin_width": 45.0}})
    assert any("uncompensated" in p for p in readability.problems(
        {"apparent_bin_margin": {"deg": -3.0, "bin_width": 45.0}}))
    with pytest.raises(Unreadable, match="uncompensated"):
        check_readable(rec)


def test_inter_object_apparent_margin_follows_line_of_sight() -> None:
    """Two objects with one heading, far apart across a wide view, show the camera sides
    that differ by their azimuth gap: the uncompensated reading is the true difference
    minus that gap, scored against the true bin."""
    from perspecta.suites.dori import inter_object
    from perspecta.world.scene import Camera, Pose, Scene, SceneObject

    def obj(oid: str, x: float, yaw: float) -> SceneObject:
        return SceneObject(id=oid, asset_id="proc:chair", category="chair", pose=Pose(position=(x, 0.0, 0.0), yaw=yaw),
                           size=(0.5, 0.5, 0.9), has_front=True)

    cam = Camera(name="main", position=(0.0, -6.0, 1.6), look_at=(0.0, 0.0, 0.4), fov_y=50.0)
    near = Scene(scene_id="s", seed=0, kind="clutter", objects=[obj("obj0", -0.3, 90.0), obj("obj1", 0.3, 90.0)],
                 cameras=[cam])
    far = Scene(scene_id="s", seed=0, kind="clutter", objects=[obj("obj0", -2.5, 90.0), obj("obj1", 2.5, 90.0)],
                cameras=[cam])
    gap = inter_object.line_of_sight_azimuth(far, "obj0") - inter_object.line_of_sight_azimuth(far, "obj1")
    assert gap == pytest.approx(2 * np.degrees(np.arctan2(2.5, 6.0)), abs=0.5)
    m_near, m_far = inter_object.apparent_margin(near), inter_object.apparent_margin(far)
    assert m_near["bin_width"] == m_far["bin_width"] == 45.0
    # 0.6 m apart: sides ~6 degrees apart, read as the same direction, inside the bin
    assert m_near["deg"] == pytest.approx(22.5 - 2 * np.degrees(np.arctan2(0.3, 6.0)), abs=0.3)
    assert m_far["deg"] < 0  # 5 m apart across the view: the sides seen are ~45 degrees apart
    # granular: B (right, at +2.5 m) turned to look straight at A reads as turned away from it by
    # its line-of-sight azimuth; centred in the view it reads true
    b_at_a = obj("obj1", 2.5, 180.0)
    looking = Scene(scene_id="s", seed=0, kind="clutter", objects=[obj("obj0", -2.5, 0.0), b_at_a], cameras=[cam])
    g = inter_object.apparent_margin(looking, "granular")
    assert g["bin_width"] == 10.0 and g["deg"] < 0  # "no rotation" reads as ~23 degrees
    centred = Scene(scene_id="s", seed=0, kind="clutter", objects=[obj("obj0", 0.0, 0.0), obj("obj1", 0.0, 90.0)],
                    cameras=[cam])
    centred.objects[0].pose = Pose(position=(0.0, 4.0, 0.0), yaw=0.0)  # A straight behind B, B looks at it
    assert inter_object.apparent_margin(centred, "granular")["deg"] == pytest.approx(5.0, abs=0.5)


def test_inter_object_items_record_and_keep_their_margins(lib: AssetLibrary, renderer,  # type: ignore[no-untyped-def]
                                                          tmp_path: Path) -> None:
    """Generated coarse items record an apparent margin of at least APPARENT_MARGIN_FRAC;
    granular turns in narrow bins keep PAIR_MARGIN_FRAC of the bin; validate sees both."""
    from perspecta.suites.dori import inter_object

    task = inter_object.TASK
    seen = 0
    for unit in range(3):
        ctx = ctx_for(lib, renderer, tmp_path, task, unit, seed=23, image_size=512)
        for it in get_task("dori", task).generate(ctx):
            rec = it.metadata["readability"]
            assert not readability.problems(rec)
            if it.option(it.answer).text == inter_object.CANNOT_DETERMINE:
                continue
            seen += 1
            bm = rec["bin_margin"]
            am = rec["apparent_bin_margin"]
            assert am["deg"] >= inter_object.APPARENT_MARGIN_FRAC * am["bin_width"] - 1e-9
            assert rec["contract"]["min_apparent_margin_frac"] == inter_object.APPARENT_MARGIN_FRAC
            if it.granularity == "granular" and bm["bin_width"] <= 60:
                assert bm["deg"] >= inter_object.PAIR_MARGIN_FRAC * bm["bin_width"] - 1e-9
                assert rec["contract"]["min_bin_margin_frac"] >= inter_object.PAIR_MARGIN_FRAC
    assert seen >= 3


def test_frontless_targets_with_sides_are_shown_obliquely(lib: AssetLibrary, tmp_path: Path) -> None:
    """A gift box with a side square to the camera "already faces the camera" whichever side
    is its front (a careful judge answered so): such a view is refused by the sampler and by
    validate; round shapes are exempt, and generated frontless items record the angle."""
    from perspecta.suites.dori import common

    assert common.has_faces("sh3d:blendswap-cc-by/gift", "box", False)
    assert not common.has_faces("sh3d:blendswap-cc-0/barrel", "barrel", False)
    assert not common.has_faces("proc:ball", "ball", False)
    assert not common.has_faces("sh3d:blendswap-cc-by/gift", "box", True)
    assert any("square to the camera" in p for p in readability.problems({"view": {
        "elevation_deg": 10.0, "readable_elevation": [0, 90], "face_square_deg": 4.0}}))
    assert not readability.problems({"view": {"elevation_deg": 10.0, "readable_elevation": [0, 90],
                                              "face_square_deg": 31.0}})
    gift = next(a for a in lib.all() if a.asset_id == "sh3d:blendswap-cc-by/gift")
    outcomes = []
    for i in range(40):
        ctx = ctx_for(lib, None, tmp_path, "single_axis_rotation", i, seed=5)
        try:
            scene = common.studio_scene(ctx, gift, "coarse")
        except common.Unreadable:
            outcomes.append(None)
            continue
        outcomes.append(common.face_square_deg(scene))
        view = common.target_view(scene, gift)
        assert view["face_square_deg"] >= common.FRONTLESS_OBLIQUE_DEG and not readability.problems({"view": view})
    refused = sum(o is None for o in outcomes)
    assert 0 < refused < len(outcomes)  # square views occur and are refused; oblique ones pass


def test_studio_targets_keep_a_readable_size(lib: AssetLibrary, tmp_path: Path) -> None:
    """A semi truck seen end-on was a 34 px slab at 512 px that a careful judge could not
    name: single studio targets keep STUDIO_MIN_* (scaled with the image, never below the
    floor), the contract is recorded and validate refuses a planted sliver."""
    from perspecta.suites.dori import common

    big = common.studio_contract(ctx_for(lib, None, tmp_path, "single_axis_rotation", 0, image_size=512))
    small = common.studio_contract(ctx_for(lib, None, tmp_path, "single_axis_rotation", 0, image_size=128))
    assert (big.min_pixels, big.min_box_side, big.min_box_short) == (6000, 100, 48)
    floor = readability.DEFAULT_CONTRACT
    assert (small.min_pixels, small.min_box_side, small.min_box_short) == (floor.min_pixels, floor.min_box_side,
                                                                           floor.min_box_short)
    sliver = {"objects": {"A": {"pixels": 3912, "box": [34, 133], "marker_cover": 0.0}}, "contract": big.to_dict()}
    with pytest.raises(Unreadable, match="visible"):
        check_readable(sliver)
    assert readability.problems(sliver)


def test_a_tag_leader_never_ends_on_or_passes_another_object() -> None:
    """A leader that ended where a scooter's mirror touched a sofa's arm was read as the
    sofa's tag: the line now ends on a pixel of its own object LEADER_CLEARANCE_PX from
    every other object and passes none that closely; an object with no such pixel fails."""
    from scipy.ndimage import distance_transform_edt

    from perspecta.suites.dori import common

    inst = np.zeros((256, 256), dtype=np.int32)
    inst[60:200, 40:150] = 1  # a big object A
    inst[70:110, 150:190] = 2  # B touches A's right side
    rgb = np.full((256, 256, 3), 128, dtype=np.uint8)
    taken: list[tuple[int, int, int, int]] = []
    out = draw_tag(rgb, inst, 1, "B", taken)
    changed = readability.overlay_mask(rgb, out)
    x0, y0, x1, y1 = taken[-1]
    changed[max(y0, 0):y1 + 1, max(x0, 0):x1 + 1] = False  # the line only, not the tag box
    assert changed.any()
    dist_to_a = distance_transform_edt(inst != 1)
    # the line is drawn 2-4 px wide with a white rim: its pixels keep most of the clearance
    assert dist_to_a[changed].min() >= common.LEADER_CLEARANCE_PX - 3
    squeezed = np.zeros((128, 128), dtype=np.int32)
    squeezed[20:100, 20:60] = 1
    squeezed[50:54, 60:64] = 2  # a 4 px object pressed against A: no clear pixel
    with pytest.raises(Unreadable, match="clear of the others"):
        draw_tag(np.zeros((128, 128, 3), dtype=np.uint8), squeezed, 1, "B", [])


def test_inter_object_objects_whose_heading_counts_are_vehicles(lib: AssetLibrary, renderer,  # type: ignore[no-untyped-def]
                                                               tmp_path: Path) -> None:
    """Round 6: every tagged object whose heading the question reads (coarse: A and B;
    granular: B), in every class, is a vehicle and records its facing; a granular A records
    no facing (only its position counts)."""
    from perspecta.suites.dori import inter_object, marks

    task = inter_object.TASK
    used_seen = 0
    for unit in range(4):
        ctx = ctx_for(lib, renderer, tmp_path, task, unit, seed=31, image_size=512)
        items = get_task("dori", task).generate(ctx)
        scenes = {s.scene_id: s for s in ctx.scenes}
        for it in items:
            views = it.metadata["readability"]["view"]
            scene = scenes[it.scene_id]
            for name, oid in (("A", "obj0"), ("B", "obj1")):
                obj = scene.object(oid)
                used = obj.has_front and inter_object.heading_used(oid, it.granularity)
                assert ("facing_deg" in views[name]) == used
                if used:
                    used_seen += 1
                    assert obj.category in inter_object.PAIR_CATEGORIES, (it.id, name, obj.category)
                    assert not marks.backrest_hides_seat(obj.asset_id, obj.category)
    assert used_seen >= 4

