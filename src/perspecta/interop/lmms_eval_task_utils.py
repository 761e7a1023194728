"""Functions of the lmms-eval task that ``perspecta export --to lmms-eval`` writes.

This file is copied unchanged into the task folder as ``perspecta_utils.py`` and runs
inside lmms-eval's environment, so it imports nothing from perspecta. Its score is a
quick look only (an exact match of the option letter / yes-no / answer after trimming
``<answer>`` tags and punctuation); the reference scores come from importing the
``--log_samples`` file: ``perspecta import-predictions FILE --format lmms-eval``, which
runs our full answer extraction and every suite metric. ``process_results`` logs the
item id with each sample so that import is exact.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.IGNORECASE | re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)


def doc_to_visual(doc):
    """The item's images in order, as RGB PIL images (decoded by ``datasets``)."""
    return [image.convert("RGB") for image in doc["images"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The question with images referenced as ``[Image k]`` (models show the images first)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt_text']}{kwargs.get('post_prompt', '')}"


def doc_to_target(doc):
    return doc["answer"]


def _short_answer(response: str) -> str:
    tags = _TAG.findall(response)
    text = tags[-1] if tags else _THINK.sub(" ", response)
    return re.sub(r"[\s\.\(\)\*:]+", " ", text).strip().lower()


def process_results(doc, results):
    """One sample's quick exact-match score, with the item id for the import."""
    response = results[0] if results else ""
    gold = {doc["answer"].strip().lower(), *(a.strip().lower() for a in doc["answer_aliases"])}
    correct = _short_answer(str(response)) in gold
    return {"perspecta_exact_match": {"id": doc["id"], "correct": bool(correct)}}


def aggregate_exact_match(results):
    return sum(r["correct"] for r in results) / len(results) if results else 0.0
