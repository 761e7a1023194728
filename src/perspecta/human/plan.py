"""Sampling plans: which items an annotator answers, and in which order.

A plan is a pure function of (items, plan settings, annotator id), so nothing but its
settings needs storing: a returning annotator gets the same list back and resumes at
the first item without a response. Items are grouped by task (tasks in dataset order)
so people switch task as rarely as possible, as SpinBench's tool does; inside a task
the order is shuffled per annotator to spread order effects.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perspecta.dataset.item import Item

ANNOTATOR_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
PLAN_KINDS = ("full", "balanced")


def check_annotator(annotator: str) -> str:
    """The id itself, or ValueError: ids become part of URLs, file rows and model names."""
    if not isinstance(annotator, str) or not ANNOTATOR_RE.fullmatch(annotator):
        raise ValueError("annotator id must be 1-64 letters, digits, '_' or '-'")
    return annotator


@dataclass(frozen=True)
class PlanSettings:
    kind: str = "full"  # full | balanced
    per_subtype: int = 0  # balanced: items per (suite, task, subtype) and annotator
    seed: int = 0
    split: str | None = "test"  # None = every split

    def __post_init__(self) -> None:
        if self.kind not in PLAN_KINDS:
            raise ValueError(f"plan must be one of {', '.join(PLAN_KINDS)}, got {self.kind!r}")
        if self.kind == "balanced" and self.per_subtype < 1:
            raise ValueError("a balanced plan needs --per-subtype N with N >= 1")
        if self.kind == "full" and self.per_subtype:
            raise ValueError("--per-subtype only applies to --plan balanced")
        if self.seed < 0:
            raise ValueError(f"--seed must be non-negative, got {self.seed}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def subtype_key(item: Item) -> str:
    return f"{item.suite}/{item.task}/{item.subtype}"


def task_key(item: Item) -> str:
    return f"{item.suite}/{item.task}"


def _rng(seed: int, annotator: str) -> np.random.Generator:
    """One generator per (seed, annotator); sha256 so the mapping is stable across Python runs."""
    digest = int.from_bytes(hashlib.sha256(annotator.encode()).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence([seed, digest]))


def eligible_items(items: list[Item], settings: PlanSettings) -> list[Item]:
    return [it for it in items if settings.split is None or it.split == settings.split]


def build_plan(items: list[Item], settings: PlanSettings, annotator: str) -> list[str]:
    """Item ids for ``annotator``: grouped by task in dataset order, shuffled inside each task."""
    check_annotator(annotator)
    rng = _rng(settings.seed, annotator)
    pool = eligible_items(items, settings)
    if settings.kind == "balanced":
        by_subtype: dict[str, list[Item]] = {}
        for it in pool:
            by_subtype.setdefault(subtype_key(it), []).append(it)
        chosen: set[str] = set()
        for key in sorted(by_subtype):
            group = by_subtype[key]
            picks = rng.permutation(len(group))[: settings.per_subtype]
            chosen.update(group[int(i)].id for i in picks)
        pool = [it for it in pool if it.id in chosen]
    by_task: dict[str, list[str]] = {}
    for it in pool:
        by_task.setdefault(task_key(it), []).append(it.id)
    plan: list[str] = []
    for ids in by_task.values():  # dict order = first appearance in the dataset
        plan.extend(ids[int(i)] for i in rng.permutation(len(ids)))
    return plan
