"""Core metrics over scored records, plus every metric a suite registered.

``accuracy`` — the headline — is over *every* record asked: a failed request and an
unparsed reply both count as wrong, so a flaky server or an unreadable model can only
lower a score, never raise it. ``coverage`` = answered / asked sits beside it, and
``accuracy_answered`` (correct / answered) is a secondary number, labelled as such
wherever it is shown. The 95% interval is a percentile bootstrap over all records
(fixed seed, so reports are stable). With several repeats, ``repeats`` gives mean ±
std/√n of per-repeat accuracies, the way the DORI paper reports seeds.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from perspecta import fastjson
from perspecta.score.records import ScoredRecord
from perspecta.score.registry import metrics_for

BOOTSTRAP = 1000


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
    """Percentile bootstrap 95% interval of the mean.

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
    return float(lo), float(hi)


def accuracy_block(records: list[ScoredRecord]) -> dict[str, Any]:
    answered = [r for r in records if r.status != "failed"]
    correct = np.array([bool(r.correct) for r in records], dtype=float)  # failed and unparsed: 0
    n_correct = int(correct.sum())
    out: dict[str, Any] = {
        "n": len(records),
        "answered": len(answered),
        "ok": sum(r.status == "ok" for r in records),
        "unparsed": sum(r.status == "unparsed" for r in records),
        "failed": len(records) - len(answered),
        "correct": n_correct,
        "coverage": len(answered) / len(records) if records else 0.0,
        "accuracy": n_correct / len(records) if records else None,
        "accuracy_answered": n_correct / len(answered) if answered else None,
        "ci95": bootstrap_ci(correct),
    }
    chance = [1.0 / r.n_options for r in records if r.n_options] + [0.5 for r in records if r.answer_type == "yesno"]
    if chance:
        out["chance_level"] = float(np.mean(chance))
    repeats = sorted({r.repeat for r in records})
    if len(repeats) > 1:
        accs = [np.mean([bool(r.correct) for r in records if r.repeat == k]) for k in repeats]
        std = float(np.std(accs, ddof=1))
        out["repeats"] = {"n": len(accs), "mean": float(np.mean(accs)), "std": std, "sem": std / math.sqrt(len(accs))}
    return out


def _group(records: Iterable[ScoredRecord], key) -> dict[str, list[ScoredRecord]]:
    groups: dict[str, list[ScoredRecord]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    return dict(sorted(groups.items()))


def summarize(records: list[ScoredRecord]) -> dict[str, Any]:
    """``{"runs": [...]}``, one entry per run: (model, prompt mode, dataset fingerprint)."""
    runs = []
    for (model, mode, dataset), recs in _group(records, lambda r: (r.model, r.prompt_mode, r.dataset)).items():
        run: dict[str, Any] = {"model": model, "prompt_mode": mode, "dataset": dataset, **accuracy_block(recs)}
        run["by_suite"] = {k: accuracy_block(v) for k, v in _group(recs, lambda r: r.suite).items()}
        run["by_task"] = {k: accuracy_block(v) for k, v in _group(recs, lambda r: f"{r.suite}/{r.task}").items()}
        run["by_subtype"] = {k: accuracy_block(v)
                             for k, v in _group(recs, lambda r: f"{r.suite}/{r.task}/{r.subtype}").items()}
        run["suite_metrics"] = {}
        for suite, srecs in _group(recs, lambda r: r.suite).items():
            for name, fn in metrics_for(suite).items():
                try:
                    run["suite_metrics"].setdefault(suite, {})[name] = fn(srecs)
                except Exception as e:  # a suite's metric bug must not hide the core scores
                    run["suite_metrics"].setdefault(suite, {})[name] = {"error": f"{e.__class__.__name__}: {e}"}
        runs.append(run)
    return {"runs": runs}


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
                                       "answered-only: correct / answered (secondary)")
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
