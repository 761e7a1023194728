"""GRPO reward functions for PCSR training (paper section 5.2), usable as TRL
``GRPOTrainer`` reward functions: ``fn(completions, **columns) -> list[float]``.

``completions`` are strings or conversational messages (``[{"role": "assistant",
"content": ...}]``); the other arguments are dataset columns, one value per completion:
``answer`` (required for accuracy), and optionally ``answer_type``, ``answer_aliases``,
``options`` (label -> text) and ``candidates`` (or a ``metadata`` dict holding them,
as in ``items.jsonl``).

* ``accuracy_reward`` (R_acc): 1 if the extracted answer matches the gold answer with
  the task-aware relaxed matcher (option letters or option text for MCQ, number words
  for counts, direction intents, synonyms), else 0.
* ``format_reward`` (R_fmt): a graded structure score in [0, 1]: a non-empty think
  block, then a non-empty answer block after it, nothing but whitespace outside the
  two, each tag exactly once, and a short answer (one word or number, at most
  ``MAX_ANSWER_WORDS`` words).
* ``reasoning_reward`` (R_reason): does the reasoning's final conclusion agree with
  the answer? The last candidate answer named in the think block must be the one in
  the answer block (1); a different one scores 0; a think block that names no
  candidate scores 0.5 (no evidence either way); missing blocks score 0.
* ``combined_reward`` / ``make_reward``: ``l1 R_acc + l2 R_fmt + l3 R_reason`` with the
  paper's weight sets ``WEIGHTS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from perspecta.suites.pcsr.scoring import (
    contains,
    synonyms,
    canonical,
    extract_answer,
    relaxed_match,
)

MAX_ANSWER_WORDS = 3
WEIGHTS: dict[str, tuple[float, float, float]] = {
    "main": (0.6, 0.2, 0.2),
    "reason_free": (0.5, 0.5, 0.0),
    "balanced": (0.4, 0.4, 0.2),
    "no_reason": (0.75, 0.25, 0.0),
}

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
_ANSWER_BLOCK = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_ANY_TAG = re.compile(r"</?\s*(think|answer)\s*>", re.IGNORECASE)

RewardFn = Callable[..., list[float]]


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or the content of the last message."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    if isinstance(completion, Sequence) and completion:
        return completion_text(completion[-1])
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


def _column(kwargs: dict[str, Any], name: str, n: int, default: Any = None) -> list[Any]:
    """A per-completion column; metadata dicts are searched too. Scalars are broadcast."""
    value = kwargs.get(name)
    if value is None and "metadata" in kwargs and kwargs["metadata"] is not None:
        metas = kwargs["metadata"]
        metas = metas if isinstance(metas, list) else [metas] * n
        value = [(m or {}).get(name, default) for m in metas]
    if value is None:
        return [default] * n
    if isinstance(value, (str, dict)) or not isinstance(value, Sequence):
        return [value] * n
    if len(value) != n:
        raise ValueError(f"column {name!r} has {len(value)} values for {n} completions")
    return list(value)


def accuracy_one(text: str, answer: str, answer_type: str = "open", aliases: Sequence[str] = (),
                 options: dict[str, str] | None = None, candidates: Sequence[str] = ()) -> float:
    pred = extract_answer(text)
    ok = relaxed_match(pred, answer, answer_type=answer_type or "open", aliases=aliases or (),
                       options=options, candidates=candidates or ())
    return 1.0 if ok else 0.0


def format_one(text: str) -> float:
    """Graded think/answer structure score in [0, 1] (see module docstring)."""
    thinks = _THINK_BLOCK.findall(text)
    answers = _ANSWER_BLOCK.findall(text)
    score = 0.0
    t_match = _THINK_BLOCK.search(text)
    if t_match and t_match.group(1).strip():
        score += 0.25
    # the answer block must come after the think block, not inside it
    a_after = _ANSWER_BLOCK.search(text, t_match.end()) if t_match else None
    if a_after and a_after.group(1).strip():
        score += 0.25
    else:
        return score
    outside = _THINK_BLOCK.sub("", text)
    outside = _ANSWER_BLOCK.sub("", outside)
    tags = _ANY_TAG.findall(text)
    if len(thinks) == 1 and len(answers) == 1 and len(tags) == 4 and not outside.strip():
        score += 0.25
    if len(a_after.group(1).split()) <= MAX_ANSWER_WORDS and not _ANY_TAG.search(a_after.group(1)):
        score += 0.25
    return score


def reasoning_one(text: str, answer_type: str = "open", options: dict[str, str] | None = None,
                  candidates: Sequence[str] = ()) -> float:
    """Consistency of the think block's last-named candidate with the answer block."""
    t = _THINK_BLOCK.search(text)
    given = extract_answer(text)
    if t is None or given is None or not _ANSWER_BLOCK.search(text, t.end()):
        return 0.0
    names: dict[str, str] = {}  # canonical surface form -> the candidate it names
    if answer_type == "mcq" and options:
        for label, opt in options.items():
            for s in synonyms(opt):
                names[s] = label
    for c in candidates:
        for s in synonyms(c):
            names.setdefault(s, canonical(c))
    thought = canonical(t.group(1))
    last, last_pos = None, -1
    for surface, target in names.items():
        for m in re.finditer(rf"(?<!\w){re.escape(surface)}(?!\w)", thought):
            if m.start() > last_pos or (m.start() == last_pos and len(surface) > len(last or "")):
                last, last_pos = target, m.start()
    if last is None:
        return 0.5
    if answer_type == "mcq" and options:
        picked = relaxed_match(given, last, answer_type="mcq", options=options)
    else:
        g = canonical(given)
        picked = last in synonyms(given) or g == last or contains(g, last)
    return 1.0 if picked else 0.0


def accuracy_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """R_acc for TRL: 1.0 per completion whose answer matches (task-aware relaxed match)."""
    n = len(completions)
    answers = _column(kwargs, "answer", n)
    if any(a is None for a in answers):
        raise ValueError("accuracy_reward needs the dataset's 'answer' column")
    types = _column(kwargs, "answer_type", n, "open")
    aliases = _column(kwargs, "answer_aliases", n, [])
    options = _column(kwargs, "options", n, None)
    cands = _column(kwargs, "candidates", n, [])
    return [
        accuracy_one(completion_text(c), str(a), t, al, _options_map(o), cd)
        for c, a, t, al, o, cd in zip(completions, answers, types, aliases, options, cands)
    ]


def format_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """R_fmt for TRL: graded think/answer structure score per completion."""
    return [format_one(completion_text(c)) for c in completions]


def reasoning_reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """R_reason for TRL: does the reasoning's conclusion agree with the answer?"""
    n = len(completions)
    types = _column(kwargs, "answer_type", n, "open")
    options = _column(kwargs, "options", n, None)
    cands = _column(kwargs, "candidates", n, [])
    return [reasoning_one(completion_text(c), t, _options_map(o), cd) for c, t, o, cd in zip(completions, types, options, cands)]


def combined_reward(completions: Sequence[Any], weights: str | tuple[float, float, float] = "main", **kwargs: Any) -> list[float]:
    """r = l1 R_acc + l2 R_fmt + l3 R_reason (paper eq. 6); ``weights`` names a set in WEIGHTS."""
    l1, l2, l3 = WEIGHTS[weights] if isinstance(weights, str) else weights
    acc = accuracy_reward(completions, **kwargs)
    fmt = format_reward(completions, **kwargs)
    rea = reasoning_reward(completions, **kwargs) if l3 else [0.0] * len(completions)
    return [l1 * a + l2 * f + l3 * r for a, f, r in zip(acc, fmt, rea)]


def make_reward(weights: str | tuple[float, float, float] = "main") -> RewardFn:
    """A named single reward function (TRL logs rewards by ``__name__``)."""
    if isinstance(weights, str) and weights not in WEIGHTS:
        raise ValueError(f"unknown weight set {weights!r}; choose from {sorted(WEIGHTS)}")

    def reward(completions: Sequence[Any], **kwargs: Any) -> list[float]:
        return combined_reward(completions, weights=weights, **kwargs)

    reward.__name__ = f"pcsr_reward_{weights if isinstance(weights, str) else '_'.join(map(str, weights))}"
    return reward


def _options_map(options: Any) -> dict[str, str] | None:
    """Options as label -> text, from a dict or the item's [{"label", "text"}] list."""
    if options is None or isinstance(options, dict):
        return options or None
    out = {o["label"]: o.get("text", "") for o in options if isinstance(o, dict) and "label" in o}
    return out or None
