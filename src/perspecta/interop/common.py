"""What every exporter needs: the dataset's items in a fixed order and the question
re-expressed for tools that put all images first.

Items carry one ``<image>`` marker per image inside the question (interleaved layouts
are data). VLMEvalKit and lmms-eval models show every image before the text, so for
them each marker becomes a textual reference ``[Image k]``; markers before any text are
dropped, since the images already come first there.
"""

from __future__ import annotations

import re
from pathlib import Path

from perspecta.dataset.item import IMAGE_MARKER, Item
from perspecta.run.dataset import EvalDataset, load_dataset

_LEADING_MARKERS = re.compile(rf"^(?:\s*{re.escape(IMAGE_MARKER)})+\s*")


def open_dataset(dataset: str | Path) -> EvalDataset:
    """Load a finished dataset directory (clear error if it is not one)."""
    return load_dataset(dataset)


def split_items(ds: EvalDataset, split: str) -> list[Item]:
    """Items of one split in dataset order; an error naming the splits present if empty."""
    return ds.select(split=split)


def image_ref(k: int) -> str:
    """How the text refers to the k-th image (0-based) once images are shown first."""
    return f"[Image {k + 1}]"


def images_first_text(question: str) -> str:
    """The question for images-first consumers: leading markers dropped, others -> ``[Image k]``."""
    n_leading = _LEADING_MARKERS.match(question)
    skipped = n_leading.group(0).count(IMAGE_MARKER) if n_leading else 0
    body = question[n_leading.end():] if n_leading else question
    parts = body.split(IMAGE_MARKER)
    out = parts[0]
    for k, part in enumerate(parts[1:], start=skipped):
        out += image_ref(k) + part
    return out.strip()


def interleaved_parts(question: str) -> list[tuple[str, str | int]]:
    """The question as ordered ``("text", s)`` / ``("image", k)`` parts (empty text dropped)."""
    parts: list[tuple[str, str | int]] = []
    for k, chunk in enumerate(question.split(IMAGE_MARKER)):
        if k:
            parts.append(("image", k - 1))
        if chunk.strip():
            parts.append(("text", chunk.strip()))
    return parts


def option_text(item: Item, label: str) -> str:
    """An option as text: its own text, or a reference to the image it shows."""
    opt = item.option(label)
    if opt.text is not None:
        return opt.text
    if opt.image is not None:
        return image_ref(opt.image)
    raise ValueError(f"item {item.id}: option {label} has neither text nor image")
