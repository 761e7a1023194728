"""Numbers-integrity checks: every printed figure keeps every record asked, once."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from perspecta.cli_eval import app
from perspecta.report.aggregate import aggregate
from perspecta.report.summary import summarize_run
from perspecta.suites import registry


def _report_context(path: Path, out: Path):  # type: ignore[no-untyped-def]
    """The report's Context over one results file (every run a model run), as `perspecta
    report` builds it, for a section builder under test."""
    from perspecta.report.context import Context, ReportOptions

    agg = aggregate([path], set(registry.suites()))
    states = list(agg.runs.values())
    return Context(agg=agg, runs=[summarize_run(s) for s in states], states=states, human=[],
                   options=ReportOptions(), out=out, files=[path])


def _spin(item: int, variant: str, status: str, correct: bool | None) -> dict:
    group = f"spin/dynamic_translation/base/{item:06d}"
    return {"item_id": f"{group}/{variant}", "suite": "spin", "task": "dynamic_translation",
            "subtype": "translation_left_right", "model": "m", "answer": "A", "status": status,
            "prediction": "A" if correct else ("B" if status == "ok" else None), "correct": correct,
            "group": group, "variant": variant, "n_options": 2, "answer_type": "mcq", "dataset": "d"}


def test_resumed_spin_variant_is_counted_once_by_score_and_report(tmp_path: Path) -> None:
    """A resumed run re-asks a failed SpinBench variant: its group then holds that variant on two
    lines until the older one is dropped. score and report must read the later line, not refuse
    the log ("two records of variant") and not count both."""
    lines = [_spin(1, "base", "failed", None), _spin(1, "symmetric", "ok", True),
             _spin(2, "base", "ok", False), _spin(2, "symmetric", "ok", False),
             _spin(1, "base", "ok", True)]  # the re-asked variant, appended by the resumed run
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    registry.load_builtin_suites()
    (st,) = aggregate([path], set(registry.suites())).runs.values()
    run = summarize_run(st)
    assert (run["n"], run["correct"], run["failed"]) == (4, 2, 0)
    cons = run["suite_metrics"]["spin"]["consistency"]
    assert cons["n_groups"] == 2 and cons["n_records"] == 4 and cons["failed"] == 0
    assert cons["consistency"] == 1.0  # group 1: C, C; group 2: W, W
    result = CliRunner().invoke(app, ["score", str(path), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "s.json").read_text())["runs"][0]["n"] == 4


def test_finetune_transfer_pool_counts_every_item_asked() -> None:
    """The transfer table pools tasks over every record asked (failed counts wrong), from the
    tasks' correct counts — not accuracy x answered / answered, which mixed the two denominators."""
    from perspecta.report.sections.finetune import _pool

    run = {"by_task": {
        "dori/a": {"n": 10, "answered": 5, "correct": 5, "accuracy": 0.5},  # 5 failed requests
        "dori/b": {"n": 10, "answered": 10, "correct": 5, "accuracy": 0.5},
    }}
    pooled = _pool(run, ["dori/a", "dori/b"])
    assert pooled["n"] == 20 and pooled["accuracy"] == 10 / 20
    lo, hi = pooled["ci95"]
    assert lo < 0.5 < hi and hi - lo > 0.3  # an interval for n = 20, not for the 15 answered


def test_interval_of_a_perfect_small_cell_is_not_zero_width() -> None:
    """3 right of 3 is not certainty: the 95% interval must leave room below 100%."""
    from perspecta.report.summary import binomial_ci

    lo, hi = binomial_ci(3, 3)
    assert hi == 1.0 and 0.40 < lo < 0.45  # Wilson: 0.439
    lo, hi = binomial_ci(0, 3)
    assert lo == 0.0 and 0.55 < hi < 0.60
    lo, hi = binomial_ci(200, 400)  # the interior is still the bootstrap's ~±4.9 pp
    assert abs(lo - 0.451) < 0.01 and abs(hi - 0.549) < 0.01


def test_pcsr_relaxed_match_does_not_credit_denials_or_hedges() -> None:
    """PCSR's relaxed reading finds the gold inside a phrase; it must not credit a reply that
    denies, hedges, declines or asks ("It is not the chair"), while keeping its real leniency."""
    from perspecta.suites.pcsr.scoring import score_response

    md = {"candidates": ["chair", "table", "lamp"], "answer_aliases": []}
    for reply in ("It is not the chair.", "not the chair", "Maybe the chair?",
                  "I cannot tell whether it is the chair.", "Perhaps the chair"):
        assert score_response(reply, "chair", md, "open") == {"strict": 0.0, "relaxed": 0.0}, reply
    for reply in ("the office chair", "chair 2", "It is the chair."):
        assert score_response(reply, "chair", md, "open")["relaxed"] == 1.0, reply
    mcq = {"options": {"A": "left", "B": "right"}}
    assert score_response("Not left", "A", mcq, "mcq")["relaxed"] == 0.0
    assert score_response("On your left", "A", mcq, "mcq")["relaxed"] == 1.0


def test_heatmap_kappa_of_a_mixed_subtype_compares_options_with_their_chance(tmp_path: Path, monkeypatch) -> None:
    """A PCSR subtype mixes open answers (no chance rate) with 4-option items. A model exactly at
    chance on the options (1 of 4 right) and 0 of 4 on the open items has κ = 0 on the options;
    all-record accuracy (1/8) against the options' chance (1/4) read it as κ = −0.17."""
    from perspecta.report import figures
    from perspecta.report.sections.overview import heatmaps

    registry.load_builtin_suites()
    lines = []
    for i in range(8):
        mcq = i < 4
        lines.append({"item_id": f"pcsr/counting/base/{i:06d}", "suite": "pcsr", "task": "counting",
                      "subtype": "count", "model": "m", "answer": "A" if mcq else "3", "status": "ok",
                      "prediction": "A" if i == 0 else "B" if mcq else "2", "correct": i == 0,
                      "answer_type": "mcq" if mcq else "open", "n_options": 4 if mcq else 0,
                      "scores": {"strict": float(i == 0), "relaxed": float(i == 0)}, "dataset": "d"})
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    ctx = _report_context(path, tmp_path)
    seen = {}
    monkeypatch.setattr(figures, "heatmap", lambda data, rows, cols, title, out, **kw: seen.__setitem__(title, data))
    heatmaps(ctx)
    (kappa,) = [v for k, v in seen.items() if "κ" in k]
    assert abs(float(kappa[0, 0])) < 1e-9


def test_items_an_interrupted_run_never_recorded_count_as_failed(tmp_path: Path) -> None:
    """A run file says what was asked; items without a record are failed in score and report,
    not dropped (an interrupted run read as accurate over the half it finished)."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset
    from perspecta.report.build import build_report
    from perspecta.run import evaluate

    ds = tmp_path / "ds"
    generate_dataset(ds, GenerationConfig(suites=["spin"], n=4, seed=3, tasks=["spin/mental_rotation"]))
    out = tmp_path / "res"
    evaluate(ds, "baseline:oracle", out, progress=False)
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) >= 4
    kept = len(lines) // 2
    (out / "results.jsonl").write_text("\n".join(lines[:kept]) + "\n")  # the run was killed halfway
    result = CliRunner().invoke(app, ["score", str(out), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    (run,) = json.loads((tmp_path / "s.json").read_text())["runs"]
    assert (run["n"], run["failed"], run["missing"], run["correct"]) == (len(lines), len(lines) - kept,
                                                                          len(lines) - kept, kept)
    assert "have no record" in " ".join(result.output.split())
    assert "open answers have none" in " ".join(result.output.split())  # what "chance %" covers
    report = build_report([out], tmp_path / "rep")
    board = (report.out / "tables" / "leaderboard.md").read_text()
    assert f"| {len(lines)} |" in board and "have no record" in (report.out / "report.md").read_text()


def test_cross_model_figures_leave_the_baselines_out(tmp_path: Path) -> None:
    """'mean ± SD over runs' of SpinBench consistency is a figure about models: the oracle's 100%
    must not be averaged in (it would read 50.0 ± 50.0 here instead of 25.0 ± 35.4)."""
    from perspecta.report.build import build_report
    from perspecta.report.context import ReportOptions

    outcomes = {"baseline:oracle": [(True, True), (True, True)], "openai:a": [(True, False), (True, False)],
                "openai:b": [(True, True), (False, True)]}
    lines = []
    for model, groups in outcomes.items():
        for g, pair in enumerate(groups):
            for variant, ok in zip(("base", "symmetric"), pair):
                lines.append(_spin(g, variant, "ok", ok) | {"model": model})
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    report = build_report([path], tmp_path / "rep", ReportOptions(examples=0))
    table = (report.out / "tables" / "spin-augmentation.md").read_text()
    assert "| baseline:oracle | 100.0 |" in table  # still shown as a run
    assert "| mean ± SD over model runs (baselines left out) | 25.0 ± 35.4 |" in table


def test_dori_systematic_errors_count_models_not_baselines_and_one_repeat_has_no_sd() -> None:
    """Table 10 needs a confusion in >= 3 distinct *models*: two models and the chance baseline
    sharing one is not systematic. Table 11 with one repeat shows no '± 0.0' spread."""
    from perspecta.report.context import Context, ReportOptions, Section
    from perspecta.suites.dori.accumulate import DoriMetrics
    from perspecta.suites.dori.report import _error_patterns

    pair = {"true": "Facing left", "predicted": "Facing right", "frequent": True, "patterns": ["directional_reversal"]}
    ep = {"error_patterns": {"by_type": {"directional_facing_coarse": {"n_errors": 5, "pairs": [pair]}},
                             "n_errors": 5, "pattern_share": {}, "unparsed": 0, "failed": 0}}
    runs = [{"model": m, "prompt_mode": "direct", "dataset": "d", "suite_metrics": {"dori": {"error_patterns": ep}}}
            for m in ("baseline:chance", "openai:a", "openai:b")]
    ctx = Context(agg=None, runs=runs, states=[], human=[], options=ReportOptions(), out=Path("."), files=[])  # type: ignore[arg-type]
    sec = Section("dori", "DORI", "")
    from perspecta.suites.dori import scoring as dori_scoring

    for p in dori_scoring.PATTERNS:
        ep["error_patterns"]["pattern_share"][p] = 0.0
    _error_patterns(ctx, sec, [(r, None) for r in runs])
    t10 = next(b for b in sec.blocks if getattr(b, "slug", "") == "dori-systematic-errors")
    assert t10.rows == []  # only two models share the confusion

    m = DoriMetrics()
    m.compound[0] = [4, 1, 2, 3, 1, 0, 0]
    assert all(sd is None for _, sd in m.compound_by_repeat().values())


def test_identical_repeats_do_not_narrow_the_interval() -> None:
    """Three repeats of a deterministic model are one answer per item three times: the 95%
    interval must be that of the items, not of 3x as many independent records."""
    from perspecta.score.metrics import accuracy_block
    from perspecta.score.records import ScoredRecord

    def recs(repeat: int) -> list[ScoredRecord]:
        return [ScoredRecord(item_id=f"zz/t/base/{i:06d}", suite="zz", task="t", model="m", answer="A",
                             status="ok", prediction="A" if i < 17 else "B", correct=i < 17, n_options=4,
                             repeat=repeat) for i in range(43)]

    once = accuracy_block(recs(0))
    thrice = accuracy_block(recs(0) + recs(1) + recs(2))
    assert thrice["n"] == 129 and thrice["n_items"] == 43 and thrice["accuracy"] == once["accuracy"]
    assert thrice["ci95"] == once["ci95"]  # was ~[31.0, 48.2] against [25.6, 54.4] for the same answers


def test_summary_json_is_strict_json_with_undefined_figures_as_null(tmp_path: Path) -> None:
    """Cohen's κ is undefined when every gold and predicted label is one label (chance agreement
    1): summary.json says null, not Python's NaN token, which strict JSON readers reject."""
    lines = [_spin(i, "base", "ok", True) for i in range(3)]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    result = CliRunner().invoke(app, ["score", str(path), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output

    def refuse(token: str) -> None:
        raise ValueError(f"non-JSON token {token}")

    summary = json.loads((tmp_path / "s.json").read_text(), parse_constant=refuse)
    spin = summary["runs"][0]["suite_metrics"]["spin"]["kappa"]
    assert spin["cohen_kappa"]["translation_left_right"] is None and spin["accuracy"]["translation_left_right"] == 1.0
    assert "NaN" not in result.output


def test_lrr_and_pcsr_task_tables_show_n_asked_with_failures(tmp_path: Path) -> None:
    """Every percentage table carries its n: LRR's and PCSR's per-task tables had none, so a run
    with failed requests read the same as a complete one."""
    from perspecta.report.build import build_report
    from perspecta.report.context import ReportOptions

    lines = []
    for i in range(4):
        failed = i == 3
        lines.append({"item_id": f"lrr/pos/base/{i:06d}", "suite": "lrr", "task": "pos", "model": "m",
                      "answer": "yes", "status": "failed" if failed else "ok", "prediction": None if failed else "yes",
                      "correct": None if failed else True, "response": None if failed else "Yes.",
                      "answer_type": "yesno", "dataset": "d"})
        lines.append({"item_id": f"pcsr/counting/base/{i:06d}", "suite": "pcsr", "task": "counting", "model": "m",
                      "answer": "3", "status": "unparsed" if i == 0 else "ok", "prediction": None if i == 0 else "3",
                      "correct": i != 0, "response": "hmm" if i == 0 else "3", "answer_type": "open",
                      "scores": {"strict": float(i != 0), "relaxed": float(i != 0)}, "dataset": "d"})
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    report = build_report([path], tmp_path / "rep", ReportOptions(examples=0))
    lrr = (report.out / "tables" / "lrr-tasks.md").read_text()
    pcsr = (report.out / "tables" / "pcsr-tasks.md").read_text()
    assert "n asked" in lrr and "| m | 4 (1 failed) | 75.0 (50.0) |" in lrr
    assert "n asked" in pcsr and "| m | 4 (1 unparsed) |" in pcsr


def test_images_sent_reports_the_size_load_image_produces(tmp_path: Path) -> None:
    """The run file's images_sent (the report's Runs table) must be what the backend sent: with
    depth beside the image the image is downscaled first and then doubled in width, so 512x512
    at --image-max-side 256 is sent as 512x256 (it was reported as 256x128)."""
    import numpy as np
    from PIL import Image

    from perspecta.dataset.item import Item, letter_options
    from perspecta.models.base import InputSettings
    from perspecta.models.images import load_image
    from perspecta.run.dataset import EvalDataset
    from perspecta.run.runner import EvalConfig, _images_sent

    (tmp_path / "images").mkdir()
    Image.new("RGB", (512, 384), (10, 20, 30)).save(tmp_path / "images" / "a.png")
    np.save(tmp_path / "images" / "a_depth.npy", np.full((384, 512), 2.0))
    item = Item(id="spin/t/base/000000", suite="spin", task="t", question="<image>\\nQ?\\nA. x\\nB. y",
                images=["images/a.png"], answer_type="mcq", options=letter_options(["x", "y"]), answer="A")
    ds = EvalDataset(root=tmp_path, items=[item], manifest={})
    for settings in (InputSettings(max_side=256, depth=True), InputSettings(max_side=256),
                     InputSettings(max_side=None, depth=True)):
        cfg = EvalConfig(inputs=settings, progress=False)
        sent = load_image(tmp_path / "images" / "a.png", settings)
        assert _images_sent([item], ds, cfg)["spin"]["sizes"] == [f"{sent.width}x{sent.height}"], settings


def test_score_of_an_empty_log_is_an_error_like_report(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("")
    result = CliRunner().invoke(app, ["score", str(tmp_path), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 2 and "no scored records" in result.output
    assert not (tmp_path / "s.json").exists()


def test_pcsr_strict_and_relaxed_do_not_credit_an_estimate_or_bound_as_a_count() -> None:
    """Round 6: normalisation dropped the "+" of "3+" and the "~" of "~3" (strict matches for 3),
    and the relaxed substring read the 3 inside "about 3" / "at most 3"; the harness grammar reads
    none of these as a count. The GRPO accuracy reward (the relaxed matcher) must not pay them."""
    from perspecta.suites.pcsr.rewards import accuracy_reward
    from perspecta.suites.pcsr.scoring import score_response

    md = {"candidates": [str(i) for i in range(11)]}
    for reply in ("3+", "~3", ">3", "≈3", "3?", "<answer>3+</answer>", "about 3", "roughly three",
                  "at most 3", "over 3", "3 or more", "3 or so", "up to 3", "around 3 chairs"):
        assert score_response(reply, "3", md, "open") == {"strict": 0.0, "relaxed": 0.0}, reply
    for reply in ("3", "<answer>3</answer>", "three", "3 chairs", "There are 3 chairs."):
        assert score_response(reply, "3", md, "open")["relaxed"] == 1.0, reply
    assert score_response("3", "3", md, "open")["strict"] == 1.0
    names = {"candidates": ["chair", "table"]}
    for reply in ("chair?", "<answer>chair?</answer>", "Chair ?"):
        assert score_response(reply, "chair", names, "open") == {"strict": 0.0, "relaxed": 0.0}, reply
    assert score_response("chair", "chair", names, "open")["strict"] == 1.0
    rewards = accuracy_reward(["<think>x</think><answer>3+</answer>", "<think>x</think><answer>3</answer>"],
                              answer=["3", "3"], answer_type=["open", "open"])
    assert rewards == [0.0, 1.0]


def test_one_annotator_shows_no_sd(tmp_path: Path) -> None:
    """Round 6: the leaderboard's Human row and the human section printed "50.0 ± 0.0" for a single
    annotator — a spread no one measured. With one annotator the SD is absent; with two it is shown."""
    from perspecta.report.context import Context, ReportOptions
    from perspecta.report.sections import human as human_section
    from perspecta.report.sections.overview import leaderboard

    registry.load_builtin_suites()

    def rec(model: str, i: int, correct: bool) -> dict:
        return {"item_id": f"lrr/position/base/{i:06d}", "suite": "lrr", "task": "position", "subtype": "left_right",
                "model": model, "answer": "yes", "status": "ok", "prediction": "yes" if correct else "no",
                "correct": correct, "answer_type": "yesno", "n_options": 0, "latency_s": 2.0, "dataset": "d"}

    def rows_for(annotators: dict[str, list[bool]]):
        lines = [rec("m", i, True) for i in range(2)]
        lines += [rec(f"human:{a}", i, c) for a, cs in annotators.items() for i, c in enumerate(cs)]
        path = tmp_path / "results.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in lines))
        agg = aggregate([path], set(registry.suites()))
        models = [s for s in agg.runs.values() if not s.is_human]
        ctx = Context(agg=agg, runs=[summarize_run(s) for s in models], states=models,
                      human=[s for s in agg.runs.values() if s.is_human], options=ReportOptions(), out=tmp_path,
                      files=[path])
        (board,) = [b for b in leaderboard(ctx).blocks if b.slug == "leaderboard"]
        human_row = [r for r in board.rows if r[0].startswith("Human")][0]
        (sub_table,) = [b for b in human_section.build(ctx).blocks if b.slug == "human-subtypes"]
        return human_row, sub_table.rows[0]

    row, sub = rows_for({"ann1": [True, False]})
    assert "±" not in " ".join(row) and row[3] == "50.0" and sub[2] == "50.0", (row, sub)
    row, sub = rows_for({"ann1": [True, False], "ann2": [True, True]})
    assert row[3] == "75.0 ± 35.4 (SD)" and sub[2] == "75.0 ± 35.4", (row, sub)


def test_psychometric_curves_count_items_not_repeats(tmp_path: Path) -> None:
    """Round 6: with --repeats R the curves' Wilson intervals and the slope's likelihood-ratio test
    took the R copies of a temperature-0 answer as R x more evidence. 4 items per knob value with
    1,2,2,3,3 right are flat (LR p = 0.11); the same answers repeated 6 times read "≥ 75% above 3.58"
    (p = 1e-4). Taken at the items, 6 repeats read as 1 does."""
    from perspecta.report.sections import curves

    registry.load_builtin_suites()
    right = {0.0: 1, 1.0: 2, 2.0: 2, 3.0: 3, 4.0: 3}

    def rows(repeats: int) -> list[str]:
        lines = []
        for rep in range(repeats):
            for x, k in right.items():
                for j in range(4):
                    ok = j < k
                    lines.append({"item_id": f"spin/mental_rotation/base/{int(x)}{j}", "suite": "spin",
                                  "task": "mental_rotation", "model": "m", "answer": "A", "status": "ok",
                                  "prediction": "A" if ok else "B", "correct": ok, "n_options": 4,
                                  "answer_type": "mcq", "repeat": rep, "dataset": "d",
                                  "metadata": {"knobs": {"gap": x}}})
        path = tmp_path / f"r{repeats}.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in lines))
        ctx = _report_context(path, tmp_path)
        (table,) = [b for b in curves.build(ctx).blocks if hasattr(b, "rows")]
        return table.rows[0]

    one, six = rows(1), rows(6)
    assert one[-1] == "flat" and six[-1] == "flat", (one, six)
    assert six[1].startswith(one[1].split(" (n=")[0]) and "n=4 × 6 repeats" in six[1], (one[1], six[1])


def test_report_refuses_to_mix_one_model_evaluated_two_ways(tmp_path: Path) -> None:
    """Round 6: `perspecta report A B` where B re-evaluated some of A's items with other settings
    (e.g. --image-max-side 256 --limit 1) let B's records silently replace A's: one row mixing two
    evaluations, its Runs entry describing only B. Now refused, naming both files; a copied folder
    (the same requests) and a resumed run within one log still read as before."""
    import pytest

    from perspecta.report.load import ReportInputError

    registry.load_builtin_suites()

    def rec(i: int, key: str, correct: bool) -> dict:
        return {"item_id": f"lrr/pos/base/{i:06d}", "suite": "lrr", "task": "pos", "model": "openai:m",
                "answer": "yes", "status": "ok", "prediction": "yes" if correct else "no", "correct": correct,
                "answer_type": "yesno", "dataset": "d", "request_key": key}

    def write(name: str, lines: list[dict]) -> Path:
        path = tmp_path / name / "results.jsonl"
        path.parent.mkdir()
        path.write_text("".join(json.dumps(d) + "\n" for d in lines))
        return path

    native = write("native", [rec(i, f"native{i}", i % 2 == 0) for i in range(4)])
    small = write("small", [rec(0, "small0", False)])  # item 0 again, at another image size
    with pytest.raises(ReportInputError, match="is in both"):
        aggregate([native, small], set(registry.suites()))
    copy = write("copy", [rec(0, "native0", True)])  # the same request: a copied folder
    (st,) = aggregate([native, copy], set(registry.suites())).runs.values()
    assert (summarize_run(st)["n"], summarize_run(st)["correct"]) == (4, 2)
    resumed = write("resumed", [rec(0, "r0", False), rec(1, "r1", True), rec(0, "r0b", True)])
    (st,) = aggregate([resumed], set(registry.suites())).runs.values()
    assert (summarize_run(st)["n"], summarize_run(st)["correct"]) == (2, 2)


def test_missing_items_of_one_suite_are_not_hidden_by_another_suites_records(tmp_path: Path) -> None:
    """Round 6: `eval --suite spin` (complete), then `eval --suite lrr` into the same folder killed
    before its last record. The run file asks lrr's items; the check compared every record of the
    run (spin's too) with that count, found enough, and lrr read 1 of 1 instead of 1 of 2."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset
    from perspecta.run import evaluate

    ds = tmp_path / "ds"
    generate_dataset(ds, GenerationConfig(suites=["spin", "lrr"], n=2, seed=3,
                                          tasks=["spin/mental_rotation", "lrr/pos"]))
    out = tmp_path / "res"
    evaluate(ds, "baseline:oracle", out, progress=False, suites=["spin"])
    evaluate(ds, "baseline:oracle", out, progress=False, suites=["lrr"])
    lines = (out / "results.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["suite"] == "lrr"
    (out / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n")  # the lrr run was killed
    result = CliRunner().invoke(app, ["score", str(out), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    (run,) = json.loads((tmp_path / "s.json").read_text())["runs"]
    lrr = run["by_suite"]["lrr"]
    assert (lrr["n"], lrr["failed"], run["missing"]) == (2, 1, 1), (lrr, run["missing"])


def test_a_prompt_mode_killed_before_its_first_record_is_shown_failed(tmp_path: Path) -> None:
    """Round 6: `eval --prompt-mode direct --prompt-mode cot` killed before any cot record: the cot
    run vanished from score and report (no row, no note) although its run file asked it."""
    from perspecta.dataset.generate import GenerationConfig, generate_dataset
    from perspecta.run import evaluate

    ds = tmp_path / "ds"
    generate_dataset(ds, GenerationConfig(suites=["lrr"], n=2, seed=3, tasks=["lrr/pos"]))
    out = tmp_path / "res"
    evaluate(ds, "baseline:oracle", out, progress=False, prompt_modes=["direct", "cot"])
    lines = [ln for ln in (out / "results.jsonl").read_text().splitlines() if json.loads(ln)["prompt_mode"] != "cot"]
    (out / "results.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["score", str(out), "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    runs = {r["prompt_mode"]: r for r in json.loads((tmp_path / "s.json").read_text())["runs"]}
    assert set(runs) == {"direct", "cot"}, runs.keys()
    assert (runs["cot"]["n"], runs["cot"]["failed"], runs["cot"]["missing"]) == (len(lines),) * 3


def test_mode_deltas_compare_modes_on_one_dataset(tmp_path: Path) -> None:
    """Round 6: LRR's direct-vs-reasoning table (and SpinBench's CoT Δ) keyed runs by model alone, so a
    model's direct run on one dataset was the baseline of its cot run on another (other items)."""
    from perspecta.suites.lrr import report as lrr_report

    registry.load_builtin_suites()
    lines = []
    for ds, mode, correct in (("d1", "direct", True), ("d2", "cot", False)):
        for i in range(4):
            lines.append({"item_id": f"lrr/pos/base/{i:06d}", "suite": "lrr", "task": "pos", "model": "m",
                          "answer": "yes", "status": "ok", "prediction": "yes" if correct else "no",
                          "correct": correct, "answer_type": "yesno", "prompt_mode": mode, "dataset": ds})
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    ctx = _report_context(path, tmp_path)
    sec = lrr_report.build(ctx)
    assert not [b for b in sec.blocks if getattr(b, "slug", "") == "lrr-modes"], "a Δ across two datasets"


def test_pcsr_avg_column_is_relaxed_and_strict_like_its_cells(tmp_path: Path) -> None:
    """Round 6: every PCSR cell reads "relaxed (strict)" but Avg showed the relaxed mean alone."""
    from perspecta.suites.pcsr import report as pcsr_report

    registry.load_builtin_suites()
    lines = [{"item_id": f"pcsr/counting/base/{i:06d}", "suite": "pcsr", "task": "counting", "subtype": "count",
              "model": "m", "answer": "3", "status": "ok", "prediction": "3", "correct": i == 0,
              "answer_type": "open", "dataset": "d", "scores": {"strict": float(i == 0), "relaxed": 1.0}}
             for i in range(2)]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    ctx = _report_context(path, tmp_path)
    (table,) = [b for b in pcsr_report.build(ctx).blocks if getattr(b, "slug", "") == "pcsr-tasks"]
    row = dict(zip(table.columns, table.rows[0]))
    assert row["Avg"] == "100.0 (50.0)", row


def test_finetune_pairs_base_and_tuned_on_one_dataset(tmp_path: Path) -> None:
    """Round 6: base and tuned runs were paired by (model, mode) alone, so a tuned model evaluated on
    one dataset was compared (Δ) with its base evaluated on another whenever the item counts matched."""
    from perspecta.report.sections import finetune

    registry.load_builtin_suites()
    lines = []
    for model, ds, correct in (("hf:tuned", "d1", True), ("hf:base", "d2", False)):
        for i in range(4):
            lines.append({"item_id": f"lrr/pos/base/{i:06d}", "suite": "lrr", "task": "pos", "model": model,
                          "answer": "yes", "status": "ok", "prediction": "yes" if correct else "no",
                          "correct": correct, "answer_type": "yesno", "dataset": ds})
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    (tmp_path / "run-hf_tuned.json").write_text(json.dumps({
        "model": "hf:tuned", "dataset_fingerprint": "d1", "config": {"split": "test"},
        "backend": {"adapter": "/x/tuned", "base_model": "base", "training": {"kind": "sft", "dataset": {}}}}))
    (tmp_path / "run-hf_base.json").write_text(json.dumps({"model": "hf:base", "dataset_fingerprint": "d2",
                                                           "backend": {"path": "base"}}))
    ctx = _report_context(path, tmp_path)
    sec = finetune.build(ctx)
    tables = [b for b in sec.blocks if hasattr(b, "rows")]
    assert not any(row[0] == "Δ (pp)" for t in tables for row in t.rows), "Δ between two datasets"
    (transfer,) = [t for t in tables if t.slug == "finetune-transfer"]
    assert all(row[6] == "—" and row[8] == "—" for row in transfer.rows), transfer.rows
    assert any("no direct run on the same dataset" in n for n in sec.notes), sec.notes


def test_a_person_typing_a_question_is_not_credited() -> None:
    """Round 6: a model's "5?" is unparsed (wrong); the human app normalised a person's typed "5?" to
    "5" and credited it. "Correct" must mean the same for both."""
    from perspecta.dataset.item import Item
    from perspecta.human.answers import score_human
    from perspecta.score.scoring import score_response

    registry.load_builtin_suites()
    item = Item(id="pcsr/counting/base/000000-open", suite="pcsr", task="counting", question="<image>\nHow many?",
                images=["a.png"], answer_type="open", answer="5",
                metadata={"candidates": [str(i) for i in range(11)]})
    for typed in ("5?", " 5 ? "):
        assert score_response(item, model="m", response=typed).status == "unparsed"
        assert score_human(item, "ann", typed, 1.0).correct is False, typed
    assert score_human(item, "ann", "5", 1.0).correct is True
    assert score_human(item, "ann", "five", 1.0).correct is True
