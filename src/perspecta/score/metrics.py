"""Core metrics over scored records, plus every metric a suite registered.

``accuracy`` — the headline — is over *every* record asked: a failed request and an
unparsed reply both count as wrong, so a flaky server or an unreadable model can only
lower a score, never raise it. ``coverage`` = answered / asked sits beside it, and
``accuracy_answered`` (correct / answered) is a secondary number, labelled as such
wherever it is shown. The 95% interval is a percentile bootstrap over all records
(fixed seed, so reports are stable). With several repeats, ``repeats`` gives mean ±
std/√n of per-repeat accuracies, the way the DORI paper reports seeds.

Every figure comes from one streaming pass (:mod:`perspecta.report.aggregate`, the suites'
metric accumulators); ``perspecta score`` and ``perspecta report`` share it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from perspecta import fastjson
from perspecta.report.aggregate import Aggregator
from perspecta.report.summary import BOOTSTRAP, block, block_from_cells, summarize_run, wilson_interval
from perspecta.score.records import ScoredRecord


def read_records(path: str | Path) -> list[ScoredRecord]:
    """Records of a results log, last one per (model, mode, dataset, repeat, item) winning.

    A truncated last line (a killed run) is skipped; any other bad line is an error.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: results log not found")
    latest: dict[tuple[str, str, str, int, str], ScoredRecord] = {}
    with open(path, "rb") as f:  # line by line: the file is never held in memory whole
        for i, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                d = fastjson.loads(raw)
            except json.JSONDecodeError:
                if not raw.endswith(b"\n"):  # unterminated final line of an interrupted run
                    continue
                raise ValueError(f"{path}:{i}: invalid JSON in results log") from None
            rec = ScoredRecord.from_dict(d)
            latest[(rec.model, rec.prompt_mode, rec.dataset, rec.repeat, rec.item_id)] = rec
    return list(latest.values())


def bootstrap_ci(values: np.ndarray, *, n: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of the mean (for 0/1 values widened to at least the
    Wilson interval, so 20 right of 20 is not [1, 1]).

    Correctness values are 0/1, and the mean of a resample of ``len(values)`` such
    values is exactly Binomial(len, p) / len: drawing that instead of the resamples
    themselves gives the same interval in O(n) memory, not O(n x len) (1M records
    would otherwise take gigabytes). Non-binary values are resampled in chunks.
    """
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return None
    rng = np.random.default_rng(seed)
    if np.all((values == 0) | (values == 1)):
        means = rng.binomial(len(values), values.mean(), size=n) / len(values)
    else:
        chunk = max(1, 2_000_000 // len(values))
        means = np.concatenate([
            values[rng.integers(0, len(values), size=(min(chunk, n - i), len(values)))].mean(axis=1)
            for i in range(0, n, chunk)
        ])
    lo, hi = np.percentile(means, [2.5, 97.5])
    if np.all((values == 0) | (values == 1)):  # as binomial_ci: never narrower than Wilson's
        w_lo, w_hi = wilson_interval(int(values.sum()), len(values))
        lo, hi = min(lo, w_lo), max(hi, w_hi)
    return float(lo), float(hi)


def fold(records: Iterable[ScoredRecord | dict[str, Any]]) -> Aggregator:
    """Records (in memory) folded through the streaming aggregator — the one implementation
    of every figure, shared with :func:`summarize_file` and ``perspecta report``."""
    agg = Aggregator()
    for r in records:
        agg.add(r.to_dict() if isinstance(r, ScoredRecord) else r)
    return agg


def accuracy_block(records: list[ScoredRecord]) -> dict[str, Any]:
    """Accuracy over every record given (pooled over models and modes), coverage beside it."""
    pooled = fold(r.to_dict() | {"model": "pool", "prompt_mode": "pool", "dataset": ""} for r in records)
    if not pooled.runs:
        return block_from_cells({})
    (st,) = pooled.runs.values()
    return block(st, "all", "all")


def _summary(agg: Aggregator) -> dict[str, Any]:
    states = sorted(agg.runs.values(), key=lambda s: (s.model, s.prompt_mode, s.dataset))
    return {"runs": [summarize_run(st) for st in states]}


def summarize(records: list[ScoredRecord]) -> dict[str, Any]:
    """``{"runs": [...]}``, one entry per run: (model, prompt mode, dataset fingerprint)."""
    return _summary(fold(records))


def summarize_file(path: str | Path) -> dict[str, Any]:
    """:func:`summarize` of a results log, streamed (memory grows with groups, not records);
    the last record per (model, mode, dataset, repeat, item) wins, as in :func:`read_records`."""
    from perspecta.report.aggregate import aggregate
    from perspecta.suites import registry

    from perspecta.report.load import run_infos
    from perspecta.report.missing import add_missing

    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: results log not found")
    known = set(registry.suites())
    agg = aggregate([path], known)
    missing = add_missing(agg, [path], run_infos([path]), known)  # asked but never recorded: failed
    summary = _summary(agg)
    for run in summary["runs"]:
        run["missing"] = missing.get((run["model"], run["prompt_mode"], run.get("dataset", "")), 0)
    return summary


def _fmt_acc(block: dict[str, Any]) -> str:
    if block["accuracy"] is None:
        return "—"
    ci = block.get("ci95")
    text = f"{100 * block['accuracy']:.1f}"
    if ci:
        text += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    if "repeats" in block:
        rep = block["repeats"]
        text += f" ({100 * rep['mean']:.1f}±{100 * rep['sem']:.1f})"
    return text


def summary_table(summary: dict[str, Any], *, level: str = "by_task", title: str = "results"):
    """A rich Table: one row per run and ``level`` group (by_suite / by_task / by_subtype).

    Accuracy is over every item asked (failed and unparsed count wrong); coverage and the
    answered-only accuracy stand beside it, labelled."""
    from rich.table import Table

    table = Table(title=title, caption="accuracy: all items asked, failed and unparsed count wrong; "
                                       "answered-only: correct / answered (secondary); chance: mean 1/k over "
                                       "the multiple-choice and yes/no items (open answers have none); "
                                       "(m±s): mean ± SEM over repeats, the CI is over items")
    for col, just in (("model", "left"), ("mode", "left"), ("group", "left"), ("n", "right"),
                      ("accuracy % [95% CI]", "right"), ("coverage %", "right"), ("answered-only acc. %", "right"),
                      ("chance %", "right"), ("unparsed", "right"), ("failed", "right")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    several = len({run.get("dataset", "") for run in summary["runs"]}) > 1
    for run in summary["runs"]:
        rows = [("all", run)] + list(run[level].items())
        model = run["model"] + (f" @{run.get('dataset') or '?'}" if several else "")  # runs on other datasets
        for name, block in rows:
            chance = block.get("chance_level")
            answered = block.get("accuracy_answered")
            table.add_row(model, run["prompt_mode"], name, str(block["n"]), _fmt_acc(block),
                          f"{100 * block['coverage']:.1f}",
                          f"{100 * answered:.1f}" if answered is not None else "—",
                          f"{100 * chance:.1f}" if chance is not None else "—",
                          str(block["unparsed"]), f"[red]{block['failed']}[/]" if block["failed"] else "0")
    return table
