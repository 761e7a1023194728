"""Human answers: what counts as a valid answer, and how it is scored.

A person answers with an option label (mcq), yes/no, or a short typed text (open PCSR
items). The scored record is built by the same function that scores model responses
(:func:`perspecta.score.scoring.score_response`), so ``correct`` for a person means
exactly what it means for a model, and the suites' record scorers add the same extras
(DORI soft credit, PCSR strict/relaxed, LRR). For open items ``correct`` is therefore
the models' rule (normalised match with the item's aliases, numbers as numbers) and the
PCSR relaxed match (synonyms, "chair 2" -> chair, ...) is in ``scores["relaxed"]``;
``perspecta human results`` reports both.
"""

from __future__ import annotations

from perspecta.dataset.item import Item
from perspecta.score.extract import is_correct, normalise
from perspecta.score.records import ScoredRecord
from perspecta.score.registry import record_scorers_for
from perspecta.score.scoring import score_response

MAX_OPEN_CHARS = 200


def check_answer(item: Item, raw: object) -> str:
    """The answer in canonical form (label upper case, yes/no lower case, text stripped), or ValueError."""
    if not isinstance(raw, str):
        raise ValueError("answer must be a string")
    text = raw.strip()
    if item.answer_type == "mcq":
        labels = [o.label for o in item.options]
        if text.upper() not in labels:
            raise ValueError(f"answer must be one of {', '.join(labels)}")
        return text.upper()
    if item.answer_type == "yesno":
        if text.lower() not in ("yes", "no"):
            raise ValueError("answer must be yes or no")
        return text.lower()
    if not normalise(text) or len(text) > MAX_OPEN_CHARS:
        raise ValueError(f"answer must be 1-{MAX_OPEN_CHARS} characters with at least one letter or digit")
    return text


def score_human(item: Item, annotator: str, answer: str, latency_s: float | None) -> ScoredRecord:
    """The scored record of one human answer (model ``human:<annotator>``, status ok).

    ``answer`` passed :func:`check_answer`. A typed open answer that the model-side
    extractor cannot read (e.g. a word where a number is expected) is still the
    person's answer: it is kept, normalised, and scored wrong unless it matches — and
    a typed question ("5?") never matches, as a model's "5?" is unparsed.
    """
    rec = score_response(item, model=f"human:{annotator}", response=answer, latency_s=latency_s)
    if item.answer_type != "open" and rec.prediction != answer:
        raise AssertionError(f"{item.id}: extraction changed human answer {answer!r} into {rec.prediction!r}")
    if rec.status != "ok":
        rec.status = "ok"
        rec.prediction = normalise(answer)
        # a typed question ("5?", "table?") is not the answer, for a person as for a model: the
        # grammar leaves a model's "5?" unparsed, and normalising the person's dropped the "?" and
        # credited it (round 6)
        rec.correct = not answer.strip().endswith("?") and is_correct(rec.prediction, item)
        rec.scores = {}
        for scorer in record_scorers_for(item.suite):
            rec.scores.update(scorer(rec))
    return rec
