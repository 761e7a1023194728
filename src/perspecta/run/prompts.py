"""Prompt modes: the item's own question (direct), with step-by-step reasoning (cot),
or with separate think/answer sections (think). The suite's question already carries
its own format instructions; the reasoning modes add a closing instruction that asks
for the final answer in ``<answer>`` tags, which extraction reads first."""

from __future__ import annotations

from perspecta.dataset.item import Item

PROMPT_MODES = ("direct", "cot", "think")


def _answer_example(item: Item) -> str:
    if item.answer_type == "mcq":
        return "the letter of your chosen option, e.g. <answer>B</answer>"
    if item.answer_type == "yesno":
        return "yes or no, e.g. <answer>no</answer>"
    return "a short answer, e.g. <answer>3</answer>"


def build_prompt(item: Item, mode: str) -> str:
    if mode == "direct":
        return item.question
    if mode == "cot":
        return (f"{item.question}\n\nWork through the question step by step, describing what you see, "
                f"and only then state your final answer inside <answer></answer> tags: {_answer_example(item)}.")
    if mode == "think":
        return (f"{item.question}\n\nFirst reason privately inside <think></think> tags. After the closing "
                f"</think>, give only the final answer inside <answer></answer> tags: {_answer_example(item)}.")
    raise ValueError(f"unknown prompt mode {mode!r}; choose from {', '.join(PROMPT_MODES)}")
