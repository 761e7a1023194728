"""``audit_dataset``: what a model could score on each task and subtype without the skill.

For every task (and every subtype of it) the audit reports the chance level, the largest
share of one answer text and of one option letter (descriptive, in-sample), and the
out-of-fold accuracy of five skill-free predictors (see :mod:`perspecta.audit.features`)
with 95% intervals. A cell *fails* when the lower end of its best predictor's interval is
more than ``threshold`` above chance; only cross-fitted predictors decide, because an
in-sample maximum share is biased upward. Cells with fewer than ``min_clusters``
independent clusters are shown but never judged, and items marked
``metadata["control"] == "text_only"`` (answerable from the text by design) are audited
as a separate population that never fails.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.audit import crossfit
from perspecta.audit.features import (
    FAMILIES,
    AuditInputError,
    SuiteFeatures,
    answer_text,
    build_rows,
)
from perspecta.audit.images import FingerprintStore
from perspecta.audit.readability import summarise
from perspecta.audit.stats import Estimate, mean_interval, share_interval
from perspecta.dataset.item import Item

DEFAULT_THRESHOLD = 0.05
# The skill-free score of a cell is the best of the five predictors, so each predictor's
# interval is taken at 1 - 0.05/5: together they hold with 95% confidence (Bonferroni).
PREDICTOR_CONFIDENCE = 1.0 - 0.05 / 5
MIN_CLUSTERS = 8
TEXT_ONLY = "text_only"


@dataclass
class Cell:
    """One row of the audit: a whole task (``subtype`` None) or one of its subtypes."""

    suite: str
    task: str
    subtype: str | None
    control: bool  # text-only controls: reported, never failed
    n: int
    clusters: int
    chance: float
    answer_share: Estimate
    top_answer: str
    letter_share: Estimate | None
    top_letter: str | None
    predictors: dict[str, Estimate | None]
    judged: bool
    threshold: float
    evidence: list[str] = field(default_factory=list)  # strongest features of a failing predictor

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.task}" + (f"/{self.subtype}" if self.subtype else "")

    @property
    def worst(self) -> str | None:
        """The predictor whose interval sits highest above chance."""
        have = [(e.lo, -i, fam) for i, (fam, e) in enumerate(self.predictors.items()) if e is not None]
        return max(have)[2] if have else None

    @property
    def gap(self) -> float | None:
        w = self.worst
        return None if w is None else self.predictors[w].value - self.chance  # type: ignore[union-attr]

    @property
    def gap_lo(self) -> float | None:
        w = self.worst
        return None if w is None else self.predictors[w].lo - self.chance  # type: ignore[union-attr]

    @property
    def fail(self) -> bool:
        return self.judged and not self.control and self.gap_lo is not None and self.gap_lo > self.threshold

    def to_dict(self) -> dict[str, Any]:
        r4 = lambda x: None if x is None else round(x, 4)  # noqa: E731
        return {
            "suite": self.suite, "task": self.task, "subtype": self.subtype, "control": self.control,
            "n": self.n, "clusters": self.clusters, "chance": r4(self.chance),
            "answer_share": self.answer_share.to_dict() | {"top": self.top_answer},
            "letter_share": (None if self.letter_share is None
                             else self.letter_share.to_dict() | {"top": self.top_letter}),
            "predictors": {k: None if v is None else v.to_dict() for k, v in self.predictors.items()},
            "worst": self.worst, "gap": r4(self.gap), "gap_lo": r4(self.gap_lo),
            "judged": self.judged, "fail": self.fail, "evidence": self.evidence,
        }


@dataclass
class AuditResult:
    dataset: str
    n_items: int
    threshold: float
    min_clusters: int
    cells: list[Cell]
    readability: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(c.fail for c in self.cells)

    @property
    def failures(self) -> list[Cell]:
        return [c for c in self.cells if c.fail]

    def worst_by_suite(self) -> dict[str, Cell]:
        """Per suite, the non-control cell with the highest gap lower bound (judged cells
        first, so a tiny subtype's noisy point estimate does not hide a real failure)."""
        best: dict[str, Cell] = {}
        for c in self.cells:
            if c.control or c.gap_lo is None:
                continue
            cur = best.get(c.suite)
            if cur is None or (c.judged, c.gap_lo) > (cur.judged, cur.gap_lo):  # type: ignore[operator]
                best[c.suite] = c
        return dict(sorted(best.items()))

    def to_dict(self) -> dict[str, Any]:
        """The JSON record (no timings: the same dataset gives the same bytes)."""
        return {
            "dataset": self.dataset,
            "n_items": self.n_items,
            "threshold": self.threshold,
            "confidence": 0.95,
            "min_clusters": self.min_clusters,
            "ok": self.ok,
            "predictors": list(FAMILIES),
            "worst_by_suite": {s: c.key for s, c in self.worst_by_suite().items()},
            "failures": [c.key for c in self.failures],
            "cells": [c.to_dict() for c in self.cells],
            "readability": self.readability,
        }


def _suite_hooks(suites: list[str]) -> tuple[dict[str, SuiteFeatures | None], dict[str, frozenset[str] | None]]:
    """Per suite: its ``audit_features`` function and its ``AUDIT_METADATA_KEYS`` (the
    metadata fields the generic features read instead of the default category/asset/source)."""
    from perspecta.suites.registry import suite_setting

    hooks: dict[str, SuiteFeatures | None] = {}
    keys: dict[str, frozenset[str] | None] = {}
    for s in suites:
        try:
            fn = suite_setting(s, "audit_features", None)
            chosen = suite_setting(s, "AUDIT_METADATA_KEYS", None)
        except ModuleNotFoundError:  # a dataset of a suite this installation does not have
            fn = chosen = None
        if fn is not None and not callable(fn):
            raise AuditInputError(f"suite {s}: audit_features must be a function item_dict -> dict, "
                                  f"got {type(fn).__name__}")
        if chosen is not None and (isinstance(chosen, str) or not all(isinstance(k, str) for k in chosen)):
            raise AuditInputError(f"suite {s}: AUDIT_METADATA_KEYS must be a tuple of metadata key names")
        hooks[s] = fn  # type: ignore[assignment]
        keys[s] = None if chosen is None else frozenset(chosen)  # type: ignore[arg-type]
    return hooks, keys


def _cell(items: list[Item], idx: np.ndarray, cluster: np.ndarray, chance: np.ndarray,
          correct: dict[str, np.ndarray | None], *, suite: str, task: str, subtype: str | None, control: bool,
          threshold: float, min_clusters: int) -> Cell:
    key = f"{suite}/{task}/{subtype or '*'}/{'control' if control else 'main'}"
    sub_items = [items[i] for i in idx]
    cl = cluster[idx]
    texts = [answer_text(it) for it in sub_items]
    top_answer, _ = sorted(Counter(texts).items(), key=lambda kv: (-kv[1], kv[0]))[0]
    answer_share = share_interval(np.array([t == top_answer for t in texts]), cl, key + "/answer")
    mcq = np.array([it.answer_type == "mcq" for it in sub_items])
    letter_share = top_letter = None
    if mcq.any():
        letters = [it.answer for it, m in zip(sub_items, mcq) if m]
        top_letter, _ = sorted(Counter(letters).items(), key=lambda kv: (-kv[1], kv[0]))[0]
        letter_share = share_interval(np.array([a == top_letter for a in letters]), cl[mcq], key + "/letter")
    predictors = {fam: None if c is None else share_interval(c[idx], cl, f"{key}/{fam}", PREDICTOR_CONFIDENCE)
                  for fam, c in correct.items()}
    n_clusters = len(np.unique(cl))
    return Cell(suite, task, subtype, control, len(idx), n_clusters, float(chance[idx].mean()), answer_share,
                top_answer, letter_share, top_letter, predictors, judged=n_clusters >= min_clusters,
                threshold=threshold)


POOLED = "*"  # the task name of a suite's pooled cell


def _pooled_cell(suite: str, parts: list[tuple[str, np.ndarray, np.ndarray, dict[str, np.ndarray | None]]], *,
                 threshold: float, min_clusters: int) -> Cell:
    """Every task of a suite at once: each predictor's out-of-fold hits (each fitted on its
    own task, as in the task cells) minus each item's chance, averaged over the suite's
    items, with a cluster-bootstrap interval of that excess (clusters stay per task).

    Why: a cue spread over a suite's tasks (a shared prompt template, a file-naming habit)
    that lifts every task by 10-15 points stays inside each 40-scene task's interval (a
    note naming the answer on 40% of DORI items failed none of 10 cells in round 5); pooled
    over the suite's ~600 items it does not. Like the task cells, its predictor "values"
    are accuracies: mean chance plus the mean excess and its bounds."""
    names = [fam for fam in FAMILIES if all(c[fam] is not None for _, _, _, c in parts)]
    cl = np.concatenate([np.array([f"{task}/{x}" for x in cluster]) for task, cluster, _, _ in parts])
    _, cl_ids = np.unique(cl, return_inverse=True)
    chance = np.concatenate([ch for _, _, ch, _ in parts])
    predictors: dict[str, Estimate | None] = {fam: None for fam in FAMILIES}
    for fam in names:
        hits = np.concatenate([c[fam] for _, _, _, c in parts]).astype(float)  # type: ignore[union-attr]
        e = mean_interval(hits - chance, cl_ids, f"{suite}/{POOLED}/{fam}", PREDICTOR_CONFIDENCE)
        base = float(chance.mean())
        clip = lambda x: float(min(1.0, max(0.0, base + float(x))))  # noqa: E731
        predictors[fam] = Estimate(clip(e.value), clip(e.lo), clip(e.hi))
    n_clusters = int(cl_ids.max()) + 1 if len(cl_ids) else 0
    # pooling adds power to tasks that are judged; it gives no verdict where none could be given
    judged_tasks = sum(len(np.unique(cluster)) >= min_clusters for _, cluster, _, _ in parts)
    no_share = Estimate(0.0, 0.0, 0.0)  # answer texts differ per task: no pooled top answer
    return Cell(suite, POOLED, None, False, len(chance), n_clusters, float(chance.mean()), no_share, "", None, None,
                predictors, judged=bool(judged_tasks >= 2 and names), threshold=threshold)


def audit_items(items: list[Item], store: FingerprintStore, *, dataset: str = "",
                threshold: float = DEFAULT_THRESHOLD, min_clusters: int = MIN_CLUSTERS) -> AuditResult:
    """Audit ``items`` (images read through ``store``); see the module docstring."""
    started = time.perf_counter()
    hooks, metadata_keys = _suite_hooks(sorted({it.suite for it in items}))
    populations: dict[tuple[str, str, bool], list[Item]] = defaultdict(list)
    for it in items:
        populations[(it.suite, it.task, it.metadata.get("control") == TEXT_ONLY)].append(it)
    cells: list[Cell] = []
    pooled: dict[str, list[tuple[str, np.ndarray, np.ndarray, dict[str, np.ndarray | None]]]] = defaultdict(list)
    for (suite, task, control), pop in sorted(populations.items()):
        try:
            rows = build_rows(pop, store, hooks, metadata_keys)
        except (FileNotFoundError, OSError) as e:
            raise AuditInputError(f"{suite}/{task}: cannot read an image: {e}") from None
        cluster = crossfit.clusters(pop)
        fold = crossfit.folds(cluster, f"{suite}/{task}/{control}")
        matrices = {fam: crossfit.matrix(rows.rows[fam]) for fam in FAMILIES}
        correct = {fam: crossfit.out_of_fold_correct(X, rows.row_item, rows.label, len(pop), fold)
                   for fam, (X, _) in matrices.items()}
        chance = 1.0 / np.maximum(rows.n_candidates, 1)
        common = dict(suite=suite, task=task, control=control, threshold=threshold, min_clusters=min_clusters)
        mine = [_cell(pop, np.arange(len(pop)), cluster, chance, correct, subtype=None, **common)]
        subtypes = sorted({it.subtype for it in pop})
        if len(subtypes) > 1:
            for sub in subtypes:
                idx = np.array([i for i, it in enumerate(pop) if it.subtype == sub])
                mine.append(_cell(pop, idx, cluster, chance, correct, subtype=sub or "(none)", **common))
        explained: dict[str, list[str]] = {}
        for c in mine:
            if c.fail and c.worst is not None:
                if c.worst not in explained:
                    X, names = matrices[c.worst]
                    explained[c.worst] = crossfit.strongest_features(X, names, rows.label)
                c.evidence = explained[c.worst]
        cells.extend(mine)
        if not control:
            pooled[suite].append((task, cluster, chance, correct))
    for suite, parts in sorted(pooled.items()):
        if len(parts) > 1:
            cells.append(_pooled_cell(suite, parts, threshold=threshold, min_clusters=min_clusters))
    store.save()
    return AuditResult(dataset, len(items), threshold, min_clusters, cells, summarise(items),
                       seconds=time.perf_counter() - started)


def audit_dataset(root: str | Path, *, threshold: float = DEFAULT_THRESHOLD,
                  min_clusters: int = MIN_CLUSTERS) -> AuditResult:
    """Audit the dataset directory ``root`` (every split). Raises :class:`AuditInputError`
    with a one-line message for a missing or malformed dataset."""
    from perspecta.dataset.io import DatasetError
    from perspecta.run.dataset import load_dataset

    root = Path(root)
    if not root.is_dir():
        raise AuditInputError(f"{root}: no such dataset directory")
    try:
        ds = load_dataset(root)
    except (FileNotFoundError, DatasetError) as e:
        raise AuditInputError(str(e)) from None
    if not ds.items:
        raise AuditInputError(f"{root}: the dataset has no items")
    checksums = ds.manifest.get("checksums")
    store = FingerprintStore(root, checksums if isinstance(checksums, dict) else None)
    return audit_items(ds.items, store, dataset=str(root), threshold=threshold, min_clusters=min_clusters)
