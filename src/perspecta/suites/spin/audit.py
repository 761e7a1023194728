"""Cheap non-skill features of a SpinBench item for the shortcut audit.

The audit trains a cross-validated classifier on these to see whether the answer
follows from something other than the spatial skill: what object is shown (category,
procedural primitive or catalogue asset), how large it is in the image, how many objects
and images there are, the prompt layout and the occlusion level. Nothing here reads the
answer or a field that encodes it (translation direction, candidate order).
"""

from __future__ import annotations

from typing import Any


def audit_features(item: dict[str, Any]) -> dict[str, str | float]:
    md = item.get("metadata", {})
    out: dict[str, str | float] = {
        "domain": str(md.get("domain", "tabletop")),
        "n_images": float(len(item.get("images", []))),
        "n_options": float(len(item.get("options", []))),
        "n_objects": float(md.get("n_objects", 1)),
    }
    if "category" in md:
        out["category"] = str(md["category"])
    asset = md.get("asset_id")
    if isinstance(asset, str):
        out["primitive"] = "yes" if asset.startswith("proc:") else "no"
    names = md.get("names")
    if isinstance(names, dict):
        out["named_categories"] = "|".join(sorted(str(v) for v in names.values()))
    objs = (md.get("readability") or {}).get("objects") or {}
    if objs:
        out["min_named_px"] = float(min(f.get("pixels", 0) for f in objs.values()))
        out["max_named_px"] = float(max(f.get("pixels", 0) for f in objs.values()))
    for key in ("layout", "occlusion", "view", "asked_view", "premise_relation", "relation", "view_frame"):
        if key in md and md[key] is not None:
            out[key] = str(md[key])
    return out
