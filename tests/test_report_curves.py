"""Psychometric curves in ``perspecta report``: the fit on records with a known curve, and
the section on a real ``--sweep`` dataset evaluated by real baselines."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from perspecta.dataset.generate import GenerationConfig, generate_dataset, parse_sweep
from perspecta.report.aggregate import aggregate
from perspecta.report.build import build_report
from perspecta.report.context import ReportOptions
from perspecta.report.psychometric import fit_curve
from perspecta.run import evaluate
from perspecta.score.records import ScoredRecord
from perspecta.suites import registry

KNOB = "distractor_gap_deg"
SLUG = f"curve-spin-mental_rotation-{KNOB}"


def _records(model: str, xs: list[float], n: int, p_of, *, n_options: int = 4, answer_type: str = "mcq",
              seed: int = 0, failed_every: int = 0) -> list[ScoredRecord]:
    """``n`` records per knob value, right with probability ``p_of(x)``; every ``failed_every``-th
    record a failed request (which must count wrong)."""
    rng = np.random.default_rng(seed)
    out = []
    for x in xs:
        for j in range(n):
            i = len(out)
            if failed_every and i % failed_every == 0:
                out.append(ScoredRecord(f"t/x/{i:06d}", "spin", "mental_rotation", model, "A", "failed",
                                        answer_type=answer_type, n_options=n_options,
                                        metadata={"knobs": {KNOB: x, "label": "fixed"}}, error="timeout"))
                continue
            ok = bool(rng.random() < p_of(x))
            out.append(ScoredRecord(f"t/x/{i:06d}", "spin", "mental_rotation", model, "A", "ok",
                                    prediction="A" if ok else "B", correct=ok, answer_type=answer_type,
                                    n_options=n_options, metadata={"knobs": {KNOB: x, "label": "fixed"}}))
    return out


def _write(path: Path, records: list[ScoredRecord]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in records))
    return path


def _logistic(c: float, a: float, b: float):
    return lambda x: c + (1 - c) / (1 + math.exp(-(a + b * x)))


def _threshold(c: float, a: float, b: float) -> float:
    q = (0.75 - c) / (1 - c)
    return (math.log(q / (1 - q)) - a) / b


def test_fit_recovers_known_threshold_from_records(tmp_path):
    """Records drawn from a known logistic (4 options, chance 25%) give back its 75% threshold."""
    c, b = 0.25, 0.15
    a = math.log(2.0) - b * 40.0  # p = 75% where sigmoid = 2/3, i.e. a + b x = ln 2: at 40 degrees
    true_x = _threshold(c, a, b)
    assert abs(true_x - 40.0) < 1e-9
    xs = [float(v) for v in range(10, 75, 8)]
    res = _write(tmp_path / "res" / "results.jsonl", _records("synthetic:rising", xs, 300, _logistic(c, a, b)))
    out = build_report([res], tmp_path / "rep", ReportOptions(examples=0))
    assert out.sections["curves"] == "rendered"
    table = (tmp_path / "rep" / "tables" / f"{SLUG}.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| synthetic:rising"))
    m = re.search(r"≥ 75% above ([0-9.]+) " + KNOB, row)
    assert m, row
    assert abs(float(m.group(1)) - true_x) < 2.5, row
    # and the same through the streamed counts directly: slope and intercept too
    registry.load_builtin_suites()
    st = next(iter(aggregate([res], set(registry.suites())).runs.values()))
    cells = {v: cell for (suite, task, knob, v), cell in st.knobs.items() if knob == KNOB}
    assert sorted(cells) == xs and all(cell[0] == 300 for cell in cells.values())
    assert not any(knob == "label" for (_, _, knob, _) in st.knobs)  # non-numeric knobs have no axis
    fit = fit_curve(sorted(cells), [cells[v][1] for v in sorted(cells)], [cells[v][0] for v in sorted(cells)],
                    sum(cell[2] for cell in cells.values()) / sum(cell[0] for cell in cells.values()))
    assert fit.chance == pytest.approx(0.25)
    assert fit.b == pytest.approx(b, rel=0.3) and fit.verdict == "above"
    assert abs(fit.threshold - true_x) < 2.5


def test_failed_and_unparsed_count_wrong(tmp_path):
    """A run that always answers right when it answers still loses every failed request."""
    xs = [0.0, 1.0, 2.0, 3.0]
    res = _write(tmp_path / "r.jsonl", _records("synthetic:flaky", xs, 10, lambda x: 1.0, failed_every=5))
    registry.load_builtin_suites()
    st = next(iter(aggregate([res], set(registry.suites())).runs.values()))
    n = sum(cell[0] for cell in st.knobs.values())
    k = sum(cell[1] for cell in st.knobs.values())
    assert n == 40 and k == 32  # 8 failed of 40 in the denominator, counted wrong


def test_fit_verdicts():
    xs = [10.0, 20.0, 30.0, 40.0, 50.0]
    n = [400] * 5
    rising = _logistic(0.5, -8.0, 0.2)  # yes/no: chance 50%, threshold 40
    k = [round(rising(x) * 400) for x in xs]
    fit = fit_curve(xs, k, n, 0.5)
    assert fit.verdict == "above" and abs(fit.threshold - _threshold(0.5, -8.0, 0.2)) < 2
    # harder as the knob grows: the same curve mirrored reaches 75% below the mirrored threshold
    fit = fit_curve([-x for x in xs], k, n, 0.5)
    assert fit.verdict == "below" and abs(fit.threshold + _threshold(0.5, -8.0, 0.2)) < 2
    assert fit.describe(KNOB).startswith("≥ 75% below -")
    low = _logistic(0.25, -12.0, 0.2)  # rises, but stays under 75% up to 50
    fit = fit_curve(xs, [round(low(x) * 400) for x in xs], n, 0.25)
    assert fit.lr_p < 0.05 and fit.verdict == "not reached in range" and fit.threshold is None
    fit = fit_curve(xs, [200] * 5, n, 0.25)  # 50% everywhere
    assert fit.verdict == "flat" and fit.lr_p > 0.5
    fit = fit_curve(xs, [400] * 5, n, 0.25)  # ceiling: no slope to speak of
    assert fit.verdict == "flat"
    with pytest.raises(ValueError, match="3\\+ distinct"):
        fit_curve([1.0, 2.0, 2.0], [1, 1, 1], [2, 2, 2], 0.25)


def test_section_omitted_without_a_spanned_knob(tmp_path):
    res = _write(tmp_path / "r.jsonl", _records("synthetic:one", [30.0, 30.0], 5, lambda x: 0.5)
                 + _records("synthetic:two", [40.0], 5, lambda x: 0.5))
    out = build_report([res], tmp_path / "rep", ReportOptions(examples=0))
    assert out.sections["curves"].startswith("no task's records span a difficulty knob")
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "Psychometric curves" in html and "Section omitted: no task&#39;s records span" in html
    assert not list((tmp_path / "rep" / "figures").glob("curve-*.png"))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> dict[str, Path]:
    """A real 5-value sweep of one SpinBench knob, evaluated by the oracle and chance baselines."""
    root = tmp_path_factory.mktemp("curves")
    ds = root / "ds"
    generate_dataset(ds, GenerationConfig(suites=["spin"], n=10, seed=3, tasks=["spin/mental_rotation"],
                                          sweep=parse_sweep(f"{KNOB}=20:60:5")))
    res = root / "res"
    for model in ("baseline:oracle", "baseline:chance"):
        evaluate(ds, model, res, progress=False)
    return {"root": root, "ds": ds, "res": res}


def test_report_curves_on_real_sweep(sweep, tmp_path):
    out = build_report([sweep["res"]], tmp_path / "rep", ReportOptions(examples=0))
    assert out.sections["curves"] == "rendered"
    png = tmp_path / "rep" / "figures" / f"{SLUG}.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (tmp_path / "rep" / "index.html").read_text()
    assert "Psychometric curves" in html and f"spin/mental_rotation: accuracy % vs {KNOB}" in html
    assert f"figures/{SLUG}.png" in html
    table = (tmp_path / "rep" / "tables" / f"{SLUG}.md").read_text()
    header = next(line for line in table.splitlines() if line.startswith("| run"))
    # one column per value the items really have: the sweep's values, except where a task
    # raised the knob (tabletop mental rotation keeps near misses >= 45 degrees apart)
    import json
    used = sorted({json.loads(line)["metadata"]["knobs"][KNOB] for line in (sweep["ds"] / "items.jsonl").open()})
    assert set(used) - {20, 30, 40, 50, 60} <= {45.0} and len(used) >= 4
    columns = header.split(" | ")[1:1 + len(used)]
    assert [float(c) for c in columns] == [float(v) for v in used]
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| baseline")}
    assert set(rows) == {"baseline:oracle", "baseline:chance"}
    # the oracle is right at every value (n=2 each): at ceiling, so no slope and no threshold
    assert rows["baseline:oracle"].count("100 [") == len(used) and rows["baseline:oracle"].rstrip(" |").endswith("flat")
    assert "| 25 |" in rows["baseline:chance"]  # 4 options: chance 25%
    # knobs no sweep spanned (the preset's single value) draw no curve
    assert [p.name for p in (tmp_path / "rep" / "figures").glob("curve-*.png")] == [png.name]
    # the same inputs give the same bytes
    again = build_report([sweep["res"]], tmp_path / "rep2", ReportOptions(examples=0))
    assert again.sections["curves"] == "rendered"
    assert (tmp_path / "rep2" / "figures" / png.name).read_bytes() == png.read_bytes()
