"""Cheap non-skill features for `perspecta audit`: which shape each colour got. A box or a
cylinder must not tell which colour is taller (shapes are drawn independently of it)."""

from __future__ import annotations

from typing import Any


def audit_features(item: dict[str, Any]) -> dict[str, str | float]:
    shapes = (item.get("metadata") or {}).get("shapes") or {}
    return {f"{colour}_shape": str(shape) for colour, shape in sorted(shapes.items())}
