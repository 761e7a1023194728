"""Export spin items as SpinBench-style JSONL, so tools written for the released
SpinBench read our datasets.

Each line is ``{"problem", "answer", "images", "metadata"}`` (paper A.2.2): ``problem`` is
the question with its ``<image>`` tokens and lettered options, ``answer`` a single
capital letter, ``images`` paths relative to the dataset root, and
``metadata.task_type`` the paper's subtype name (e.g.
``infinigen_spatial_relation_grounding_left_right``), followed by our own fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perspecta.dataset.item import Item

SPIN = "spin"


def to_spinbench(item: Item) -> dict[str, Any]:
    if item.suite != SPIN:
        raise ValueError(f"item {item.id}: not a spin item (suite {item.suite!r})")
    if item.answer_type != "mcq" or len(item.answer) != 1 or not item.answer.isupper():
        raise ValueError(f"item {item.id}: SpinBench answers are single capital letters, got {item.answer!r}")
    task_type = item.metadata.get("paper_subtype")
    if not task_type:
        raise ValueError(f"item {item.id}: metadata.paper_subtype is missing")
    meta = {"task_type": task_type, "subtype": item.subtype, "id": item.id, "group": item.group,
            "variant": item.variant, "split": item.split}
    meta.update({k: v for k, v in item.metadata.items() if k not in ("frames", "camera", "paper_subtype")})
    return {"problem": item.question, "answer": item.answer, "images": list(item.images), "metadata": meta}


def export_spinbench(dataset: str | Path, out: str | Path) -> int:
    """Write ``out`` (JSONL) from the spin items of ``dataset``'s items.jsonl; return the count."""
    src = Path(dataset) / "items.jsonl"
    if not src.is_file():
        raise FileNotFoundError(f"{src}: not found (is {dataset} a generated dataset?)")
    lines = []
    for raw in src.read_text(encoding="utf-8").splitlines():
        d = json.loads(raw)
        if d.get("suite") == SPIN:
            lines.append(json.dumps(to_spinbench(Item.from_dict(d)), ensure_ascii=False))
    if not lines:
        raise ValueError(f"{src}: no spin items to export")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    return len(lines)
