"""Reading and writing the files of a dataset directory.

Layout::

    manifest.json   provenance, counts, sha256 of every data file
    items.jsonl     one Item.to_dict() per line
    scenes.jsonl    one Scene.to_dict() per line, keyed by scene_id
    images/...      PNGs referenced by items (paths relative to the root)

Writers are atomic (temp file in the same directory, fsync, ``os.replace``) so an
interrupted run never leaves a half-written ``items.jsonl`` that looks complete.
Readers raise :class:`DatasetError` with ``path:line`` and the field at fault.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.dataset.item import Item
from perspecta.dataset.schema import check_item
from perspecta.world.scene import Scene

MANIFEST = "manifest.json"
ITEMS = "items.jsonl"
SCENES = "scenes.jsonl"
IMAGES_DIR = "images"


class DatasetError(ValueError):
    """A dataset file is missing, unreadable or violates the schema (message has path:line)."""


# --------------------------------------------------------------------------- writing


def _json_default(obj: Any) -> Any:
    """Make numpy scalars/arrays and paths JSON-serialisable (generators produce them)."""
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return obj.as_posix()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def to_json_line(record: Any) -> str:
    """One compact JSON line; objects with ``to_dict()`` (Item, Scene) are converted.

    NaN/inf are refused (they are not JSON and would break other readers).
    """
    if hasattr(record, "to_dict"):
        record = record.to_dict()
    try:
        return json.dumps(record, ensure_ascii=False, allow_nan=False, default=_json_default)
    except ValueError as e:  # allow_nan=False
        raise DatasetError(f"cannot write record as JSON: {e} (NaN or infinity in a field?)") from None


def _atomic_write_bytes(path: Path, chunks: Iterable[bytes]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    """Persist the rename itself (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> int:
    """Write one JSON line per record, atomically; return the number of lines."""
    count = 0

    def lines() -> Iterator[bytes]:
        nonlocal count
        for r in records:
            count += 1
            yield (to_json_line(r) + "\n").encode("utf-8")

    _atomic_write_bytes(Path(path), lines())
    return count


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON (key order kept), atomically."""
    try:
        text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default)
    except ValueError as e:
        raise DatasetError(f"cannot write {path} as JSON: {e}") from None
    _atomic_write_bytes(Path(path), [(text + "\n").encode("utf-8")])


def sha256_file(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def checksums(root: str | os.PathLike[str], rel_paths: Iterable[str]) -> dict[str, str]:
    """``{relative path: sha256}`` for the given files, sorted by path (for the manifest)."""
    root = Path(root)
    return {p: sha256_file(root / p) for p in sorted(set(rel_paths))}


# --------------------------------------------------------------------------- reading


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line number, parsed value, None)`` or ``(line number, None, error)`` per line.

    Blank lines are skipped. Used by the validator, which must continue past bad lines.
    """
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield lineno, None, f"not valid UTF-8 ({e.reason} at byte {e.start} of the line)"
                continue
            if not line.strip():
                continue
            try:
                value = json.loads(line.rstrip("\r\n"), parse_constant=_reject_constant)
            except json.JSONDecodeError as e:
                yield lineno, None, f"invalid JSON: {e.msg} (column {e.colno})"
                continue
            except ValueError as e:
                yield lineno, None, f"invalid JSON: {e}"
                continue
            yield lineno, value, None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise DatasetError(f"{path}: {what} not found")


def read_items(path: str | os.PathLike[str]) -> list[Item]:
    """Parse ``items.jsonl``; raise :class:`DatasetError` at the first bad line.

    The message is ``"<path>:<line>: <error>; <error>"`` listing every schema error of
    that line (each naming its field).
    """
    path = Path(path)
    _require_file(path, "items file")
    items: list[Item] = []
    for lineno, value, error in iter_jsonl(path):
        if error is not None:
            raise DatasetError(f"{path}:{lineno}: {error}")
        errors = check_item(value)
        if errors:
            raise DatasetError(f"{path}:{lineno}: " + "; ".join(errors))
        items.append(Item.from_dict(value))
    return items


def scene_from_record(value: Any) -> Scene:
    """Build a Scene from a parsed record, turning any construction error into a message."""
    if not isinstance(value, dict):
        raise ValueError(f"scene must be a JSON object, got {type(value).__name__}")
    for key in ("scene_id", "seed", "kind"):
        if key not in value:
            raise ValueError(f"field '{key}': missing (required)")
    try:
        return Scene.from_dict(value)
    except KeyError as e:
        raise ValueError(f"missing field {e}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"malformed scene: {e}") from None


def read_scenes(path: str | os.PathLike[str]) -> dict[str, Scene]:
    """Parse ``scenes.jsonl`` into ``{scene_id: Scene}``; duplicate ids are an error."""
    path = Path(path)
    _require_file(path, "scenes file")
    scenes: dict[str, Scene] = {}
    first_line: dict[str, int] = {}
    for lineno, value, error in iter_jsonl(path):
        if error is not None:
            raise DatasetError(f"{path}:{lineno}: {error}")
        try:
            scene = scene_from_record(value)
        except ValueError as e:
            raise DatasetError(f"{path}:{lineno}: {e}") from None
        if scene.scene_id in scenes:
            raise DatasetError(
                f"{path}:{lineno}: field 'scene_id': duplicate {scene.scene_id!r} "
                f"(first at line {first_line[scene.scene_id]})"
            )
        scenes[scene.scene_id] = scene
        first_line[scene.scene_id] = lineno
    return scenes


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Parse ``manifest.json`` (must be a JSON object); schema is checked by the validator."""
    path = Path(path)
    _require_file(path, "manifest")
    try:
        value = json.loads(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}:{e.lineno}: invalid JSON: {e.msg} (column {e.colno})") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise DatasetError(f"{path}: invalid JSON: {e}") from None
    if not isinstance(value, dict):
        raise DatasetError(f"{path}: manifest must be a JSON object, got {type(value).__name__}")
    return value
