"""`perspecta audit` on datasets written to disk with planted shortcuts (and without)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from perspecta.audit.core import POOLED, audit_dataset
from perspecta.audit.features import AuditInputError
from perspecta.audit.images import CACHE_FILE
from perspecta.audit.readability import summarise
from perspecta.audit.stats import share_interval
from perspecta.audit.synthetic import SUITE, hidden_key_features, planted_dataset
from perspecta.dataset.item import Item
from perspecta.suites import registry
from perspecta.suites.spec import Suite


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "perspecta.cli", *args], capture_output=True, text=True, timeout=300)


def _declare(features) -> Iterator[None]:
    """Declare ``audit_features`` for the synthetic suite in a spec, as a suite package would."""
    registry.register_suite(Suite(name=SUITE, package="perspecta.audit.synthetic", audit_features=features))
    try:
        yield
    finally:
        registry.unregister_suite(SUITE)


@pytest.fixture
def toy_suite_hook() -> Iterator[None]:
    yield from _declare(hidden_key_features)


@pytest.mark.parametrize("kind,family", [
    ("imbalance", "prior"), ("parity", "ids"), ("text", "text"), ("text_slot", "text"),
    ("identical_images", "images"), ("odd_one_out", "images"), ("suite_feature", "features"),
])
def test_each_planted_shortcut_fails_the_audit_through_its_own_predictor(
        tmp_path: Path, toy_suite_hook: None, kind: str, family: str) -> None:
    result = audit_dataset(planted_dataset(tmp_path / kind, kind, seed=11))
    assert not result.ok
    # the clean tasks stay clean (the suite's pooled cell may carry the planted task's excess)
    assert {c.task for c in result.failures if c.task != POOLED} == {"planted"}
    task_cell = next(c for c in result.cells if c.task == "planted" and c.subtype is None)
    caught = task_cell.predictors[family]
    assert caught is not None and caught.lo - task_cell.chance > result.threshold
    if family != "prior":  # the shortcut is not a mere answer imbalance
        prior = task_cell.predictors["prior"]
        assert prior is not None and prior.lo - task_cell.chance <= result.threshold
    assert task_cell.evidence  # the strongest features name what it learnt


def test_a_clean_balanced_dataset_passes_and_writes_json(tmp_path: Path) -> None:
    root = planted_dataset(tmp_path / "clean", "clean", n_units=120, seed=5)
    out = tmp_path / "audit.json"
    r = cli("audit", str(root), "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout
    data = json.loads(out.read_text())
    assert data["ok"] is True and data["failures"] == []
    judged = [c for c in data["cells"] if c["judged"]]
    assert len(judged) >= 5
    # round 6: the OK line states the power — the largest gap above chance the data cannot exclude
    gap = max(e["hi"] - c["chance"] for c in judged if not c["control"] for e in c["predictors"].values() if e)
    m = re.search(r"not ruled out: a skill-free score up to ([+-][0-9.]+) points", " ".join(r.stdout.split()))
    assert m and abs(float(m.group(1)) - 100 * gap) < 0.11, r.stdout[-600:]
    for c in data["cells"]:
        for est in c["predictors"].values():
            assert est is None or 0.0 <= est["lo"] <= est["value"] <= est["hi"] <= 1.0


def test_cli_exits_1_and_names_the_failing_task(tmp_path: Path) -> None:
    root = planted_dataset(tmp_path / "parity", "parity", seed=2)
    out = tmp_path / "audit.json"
    r = cli("audit", str(root), "--json", str(out))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAIL" in r.stdout and "toy/planted" in r.stdout
    data = json.loads(out.read_text())
    assert data["ok"] is False and "toy/planted" in data["failures"]
    assert data["worst_by_suite"][SUITE].startswith("toy/planted")


def test_same_dataset_same_json_bytes_and_image_hashes_are_cached(tmp_path: Path) -> None:
    root = planted_dataset(tmp_path / "d", "identical_images", seed=3)
    first = json.dumps(audit_dataset(root).to_dict())
    assert (root / CACHE_FILE).is_file()
    second = json.dumps(audit_dataset(root).to_dict())
    assert first == second


def test_text_only_controls_are_reported_apart_and_never_fail(tmp_path: Path) -> None:
    result = audit_dataset(planted_dataset(tmp_path / "ctl", "text", seed=4, text_only_controls=True))
    assert result.ok
    planted = [c for c in result.cells if c.task == "planted"]
    assert planted and all(c.control for c in planted)
    task_cell = next(c for c in planted if c.subtype is None)
    assert task_cell.predictors["text"] is not None
    assert task_cell.predictors["text"].lo - task_cell.chance > result.threshold  # still measured as text-solvable


def test_tiny_subtypes_are_shown_but_not_judged(tmp_path: Path) -> None:
    result = audit_dataset(planted_dataset(tmp_path / "tiny", "parity", n_units=6, seed=1))
    assert result.ok
    assert all(not c.judged for c in result.cells)
    assert any(c.task == "planted" for c in result.cells)


def test_an_audit_that_judged_nothing_is_not_reported_as_passed(tmp_path: Path) -> None:
    """A dataset too small for any verdict gets "NOT JUDGED" and exit 3, never "OK" / exit 0,
    and the report's audit section says that nothing was judged."""
    import types

    from perspecta.report.sections import audit as section

    root = planted_dataset(tmp_path / "tiny", "parity", n_units=6, seed=1)
    out = tmp_path / "audit.json"
    r = cli("audit", str(root), "--json", str(out))
    assert r.returncode == 3, r.stdout + r.stderr
    assert "NOT JUDGED" in r.stdout and "OK" not in r.stdout
    # the report's section reads only the audit JSON named by --audit
    ctx = types.SimpleNamespace(options=types.SimpleNamespace(audit=out, dataset=None), dataset=None, files=[])
    sec = section.build(ctx)  # type: ignore[arg-type]
    assert any("Nothing judged" in n for n in sec.notes)
    assert "0 judged cell(s)" in sec.blocks[0].title


def test_interval_never_collapses_on_a_perfect_small_cell() -> None:
    hits = np.ones(9, dtype=bool)
    est = share_interval(hits, np.arange(9), "k")
    assert est.value == 1.0 and est.lo < 0.75  # a percentile bootstrap alone would give [1, 1]
    big = share_interval(np.arange(400) % 2 == 0, np.arange(400), "k")
    assert 0.44 < big.lo < 0.5 < big.hi < 0.56


def test_missing_and_malformed_datasets_get_one_line_errors(tmp_path: Path) -> None:
    r = cli("audit", str(tmp_path / "nope"))
    assert r.returncode == 2 and "no such dataset directory" in r.stdout and len(r.stdout.strip().splitlines()) == 1
    root = planted_dataset(tmp_path / "bad", "clean", n_units=6)
    lines = (root / "items.jsonl").read_text().splitlines()
    (root / "items.jsonl").write_text("\n".join([lines[0], "{not json", *lines[2:]]) + "\n")
    r = cli("audit", str(root))
    assert r.returncode == 2 and "items.jsonl:2" in r.stdout and len(r.stdout.strip().splitlines()) == 1


def test_a_broken_suite_hook_names_the_item(tmp_path: Path) -> None:
    for _ in _declare(lambda item: {"x": [1, 2]}):
        with pytest.raises(AuditInputError, match=r"audit_features\['x'\] for toy/"):
            audit_dataset(planted_dataset(tmp_path / "d", "clean", n_units=4))


def test_readability_is_summarised_per_task() -> None:
    def item(i: int, pixels: int, deg: float) -> Item:
        return Item(id=f"s/t/base/{i:06d}", suite="s", task="t", question="<image>", images=["images/x.png"],
                    answer_type="yesno", answer="yes",
                    metadata={"readability": {"objects": {"a": {"pixels": pixels, "box": [10, 4 + i],
                                                                "marker_cover": 0.1 * i}},
                                              "bin_margin": {"deg": deg, "bin_width": 45.0},
                                              "winner_margin": {"value": 2.0 * (i + 1), "min": 2.0, "unit": "m"}}})
    summary = summarise([item(0, 900, 3.0), item(1, 100, 9.0), item(2, 400, 20.0)])
    q = summary["s/t"]["quantities"]
    assert summary["s/t"]["items"] == 3
    assert q["object_pixels"] == {"n": 3, "min": 100.0, "median": 400.0, "max": 900.0}
    assert q["object_box_min_side"]["min"] == 4.0
    assert q["bin_margin_share"]["min"] == pytest.approx(3.0 / 45.0, abs=1e-4)
    assert q["winner_margin_ratio"]["median"] == 2.0


def test_a_suite_can_choose_the_metadata_fields_the_generic_features_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # text_slot names the first-mentioned object as metadata "category", and it is never the answer
    root = planted_dataset(tmp_path / "slot", "text_slot", seed=3)

    def features_score() -> float:
        cell = next(c for c in audit_dataset(root).cells if c.task == "planted" and c.subtype is None)
        return cell.predictors["features"].value  # type: ignore[union-attr]

    default = features_score()
    registry.register_suite(Suite(name=SUITE, package="perspecta.audit.synthetic", audit_metadata_keys=()))
    try:
        assert features_score() < default - 0.15
    finally:
        registry.unregister_suite(SUITE)


def _with_note(items: list[Item], share: float, seed: int) -> list[Item]:
    """A note naming the answer appended to ``share`` of the questions, in every task."""
    import copy
    import random

    rng = random.Random(seed)
    out = []
    for it in items:
        it = copy.deepcopy(it)
        if rng.random() < share:
            it.question = f"{it.question} Note: {it.option(it.answer).text if it.options else it.answer}."
        out.append(it)
    return out


def test_the_suite_pooled_cell_sees_a_cue_spread_over_its_tasks_and_passes_a_clean_suite(tmp_path: Path) -> None:
    """A cue on a share of every task's items lifts each task a little; the suite's pooled
    cell (each task's out-of-fold hits minus chance, averaged) fails where the excess is
    real, and stays inside the threshold on a clean suite."""
    from perspecta.audit.core import audit_items
    from perspecta.audit.images import FingerprintStore
    from perspecta.run.dataset import load_dataset

    root = planted_dataset(tmp_path / "spread", "clean", n_units=80, seed=0)
    ds = load_dataset(root)
    store = FingerprintStore(root, ds.manifest.get("checksums"))
    for share, fails in ((0.0, False), (0.45, True)):
        result = audit_items(_with_note(ds.items, share, 0), store)
        pooled = [c for c in result.cells if c.task == POOLED]
        assert len(pooled) == 1 and pooled[0].judged and pooled[0].n == len(ds.items)
        assert pooled[0].fail is fails, (share, pooled[0].to_dict())
        if fails:
            assert pooled[0].worst == "text"
