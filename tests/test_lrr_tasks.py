"""LRR tasks: derive() on hand-built scenes, and generated units (small images) end to end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.dataset.schema import check_item
from perspecta.suites import registry
from perspecta.suites.lrr.common import question_for_mode
from perspecta.suites.lrr.depth_camera import derive_ca_m, derive_ca_r, derive_dep
from perspecta.suites.lrr.objects import HEADINGS, M_FORMS, derive_hd, derive_m, derive_md
from perspecta.suites.lrr.position import derive_multi, derive_pos, region_of
from perspecta.suites.lrr.world import ground_point, raised_camera
from perspecta.world import readability
from perspecta.world.oracle import move_camera
from perspecta.world.scene import Camera, Pose, Scene, SceneObject

TASKS = ("pos", "pos_c", "pos_s", "dep", "ca_r", "ca_m", "obj_hd", "obj_md", "obj_m")


def _obj(obj_id: str, x: float, y: float, z: float = 0.0, yaw: float = 0.0, size: float = 0.5) -> SceneObject:
    return SceneObject(id=obj_id, asset_id="proc:figure", category="figure", pose=Pose((x, y, z), yaw=yaw),
                       size=(size, size, size))


def _scene(scene_id: str, objects: list[SceneObject], cameras: list[Camera]) -> Scene:
    return Scene(scene_id=scene_id, seed=0, kind="clutter", objects=objects, cameras=cameras)


def _item(scene_id: str = "s", **metadata: object) -> Item:
    return Item(id="lrr/t/base/000000", suite="lrr", task="t", question="", images=[], answer_type="yesno",
                answer="yes", scene_id=scene_id, metadata=dict(metadata))


# Camera at (0, -10, 1) looking along +Y: world +X is image right, higher z is image top.
CAM = Camera(name="main", position=(0.0, -10.0, 1.0), look_at=(0.0, 0.0, 1.0), fov_y=60.0, width=512, height=512)


def test_derive_pos_from_projected_box() -> None:
    # centre (3, 0, 2.75): f = 256/tan(30) = 443.4, u = 256 + 443.4*0.3 = 389 (dx = +0.26),
    # v = 256 - 443.4*0.175 = 178 (dy = -0.15): top-right.
    s = _scene("s", [_obj("target", 3.0, 0.0, z=2.5)], [CAM])
    assert derive_pos(_item(asked_region="top-right"), {"s": s}) == "yes"
    assert derive_pos(_item(asked_region="centre"), {"s": s}) == "no"
    # centre (0, 0, 1.25): on the optical axis -> "centre"
    c = _scene("s", [_obj("target", 0.0, 0.0, z=1.0)], [CAM])
    assert derive_pos(_item(asked_region="centre"), {"s": c}) == "yes"
    # dy = -0.065 is inside the 0.1 margin around the horizontal midline: ambiguous -> error
    amb = _scene("s", [_obj("target", 3.0, 0.0, z=1.5)], [CAM])
    with pytest.raises(ValueError):
        derive_pos(_item(asked_region="top-right"), {"s": amb})


def test_derive_pos_counts_same_category_distractors() -> None:
    # the target sits top-right and a same-category distractor ("same0") bottom-left:
    # "is there one bottom-left?" is yes, "centre?" is still no
    s = _scene("s", [_obj("target", 3.0, 0.0, z=2.5), _obj("same0", -3.0, 0.0, z=-1.0)], [CAM])
    assert derive_pos(_item(asked_region="bottom-left"), {"s": s}) == "yes"
    assert derive_pos(_item(asked_region="top-right"), {"s": s}) == "yes"
    assert derive_pos(_item(asked_region="centre"), {"s": s}) == "no"
    # any other entity (id obj*) of whatever kind does not count
    o = _scene("s", [_obj("target", 3.0, 0.0, z=2.5), _obj("obj0", -3.0, 0.0, z=-1.0)], [CAM])
    assert derive_pos(_item(asked_region="bottom-left"), {"s": o}) == "no"


def test_rolled_camera_keeps_ground_point_and_tilts_the_horizon() -> None:
    rng = np.random.default_rng(5)
    cam = raised_camera(rng, 512, height=(4.0, 4.0), pitch=(30.0, 30.0), roll_max=12.0)
    up = np.asarray(cam.up)
    fwd = np.asarray(cam.look_at) - np.asarray(cam.position)
    assert abs(float(up @ fwd)) < 1e-4  # still perpendicular to the view
    level = np.cross(np.cross(fwd, [0.0, 0.0, 1.0]), fwd)
    tilt = np.degrees(np.arccos(float(up @ level) / np.linalg.norm(up) / np.linalg.norm(level)))
    assert 6.0 - 1e-3 <= tilt <= 12.0 + 1e-3
    p = ground_point(cam, 300.0, 400.0)
    assert p is not None
    assert cam.project(p[None])[0][0] == pytest.approx([300.0, 400.0], abs=1e-6)


def test_derive_multi_needs_every_view_right() -> None:
    scenes = {
        "a": _scene("a", [_obj("target", 3.0, 0.0, z=2.5)], [CAM]),  # top-right
        "b": _scene("b", [_obj("target", 0.0, 0.0, z=1.0)], [CAM]),  # centre
        "c": _scene("c", [_obj("target", -3.0, 0.0, z=-1.0)], [CAM]),  # centre z -0.75: bottom-left
    }
    ids = ["a", "b", "c"]
    assert derive_multi(_item(scene_ids=ids, asked_regions=["top-right", "centre", "bottom-left"]), scenes) == "yes"
    assert derive_multi(_item(scene_ids=ids, asked_regions=["top-right", "centre", "bottom-right"]), scenes) == "no"


def test_derive_dep_by_camera_depth() -> None:
    s = _scene("s", [_obj("x", -1.0, -4.0), _obj("y", 1.0, 3.0)], [CAM])  # depths 6 and 13
    assert derive_dep(_item(), {"s": s}) == "yes"
    swapped = _scene("s", [_obj("x", -1.0, 3.0), _obj("y", 1.0, -4.0)], [CAM])
    assert derive_dep(_item(), {"s": swapped}) == "no"
    tie = _scene("s", [_obj("x", -1.0, 0.0), _obj("y", 1.0, 0.5)], [CAM])  # 0.5 m apart: under the 1 m margin
    with pytest.raises(ValueError):
        derive_dep(_item(), {"s": tie})


def _named(cams: list[Camera]) -> list[Camera]:
    return [dataclasses.replace(c, name="ABCD"[k]) for k, c in enumerate(cams)]


def test_derive_ca_r_consistent_turns_and_swaps() -> None:
    cams = [move_camera(CAM, turn=25.0 * k) for k in range(4)]
    assert derive_ca_r(_item(), {"s": _scene("s", [], _named(cams))}) == "yes"
    left = [move_camera(CAM, turn=-25.0 * k) for k in range(4)]
    assert derive_ca_r(_item(), {"s": _scene("s", [], _named(left))}) == "yes"
    for i, j in ((0, 1), (1, 2), (0, 3), (1, 3)):
        order = [0, 1, 2, 3]
        order[i], order[j] = order[j], order[i]
        shown = _named([cams[k] for k in order])
        assert derive_ca_r(_item(), {"s": _scene("s", [], shown)}) == "no", (i, j)


def test_derive_ca_m_compares_stated_moves() -> None:
    a = CAM
    b = move_camera(a, forward=-2.0)  # backward
    c = move_camera(b, right=2.0)  # right
    d = move_camera(c, right=-2.0)  # left
    s = _scene("s", [], _named([a, b, c, d]))
    assert derive_ca_m(_item(stated_moves=["backward", "right", "left"]), {"s": s}) == "yes"
    assert derive_ca_m(_item(stated_moves=["backward", "left", "right"]), {"s": s}) == "no"
    assert derive_ca_m(_item(stated_moves=["forward", "right", "left"]), {"s": s}) == "no"
    # moves with a small turn each: every move is read in the frame of the shot before it
    b2 = move_camera(a, right=1.0, turn=-4.0)
    c2 = move_camera(b2, forward=1.0, turn=4.0)
    d2 = move_camera(c2, right=-1.0, turn=3.0)
    s2 = _scene("s", [], _named([a, b2, c2, d2]))
    assert derive_ca_m(_item(stated_moves=["right", "forward", "left"]), {"s": s2}) == "yes"


def test_derive_hd_from_egocentric_facing() -> None:
    # the camera is at -Y of the sheep: yaw -90 (front along -Y) faces it
    toward = _scene("s", [_obj("target", 0.0, 0.0, yaw=-90.0)], [CAM])
    assert derive_hd(_item(asked_heading="toward"), {"s": toward}) == "yes"
    assert derive_hd(_item(asked_heading="away"), {"s": toward}) == "no"
    # yaw 0: front along +X = image right
    right = _scene("s", [_obj("target", 0.0, 0.0, yaw=0.0)], [CAM])
    assert derive_hd(_item(asked_heading="rightward"), {"s": right}) == "yes"
    assert derive_hd(_item(asked_heading="leftward"), {"s": right}) == "no"
    edge = _scene("s", [_obj("target", 0.0, 0.0, yaw=-45.0)], [CAM])  # on the toward/right boundary
    with pytest.raises(ValueError):
        derive_hd(_item(asked_heading="toward"), {"s": edge})


def test_derive_md_order_and_heading() -> None:
    def frames(xs: list[float], yaw: float) -> dict[str, Scene]:
        return {f"f{k}": _scene(f"f{k}", [_obj("target", x, 0.0, yaw=yaw)], [CAM]) for k, x in enumerate(xs)}

    ids = ["f0", "f1", "f2"]
    assert derive_md(_item(scene_ids=ids), frames([-1.5, 0.0, 1.5], 0.0)) == "yes"  # walks +X, faces +X
    assert derive_md(_item(scene_ids=ids), frames([-1.5, 1.5, 0.0], 0.0)) == "no"  # shuffled
    assert derive_md(_item(scene_ids=ids), frames([1.5, 0.0, -1.5], 0.0)) == "no"  # walks backwards
    assert derive_md(_item(scene_ids=ids), frames([-1.5, 0.0, 1.5], 90.0)) == "no"  # perpendicular heading


def test_derive_m_displacement() -> None:
    def pair(dx: float) -> dict[str, Scene]:
        return {"a": _scene("a", [_obj("target", 0.0, 0.0)], [CAM]), "b": _scene("b", [_obj("target", dx, 0.0)], [CAM])}

    assert derive_m(_item(scene_ids=["a", "b"]), pair(0.0)) == "no"
    assert derive_m(_item(scene_ids=["a", "b"]), pair(2.0)) == "yes"
    with pytest.raises(ValueError):
        derive_m(_item(scene_ids=["a", "b"]), pair(0.3))  # under the 0.4 m threshold


def test_ground_point_hits_the_plane_under_the_pixel() -> None:
    cam = Camera(position=(0.0, 0.0, 4.0), look_at=(0.0, 10.0, 0.0), fov_y=50.0, width=512, height=512)
    p = ground_point(cam, 300.0, 400.0, z=0.5)
    assert p is not None and p[2] == pytest.approx(0.5)
    uv, _ = cam.project(p[None])
    assert uv[0] == pytest.approx([300.0, 400.0], abs=1e-6)
    assert ground_point(cam, 256.0, 0.0) is None  # the top row of this view is sky


def test_question_modes() -> None:
    q = '<image>\nIs there a car in the centre of the image? Answer with one word: "Yes" or "No".'
    r = question_for_mode(q, "reason")
    assert r.startswith("<image>\nIs there a car") and r.endswith('"Answer: Yes" or "Answer: No".')
    assert question_for_mode(q, "direct") == q
    with pytest.raises(ValueError):
        question_for_mode(q, "cot")


# --------------------------------------------------------------------- generation


@pytest.fixture(scope="module")
def gen_env(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer

    lib = AssetLibrary.default()
    renderer = get_renderer("gl", library=lib)
    yield lib, renderer, tmp_path_factory.mktemp("lrr")
    renderer.close()


@pytest.mark.parametrize("task_name", TASKS)
def test_generated_units_are_balanced_and_rederive(task_name: str, gen_env) -> None:  # type: ignore[no-untyped-def]
    from perspecta.suites.context import TaskContext

    lib, renderer, out = gen_env
    td = registry.get_task("lrr", task_name)
    answers = set()
    for index in (0, 1):  # one pair: exactly one "yes" unit, at native sizes (the contract is in pixels)
        ctx = TaskContext(suite="lrr", task=task_name, index=index, root_seed=3, library=lib, renderer=renderer,
                          out_dir=Path(out))
        items = td.generate(ctx)
        scenes = {s.scene_id: s for s in ctx.scenes}
        variants = sorted(it.variant for it in items)
        assert variants == (["base", "clear"] if task_name.startswith("obj_") else ["base"])
        assert len({it.answer for it in items}) == 1
        answers.add(items[0].answer)
        for it in items:
            assert check_item(it.to_dict()) == []
            assert td.derive(it, scenes) == it.answer
            assert it.question.count(IMAGE_MARKER) == len(it.images)
            assert ctx.knobs, "difficulty knobs are read through ctx.knob"
            if task_name not in ("ca_r", "ca_m"):  # camera tasks name no object
                record = it.metadata["readability"]
                assert record["objects"] and readability.problems(record) == []
            side = 1024 if task_name == "pos_c" else 512
            for p in it.images:
                assert Image.open(Path(out) / p).size == (side, side)
            if it.variant == "clear":
                assert all(not o.id.startswith("obj") for s in ctx.scenes if "-clear" in s.scene_id for o in s.objects)
            if task_name == "pos":  # same-category distractors stand anywhere but the asked region
                same = [o.id for o in scenes[it.scene_id].objects if o.id.startswith("same")]
                assert len(same) == ctx.knobs["n_same_category"] > 0
                assert all(region_of(scenes[it.scene_id], o) != it.metadata["asked_region"] for o in same)
            if task_name == "obj_m":  # the form says who keeps its pixel; the posts are there to decide
                form, slide = it.metadata["form"], it.metadata["subject_slide_px"]
                assert form in M_FORMS
                if form == "follow":
                    assert slide < 2.0
                else:
                    assert (slide >= 0.08 * 512) == ((it.answer == "yes") == (form == "truthful"))
                a = scenes[it.metadata["scene_ids"][0]]
                p0 = np.asarray(a.object("target").pose.position)[:2]
                near = [o for o in a.objects if o.id.startswith("lm")
                        and np.linalg.norm(np.asarray(o.pose.position)[:2] - p0) < 2.0]
                assert len(near) >= 2, "landmark posts stand beside the subject's spot"
            if task_name == "obj_hd" and it.answer == "no":  # near-miss: the neighbouring bin
                gap = HEADINGS[it.metadata["asked_heading"]] - HEADINGS[it.metadata["true_heading"]]
                assert gap % 360.0 in (90.0, 270.0)
    assert answers == {"yes", "no"}


def test_generation_is_deterministic(gen_env) -> None:  # type: ignore[no-untyped-def]
    from perspecta.suites.context import TaskContext

    lib, renderer, out = gen_env
    runs = []
    for k in range(2):
        ctx = TaskContext(suite="lrr", task="ca_r", index=5, root_seed=1, library=lib, renderer=renderer,
                          out_dir=Path(out) / f"det{k}", config={"view_size": 64})
        items = registry.get_task("lrr", "ca_r").generate(ctx)
        runs.append(([it.to_dict() for it in items], [s.to_json() for s in ctx.scenes],
                     [np.asarray(Image.open(Path(out) / f"det{k}" / p)).tobytes() for p in ctx.images]))
    assert runs[0] == runs[1]


def test_dataset_pngs_use_the_run_length_strategy(gen_env) -> None:  # type: ignore[no-untyped-def]
    """Dataset PNGs are deflated with zlib's run-length strategy (format 2): the zlib header
    of a generated frame says so (FLEVEL 0, which zlib writes for Z_RLE whatever the level),
    and the encoder round-trips the frame's pixels exactly."""
    import io
    import zlib

    from perspecta.suites.context import PNG_COMPRESS_STRATEGY, TaskContext, encode_png

    assert PNG_COMPRESS_STRATEGY == zlib.Z_RLE
    lib, renderer, out = gen_env
    ctx = TaskContext(suite="lrr", task="ca_r", index=0, root_seed=1, library=lib, renderer=renderer,
                      out_dir=Path(out) / "png", config={"view_size": 64})
    registry.get_task("lrr", "ca_r").generate(ctx)
    raw = (Path(out) / "png" / ctx.images[0]).read_bytes()
    pos = raw.index(b"IDAT") + 4
    assert raw[pos + 1] >> 6 == 0, zlib.ZLIB_VERSION  # zlib header FLEVEL: 0 for Z_RLE
    pixels = np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"))
    assert encode_png(pixels, "lrr") == raw  # same pixels, same bytes
    old = io.BytesIO()
    Image.fromarray(pixels).save(old, format="PNG", optimize=False, compress_level=6)
    assert old.getvalue() != raw  # format 1's stream differs ...
    assert np.array_equal(np.asarray(Image.open(old).convert("RGB")), pixels)  # ... for the same pixels


def _units(task_name: str, indices: range, gen_env, root_seed: int = 5):  # type: ignore[no-untyped-def]
    """The base items and scenes of units ``indices`` of one task (standard preset)."""
    from perspecta.suites.context import TaskContext

    lib, renderer, out = gen_env
    td = registry.get_task("lrr", task_name)
    for index in indices:
        ctx = TaskContext(suite="lrr", task=task_name, index=index, root_seed=root_seed, library=lib,
                          renderer=renderer, out_dir=Path(out))
        items = td.generate(ctx)
        yield next(it for it in items if it.variant == "base"), {s.scene_id: s for s in ctx.scenes}


def test_ca_m_counter_form_misleads_the_far_scene_only(gen_env) -> None:  # type: ignore[no-untyped-def]
    """Counter form: in every sideways step the far blocks slide the wrong way and the
    nearest street thing the honest way (the cue that decides), and a negative states
    exactly the far-scene reading, so the glance answer is wrong either way."""
    from perspecta.suites.lrr.depth_camera import CA_M_FORMS, counter_step_ok

    forms = []
    for it, scenes in _units("ca_m", range(4), gen_env):
        form, moves = it.metadata["form"], it.metadata["true_moves"]
        forms.append(form)
        assert form in CA_M_FORMS
        if form != "counter":
            continue
        cams = scenes[it.scene_id].cameras
        sideways = [k for k, m in enumerate(moves) if m in ("left", "right")]
        assert sideways
        for k in sideways:
            assert counter_step_ok(cams[k], cams[k + 1], scenes[it.scene_id], moves[k])
            assert (it.metadata["turns_deg"][k] < 0) == (moves[k] == "right")  # panned against the move
        if it.answer == "no":
            flipped = [{"left": "right", "right": "left"}.get(m, m) for m in moves]
            assert it.metadata["stated_moves"] == flipped
    assert sorted(forms) == ["counter", "counter", "plain", "plain"]  # two pairs: one of each form


def test_ca_r_confound_form_slides_near_things_against_one_turn(gen_env) -> None:  # type: ignore[no-untyped-def]
    """Confound form: at the confounded shown step the far blocks show the turn and the
    nearest street thing slides the other way; in a "no" that step is the one whose turn
    really reverses (so the near things look consistent), in a "yes" any step."""
    from perspecta.suites.lrr.depth_camera import CA_R_FORMS, _reversed_step, confound_step_ok
    from perspecta.world.oracle import camera_turn

    forms = []
    for it, scenes in _units("ca_r", range(4), gen_env):
        form, k = it.metadata["form"], it.metadata["confounded_step"]
        forms.append(form)
        assert form in CA_R_FORMS
        if form != "confound":
            assert k is None
            continue
        scene = scenes[it.scene_id]
        cams = scene.cameras
        assert confound_step_ok(cams[k], cams[k + 1], scene)
        turns = [camera_turn(a, b) for a, b in zip(cams, cams[1:])]
        if it.answer == "no":
            assert k == _reversed_step(it.metadata["shown_order"])
            assert sum((t > 0) == (turns[k] > 0) for t in turns) == 1
        else:
            assert all((t > 0) == (turns[0] > 0) for t in turns)
    assert sorted(forms) == ["confound", "confound", "plain", "plain"]


def test_reversed_step_names_the_odd_turn() -> None:
    from perspecta.suites.lrr.depth_camera import _ONE_STEP_SWAPS, _reversed_step

    for i, j in _ONE_STEP_SWAPS:
        order = [0, 1, 2, 3]
        order[i], order[j] = order[j], order[i]
        k = _reversed_step(order)
        assert abs(order[k + 1] - order[k]) == 1  # a single step's turn is the one reversed


def test_obj_md_carried_form_reverses_the_subject_slide(gen_env) -> None:  # type: ignore[no-untyped-def]
    """Carried form: in every step the subject slides against the way a fixed camera
    would see it go while the nearest post slides clearly (the ground shows the camera
    moved); the fixed form keeps one camera. Two pairs hold one pair of each form."""
    from perspecta.suites.lrr.objects import MD_FORMS, carried_step_misleads

    forms = []
    for it, scenes in _units("obj_md", range(4), gen_env):
        form = it.metadata["form"]
        forms.append(form)
        assert form in MD_FORMS
        frames = [scenes[s] for s in it.metadata["scene_ids"]]
        cams = [f.camera("main") for f in frames]
        if form == "fixed":
            assert all(c == cams[0] for c in cams)
            continue
        # the uncarried camera: the one shot with the subject at its middle spot (offset 0)
        ref = next(c for c, src in zip(cams, it.metadata["shown_order"]) if src == 1)
        for (ca, cb), (a, b) in zip(zip(cams, cams[1:]), zip(frames, frames[1:])):
            assert carried_step_misleads(ref, (ca, cb), a, b)
    assert sorted(forms) == ["carried", "carried", "fixed", "fixed"]


def test_render_readable_draws_colour_only_for_a_readable_view() -> None:
    """A view whose named object breaks the pixel contract costs a mask-only render and
    no colour pass; a readable one gets the very image and facts of a plain render."""
    from types import SimpleNamespace

    import numpy as np

    from perspecta.assets.library import AssetLibrary
    from perspecta.render.gl import GLRenderer
    from perspecta.suites.lrr.common import named_facts, render_readable
    from perspecta.world.scene import Camera, Pose, Scene, SceneObject

    lib = AssetLibrary.default()
    box = SceneObject("target", "proc:box", "box", Pose((0.0, 0.0, 0.0), yaw=30.0), params={"seed": 1})
    near = Camera(position=(3.0, -2.0, 1.5), look_at=(0, 0, 0.3), width=256, height=256)
    far = Camera(position=(300.0, -200.0, 150.0), look_at=(0, 0, 0.3), fov_y=20.0, width=256, height=256)
    scene = Scene("t", 0, "studio", [box], [near, far])
    calls: list[bool] = []
    with GLRenderer(lib) as r:
        plain_render = r.render

        def counted(s, c, *, color=True, layers=True):  # type: ignore[no-untyped-def]
            calls.append((color, layers))
            return plain_render(s, c, color=color, layers=layers)

        ctx = SimpleNamespace(renderer=SimpleNamespace(render=counted), with_depth=False)
        assert render_readable(ctx, scene, far, {"box": "target"}) is None
        assert calls == [(False, True)]
        rgb, facts = render_readable(ctx, scene, near, {"box": "target"})
        want = plain_render(scene, near)
    assert calls == [(False, True), (False, True), (True, False)]  # the colour pass draws no layers
    assert np.array_equal(rgb, want.rgb)
    assert facts == named_facts(want.instance, scene, {"box": "target"})[0]


def test_ca_m_counter_form_redraws_a_pan_too_strong_for_its_step(tmp_path: Path) -> None:
    """Seed 148216's first Ca-M unit drew a 9-degree counter-pan for a 1.06 m step: no
    layout let the nearest object slide the honest way, and generation stopped after 200
    layouts. The pans are now drawn again; the unit generates and its answer re-derives."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import get_renderer
    from perspecta.suites.context import TaskContext

    lib = AssetLibrary.default()
    ctx = TaskContext("lrr", "ca_m", 0, 148216, lib, get_renderer("gl", library=lib), tmp_path, config={})
    items = registry.get_task("lrr", "ca_m").generate(ctx)
    scenes = {s.scene_id: s for s in ctx.scenes}
    assert items and all(derive_ca_m(it, scenes) == it.answer for it in items)
    assert items[0].metadata["form"] == "counter"
