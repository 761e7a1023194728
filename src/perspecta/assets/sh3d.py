"""Sweet Home 3D furniture (Debian's ``sweethome3d-furniture``) as an asset source.

Each ``.sh3f`` catalogue is a zip holding ``PluginFurnitureCatalog.properties``
(``id#N``, ``name#N``, ``model#N``, ``width#N`` ... in centimetres), a LICENSE file
and one folder per model with an OBJ, its MTL and textures. Only models named in the
reviewed allow-list (``data/sh3d_allowlist.yaml``) are listed: names mislead, and many
entries (windows, road markings, banknotes) make no sense as scene objects.

Frames. SH3D model space is Java3D's: +Y up, the piece's front toward +Z, and, since
the frame is right-handed, +X is the piece's *left* (a piece facing the viewer has
its left on the viewer's right). Sweet Home 3D first applies ``modelRotation#N``
(a row-major 3x3 matrix, ``v' = M v``), then centres the bounding box and scales it
to width (X) x height (Y) x depth (Z). Our canonical frame is +X front, +Y left,
+Z up, so ``canonical = (z, x, y)`` of SH3D space: a cyclic permutation, i.e. a proper
rotation (no mirroring). Width therefore becomes the canonical Y extent, depth the
X extent, height the Z extent; the origin moves to the bottom centre.

OBJ reading is a small reader of our own rather than trimesh's: SH3D files are a
narrow OBJ dialect (v/vt/vn/f/usemtl, many materials), we want triangle soups
grouped per material without vertex merging or re-indexing, and we must decide per
face whether a textured material really has UVs (models often reference a texture
from faces that carry none, where the material's colour is the right answer).
Texture file names in MTLs are sometimes absolute paths from the author's machine,
so they are resolved by base name inside the model's folder.
"""

from __future__ import annotations

import html
import io
import json
import os
import posixpath
import re
import warnings
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from perspecta.assets import cache as disk_cache
from perspecta.assets.library import AssetInfo
from perspecta.assets.mesh import Mesh, MeshPart, finish_triangles

CONVERTER_VERSION = 1
DEFAULT_DIR = Path("/usr/share/sweethome3d/furniture")
ALLOWLIST_PATH = Path(__file__).parent / "data" / "sh3d_allowlist.yaml"
FRONT_AXES = ("+Z", "-Z", "+X", "-X", "none")
MAX_TEXTURE_SIZE = 1024

# canonical = _SH3D_TO_CANONICAL @ sh3d: (x, y, z)_sh3d -> (z, x, y)
_SH3D_TO_CANONICAL = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=np.float64)


# --------------------------------------------------------------------------- catalogue


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java ``.properties`` file (comments, ``\\`` continuations, ``\\uXXXX``)."""
    props: dict[str, str] = {}
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None:
            if not line or line[0] in "#!":
                continue
            cur = line
        else:
            cur = pending + line
        trailing = len(cur) - len(cur.rstrip("\\"))
        if trailing % 2 == 1:
            pending = cur[:-1]
            continue
        pending = None
        key, value = _split_property(cur)
        props[key] = value
    if pending is not None:
        key, value = _split_property(pending)
        props[key] = value
    return props


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    def repl(m: re.Match[str]) -> str:
        body = m.group(1)
        if body[0] == "u":
            return chr(int(body[1:], 16))
        return _ESCAPES.get(body, body)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", repl, s)


def _split_property(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in " \t\f":
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in " \t\f":
            j += 1
    return _unescape(key), _unescape(line[j:])


@dataclass(frozen=True)
class SH3DModel:
    """One catalogue entry (sizes in centimetres, as in the catalogue)."""

    catalogue: str  # catalogue file stem, e.g. "BlendSwap-CC-0"
    catalogue_path: Path
    catalogue_name: str  # the catalogue's own name, e.g. "Blend Swap CC-0"
    index: int
    id: str  # e.g. "Blend Swap CC-0#armchair"
    name: str
    category: str  # SH3D's category ("Living room", "Vehicles", ...)
    model: str  # zip member of the OBJ
    icon: str  # zip member of the icon PNG
    width: float
    depth: float
    height: float
    rotation: tuple[float, ...] | None
    creator: str
    door_or_window: bool
    elevation: float = 0.0  # cm above the floor SH3D places the piece at (wall/ceiling items)

    @property
    def short_id(self) -> str:
        return self.id.split("#", 1)[-1]


def read_catalogue(path: Path) -> tuple[dict[str, str], list[SH3DModel]]:
    """Header properties and entries of one ``.sh3f`` catalogue."""
    path = Path(path)
    with zipfile.ZipFile(path) as zf:
        text = zf.read("PluginFurnitureCatalog.properties").decode("latin-1")
    props = parse_properties(text)
    header = {k: v for k, v in props.items() if "#" not in k}
    indices = sorted({int(k.split("#", 1)[1]) for k in props if k.startswith("id#")})
    models = []
    for i in indices:

        def get(key: str, default: str = "", _i: int = i) -> str:
            return props.get(f"{key}#{_i}", default).strip()

        try:
            rot_text = get("modelRotation")
            rotation = tuple(float(x) for x in rot_text.split()) if rot_text else None
            if rotation is not None and len(rotation) != 9:
                raise ValueError(f"modelRotation#{i} has {len(rotation)} numbers, expected 9")
            models.append(
                SH3DModel(
                    catalogue=path.stem,
                    catalogue_path=path,
                    catalogue_name=header.get("name", path.stem),
                    index=i,
                    id=get("id"),
                    name=get("name"),
                    category=get("category"),
                    model=get("model").lstrip("/"),
                    icon=get("icon").lstrip("/"),
                    width=float(get("width")),
                    depth=float(get("depth")),
                    height=float(get("height")),
                    rotation=rotation,
                    creator=get("creator"),
                    door_or_window=get("doorOrWindow") == "true",
                    elevation=float(get("elevation") or 0.0),
                )
            )
        except ValueError as exc:
            raise ValueError(f"{path}: malformed catalogue entry #{i}: {exc}") from None
    return header, models


def detect_license(text: str) -> str | None:
    """SPDX id of the Creative Commons licence a LICENSE text grants, if recognisable.

    Looks at the "released under ..." clause first (Blend Swap's files name both the
    licence and, further down, other licences in boilerplate), then the whole text.
    """
    text = re.sub(r"<style.*?</style>", " ", text, flags=re.S | re.I)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = re.sub(r"\s+", " ", text)
    m = re.search(r"released under (.{0,80})", text, flags=re.I)
    for chunk in ([m.group(1)] if m else []) + [text]:
        if re.search(r"attribution[ -]?share ?alike|by-sa", chunk, re.I):
            return "CC-BY-SA-3.0"
        if re.search(r"noncommercial|non-commercial|by-nc", chunk, re.I):
            return "CC-BY-NC-3.0"
        if re.search(r"attribution 3\.0", chunk, re.I):
            us = re.search(r"attribution 3\.0 united states|licenses/by/3\.0/us", chunk, re.I)
            return "CC-BY-3.0-US" if us else "CC-BY-3.0"
        if re.search(r"creative commons zero|cc-?zero|\bcc0\b|public domain", chunk, re.I):
            return "CC0-1.0"
    return None


# --------------------------------------------------------------------------- allow-list


@dataclass(frozen=True)
class AllowEntry:
    category: str
    front: str = "+Z"  # SH3D axis the piece faces after modelRotation, or "none"
    symmetric: bool = False
    note: str = ""


def load_allowlist(source: Path | dict[str, Any] | None = None) -> dict[str, AllowEntry]:
    """Read and validate the allow-list (a path, an already-parsed dict, or the default)."""
    import yaml

    where = "allow-list"
    if source is None or isinstance(source, (str, Path)):
        path = Path(source) if source is not None else ALLOWLIST_PATH
        where = str(path)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    else:
        data = source
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ValueError(f"{where}: expected a mapping with a 'models' mapping")
    out: dict[str, AllowEntry] = {}
    for model_id, entry in models.items():
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: entry {model_id!r} must be a mapping")
        unknown = set(entry) - {"category", "front", "symmetric", "note"}
        if unknown:
            raise ValueError(f"{where}: entry {model_id!r} has unknown field(s) {sorted(unknown)}")
        category = entry.get("category")
        if not isinstance(category, str) or not category:
            raise ValueError(f"{where}: entry {model_id!r} field 'category' must be a string")
        front = str(entry.get("front", "+Z"))
        if front not in FRONT_AXES:
            raise ValueError(f"{where}: entry {model_id!r} field 'front' must be one of {FRONT_AXES}")
        symmetric = entry.get("symmetric", False)
        if not isinstance(symmetric, bool):
            raise ValueError(f"{where}: entry {model_id!r} field 'symmetric' must be true/false")
        out[str(model_id)] = AllowEntry(category, front, symmetric, str(entry.get("note", "")))
    return out


# --------------------------------------------------------------------------- OBJ / MTL


@dataclass
class _Material:
    color: tuple[float, float, float] = (0.7, 0.7, 0.7)
    texture: str | None = None  # map_Kd as written in the MTL


def _parse_mtl(text: str) -> dict[str, _Material]:
    mats: dict[str, _Material] = {}
    cur: _Material | None = None
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if not parts:
            continue
        key = parts[0]
        rest = parts[1].strip() if len(parts) > 1 else ""
        if key == "newmtl":
            cur = mats.setdefault(rest, _Material())
        elif cur is None:
            continue
        elif key == "Kd":
            vals = rest.split()
            try:
                rgb = [min(1.0, max(0.0, float(v))) for v in vals[:3]]
            except ValueError:
                continue
            if len(rgb) == 1:
                rgb = rgb * 3
            if len(rgb) == 3:
                cur.color = (rgb[0], rgb[1], rgb[2])
        elif key == "map_Kd" and rest:
            # drop leading options such as "-s 1 1 1"; the rest (spaces allowed) is the file
            tokens = rest.split()
            while tokens and tokens[0].startswith("-"):
                opt = tokens.pop(0)
                nargs = {"-s": 3, "-o": 3, "-t": 3, "-mm": 2, "-bm": 1, "-blendu": 1,
                         "-blendv": 1, "-clamp": 1, "-texres": 1, "-boost": 1, "-imfchan": 1}
                del tokens[: nargs.get(opt, 1)]
            if tokens:
                cur.texture = " ".join(tokens)
    return mats


@dataclass
class _FaceGroup:
    v: list[int]
    vt: list[int]
    vn: list[int]


def _parse_obj(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], dict[str, _FaceGroup]]:
    """Vertices, uvs, normals, mtllib names and per-material triangle index lists.

    Indices are 0-based; -1 marks a missing uv/normal. Polygons are fanned.
    """
    v_lines: list[str] = []
    vt_lines: list[str] = []
    vn_lines: list[str] = []
    mtllibs: list[str] = []
    groups: dict[str, _FaceGroup] = {}
    group = groups.setdefault("", _FaceGroup([], [], []))
    for line in text.splitlines():
        if not line:
            continue
        c = line[0]
        if c == " " or c == "\t":
            line = line.lstrip()
            if not line:
                continue
            c = line[0]
        if c == "v":
            c1 = line[1:2]
            if c1 == " " or c1 == "\t":
                v_lines.append(line[2:])
            elif c1 == "t":
                vt_lines.append(line[3:])
            elif c1 == "n":
                vn_lines.append(line[3:])
        elif c == "f" and line[1:2] in (" ", "\t"):
            toks = line[2:].split()
            if len(toks) < 3:
                continue
            nv, nt, nn = len(v_lines), len(vt_lines), len(vn_lines)
            idx = []
            for tok in toks:
                p = tok.split("/")
                a = int(p[0])
                a = a - 1 if a > 0 else nv + a
                b = p[1] if len(p) > 1 else ""
                b_i = (int(b) - 1 if int(b) > 0 else nt + int(b)) if b else -1
                n_ = p[2] if len(p) > 2 else ""
                n_i = (int(n_) - 1 if int(n_) > 0 else nn + int(n_)) if n_ else -1
                idx.append((a, b_i, n_i))
            for k in range(1, len(idx) - 1):
                for a, b_i, n_i in (idx[0], idx[k], idx[k + 1]):
                    group.v.append(a)
                    group.vt.append(b_i)
                    group.vn.append(n_i)
        elif line.startswith("usemtl"):
            name = line[6:].strip()
            group = groups.setdefault(name, _FaceGroup([], [], []))
        elif line.startswith("mtllib"):
            mtllibs.append(line[6:].strip())

    def to_array(lines: list[str], width: int) -> np.ndarray:
        if not lines:
            return np.zeros((0, width), dtype=np.float64)
        rows = [ln.split()[:width] for ln in lines]
        rows = [r + ["0"] * (width - len(r)) for r in rows]
        return np.array(rows, dtype=np.float64)

    return to_array(v_lines, 3), to_array(vt_lines, 2), to_array(vn_lines, 3), mtllibs, groups


class _ZipResolver:
    """Finds files in a catalogue zip relative to a model folder, tolerantly."""

    def __init__(self, zf: zipfile.ZipFile) -> None:
        self.zf = zf
        self.names = set(zf.namelist())
        self.lower = {n.lower(): n for n in self.names}

    def find(self, folder: str, ref: str) -> str | None:
        ref = ref.replace("\\", "/").strip().strip('"')
        candidates = [posixpath.normpath(posixpath.join(folder, ref)), ref.lstrip("/")]
        base = ref.rsplit("/", 1)[-1]
        candidates.append(posixpath.join(folder, base))
        for c in candidates:
            if c in self.names:
                return c
            if c.lower() in self.lower:
                return self.lower[c.lower()]
        return None


def _read_texture(zf: zipfile.ZipFile, member: str, max_size: int) -> np.ndarray | None:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(zf.read(member))) as im:
            im = im.convert("RGB")
            if max(im.size) > max_size:
                scale = max_size / max(im.size)
                im = im.resize(
                    (max(1, round(im.size[0] * scale)), max(1, round(im.size[1] * scale))),
                    Image.Resampling.LANCZOS,
                )
            return np.asarray(im, dtype=np.uint8).copy()
    except Exception:  # unreadable image: fall back to the material colour
        return None


@dataclass
class _RawPart:
    name: str
    positions: np.ndarray  # (N, 3) file coordinates, soup
    normals: np.ndarray | None  # (N, 3) file-space normals when every vertex has one
    color: tuple[float, float, float]
    uvs: np.ndarray | None = None
    texture: np.ndarray | None = None


def read_obj_from_zip(
    zf: zipfile.ZipFile, member: str, max_texture_size: int = MAX_TEXTURE_SIZE
) -> list[_RawPart]:
    """Triangle soups of an OBJ inside a zip, one per (material, textured-or-not)."""
    resolver = _ZipResolver(zf)
    folder = posixpath.dirname(member)
    text = zf.read(member).decode("utf-8", errors="replace")
    verts, uvs, normals, mtllibs, groups = _parse_obj(text)
    materials: dict[str, _Material] = {}
    mtl_dirs: dict[str, str] = {}
    for lib in mtllibs:
        found = resolver.find(folder, lib)
        if found is None:
            continue
        mats = _parse_mtl(zf.read(found).decode("utf-8", errors="replace"))
        for k in mats:
            mtl_dirs[k] = posixpath.dirname(found)
        materials.update(mats)
    textures: dict[str, np.ndarray | None] = {}
    parts: list[_RawPart] = []
    for mat_name, g in groups.items():
        if not g.v:
            continue
        mat = materials.get(mat_name, _Material())
        vi = np.asarray(g.v, dtype=np.int64)
        ti = np.asarray(g.vt, dtype=np.int64)
        ni = np.asarray(g.vn, dtype=np.int64)
        if vi.max() >= len(verts) or vi.min() < 0:
            raise ValueError(f"{member}: face refers to a vertex that does not exist")
        tex = None
        if mat.texture and len(uvs):
            if mat.texture not in textures:
                found = resolver.find(mtl_dirs.get(mat_name, folder), mat.texture)
                textures[mat.texture] = (
                    _read_texture(zf, found, max_texture_size) if found else None
                )
            tex = textures[mat.texture]
        face_has_uv = (ti.reshape(-1, 3) >= 0).all(axis=1) & (ti.reshape(-1, 3) < len(uvs)).all(axis=1)
        face_has_n = (ni.reshape(-1, 3) >= 0).all(axis=1) & (ni.reshape(-1, 3) < len(normals)).all(axis=1)
        selections = [(face_has_uv, True), (~face_has_uv, False)] if tex is not None else [
            (np.ones(len(vi) // 3, dtype=bool), False)
        ]
        for face_mask, textured in selections:
            if not face_mask.any():
                continue
            vmask = np.repeat(face_mask, 3)
            pos = verts[vi[vmask]]
            nrm = None
            if face_has_n[face_mask].all():
                nrm = normals[ni[vmask]]
            part = _RawPart(name=mat_name, positions=pos, normals=nrm, color=mat.color)
            if textured and tex is not None:
                part.uvs = uvs[ti[vmask]]
                part.texture = tex
                part.color = tuple(float(c) for c in tex.reshape(-1, 3).mean(axis=0) / 255.0)  # type: ignore[assignment]
            parts.append(part)
    if not parts:
        raise ValueError(f"{member}: the OBJ has no faces")
    return parts


# --------------------------------------------------------------------------- conversion


def front_rotation(front: str) -> np.ndarray:
    """Yaw (about canonical +Z) that turns the SH3D axis ``front`` into canonical +X."""
    axis = {"+Z": (0, 0, 1), "-Z": (0, 0, -1), "+X": (1, 0, 0), "-X": (-1, 0, 0), "none": (0, 0, 1)}
    if front not in axis:
        raise ValueError(f"front must be one of {FRONT_AXES}, got {front!r}")
    f = _SH3D_TO_CANONICAL @ np.array(axis[front], dtype=np.float64)
    a = -np.arctan2(f[1], f[0])
    c, s = round(np.cos(a)), round(np.sin(a))  # multiples of 90 degrees: exact
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float64)


def convert_parts(
    raw: list[_RawPart],
    rotation: tuple[float, ...] | None,
    size_cm: tuple[float, float, float],
    front: str = "+Z",
) -> Mesh:
    """Apply SH3D's normalisation (rotation, centring, per-axis scale to
    width x height x depth) and the SH3D-to-canonical mapping; origin at bottom centre.

    ``size_cm`` is the catalogue's (width, depth, height) in centimetres.
    """
    width, depth, height = size_cm
    R = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64).reshape(3, 3)
    allpos = np.concatenate([p.positions for p in raw]) @ R.T
    lo, hi = allpos.min(axis=0), allpos.max(axis=0)
    centre = (lo + hi) / 2.0
    ext = hi - lo
    target = np.array([width, height, depth], dtype=np.float64) / 100.0  # SH3D x, y, z; metres
    scale = np.where(ext > 1e-12, target / np.maximum(ext, 1e-12), 1.0)
    Q = front_rotation(front) @ _SH3D_TO_CANONICAL
    A = Q @ np.diag(scale)  # applied after R and centring
    L = A @ R  # full linear map from file coordinates
    flip = np.linalg.det(L) < 0
    L_inv = np.linalg.inv(L)
    lift = np.array([0.0, 0.0, target[1] / 2.0])
    parts = []
    for p in raw:
        pos = (p.positions @ R.T - centre) @ A.T + lift
        nrm = None
        uvs = p.uvs
        if p.normals is not None:
            nrm = p.normals @ L_inv  # inverse-transpose, as rows
        pos, nrm, uvs = finish_triangles(pos, nrm, uvs, mirrored=flip)
        parts.append(
            MeshPart(
                positions=pos,
                normals=nrm,
                color=p.color,
                uvs=uvs,
                texture=p.texture,
                tintable=False,
                name=p.name,
            )
        )
    return Mesh(parts)


# --------------------------------------------------------------------------- the source


def _default_dir() -> Path:
    env = os.environ.get("PERSPECTA_SH3D_DIR")
    return Path(env) if env else DEFAULT_DIR


class SH3DSource:
    """Allow-listed Sweet Home 3D furniture, converted to the canonical frame.

    ``directory`` defaults to ``$PERSPECTA_SH3D_DIR`` or the Debian package's folder.
    ``allowlist`` is a path or parsed mapping (default: the reviewed list shipped with
    Perspecta). Converted meshes are cached on disk (see :mod:`perspecta.assets.cache`)
    unless ``use_disk_cache`` is False.
    """

    name = "sh3d"

    def __init__(
        self,
        directory: Path | str | None = None,
        allowlist: Path | str | dict[str, Any] | None = None,
        *,
        cache_dir: Path | str | None = None,
        use_disk_cache: bool = True,
        max_texture_size: int = MAX_TEXTURE_SIZE,
    ) -> None:
        self.directory = Path(directory) if directory is not None else _default_dir()
        self._allow_source = allowlist
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_disk_cache = use_disk_cache
        self.max_texture_size = max_texture_size

    def available(self) -> bool:
        return self.directory.is_dir() and any(self.directory.glob("*.sh3f"))

    def catalogues(self) -> list[Path]:
        return sorted(self.directory.glob("*.sh3f")) if self.directory.is_dir() else []

    @cached_property
    def allowlist(self) -> dict[str, AllowEntry]:
        return load_allowlist(self._allow_source)  # type: ignore[arg-type]

    @cached_property
    def _catalogue_data(self) -> tuple[dict[str, SH3DModel], dict[str, str | None]]:
        models: dict[str, SH3DModel] = {}
        licenses: dict[str, str | None] = {}
        for path in self.catalogues():
            _, entries = read_catalogue(path)
            with zipfile.ZipFile(path) as zf:
                lic = None
                for n in zf.namelist():
                    if n.upper() in ("LICENSE.TXT", "LICENSE"):
                        lic = detect_license(zf.read(n).decode("latin-1"))
                licenses[path.stem] = lic
            for m in entries:
                if m.id in models:
                    raise ValueError(f"model id {m.id!r} appears in two catalogues")
                models[m.id] = m
        return models, licenses

    def models(self) -> list[SH3DModel]:
        """Every catalogue entry, allow-listed or not (for reviewing the allow-list)."""
        return list(self._catalogue_data[0].values())

    def model(self, model_id: str) -> SH3DModel:
        try:
            return self._catalogue_data[0][model_id]
        except KeyError:
            raise KeyError(f"no SH3D model {model_id!r} in {self.directory}") from None

    def model_license(self, model: SH3DModel) -> str:
        """The model's own licence file when it has one (some Blend Swap models in the
        CC-0 catalogue are CC-BY), else the catalogue's LICENSE."""
        return self._licenses_for([model])[model.id]

    def asset_id(self, model: SH3DModel) -> str:
        return f"sh3d:{model.catalogue.lower()}/{model.short_id}"

    def info(self, model: SH3DModel, entry: AllowEntry, license: str | None = None) -> AssetInfo:
        license = license or self.model_license(model)
        w, d, h = model.width / 100.0, model.depth / 100.0, model.height / 100.0
        size = (w, d, h) if entry.front in ("+X", "-X") else (d, w, h)
        attribution = (
            f'"{model.name}" by {model.creator or "unknown"}, Sweet Home 3D furniture '
            f'library "{model.catalogue_name}" ({model.catalogue}.sh3f), {license}'
        )
        return AssetInfo(
            asset_id=self.asset_id(model),
            category=entry.category,
            source=self.name,
            size=(round(size[0], 6), round(size[1], 6), round(size[2], 6)),
            has_front=entry.front != "none",
            symmetric=entry.symmetric,
            license=license,
            attribution=attribution,
            name=model.name,
            extra={
                "sh3d_id": model.id,
                "catalogue": model.catalogue,
                "sh3d_category": model.category,
                "creator": model.creator,
                "front_axis": entry.front,
                "note": entry.note,
                "catalogue_path": str(model.catalogue_path),
                "short_id": model.short_id,
            },
        )

    def list(self) -> list[AssetInfo]:
        """Allow-listed models. The listing (which needs a scan of every catalogue zip
        for licences) is cached on disk, keyed by the catalogues and the allow-list, so
        each worker process starts in milliseconds."""
        if not self.available():
            return []
        cache_file = self._listing_cache_file() if self.use_disk_cache else None
        if cache_file is not None:
            try:
                records = json.loads(cache_file.read_text())
                return [AssetInfo(**{**r, "size": tuple(r["size"])}) for r in records]
            except (OSError, ValueError, TypeError, KeyError):
                pass  # absent or unreadable: rebuild it
        infos = self._list_uncached()
        if cache_file is not None:
            try:
                disk_cache.write_text_atomic(cache_file, json.dumps([a.to_dict() for a in infos]))
            except OSError as exc:
                warnings.warn(f"could not write the SH3D listing cache {cache_file}: {exc}", stacklevel=2)
        return infos

    def _listing_cache_file(self) -> Path:
        allow = self._allow_source
        allow_key = (
            json.dumps(allow, sort_keys=True, default=str) if isinstance(allow, dict)
            else disk_cache.file_fingerprint(Path(allow) if allow else ALLOWLIST_PATH)
        )
        key = {
            "converter": CONVERTER_VERSION,
            "allowlist": allow_key,
            "catalogues": [disk_cache.file_fingerprint(p) for p in self.catalogues()],
        }
        return disk_cache.cache_path("sh3d", "listing", key, self.cache_dir).with_suffix(".json")

    def _list_uncached(self) -> list[AssetInfo]:
        models = self._catalogue_data[0]
        out = []
        missing = []
        by_catalogue: dict[str, list[tuple[SH3DModel, AllowEntry]]] = {}
        for model_id, entry in self.allowlist.items():
            m = models.get(model_id)
            if m is None:
                missing.append(model_id)
                continue
            by_catalogue.setdefault(m.catalogue, []).append((m, entry))
        for _cat, items in by_catalogue.items():
            lic_by_folder = self._licenses_for([m for m, _ in items])
            for m, entry in items:
                out.append(self.info(m, entry, lic_by_folder[m.id]))
        if missing:
            warnings.warn(
                f"{len(missing)} allow-listed SH3D model(s) not found in {self.directory} "
                f"(another package version?): {missing[:5]}",
                stacklevel=2,
            )
        return sorted(out, key=lambda a: a.asset_id)

    def _licenses_for(self, models: list[SH3DModel]) -> dict[str, str]:
        """Licences of several models of one catalogue with a single zip scan."""
        if not models:
            return {}
        path = models[0].catalogue_path
        cat_lic = self._catalogue_data[1].get(models[0].catalogue)
        out: dict[str, str] = {}
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            for m in models:
                folder = posixpath.dirname(m.model) + "/"
                lic = None
                for n in names:
                    if n.startswith(folder) and re.search(r"licen[cs]e", n.rsplit("/", 1)[-1], re.I):
                        lic = detect_license(zf.read(n).decode("utf-8", errors="replace"))
                        if lic:
                            break
                lic = lic or cat_lic
                if lic is None:
                    raise ValueError(f"{path}: cannot determine the licence of {m.id}")
                out[m.id] = lic
        return out

    def _cache_file(self, model: SH3DModel, front: str) -> Path:
        return self._cache_file_for(model.catalogue_path, model.catalogue, model.id, model.short_id, front)

    def _cache_file_for(self, catalogue_path: Path, catalogue: str, model_id: str, short_id: str, front: str) -> Path:
        key = {
            "converter": CONVERTER_VERSION,
            "catalogue": disk_cache.file_fingerprint(catalogue_path),
            "id": model_id,
            "front": front,
            "max_texture": self.max_texture_size,
        }
        return disk_cache.cache_path("sh3d", f"{catalogue}-{short_id}", key, self.cache_dir)

    def load_model(self, model: SH3DModel, front: str = "+Z") -> Mesh:
        """Convert one catalogue entry (no caching)."""
        with zipfile.ZipFile(model.catalogue_path) as zf:
            if model.model not in zf.namelist():
                raise FileNotFoundError(f"{model.catalogue_path}: no member {model.model!r} for {model.id}")
            raw = read_obj_from_zip(zf, model.model, self.max_texture_size)
        return convert_parts(raw, model.rotation, (model.width, model.depth, model.height), front)

    def _extent_record(self, info: AssetInfo) -> Path | None:
        """The mesh cache entry whose extent record stands for ``info`` (None without a disk cache)."""
        if not (self.use_disk_cache and info.extra and "catalogue_path" in info.extra and info.extra.get("sh3d_id")):
            return None
        return self._cache_file_for(Path(info.extra["catalogue_path"]), info.extra["catalogue"],
                                    info.extra["sh3d_id"], info.extra["short_id"], info.extra.get("front_axis", "+Z"))

    def cached_extent(self, info: AssetInfo, params: dict[str, Any] | None = None) -> np.ndarray | None:
        """``load(info).extent()`` as recorded in the disk cache, or None: samplers ask
        every candidate's extent, and a record is a few bytes where the mesh is megabytes."""
        path = self._extent_record(info)
        return None if path is None else disk_cache.load_extent(path)

    def record_extent(self, info: AssetInfo, params: dict[str, Any] | None, extent: np.ndarray) -> None:
        """Keep ``extent`` (of a mesh just loaded) for :meth:`cached_extent`."""
        path = self._extent_record(info)
        if path is None:
            return
        try:
            disk_cache.save_extent(path, extent)
        except OSError as exc:  # read-only cache: only slower
            warnings.warn(f"could not write the extent record {path}: {exc}", stacklevel=2)

    def load(self, info: AssetInfo, params: dict[str, Any] | None = None) -> Mesh:
        model_id = info.extra.get("sh3d_id") if info.extra else None
        if not model_id:
            raise KeyError(f"{info.asset_id} is not an SH3D asset (no sh3d_id)")
        front = info.extra.get("front_axis", "+Z")
        path = None
        if self.use_disk_cache and "catalogue_path" in info.extra:
            # the cache key comes from the listing, so a hit parses no catalogue
            path = self._cache_file_for(Path(info.extra["catalogue_path"]), info.extra["catalogue"],
                                        model_id, info.extra["short_id"], front)
            cached = disk_cache.load_mesh(path)
            if cached is not None:
                return cached
        model = self.model(model_id)
        if self.use_disk_cache and path is None:
            path = self._cache_file(model, front)
        mesh = self.load_model(model, front)
        if path is not None:
            try:
                disk_cache.save_mesh(path, mesh)
            except OSError as exc:  # read-only home etc.: still return the mesh
                warnings.warn(f"could not write the mesh cache {path}: {exc}", stacklevel=2)
        return mesh
