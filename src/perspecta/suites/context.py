"""What a task generator is handed for one unit of work, and the seeds behind it.

Seeds: a unit's seed derives from (root seed, suite, task, unit index) through
``numpy.random.SeedSequence`` with a stable spawn key, so a unit can be regenerated
alone and parallel workers reproduce a serial run exactly.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from PIL import Image

from perspecta import timing

if TYPE_CHECKING:
    from perspecta.assets.library import AssetLibrary
    from perspecta.render.base import Renderer
    from perspecta.world.scene import Scene


T = TypeVar("T")

DIFFICULTIES = ("easy", "standard", "hard")
#: zlib level of dataset PNGs (part of the dataset's bytes: changing it changes them). A
#: suite may declare its own ``PNG_COMPRESS_LEVEL`` in its package (:func:`png_compress_level`).
#: Under the run-length strategy below the level only tells zlib not to store (0); any
#: other level gives the same bytes.
PNG_COMPRESS_LEVEL = 6
#: zlib strategy of dataset PNGs: run-length matching (``Z_RLE``) only finds runs of one
#: repeated byte, which is what PNG's row filters make of a rendered frame's flat regions,
#: and skips the default strategy's search for longer matches; it deflates 512² frames
#: 2-4x faster than the default strategy at level 6 for files 4-8% larger (LRR's textured
#: grounds: faster *and* smaller than level 4). docs/performance.md, round 4.
PNG_COMPRESS_STRATEGY = zlib.Z_RLE
#: Dataset format: 2 = PNGs deflated with :data:`PNG_COMPRESS_STRATEGY` (format 1, no
#: ``generator.format`` in the manifest: zlib's default strategy, same pixels).
DATASET_FORMAT = 2


def png_compress_level(suite: str) -> int:
    """The zlib level of ``suite``'s PNGs: its package's ``PNG_COMPRESS_LEVEL``, else the default."""
    from perspecta.suites.registry import suite_setting

    return int(suite_setting(suite, "PNG_COMPRESS_LEVEL", PNG_COMPRESS_LEVEL))  # type: ignore[arg-type]


def encode_png(rgb: np.ndarray, suite: str) -> bytes:
    """``rgb`` as the dataset's PNG bytes for ``suite``: no timestamps or other varying
    chunks, so the same pixels always give the same bytes (charged to ``png.encode``)."""
    with timing.stage("png.encode"):
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(rgb)).save(buf, format="PNG", optimize=False,
                                                        compress_level=png_compress_level(suite),
                                                        compress_type=PNG_COMPRESS_STRATEGY)
        return buf.getvalue()


def stable_key(text: str) -> int:
    """A process-independent 32-bit key for a name (Python's hash() is salted)."""
    return zlib.crc32(text.encode("utf-8"))


def unit_seed_sequence(root_seed: int, suite: str, task: str, index: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(root_seed, spawn_key=(stable_key(suite), stable_key(task), index))


def unit_seed(root_seed: int, suite: str, task: str, index: int) -> int:
    """The integer seed stored with every item of a unit (enough to regenerate it)."""
    return int(unit_seed_sequence(root_seed, suite, task, index).generate_state(1, np.uint32)[0])


def split_for_seed(seed: int, splits: dict[str, float] | None) -> str:
    """The split drawn for ``seed`` from fractions like ``{"train": 0.8, "test": 0.2}``
    (default all test); whatever owns images (a unit, or a shared PCSR room) draws its
    split this way from its own seed."""
    splits = splits or {"test": 1.0}
    u = (seed % 1_000_003) / 1_000_003
    total = float(sum(splits.values()))
    acc = 0.0
    for name in sorted(splits):
        acc += splits[name] / total
        if u < acc:
            return name
    return sorted(splits)[-1]


@dataclass
class TaskContext:
    suite: str
    task: str
    index: int
    root_seed: int
    library: AssetLibrary
    renderer: Renderer
    out_dir: Path
    config: dict[str, Any] = field(default_factory=dict)
    scenes: list[Scene] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    knobs: dict[str, Any] = field(default_factory=dict)
    with_depth: bool = False  # also store each saved view's ground-truth depth (generate --with-depth)
    depths: dict[str, str] = field(default_factory=dict)  # image -> depth file (with_depth only)
    no_depth: dict[str, str] = field(default_factory=dict)  # image -> why it has no depth file

    def __post_init__(self) -> None:
        self.seed = unit_seed(self.root_seed, self.suite, self.task, self.index)
        self.rng = np.random.default_rng(unit_seed_sequence(self.root_seed, self.suite, self.task, self.index))
        if self.with_depth:
            from perspecta.suites.depth_log import RenderLog

            self.renderer = RenderLog(self.renderer)  # type: ignore[assignment]

    @property
    def split(self) -> str:
        """This unit's split (see :func:`split_for_seed`). It depends only on the unit's
        seed, never on ``rng``, so adding splits does not change any scene; and since a
        unit owns its images, splits are disjoint by image."""
        return split_for_seed(self.seed, self.config.get("splits"))

    @property
    def difficulty(self) -> str:
        """The preset this dataset is generated at (``--difficulty``, default standard)."""
        return str(self.config.get("difficulty", "standard"))

    def knob(self, name: str, presets: Mapping[str, T]) -> T:
        """The value of difficulty knob ``name`` for this unit, recorded for its items.

        Precedence: a ``--sweep name=a:b:n`` (unit *i* takes the *i* mod n-th value, so
        the dataset spans the knob evenly), then a ``--suite-config suite.name=value``
        override, then ``presets[difficulty]``. Every value read is stored in the items'
        ``metadata["knobs"]``, which is what psychometric curves are fitted against.
        """
        sweep = self.config.get("sweep")
        if sweep and sweep["knob"] == name:
            values = sweep["values"]
            value: Any = values[self.index % len(values)]
        elif name in self.config:
            value = self.config[name]
        else:
            value = presets[self.difficulty]
        self.knobs[name] = value
        return value

    @property
    def scene_prefix(self) -> str:
        return f"{self.suite}-{self.task}-{self.index:06d}"

    def add_scene(self, scene: Scene) -> Scene:
        """Record a scene so it is written to ``scenes.jsonl`` for answer re-derivation."""
        self.scenes.append(scene)
        return scene

    def item_id(self, variant: str, suffix: str = "") -> str:
        """``<suite>/<task>/<variant>/<unit index>[-<suffix>]``; the suffix tells apart the
        several items one unit makes (e.g. its coarse and granular questions)."""
        return f"{self.suite}/{self.task}/{variant}/{self.index:06d}" + (f"-{suffix}" if suffix else "")

    def save_image(self, rgb: np.ndarray, name: str, depth: np.ndarray | None = None) -> str:
        """Write a PNG under ``images/<suite>/<task>/`` and return its dataset-relative path.

        PNG bytes are :func:`encode_png`'s. With ``with_depth`` the view's depth is written
        beside it: ``depth`` when given, else the depth of the render this image was
        made from, found by :mod:`perspecta.suites.depth_log` (so tasks need no change).
        """
        rel = Path("images") / self.suite / self.task / f"{self.index:06d}_{name}.png"
        path = self.out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".png.tmp")
        data = encode_png(rgb, self.suite)
        with timing.stage("write"):
            tmp.write_bytes(data)
            tmp.replace(path)
        timing.count(f"image {rgb.shape[1]}x{rgb.shape[0]}")
        self.images.append(rel.as_posix())
        if self.with_depth:
            self._save_depth(rel.as_posix(), rgb, depth)
        return rel.as_posix()

    def _save_depth(self, image: str, rgb: np.ndarray, depth: np.ndarray | None) -> None:
        from perspecta.dataset.depth import depth_rel, write_png

        if depth is None:
            depth, why = self.renderer.depth_for(rgb)  # type: ignore[attr-defined]
            if depth is None:
                self.no_depth[image] = why
                return
        write_png(self.out_dir / depth_rel(image), depth)
        self.depths[image] = depth_rel(image)

    def adopt_image(self, image: str) -> None:
        """Count an image another unit already wrote (a shared panorama) as this unit's,
        with its depth file when one lies beside it."""
        from perspecta.dataset.depth import depth_rel

        self.images.append(image)
        if self.with_depth:
            if (self.out_dir / depth_rel(image)).is_file():
                self.depths[image] = depth_rel(image)
            else:
                self.no_depth[image] = "shared image stored without depth"
