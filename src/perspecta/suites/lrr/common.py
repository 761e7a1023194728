"""What every LRR task shares: image sizes, the yes/no balance, prompt endings, the item.

LRR asks only yes/no questions, each task exactly half "yes": a unit's answer is
fixed by its index parity *before* any geometry is drawn, and the generator then
builds the scene that makes it true. The paper evaluates two prompt modes (answer
directly; reason first); items carry the direct wording and :func:`question_for_mode`
swaps the closing instruction for the other mode.
"""

from __future__ import annotations

from typing import Any

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.suites.context import TaskContext

SUITE = "lrr"
FRAME_LABELS = ("A", "B", "C", "D")
VIEW_SIZE = 512  # the paper's input size for every task ...

DIRECT = 'Answer with one word: "Yes" or "No".'
REASON = 'Think it through step by step first, then finish with a last line that reads "Answer: Yes" or "Answer: No".'
PROMPT_MODES = {"direct": DIRECT, "reason": REASON}


def view_size(ctx: TaskContext) -> int:
    """Side of a single view: the suite config ``view_size``, else ``--image-size``, else
    the paper's 512."""
    return int(ctx.config.get("view_size", ctx.config.get("image_size", VIEW_SIZE)))


def composite_size(ctx: TaskContext) -> int:
    """Side of the Pos-C grid: ``composite_size``, else twice the view side (the paper's 1024)."""
    return int(ctx.config.get("composite_size", 2 * view_size(ctx)))


def wants_yes(ctx: TaskContext) -> bool:
    """Even units are "yes", odd units "no": any even n gives an exact 50/50 split."""
    return ctx.index % 2 == 0


def labelled_images(n: int) -> str:
    """"Image A: <image>" lines, one per frame, in order."""
    return "\n".join(f"Image {FRAME_LABELS[i]}: {IMAGE_MARKER}" for i in range(n))


def question_for_mode(question: str, mode: str) -> str:
    """The same question with the closing instruction of prompt mode ``direct`` or ``reason``."""
    if mode not in PROMPT_MODES:
        raise ValueError(f"unknown LRR prompt mode {mode!r}; use one of {', '.join(PROMPT_MODES)}")
    if not question.endswith(DIRECT):
        raise ValueError("not an LRR question (it does not end with the direct-answer instruction)")
    return question[: -len(DIRECT)] + PROMPT_MODES[mode]


def yesno_item(
    ctx: TaskContext,
    *,
    variant: str,
    body: str,
    images: list[str],
    answer: bool,
    scene_id: str,
    metadata: dict[str, Any],
    subtype: str = "",
) -> Item:
    """A yes/no LRR item; ``body`` holds the "<image>" markers and the question."""
    if body.count(IMAGE_MARKER) != len(images):
        raise ValueError(f"{body.count(IMAGE_MARKER)} image markers for {len(images)} images")
    return Item(
        id=ctx.item_id(variant),
        suite=SUITE,
        task=ctx.task,
        subtype=subtype or ctx.task,
        question=f"{body} {DIRECT}",
        images=images,
        options=[],
        answer_type="yesno",
        answer="yes" if answer else "no",
        group=ctx.item_id("base"),
        variant=variant,
        split=ctx.split,  # type: ignore[arg-type]
        scene_id=scene_id,
        seed=ctx.seed,
        metadata={**metadata, "prompt_mode": "direct"},
    )


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"
