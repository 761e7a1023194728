"""SpinBench glance-resistant forms (issue 18): the decisive cue is in the pixels and the
salient cue's conflict is balanced.

- share draws (``common.share_draw``) give each form its share and keep later draws
  (answers) balanced within every form;
- a swapped-pair view-selection candidate is a candidate's camera with a pair swapped (the
  answer's on two of three units, the other side's on one, so the look-alike pair tells
  nothing), and the swap changes a visible share of the image (re-measured on masks);
- under camera_follow the moved object keeps its image place (the salient cue says "no
  move") while the answer is re-derived from the world move;
- depth grounding's size cue agrees and conflicts in equal shares.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from perspecta.suites.context import TaskContext
from perspecta.suites.spin import common, perspective, relations


def ctx_at(index: int, root_seed: int = 0, task: str = "t") -> TaskContext:
    return TaskContext(suite="spin", task=task, index=index, root_seed=root_seed, library=None,  # type: ignore[arg-type]
                       renderer=None, out_dir=Path("/nonexistent"))  # type: ignore[arg-type]


def test_share_draws_split_forms_and_keep_answers_balanced_within_each() -> None:
    cells: Counter = Counter()
    for i in range(40):
        st = common.Strata(ctx_at(i))
        form = common.share_draw(st, "form", 0.6, "near", "plain")
        cells[(form, st.draw("answer", ("left", "right")))] += 1
    assert cells[("near", "left")] == cells[("near", "right")] == 12, cells
    assert cells[("plain", "left")] == cells[("plain", "right")] == 8, cells


def test_share_draw_edges_draw_nothing() -> None:
    st = common.Strata(ctx_at(3))
    assert common.share_draw(st, "form", 0.0, "near", "plain") == "plain"
    assert common.share_draw(st, "form", 1.0, "near", "plain") == "near"
    assert st.path == ""  # no draw: presets without the form keep their strata (and bytes)
    with pytest.raises(ValueError, match="share"):
        common.share_draw(st, "form", 1.5, "near", "plain")


def _generate(env, tmp_path: Path, task: str, index: int, config: dict):  # type: ignore[no-untyped-def]
    from perspecta.suites import registry

    lib, renderer = env
    td = registry.get_task("spin", task)
    c = TaskContext(suite="spin", task=task, index=index, root_seed=7, library=lib, renderer=renderer,
                    out_dir=tmp_path, config={"image_size": 384, **config})
    items = td.generate(c)
    scenes = {s.scene_id: s for s in c.scenes}
    for it in items:
        assert td.derive(it, scenes) == it.answer
    return c, items, scenes


def _swap_twins(env, tmp_path: Path, indices: range) -> list:  # type: ignore[no-untyped-def]
    out = []
    for i in indices:
        c, items, scenes = _generate(env, tmp_path / str(i), "view_selection", i, {"swapped_pair_share": 1.0})
        (it,) = items
        md = it.metadata
        assert md["form"] == "swapped_pair" and md["candidate_views"].count(perspective.SWAP) == 1
        out.append((c, it, scenes))
    return out


def test_swapped_pair_candidate_is_a_candidate_view_with_a_visible_swap(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ((c, it, scenes),) = _swap_twins(env, tmp_path, range(1))
    md = it.metadata
    frames = md["frames"]
    k_src = 1 + md["candidate_views"].index(md["swap_of"])
    k_swap = 1 + md["candidate_views"].index(perspective.SWAP)
    assert frames[k_src]["camera"] == frames[k_swap]["camera"]  # same viewpoint: only the pair differs
    a, b = md["swapped_ids"]
    assert {f"{a}@swap", f"{b}@swap"} <= set(frames[k_swap]["objects"])
    scene = scenes[it.scene_id]
    r0 = common.render_frame(c, scene, frames[k_src], masks_only=True)
    r1 = common.render_frame(c, scene, frames[k_swap], masks_only=True)
    share = perspective.changed_share(r0, r1, frames[k_src]["objects"], frames[k_swap]["objects"])
    assert share >= perspective.SWAP_MIN_CHANGED_PX
    assert abs(share - md["swap_changed_share"]) < 0.02
    rec = md["readability"]["objects"]
    assert len(rec) == 2  # both swapped objects read in both renders


def test_the_look_alike_pair_holds_the_answer_no_more_often_than_chance(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Red-team round 5: when the swapped twin was always the answer's, the answer was always
    one of the two look-alike candidates, and dropping the odd one out lifted a blind guess
    from 1/3 to 1/2. Per block of three units the twin is the answer's on two and the other
    side's on one (the answer is then the odd one out), as two of three candidates would be."""
    twins = _swap_twins(env, tmp_path, range(3))
    of = [it.metadata["swap_of"] for _, it, _ in twins]
    asked = [it.metadata["asked_view"] for _, it, _ in twins]
    assert sum(o == a for o, a in zip(of, asked)) == 2, (of, asked)
    for _, it, _ in twins:
        md = it.metadata
        k_swap = 1 + md["candidate_views"].index(perspective.SWAP)
        k_src = 1 + md["candidate_views"].index(md["swap_of"])
        assert md["frames"][k_swap]["camera"] == md["frames"][k_src]["camera"]
        assert it.answer == it.label_of_image(1 + md["candidate_views"].index(md["asked_view"]))


def test_camera_follow_keeps_the_object_in_place_in_the_image(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, items, scenes = _generate(env, tmp_path, "dynamic_translation", 1, {"camera_follow_share": 1.0})
    (it,) = items
    md = it.metadata
    assert md["form"] == "camera_follow"
    assert max(abs(v) for v in md["image_shift_px"]) < 1.0  # the salient cue: it did not move in the image
    assert md["frames"][1]["camera"] == relations.FOLLOW_CAMERA
    assert "may also have moved" in it.question or "may have moved" in it.question
    # a second camera that is not the first moved with the object is refused
    scene = scenes[it.scene_id]
    bad = dict(md, frames=[md["frames"][0], {**md["frames"][1], "camera": "main"}])
    fixed = type(it)(**{**it.__dict__, "metadata": bad})
    assert relations.derive_translation(fixed, scenes) == it.answer  # the fixed camera reads the same move
    scene.cameras = [k for k in scene.cameras if k.name != relations.FOLLOW_CAMERA] + [
        relations.follow_camera(scene.camera("main"), scene.object(md["object_id"]), scene.object(md["object_id"]))]
    with pytest.raises(ValueError, match="not the first one moved"):
        relations.derive_translation(it, scenes)


def test_size_cue_conflict_is_balanced_within_each_depth_relation() -> None:
    cells: Counter = Counter()
    for i in range(60):  # two blocks of 10 units per relation
        c = ctx_at(i, root_seed=5, task="relation_grounding")
        kind, form, pole = relations.grounding_plan(c, common.Strata(c))
        cells[(kind, form, pole)] += 1
    # left/right units split between the viewer's frame and the frame switch, poles balanced in each
    assert {k: v for k, v in cells.items() if k[0] == "left_right"} == {
        ("left_right", "unconstrained", "left"): 5, ("left_right", "unconstrained", "right"): 5,
        ("left_right", "frame_switch", "left"): 5, ("left_right", "frame_switch", "right"): 5}
    for kind in ("front_behind", "near_far"):
        for form in ("size_conflict", "size_agrees"):
            assert [cells[(kind, form, p)] for p in relations.POLES[kind]] == [5, 5], cells


def test_a_size_conflict_unit_measures_the_conflict(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for i in range(12):
        c = ctx_at(i, root_seed=7, task="relation_grounding")
        if relations.grounding_plan(c, common.Strata(c))[1] == "size_conflict":
            break
    gc, items, scenes = _generate(env, tmp_path, "relation_grounding", i, {})
    md = items[0].metadata
    assert md["cue_form"] == "size_conflict" and md["size_cue"] == "conflict"
    assert gc.knobs["size_conflict_share"] == 0.5  # recorded (lands in metadata["knobs"])


def test_canonical_near_miss_is_a_visibly_different_three_quarter_view(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from perspecta.suites.spin import rotation
    from perspecta.world import oracle

    c, items, scenes = _generate(env, tmp_path, "canonical_view", 2, {"near_miss_view_share": 1.0})
    (it,) = items
    md = it.metadata
    kinds, bearings = md["candidate_views"], md["candidate_bearings"]
    near = next(i for i, k in enumerate(kinds) if k.startswith(rotation.NEAR))
    shown = kinds[near][len(rotation.NEAR):]
    ans = kinds.index(shown)
    gap = abs(float(oracle.wrap180(bearings[near] - bearings[ans])))
    assert gap >= c.knobs["near_miss_view_deg"] - rotation.NEAR_MISS_ANSWER_JITTER - 0.5
    scene = scenes[it.scene_id]
    m = [common.render_frame(c, scene, md["frames"][1 + k], masks_only=True).instance > 0 for k in (ans, near)]
    iou = float(np.logical_and(*m).sum() / np.logical_or(*m).sum())
    assert iou < 0.85, iou  # the silhouettes differ by a visible amount


def test_the_canonical_near_miss_is_the_answers_twin_no_more_often_than_chance(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Red-team round 5: a near miss always turned from the answer's side made the answer one
    of the two most alike candidates (44 of 50 units), so dropping the odd one out beat
    chance. Per block of three units it is the answer's twin on two, the mirror side's on one."""
    from perspecta.suites.spin import rotation

    twins = []
    for i in range(3):
        _, items, _ = _generate(env, tmp_path / str(i), "canonical_view", i, {"near_miss_view_share": 1.0})
        (it,) = items
        kinds = it.metadata["candidate_views"]
        near = next(k for k in kinds if k.startswith(rotation.NEAR))[len(rotation.NEAR):]
        answer_kind = kinds[it.option(it.answer).image - 1]  # type: ignore[operator]
        assert near in kinds and answer_kind in kinds
        twins.append(near == answer_kind)
    assert sum(twins) == 2, twins


def test_two_step_walk_has_the_one_step_answer_as_its_distractor(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, items, scenes = _generate(env, tmp_path, "relation_transformation", 3, {"two_step_route_share": 1.0})
    assert len(items) == 4  # with/without premise x base/symmetric stay intact
    for it in items:
        md = it.metadata
        assert md["form"] == "two_step"
        steps = md["route_quarter_turns"]
        scene = scenes[it.scene_id]
        x, y = scene.object(md["x_id"]), scene.object(md["y_id"])
        leg = perspective.view_camera(scene, perspective.LEG_VIEW[steps[0]], "leg")
        p = perspective.pole(md["asked_relation"], x, y, leg)  # re-derived: where the first leg stops
        one_step = md["names"][(x if p == md["asked"] else y).id]
        answer_text = next(o.text for o in it.options if o.label == it.answer)
        assert one_step == md["one_step_answer"] != answer_text
    # the symmetric variant flips the answer and the one-step distractor together
    assert len({it.metadata["one_step_answer"] for it in items}) == 2


def test_frame_switch_asks_the_anchors_own_side_and_the_viewer_answer_is_the_distractor(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from perspecta.world import orientation

    for index in (0, 1):
        _, items, scenes = _generate(env, tmp_path, "relation_grounding", index,
                                     {"frame_switch_share": 1.0, "size_conflict_share": 0.0})
        if items[0].metadata["relation"] != "left_right":
            continue
        assert len(items) == 4
        for it in items:
            md = it.metadata
            assert md["cue_form"] == "frame_switch" and md["anchor_id"]
            scene = scenes[it.scene_id]
            anchor, cam = scene.object(md["anchor_id"]), scene.camera("main")
            assert abs(orientation.egocentric_facing(anchor, cam)) <= relations.FRAME_FACING_DEG
            x = scene.object(md["x_id"])
            own = orientation.side_in_frame(anchor, x.center(), margin=relations.FRAME_SIDE_MARGIN)
            seen = relations.relation("left_right", x, anchor, cam)
            assert own is not None and seen is not None and own != seen  # the glance (viewer) reading is wrong
            answer_text = next(o.text for o in it.options if o.label == it.answer)
            assert md["viewer_frame_answer"] != answer_text
            assert md["viewer_frame_answer"] in [o.text for o in it.options]
        return
    pytest.skip("no left_right unit among the first indices")


def test_frame_switch_share_splits_left_right_units_and_keeps_poles_balanced() -> None:
    from collections import Counter as C
    cells: C = C()
    for i in range(120):
        c = ctx_at(i, task="relation_grounding")
        c.config = {}
        kind, form, pole = relations.grounding_plan(c, common.Strata(c))
        if kind == "left_right":
            cells[(form, pole)] += 1
    assert cells[("frame_switch", "left")] == cells[("frame_switch", "right")] > 0, cells
    assert cells[("unconstrained", "left")] == cells[("unconstrained", "right")] > 0, cells


def test_depth_relation_needs_the_same_pole_where_the_objects_stand() -> None:
    """A tall lamp and a low box side by side on a table: the lamp's centre is clearly nearer a
    raised camera, but their feet are within the margin of each other, so a person reading
    depth from where things stand sees a tie (round-6 careful judge). Generation must not ask
    it; datasets recorded without ``contact_checked`` still derive as before."""
    from perspecta.world.scene import Camera, Pose, SceneObject

    lamp = SceneObject(id="lamp", asset_id="proc:lamp", category="lamp", pose=Pose((-0.3, 0.05, 0.75), 0.0),
                       size=(0.15, 0.15, 0.6))
    box = SceneObject(id="box", asset_id="proc:box", category="box", pose=Pose((0.15, 0.0, 0.75), 0.0),
                      size=(0.2, 0.2, 0.1))
    cam = Camera(position=(0.0, -0.8, 1.6), look_at=(0.0, 0.0, 0.75))
    assert relations.relation("near_far", lamp, box, cam, 0.8, contact=False) == "closer"
    assert relations.relation("near_far", lamp, box, cam, 0.8) is None
    assert relations.relation("front_behind", lamp, box, cam, 0.8) is None
    # moved back 20 cm, the box stands clearly farther too: asked again
    far_box = SceneObject(id="box", asset_id="proc:box", category="box", pose=Pose((0.15, 0.2, 0.75), 0.0),
                          size=(0.2, 0.2, 0.1))
    assert relations.relation("near_far", lamp, far_box, cam, 0.8) == "closer"


def test_grounding_items_record_the_contact_check_and_derive_with_it(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    out = tmp_path / "ds"
    subprocess.run([sys.executable, "-m", "perspecta.cli", "generate", "--task", "spin/relation_grounding", "--n", "2",
                    "--seed", "3", "--out", str(out), "--workers", "1"], check=True, capture_output=True)
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    depth = [it for it in items if it["metadata"].get("relation") in ("near_far", "front_behind")]
    assert depth
    assert all(it["metadata"]["contact_checked"] is True for it in depth)
    subprocess.run([sys.executable, "-m", "perspecta.cli", "validate", str(out)], check=True, capture_output=True)
