"""Finding the inputs of a report: results logs, the dataset they were run on, and the
raw record lines, checked enough that a bad file fails with its path and line number.

Lines are yielded as parsed dicts (not :class:`ScoredRecord` objects): building a
dataclass per line would double the cost of a million-record report for nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perspecta import fastjson

RESULTS_FILE = "results.jsonl"
REQUIRED = ("item_id", "suite", "task", "model", "status")
STATUSES = ("ok", "unparsed", "failed")


class ReportInputError(ValueError):
    """A results log or dataset the report cannot use; the message names the file (and line)."""


def results_files(paths: list[Path]) -> list[Path]:
    """``results.jsonl`` of each RESULTS argument (a directory or the file itself)."""
    if not paths:
        raise ReportInputError("no results given: pass results directories or results.jsonl files")
    files = []
    for p in paths:
        f = p / RESULTS_FILE if p.is_dir() else p
        if not f.is_file():
            raise ReportInputError(f"{f}: results log not found (expected a results directory or a results.jsonl)")
        files.append(f)
    return files


def dataset_from_runs(files: list[Path]) -> Path | None:
    """The dataset directory named by the ``run-*.json`` files beside the results logs.

    The first one that still exists wins (runs of one report are normally on one dataset).
    """
    for f in files:
        for run in sorted(f.parent.glob("run-*.json")):
            try:
                ds = json.loads(run.read_text(encoding="utf-8")).get("dataset")
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                raise ReportInputError(f"{run}: not a valid run description (JSON object with 'dataset')") from None
            if ds and (Path(ds) / "manifest.json").is_file():
                return Path(ds)
    return None


def run_infos(files: list[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """(dataset fingerprint, model) -> the ``run-*.json`` written by ``perspecta eval`` beside the logs:
    the dataset, its suite configuration, the image sizes sent and (for the prior) where it learned."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for f in files:
        for run in sorted(f.parent.glob("run-*.json")):
            try:
                info = json.loads(run.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ReportInputError(f"{run}: not a valid run description (JSON object)") from None
            if isinstance(info, dict) and info.get("model"):
                out[(info.get("dataset_fingerprint") or "", info["model"])] = info
    return out


@dataclass
class Line:
    """One record line: its global index over all inputs, where it came from, and its fields."""

    index: int
    path: Path
    lineno: int
    record: dict[str, Any]


def iter_lines(files: list[Path], known_suites: set[str]) -> Iterator[Line]:
    """Parsed record lines of every file in order.

    An unterminated last line (a killed run) is skipped, as ``perspecta score`` does; any
    other unreadable line, a record missing a required field, an unknown status or an
    unregistered suite is a :class:`ReportInputError` naming the file and line.
    """
    index = 0
    for path in files:
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                try:
                    rec = fastjson.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    if not raw.endswith(b"\n"):  # the interrupted final line of a run
                        continue
                    raise ReportInputError(f"{path}:{lineno}: invalid JSON in results log") from None
                if not isinstance(rec, dict):
                    raise ReportInputError(f"{path}:{lineno}: a record must be a JSON object")
                missing = [k for k in REQUIRED if k not in rec]
                if missing:
                    raise ReportInputError(f"{path}:{lineno}: record lacks field(s) {', '.join(missing)}")
                if rec["status"] not in STATUSES:
                    raise ReportInputError(f"{path}:{lineno}: unknown status {rec['status']!r}")
                if rec["suite"] not in known_suites:
                    raise ReportInputError(f"{path}:{lineno}: unknown suite {rec['suite']!r} "
                                           f"(registered: {', '.join(sorted(known_suites))})")
                yield Line(index, path, lineno, rec)
                index += 1
