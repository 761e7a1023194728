"""Structural checks for item and manifest records, as lists of readable errors.

Written as plain Python rather than JSON Schema or pydantic for two reasons: most of
the rules are cross-field (the answer must be one of the option labels, an image
option must index into ``images``, the number of ``<image>`` markers must equal the
number of images, the id must repeat suite/task/variant), which JSON Schema cannot
state and pydantic would bury in validators; and the generator may call
:func:`check_item` once per item, where a dict walk costs microseconds and adds no
dependency. Every error names the field it is about, e.g.
``field 'answer': not among option labels A, B, C``, so a report line plus a file
position is enough to find and fix the record.
"""

from __future__ import annotations

import re
from typing import Any

from perspecta.dataset.item import IMAGE_MARKER, Item

ANSWER_TYPES = ("mcq", "yesno", "open")
GRANULARITIES = ("coarse", "granular")
SPLITS = ("test", "train", "val")
YESNO_ANSWERS = ("yes", "no")

# One path segment of an item id: suite, task, variant ("symmetric+syntactic") or the
# running number ("000012", "000012-1").
_ID_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

# field -> (accepted Python types, required). bool is excluded from int explicitly below.
_ITEM_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "id": ((str,), True),
    "suite": ((str,), True),
    "task": ((str,), True),
    "question": ((str,), True),
    "images": ((list,), True),
    "answer_type": ((str,), True),
    "answer": ((str,), True),
    "subtype": ((str,), False),
    "granularity": ((str, type(None)), False),
    "options": ((list,), False),
    "answer_aliases": ((list,), False),
    "group": ((str,), False),
    "variant": ((str,), False),
    "split": ((str,), False),
    "scene_id": ((str,), False),
    "seed": ((int,), False),
    "metadata": ((dict,), False),
}
ITEM_FIELDS: tuple[str, ...] = tuple(_ITEM_FIELDS)
_OPTION_KEYS = ("label", "text", "image")

_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object", type(None): "null"}


def _type_name(value: Any) -> str:
    return {
        str: "string",
        int: "integer",
        float: "number",
        bool: "boolean",
        list: "list",
        dict: "object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _is(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _expected(types: tuple[type, ...]) -> str:
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)


def check_relative_path(path: Any) -> str | None:
    """Why ``path`` is not a clean dataset-relative POSIX path, or None if it is.

    Clean means: a non-empty string, forward slashes only, not absolute, and no empty,
    ``.`` or ``..`` segment -- so one file has exactly one spelling (which the
    split-disjointness check relies on) and no path can leave the dataset root.
    """
    if not isinstance(path, str):
        return f"expected a string path, got {_type_name(path)}"
    if not path:
        return "empty path"
    if "\\" in path:
        return f"path {path!r} contains a backslash (use '/')"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return f"path {path!r} is absolute (must be relative to the dataset root)"
    parts = path.split("/")
    if ".." in parts:
        return f"path {path!r} contains '..' (must stay inside the dataset root)"
    if any(p in ("", ".") for p in parts):
        return f"path {path!r} is not normalised (empty or '.' segment)"
    return None


def check_item(d: Any) -> list[str]:
    """All schema errors of one ``items.jsonl`` record (empty list = valid).

    Required fields are those of :class:`Item` without defaults; optional ones may be
    omitted but must have the right type when present. Unknown fields are errors:
    :meth:`Item.from_dict` would drop them silently, so a misspelt field would lose
    data without anyone noticing.
    """
    if not isinstance(d, dict):
        return [f"item must be a JSON object, got {_type_name(d)}"]
    errors: list[str] = []
    ok: dict[str, bool] = {}  # fields that are present and well-typed
    for name, (types, required) in _ITEM_FIELDS.items():
        if name not in d:
            if required:
                errors.append(f"field '{name}': missing (required)")
            continue
        if not _is(d[name], types):
            errors.append(f"field '{name}': expected {_expected(types)}, got {_type_name(d[name])}")
            continue
        ok[name] = True
    for name in d:
        if name not in _ITEM_FIELDS:
            errors.append(f"field '{name}': unknown field (known: {', '.join(ITEM_FIELDS)})")

    def get(name: str, default: Any = None) -> Any:
        return d[name] if ok.get(name) else default

    for name in ("id", "suite", "task", "question"):
        if ok.get(name) and not d[name].strip():
            errors.append(f"field '{name}': empty")

    _check_id(d, ok, errors)

    images = get("images")
    if images is not None:
        for i, p in enumerate(images):
            why = check_relative_path(p)
            if why:
                errors.append(f"field 'images[{i}]': {why}")
        question = get("question")
        if question is not None:
            n_markers = question.count(IMAGE_MARKER)
            if n_markers != len(images):
                errors.append(
                    f"field 'question': has {n_markers} {IMAGE_MARKER} marker(s) but 'images' has {len(images)} entr"
                    + ("y" if len(images) == 1 else "ies")
                )

    granularity = get("granularity")
    if granularity is not None and granularity not in GRANULARITIES:
        errors.append(f"field 'granularity': {granularity!r} is not one of coarse, granular, null")
    split = get("split")
    if split is not None and split not in SPLITS:
        errors.append(f"field 'split': {split!r} is not one of {', '.join(SPLITS)}")
    seed = get("seed")
    if seed is not None and seed < 0:
        errors.append(f"field 'seed': must be >= 0, got {seed}")
    aliases = get("answer_aliases")
    if aliases is not None:
        for i, a in enumerate(aliases):
            if not isinstance(a, str) or not a.strip():
                errors.append(f"field 'answer_aliases[{i}]': expected a non-empty string, got {a!r}")

    labels = _check_options(d, ok, errors, n_images=len(images) if images is not None else None)

    answer_type = get("answer_type")
    answer = get("answer")
    options = get("options", [])
    if answer_type is not None and answer_type not in ANSWER_TYPES:
        errors.append(f"field 'answer_type': {answer_type!r} is not one of {', '.join(ANSWER_TYPES)}")
    elif answer_type == "mcq":
        if ok.get("options") or "options" not in d:
            if len(options) < 2:
                errors.append(f"field 'options': an mcq item needs at least 2 options, got {len(options)}")
        if answer is not None and labels and answer not in labels:
            errors.append(f"field 'answer': {answer!r} not among option labels {', '.join(labels)}")
    elif answer_type == "yesno":
        if answer is not None and answer not in YESNO_ANSWERS:
            errors.append(f"field 'answer': {answer!r} is not 'yes' or 'no' (answer_type yesno)")
        if options:
            errors.append(f"field 'options': must be empty for answer_type yesno, got {len(options)}")
    elif answer_type == "open":
        if answer is not None and not answer.strip():
            errors.append("field 'answer': empty (answer_type open needs the canonical answer)")
        if options:
            errors.append(f"field 'options': must be empty for answer_type open, got {len(options)}")
    return errors


def _check_id(d: dict[str, Any], ok: dict[str, bool], errors: list[str]) -> None:
    """The id must read ``<suite>/<task>/<variant>/<n>`` and agree with those fields."""
    if not ok.get("id") or not d["id"].strip():
        return
    parts = d["id"].split("/")
    if len(parts) != 4 or not all(_ID_PART.match(p) for p in parts):
        errors.append(
            f"field 'id': {d['id']!r} does not match '<suite>/<task>/<variant>/<n>' "
            "(four parts of letters, digits, '_', '.', '+', '-')"
        )
        return
    for idx, name in ((0, "suite"), (1, "task"), (2, "variant")):
        value = d.get(name, "base") if name == "variant" else d.get(name)
        if (ok.get(name) or (name == "variant" and name not in d)) and parts[idx] != value:
            errors.append(f"field 'id': {name} part {parts[idx]!r} differs from field '{name}' {value!r}")


def _check_options(
    d: dict[str, Any], ok: dict[str, bool], errors: list[str], n_images: int | None
) -> list[str] | None:
    """Check each option; return the labels seen (None if options are unusable)."""
    if "options" not in d:
        return []
    if not ok.get("options"):
        return None
    labels: list[str] = []
    for i, opt in enumerate(d["options"]):
        where = f"field 'options[{i}]"
        if not isinstance(opt, dict):
            errors.append(f"{where}': expected an object, got {_type_name(opt)}")
            continue
        for key in opt:
            if key not in _OPTION_KEYS:
                errors.append(f"{where}.{key}': unknown option field (known: label, text, image)")
        label = opt.get("label")
        if not isinstance(label, str) or not label.strip():
            errors.append(f"{where}.label': expected a non-empty string, got {label!r}")
        elif label in labels:
            errors.append(f"{where}.label': duplicate label {label!r}")
        else:
            labels.append(label)
        text, image = opt.get("text"), opt.get("image")
        if (text is None) == (image is None):
            errors.append(f"{where}': needs exactly one of 'text' or 'image'")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            errors.append(f"{where}.text': expected a non-empty string, got {text!r}")
        if image is not None:
            if not _is(image, (int,)):
                errors.append(f"{where}.image': expected an integer image index, got {_type_name(image)}")
            elif n_images is not None and not 0 <= image < n_images:
                errors.append(f"{where}.image': index {image} out of range for {n_images} image(s)")
    return labels


def check_item_obj(item: Item) -> list[str]:
    """:func:`check_item` on an :class:`Item` (what a generator calls before writing)."""
    return check_item(item.to_dict())


def ensure_item(item: Item) -> Item:
    """Return ``item`` unchanged, or raise ``ValueError`` listing its schema errors."""
    errors = check_item_obj(item)
    if errors:
        raise ValueError(f"invalid item {item.id!r}: " + "; ".join(errors))
    return item


# --------------------------------------------------------------------------- manifest

MANIFEST_KEYS = (
    "name",
    "generator",
    "created_by_command",
    "seed",
    "suites",
    "renderer",
    "counts",
    "checksums",
    "assets",
)


def check_manifest(m: Any) -> list[str]:
    """Schema errors of a parsed ``manifest.json``.

    All keys listed in :data:`MANIFEST_KEYS` are required (``assets`` may be an empty
    list for a procedural-only dataset); extra top-level keys are allowed so the
    generator can record more provenance without a schema change.
    ``counts.by_task`` is keyed ``"<suite>/<task>"``.
    """
    if not isinstance(m, dict):
        return [f"manifest must be a JSON object, got {_type_name(m)}"]
    errors: list[str] = []

    def expect(path: str, value: Any, types: tuple[type, ...]) -> bool:
        if not _is(value, types):
            errors.append(f"field '{path}': expected {_expected(types)}, got {_type_name(value)}")
            return False
        return True

    for key in MANIFEST_KEYS:
        if key not in m:
            errors.append(f"field '{key}': missing (required)")
    if "name" in m and expect("name", m["name"], (str,)) and not m["name"].strip():
        errors.append("field 'name': empty")
    for key, subkeys in (("generator", ("package", "version")), ("renderer", ("name", "version"))):
        if key in m and expect(key, m[key], (dict,)):
            for sub in subkeys:
                if sub not in m[key]:
                    errors.append(f"field '{key}.{sub}': missing (required)")
                else:
                    expect(f"{key}.{sub}", m[key][sub], (str,))
    if "created_by_command" in m:
        cmd = m["created_by_command"]
        if not (isinstance(cmd, str) or (isinstance(cmd, list) and all(isinstance(c, str) for c in cmd))):
            errors.append(f"field 'created_by_command': expected a string or a list of strings, got {_type_name(cmd)}")
    if "seed" in m:
        expect("seed", m["seed"], (int,))
    if "suites" in m and expect("suites", m["suites"], (dict,)):
        for suite, cfg in m["suites"].items():
            p = f"suites.{suite}"
            if not expect(p, cfg, (dict,)):
                continue
            if "tasks" not in cfg:
                errors.append(f"field '{p}.tasks': missing (required)")
            elif expect(f"{p}.tasks", cfg["tasks"], (list,)):
                for i, t in enumerate(cfg["tasks"]):
                    expect(f"{p}.tasks[{i}]", t, (str,))
            if "n" not in cfg:
                errors.append(f"field '{p}.n': missing (required)")
            else:
                expect(f"{p}.n", cfg["n"], (int, dict))
            if "config" in cfg:
                expect(f"{p}.config", cfg["config"], (dict,))
    if "counts" in m and expect("counts", m["counts"], (dict,)):
        for key in ("items", "images", "scenes"):
            if key not in m["counts"]:
                errors.append(f"field 'counts.{key}': missing (required)")
            else:
                expect(f"counts.{key}", m["counts"][key], (int,))
        if "by_task" not in m["counts"]:
            errors.append("field 'counts.by_task': missing (required)")
        elif expect("counts.by_task", m["counts"]["by_task"], (dict,)):
            for k, v in m["counts"]["by_task"].items():
                expect(f"counts.by_task.{k}", v, (int,))
    if "checksums" in m and expect("checksums", m["checksums"], (dict,)):
        for path, digest in m["checksums"].items():
            why = check_relative_path(path)
            if why:
                errors.append(f"field 'checksums': {why}")
            if not isinstance(digest, str) or not _SHA256.match(digest):
                errors.append(f"field 'checksums.{path}': expected 64 lowercase hex digits (sha256), got {digest!r}")
    if "assets" in m and expect("assets", m["assets"], (list,)):
        for i, a in enumerate(m["assets"]):
            if not expect(f"assets[{i}]", a, (dict,)):
                continue
            for key in ("asset_id", "license", "attribution"):
                if key not in a:
                    errors.append(f"field 'assets[{i}].{key}': missing (required)")
                else:
                    expect(f"assets[{i}].{key}", a[key], (str,))
    return errors
