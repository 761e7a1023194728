"""The per-record scorers of a suite, as its :class:`~perspecta.suites.spec.Suite` lists them.

A record scorer adds entries to ``ScoredRecord.scores`` while records are scored (e.g.
DORI's soft credit, PCSR's relaxed match). A suite's metrics are accumulators its spec
provides (``Suite.metrics``), folded by :mod:`perspecta.report.aggregate`.
"""

from __future__ import annotations

from collections.abc import Callable

from perspecta.score.records import ScoredRecord

RecordScorer = Callable[[ScoredRecord], dict[str, float]]


def record_scorers_for(suite: str) -> list[RecordScorer]:
    """The per-record scorers the suite's spec lists (none for a suite without a spec)."""
    from perspecta.suites.registry import suite_spec

    spec = suite_spec(suite)
    return list(spec.record_scorers) if spec is not None else []
