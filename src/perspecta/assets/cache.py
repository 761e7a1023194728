"""On-disk cache of converted meshes, shared by the file-based asset sources.

Parsing an SH3D OBJ or a user's GLB and converting it to the canonical frame takes
from tens of milliseconds to seconds; reading back a flat ``.npz`` takes a few
milliseconds. Every worker of a dataset run loads the same meshes, so the first
conversion is written once and reused by every later process.

Location: ``$PERSPECTA_CACHE/assets`` when set, else
``$XDG_CACHE_HOME/perspecta/assets`` (``~/.cache/perspecta/assets`` by default).
Entries are keyed by a hash of everything the conversion depends on (source file
identity, model id, converter version), so stale entries are never read; writes go
to a temporary file that is atomically renamed, so concurrent workers never see a
half-written file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from perspecta.assets.mesh import Mesh, MeshPart

CACHE_FORMAT = 1
_UMASK = os.umask(0o022)  # read the process umask once (setting it back at once)
os.umask(_UMASK)


def cache_root() -> Path:
    """Directory for converted asset meshes (not created here)."""
    base = os.environ.get("PERSPECTA_CACHE")
    if base:
        return Path(base).expanduser() / "assets"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "perspecta" / "assets"


def file_fingerprint(path: Path) -> dict[str, Any]:
    """Identity of a source file for cache keys: a changed file gives a new key."""
    st = Path(path).stat()
    return {"path": str(Path(path).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def cache_path(namespace: str, label: str, key: dict[str, Any], root: Path | None = None) -> Path:
    """Path of the entry for ``key``; ``label`` only makes file names readable."""
    blob = json.dumps({"format": CACHE_FORMAT, **key}, sort_keys=True, default=str)
    digest = hashlib.sha1(blob.encode("utf-8")).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label)[:80] or "mesh"
    return (root or cache_root()) / namespace / f"{safe}-{digest}.npz"


def _write_atomic(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write a cache entry by temporary file + rename, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; the cache may be shared
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: Path, text: str) -> None:
    _write_atomic(path, lambda fh: fh.write(text.encode("utf-8")))


def save_mesh(path: Path, mesh: Mesh) -> None:
    """Write ``mesh`` to ``path`` atomically."""
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, part in enumerate(mesh.parts):
        arrays[f"p{i}_pos"] = part.positions
        arrays[f"p{i}_nrm"] = part.normals
        if part.uvs is not None and part.texture is not None:
            arrays[f"p{i}_uv"] = part.uvs
            arrays[f"p{i}_tex"] = np.ascontiguousarray(part.texture, dtype=np.uint8)
        meta.append(
            {"color": list(part.color), "tintable": part.tintable, "name": part.name}
        )
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    _write_atomic(path, lambda fh: np.savez(fh, **arrays))


def _extent_path(path: Path) -> Path:
    return path.with_name(path.stem + ".extent.json")


def save_extent(path: Path, extent: np.ndarray) -> None:
    """Record beside the mesh entry ``path`` its extent (``Mesh.extent()``), exactly:
    each value as its float64 repr plus the array's dtype."""
    e = np.asarray(extent)
    write_text_atomic(_extent_path(path), json.dumps({"dtype": e.dtype.str, "extent": [float(v) for v in e]}))


def load_extent(path: Path) -> np.ndarray | None:
    """The extent :func:`save_extent` recorded for the mesh entry ``path`` (None when
    absent or unreadable): samplers ask the extent of every candidate asset, and reading
    a few bytes costs far less than reading the whole mesh (textures included)."""
    p = _extent_path(path)
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        e = np.array(d["extent"], dtype=np.dtype(d["dtype"]))
        if e.shape != (3,):
            raise ValueError("not three values")
        return e
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
        try:
            p.unlink()
        except OSError:
            pass
        return None


def load_mesh(path: Path) -> Mesh | None:
    """Read an entry written by :func:`save_mesh`; None when absent or unreadable.

    A corrupt entry (e.g. a disk filled up mid-write on another machine) is removed
    so the caller simply converts again.
    """
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            parts = []
            for i, m in enumerate(meta):
                has_tex = f"p{i}_tex" in z.files
                parts.append(
                    MeshPart(
                        positions=z[f"p{i}_pos"],
                        normals=z[f"p{i}_nrm"],
                        color=tuple(float(c) for c in m["color"]),  # type: ignore[arg-type]
                        uvs=z[f"p{i}_uv"] if has_tex else None,
                        texture=z[f"p{i}_tex"] if has_tex else None,
                        tintable=bool(m["tintable"]),
                        name=str(m["name"]),
                    )
                )
        return Mesh(parts)
    except (OSError, ValueError, KeyError, json.JSONDecodeError, zipfile.BadZipFile, EOFError):
        try:
            path.unlink()
        except OSError:
            pass
        return None
