"""Issue 15 part 6: runs on different datasets stay apart in reports.

The same model on DORI data generated with the structured and the unstructured prompt
(``--suite-config dori.prompt_style=unstructured``) is two runs, shown side by side as the
DORI paper's Table 7; the systematic-error rule counts distinct models, not runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from perspecta.cli import app
from perspecta.dataset.generate import GenerationConfig, generate_dataset
from perspecta.models.fake_server import FakeServer
from perspecta.report.build import build_report
from perspecta.report.context import ReportOptions
from perspecta.run import evaluate
from perspecta.suites.dori import scoring as dori_scoring

FAST = dict(timeout_s=5.0, backoff_base_s=0.005, backoff_max_s=0.02, progress=False)
TASKS = ["dori/view_parallelism", "dori/directional_facing"]


@pytest.fixture(scope="module")
def two_styles(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("styles")
    out = {}
    for style in ("structured", "unstructured"):
        ds = root / f"ds-{style}"
        generate_dataset(ds, GenerationConfig(suites=["dori"], n=10, seed=5, tasks=TASKS,
                                              suite_config={"dori": {"prompt_style": style}}))
        out[f"ds-{style}"] = ds
    with FakeServer() as server:
        for style in ("structured", "unstructured"):
            modes = ["direct", "cot"] if style == "structured" else ["direct"]
            evaluate(out[f"ds-{style}"], "openai:fake", root / style, base_url=server.url, prompt_modes=modes, **FAST)
            out[style] = root / style
    return out


def test_same_model_two_prompt_styles_are_two_runs_side_by_side(two_styles, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["report", str(two_styles["structured"]), str(two_styles["unstructured"]),
                                 "--out", str(tmp_path / "rep"), "--examples", "0"])
    assert r.exit_code == 0, r.output
    # every item once per run; 3 runs (structured direct + cot, unstructured direct)
    per_run = [sum(1 for _ in (two_styles[f"ds-{s}"] / "items.jsonl").open()) for s in ("structured", "unstructured")]
    assert per_run[0] == per_run[1] >= 40
    assert f"{2 * per_run[0] + per_run[1]} records, 3 runs" in " ".join(r.output.split())
    md = (tmp_path / "rep" / "tables" / "dori-prompt-ablation.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| openai:fake | direct"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 5 and all(c != "—" for c in cells[2:])  # structured %, unstructured %, Δ
    runs = (tmp_path / "rep" / "tables" / "runs.md").read_text()
    assert "{dori.prompt_style=unstructured}" in runs and "{dori.prompt_style=structured}" in runs


def test_systematic_errors_count_distinct_models_not_runs(two_styles, tmp_path: Path) -> None:
    res = build_report([two_styles["structured"], two_styles["unstructured"]], tmp_path / "rep",
                       ReportOptions(examples=0))
    assert len(res.runs) == 3
    from perspecta.report.aggregate import aggregate
    from perspecta.report.summary import summarize_run
    from perspecta.suites import registry

    files = [two_styles[s] / "results.jsonl" for s in ("structured", "unstructured")]
    agg = aggregate(files, set(registry.suites()))
    per_run = {f"{s.prompt_mode}/{s.dataset}": summarize_run(s, agg)["suite_metrics"]["dori"]["error_patterns"]
               for s in agg.runs.values()}
    # counted per run, one model's three runs would make "systematic" errors out of one model
    assert dori_scoring.systematic_patterns(per_run), "fixture too small to show the difference"
    t10 = (tmp_path / "rep" / "tables" / "dori-systematic-errors.md").read_text()
    assert "(no rows)" in t10 and "1 (3 runs)" in t10
