"""Small helpers the sections share."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from perspecta.report.aggregate import RunState
from perspecta.report.summary import block


def kappa_of(b: dict[str, Any] | None) -> float | None:
    """Chance-corrected kappa (acc - p_e) / (1 - p_e) of an accuracy block with a chance level."""
    if not b or b.get("accuracy") is None or b.get("chance_level") is None or b["chance_level"] >= 1.0:
        return None
    p = b["chance_level"]
    return (b["accuracy"] - p) / (1.0 - p)


def run_kappa(st: RunState, scope: str = "all") -> float | None:
    """Kappa over a run's records that have a chance rate (MCQ and yes/no), for ``scope`` = all or a suite."""
    return kappa_of(block(st, "kappa_pool", scope))


def mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    if not vals:
        return None, None
    return float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
