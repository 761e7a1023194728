"""Cheap image fingerprints for the shortcut audit: byte identity and a perceptual hash.

Two images of one item that are byte-identical (or nearly so to the eye) can give an
answer away without any spatial skill -- "no rotation" pairs rendered twice with the same
camera, a mental-rotation distractor turned 0 degrees. The audit needs, per image, its
sha256 (the manifest already records it, so usually no read is needed), an 8x8
difference hash (64 bits; Hamming distance 0-3 means "looks the same") and its size.

Decoding PNGs is the only slow step of the audit, so fingerprints are cached by sha256
in ``<dataset>/.audit-cache.json`` when the dataset directory is writable.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from perspecta.dataset.io import sha256_file, write_json_atomic

CACHE_FILE = ".audit-cache.json"
CACHE_VERSION = 1


@dataclass(frozen=True)
class Fingerprint:
    sha256: str
    dhash: int  # 64-bit difference hash of the 9x8 greyscale thumbnail
    width: int
    height: int


def difference_hash(path: Path) -> tuple[int, int, int]:
    """``(dhash, width, height)``: each bit says whether a pixel of the 9x8 greyscale
    thumbnail is brighter than its right neighbour, so global brightness changes do not
    move it but any visible change of shape or position does."""
    with Image.open(path) as im:
        width, height = im.size
        im.draft("L", (64, 64))  # a no-op for PNG, faster decoding for JPEG
        small = np.asarray(im.convert("L").resize((9, 8), Image.Resampling.BILINEAR), dtype=np.int16)
    bits = (small[:, 1:] > small[:, :-1]).flatten()
    return int.from_bytes(np.packbits(bits).tobytes(), "big"), width, height


def hamming(a: int, b: int) -> int:
    return int((a ^ b).bit_count())


class FingerprintStore:
    """Fingerprints of a dataset's images, computed once and cached by content hash."""

    def __init__(self, root: Path, checksums: dict[str, str] | None = None) -> None:
        self.root = Path(root)
        self.checksums = dict(checksums or {})
        self._by_path: dict[str, Fingerprint] = {}
        self._cache: dict[str, list[int]] = self._read_cache()
        self._dirty = False

    def _read_cache(self) -> dict[str, list[int]]:
        try:
            data = json.loads((self.root / CACHE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        entries = data.get("dhash")
        return entries if isinstance(entries, dict) else {}

    def get(self, rel: str) -> Fingerprint:
        """The fingerprint of the image at dataset-relative path ``rel`` (raises
        FileNotFoundError / OSError for a missing or unreadable image)."""
        if rel in self._by_path:
            return self._by_path[rel]
        path = self.root / rel
        digest = self.checksums.get(rel) or sha256_file(path)
        cached = self._cache.get(digest)
        if isinstance(cached, list) and len(cached) == 3:
            dhash, w, h = (int(v) for v in cached)
        else:
            dhash, w, h = difference_hash(path)
            self._cache[digest] = [dhash, w, h]
            self._dirty = True
        fp = Fingerprint(digest, dhash, w, h)
        self._by_path[rel] = fp
        return fp

    def save(self) -> None:
        """Write the cache back if anything new was computed and the directory is writable."""
        if not self._dirty or not os.access(self.root, os.W_OK):
            return
        try:
            write_json_atomic(self.root / CACHE_FILE, {"version": CACHE_VERSION,
                                                        "dhash": dict(sorted(self._cache.items()))})
        except OSError:
            return
        self._dirty = False
