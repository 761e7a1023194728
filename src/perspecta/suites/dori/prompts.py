"""DORI's five-part structured prompt: TASK, CONTEXT (with numbered steps), OPTIONS,
FORMAT, EXAMPLES. The paper found that this scaffolding changes accuracy a lot, so
every DORI item uses it; the wording here is our own."""

from __future__ import annotations

from perspecta.dataset.item import IMAGE_MARKER, Option

CANNOT_DETERMINE = "Cannot be determined"

ANSWER_FORMAT = (
    'Reply with "answer": "<letter of the chosen option>" followed by '
    '"reasoning": "<step-by-step explanation that cites what you see in the image>".'
)


def structured_prompt(
    *, task: str, context: str, steps: list[str], options: list[Option], examples: list[str], n_images: int = 1
) -> str:
    step_text = " ".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))
    option_text = "\n".join(f"{o.label}. {o.text}" for o in options)
    example_text = "\n".join(f"- {e}" for e in examples)
    images = "\n".join([IMAGE_MARKER] * n_images)
    return (
        f"{images}\n"
        f"TASK: {task}\n\n"
        f"CONTEXT: {context} Work through these steps: {step_text}\n\n"
        f"OPTIONS:\n{option_text}\n\n"
        f"FORMAT YOUR RESPONSE AS: {ANSWER_FORMAT}\n\n"
        f"EXAMPLES:\n{example_text}"
    )


def unstructured_prompt(*, task: str, options: list[Option], n_images: int = 1) -> str:
    """The paper's Table 7 ablation: the bare question and options, with no context,
    numbered steps or examples (the answer format stays so answers remain extractable)."""
    option_text = "\n".join(f"{o.label}. {o.text}" for o in options)
    images = "\n".join([IMAGE_MARKER] * n_images)
    return f"{images}\n{task}\n\nOPTIONS:\n{option_text}\n\nFORMAT YOUR RESPONSE AS: {ANSWER_FORMAT}"
