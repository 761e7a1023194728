"""Supervised fine-tuning export: the train split as conversation JSONL in TRL's VLM format.

TRL 1.16's ``SFTTrainer`` (``DataCollatorForVisionLanguageModeling``) takes an ``images``
column and ``messages`` whose user turn holds ``{"type": "image"}`` placeholders, filled
in order from ``images``. One line per item::

    {"id": ..., "images": ["/abs/path/a.png", ...],
     "messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": ...}, ...]},
                  {"role": "assistant", "content": [{"type": "text", "text": "<gold answer>"}]}]}

The user content interleaves text and placeholders exactly where the question's
``<image>`` markers are. Image paths are absolute (they point into the dataset); load with
``datasets.load_dataset("json", data_files=...)`` then ``.cast_column("images",
List(Image()))``. The assistant turn is the gold answer as the item states it (option
letter, yes/no, or short answer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perspecta.dataset.io import write_jsonl_atomic
from perspecta.dataset.item import Item
from perspecta.interop.common import interleaved_parts, open_dataset

TRAIN = "train"


def user_content(item: Item) -> list[dict[str, Any]]:
    """The question as TRL content parts: text and ``{"type": "image"}`` placeholders in order."""
    return [{"type": "image"} if kind == "image" else {"type": "text", "text": value}
            for kind, value in interleaved_parts(item.question)]


def sft_record(item: Item, root: Path) -> dict[str, Any]:
    return {
        "id": item.id,
        "images": [str((root / p).resolve()) for p in item.images],
        "messages": [
            {"role": "user", "content": user_content(item)},
            {"role": "assistant", "content": [{"type": "text", "text": item.answer}]},
        ],
    }


def export_sft(dataset: str | Path, out: str | Path) -> dict[str, Any]:
    """Write the train split to ``out`` (a .jsonl file, or ``out/train.jsonl`` for a directory)."""
    ds = open_dataset(dataset)
    items = [it for it in ds.items if it.split == TRAIN]
    if not items:
        have = ", ".join(sorted({it.split for it in ds.items})) or "none"
        raise ValueError(f"{ds.root}: no train split to export (splits present: {have}); generate with "
                         "--split train=0.8,test=0.2")
    out = Path(out)
    path = out if out.suffix == ".jsonl" else out / "train.jsonl"
    n = write_jsonl_atomic(path, (sft_record(it, ds.root) for it in items))
    return {"items": n, "path": str(path)}


def prompt_completion_rows(dataset: str | Path, split: str = TRAIN, suites: list[str] | None = None,
                           tasks: list[str] | None = None) -> list[dict[str, Any]]:
    """The chosen items as TRL prompt-completion rows (``prompt`` = the user turn, ``completion`` =
    the gold answer, ``images`` = paths), so ``perspecta train sft`` puts the loss on the answer only."""
    from perspecta.interop.grpo import select_items

    root, items = select_items(dataset, split, suites, tasks)
    rows = []
    for it in items:
        rec = sft_record(it, root)
        rows.append({"id": it.id, "images": rec["images"], "prompt": rec["messages"][:1],
                     "completion": rec["messages"][1:]})
    return rows
