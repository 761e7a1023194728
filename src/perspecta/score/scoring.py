"""From (item, model response) to a :class:`ScoredRecord`, applying the suite's record scorers.

A failed request (no response) stays ``failed`` with its error and ``correct=None``;
a response with no extractable answer is ``unparsed`` and counted wrong.
"""

from __future__ import annotations

from typing import Any

from perspecta.dataset.item import Item
from perspecta.score.extract import extract, is_correct
from perspecta.score.records import ScoredRecord
from perspecta.score.registry import record_scorers_for


def score_response(
    item: Item,
    *,
    model: str,
    response: str | None,
    error: str | None = None,
    prompt_mode: str = "direct",
    repeat: int = 0,
    latency_s: float | None = None,
) -> ScoredRecord:
    base: dict[str, Any] = dict(
        item_id=item.id, suite=item.suite, task=item.task, model=model, answer=item.answer,
        subtype=item.subtype, granularity=item.granularity, variant=item.variant, group=item.group,
        split=item.split, answer_type=item.answer_type, n_options=len(item.options),
        prompt_mode=prompt_mode, repeat=repeat, metadata=dict(item.metadata), latency_s=latency_s,
    )
    if response is None:
        return ScoredRecord(status="failed", error=error or "no response", **base)
    prediction = extract(response, item)
    if prediction is None:
        rec = ScoredRecord(status="unparsed", correct=False, response=response, **base)
    else:
        rec = ScoredRecord(status="ok", prediction=prediction, correct=is_correct(prediction, item),
                           response=response, **base)
    for scorer in record_scorers_for(item.suite):
        rec.scores.update(scorer(rec))
    return rec
