"""Response cache and results log: append-only JSONL files, one flushed line per record.

The cache maps a request key — sha256 over (backend, model, prompt text, the bytes of
every image and the input settings, generation config) — to the response text, so a
rerun (after a crash, Ctrl-C or ``kill -9``) or a second run of the same model never
pays for the same answer twice. Only deterministic requests (greedy, or seeded
sampling) are cached. A line cut short by a kill is ignored on reading.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from perspecta.models.base import GenConfig, InputSettings


_PNG_HEAD, _PNG_END = b"\x89PNG\r\n\x1a\n", b"IEND\xaeB`\x82"


def check_complete(path: Path, data: bytes) -> None:
    """Raise OSError for a PNG or JPEG cut short (a half-copied file): it would otherwise be
    sent byte for byte and the model would answer about a broken picture."""
    if (data.startswith(_PNG_HEAD) and not data.endswith(_PNG_END)) or (
            data.startswith(b"\xff\xd8") and not data.rstrip(b"\x00").endswith(b"\xff\xd9")):
        raise OSError(f"truncated image file: {path}")


class FileHasher:
    """sha256 of each image file, computed once (and the file checked to be complete)."""

    def __init__(self) -> None:
        self._digests: dict[str, str] = {}

    def __call__(self, path: Path) -> str:
        key = str(path)
        if key not in self._digests:
            data = Path(path).read_bytes()
            check_complete(Path(path), data)
            self._digests[key] = hashlib.sha256(data).hexdigest()
        return self._digests[key]


def request_key(backend: str, prompt: str, image_digests: list[str], gen: GenConfig, inputs: InputSettings) -> str:
    blob = json.dumps({"backend": backend, "prompt": prompt, "images": image_digests,
                       "gen": gen.to_dict(), "inputs": inputs.to_dict()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def quarantine_torn_tail(path: Path) -> int:
    """Move an unterminated last line (a writer killed mid-line) out of ``path`` into
    ``path.torn`` and truncate it, so the next record starts a clean line; return the bytes moved.

    Terminating the torn line instead would turn it into a bad *middle* line that every
    later reader rejects. A last line that is complete JSON but lacks only its newline is kept."""
    if not path.is_file() or not path.stat().st_size:
        return 0
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return 0
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - (1 << 20))
        while True:  # find the last newline, reading back in 1 MiB steps
            f.seek(start)
            chunk = f.read(size - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0 or start == 0:
                break
            start = max(0, start - (1 << 20))
        cut = start + nl + 1 if nl >= 0 else 0
        f.seek(cut)
        tail = f.read()
        try:
            json.loads(tail)
            f.write(b"\n")  # whole record, only the newline missing
            return 0
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass
        with open(path.with_name(path.name + ".torn"), "ab") as q:
            q.write(tail + b"\n")
        f.truncate(cut)
    return len(tail)


def read_jsonl_tolerant(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON line; a torn final line (killed writer) is skipped."""
    if not path.is_file():
        return []
    out = []
    lines = path.read_bytes().split(b"\n")
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                continue
            raise ValueError(f"{path}:{i + 1}: invalid JSON line") from None
    return out


class AppendLog:
    """An append-only JSONL file; each record is one write of one line, flushed at once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.quarantined = quarantine_torn_tail(self.path)
        self._f = open(self.path, "ab", buffering=0)

    def append(self, record: dict[str, Any]) -> None:
        self._f.write((json.dumps(record, ensure_ascii=False) + "\n").encode())

    def close(self) -> None:
        self._f.close()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._log = AppendLog(self.path)  # quarantines a torn tail before the entries are read
        self._entries = {d["key"]: d for d in read_jsonl_tolerant(self.path) if "key" in d}

    def get(self, key: str) -> dict[str, Any] | None:
        return self._entries.get(key)

    def put(self, key: str, backend: str, text: str, usage: dict[str, Any]) -> None:
        entry = {"key": key, "backend": backend, "text": text, "usage": usage}
        self._log.append(entry)
        self._entries[key] = entry

    def __len__(self) -> int:
        return len(self._entries)

    def close(self) -> None:
        self._log.close()
