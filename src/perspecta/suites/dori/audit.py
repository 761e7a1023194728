"""Cheap non-skill features of a DORI item for the shortcut audit.

Each is something a model could pick up *without* judging orientation: whether the
target is a plain procedural primitive, the asset source, how large the target is in
the picture, how much clutter surrounds it, how many options there are. The audit
feeds them to a cross-validated classifier; if any predicts the key better than
chance, the generator leaks it. (The object category is deliberately left out: knowing
that a round table has no front *is* the skill the "Cannot be determined" items test.)
"""

from __future__ import annotations

from typing import Any

PRIMITIVE_CATEGORIES = ("ball", "box", "cylinder", "table")


def _primitive(asset_id: str | None, category: str | None) -> str:
    return "yes" if (asset_id or "").startswith("proc:") and category in PRIMITIVE_CATEGORIES else "no"


def audit_features(item: dict[str, Any]) -> dict[str, str | float]:
    md = item.get("metadata") or {}
    out: dict[str, str | float] = {
        "primitive": _primitive(md.get("asset_id"), md.get("category")),
        "source": str(md.get("source", "")),
        "n_images": float(len(item.get("images") or [])),
        "n_options": float(md.get("n_options", 0)),
        "n_distractors": float(md.get("n_distractors", 0)),
        "backdrop": "realistic" if md.get("backdrop") else "plain",
    }
    if "asset_id_b" in md:
        out["primitive_b"] = _primitive(md.get("asset_id_b"), md.get("category_b"))
        out["source_b"] = str(md.get("source_b", ""))
    objects = (md.get("readability") or {}).get("objects") or {}
    if objects:
        sizes = [float(o.get("pixels", 0)) for o in objects.values()]
        out["target_pixels_min"] = min(sizes)
        out["target_pixels_max"] = max(sizes)
        boxes = [o.get("box", [0, 0]) for o in objects.values()]
        out["target_aspect"] = float(boxes[0][0]) / max(1.0, float(boxes[0][1]))
        if len(sizes) == 2:
            out["pixel_ratio"] = sizes[1] / max(1.0, sizes[0])
    return out
