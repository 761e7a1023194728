"""A dataset directory as the evaluator needs it: items of every split, scenes on demand."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perspecta.dataset.io import read_items, read_manifest, read_scenes
from perspecta.dataset.item import Item
from perspecta.world.scene import Scene


def manifest_fingerprint(root: str | Path) -> str:
    """A dataset's identity: sha256 of its manifest (which checksums items, scenes and
    images and records the generation config), shortened. Resume and reports key on it;
    it needs the manifest only, not the items."""
    return hashlib.sha256((Path(root) / "manifest.json").read_bytes()).hexdigest()[:16]


@dataclass
class EvalDataset:
    root: Path
    items: list[Item]
    manifest: dict[str, Any]

    @functools.cached_property
    def fingerprint(self) -> str:
        return manifest_fingerprint(self.root)

    @functools.cached_property
    def scenes(self) -> dict[str, Scene]:
        return read_scenes(self.root / "scenes.jsonl")

    def select(self, *, split: str | None = "test", suites: list[str] | None = None,
               limit: int | None = None) -> list[Item]:
        """Items to evaluate: one split (None = all), optional suites, first ``limit`` per task."""
        chosen = [it for it in self.items if (split is None or it.split == split)
                  and (not suites or it.suite in suites)]
        if split is not None and not chosen and self.items:
            have = sorted({it.split for it in self.items})
            raise ValueError(f"{self.root}: no items in split {split!r} (splits present: {', '.join(have)})")
        if limit is not None:
            per: dict[str, int] = {}
            kept = []
            for it in chosen:
                k = f"{it.suite}/{it.task}"
                if per.get(k, 0) < limit:
                    kept.append(it)
                    per[k] = per.get(k, 0) + 1
            chosen = kept
        return chosen

    def image_path(self, rel: str) -> Path:
        return self.root / rel


def load_dataset(root: str | Path) -> EvalDataset:
    root = Path(root)
    if not (root / "manifest.json").is_file():
        raise FileNotFoundError(f"{root}: not a finished dataset (no manifest.json); run `perspecta generate` first")
    return EvalDataset(root=root, items=read_items(root / "items.jsonl"), manifest=read_manifest(root / "manifest.json"))
