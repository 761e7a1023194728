"""GRPO with TRL on any suite: the prompt dataset and each suite's reward functions.

``prompt_rows`` turns a dataset split into the rows ``trl.GRPOTrainer`` expects for a VLM:
a conversational ``prompt`` (one user turn, ``{"type": "image"}`` placeholders where the
question's images go), ``images`` (paths; :func:`prompt_dataset` decodes them), and the
columns the rewards read (``id``, ``suite``, ``answer``, ``answer_type``,
``answer_aliases``, ``options``, ``candidates``). TRL passes every extra column to each
reward function as a keyword argument, one value per completion.

The prompt is the evaluation prompt of mode ``think`` (:func:`perspecta.run.prompts.build_prompt`),
so a completion can earn the format reward; a suite whose questions already ask for
think/answer tags says so with ``GRPO_PROMPT_MODE = "direct"``.

Rewards (:func:`reward_functions`), by name, each dispatched per completion to the item's
suite: a suite's ``GRPO_REWARDS`` mapping overrides the generic ones.

* ``accuracy`` — generic: 1 if the suite's own scorer (:func:`perspecta.score.score_response`,
  the evaluation's extraction and matching) marks the answer correct, else 0.
* ``format`` — generic: 1 for exactly one non-empty ``<think>`` block followed by one
  non-empty ``<answer>`` block and nothing else, else 0.
* ``reasoning`` — no generic version: the PCSR paper's R_reason; other suites' items get
  ``None``, which TRL leaves out of the weighted sum.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perspecta.dataset.item import Item
from perspecta.interop.common import interleaved_parts, open_dataset
from perspecta.run.prompts import build_prompt

REWARD_NAMES = ("accuracy", "format", "reasoning")
RewardFn = Callable[..., list[float | None]]

_STRUCTURE = re.compile(r"\s*<think>(.+?)</think>\s*<answer>(.+?)</answer>\s*", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"</?(think|answer)>", re.IGNORECASE)


def select_items(dataset: str | Path, split: str, suites: list[str] | None = None,
                 tasks: list[str] | None = None) -> tuple[Path, list[Item]]:
    """(dataset root, items of ``split`` in the chosen suites/tasks); a clear error when none."""
    ds = open_dataset(dataset)
    items = [it for it in ds.items if it.split == split and (not suites or it.suite in suites)
             and (not tasks or f"{it.suite}/{it.task}" in tasks)]
    if not items:
        have = sorted({(it.suite, it.split) for it in ds.items})
        want = f"tasks {tasks}" if tasks else f"suites {suites}" if suites else "any suite"
        raise ValueError(f"{ds.root}: no items of {want} in split {split!r} (suite/split present: {have}); "
                         "generate with --split train=0.8,test=0.2")
    return ds.root, items


def prompt_mode(suite: str) -> str:
    from perspecta.suites.registry import suite_setting

    return str(suite_setting(suite, "GRPO_PROMPT_MODE", "think"))


def prompt_rows(dataset: str | Path, split: str = "train", suites: list[str] | None = None,
                tasks: list[str] | None = None) -> list[dict[str, Any]]:
    """The chosen items of ``split`` as GRPO rows (image paths, not yet decoded)."""
    root, items = select_items(dataset, split, suites, tasks)
    rows = []
    for it in items:
        content = [{"type": "image"} if kind == "image" else {"type": "text", "text": value}
                   for kind, value in interleaved_parts(build_prompt(it, prompt_mode(it.suite)))]
        rows.append({
            "id": it.id,
            "suite": it.suite,
            "prompt": [{"role": "user", "content": content}],
            "images": [str((root / p).resolve()) for p in it.images],
            "answer": it.answer,
            "answer_type": it.answer_type,
            "answer_aliases": list(it.answer_aliases),
            "options": [{"label": o.label, "text": o.text or ""} for o in it.options],
            "candidates": [str(c) for c in it.metadata.get("candidates", [])],
        })
    return rows


def prompt_dataset(dataset: str | Path, split: str = "train", suites: list[str] | None = None,
                   tasks: list[str] | None = None) -> Any:
    """A ``datasets.Dataset`` of :func:`prompt_rows` with ``images`` decoded lazily as PIL images."""
    from datasets import Dataset, Image, List

    return Dataset.from_list(prompt_rows(dataset, split, suites, tasks)).cast_column("images", List(Image()))


def completion_text(completion: Any) -> str:
    """A completion as text: a string, or the content of the last conversational message."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        content = completion.get("content", "")
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)
    return completion_text(completion[-1]) if completion else ""


def format_reward(completions: list[Any], **_: Any) -> list[float]:
    """Generic R_fmt: one non-empty think block, then one non-empty answer block, nothing else."""
    out = []
    for c in completions:
        text = completion_text(c)
        m = _STRUCTURE.fullmatch(text)
        ok = m is not None and len(_TAG.findall(text)) == 4 and m.group(1).strip() and m.group(2).strip()
        out.append(1.0 if ok else 0.0)
    return out


def accuracy_reward_for(items: dict[str, Item]) -> RewardFn:
    """Generic R_acc over ``items`` (by id): the suite's own evaluation scoring of the completion."""
    from perspecta.score.scoring import score_response

    def accuracy_reward(completions: list[Any], id: list[str], **_: Any) -> list[float]:  # noqa: A002 (TRL column)
        out = []
        for c, item_id in zip(completions, id):
            item = items[item_id]
            rec = score_response(item, model="grpo", response=completion_text(c), prompt_mode=prompt_mode(item.suite))
            out.append(1.0 if rec.correct else 0.0)
        return out

    return accuracy_reward


def _dispatch(name: str, generic: RewardFn | None) -> RewardFn:
    """A TRL reward that hands each completion to its item's suite's ``name`` reward."""
    from perspecta.suites.registry import suite_setting

    def reward(completions: list[Any], suite: list[str], **columns: Any) -> list[float | None]:
        out: list[float | None] = []
        for i, (c, s) in enumerate(zip(completions, suite)):
            fn = (suite_setting(s, "GRPO_REWARDS", {}) or {}).get(name, generic)
            if fn is None:
                out.append(None)
                continue
            one = {k: [v[i]] for k, v in columns.items() if isinstance(v, list) and len(v) == len(completions)}
            out.append(fn([c], suite=[s], **one)[0])
        return out

    reward.__name__ = f"{name}_reward"  # TRL logs rewards/<name>_reward/mean
    return reward


def reward_functions(items: list[Item], weights: dict[str, float]) -> tuple[list[RewardFn], list[float]]:
    """``(functions, weights)`` for ``GRPOTrainer(reward_funcs=...)`` / ``GRPOConfig(reward_weights=...)``."""
    unknown = sorted(set(weights) - set(REWARD_NAMES))
    if unknown:
        raise ValueError(f"unknown reward(s) {', '.join(unknown)}; choose from {', '.join(REWARD_NAMES)}")
    generic: dict[str, RewardFn | None] = {"accuracy": accuracy_reward_for({it.id: it for it in items}),
                                           "format": format_reward, "reasoning": None}
    names = [n for n in REWARD_NAMES if weights.get(n)]
    return [_dispatch(n, generic[n]) for n in names], [float(weights[n]) for n in names]
