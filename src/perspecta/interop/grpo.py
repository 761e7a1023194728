"""GRPO on PCSR with TRL: the prompt dataset and the paper's reward functions.

``prompt_dataset`` turns a PCSR dataset split into the dataset ``trl.GRPOTrainer``
expects for a VLM: a conversational ``prompt`` (one user turn, ``{"type": "image"}``
placeholders where the question's images go), an ``images`` column, and the columns
the rewards read (``answer``, ``answer_type``, ``answer_aliases``, ``options``,
``candidates``). TRL passes every extra column to each reward function as a keyword
argument, one value per completion, which is the signature of
:mod:`perspecta.suites.pcsr.rewards`.

``reward_functions(weights)`` returns the three rewards with their paper weights
(R_acc, R_fmt, R_reason; ``rewards.WEIGHTS``) for ``GRPOConfig(reward_weights=...)``;
TRL logs each under its own name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perspecta.interop.common import open_dataset
from perspecta.interop.export_sft import user_content
from perspecta.suites.pcsr import rewards

PCSR = "pcsr"


def prompt_rows(dataset: str | Path, split: str = "train") -> list[dict[str, Any]]:
    """The PCSR items of ``split`` as GRPO rows (image paths, not yet decoded)."""
    ds = open_dataset(dataset)
    items = [it for it in ds.items if it.suite == PCSR and it.split == split]
    if not items:
        have = sorted({(it.suite, it.split) for it in ds.items})
        raise ValueError(f"{ds.root}: no PCSR items in split {split!r} (suite/split present: {have})")
    return [{
        "id": it.id,
        "prompt": [{"role": "user", "content": user_content(it)}],
        "images": [str((ds.root / p).resolve()) for p in it.images],
        "answer": it.answer,
        "answer_type": it.answer_type,
        "answer_aliases": list(it.answer_aliases),
        "options": [{"label": o.label, "text": o.text or ""} for o in it.options],
        "candidates": [str(c) for c in it.metadata.get("candidates", [])],
    } for it in items]


def prompt_dataset(dataset: str | Path, split: str = "train") -> Any:
    """A ``datasets.Dataset`` of :func:`prompt_rows` with ``images`` decoded as PIL images."""
    from datasets import Dataset, Image, List

    return Dataset.from_list(prompt_rows(dataset, split)).cast_column("images", List(Image()))


def reward_functions(weights: str | tuple[float, float, float] = "main") -> tuple[list[rewards.RewardFn], list[float]]:
    """``([accuracy, format, reasoning], [l1, l2, l3])`` for ``GRPOTrainer`` / ``GRPOConfig.reward_weights``."""
    if isinstance(weights, str):
        if weights not in rewards.WEIGHTS:
            raise ValueError(f"unknown weight set {weights!r}; choose from {sorted(rewards.WEIGHTS)}")
        weights = rewards.WEIGHTS[weights]
    return [rewards.accuracy_reward, rewards.format_reward, rewards.reasoning_reward], [float(w) for w in weights]
