"""An item as a person needs to see it.

An item's ``question`` is the full model prompt: images as ``<image>`` markers, the
options written out, and instructions meant for models (answer formats, "think inside
<think> tags", step lists). People get the same question, minus that boilerplate, with
images in place, the options as buttons or labelled image tiles, and the untouched
prompt one click away. Images that are options (view selection, mental rotation,
identity matching) appear only as option tiles; images stay in prompt order; 2:1
images are equirectangular panoramas and are shown scrollable and zoomable.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from perspecta.dataset.item import IMAGE_MARKER, Item

# Sentences written for models only; each pattern removes from its match to the end of the line.
_MODEL_ONLY = [
    re.compile(p, re.IGNORECASE) for p in (
        r"Answer with a single capital letter\b.*$",
        r"Answer with one word:.*$",
        r"Think it through inside <think>.*$",
        r"FORMAT YOUR RESPONSE AS:.*$",
        r"Work through these steps:.*$",
    )
]
_OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+(.*)$")
_OPTIONS_HEADER = re.compile(r"^\s*OPTIONS:\s*$")
_CAPTION = re.compile(rf"^\s*([^<]{{1,40}}?):?\s*{re.escape(IMAGE_MARKER)}\s*$")

YESNO = [{"label": "yes", "text": "Yes", "key": "Y"}, {"label": "no", "text": "No", "key": "N"}]


def _strip_model_only(line: str) -> str:
    for pattern in _MODEL_ONLY:
        line = pattern.sub("", line)
    return line.rstrip()


def _is_option_line(line: str, item: Item) -> bool:
    m = _OPTION_LINE.match(line)
    return bool(m) and m.group(1) in {o.label for o in item.options}


def present(item: Item, image_url: Callable[[str], str], is_panorama: Callable[[str], bool]) -> dict[str, Any]:
    """JSON for the page: ``blocks`` (text paragraphs and image rows, in prompt order),
    ``choices`` (what can be answered) and ``prompt`` (the original question)."""
    option_images = {o.image for o in item.options if o.image is not None}

    def image(index: int, caption: str) -> dict[str, Any]:
        rel = item.images[index]
        return {"index": index, "url": image_url(rel), "panorama": is_panorama(rel), "caption": caption}

    blocks: list[dict[str, Any]] = []
    marker = 0
    stem_images = [i for i in range(len(item.images)) if i not in option_images]
    ordinal = {idx: f"image {n + 1}" for n, idx in enumerate(stem_images)} if len(stem_images) > 1 else {}
    for line in item.question.split("\n"):
        n = line.count(IMAGE_MARKER)
        indices = list(range(marker, marker + n))
        marker += n
        if _OPTIONS_HEADER.match(line) or _is_option_line(line, item):
            continue
        caption = _CAPTION.match(line)
        if n == 1 and caption:  # "Image A: <image>" -> an image captioned "Image A"
            if indices[0] not in option_images:
                _add_images(blocks, [image(indices[0], caption.group(1).strip())])
            continue
        parts = line.split(IMAGE_MARKER)
        for k, text in enumerate(parts):
            text = _strip_model_only(text)
            if text.strip():
                _add_text(blocks, text.strip())
            if k < len(indices) and indices[k] not in option_images:
                _add_images(blocks, [image(indices[k], ordinal.get(indices[k], ""))])
        if not line.strip():
            _add_text(blocks, "")
    blocks = [b for b in blocks if b["kind"] != "text" or b["text"].strip()]
    return {
        "id": item.id, "suite": item.suite, "task": item.task, "subtype": item.subtype,
        "answer_type": item.answer_type, "blocks": blocks, "choices": _choices(item, image),
        "prompt": item.question,
    }


def _add_text(blocks: list[dict[str, Any]], text: str) -> None:
    """Consecutive lines form one paragraph; an empty line ends it."""
    if blocks and blocks[-1]["kind"] == "text" and blocks[-1]["text"] and text:
        blocks[-1]["text"] += "\n" + text
    else:
        blocks.append({"kind": "text", "text": text})


def _add_images(blocks: list[dict[str, Any]], images: list[dict[str, Any]]) -> None:
    """Images with no text between them share one row (a sequence reads left to right)."""
    if blocks and blocks[-1]["kind"] == "images":
        blocks[-1]["images"].extend(images)
    elif blocks and blocks[-1]["kind"] == "text" and not blocks[-1]["text"] and len(blocks) > 1 \
            and blocks[-2]["kind"] == "images":
        blocks.pop()
        blocks[-1]["images"].extend(images)
    else:
        blocks.append({"kind": "images", "images": images})


def _choices(item: Item, image: Callable[[int, str], dict[str, Any]]) -> list[dict[str, Any]]:
    if item.answer_type == "yesno":
        return [dict(c) for c in YESNO]
    if item.answer_type == "open":
        return []
    out = []
    for n, o in enumerate(item.options):
        choice: dict[str, Any] = {"label": o.label, "text": o.text or "", "key": o.label, "number": n + 1}
        if o.image is not None:
            choice["image"] = image(o.image, o.label)
        out.append(choice)
    return out
