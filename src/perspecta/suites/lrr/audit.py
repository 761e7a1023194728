"""Cheap non-skill features of an LRR item for the shortcut audit's classifier.

Everything here is visible without the skill a task names — what the subject or target
is, whether it is a procedural or a catalogue asset, how large it shows — and none of it
is derived from the answer (fields such as ``negative`` or ``true_heading`` are left
out on purpose: they describe the key, not the picture).
"""

from __future__ import annotations

from typing import Any


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def audit_features(item: dict[str, Any]) -> dict[str, str | float]:
    """Per-item features: subject/category words, asset source, target size in pixels."""
    meta = item.get("metadata") or {}
    out: dict[str, str | float] = {"n_images": float(len(item.get("images") or []))}
    for key in ("subject", "category", "x_category", "y_category"):
        if key in meta:
            out[key] = str(meta[key])
    for key in ("asset_id", "x_asset", "y_asset"):
        if key in meta:
            out[f"{key}_source"] = str(meta[key]).split(":", 1)[0]
    objects = ((meta.get("readability") or {}).get("objects") or {}).values()
    pixels = [float(o.get("pixels", 0)) for o in objects]
    sides = [float(max(o.get("box", [0, 0]))) for o in objects]
    if pixels:
        out["target_pixels"] = _mean(pixels)
        out["target_box_side"] = _mean(sides)
        out["target_pixels_spread"] = max(pixels) - min(pixels)
    return out
