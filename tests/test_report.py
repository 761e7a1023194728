"""``perspecta report`` on real generated data and real baseline evaluations.

One session fixture generates a small dataset of all four suites (a few tasks each, so
it stays fast), evaluates three baselines plus chance with 2 repeats in two prompt
modes, and writes human-annotator records; the tests build reports from them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perspecta.audit import AUDIT_FILE
from perspecta.audit.core import audit_dataset
from perspecta.cli import app
from perspecta.dataset.io import write_json_atomic
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.cli_eval import summary_json
from perspecta.report.aggregate import aggregate
from perspecta.report.build import build_report
from perspecta.report.context import Context, ReportOptions, parse_size
from perspecta.report.summary import summarize_run
from perspecta.run import evaluate
from perspecta.score.metrics import read_records, summarize
from perspecta.suites import registry

TASKS = ["dori/view_parallelism", "dori/compound_rotation", "spin/relation_grounding", "spin/relation_transformation",
         "spin/dynamic_rotation", "pcsr/counting", "lrr/pos", "lrr/dep", "lrr/pos_s"]
SIZES = ["--model-size", "baseline:chance=1B", "--model-size", "baseline:prior=3B", "--model-size",
         "baseline:oracle=7B", "--family", "baseline:chance=base", "--family", "baseline:prior=base",
         "--family", "baseline:oracle=base"]


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report")
    ds = root / "ds"
    generate_dataset(ds, GenerationConfig(suites=["dori", "spin", "pcsr", "lrr"], n=2, seed=0, tasks=TASKS))
    write_json_atomic(ds / AUDIT_FILE, audit_dataset(ds).to_dict())  # as `perspecta run` does
    res = root / "res"
    for model in ("baseline:oracle", "baseline:prior"):
        evaluate(ds, model, res, progress=False)
    # the same settings twice: the second call resumes and, with nothing failed (chance now answers
    # open items from their candidates), asks nothing again; a call with other sampling settings
    # would be refused, not mixed in (re-asking failed requests: tests/test_run_runner.py)
    for _ in range(2):
        evaluate(ds, "baseline:chance", res, progress=False, repeats=2, prompt_modes=["direct", "cot"])
    human = root / "human"
    human.mkdir()
    lines = []
    for k, (model, ann) in enumerate((("baseline:oracle", "human:a1"), ("baseline:prior", "human:a2"))):
        for r in read_records(res):
            if r.model == model and r.prompt_mode == "direct" and r.repeat == 0:
                d = r.to_dict() | {"model": ann}
                d["latency_s"] = None if len(lines) % 17 == 0 else 2.0 + (len(r.subtype) % 7) + k
                lines.append(json.dumps(d))
    (human / "results.jsonl").write_text("\n".join(lines) + "\n")
    # three "model" runs (the baselines' answers under model names): cross-model figures (the human
    # RT correlation, SpinBench's Pearson r) are over models and leave baseline:* runs out
    models = root / "models"
    models.mkdir()
    renamed = {"baseline:oracle": "openai:vlm-c", "baseline:prior": "openai:vlm-b", "baseline:chance": "openai:vlm-a"}
    (models / "results.jsonl").write_text("".join(
        json.dumps(r.to_dict() | {"model": renamed[r.model]}) + "\n" for r in read_records(res)
        if r.prompt_mode == "direct" and r.repeat == 0))
    return {"root": root, "ds": ds, "res": res, "human": human, "models": models}


@pytest.fixture(scope="session")
def report(data) -> Path:
    out = data["root"] / "report"
    result = CliRunner().invoke(app, ["report", str(data["res"]), str(data["human"]), str(data["models"]),
                                      "--out", str(out), "--examples", "1", *SIZES])
    assert result.exit_code == 0, result.output
    return out


def test_every_section_with_data_renders(report: Path) -> None:
    html = (report / "index.html").read_text()
    md = (report / "report.md").read_text()
    for title in ("Leaderboard", "Subtype heatmaps", "DORI", "SpinBench", "PCSR-Bench", "LRR-Bench", "Human baselines",
                  "Shortcut audit", "Example gallery"):
        assert title in html and title in md
    # every section renders except fine-tuning (no run here comes from `perspecta train`) and the
    # psychometric curves (no --sweep: each knob keeps its preset's one value; tests/test_report_curves.py)
    assert html.count("Section omitted") == 2 and "Section omitted: no fine-tuned runs" in html
    assert "Section omitted: no task&#39;s records span a difficulty knob" in html
    assert "Human (2 annotators)" in html
    for fig in ("heatmap-kappa-spin", "heatmap-accuracy-pcsr", "dori-error-bars", "dori-n-options",
                "spin-accuracy-vs-consistency", "spin-patterns", "spin-augmentation", "spin-scaling", "lrr-radar",
                "human-rt-vs-model-accuracy"):
        assert (report / "figures" / f"{fig}.png").stat().st_size > 1000, fig
    for table in ("leaderboard", "dori-tasks", "dori-systematic-errors", "dori-compound", "dori-by-category",
                  "spin-cot-delta", "spin-frames", "spin-premise", "pcsr-tasks", "pcsr-formats", "lrr-tasks",
                  "lrr-modes", "human-subtypes", "audit"):
        assert (report / "tables" / f"{table}.md").is_file(), table
    # the chance run has 2 repeats: DORI cells carry a ± SEM; cot vs direct gives a delta table
    assert "±" in (report / "tables" / "dori-tasks.md").read_text()
    assert "cot" in (report / "tables" / "spin-cot-delta.md").read_text()
    examples = list((report / "examples").glob("*.png"))
    assert len(examples) >= len(TASKS)
    for img in examples:
        assert f'src="examples/{img.name}"' in html
    assert "Pearson r =" in html and "Spearman" in html


def test_sections_without_data_are_omitted_with_a_note(data, tmp_path: Path) -> None:
    only_lrr = tmp_path / "lrr.jsonl"
    only_lrr.write_text("".join(line + "\n" for line in (data["res"] / "results.jsonl").read_text().splitlines()
                                if '"suite": "lrr"' in line))
    result = build_report([only_lrr], tmp_path / "out", ReportOptions(examples=2))
    assert result.sections["lrr"] == "rendered" and result.sections["leaderboard"] == "rendered"
    for slug in ("dori", "spin", "pcsr", "curves", "finetune", "human", "audit", "examples"):
        assert result.sections[slug] != "rendered"
    html = (tmp_path / "out" / "index.html").read_text()
    assert html.count('class="omitted"') == 8
    assert "no audit found" in html
    assert "no SpinBench records" in html and "dataset not found" in html
    assert "Section omitted: no DORI records" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.slow  # a second full build (~10 s idle, ~20 s on a loaded machine)
def test_report_is_deterministic(data, report: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    result = CliRunner().invoke(app, ["report", str(data["res"]), str(data["human"]), str(data["models"]),
                                      "--out", str(out), "--examples", "1", *SIZES])
    assert result.exit_code == 0, result.output
    first = sorted(p.relative_to(report) for p in report.rglob("*") if p.is_file())
    assert first == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    for rel in first:
        assert (report / rel).read_bytes() == (out / rel).read_bytes(), rel


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k != "ci95"}
    if isinstance(x, (list, tuple)):
        return [_strip(v) for v in x]
    if isinstance(x, float):
        return "nan" if math.isnan(x) else round(x, 9)
    return x


def _with_failures(src: Path, dst: Path) -> None:
    """A copy of a results log in which every fifth record is a failed request and every
    seventh reply unparsed, as a flaky server and a rambling model would leave it."""
    lines = []
    for i, line in enumerate(src.read_text().splitlines()):
        d = json.loads(line)
        if i % 5 == 0:
            d |= {"status": "failed", "prediction": None, "correct": None, "response": None, "scores": {},
                  "error": "HTTP 500"}
        elif i % 7 == 0:
            d |= {"status": "unparsed", "prediction": None, "correct": False, "response": "No idea.", "scores": {}}
        lines.append(json.dumps(d))
    dst.write_text("\n".join(lines) + "\n")


def _suite_counts(suite: str, metrics: dict) -> list[tuple[int, int, int]]:
    """(n, failed, unparsed) of each per-group figure of a suite's metric that counts records."""
    if suite == "dori":
        return [(v["n"], v["failed"], v["unparsed"]) for v in metrics["soft_accuracy"]["soft_accuracy"].values()]
    if suite == "spin":
        k = metrics["kappa"]
        return [(k["n"][s], k["failed"][s], k["unparsed"][s]) for s in k["n"]]
    if suite == "pcsr":
        return [(metrics["strict_relaxed"]["n"]["overall"], -1, -1)]
    (mode,) = metrics["score"].values()
    return [(n, -1, -1) for n in mode["n"].values()]


def test_score_and_report_give_the_same_figures(data, tmp_path: Path) -> None:
    """`perspecta score` and the report fold the records through one aggregator: the CLI's
    summary.json equals the report's per-run summaries. Every suite metric counts every record
    asked (failed and unparsed included, as the headline accuracy does): its n's add up to the
    suite's records, and per subtype SpinBench's accuracy and DORI's hard accuracy equal the
    core accuracy of that subtype."""
    path = tmp_path / "results.jsonl"
    _with_failures(data["res"] / "results.jsonl", path)
    out = tmp_path / "summary.json"
    result = CliRunner().invoke(app, ["score", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    scored = {(r["model"], r["prompt_mode"]): r for r in json.loads(out.read_text())["runs"]}
    agg = aggregate([path], set(registry.suites()))
    mine = {(s.model, s.prompt_mode): summarize_run(s) for s in agg.runs.values()}
    assert set(mine) == set(scored) and len(scored) == 4
    records = read_records(path)
    n_missing = 0
    for key, run in scored.items():
        assert run.pop("missing") == 0  # score's count of items asked without a record (none here)
        # summary.json writes undefined figures (NaN) as null: compare through the same writer
        assert _strip(json.loads(summary_json(mine[key]))) == _strip(run), key
        assert mine[key]["ci95"] == tuple(run["ci95"]) or list(mine[key]["ci95"]) == run["ci95"]
        recs = [r for r in records if (r.model, r.prompt_mode) == key]
        assert run["n"] == len(recs) and run["correct"] == sum(bool(r.correct) for r in recs)
        for suite, metrics in run["suite_metrics"].items():
            mine_recs = [r for r in recs if r.suite == suite]
            counts = _suite_counts(suite, metrics)
            assert sum(n for n, _, _ in counts) == len(mine_recs), (key, suite)
            if counts[0][1] >= 0:
                assert sum(f for _, f, _ in counts) == sum(r.status == "failed" for r in mine_recs), (key, suite)
                assert sum(u for _, _, u in counts) == sum(r.status == "unparsed" for r in mine_recs), (key, suite)
                n_missing += sum(f + u for _, f, u in counts)
        for sub, b in run["by_subtype"].items():
            suite, task, subtype = sub.split("/", 2)
            if suite == "spin":
                assert run["suite_metrics"]["spin"]["kappa"]["accuracy"][subtype or task] == b["accuracy"], sub
            if suite == "dori":
                assert run["suite_metrics"]["dori"]["soft_accuracy"]["soft_accuracy"][subtype]["hard"] == b["accuracy"]
    assert n_missing > 20  # the check above saw failed and unparsed records
    # the chance run was resumed with nothing to re-ask: every record is in the log once
    assert len(path.read_text().splitlines()) == agg.n_records == sum(r["n"] for r in scored.values())


def test_family_and_size_parsing() -> None:
    ctx = Context(agg=None, runs=[], states=[], human=[], options=ReportOptions(families={"x:odd": "mine"}),
                  out=Path("."), files=[])  # type: ignore[arg-type]
    assert ctx.family_of("openai:qwen2.5-vl-7b") == "qwen2.5-vl"
    assert ctx.family_of("openai:Qwen2.5-VL-72B-Instruct") == "Qwen2.5-VL"
    assert ctx.family_of("openai:internvl3-38b") == "internvl3"
    assert ctx.family_of("openai:gpt-4o") == "gpt-4o"
    assert ctx.family_of("x:odd") == "mine"
    assert parse_size("7B") == 7.0 and parse_size("500M") == 0.5 and parse_size("13") == 13.0
    with pytest.raises(ValueError, match="model size"):
        parse_size("big")


@pytest.mark.parametrize("case", ["missing", "corrupt", "unknown_suite", "missing_field"])
def test_malformed_inputs_give_clear_errors(data, tmp_path: Path, case: str) -> None:
    lines = (data["res"] / "results.jsonl").read_text().splitlines()[:20]
    bad = tmp_path / "results.jsonl"
    if case == "missing":
        target, expect = tmp_path / "nowhere", "results log not found"
    else:
        if case == "corrupt":
            lines[5] = lines[5][:40]
            expect = "results.jsonl:6: invalid JSON"
        elif case == "unknown_suite":
            lines[3] = json.dumps(json.loads(lines[3]) | {"suite": "nosuch"})
            expect = "results.jsonl:4: unknown suite 'nosuch'"
        else:
            d = json.loads(lines[2])
            del d["model"]
            lines[2] = json.dumps(d)
            expect = "results.jsonl:3: record lacks field(s) model"
        bad.write_text("\n".join(lines) + "\n")
        target = bad
    result = CliRunner().invoke(app, ["report", str(target), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert expect in " ".join(result.output.split()), result.output


def test_truncated_last_line_is_skipped_like_score(data, tmp_path: Path) -> None:
    lines = (data["res"] / "results.jsonl").read_text().splitlines()[:30]
    f = tmp_path / "results.jsonl"
    f.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:50])  # a killed run's unterminated line
    agg = aggregate([f], set(registry.suites()))
    assert agg.n_records == len(read_records(f)) == 29


def test_report_opens_offline_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    """No console errors, every image decoded (naturalWidth > 0), sorting works, screenshot not blank."""
    assert Path("/usr/bin/chromium").exists(), "Debian chromium is not installed (run scripts/setup.sh)"
    from PIL import Image, ImageStat
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto((report / "index.html").as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate("Array.from(document.images).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])")
        # sort the leaderboard by its headline accuracy: the rows must come out ascending
        headers = page.locator("#leaderboard table th").all_inner_texts()
        col = next(i for i, h in enumerate(headers) if h.strip().lower().startswith("accuracy"))
        page.locator("#leaderboard table th").nth(col).click()
        column = page.evaluate(
            f"Array.from(document.querySelectorAll('#leaderboard table tbody tr'))"
            f".map(r => parseFloat(r.cells[{col}].innerText))")
        shot = tmp_path / "page.png"
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    assert errors == []
    assert all(u.startswith("file://") for u in requests), [u for u in requests if not u.startswith("file://")]
    assert len(images) > 20
    assert [src for src, complete, width in images if not complete or width == 0] == []
    assert len(column) >= 3 and column == sorted(column)
    stat = ImageStat.Stat(Image.open(shot).convert("L"))
    assert stat.stddev[0] > 10  # text, tables and figures, not a blank page
