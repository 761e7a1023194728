"""Answer extraction: from a model's free text to an option label, yes/no or open answer.

Order of evidence, most explicit first: the last ``<answer>…</answer>`` tag, then a
JSON-style ``"answer": "X"``, then an "answer is X" / "Answer: X" phrase, then the whole
response. Each candidate is interpreted against the item: an option label (``B``,
``(B)``, ``B.``, ``Option B``), the text of exactly one option, yes/no, a number, or
an open answer normalised (case, punctuation, articles, number words) and compared
with the gold answer and its aliases. Anything ambiguous (two different letters, both
yes and no) yields ``None``: the record is "unparsed", counted wrong and reported
apart — never resolved by guessing.
"""

from __future__ import annotations

import re
import string

from perspecta.dataset.item import Item

_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
_JSON = re.compile(r"""["']?answer["']?\s*:\s*["']([^"'\n]{1,200})["']""", re.IGNORECASE)
_PHRASE = re.compile(
    r"(?:final answer|answer|option|choice)\s*(?:is|:|=)?\s*(?:option\s*)?[:\-]?\s*\(?\**([^\n]{1,120})",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
          "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
_ARTICLES = {"a", "an", "the"}
SHORT_REPLY_WORDS = 12  # longer replies must state the answer in a tag, JSON or "answer is" phrase


def normalise(text: str) -> str:
    """Lower case, no punctuation or articles, number words as digits, single spaces."""
    text = text.lower().replace("°", " degrees ")
    text = text.translate(str.maketrans({c: " " for c in string.punctuation if c not in ".-"}))
    words = []
    for w in text.split():
        w = w.strip(".-")
        if not w or w in _ARTICLES:
            continue
        words.append(_WORDS.get(w, w))
    return " ".join(words)


def _label(candidate: str, labels: list[str]) -> str | None:
    """A candidate that *is* a label: 'B', '(B)', 'B.', 'B)', 'Option B', '**B**', 'B. <text>'."""
    c = candidate.strip().strip("*`\"' ")
    m = re.fullmatch(r"(?:option|choice)?\s*\(?([A-Za-z])\)?[.:)]?", c, re.IGNORECASE)
    if m and m.group(1).upper() in labels:
        return m.group(1).upper()
    m = re.match(r"\(?([A-Z])\)?[.:)]\s", c + " ")  # "B. Facing away…" / "(B) …"
    if m and m.group(1) in labels:
        return m.group(1)
    return None


def _option_text(candidate: str, item: Item) -> str | None:
    """The label of the one option whose text the candidate equals or contains."""
    norm = normalise(candidate)
    if not norm:
        return None
    exact = [o.label for o in item.options if o.text and normalise(o.text) == norm]
    if len(exact) == 1:
        return exact[0]
    inside = [o.label for o in item.options if o.text and re.search(rf"\b{re.escape(normalise(o.text))}\b", norm)]
    # an option whose text is contained in a longer option's text does not count twice
    inside = [lab for lab in inside if not any(
        lab != other and normalise(_text(item, lab)) in normalise(_text(item, other)) for other in inside)]
    return inside[0] if len(inside) == 1 else None


def _text(item: Item, label: str) -> str:
    return next((o.text or "") for o in item.options if o.label == label)


def _bare_letters(text: str, labels: list[str]) -> str | None:
    """Exactly one distinct standalone label letter in the text (the article "A" excluded)."""
    found = set()
    for m in re.finditer(r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9])", text):
        letter = m.group(1)
        if letter not in labels:
            continue
        rest = text[m.end():m.end() + 2]
        if letter in ("A", "I") and re.match(r" [a-z]", rest):  # "A car", "I think"
            continue
        found.add(letter)
    return found.pop() if len(found) == 1 else None


def _leading_label(candidate: str, item: Item) -> str | None:
    """After "the answer is", a leading capital letter is the label even before a word ("A because")."""
    if item.answer_type != "mcq":
        return None
    m = re.match(r"\s*\(?([A-Z])\)?(?![A-Za-z0-9])", candidate)
    return m.group(1) if m and m.group(1) in [o.label for o in item.options] else None


def _yesno(text: str) -> str | None:
    found = {w.lower() for w in re.findall(r"\b(yes|no)\b", text, re.IGNORECASE)}
    return found.pop() if len(found) == 1 else None


def _interpret(candidate: str, item: Item, *, whole: bool) -> str | None:
    if item.answer_type == "mcq":
        labels = [o.label for o in item.options]
        return (_label(candidate, labels) or _option_text(candidate, item)
                or (_bare_letters(candidate, labels) if not whole else None))
    if item.answer_type == "yesno":
        return _yesno(candidate)
    return _open(candidate, item, whole=whole)


def _open(candidate: str, item: Item, *, whole: bool) -> str | None:
    gold = [normalise(a) for a in [item.answer, *item.answer_aliases]]
    norm = normalise(candidate)
    if not norm:
        return None
    if norm in gold:
        return norm
    if _NUMBER.fullmatch(normalise(item.answer) or "x"):  # numeric answer: the one number given
        nums = set(_NUMBER.findall(norm))
        return nums.pop() if len(nums) == 1 else None
    if whole:  # a short free-text reply naming a gold answer as a phrase counts as that answer
        hits = [g for g in gold if g and re.search(rf"\b{re.escape(g)}\b", norm)]
        if hits and len(norm.split()) <= SHORT_REPLY_WORDS:
            return hits[0]
    return norm


def extract(response: str, item: Item) -> str | None:
    """The answer the response gives for ``item``, or None when it gives none unambiguously."""
    tags = _TAG.findall(response)
    if tags:
        return _interpret(tags[-1], item, whole=False) or _interpret(tags[-1], item, whole=True)
    for m in reversed(_JSON.findall(response)):
        got = _interpret(m, item, whole=False)
        if got:
            return got
    body = re.sub(r"<think>.*?</think>", " ", response, flags=re.DOTALL | re.IGNORECASE)
    for m in reversed(_PHRASE.findall(body)):
        got = _leading_label(m, item) or _interpret(m, item, whole=False)
        if got:
            return got
    if item.answer_type == "open":
        return _interpret(body, item, whole=True)
    return _interpret(body, item, whole=False) or _interpret(body, item, whole=True)


def is_correct(prediction: str, item: Item) -> bool:
    if item.answer_type == "mcq":
        return prediction == item.answer
    if item.answer_type == "yesno":
        return prediction.lower() == item.answer.strip().lower()
    gold = {normalise(a) for a in [item.answer, *item.answer_aliases]}
    if normalise(prediction) in gold:
        return True
    try:  # numeric open answers compare as numbers
        return any(abs(float(normalise(prediction)) - float(g)) < 1e-9 for g in gold if _NUMBER.fullmatch(g))
    except ValueError:
        return False
