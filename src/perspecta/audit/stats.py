"""Intervals for a share of items: a cluster bootstrap that never collapses on tiny cells.

Items of one cluster (variants of one fact) are resampled together. A percentile
bootstrap of 9 right out of 9 has zero width, which would let a tiny subtype fail the
audit on luck; so the interval is widened to at least the Wilson score interval at the
bootstrap's effective sample size (the number of clusters when the bootstrap cannot
tell). Both bounds are seeded: the same data give the same interval, byte for byte.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

N_BOOT = 2000
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, float]:
        return {"value": round(self.value, 4), "lo": round(self.lo, 4), "hi": round(self.hi, 4)}


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _cluster_bootstrap(values: np.ndarray, cluster: np.ndarray, key: str,
                       confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, float]]:
    """Per-cluster sums and sizes of ``values``, the bootstrap means (clusters resampled
    N_BOOT times, seeded by ``key`` so a rerun prints the same interval) and their
    ``confidence`` percentile interval."""
    ids, inverse = np.unique(cluster, return_inverse=True)
    c = len(ids)
    sums = np.bincount(inverse, weights=values.astype(float), minlength=c)
    counts = np.bincount(inverse, minlength=c).astype(float)
    rng = np.random.default_rng(zlib.crc32(key.encode("utf-8")))
    draw = rng.integers(0, c, size=(N_BOOT, c))
    boot = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    alpha = 1.0 - confidence
    b_lo, b_hi = (float(x) for x in np.quantile(boot, [alpha / 2, 1 - alpha / 2]))
    return sums, counts, boot, (b_lo, b_hi)


def share_interval(hits: np.ndarray, cluster: np.ndarray, key: str, confidence: float = 0.95) -> Estimate:
    """Point estimate and ``confidence`` interval of ``hits.mean()`` resampling clusters."""
    n = len(hits)
    if n == 0:
        return Estimate(float("nan"), 0.0, 1.0)
    p = float(hits.mean())
    sums, counts, boot, (b_lo, b_hi) = _cluster_bootstrap(hits, cluster, key, confidence)
    c = len(sums)
    alpha = 1.0 - confidence
    var = float(boot.var())
    n_eff = p * (1 - p) / var if var > 0 else float(c)
    n_eff = min(max(n_eff, float(c)), float(n))
    w_lo, w_hi = wilson(p, n_eff, z=float(norm.ppf(1 - alpha / 2)))
    return Estimate(p, min(b_lo, w_lo), max(b_hi, w_hi))


def mean_interval(values: np.ndarray, cluster: np.ndarray, key: str, confidence: float = 0.95) -> Estimate:
    """Mean of ``values`` (e.g. hit minus chance, per item) with a percentile cluster
    bootstrap interval, widened to at least a normal interval from the between-cluster
    spread (so a few clusters cannot collapse it)."""
    n = len(values)
    if n == 0:
        return Estimate(float("nan"), -1.0, 1.0)
    m = float(values.mean())
    sums, counts, _, (b_lo, b_hi) = _cluster_bootstrap(values, cluster, key, confidence)
    c = len(sums)
    alpha = 1.0 - confidence
    resid = sums - m * counts
    se = math.sqrt(float((resid ** 2).sum())) / float(counts.sum()) if c > 1 else 1.0
    z = float(norm.ppf(1 - alpha / 2))
    return Estimate(m, min(b_lo, m - z * se), max(b_hi, m + z * se))
