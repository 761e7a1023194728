"""SpinBench shortcut and readability guards: balanced strata, mental-rotation distractors,
tables at real scale, the readability contract (planted violations) and text-only controls."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perspecta.suites.context import TaskContext
from perspecta.suites.spin import common, rotation
from perspecta.world import oracle


def ctx_at(index: int, root_seed: int = 0, task: str = "t") -> TaskContext:
    return TaskContext(suite="spin", task=task, index=index, root_seed=root_seed, library=None,  # type: ignore[arg-type]
                       renderer=None, out_dir=Path("/nonexistent"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- strata


def test_strata_balance_answers_within_every_subtype() -> None:
    cells = Counter()
    for i in range(3 * 2 * 4 * 3):  # three full rounds of subtype x answer
        st = common.Strata(ctx_at(i))
        sub = st.draw("subtype", ("a", "b", "c"))
        ans = st.draw("answer", ("yes", "no"))
        cells[(sub, ans)] += 1
    counts = set(cells.values())
    assert len(cells) == 6 and counts == {12}, cells


def test_strata_is_not_index_parity_and_depends_on_the_root_seed() -> None:
    def seq(seed: int) -> list[str]:
        return [common.Strata(ctx_at(i, seed)).draw("x", ("p", "q")) for i in range(40)]

    a, b = seq(0), seq(1)
    assert a != b  # the permutation is secret without the root seed
    assert a != ["p", "q"] * 20 and a != ["q", "p"] * 20  # not the index's parity
    assert Counter(a) == Counter({"p": 20, "q": 20})


def test_strata_draws_are_reproducible_per_unit() -> None:
    first = [common.Strata(ctx_at(i, 5)).draw("x", (0, 1, 2, 3)) for i in range(8)]
    again = [common.Strata(ctx_at(i, 5)).draw("x", (0, 1, 2, 3)) for i in reversed(range(8))][::-1]
    assert first == again


def test_placed_order_puts_the_answer_at_the_slot() -> None:
    c = ctx_at(0)
    for slot in range(4):
        order = common.placed_order(c, 4, 2, slot)
        assert sorted(order) == [0, 1, 2, 3] and order[slot] == 2


# --------------------------------------------------------------------------- mental rotation


@pytest.mark.parametrize("gap", [20.0, 30.0, 45.0])
@pytest.mark.parametrize("want", [45.0, -45.0, 90.0, -90.0, 135.0, -135.0, 180.0])
def test_mental_distractors_hold_the_mirror_and_never_the_identity(want: float, gap: float) -> None:
    rng = np.random.default_rng(int(abs(want) * 7 + gap + (want < 0)))
    for _ in range(20):
        turns = rotation.mental_turns(rng, want, gap)
        assert len(turns) == 3
        everything = [want, *turns]
        for t in turns:
            assert abs(float(oracle.wrap180(t))) >= rotation.MIN_CANDIDATE_TURN  # never (nearly) the reference pose
        for i, a in enumerate(everything):
            for b in everything[i + 1:]:
                assert abs(float(oracle.wrap180(a - b))) >= gap - 1e-6
        if abs(want) != 180.0:
            assert any(abs(float(oracle.wrap180(t + want))) < 1e-6 for t in turns)  # the mirror direction


# --------------------------------------------------------------------------- real renders


def test_tabletops_stand_on_a_real_table_at_real_scale(env) -> None:  # type: ignore[no-untyped-def]
    from perspecta.world.samplers import sample_clutter
    from perspecta.world.samplers.clutter import SUPPORT_ID, TABLETOP_SIZES, placed_objects, support_area, support_of

    lib, _ = env
    for seed in range(4):
        scene = sample_clutter(np.random.default_rng(seed), lib, scene_id="c", seed=seed, n_objects=(3, 5))
        table = support_of(scene)
        assert table is not None and table.id == SUPPORT_ID and table.category == "table"
        area = support_area(table)
        for o in placed_objects(scene):
            assert o.category in TABLETOP_SIZES  # no chairs, people or cars on the table
            lo, hi = TABLETOP_SIZES[o.category]
            assert lo * 0.8 - 1e-6 <= max(o.size) <= hi * 1.25 + 1e-6, (o.category, o.size)
            assert o.pose.position[2] == pytest.approx(table.size[2], abs=1e-4)  # standing on the top
            assert max(abs(o.pose.position[0]), abs(o.pose.position[1])) <= max(area.hx, area.hy) + 1e-6
    with pytest.raises(ValueError, match="do not belong on a table"):
        sample_clutter(np.random.default_rng(0), lib, scene_id="c", seed=0, object_categories=["chair", "mug"])


def test_a_tiny_named_object_breaks_the_contract_and_the_unit_resamples(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from perspecta.world.samplers import sample_studio

    lib, renderer = env
    c = TaskContext(suite="spin", task="t", index=0, root_seed=0, library=lib, renderer=renderer, out_dir=tmp_path)
    scene = sample_studio(c.rng, lib, scene_id="s", seed=0, asset_id="proc:mug", image_size=256, camera_distance=8.0)
    spec = common.frame("main", [scene.objects[0].id])
    with pytest.raises(common.Unreadable, match="mug"):  # a mug 8 m away is a few pixels
        common.render_checked(c, scene, [spec], {"mug": (scene.objects[0].id, [0])})
    assert c.images == [] and c.scenes == []  # nothing written for the failed draw

    calls = []

    def build() -> list:
        calls.append(1)
        if len(calls) < 3:
            common.render_checked(c, scene, [spec], {"mug": (scene.objects[0].id, [0])})
        return []

    assert common.resampled(c, build) == [] and len(calls) == 3  # redrawn until readable
    with pytest.raises(RuntimeError, match="no readable draw"):
        common.resampled(c, lambda: common.render_checked(c, scene, [spec], {"mug": (scene.objects[0].id, [0])}))


@pytest.mark.parametrize("task_name", ["relation_transformation", "mental_rotation", "dynamic_translation"])
def test_generated_units_record_readability_and_controls(env, tmp_path: Path, task_name: str) -> None:  # type: ignore[no-untyped-def]
    from perspecta.suites import registry
    from perspecta.world.readability import problems

    lib, renderer = env
    td = registry.get_task("spin", task_name)
    c = TaskContext(suite="spin", task=task_name, index=1, root_seed=4, library=lib, renderer=renderer,
                    out_dir=tmp_path, config={"image_size": 320})
    items = td.generate(c)
    scenes = {s.scene_id: s for s in c.scenes}
    for it in items:
        rec = it.metadata["readability"]
        assert rec["objects"] and problems(rec) == []
        assert td.derive(it, scenes) == it.answer
        if task_name == "relation_transformation":
            assert (it.metadata.get("control") == "text_only") == bool(it.metadata["premise"])
        if task_name == "mental_rotation":
            turns = it.metadata["candidate_turns_ccw_deg"]
            assert all(abs(float(oracle.wrap180(t))) >= rotation.MIN_CANDIDATE_TURN for t in turns)
