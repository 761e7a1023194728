"""Cheap non-skill features of a PCSR item for the shortcut audit.

The audit feeds these to a cross-validated classifier: if the room type, the named
objects' categories, how big they look in the panorama or which option sits where
predicted the answer, a model could score without spatial reasoning. They are read
from the stored item only (no image, no scene geometry). Named-object sizes are those
of the objects a question names; a counting question names a category, not objects.
"""

from __future__ import annotations

from typing import Any


def audit_features(item: dict[str, Any]) -> dict[str, str | float]:
    m = item.get("metadata") or {}
    out: dict[str, str | float] = {
        "room_type": str(m.get("room_type")),
        "n_objects": float(m.get("n_objects") or 0),
        "format": str(m.get("format", item.get("answer_type"))),
    }
    for role in ("category", "anchor", "start", "facing", "at", "target", "object_a", "object_b"):
        if m.get(role):
            out[f"named_{role}"] = str(m[role])
    objects = (m.get("readability") or {}).get("objects") or {}
    # T0's record lists the counted instances, which the question does not name: their
    # number IS the answer, so any statistic over them (the smallest of k, the largest of
    # k, none at zero) encodes the count -- a property of this summary, not a cue a model
    # sees without counting. A counting item's cheap features are its room and category.
    if objects and "count_3d" not in m:
        px = [float(f.get("pixels", 0)) for f in objects.values()]
        out["min_named_px"] = min(px)
        out["max_named_px"] = max(px)
    if item.get("answer_type") == "mcq":
        opts = m.get("options") or {}
        out["n_options"] = float(len(opts))
        for label, text in opts.items():
            out[f"option_{label}"] = str(text)
        try:  # numeric options (counting): the value range shown
            vals = sorted(int(v) for v in opts.values())
            out["option_min"], out["option_max"] = float(vals[0]), float(vals[-1])
        except (ValueError, IndexError):
            pass
    for k in ("fov", "turn", "threshold_m", "hops"):
        if k in m:
            out[k] = float(m[k])
    if "direction" in m:
        out["direction"] = str(m["direction"])
    return out
