"""Users' own meshes (GLB/GLTF/OBJ/PLY/STL) as an asset source, declared by sidecars.

A mesh file becomes an asset only when a sidecar declares how to read it, because a
mesh file alone does not say which way is up, where the front is, or what unit it
uses, and guessing would silently corrupt every orientation question built on it.

Two ways to declare:

* one sidecar per mesh, next to it: ``chair.glb.perspecta.yaml`` (or ``.yml`` /
  ``.json``) holding one mapping;
* one file per folder, ``perspecta-assets.yaml`` (or ``.yml`` / ``.json``), holding
  ``assets: [ {file: ..., ...}, ... ]`` (a bare list works too).

Fields: ``file`` (required in folder lists; relative to the sidecar), ``category``,
``up`` and ``front`` (axis strings "+X", "-Y", ...; ``front`` may be "none"),
``license`` (required), and optional ``unit_scale`` (metres per file unit, default 1),
``height`` (metres; rescales uniformly to that height), ``symmetric`` (default false),
``attribution``, ``name``, ``id`` (asset name, default the file's path without
extension), ``tintable``. A malformed sidecar raises :class:`SidecarError` naming the
file and the field; it is never skipped.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.assets import cache as disk_cache
from perspecta.assets.library import AssetInfo
from perspecta.assets.mesh import Mesh, MeshPart, finish_triangles

CONVERTER_VERSION = 1
MESH_SUFFIXES = (".glb", ".gltf", ".obj", ".ply", ".stl")
SIDECAR_SUFFIXES = (".perspecta.yaml", ".perspecta.yml", ".perspecta.json")
FOLDER_FILES = ("perspecta-assets.yaml", "perspecta-assets.yml", "perspecta-assets.json")
AXES = {
    "+X": (1, 0, 0), "-X": (-1, 0, 0),
    "+Y": (0, 1, 0), "-Y": (0, -1, 0),
    "+Z": (0, 0, 1), "-Z": (0, 0, -1),
}  # fmt: skip
_REQUIRED = ("category", "up", "front", "license")
_OPTIONAL = ("file", "unit_scale", "height", "symmetric", "attribution", "name", "id", "tintable")
_MAX_COLOR_PARTS = 64


class SidecarError(ValueError):
    """A sidecar that cannot be used as written; the message names file and field."""


@dataclass(frozen=True)
class UserEntry:
    sidecar: Path
    mesh_path: Path
    asset_name: str  # the part of the asset id after "user:"
    category: str
    up: str
    front: str  # an axis string or "none"
    license: str
    unit_scale: float = 1.0
    height: float | None = None
    symmetric: bool = False
    attribution: str = ""
    name: str = ""
    tintable: bool | None = None  # None: tintable only when the file has no colours

    def key(self) -> dict[str, Any]:
        return {
            "up": self.up, "front": self.front, "unit_scale": self.unit_scale,
            "height": self.height, "tintable": self.tintable,
        }  # fmt: skip


def canonical_rotation(up: str, front: str) -> np.ndarray:
    """Rotation taking file coordinates to canonical ones (+X front, +Y left, +Z up).

    Rows are the file-space directions of canonical X (front), Y (left = up x front)
    and Z (up), so the result is always a proper rotation. With ``front`` "none" the
    first file axis perpendicular to ``up`` stands in for the front.
    """
    u = np.array(AXES[up], dtype=np.float64)
    if front == "none":
        f = next(
            np.array(AXES[a], dtype=np.float64)
            for a in ("+X", "+Y", "+Z")
            if abs(np.dot(AXES[a], u)) < 0.5
        )
    else:
        f = np.array(AXES[front], dtype=np.float64)
    if abs(np.dot(u, f)) > 0.5:
        raise ValueError(f"up {up} and front {front} are parallel")
    return np.stack([f, np.cross(u, f), u])


def _read_sidecar(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SidecarError(f"{path}: cannot read: {exc}") from None
    try:
        if path.suffix == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError, json.JSONDecodeError
        raise SidecarError(f"{path}: not valid {path.suffix.lstrip('.').upper()}: {exc}") from None


def _validate(
    raw: Any, sidecar: Path, where: str, default_file: Path | None, root: Path
) -> UserEntry:
    """Check one sidecar entry; ``where`` locates it in messages ("" or " entry 2")."""

    def fail(field: str, msg: str) -> SidecarError:
        return SidecarError(f"{sidecar}{where}: field '{field}': {msg}")

    if not isinstance(raw, dict):
        raise SidecarError(f"{sidecar}{where}: expected a mapping of fields, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise fail(unknown[0], f"unknown field (allowed: {', '.join(_REQUIRED + _OPTIONAL)})")
    for field in _REQUIRED:
        if field not in raw or raw[field] is None or raw[field] == "":
            raise fail(field, "missing (required)")
    if "file" in raw:
        if not isinstance(raw["file"], str) or not raw["file"]:
            raise fail("file", "must be a relative path string")
        mesh_path = (sidecar.parent / raw["file"]).resolve()
    elif default_file is not None:
        mesh_path = default_file.resolve()
    else:
        raise fail("file", "missing (required in a folder list)")
    if not mesh_path.is_file():
        raise fail("file", f"mesh file {mesh_path} does not exist")
    if mesh_path.suffix.lower() not in MESH_SUFFIXES:
        raise fail("file", f"unsupported mesh type {mesh_path.suffix!r} (use {', '.join(MESH_SUFFIXES)})")
    category = raw["category"]
    if not isinstance(category, str):
        raise fail("category", "must be a string")
    up = str(raw["up"]).strip().upper()
    if up not in AXES:
        raise fail("up", f"{raw['up']!r} is not an axis (one of {', '.join(AXES)})")
    front = str(raw["front"]).strip()
    front = "none" if front.lower() == "none" else front.upper()
    if front != "none" and front not in AXES:
        raise fail("front", f"{raw['front']!r} is not an axis (one of {', '.join(AXES)}, or none)")
    if front != "none" and abs(np.dot(AXES[up], AXES[front])) > 0.5:
        raise fail("front", f"{front} is parallel to up {up}; front must be horizontal")

    def number(field: str, default: float | None) -> float | None:
        if field not in raw or raw[field] is None:
            return default
        v = raw[field]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or v <= 0:
            raise fail(field, f"must be a positive number, got {v!r}")
        return float(v)

    def flag(field: str, default: bool | None) -> bool | None:
        if field not in raw or raw[field] is None:
            return default
        if not isinstance(raw[field], bool):
            raise fail(field, f"must be true or false, got {raw[field]!r}")
        return raw[field]

    for field in ("license", "attribution", "name", "id"):
        if field in raw and raw[field] is not None and not isinstance(raw[field], str):
            raise fail(field, "must be a string")
    if "id" in raw and raw["id"]:
        asset_name = raw["id"]
    else:
        try:
            rel = mesh_path.relative_to(root.resolve())
        except ValueError:
            rel = Path(mesh_path.name)
        asset_name = rel.with_suffix("").as_posix()
    return UserEntry(
        sidecar=sidecar,
        mesh_path=mesh_path,
        asset_name=asset_name,
        category=category,
        up=up,
        front=front,
        license=raw["license"],
        unit_scale=number("unit_scale", 1.0) or 1.0,
        height=number("height", None),
        symmetric=bool(flag("symmetric", False)),
        attribution=raw.get("attribution") or "",
        name=raw.get("name") or mesh_path.stem,
        tintable=flag("tintable", None),
    )


def read_sidecars(root: Path) -> list[UserEntry]:
    """Every entry declared under ``root`` (recursively); raises on the first bad one."""
    root = Path(root)
    if not root.is_dir():
        raise SidecarError(f"{root}: asset folder does not exist")
    entries: list[UserEntry] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        name = path.name
        if name in FOLDER_FILES:
            data = _read_sidecar(path)
            if isinstance(data, dict) and "assets" in data:
                data = data["assets"]
            if not isinstance(data, list):
                raise SidecarError(f"{path}: expected a list of entries (or 'assets: [...]')")
            for i, raw in enumerate(data):
                entries.append(_validate(raw, path, f" entry {i}", None, root))
        elif name.endswith(SIDECAR_SUFFIXES):
            suffix = next(s for s in SIDECAR_SUFFIXES if name.endswith(s))
            default_file = path.with_name(name[: -len(suffix)])
            entries.append(_validate(_read_sidecar(path), path, "", default_file, root))
    return entries


def _part_arrays(geom: Any) -> list[tuple[np.ndarray, np.ndarray | None, np.ndarray | None, tuple[float, float, float] | None, np.ndarray | None]]:
    """(faces-as-soup positions, normals-or-None, uvs-or-None, colour-or-None, texture-or-None)
    of one trimesh.Trimesh, split by face colour when it has per-face colours."""
    faces = np.asarray(geom.faces, dtype=np.int64)
    verts = np.asarray(geom.vertices, dtype=np.float64)
    if len(faces) == 0:
        return []
    soup_idx = faces.reshape(-1)
    pos = verts[soup_idx]
    normals = None
    if "vertex_normals" in getattr(geom, "_cache", {}):  # normals stored in the file
        vn = np.asarray(geom.vertex_normals, dtype=np.float64)
        if len(vn) == len(verts):
            normals = vn[soup_idx]
    visual = geom.visual
    kind = getattr(visual, "kind", None)
    if kind == "texture":
        mat = getattr(visual, "material", None)
        image = None
        if mat is not None:
            image = getattr(mat, "image", None)
            if image is None:
                image = getattr(mat, "baseColorTexture", None)
        color = None
        if mat is not None:
            mc = np.asarray(mat.main_color, dtype=np.float64)[:3] / 255.0
            color = (float(mc[0]), float(mc[1]), float(mc[2]))
        uv = getattr(visual, "uv", None)
        if image is not None and uv is not None and len(uv) == len(verts):
            tex = np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
            mean = tex.reshape(-1, 3).mean(axis=0) / 255.0
            return [(pos, normals, np.asarray(uv, dtype=np.float64)[soup_idx][:, :2], (float(mean[0]), float(mean[1]), float(mean[2])), tex)]
        return [(pos, normals, None, color, None)]
    if kind in ("face", "vertex"):
        fc = np.asarray(visual.face_colors, dtype=np.uint8)[:, :3]
        uniq, inv = np.unique(fc, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        if len(uniq) > _MAX_COLOR_PARTS:  # too many to split usefully: one averaged part
            mean = fc.mean(axis=0) / 255.0
            return [(pos, normals, None, (float(mean[0]), float(mean[1]), float(mean[2])), None)]
        out = []
        for k, c in enumerate(uniq):
            vmask = np.repeat(inv == k, 3)
            out.append(
                (pos[vmask], None if normals is None else normals[vmask], None,
                 (float(c[0]) / 255.0, float(c[1]) / 255.0, float(c[2]) / 255.0), None)
            )
        return out
    return [(pos, normals, None, None, None)]


def load_entry(entry: UserEntry) -> Mesh:
    """Load a declared mesh with trimesh and bring it to the canonical frame."""
    import trimesh

    try:
        scene = trimesh.load(str(entry.mesh_path), force="scene", process=False)
    except Exception as exc:
        raise SidecarError(f"{entry.sidecar}: field 'file': cannot load {entry.mesh_path}: {exc}") from None
    raw = []
    for node in scene.graph.nodes_geometry:
        transform, geom_name = scene.graph[node]
        geom = scene.geometry[geom_name]
        if not isinstance(geom, trimesh.Trimesh):
            continue  # point clouds, paths
        T = np.asarray(transform, dtype=np.float64)
        for pos, nrm, uvs, color, tex in _part_arrays(geom):
            pos = pos @ T[:3, :3].T + T[:3, 3]
            if nrm is not None:
                nrm = nrm @ np.linalg.inv(T[:3, :3])
            flip = np.linalg.det(T[:3, :3]) < 0
            raw.append((pos, nrm, uvs, color, tex, flip, geom_name))
    if not raw:
        raise SidecarError(f"{entry.sidecar}: field 'file': {entry.mesh_path} has no triangles")
    R = canonical_rotation(entry.up, entry.front) * entry.unit_scale
    allpos = np.concatenate([r[0] for r in raw]) @ R.T
    lo, hi = allpos.min(axis=0), allpos.max(axis=0)
    scale = 1.0
    if entry.height is not None:
        if hi[2] - lo[2] <= 0:
            raise SidecarError(f"{entry.sidecar}: field 'height': the mesh is flat along up {entry.up}")
        scale = entry.height / (hi[2] - lo[2])
    offset = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    rot = canonical_rotation(entry.up, entry.front)
    has_colour = any(r[3] is not None for r in raw)
    tintable = entry.tintable if entry.tintable is not None else not has_colour
    parts = []
    for pos, nrm, uvs, color, tex, flip, name in raw:
        p = (pos @ R.T - offset) * scale
        n = None if nrm is None else nrm @ rot.T
        p, n, uvs = finish_triangles(p, n, uvs, mirrored=flip)
        parts.append(
            MeshPart(
                positions=p,
                normals=n,
                color=color if color is not None else (0.7, 0.7, 0.7),
                uvs=uvs if tex is not None else None,
                texture=tex,
                tintable=tintable,
                name=str(name),
            )
        )
    return Mesh(parts)


class UserSource:
    """Meshes in the given folders that carry a Perspecta sidecar.

    Listing validates every sidecar and loads every mesh once (through the disk
    cache) because :class:`AssetInfo` carries the mesh's real size.
    """

    name = "user"

    def __init__(
        self,
        dirs: list[Path] | list[str] | Path | str,
        *,
        cache_dir: Path | str | None = None,
        use_disk_cache: bool = True,
    ) -> None:
        if isinstance(dirs, (str, Path)):
            dirs = [dirs]
        self.dirs = [Path(d) for d in dirs]
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_disk_cache = use_disk_cache
        self._entries: dict[str, UserEntry] | None = None

    def entries(self) -> dict[str, UserEntry]:
        if self._entries is None:
            found: dict[str, UserEntry] = {}
            for d in self.dirs:
                for e in read_sidecars(d):
                    asset_id = f"user:{e.asset_name}"
                    if asset_id in found:
                        other = found[asset_id].sidecar
                        raise SidecarError(
                            f"{e.sidecar}: field 'id': asset {asset_id!r} is also declared by {other}"
                        )
                    found[asset_id] = e
            self._entries = found
        return self._entries

    def _cache_file(self, e: UserEntry) -> Path:
        key = {
            "converter": CONVERTER_VERSION,
            "mesh": disk_cache.file_fingerprint(e.mesh_path),
            "entry": e.key(),
        }
        return disk_cache.cache_path("user", e.mesh_path.stem, key, self.cache_dir)

    def load_entry(self, e: UserEntry) -> Mesh:
        path = self._cache_file(e) if self.use_disk_cache else None
        if path is not None:
            cached = disk_cache.load_mesh(path)
            if cached is not None:
                return cached
        mesh = load_entry(e)
        if path is not None:
            try:
                disk_cache.save_mesh(path, mesh)
            except OSError as exc:
                warnings.warn(f"could not write the mesh cache {path}: {exc}", stacklevel=2)
        return mesh

    def list(self) -> list[AssetInfo]:
        out = []
        for asset_id, e in sorted(self.entries().items()):
            ext = self.load_entry(e).extent()
            out.append(
                AssetInfo(
                    asset_id=asset_id,
                    category=e.category,
                    source=self.name,
                    size=(float(ext[0]), float(ext[1]), float(ext[2])),
                    has_front=e.front != "none",
                    symmetric=e.symmetric,
                    license=e.license,
                    attribution=e.attribution,
                    name=e.name,
                    extra={"file": str(e.mesh_path), "sidecar": str(e.sidecar), "up": e.up, "front": e.front},
                )
            )
        return out

    def load(self, info: AssetInfo, params: dict[str, Any] | None = None) -> Mesh:
        try:
            e = self.entries()[info.asset_id]
        except KeyError:
            raise KeyError(f"unknown user asset {info.asset_id!r}") from None
        return self.load_entry(e)
