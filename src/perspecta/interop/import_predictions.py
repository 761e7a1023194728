"""Predictions made by lmms-eval or VLMEvalKit on our exports -> our ``results.jsonl``.

Each response is scored by :func:`perspecta.score.scoring.score_response`, the function
our runner uses, so accuracy, κ, consistency, soft accuracy and every other suite
metric come out exactly as for a run of ``perspecta eval`` with the same answers.

* lmms-eval ``--log_samples`` JSONL (0.7.x, ``<date>_samples_<task>.jsonl``): one object
  per document with ``doc_id``, ``target``, ``filtered_resps`` (the response the task
  scored; a string, or a list for repeats) and the task's ``process_results`` entries,
  where our task logs the item id. Rows without that id fall back to ``doc_id``, the
  position in the exported split.
* VLMEvalKit prediction files (``<model>_<dataset>.tsv``/``.csv``/``.xlsx``): every column
  of our TSV but the image, plus ``prediction``. Items are found by ``id``, else by
  ``index`` (the position in the exported split). ``.xlsx`` needs pandas and openpyxl.

An empty prediction becomes a ``failed`` record (no response), never a guess; so does every
item of the exported split the file has no row for (``missing_from_split`` in the result):
the score is over the split, not over what the other tool got round to. An id or index
that is not in the dataset is an error.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perspecta.dataset.io import write_jsonl_atomic
from perspecta.dataset.item import Item
from perspecta.interop.common import open_dataset, split_items
from perspecta.score.records import ScoredRecord
from perspecta.score.scoring import score_response

FORMATS = ("lmms-eval", "vlmevalkit")
LMMS_METRIC = "perspecta_exact_match"


class PredictionFileError(ValueError):
    """A prediction file cannot be read or does not match the dataset (message names the row)."""


def _lmms_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    yield f"{path}:{lineno}", json.loads(line)
                except json.JSONDecodeError as e:
                    raise PredictionFileError(f"{path}:{lineno}: invalid JSON ({e.msg})") from None


def _lmms_response(row: dict[str, Any]) -> str | None:
    resp = row.get("filtered_resps", row.get("resps"))
    while isinstance(resp, list):
        resp = resp[0] if resp else None
    return None if resp is None else str(resp)


def _vlm_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - pandas comes with the interop extra
            raise PredictionFileError(f"{path}: reading .xlsx needs pandas and openpyxl ({e})") from None
        try:
            frame = pd.read_excel(path, dtype=str, keep_default_na=False)
        except ImportError as e:
            raise PredictionFileError(f"{path}: reading .xlsx needs openpyxl (pip install openpyxl): {e}") from None
        for i, rec in enumerate(frame.to_dict(orient="records"), start=2):
            yield f"{path}:row {i}", rec
        return
    if suffix not in (".tsv", ".csv"):
        raise PredictionFileError(f"{path}: VLMEvalKit predictions must be .tsv, .csv or .xlsx")
    csv.field_size_limit(1 << 30)
    with open(path, encoding="utf-8", newline="") as fh:
        for i, rec in enumerate(csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ","), start=2):
            yield f"{path}:line {i}", rec


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


def import_predictions(file: str | Path, *, dataset: str | Path, fmt: str, model: str, out: str | Path,
                       split: str = "test", prompt_mode: str = "direct") -> dict[str, Any]:
    """Score a prediction file against ``dataset``; write ``OUT/results.jsonl`` (or OUT if it ends .jsonl)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown prediction format {fmt!r}; choose from {', '.join(FORMATS)}")
    file = Path(file)
    if not file.is_file():
        raise FileNotFoundError(f"{file}: prediction file not found")
    ds = open_dataset(dataset)
    by_id = {it.id: it for it in ds.items}
    order = split_items(ds, split)
    records: dict[str, ScoredRecord] = {}
    rows = _lmms_rows(file) if fmt == "lmms-eval" else _vlm_rows(file)
    for where, row in rows:
        item = _find_item(row, fmt, by_id, order, where)
        if fmt == "lmms-eval":
            response = _lmms_response(row)
        else:
            if "prediction" not in row:
                raise PredictionFileError(f"{where}: no 'prediction' column")
            response = None if _is_blank(row["prediction"]) else str(row["prediction"])
        if item.id in records:
            raise PredictionFileError(f"{where}: second prediction for item {item.id}")
        records[item.id] = score_response(item, model=model, response=response,
                                          error=None if response is not None else f"empty prediction in {file.name}",
                                          prompt_mode=prompt_mode)
    if not records:
        raise PredictionFileError(f"{file}: no predictions")
    # the exported split's items the file has no row for (the other tool's --limit, a crash): failed
    # records, so `perspecta score` counts them wrong instead of scoring only what was predicted
    missing = [it for it in order if it.id not in records]
    for it in missing:
        records[it.id] = score_response(it, model=model, response=None, prompt_mode=prompt_mode,
                                        error=f"no prediction in {file.name} for this item of split {split!r}")
    for rec in records.values():  # the run's identity in reports, as for `perspecta eval`
        rec.dataset = ds.fingerprint
    out = Path(out)
    path = out if out.suffix == ".jsonl" else out / "results.jsonl"
    ordered = [records[it.id] for it in ds.items if it.id in records]
    write_jsonl_atomic(path, ordered)
    return {"records": len(ordered), "missing_from_split": len(missing), "missing_recorded_as": "failed",
            "path": str(path)}


def _find_item(row: dict[str, Any], fmt: str, by_id: dict[str, Item], order: list[Item], where: str) -> Item:
    if fmt == "lmms-eval":
        logged = row.get(LMMS_METRIC)
        item_id = logged.get("id") if isinstance(logged, dict) else None
        position = row.get("doc_id")
    else:
        item_id = None if _is_blank(row.get("id")) else str(row["id"])
        position = row.get("index")
    if item_id is not None:
        if item_id not in by_id:
            raise PredictionFileError(f"{where}: item id {item_id!r} is not in the dataset")
        return by_id[item_id]
    try:
        k = int(float(position))  # xlsx/csv may give "3" or 3.0
    except (TypeError, ValueError):
        raise PredictionFileError(f"{where}: neither an item id nor a usable index/doc_id ({position!r})") from None
    if not 0 <= k < len(order):
        raise PredictionFileError(f"{where}: index {k} is outside the exported split ({len(order)} items)")
    return order[k]
