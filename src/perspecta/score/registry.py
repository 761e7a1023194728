"""Suites register their metrics here once; ``perspecta score`` and the report call them.

A metric function takes the scored records of one suite (one model, all repeats) and
returns a JSON-serialisable mapping, e.g. ``{"soft_accuracy": {"view_parallelism/coarse": 0.61}}``.
A per-record scorer (a suite spec's ``record_scorers``) adds entries to ``ScoredRecord.scores`` while
records are scored (e.g. DORI's soft credit, PCSR's relaxed match).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from perspecta.score.records import ScoredRecord

MetricFn = Callable[[list[ScoredRecord]], dict[str, Any]]
RecordScorer = Callable[[ScoredRecord], dict[str, float]]

_METRICS: dict[str, dict[str, MetricFn]] = {}


def suite_metric(suite: str, name: str) -> Callable[[MetricFn], MetricFn]:
    """Register ``fn`` as metric ``name`` of ``suite`` (decorator)."""

    def register(fn: MetricFn) -> MetricFn:
        _METRICS.setdefault(suite, {})[name] = fn
        return fn

    return register


def metrics_for(suite: str) -> dict[str, MetricFn]:
    from perspecta.suites.registry import load_builtin_suites

    load_builtin_suites()
    return dict(_METRICS.get(suite, {}))


def record_scorers_for(suite: str) -> list[RecordScorer]:
    """The per-record scorers the suite's :class:`~perspecta.suites.spec.Suite` lists."""
    from perspecta.suites.registry import suite_spec

    spec = suite_spec(suite)
    return list(spec.record_scorers) if spec is not None else []
