"""PCSR strict and relaxed answer matching (paper section 4.2), as pure functions.

Extraction: drop every ``<think>...</think>`` block (an unclosed ``<think>`` hides the
rest of the text), take the last ``<answer>...</answer>`` left, else fall back to the
first 200 characters of what remains. An answer written only inside the reasoning
therefore does not count.

Strict: equal after basic normalisation (case, punctuation, underscores, articles).
Relaxed, in order: strict; intent canonicalisation ("on your left" -> left, "three" ->
3, "option B" -> B); domain synonyms and the item's aliases; instance-to-class
relaxation ("office chair", "chair 2" -> chair, unless the longer phrase is itself
another category); bounded substring match (the gold phrase occurs in a short answer
that names no other candidate). the suite spec lists it as a record scorer, which adds both to every record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from perspecta.score.records import ScoredRecord
from perspecta.suites.pcsr.common import SYNONYMS

FALLBACK_CHARS = 200
MAX_SUBSTRING_WORDS = 12  # bounded substring: longer answers are not searched

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"</?\s*(think|answer)\s*>", re.IGNORECASE)
_LABEL = re.compile(r"^\(?([a-h])\)?(?:[.:)]|\s|$)")

NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
    "eleven": "11", "twelve": "12",
}
# one-word intent synonyms, applied after filler words are dropped
INTENTS = {
    "ahead": "front", "forward": "front", "forwards": "front", "infront": "front",
    "back": "behind", "backward": "behind", "backwards": "behind", "rear": "behind",
    "leftward": "left", "leftwards": "left", "rightward": "right", "rightwards": "right",
    "yeah": "yes", "yep": "yes", "true": "yes", "correct": "yes", "visible": "yes",
    "nope": "no", "false": "no", "incorrect": "no", "invisible": "no",
    "anticlockwise": "counterclockwise",
}
FILLER = frozenset(
    ["the", "a", "an", "answer", "final", "is", "it", "its", "it's", "option", "choice", "on", "to", "your", "my", "of", "you", "me", "side", "in", "directly", "located", "object", "would", "be", "i", "think", "that", "this", "there"]
)
_ARTICLES = frozenset({"the", "a", "an"})


def extract_answer(response: str | None) -> str | None:
    """The answer text of a model response per the paper's ordered extraction, or None."""
    if response is None:
        return None
    text = _THINK.sub(" ", response)
    open_think = text.lower().find("<think>")
    if open_think >= 0:
        text = text[:open_think]
    tagged = _ANSWER.findall(text)
    if tagged:
        ans = tagged[-1].strip()
        return ans or None
    text = _TAG.sub(" ", text).strip()
    return text[:FALLBACK_CHARS].strip() or None


def normalise(text: str) -> str:
    """Lower case, underscores/hyphens as spaces, punctuation dropped, leading articles removed
    (a lone "a" stays: it is option A)."""
    t = text.lower().replace("_", " ").replace("-", " ")
    t = re.sub(r"[^\w\s]", " ", t)
    words = t.split()
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


def canonical(text: str) -> str:
    """Intent canonicalisation: filler words dropped, number words as digits, direction synonyms."""
    words = [w for w in normalise(text).split() if w not in FILLER]
    out = [NUMBER_WORDS.get(w, INTENTS.get(w, w)) for w in words]
    joined = " ".join(out)
    return joined.replace("counter clockwise", "counterclockwise")


_NUMERIC = re.compile(r"\d+")
# a count qualified by a symbol ("3+", "~3", ">3", "≈3") or a word ("about 3", "over 3", "3 or so")
_QUALIFIED_SYMBOL = re.compile(r"[~≈<>≤≥]\s*\d|\d\s*\+")
_QUALIFIED_WORDS = re.compile(
    r"\b(?:about|approximately|approx|roughly|around|nearly|almost|circa|some|between|maybe|perhaps"
    r"|at\s+(?:least|most)|more\s+than|fewer\s+than|less\s+than|no\s+more\s+than|no\s+fewer\s+than"
    r"|up\s+to|over|under|above|below)\s+\d|\d+\s*(?:or\s+(?:so|more|fewer|less)|ish)\b")


def inexact(prediction: str, gold: str) -> bool:
    """Whether an answer to a count (a numeric gold) is an estimate, a bound or a question:
    "3+", "~3", "about 3", "at most 3", "over 3", "3?".

    Normalisation drops punctuation and relaxed matching finds the gold inside a phrase, so
    "3+" and "~3" were strict matches for 3 and "about 3" / "at most 3" relaxed ones — an
    estimate credited as the count. The harness grammar reads none of them as a count
    (docs/scoring.md); strict and relaxed now agree with it. Only counts are checked:
    an object name ending in "?" is the relaxed rule's business (:func:`noncommittal`)."""
    if not _NUMERIC.fullmatch(normalise(gold)):
        return False
    text = prediction.strip().lower()
    for word, digit in NUMBER_WORDS.items():
        text = re.sub(rf"\b{word}\b", digit, text)
    return bool(text.endswith("?") or _QUALIFIED_SYMBOL.search(text) or _QUALIFIED_WORDS.search(text))


def strict_match(prediction: str | None, gold: str) -> bool:
    """Equal after normalisation — and not asked: "chair?" normalises to "chair", but a question
    is no answer (the harness grammar leaves "C?" unparsed), so it earns no strict credit."""
    return (prediction is not None and normalise(prediction) == normalise(gold) != ""
            and not prediction.strip().endswith("?") and not inexact(prediction, gold))


def synonyms(phrase: str) -> set[str]:
    """The phrase and every domain synonym of it (either direction), canonicalised."""
    c = canonical(phrase)
    out = {c}
    for head, alts in SYNONYMS.items():
        group = {canonical(head), *(canonical(a) for a in alts)}
        if c in group:
            out |= group
    return {x for x in out if x}


def _vocabulary(candidates: Iterable[str]) -> set[str]:
    vocab = {canonical(c) for c in candidates}
    for head, alts in SYNONYMS.items():
        vocab.add(canonical(head))
        vocab.update(canonical(a) for a in alts)
    return {v for v in vocab if v}


def contains(haystack: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", haystack) is not None


def _mcq_label(prediction: str, options: dict[str, str]) -> str | None:
    """The option a MCQ prediction picks: a leading letter, or exactly one option's text."""
    c = canonical(prediction)
    # letters are read before filler words are dropped: "a" is an article and option A
    n = re.sub(r"^((the|my|final)\s+)*(answer|option|choice)(\s+is)?\s+", "", normalise(prediction))
    m = _LABEL.match(n)
    if m and m.group(1).upper() in options:
        return m.group(1).upper()
    hits = {lab for lab, text in options.items() if synonyms(text) & {c}}
    if len(hits) == 1:
        return hits.pop()
    if len(normalise(prediction).split()) <= MAX_SUBSTRING_WORDS:
        hits = {lab for lab, text in options.items() if any(contains(c, s) for s in synonyms(text))}
        if len(hits) == 1:
            return hits.pop()
    return None


_NOT = re.compile(r"\b(?:not|never|neither|nor|rather\s+than|instead\s+of)\b|n't\b", re.IGNORECASE)


def noncommittal(prediction: str) -> bool:
    """Whether an answer negates, hedges, declines or asks rather than states: "not the chair",
    "It is not the chair", "Maybe the chair?", "I cannot tell whether it is the chair", "Not left".

    The relaxed heuristics (substring, instance-to-class, option text) find the gold *inside*
    a phrase, so without this they credited exactly those replies — a relaxed accuracy that
    rose with hedges and denials. Strict equality is unaffected; the rule can only lower
    relaxed credit. Hedge and decline wording is the harness grammar's (docs/scoring.md)."""
    from perspecta.score.extract import _DECLINE, _tentative

    text = prediction.strip()
    return bool(text.endswith("?") or _NOT.search(text) or _DECLINE.search(text) or _tentative(text))


def relaxed_match(
    prediction: str | None,
    gold: str,
    *,
    answer_type: str = "open",
    aliases: Sequence[str] = (),
    options: dict[str, str] | None = None,
    candidates: Sequence[str] = (),
) -> bool:
    """The paper's relaxed match: the ordered heuristics in the module docstring."""
    if prediction is None or not prediction.strip():
        return False
    if strict_match(prediction, gold):
        return True
    if noncommittal(prediction) or inexact(prediction, gold):
        return False
    if answer_type == "mcq":
        return options is not None and _mcq_label(prediction, options) == gold.upper()
    pred = canonical(prediction)
    golds: set[str] = set()
    for g in (gold, *aliases):
        golds |= synonyms(g)
    if pred in golds:  # intent canonicalisation, synonyms and aliases
        return True
    vocab = _vocabulary(candidates)
    # instance -> class: "office chair", "chair 2", "second chair" name the class "chair"
    stripped = re.sub(r"(\s+\d+)+$", "", pred)
    stripped = re.sub(r"^(first|second|third|1st|2nd|3rd)\s+", "", stripped)
    if stripped in golds:
        return True
    for g in golds:
        if stripped.endswith(" " + g) and stripped not in vocab:
            return True
    # bounded substring: a short answer that names the gold and no other candidate
    if len(normalise(prediction).split()) > MAX_SUBSTRING_WORDS or not any(contains(pred, g) for g in golds):
        return False
    rivals = {v for v in vocab if v not in golds and not any(contains(g, v) for g in golds)}
    return not any(contains(pred, r) for r in rivals)


def score_response(response: str | None, gold: str, metadata: dict[str, Any], answer_type: str) -> dict[str, float]:
    """{"strict": 0/1, "relaxed": 0/1} for a raw response to an item with this metadata."""
    pred = extract_answer(response)
    if pred is None:
        return {"strict": 0.0, "relaxed": 0.0}
    strict = strict_match(pred, gold)
    relaxed = strict or relaxed_match(
        pred,
        gold,
        answer_type=answer_type,
        aliases=metadata.get("answer_aliases", []),
        options=metadata.get("options"),
        candidates=metadata.get("candidates", []),
    )
    return {"strict": float(strict), "relaxed": float(relaxed)}


def pcsr_record_scores(record: ScoredRecord) -> dict[str, float]:
    """Strict and relaxed correctness of one scored record (0 when the model gave nothing)."""
    if record.status == "failed" or record.response is None:
        return {"strict": 0.0, "relaxed": 0.0}
    return score_response(record.response, record.answer, record.metadata, record.answer_type)
