"""VLMEvalKit export: custom-dataset TSVs that VLMEvalKit's own loaders read unmodified.

VLMEvalKit picks a loader from a TSV's columns (``vlmeval/dataset/__init__.py``,
``build_dataset``): ``A``/``B`` columns plus ``image`` make a ``CustomMCQDataset``;
anything else a ``CustomVQADataset``. Yes/no items use ``ImageYORNDataset``'s format
(answers ``Yes``/``No``), which a custom name reaches through ``--data-config``. So
one split becomes up to three files in ``OUT`` (the ``LMUData`` directory)::

    <NAME>_MCQ.tsv        index, image, question, A.., answer (letter), category, l2-category, split, id, ...
    <NAME>_YORN.tsv       index, image, question, answer (Yes/No), category, l2-category, split, id, ...
    <NAME>_OpenEnded.tsv  index, image, question, answer, ... ("OpenEnded" in the name makes VLMEvalKit
                          treat it as VQA; it has no evaluator there: score with `perspecta import-predictions`)
    vlmevalkit_data_config.json   the --data-config entries for the three names

``image`` is a base64 PNG, or for several images the string form of a Python list of
base64 strings (VLMEvalKit's ``toliststr`` evaluates it), with ``image_path`` naming the
files VLMEvalKit decodes them to (``dump_image`` needs names for multi-image rows).
``index`` is the item's position in the exported split, unique across the three files,
and ``id`` is our item id; VLMEvalKit copies every column but ``image`` into its
prediction files, so either maps a prediction back to its item.

VLMEvalKit shows all images before the text, so ``question`` refers to images as
``[Image k]`` (:func:`perspecta.interop.common.images_first_text`). It keeps the item's
own option list and answer instructions; VLMEvalKit's MCQ prompt lists the options again.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from PIL import Image

from perspecta.dataset.item import Item
from perspecta.interop.common import images_first_text, open_dataset, option_text, split_items

# strings pandas.read_csv (VLMEvalKit's TSV reader) turns into NaN: an option or answer
# spelled like this would silently vanish, so the export refuses it
PANDAS_NA_STRINGS = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                     "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
KINDS = {"mcq": "MCQ", "yesno": "YORN", "open": "OpenEnded"}
LOADER_CLASS = {"MCQ": "CustomMCQDataset", "YORN": "ImageYORNDataset", "OpenEnded": "CustomVQADataset"}


def default_name(dataset: str | Path) -> str:
    """``Perspecta_<dir name>`` with only letters, digits and underscores.

    VLMEvalKit reads meaning into names ("video" selects video loaders, "openended" VQA),
    so those words are removed from the directory part.
    """
    stem = re.sub(r"[^A-Za-z0-9]+", "_", Path(dataset).resolve().name).strip("_") or "dataset"
    stem = re.sub(r"(?i)video|openended", "", stem).strip("_") or "dataset"
    return f"Perspecta_{stem}"


def png_base64(path: Path) -> str:
    """The image as a base64 RGB PNG (RGB so VLMEvalKit can re-save it as the .jpg it names single images)."""
    with Image.open(path) as im:
        rgb = im.convert("RGB")
    buf = io.BytesIO()
    rgb.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _row(index: int, item: Item, root: Path) -> dict[str, Any]:
    images = [png_base64(root / p) for p in item.images]
    if not images:
        raise ValueError(f"item {item.id}: VLMEvalKit image datasets need at least one image")
    row: dict[str, Any] = {"index": index}
    if len(images) == 1:
        row["image"] = images[0]
        row["image_path"] = f"{index}.png"
    else:
        row["image"] = repr(images)
        row["image_path"] = repr([f"{index}_{k}.png" for k in range(len(images))])
    row["question"] = images_first_text(item.question)
    if item.answer_type == "mcq":
        for o in item.options:
            row[o.label] = option_text(item, o.label)
        row["answer"] = item.answer
    elif item.answer_type == "yesno":
        row["answer"] = item.answer.strip().capitalize()
    else:
        row["answer"] = item.answer
    row.update({"category": f"{item.suite}/{item.task}", "l2-category": item.suite, "split": item.split,
                "id": item.id, "subtype": item.subtype})
    for key in ("answer", *(o.label for o in item.options)):
        if str(row[key]).strip() in PANDAS_NA_STRINGS:
            raise ValueError(f"item {item.id}: {key} {row[key]!r} would be read as missing by VLMEvalKit (pandas)")
    return row


def _write_tsv(path: Path, rows: list[dict[str, Any]]) -> None:
    columns: list[str] = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    letters = sorted(c for c in columns if len(c) == 1 and c.isupper())
    fixed = ["index", "image", "image_path", "question", *letters, "answer", "category", "l2-category", "split"]
    columns = [c for c in fixed if c in columns] + [c for c in columns if c not in fixed]
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow(["" if r.get(c) is None else r.get(c, "") for c in columns])
    tmp.replace(path)


def export_vlmevalkit(dataset: str | Path, out: str | Path, *, split: str = "test",
                      name: str | None = None) -> dict[str, Any]:
    """Write the TSVs of one split (see module docstring); return ``{"files": {name: rows}, ...}``."""
    ds = open_dataset(dataset)
    name = name or default_name(dataset)
    items = split_items(ds, split)
    groups: dict[str, list[dict[str, Any]]] = {}
    for index, item in enumerate(items):
        groups.setdefault(KINDS[item.answer_type], []).append(_row(index, item, ds.root))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, int] = {}
    config: dict[str, Any] = {}
    for kind in KINDS.values():
        if kind not in groups:
            continue
        data_name = f"{name}_{kind}"
        _write_tsv(out / f"{data_name}.tsv", groups[kind])
        files[data_name] = len(groups[kind])
        config[data_name] = {"class": LOADER_CLASS[kind], "dataset": data_name}
    (out / "vlmevalkit_data_config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return {"files": files, "split": split, "path": str(out)}
