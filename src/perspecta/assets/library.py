"""One catalogue over every asset source: procedural families, SH3D furniture, user folders.

Sources are small objects that list :class:`AssetInfo` records and load a
:class:`~perspecta.assets.mesh.Mesh` in the canonical frame (metres, +X front,
+Y left, +Z up, origin at the bottom centre). The library adds an in-memory cache
so a worker renders many scenes while loading each mesh once.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from perspecta.assets.mesh import Mesh


@dataclass(frozen=True)
class AssetInfo:
    """What the samplers and the manifest need to know about an asset.

    ``size`` is the native extent in metres (depth along +X, width along +Y, height
    along +Z). ``has_front`` is False for objects without a well-defined front (balls,
    plain boxes); questions about their facing are answered "Cannot be determined".
    ``symmetric`` marks objects whose front and back look alike.
    """

    asset_id: str  # "<source>:<name>", e.g. "proc:chair", "sh3d:blendswap-cc-0/armchair"
    category: str
    source: str
    size: tuple[float, float, float]
    has_front: bool = True
    symmetric: bool = False
    license: str = "CC0-1.0"
    attribution: str = ""
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def real_size(self) -> tuple[float, float, float]:
        """Real-world extent in metres (depth x, width y, height z) at scale 1.

        Every source loads meshes at real size, so this is ``size``: the Sweet Home 3D
        catalogue's width/depth/height, a procedural family's built dimensions (seed 0;
        other seeds vary around it), a user sidecar's ``unit_scale``/``height``. A
        sampler that scales an object away from 1 leaves the real world; see
        ``perspecta.world.samplers.common.instantiate``.
        """
        return self.size

    @property
    def size_source(self) -> str:
        """Where :attr:`real_size` comes from, for the manifest and for reviewers."""
        return SIZE_SOURCES.get(self.source, "the asset source's mesh extent")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


SIZE_SOURCES = {
    "proc": "procedural family built at real dimensions (seed 0; seeds vary proportions)",
    "sh3d": "Sweet Home 3D catalogue width/depth/height (cm)",
    "user": "sidecar unit_scale or height",
}


class AssetSource(Protocol):
    name: str

    def list(self) -> list[AssetInfo]: ...

    def load(self, info: AssetInfo, params: dict[str, Any]) -> Mesh:
        """Return the mesh in the canonical frame at native size.

        ``params`` carries per-instance choices (for procedural families, a ``seed``
        that fixes proportions and colours); sources without variation ignore it.
        """
        ...


_EXTENTS_KEPT = 50_000  # extents remembered per library (a few MB)


class AssetLibrary:
    def __init__(self, sources: list[AssetSource], cache_size: int = 64) -> None:
        self.sources = {s.name: s for s in sources}
        self._infos: dict[str, AssetInfo] = {}
        for s in sources:
            for info in s.list():
                self._infos[info.asset_id] = info
        self._cache: OrderedDict[str, Mesh] = OrderedDict()
        self._cache_size = cache_size
        self._extents: OrderedDict[str, np.ndarray] = OrderedDict()  # bounded: _EXTENTS_KEPT
        self._by_category: dict[tuple[str, str | None, int], tuple[AssetInfo, ...]] = {}

    @classmethod
    def default(cls, user_dirs: list[Path] | None = None) -> AssetLibrary:
        """Procedural families, SH3D furniture when the Debian package is installed, and
        user folders given here or in ``PERSPECTA_ASSET_DIRS`` (os.pathsep-separated)."""
        from perspecta.assets.procedural import ProceduralSource
        from perspecta.assets.sh3d import SH3DSource
        from perspecta.assets.user import UserSource

        sources: list[AssetSource] = [ProceduralSource()]
        sh3d = SH3DSource()
        if sh3d.available():
            sources.append(sh3d)
        dirs = list(user_dirs or [])
        env = os.environ.get("PERSPECTA_ASSET_DIRS", "")
        dirs += [Path(p) for p in env.split(os.pathsep) if p]
        if dirs:
            sources.append(UserSource(dirs))
        return cls(sources)

    def __contains__(self, asset_id: str) -> bool:
        return asset_id in self._infos

    def get(self, asset_id: str) -> AssetInfo:
        try:
            return self._infos[asset_id]
        except KeyError:
            raise KeyError(f"unknown asset {asset_id!r}; see `perspecta assets list`") from None

    def all(self) -> list[AssetInfo]:
        return list(self._sorted())

    def _sorted(self) -> tuple[AssetInfo, ...]:
        """Every asset by id, sorted once per set of assets: samplers ask
        :meth:`by_category` for every object they draw."""
        cached = self.__dict__.get("_sorted_infos")
        if cached is None or len(cached) != len(self._infos):
            cached = self.__dict__["_sorted_infos"] = tuple(sorted(self._infos.values(), key=lambda a: a.asset_id))
        return cached

    def by_category(self, category: str, source: str | None = None) -> list[AssetInfo]:
        key = (category, source, len(self._infos))
        hits = self._by_category.get(key)
        if hits is None:
            hits = self._by_category[key] = tuple(
                a for a in self._sorted() if a.category == category and (source is None or a.source == source)
            )
        return list(hits)

    def real_size(self, asset_id: str, params: dict[str, Any] | None = None) -> tuple[float, float, float]:
        """Real-world extent (metres) of one instance: procedural families vary with
        ``params["seed"]``; other sources ignore params and return ``info.real_size``."""
        info = self.get(asset_id)
        if not params or info.source != "proc":
            return info.real_size
        e = self.extent(asset_id, params)
        return (float(e[0]), float(e[1]), float(e[2]))

    def extent(self, asset_id: str, params: dict[str, Any] | None = None) -> np.ndarray:
        """The mesh's bounding-box size (x, y, z), exactly ``load_mesh(...).extent()``.

        Kept per (asset, params) for the library's life, apart from the LRU mesh cache:
        scene samplers ask it once per placement try, and a furnished room cycles through
        more furniture meshes than that cache holds, so it reloaded and re-measured them
        (measured: about a fifth of a PCSR unit)."""
        params = params or {}
        key = asset_id + json.dumps(params, sort_keys=True)
        e = self._extents.get(key)
        if e is None:
            # a source may keep extents on disk (``cached_extent`` / ``record_extent``):
            # then a fresh process or pool worker need not read every candidate's mesh
            source = self.sources[self.get(asset_id).source]
            cached = getattr(source, "cached_extent", None)
            e = cached(self.get(asset_id), params) if cached is not None and key not in self._cache else None
            if e is None:
                e = self.load_mesh(asset_id, params).extent()
                record = getattr(source, "record_extent", None)
                if record is not None:
                    record(self.get(asset_id), params, e)
            self._extents[key] = e
            if len(self._extents) > _EXTENTS_KEPT:  # procedural seeds make every key new
                self._extents.popitem(last=False)
        return e.copy()

    def categories(self) -> list[str]:
        return sorted({a.category for a in self._infos.values()})

    def load_mesh(self, asset_id: str, params: dict[str, Any] | None = None) -> Mesh:
        params = params or {}
        key = asset_id + json.dumps(params, sort_keys=True)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        info = self.get(asset_id)
        mesh = self.sources[info.source].load(info, params)
        self._cache[key] = mesh
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return mesh
