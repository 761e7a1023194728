"""Hugging Face ``datasets`` export: one parquet file per split, images embedded.

Layout::

    OUT/data/<split>.parquet   every item field; images as a list of ``Image`` features
    OUT/README.md              dataset card whose ``configs`` let ``load_dataset(OUT)`` work

Columns: the item's scalar fields as strings/ints; ``images`` is ``List(Image())`` (PNG
bytes embedded, so the parquet is self-contained) beside ``image_paths`` (the paths
inside the source dataset); ``options`` is a list of ``{label, text, image}`` structs
(``text`` or ``image`` null as in the item); ``prompt_text`` is the question for
images-first consumers (see :mod:`perspecta.interop.common`). ``metadata`` is a JSON
string: its keys differ between suites and tasks, and one Arrow struct type cannot hold
them all without a sea of nulls.

Loading offline::

    datasets.load_dataset("parquet", data_files={"test": "OUT/data/test.parquet"})
    datasets.load_dataset("OUT")   # reads the card's configs
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perspecta.dataset.item import Item
from perspecta.interop.common import images_first_text, open_dataset

SPLIT_ORDER = ("train", "val", "test")


def hf_features() -> Any:
    from datasets import Features, Image, List, Value

    return Features({
        "id": Value("string"), "suite": Value("string"), "task": Value("string"),
        "question": Value("string"), "prompt_text": Value("string"),
        "images": List(Image()), "image_paths": List(Value("string")),
        "answer_type": Value("string"), "answer": Value("string"), "subtype": Value("string"),
        "granularity": Value("string"),
        "options": List({"label": Value("string"), "text": Value("string"), "image": Value("int32")}),
        "answer_aliases": List(Value("string")), "group": Value("string"), "variant": Value("string"),
        "split": Value("string"), "scene_id": Value("string"), "seed": Value("int64"),
        "metadata": Value("string"),
    })


def hf_row(item: Item, root: Path) -> dict[str, Any]:
    """One item as a row of :func:`hf_features` (image bytes read from ``root``)."""
    return {
        "id": item.id, "suite": item.suite, "task": item.task, "question": item.question,
        "prompt_text": images_first_text(item.question),
        "images": [{"bytes": (root / p).read_bytes(), "path": Path(p).name} for p in item.images],
        "image_paths": list(item.images), "answer_type": item.answer_type, "answer": item.answer,
        "subtype": item.subtype, "granularity": item.granularity,
        "options": [{"label": o.label, "text": o.text, "image": o.image} for o in item.options],
        "answer_aliases": list(item.answer_aliases), "group": item.group, "variant": item.variant,
        "split": item.split, "scene_id": item.scene_id, "seed": item.seed,
        "metadata": json.dumps(item.metadata, sort_keys=True, ensure_ascii=False),
    }


def export_hf(dataset: str | Path, out: str | Path) -> dict[str, Any]:
    """Write ``OUT/data/<split>.parquet`` for every split present and a dataset card."""
    from datasets import Dataset

    ds = open_dataset(dataset)
    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    splits = [s for s in SPLIT_ORDER if any(it.split == s for it in ds.items)]
    counts: dict[str, int] = {}
    features = hf_features()
    for split in splits:
        items = [it for it in ds.items if it.split == split]
        rows = [hf_row(it, ds.root) for it in items]
        table = Dataset.from_list(rows, features=features)
        path = out / "data" / f"{split}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        table.to_parquet(str(tmp))
        tmp.replace(path)
        counts[split] = len(rows)
    (out / "README.md").write_text(_card(ds.root, counts), encoding="utf-8")
    return {"splits": counts, "path": str(out)}


def _card(source: Path, counts: dict[str, int]) -> str:
    configs = "\n".join(f"  - split: {s}\n    path: data/{s}.parquet" for s in counts)
    return (f"---\nconfigs:\n- config_name: default\n  data_files:\n{configs}\n---\n\n"
            f"# {source.name} (Perspecta export)\n\n"
            f"Exported by `perspecta export {source.name} --to hf`. Splits: "
            + ", ".join(f"{s} ({n} items)" for s, n in counts.items())
            + ".\n\n`metadata` is a JSON string (its keys differ between tasks); `images` holds the "
              "item's images in order, `prompt_text` the question with images referenced as "
              "`[Image k]` for tools that show all images first.\n")
