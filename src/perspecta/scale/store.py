"""Where a dataset's files go: a local directory or any fsspec URL (``file://``, ``s3://``, ``gs://``…).

Generation writes through a store so one unit code path serves a laptop and a cluster.
Task generators save PNGs to a local path, so a unit renders into a local *stage*
directory. For a :class:`LocalStore` the stage is the dataset directory itself and
nothing is copied (the behaviour ``perspecta generate`` always had). For an
:class:`FsspecStore` a finished unit uploads its images first and its part file last,
so — as locally — a part file that exists means the whole unit is there.

Every file the dataset is read by (parts, ``items.jsonl``, ``manifest.json``) is
serialised by the same :mod:`perspecta.dataset.io` writers in both stores (a URL store
writes them to a local temporary file, then uploads it under a temporary name and
renames it), so a URL dataset has the bytes of a local one and a half-uploaded file
never carries a final name.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from perspecta.dataset.io import sha256_file, write_json_atomic, write_jsonl_atomic


class Store(Protocol):
    #: False when other processes cannot see what this one writes (``memory://``).
    shared_across_processes: bool

    def spec(self) -> str: ...
    def exists(self, rel: str) -> bool: ...
    def read_text(self, rel: str) -> str: ...
    def is_nonempty(self) -> bool: ...
    def makedirs(self) -> None: ...
    def write_json(self, rel: str, obj: Any) -> None: ...
    def write_jsonl(self, rel: str, records: Iterable[Any]) -> None: ...
    def sha256(self, rel: str) -> str: ...
    def remove_tree(self, rel: str) -> None: ...
    def new_stage(self) -> Path: ...
    def commit_unit(self, part_rel: str, part: dict[str, Any], stage: Path) -> None: ...
    def drop_stage(self, stage: Path) -> None: ...


def is_url(out: str | Path) -> bool:
    return "://" in str(out)


def open_store(out: str | Path) -> Store:
    """A local path (or ``file``-less string) → :class:`LocalStore`; ``proto://…`` → :class:`FsspecStore`."""
    return FsspecStore(str(out)) if is_url(out) else LocalStore(Path(out))


class LocalStore:
    shared_across_processes = True

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def spec(self) -> str:
        """Absolute, so a worker with another working directory (a Ray worker) finds it."""
        return str(self.root.resolve())

    def exists(self, rel: str) -> bool:
        return (self.root / rel).exists()

    def read_text(self, rel: str) -> str:
        return (self.root / rel).read_text()

    def is_nonempty(self) -> bool:
        return self.root.exists() and any(self.root.iterdir())

    def makedirs(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def write_json(self, rel: str, obj: Any) -> None:
        write_json_atomic(self.root / rel, obj)

    def write_jsonl(self, rel: str, records: Iterable[Any]) -> None:
        write_jsonl_atomic(self.root / rel, records)

    def sha256(self, rel: str) -> str:
        return sha256_file(self.root / rel)

    def remove_tree(self, rel: str) -> None:
        shutil.rmtree(self.root / rel, ignore_errors=True)

    def new_stage(self) -> Path:
        return self.root

    def commit_unit(self, part_rel: str, part: dict[str, Any], stage: Path) -> None:
        self.write_json(part_rel, part)  # the images are already in place

    def drop_stage(self, stage: Path) -> None:
        return None


class FsspecStore:
    """A dataset at an fsspec URL. s3/gcs/azure need their plugin (``s3fs``, ``gcsfs``, ``adlfs``)."""

    def __init__(self, url: str) -> None:
        try:
            import fsspec
        except ImportError:  # pragma: no cover - fsspec comes with perspecta[ray]
            raise ValueError(f"writing to {url} needs fsspec: pip install 'perspecta[ray]'") from None
        try:
            self.fs, self.path = fsspec.core.url_to_fs(url)
        except (ImportError, ValueError) as e:
            raise ValueError(f"cannot open {url}: {e}") from None
        self.url = url
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        self.shared_across_processes = "memory" not in protocols
        self.path = self.path.rstrip("/")

    def _full(self, rel: str) -> str:
        return f"{self.path}/{rel}"

    def spec(self) -> str:
        return self.url

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self._full(rel))

    def read_text(self, rel: str) -> str:
        return self.fs.cat_file(self._full(rel)).decode("utf-8")

    def is_nonempty(self) -> bool:
        return self.fs.exists(self.path) and bool(self.fs.ls(self.path))

    def makedirs(self) -> None:
        self.fs.makedirs(self.path, exist_ok=True)

    def _upload(self, local: Path, rel: str, *, atomic: bool) -> None:
        """Put a local file at ``rel``; ``atomic`` goes through a temporary name and a rename."""
        target = self._full(rel)
        self.fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
        if not atomic:
            self.fs.put_file(str(local), target)
            return
        tmp = f"{target}.{uuid.uuid4().hex}.tmp"
        self.fs.put_file(str(local), tmp)
        self.fs.mv(tmp, target)

    def _write_via_local(self, rel: str, write) -> None:
        with tempfile.TemporaryDirectory(prefix="perspecta-store-") as tmp:
            local = Path(tmp) / Path(rel).name
            write(local)
            self._upload(local, rel, atomic=True)

    def write_json(self, rel: str, obj: Any) -> None:
        self._write_via_local(rel, lambda p: write_json_atomic(p, obj))

    def write_jsonl(self, rel: str, records: Iterable[Any]) -> None:
        self._write_via_local(rel, lambda p: write_jsonl_atomic(p, records))

    def sha256(self, rel: str) -> str:
        import hashlib

        h = hashlib.sha256()
        with self.fs.open(self._full(rel), "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()

    def remove_tree(self, rel: str) -> None:
        if self.fs.exists(self._full(rel)):
            self.fs.rm(self._full(rel), recursive=True)

    def new_stage(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="perspecta-stage-"))

    def commit_unit(self, part_rel: str, part: dict[str, Any], stage: Path) -> None:
        # Images need no temporary name: a retried unit rewrites the same bytes, and
        # nothing reads an image before the part file that lists it exists.
        for rel in part["images"]:
            self._upload(stage / rel, rel, atomic=False)
            (stage / rel).unlink()
        self.write_json(part_rel, part)

    def drop_stage(self, stage: Path) -> None:
        shutil.rmtree(stage, ignore_errors=True)
