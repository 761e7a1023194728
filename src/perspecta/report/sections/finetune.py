"""Fine-tuning: base vs tuned accuracy per task (DORI Table 12 style) and transfer.

A run is *tuned* when its run file (``run-<model>.json`` beside the results log, written
by the runner from :meth:`perspecta.models.hf.HFBackend.describe`) records an adapter or
a ``training.yaml`` from ``perspecta train``; nothing is guessed from model names. Its
*base* run is one evaluated with the model the adapter was trained from: a run whose
recorded path is that model, or whose name after ``backend:`` is the model's id or folder
name (so ``openai:Qwen/Qwen2.5-VL-3B-Instruct`` served by vLLM pairs with an adapter on
that id). Base and tuned are compared in the same prompt mode and only on tasks where
both answered the same number of items; every evaluated task is labelled *trained*
(in the training data), *same suite* or *other suite* (transfer across suites). A run
evaluated on its own training split is flagged, since its accuracy is not held out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.report.context import Context, Section
from perspecta.report.tables import DASH, Table, pct, pct_ci, signed

TRAINED, SAME_SUITE, OTHER_SUITE = "trained", "same suite", "other suite"


def run_files(files: list[Path]) -> dict[str, dict[str, Any]]:
    """Model name -> its run file (the first one found among the results folders)."""
    out: dict[str, dict[str, Any]] = {}
    for f in files:
        for path in sorted(f.parent.glob("run-*.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError, UnicodeDecodeError):
                continue  # the report's loader already vouches for the results; a broken run file only hides info
            if isinstance(data, dict) and isinstance(data.get("model"), str):
                out.setdefault(data["model"], {**data, "_file": str(path)})
    return out


def is_tuned(run_file: dict[str, Any]) -> bool:
    backend = run_file.get("backend") or {}
    return bool(backend.get("adapter") or backend.get("training"))


def _names_of(model: str) -> set[str]:
    p = Path(model)
    return {model, p.name, str(p.resolve()) if p.exists() else model}


def find_base(tuned: dict[str, Any], runs: dict[str, dict[str, Any]], models: set[str]) -> str | None:
    """The evaluated model that is ``tuned``'s base (see the module doc), or None."""
    base = (tuned.get("backend") or {}).get("base_model")
    if not base:
        return None
    wanted = _names_of(str(base))
    for model in sorted(models):
        if model == tuned["model"]:
            continue
        info = runs.get(model, {})
        if is_tuned(info):
            continue
        path = (info.get("backend") or {}).get("path")
        if (path and path in wanted) or model.split(":", 1)[-1] in wanted:
            return model
    return None


def _relation(task: str, training: dict[str, Any]) -> str:
    data = training.get("dataset") or {}
    if task in set(data.get("tasks") or []):
        return TRAINED
    return SAME_SUITE if task.split("/", 1)[0] in set(data.get("suites") or []) else OTHER_SUITE


def _comparable(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    return bool(a and b and a["accuracy"] is not None and b["accuracy"] is not None and a["n"] == b["n"])


def build(ctx: Context) -> Section:
    sec = Section("finetune", "Fine-tuning — base vs tuned, and transfer",
                  "Runs of models trained with perspecta train (identified by the adapter and training.yaml their "
                  "run file records) beside their base model, in the same prompt mode. Columns are tasks; a task is "
                  "'trained' when the training data held it, else transfer within the suite or to another suite. "
                  "Δ = tuned − base, only where both answered the same number of items.")
    runs = run_files(ctx.files)
    models = {r["model"] for r in ctx.runs}
    tuned = [m for m in sorted(models) if is_tuned(runs.get(m, {}))]
    if not tuned:
        sec.omitted = "no fine-tuned runs (evaluate a `perspecta train` output with --model hf:OUT)"
        return sec
    # base and tuned pair on one prompt mode *and one dataset*: keyed by (model, mode) alone, a tuned
    # run on one dataset was compared with its base on another whenever the item counts matched
    by_key = {(r["model"], r["prompt_mode"], r.get("dataset", "")): r for r in ctx.runs}

    recipes = Table("finetune-runs", "Fine-tuned models and their training runs",
                    ["tuned model", "base model", "recipe", "kind", "trained on (train split)", "train items", "steps",
                     "train loss", "s/step", "evaluated split"])
    for m in tuned:
        info = runs[m]
        training = (info.get("backend") or {}).get("training") or {}
        data, result, settings = training.get("dataset") or {}, training.get("result") or {}, training.get("settings") or {}
        split = (info.get("config") or {}).get("split")
        split_text = "all" if split is None else str(split)
        if data.get("path") and Path(str(info.get("dataset", ""))).resolve() == Path(data["path"]) and split in (None, "train"):
            split_text += " (includes its training items: not held out)"
            sec.notes.append(f"{m} was evaluated on split {split_text.split()[0]} of its own training dataset; "
                             "its accuracy there is not a held-out result.")
        recipes.rows.append([m, str((info.get("backend") or {}).get("base_model") or DASH),
                             str(settings.get("preset") or DASH), str(training.get("kind") or DASH),
                             ", ".join(data.get("tasks") or data.get("suites") or []) or DASH,
                             str(data.get("items", DASH)), str(result.get("steps", DASH)),
                             f"{result['train_loss']:.4g}" if isinstance(result.get("train_loss"), float) else DASH,
                             f"{result['seconds_per_step']:.2f}" if result.get("seconds_per_step") is not None else DASH,
                             split_text])
    sec.blocks.append(recipes)

    transfer = Table("finetune-transfer", "Base vs tuned accuracy % per suite, by relation to the training data",
                     ["tuned model", "mode", "suite", "relation", "tasks", "n", "base acc % [95% CI]",
                      "tuned acc % [95% CI]", "Δ (pp)"], sortable=True)
    for m in tuned:
        info = runs[m]
        training = (info.get("backend") or {}).get("training") or {}
        base = find_base(info, runs, models)
        if base is None:
            sec.notes.append(f"{m}: its base model {(info.get('backend') or {}).get('base_model')} was not evaluated "
                             "in these results, so there is no base row to compare with.")
        for mode, dataset in sorted({(r["prompt_mode"], r.get("dataset", "")) for r in ctx.runs if r["model"] == m}):
            t_run, b_run = by_key[(m, mode, dataset)], by_key.get((base, mode, dataset)) if base else None
            if base is not None and b_run is None:
                sec.notes.append(f"{ctx.label(t_run)}: its base {base} has no {mode} run on the same dataset, so "
                                 "there is no base row to compare with.")
            tasks = sorted(t_run["by_task"])
            cols = _columns(t_run, tasks)
            per_task = Table(f"finetune-tasks-{len(sec.blocks)}",
                             f"{ctx.label(t_run)} [{mode}] vs base: accuracy % per task (DORI Table 12 style)",
                             ["model", *[f"{label} ({_relation(task, training)})" for _, _, task, label in cols], "Avg"])
            rows = [("base", b_run), ("tuned", t_run)] if b_run else [("tuned", t_run)]
            for label, run in rows:
                accs = [run[level].get(key, {}).get("accuracy") for level, key, _, _ in cols]
                vals = [a for a in accs if a is not None]
                per_task.rows.append([f"{label}: {run['model']}", *[pct(a) for a in accs],
                                      pct(float(np.mean(vals))) if vals else DASH])
            if b_run:
                deltas = [(t_run[level][key]["accuracy"] - b_run[level][key]["accuracy"])
                          if _comparable(t_run[level].get(key), b_run[level].get(key)) else None
                          for level, key, _, _ in cols]
                shown = [d for d in deltas if d is not None]
                per_task.rows.append(["Δ (pp)", *[signed(None if d is None else 100 * d, 1) for d in deltas],
                                      signed(100 * float(np.mean(shown)), 1) if shown else DASH])
            sec.blocks.append(per_task)
            groups: dict[tuple[str, str], list[str]] = {}
            for t in tasks:
                groups.setdefault((t.split("/", 1)[0], _relation(t, training)), []).append(t)
            for (suite, relation), group in sorted(groups.items()):
                t_blk = _pool(t_run, group)
                b_blk = _pool(b_run, group) if b_run else None
                delta = (signed(100 * (t_blk["accuracy"] - b_blk["accuracy"]), 1)
                         if _comparable(t_blk, b_blk) else DASH)
                transfer.rows.append([ctx.label(t_run), mode, suite, relation, str(len(group)), str(t_blk["n"]),
                                      pct_ci(b_blk["accuracy"], b_blk["ci95"]) if b_blk else DASH,
                                      pct_ci(t_blk["accuracy"], t_blk["ci95"]), delta])
    sec.blocks.append(transfer)
    return sec


def _columns(run: dict[str, Any], tasks: list[str]) -> list[tuple[str, str, str, str]]:
    """(summary level, key, task, header) per column: the task, or its subtypes for a suite that
    declares ``FINETUNE_TABLE_LEVEL = "subtype"`` (DORI: coarse and granular, as Table 12)."""
    from perspecta.suites.registry import suite_setting

    cols = []
    for t in tasks:
        subs = sorted(k for k in run["by_subtype"] if k.startswith(t + "/"))
        if subs and suite_setting(t.split("/", 1)[0], "FINETUNE_TABLE_LEVEL", "task") == "subtype":
            task_name = t.split("/", 1)[1]
            cols += [("by_subtype", k, t, f"{t} {k.rsplit('/', 1)[1].removeprefix(task_name + '_')}") for k in subs]
        else:
            cols.append(("by_task", t, t, t))
    return cols


def _pool(run: dict[str, Any], tasks: list[str]) -> dict[str, Any]:
    """Accuracy over every record asked of several tasks (failed and unparsed count wrong, as the
    headline), pooled from the tasks' correct counts, CI from counts.

    Before, the pool multiplied each task's accuracy (correct / asked) by its *answered*
    count and divided by the answered total: with failed requests that was neither the
    headline nor the answered-only accuracy, and its interval used the answered count."""
    from perspecta.report.summary import binomial_ci

    blocks = [run["by_task"][t] for t in tasks if t in run["by_task"]]
    n = sum(b["n"] for b in blocks)
    correct = sum(int(b["correct"]) for b in blocks)
    n_items = sum(int(b.get("n_items", b["n"])) for b in blocks)  # repeats are not new items
    return {"n": n, "accuracy": correct / n if n else None, "ci95": binomial_ci(correct, n, n_eff=n_items)}
