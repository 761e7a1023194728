"""LRR shortcut controls and readability contracts: answers balanced without index
parity, matched strata, Obj-MD facing independent of the answer, and units that
resample (never emit) when a named object breaks the readability contract."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perspecta.suites import registry
from perspecta.suites.context import TaskContext
from perspecta.suites.lrr import common, objects
from perspecta.suites.lrr.audit import audit_features
from perspecta.world.samplers.common import SamplingError
from perspecta.world.scene import Pose, Scene, SceneObject


def _ctx(index: int, root_seed: int = 0, task: str = "obj_md", **kw) -> TaskContext:  # type: ignore[no-untyped-def]
    return TaskContext(suite="lrr", task=task, index=index, root_seed=root_seed, library=None,  # type: ignore[arg-type]
                       renderer=None, out_dir=Path("/nonexistent"), **kw)  # type: ignore[arg-type]


def test_answers_balance_per_pair_and_do_not_follow_parity() -> None:
    for seed in (0, 1, 2):
        yes = [common.wants_yes(_ctx(i, seed)) for i in range(200)]
        assert sum(yes) == 100
        assert all(yes[2 * k] != yes[2 * k + 1] for k in range(100))
        even_yes = sum(yes[0:192:2])
        assert even_yes == 48, f"seed {seed}: {even_yes}/96 even units are yes (parity leaks)"
        for m in (2, 3, 4):  # every residue class is half yes within each block of 24 units
            for start in range(0, 192, 24):
                block = yes[start:start + 24]
                assert all(sum(block[r::m]) * 2 == len(block[r::m]) for r in range(m)), (seed, m, start)
    # and the seed, not the index, says which unit of a pair is the yes
    firsts = {tuple(common.wants_yes(_ctx(i, seed)) for i in range(0, 16, 2)) for seed in range(6)}
    assert len(firsts) > 1
    # another root seed or task reshuffles which unit of a pair is yes
    a = [common.wants_yes(_ctx(i, 0)) for i in range(100)]
    assert a != [common.wants_yes(_ctx(i, 1)) for i in range(100)]
    assert a != [common.wants_yes(_ctx(i, 0, task="obj_m")) for i in range(100)]


def test_matched_stratum_is_shared_within_a_pair_and_cycles() -> None:
    values = ("toward", "rightward", "away", "leftward")
    got = [common.stratum(_ctx(i, 4), "facing", values) for i in range(48)]
    assert all(got[2 * k] == got[2 * k + 1] for k in range(24))
    pairs = got[0::2]
    for block in range(6):  # every 4 pairs use each value once
        assert sorted(pairs[4 * block: 4 * block + 4]) == sorted(values)


def test_per_answer_stratum_balances_negative_kinds() -> None:
    kinds = [common.stratum(_ctx(i, 7), "negative", objects.MD_NEGATIVES, per_answer=True)
             for i in range(60) if not common.wants_yes(_ctx(i, 7))]
    assert Counter(kinds) == {k: 10 for k in objects.MD_NEGATIVES}


def test_stratum_needs_values() -> None:
    with pytest.raises(ValueError):
        common.stratum(_ctx(0), "empty", ())


def test_named_facts_flags_a_tiny_object() -> None:
    scene = Scene(scene_id="s", seed=0, kind="clutter",
                  objects=[SceneObject(id="bg0", asset_id="proc:box", category="box"),
                           SceneObject(id="target", asset_id="proc:figure", category="figure", pose=Pose())])
    mask = np.zeros((512, 512), dtype=np.int32)
    mask[100:300, 100:300] = 1  # bg0 (label = index + 1)
    mask[400:410, 400:430] = 2  # target: 300 px, 30x10 box
    facts, probs = common.named_facts(mask, scene, {"sheep": "target"})
    assert facts["sheep"]["pixels"] == 300 and facts["sheep"]["box"] == [30, 10]
    assert any("visible px" in p for p in probs) and any("visible box" in p for p in probs)
    mask[400:440, 400:460] = 2
    assert common.named_facts(mask, scene, {"sheep": "target"})[1] == []
    with pytest.raises(KeyError):
        common.named_facts(mask, scene, {"x": "missing"})


def test_unreadable_renders_resample_and_never_emit(env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    lib, renderer = env
    real = common.named_facts
    calls = {"n": 0}

    def planted(instance, scene, names):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        facts, probs = real(instance, scene, names)
        if calls["n"] <= 2:  # the first layouts "show" a 10 px subject
            return facts, probs + ["planted: target 10 visible px < 600"]
        return facts, probs

    monkeypatch.setattr(common, "named_facts", planted)  # render_readable (lrr.common) calls it
    ctx = TaskContext(suite="lrr", task="obj_hd", index=0, root_seed=11, library=lib, renderer=renderer,
                      out_dir=tmp_path)
    items = registry.get_task("lrr", "obj_hd").generate(ctx)
    assert calls["n"] > 2  # it drew new layouts after the planted failures
    assert all(not it.metadata["readability"].get("planted") for it in items)
    assert len(ctx.scenes) == 2  # only the accepted layout's base and Clear frames are stored

    monkeypatch.setattr(common, "named_facts", lambda i, s, n: ({}, ["planted: always unreadable"]))
    ctx = TaskContext(suite="lrr", task="obj_hd", index=1, root_seed=11, library=lib, renderer=renderer,
                      out_dir=tmp_path / "never")
    with pytest.raises(SamplingError):
        registry.get_task("lrr", "obj_hd").generate(ctx)
    assert ctx.scenes == [] and ctx.images == []


def test_obj_md_one_frame_does_not_tell_the_answer(env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The subject's facing bin in a frame is matched across each yes/no pair, and the
    negatives include heading-aligned ones (reversed, shuffled)."""
    from perspecta.world.oracle import facing_label

    lib, renderer = env
    rows = []
    for i in range(4):
        ctx = TaskContext(suite="lrr", task="obj_md", index=i, root_seed=21, library=lib, renderer=renderer,
                          out_dir=tmp_path, config={"n_distractors": 1})
        base = [it for it in registry.get_task("lrr", "obj_md").generate(ctx) if it.variant == "base"][0]
        scenes = {s.scene_id: s for s in ctx.scenes}
        first = scenes[base.metadata["scene_ids"][0]]
        label = facing_label(first.object("target"), first.camera("main"), toward_max=45.0)
        assert label in objects.HEADINGS
        rows.append((base.answer, base.metadata["facing"], label, base.metadata["negative"]))
    for k in range(2):
        assert rows[2 * k][1] == rows[2 * k + 1][1]  # same facing stratum for the yes and the no unit
        assert {rows[2 * k][0], rows[2 * k + 1][0]} == {"yes", "no"}
    assert {neg for ans, *_, neg in rows if ans == "no"} <= set(objects.MD_NEGATIVES)


def test_audit_features_leave_the_key_out() -> None:
    item = {"images": ["a.png", "b.png"], "answer": "no",
            "metadata": {"subject": "dog", "negative": "reversed", "true_heading": "away", "asked_heading": "toward",
                         "readability": {"objects": {"dog_A": {"pixels": 900, "box": [40, 30]},
                                                     "dog_B": {"pixels": 700, "box": [44, 30]}}}}}
    f = audit_features(item)
    assert f["subject"] == "dog" and f["n_images"] == 2.0
    assert f["target_pixels"] == 800.0 and f["target_box_side"] == 42.0
    assert not any("negative" in k or "heading" in k for k in f)


def test_obj_m_image_slide_is_balanced_across_forms() -> None:
    """Whether the subject slides in the picture (the glance cue) must not predict the
    answer: over whole cycles of the form stratum it slides in a third of the "yes" and a
    third of the "no" units, and points the wrong way (the misleading form) in a third."""
    slides = {True: 0, False: 0}
    wrong = 0
    n = 2 * 3 * 8  # eight cycles of the three forms, one pair per form each
    for i in range(n):
        ctx = _ctx(i, 7, task="obj_m")
        yes, form = common.wants_yes(ctx), common.stratum(ctx, "form", objects.M_FORMS)
        slid = form != "follow" and yes == (form == "truthful")
        slides[yes] += slid
        wrong += form == "misleading"
    assert slides[True] == slides[False] == n // 6
    assert wrong == n // 3


def test_obj_m_anchor_decides_who_keeps_the_pixel() -> None:
    p0, spot = np.array([0.0, 0.0, 0.4]), np.array([1.3, 0.0])
    for yes in (True, False):
        p1 = spot if yes else p0[:2]
        assert np.allclose(objects._anchor("follow", p0, spot, p1), p1)
        assert np.allclose(objects._anchor("misleading", p0, spot, p1), spot)
        assert np.allclose(objects._anchor("truthful", p0, spot, p1), p0[:2])
