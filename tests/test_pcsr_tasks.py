"""PCSR T0-T7 answers on a hand-built room (values worked out by hand), and one
generated unit per task that must validate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.dataset.validate import validate_dataset
from perspecta.suites.pcsr.panoramic import (
    fov_statuses,
    seam_neighbour_answer,
    seam_pair_answer,
)
from perspecta.suites.context import TaskContext
from perspecta.suites.pcsr.common import Pano, balanced, display
from perspecta.suites.pcsr.perception import (
    _build_distance,
    clear_winner,
    count_answer,
    direction_answer,
    distance_answer,
)
from perspecta.suites.pcsr.reasoning import (
    compositional_answer,
    reanchor_answer,
    rotation_answer,
    transitive_answer,
)
from perspecta.world.oracle import panorama_longitude, straddles_seam
from perspecta.world.scene import Camera, Pose, Room, Scene, SceneObject

# Observer at the origin, eye 1.5 m, looking along +X (so +Y is on its LEFT).
LAYOUT = {
    "sofa": (2.0, 0.0),  # straight ahead, longitude 0
    "tv": (0.0, -3.0),  # on the right, longitude +90
    "plant": (0.0, 2.0),  # on the left, longitude -90
    "bed": (-2.0, 0.3),  # behind, just left of the seam: longitude -171.5
    "wardrobe": (4.0, -1.0),
}
CHAIRS = [(2.5, 0.6), (-1.8, -0.8)]  # the second is behind, right of the seam: longitude +156


def room() -> Scene:
    objs = [
        SceneObject(id="", asset_id=f"x:{c}", category=c, pose=Pose((x, y, 0.0)), size=(0.4, 0.4, 0.8))
        for c, (x, y) in [*LAYOUT.items(), *[("chair", p) for p in CHAIRS]]
    ]
    for i, o in enumerate(objs):
        o.id = f"obj{i}"
    cam = Camera(name="pano", position=(0.0, 0.0, 1.5), look_at=(1.0, 0.0, 1.5), width=1024, height=512,
                 projection="equirect")
    return Scene(scene_id="s", seed=0, kind="room", objects=objs, cameras=[cam], ground=None,
                 room=Room(width=10.0, depth=8.0, room_type="living_room"))


def test_layout_longitudes() -> None:
    s, cam = room(), room().camera("pano")
    lon = {o.category + o.id: panorama_longitude(o, cam) for o in s.objects}
    assert lon["sofaobj0"] == pytest.approx(0.0)
    assert lon["tvobj1"] == pytest.approx(90.0)
    assert lon["plantobj2"] == pytest.approx(-90.0)
    assert lon["bedobj3"] == pytest.approx(-171.47, abs=0.01)
    assert lon["chairobj6"] == pytest.approx(156.04, abs=0.01)


def test_t0_counts_instances() -> None:
    assert count_answer(room(), "chair") == "2"
    assert count_answer(room(), "sofa") == "1"
    assert count_answer(room(), "piano") == "0"


def _ctx(index: int, root_seed: int = 1, task: str = "t") -> TaskContext:
    return TaskContext("pcsr", task, index, root_seed, None, None, Path("/nonexistent"))  # type: ignore[arg-type]


def test_balanced_assignment_is_exact_per_block_and_not_index_parity() -> None:
    values = ["yes", "no", "no", "maybe"]
    for seed in (1, 2):
        got = [balanced(_ctx(i, seed), "x", values) for i in range(40)]
        for block in range(10):
            assert sorted(got[4 * block: 4 * block + 4]) == sorted(values)
    # the value of a unit is not a function of its index: other root seeds permute differently
    runs = {tuple(balanced(_ctx(i, seed), "x", values) for i in range(8)) for seed in range(6)}
    assert len(runs) > 1
    assert balanced(_ctx(5, 3), "x", values) == balanced(_ctx(5, 3), "x", values)  # deterministic


def test_answer_targets_are_even_within_each_room_type() -> None:
    """The (room type, answer) draw spreads answers evenly inside a room type, so the room
    type alone cannot predict the object asked for; T0 crosses every count with every
    (room type, category) cell whose plans hold all counts, so neither predicts the count."""
    from collections import Counter

    from perspecta.suites.pcsr.common import answer_target
    from perspecta.suites.pcsr.perception import COUNT_CATEGORIES, count_cells, count_plan, plan_counts
    from perspecta.suites.pcsr.reasoning import ROTATION_ANSWERS

    k = sum(len(c) for c in ROTATION_ANSWERS.values())
    got = Counter(answer_target(_ctx(i, 7), ROTATION_ANSWERS) for i in range(3 * k))
    assert set(got) == {(rt, c) for rt, cats in ROTATION_ANSWERS.items() for c in cats}
    assert set(got.values()) == {3}
    cells = count_cells(3)
    assert count_plan(3) == [(v, rt, c) for v in range(4) for rt, c in cells]  # full cross per cell
    assert {c for _, c in cells} <= set(COUNT_CATEGORIES)
    # varied everyday categories over several room types, not one (room, category) pair
    assert len({c for _, c in cells}) >= 6 and len({rt for rt, _ in cells}) >= 3
    for rt, c in cells:  # the room type can hold none and every count up to count_max
        assert set(range(4)) <= plan_counts(rt, c)
    assert plan_counts("bedroom", "chair") == {0, 1}  # one chair per optional desk: never counted at 2+
    assert plan_counts("living_room", "chair") == {0, *range(2, 7)}  # 2..6 per optional table: never one
    assert ("bedroom", "person") in count_cells(2) and ("bedroom", "person") not in cells  # at most two
    with pytest.raises(ValueError, match="count_max=9"):
        count_cells(9)
    draws = [balanced(_ctx(i, 7, "counting"), "count_cell", count_plan(3)) for i in range(2 * len(count_plan(3)))]
    assert Counter(draws) == Counter({t: 2 for t in count_plan(3)})


def test_room_type_is_known_from_the_seed_without_sampling() -> None:
    """Units skip shared rooms of the wrong type by seed; the peek must agree with the sampler."""
    from perspecta.assets.library import AssetLibrary
    from perspecta.suites.pcsr.rooms import RoomKey, room_type
    from perspecta.world.samplers import sample_room

    ctx = _ctx(0, 11)
    lib = AssetLibrary.default()
    for attempt in range(6):
        key = RoomKey(0, attempt)
        scene = sample_room(np.random.default_rng(key.seed_sequence(11)), lib, scene_id="x", seed=1, min_objects=5)
        assert scene.room is not None and scene.room.room_type == room_type(ctx, key)


def _pano_with_pixels(s: Scene, tiny: set[str]) -> Pano:
    """A measured panorama in which every object is a 60x40 block, except ``tiny`` ones (5x5)."""
    inst = np.zeros((512, 1024), dtype=np.int32)
    for i, o in enumerate(s.objects):
        w, h = (5, 5) if o.category in tiny else (60, 40)
        inst[50 * i: 50 * i + h, 70 * i: 70 * i + w] = i + 1
    px = {o.id: int((inst == i + 1).sum()) for i, o in enumerate(s.objects)}
    return Pano(scene=s, camera=s.camera("pano"), image="", visible_px=px, instance=inst)


def test_readability_facts_and_planted_violation() -> None:
    s = room()
    pano = _pano_with_pixels(s, tiny={"chair"})
    sofa, chair = s.objects[0], s.objects[5]
    assert pano.facts[sofa.id] == {"pixels": 2400, "box": [60, 40], "marker_cover": 0.0}
    assert pano.visible(sofa) and not pano.visible(chair)
    rec = pano.record({"sofa": sofa})
    assert rec is not None and rec["objects"]["sofa"]["pixels"] == 2400
    assert pano.record({"sofa": sofa, "chair": chair}) is None  # a named 5x5 chair breaks the contract
    margin = {"value": 0.009, "min": 0.3, "unit": "m"}
    assert pano.record({"sofa": sofa}, winner_margin=margin) is None  # a 9 mm tie is no clear winner
    # the chairs are the closest objects to the sofa; hidden, no distance question about the sofa
    # may name them, so every question the builder poses avoids them or fails
    for i in range(6):
        q = _build_distance(_ctx(i, task="relative_distance"), pano)
        assert q is None or "chair" not in [q.answer, *q.distractors]


def test_clear_winner_holds_same_category_objects_to_the_margin() -> None:
    a, b, c = (SceneObject(id=f"o{i}", asset_id="x", category=k, pose=Pose((0.0, 0.0, 0.0)), size=(1, 1, 1))
               for i, k in enumerate(["nightstand", "nightstand", "bed"]))
    assert clear_winner([(a, 1.0), (b, 1.009), (c, 3.0)], 0.3) is None  # two nightstands 9 mm apart
    win = clear_winner([(a, 1.0), (b, 1.5), (c, 3.0)], 0.3)
    assert win is not None and win[0] is a and win[1] == pytest.approx(0.5)


def test_options_and_answers_name_one_object() -> None:
    """With the scene given (T3, T6), a name that fits two objects (the room's two chairs)
    is never an option, even as the hardest near miss; without it (T1, T4, whose answers
    may have margin-checked twins) options follow the answer's rule."""
    from perspecta.suites.pcsr.common import distinct_by_name, optimistic

    scene = room()
    pano = optimistic(scene)
    chair = next(o for o in scene.objects if o.category == "chair")
    sofa = next(o for o in scene.objects if o.category == "sofa")
    assert not pano.unique(chair) and pano.unique(sofa)
    picked = distinct_by_name([chair, *scene.objects], {"sofa"}, scene=scene)
    assert picked is not None and "chair" not in picked and len(picked) == 3
    loose = distinct_by_name([chair, *scene.objects], {"sofa"}, scene=None)  # T1/T4: twins allowed
    assert loose is not None and "chair" in loose


def test_t1_closest_and_farthest() -> None:
    # from the sofa (2, 0): chair (2.5, 0.6) at 0.78 m is closest; bed 4.01 m beats chair 3.87 m
    assert distance_answer(room(), "sofa", "closest") == "chair"
    assert distance_answer(room(), "sofa", "farthest") == "bed"


def test_t2_directions_from_the_observer() -> None:
    s = room()
    assert direction_answer(s, "observer_sector", "tv", None) == "right"
    assert direction_answer(s, "observer_sector", "plant", None) == "left"
    assert direction_answer(s, "observer_sector", "sofa", None) == "front"
    assert direction_answer(s, "observer_sector", "bed", None) == "behind"
    assert direction_answer(s, "pair_left_right", "plant", "sofa") == "left"
    assert direction_answer(s, "pair_left_right", "tv", "sofa") == "right"
    assert direction_answer(s, "pair_left_right", "plant", "tv") is None  # opposite: no short way


def test_t3_transitive_and_compositional() -> None:
    s = room()  # observer distances: sofa 2.28, tv 3.19, wardrobe 4.27
    assert transitive_answer(s, ["sofa", "tv", "wardrobe"], "closer", "closer") == "sofa"
    assert transitive_answer(s, ["sofa", "tv", "wardrobe"], "closer", "farther") == "wardrobe"
    assert transitive_answer(s, ["wardrobe", "tv", "sofa"], "farther", "closer") == "sofa"
    with pytest.raises(ValueError):
        transitive_answer(s, ["tv", "sofa", "wardrobe"], "closer", "closer")  # false premise
    # closest to the plant is the bed (2.62 m); farthest from the bed is the wardrobe (6.14 m)
    hop1, hop2 = compositional_answer(s, "plant", ["closest", "farthest"])
    assert (hop1.category, hop2.category) == ("bed", "wardrobe")
    assert compositional_answer(s, "plant", ["closest", "closest"])[1].category == "chair"  # chair at 1.12 m
    # a third hop never returns to a stop: closest to the chair (-1.8, -0.8) other than the bed
    # and the plant is the TV (2.84 m; sofa 3.88 m)
    assert [o.category for o in compositional_answer(s, "plant", ["closest", "closest", "closest"])] == [
        "bed", "chair", "tv"]


def test_t4_rotation() -> None:
    s = room()
    assert rotation_answer(s, 90, "clockwise", "front") == "TV"  # turn right: now facing -Y
    assert rotation_answer(s, 90, "counter-clockwise", "front") == "plant"
    assert rotation_answer(s, 180, "clockwise", "front") == "bed"
    assert rotation_answer(s, 90, "clockwise", "left") == "sofa"  # after turning right, +X is on the left
    assert rotation_answer(s, 0, "clockwise", "behind") == "bed"


def test_t5_reanchoring() -> None:
    s = room()
    # at the sofa facing the TV (heading 236 deg), the plant bears -101 deg: on the right
    assert reanchor_answer(s, "left_right", "sofa", "tv", "plant") == "right"
    assert reanchor_answer(s, "sector", "sofa", "tv", "plant") == "right"
    # at the plant facing the sofa (heading -45 deg), the bed bears -95 deg: right
    assert reanchor_answer(s, "sector", "plant", "sofa", "bed") == "right"
    # facing the other way flips it
    assert reanchor_answer(s, "left_right", "sofa", "plant", "tv") == "left"


def test_t6_seam_neighbours() -> None:
    s = room()
    cam = s.camera("pano")
    bed, far_chair = s.objects[3], s.objects[6]
    assert panorama_longitude(bed, cam) < -150 and panorama_longitude(far_chair, cam) > 150
    assert seam_neighbour_answer(s, "bed") == "chair"  # 1.12 m away, across the seam
    assert not straddles_seam(bed, cam)
    assert seam_pair_answer(s, "bed", "plant") == "no"  # 2.62 m apart vs a 2 m threshold
    assert seam_pair_answer(s, "bed", "plant", threshold=3.0) == "yes"
    with pytest.raises(ValueError):
        seam_pair_answer(s, "bed", "plant", threshold=2.5, margin=0.3)  # within the margin


def test_t7_fov_with_occlusion() -> None:
    s = room()
    px = {o.id: 5000 for o in s.objects}
    st = fov_statuses(s, "sofa", 90, px, 8.0)
    # facing the sofa: chair (2.5, 0.6) at 13.5 deg and wardrobe at -14 deg are in view
    assert st["chair"] == "in" and st["wardrobe"] == "in"
    assert st["tv"] == st["plant"] == st["bed"] == "out"
    px["obj4"] = 0  # the wardrobe hidden in the panorama: in the field but not seen
    assert fov_statuses(s, "sofa", 90, px, 8.0)["wardrobe"] is None
    assert fov_statuses(s, "sofa", 60, {o.id: 5000 for o in s.objects}, 8.0)["chair"] == "in"


def test_generated_units_validate(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    config = GenerationConfig(suites=["pcsr"], n=1, seed=3, splits={"train": 0.5, "test": 0.5})
    generate_dataset(out, config)
    report = validate_dataset(out, derive_answers=True)
    assert report.ok, report.errors
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    tasks = {i["task"] for i in items}
    assert tasks == {"counting", "relative_distance", "relative_direction", "compositional_chains",
                     "egocentric_rotation", "perspective_reanchoring", "ego_distortion", "limited_fov"}
    for it in items:
        assert it["question"].count("<image>") == 1
        assert "<think>" in it["question"] and "<answer>" in it["question"]
        if it["answer_type"] == "open":
            assert it["answer"] and it["options"] == []
        if it["answer_type"] == "mcq":
            assert it["metadata"]["options"][it["answer"]] == it["metadata"]["answer_text"]
        if it["task"] != "counting" or it["metadata"]["count_3d"] > 0:
            assert it["metadata"]["readability"]["objects"], it["id"]  # every named object measured
        assert it["metadata"]["knobs"], it["id"]
        assert (it["metadata"].get("control") == "text_only") == (it["subtype"] == "transitive")
        if it["task"] == "counting" and it["answer_type"] == "mcq":
            top = it["metadata"]["count_range"][1]
            assert {int(v) for v in it["metadata"]["options"].values()} <= set(range(0, top + 1))
    split_of: dict[str, set[str]] = {}
    for it in items:
        split_of.setdefault(it["images"][0], set()).add(it["split"])
    assert all(len(v) == 1 for v in split_of.values())


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_rooms_are_shared_across_tasks_and_workers_reproduce_serial(tmp_path: Path) -> None:
    """Unit i of every task draws from one room stream: panoramas carry questions of
    several tasks, each is stored once, splits follow the panorama, and two workers
    (racing on the room cache) write exactly the serial bytes."""
    tasks = ["pcsr/counting", "pcsr/relative_distance", "pcsr/relative_direction", "pcsr/egocentric_rotation"]
    config = GenerationConfig(suites=["pcsr"], n=2, seed=8, tasks=tasks, splits={"train": 0.5, "test": 0.5})
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    generate_dataset(serial, config)
    generate_dataset(parallel, config, workers=2)
    assert _tree_bytes(serial) == _tree_bytes(parallel)
    assert not (serial / ".parts").exists()

    items = [json.loads(line) for line in (serial / "items.jsonl").read_text().splitlines()]
    tasks_of: dict[str, set[str]] = {}
    for it in items:
        tasks_of.setdefault(it["images"][0], set()).add(it["task"])
    assert max(len(t) for t in tasks_of.values()) >= 2, tasks_of  # a panorama serves several tasks
    stored = {p.relative_to(serial).as_posix() for p in (serial / "images").rglob("*.png")}
    assert stored == set(tasks_of)  # every stored panorama is used, none is missing
    scene_ids = [json.loads(line)["scene_id"] for line in (serial / "scenes.jsonl").read_text().splitlines()]
    assert len(scene_ids) == len(set(scene_ids)) == len({it["scene_id"] for it in items})
    report = validate_dataset(serial, derive_answers=True)
    assert report.ok, report.errors


def test_audit_features_skip_counted_instances_but_keep_named_sizes() -> None:
    """A counting record lists the counted instances (k of them, none at zero): a summary
    over them would encode the count, so the audit sees only the room and category there;
    objects a question names keep their sizes."""
    from perspecta.suites.pcsr.audit import audit_features

    objs = {"wardrobe #1": {"pixels": 900.0}, "wardrobe #2": {"pixels": 5000.0}}
    count = {"metadata": {"category": "wardrobe", "count_3d": 2, "room_type": "bedroom",
                          "readability": {"objects": objs}}, "answer_type": "open"}
    zero = {"metadata": {"category": "wardrobe", "count_3d": 0, "room_type": "bedroom",
                         "readability": {"objects": {}}}, "answer_type": "open"}
    f2, f0 = audit_features(count), audit_features(zero)
    assert set(f2) == set(f0) and "min_named_px" not in f2  # same keys whatever the count
    near = {"metadata": {"anchor": "bed", "readability": {"objects": objs}}, "answer_type": "open"}
    assert audit_features(near)["min_named_px"] == 900.0


def test_counted_instances_need_no_lookalike_and_no_seam_split() -> None:
    """T0 counts only what a careful person would count alike: every piece readable, none
    cut in two by the panorama's seam, and nothing in the room passing for the category
    (an armchair for a chair)."""
    from perspecta.suites.pcsr.perception import counted_instances

    s = room()
    pano = _pano_with_pixels(s, tiny=set())
    got = counted_instances(pano, "chair")
    assert got is not None and len(got) == 2
    k = next(i for i, o in enumerate(s.objects) if o.category == "chair") + 1
    cut = pano.instance.copy()
    cut[300:340, :30] = k  # the same chair now also shows at the left edge ...
    cut[300:340, -30:] = k  # ... and at the right edge: cut in two by the seam
    assert counted_instances(Pano(scene=s, camera=pano.camera, image="", visible_px={}, instance=cut), "chair") is None
    s.objects.append(SceneObject(id=f"obj{len(s.objects)}", asset_id="x:armchair", category="armchair",
                                 pose=Pose((-2.0, 2.0, 0.0)), size=(0.8, 0.8, 0.8)))
    assert counted_instances(_pano_with_pixels(s, tiny=set()), "chair") is None  # an armchair passes for one


def test_a_sink_on_a_cabinet_base_keeps_cabinets_uncounted() -> None:
    """The kitchen sink model stands on a closed two-door base: careful and one-look judges
    both counted it as a cabinet, so no room holding it is asked to count cabinets (zero
    included), while a washbasin leaves the question open."""
    from perspecta.suites.pcsr.common import LOOKALIKE_ASSETS
    from perspecta.suites.pcsr.perception import lookalike_in

    sink_unit = next(iter(LOOKALIKE_ASSETS["cabinet"]))
    s = room()
    s.objects = [o for o in s.objects if o.category != "wardrobe"]  # a wardrobe passes for a cabinet too
    s.objects.append(SceneObject(id=f"obj{len(s.objects)}", asset_id="sh3d:blendswap-cc-0/washbasin",
                                 category="sink", pose=Pose((-2.0, 2.0, 0.0)), size=(0.6, 0.5, 0.9)))
    assert not lookalike_in(s, "cabinet")
    s.objects[-1].asset_id = sink_unit
    assert lookalike_in(s, "cabinet") and not lookalike_in(s, "person")


@pytest.mark.parametrize("asset", sorted(__import__("perspecta.suites.pcsr.common", fromlist=["x"]).LOOKALIKE_ASSETS["cabinet"]))
def test_a_sink_on_a_cabinet_base_bars_cabinet_from_every_task(asset: str) -> None:
    """Beyond counting: in a room holding the sink (or vanity) on its two-door base, no task
    may name a cabinet, take it as an answer or offer it as a distractor (a person cannot
    tell which "cabinet" is meant). The gate is Pano.referable() and Pano.record(), which
    every builder goes through; a plain washbasin leaves the cabinet nameable."""
    s = room()
    cab = next(o for o in s.objects if o.category == "wardrobe")
    cab.category, cab.asset_id = "cabinet", "x:cabinet"
    s.objects.append(SceneObject(id=f"obj{len(s.objects)}", asset_id="sh3d:blendswap-cc-0/washbasin",
                                 category="sink", pose=Pose((-3.0, -3.0, 0.0)), size=(0.6, 0.5, 0.9)))
    pano = _pano_with_pixels(s, tiny=set())
    assert cab in pano.referable() and pano.record({"cabinet": cab}) is not None
    s.objects[-1].asset_id = asset
    pano = _pano_with_pixels(s, tiny=set())
    assert cab not in pano.referable()
    assert pano.record({"cabinet": cab}) is None and pano.record({"sofa": s.objects[0], "cabinet": cab}) is None
    for i in range(12):
        q = _build_distance(_ctx(i, task="relative_distance"), pano)
        assert q is None or ("cabinet" not in [q.answer, *q.distractors] and "cabinet" not in q.body)


def test_an_armchair_keeps_the_chair_unnamed_but_not_the_other_way_round() -> None:
    """"The chair" may mean an armchair to a reader, so a room holding an armchair never
    names, asks about or offers "chair"; "the armchair" stays nameable beside a chair."""
    s = room()
    chair = next(o for o in s.objects if o.category == "chair")
    s.objects = [o for o in s.objects if o.category != "chair" or o is chair]  # one chair: nameable alone
    pano = _pano_with_pixels(s, tiny=set())
    assert chair in pano.referable() and pano.record({"chair": chair}) is not None
    s.objects.append(SceneObject(id=f"obj{len(s.objects)}", asset_id="x:armchair", category="armchair",
                                 pose=Pose((-3.0, -3.0, 0.0)), size=(0.8, 0.8, 0.8)))
    pano = _pano_with_pixels(s, tiny=set())
    arm = s.objects[-1]
    assert chair not in pano.referable() and pano.record({"chair": chair}) is None
    assert arm in pano.referable() and pano.record({"armchair": arm}) is not None
    for i in range(12):
        q = _build_distance(_ctx(i, task="relative_distance"), pano)
        assert q is None or ("chair" not in [q.answer, *q.distractors] and "the chair" not in q.body)


def test_mcq_answer_letters_are_balanced_per_subtype_by_construction() -> None:
    """The answer's MCQ position is planned, not shuffled: left/right pair items put the
    answer at A and B equally often within each answer, and placed_options puts it there."""
    import collections

    import numpy as np

    from perspecta.suites.pcsr.common import placed_options
    from perspecta.suites.pcsr.perception import DIRECTION_PLAN

    pair = collections.Counter((want, pos) for sub, want, pos in DIRECTION_PLAN if sub == "pair_left_right")
    assert pair == {("left", 0): 1, ("left", 1): 1, ("right", 0): 1, ("right", 1): 1}
    rng = np.random.default_rng(0)
    for pos in range(4):
        opts = placed_options(rng, "sofa", ["bed", "lamp", "tv"], pos)
        assert opts[pos].text == "sofa" and sorted(o.text for o in opts) == ["bed", "lamp", "sofa", "tv"]
    with pytest.raises(ValueError, match="position"):
        placed_options(rng, "sofa", ["bed"], 2)


def test_t1_two_hop_offers_the_one_hop_slip_and_derives_the_walk() -> None:
    """The two-hop form's answer differs from the one-hop answer a glance gives (closest to
    the TV is a chair; closest to that chair, the TV aside, is the bed), and that slip and
    the intermediate stop are MCQ distractors; re-deriving walks the same two hops."""
    from perspecta.suites.pcsr.common import optimistic
    from perspecta.suites.pcsr.perception import _build_two_hop

    s = room()
    q = _build_two_hop(_ctx(0, task="relative_distance"), optimistic(s), "closest", "bed")
    assert q is not None and q.answer == "bed" and q.metadata["form"] == "two_hop"
    assert (q.metadata["anchor"], q.metadata["via"], q.metadata["stop"]) == ("tv", "closest", "chair")
    one_hop = distance_answer(s, "tv", "closest")
    assert one_hop == "chair" != q.answer and one_hop in q.distractors
    assert [o.category for o in compositional_answer(s, "tv", ["closest", "closest"])] == ["chair", "bed"]
    assert "bed" not in q.distractors and "TV" not in q.distractors


def test_form_shares_are_exact_per_block() -> None:
    """T1's two-hop share and T3's compositional share are planned per block, so a preset's
    share is what a dataset gets, and the text-only transitive control stays in T3."""
    from collections import Counter

    from perspecta.suites.pcsr.perception import hop_forms
    from perspecta.suites.pcsr.reasoning import chain_plan

    forms = Counter(hop_forms(_ctx(i, task="relative_distance"), "form", "distance_two_hop_share",
                              {"easy": 0.0, "standard": 0.75, "hard": 1.0}) for i in range(40))
    assert forms == {"two_hop": 30, "one_hop": 10}
    plan = Counter(sub for sub, _, _ in chain_plan(0.75))
    assert plan == {"transitive": 4, "compositional": 12}
    assert Counter(sub for sub, _, _ in chain_plan(0.5)) == {"transitive": 4, "compositional": 4}
    assert set(chain_plan(1.0)) == {("compositional", "", "")}
    with pytest.raises(ValueError, match="compositional_share"):
        chain_plan(1.5)


def test_t5_facing_found_by_a_hop_matches_the_named_facing() -> None:
    """The two-hop re-anchoring form faces the object closest to the standpoint without
    naming it: from the plant that is the bed (2.62 m), and the sofa is then on the left
    (facing (-2, -1.7), the sofa at (2, -2): counter-clockwise of the facing)."""
    s = room()
    named = reanchor_answer(s, "left_right", "plant", "bed", "sofa")
    hopped = reanchor_answer(s, "left_right", "plant", "", "sofa", facing_hop="closest")
    assert named == hopped == "left"
    # facing another object (the wardrobe, (4, -1)) puts the sofa on the other side
    assert reanchor_answer(s, "left_right", "plant", "wardrobe", "sofa") == "right"


def test_t2_turned_form_flips_the_frame_in_half_the_items() -> None:
    """T2 turned form: after turning on the spot to face an object, left/right is taken from
    the new facing. The glance answer (the object's side of the panorama) is the distractor
    and is wrong exactly in the planned flip half; answers re-derive from the scene."""
    from collections import Counter

    from perspecta.suites.pcsr.perception import (
        TURNED_PLAN,
        TURNED_SHARE,
        _build_direction,
        form_ordinal,
        hop_forms,
        panorama_side,
    )

    s = room()
    cam = s.camera("pano")
    wardrobe = by_cat(s, "wardrobe")
    # the wardrobe shows right of centre (+14 deg); facing the TV (right, +90) it is on the left
    assert panorama_side(wardrobe, cam, 10.0) == "right"
    assert direction_answer(s, "turned_left_right", "wardrobe", "tv", 10.0) == "left"
    # facing the plant (left, -90) it is behind-right: no flip
    assert direction_answer(s, "turned_left_right", "wardrobe", "plant", 10.0) == "right"
    # exact shares: 3 of 4 units turned at standard; the flip plan is exact among turned units
    forms = [hop_forms(_ctx(i, task="relative_direction"), "form", "direction_turned_share", TURNED_SHARE)
             for i in range(32)]
    assert Counter(forms) == {"two_hop": 24, "one_hop": 8}
    turned = [i for i, f in enumerate(forms) if f == "two_hop"]
    assert [form_ordinal(_ctx(i, task="relative_direction"), "form", "direction_turned_share", TURNED_SHARE)
            for i in turned] == list(range(24))
    plans = Counter(balanced(_ctx(i, task="relative_direction"), "turned_plan", TURNED_PLAN, index=k)[1]
                    for k, i in enumerate(turned))
    assert plans == {True: 12, False: 12}
    pano = _pano_with_pixels(s, tiny=set())
    built = 0
    for i in turned[:8]:
        q = _build_direction(_ctx(i, task="relative_direction"), pano)
        if q is None:
            continue
        built += 1
        m = q.metadata
        a, f = by_cat(s, m["object_a"]), by_cat(s, m["object_b"])
        assert q.subtype == "turned_left_right" and m["form"] == "turned"
        assert q.answer == direction_answer(s, "turned_left_right", a.category, f.category, m["margin_deg"])
        assert m["panorama_side"] == panorama_side(a, cam, m["margin_deg"])
        assert m["frame_flip"] == (q.answer != m["panorama_side"])
        assert q.distractors == ["right" if q.answer == "left" else "left"]
    assert built >= 2


def by_cat(s: Scene, category: str) -> SceneObject:
    return next(o for o in s.objects if o.category == category)


def test_t7_two_step_turn_offers_the_one_step_view_as_the_slip() -> None:
    """T7 two-step form: face X, then turn 90 degrees further. The view is re-derived from
    the scene with the second turn; the first distractor is an object the first turn alone
    shows (the one-step slip); 3 of 4 units take the form at standard, turns balanced."""
    from collections import Counter

    from perspecta.suites.pcsr.panoramic import FOV_TWO_STEP_SHARE, SECOND_TURNS, _build_fov, fov_statuses
    from perspecta.suites.pcsr.perception import hop_forms

    s = room()
    px = {o.id: 5000 for o in s.objects}
    # facing the sofa (+X) then turning 90 right: now facing -Y, the TV straight ahead
    assert fov_statuses(s, "sofa", 90, px, 8.0, 90.0)["tv"] == "in"
    assert fov_statuses(s, "sofa", 90, px, 8.0, 90.0)["wardrobe"] == "out"  # in the one-step view
    assert fov_statuses(s, "sofa", 90, px, 8.0)["wardrobe"] == "in"
    assert fov_statuses(s, "sofa", 90, px, 8.0, -90.0)["plant"] == "in"  # left turn: facing +Y
    forms = [hop_forms(_ctx(i, task="limited_fov"), "form", "fov_two_step_share", FOV_TWO_STEP_SHARE)
             for i in range(40)]
    assert Counter(forms) == {"two_hop": 30, "one_hop": 10}
    assert Counter(balanced(_ctx(i, task="limited_fov"), "second_turn", SECOND_TURNS) for i in range(40)) == {
        90.0: 20, -90.0: 20}
    pano = _pano_with_pixels(s, tiny=set())
    seen = 0
    for i in range(24):
        q = _build_fov(_ctx(i, task="limited_fov"), pano)
        if q is None or q.metadata["form"] != "two_step":
            continue
        seen += 1
        m = q.metadata
        st = fov_statuses(s, m["facing"], m["fov"], pano.visible_px, m["fov_margin_deg"], m["then_turn_cw"])
        first = fov_statuses(s, m["facing"], m["fov"], pano.visible_px, m["fov_margin_deg"])
        ans = next(c for c in st if display(c) == q.answer)
        assert st[ans] == "in" and abs(m["then_turn_cw"]) == 90.0
        slip = q.distractors[0]
        assert slip in {display(c) for c in m["one_step_slips"]}
        assert first[next(c for c in st if display(c) == slip)] == "in"
        assert all(st[c] == "out" for c in st if display(c) in q.distractors)
        if q.open_answer == "no":
            assert m["target"] in m["one_step_slips"]
    assert seen >= 1


def test_t0_many_form_counts_two_to_four_with_balanced_values() -> None:
    """T0 "many" form: office chairs 2..4 (five stopped generation at a fresh seed), every
    value asked equally often within the form (to one, over 32 units) and all three
    offered; half the units at standard; the "few" plan stays exact among its own units."""
    from collections import Counter

    from perspecta.suites.pcsr.perception import (
        COUNT_MANY_SHARE,
        _count_target,
        count_many_plan,
        count_plan,
        plan_counts,
    )

    assert count_many_plan() == [(v, "office", "chair") for v in range(2, 5)]
    assert set(range(2, 5)) <= plan_counts("office", "chair")
    targets = [_count_target(_ctx(i, 5, "counting")) for i in range(64)]
    many = [t for t in targets if t[3] == 2]
    assert len(many) == 32 and all(t[4] == 4 and t[2] == "chair" for t in many)
    per_value = Counter(t[0] for t in many)
    assert set(per_value) == {2, 3, 4} and max(per_value.values()) - min(per_value.values()) <= 1, per_value
    few = Counter(t[:3] for t in targets if t[3] == 0)
    assert sum(few.values()) == 32 and set(few) <= set(count_plan(3))
    if 32 % len(count_plan(3)) == 0:  # whole blocks of the few plan: every cell equally often
        assert set(few.values()) == {32 // len(count_plan(3))}
    assert float(COUNT_MANY_SHARE["easy"]) == 0.0


def test_panoramas_are_drawn_in_colour_only_when_kept(tmp_path: Path, monkeypatch) -> None:
    """Rooms are measured on masks; the colour pass runs once per stored panorama (shared
    rooms and a task's own seam-aimed rooms alike), and each stored PNG holds the pixels
    a fresh renderer draws for its scene record."""
    from PIL import Image

    from perspecta.dataset.io import scene_from_record
    from perspecta.render.gl import GLRenderer

    colour, drawn_layers = [], []
    plain = GLRenderer.render

    def counted(self, scene, camera, *, color=True, layers=True):  # type: ignore[no-untyped-def]
        colour.append(color)
        drawn_layers.append(layers)
        return plain(self, scene, camera, color=color, layers=layers)

    monkeypatch.setattr(GLRenderer, "render", counted)
    tasks = ["pcsr/counting", "pcsr/relative_distance", "pcsr/ego_distortion"]
    out = tmp_path / "ds"
    generate_dataset(out, GenerationConfig(suites=["pcsr"], n=2, seed=8, tasks=tasks))
    stored = sorted((out / "images").rglob("*.png"))
    assert stored and sum(colour) == len(stored) < len(colour)
    # the colour pass draws no id / depth layers (the masks were measured before it);
    # every mask-only render draws them
    assert all(not lay for c, lay in zip(colour, drawn_layers) if c)
    assert all(lay for c, lay in zip(colour, drawn_layers) if not c)
    monkeypatch.setattr(GLRenderer, "render", plain)
    scenes = {json.loads(line)["scene_id"]: json.loads(line) for line in (out / "scenes.jsonl").read_text().splitlines()}
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    image_scene = {it["images"][0]: it["scene_id"] for it in items}
    with GLRenderer() as fresh:
        for png in stored:
            scene = scene_from_record(scenes[image_scene[png.relative_to(out).as_posix()]])
            want = fresh.render(scene, scene.camera("pano")).rgb
            assert np.array_equal(np.asarray(Image.open(png).convert("RGB")), want), png.name
