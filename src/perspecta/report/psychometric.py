"""Psychometric curves: accuracy against one difficulty knob, with a fitted logistic.

A swept knob (``perspecta generate --sweep``) gives a handful of knob values with a count
of right answers at each. The fit is the classic psychometric function rising from the
chance rate ``c`` (a guessing model still scores ``c`` when the item is hopeless) to 1::

    p(x) = c + (1 - c) * sigmoid(a + b * x)

by maximum likelihood on the binomial counts. The knob is standardised before fitting so
one bound on (a, b) suits every unit; the bounds only matter under perfect separation,
where the unbounded maximum lies at infinity. Whether there is a trend at all is a
likelihood-ratio test of ``b = 0`` (1 degree of freedom): a model at ceiling or at chance
everywhere is reported *flat*, not given a meaningless threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logit
from scipy.stats import chi2

from perspecta.audit.stats import wilson

TARGET = 0.75  # the threshold level reported ("reaches 75% above x")
FLAT_ALPHA = 0.05  # likelihood-ratio p-value at or above which the slope is "flat"
MIN_VALUES = 3  # distinct knob values a curve needs
_BOUND = 25.0  # |a|, |b| on the standardised knob: steeper than any sweep step can resolve
_EPS = 1e-9


@dataclass(frozen=True)
class Fit:
    """A fitted curve on the knob's own scale and its 75%-correct verdict."""

    chance: float
    a: float  # intercept and slope on the ORIGINAL knob scale: p = c + (1-c) sigmoid(a + b x)
    b: float
    lr_p: float  # likelihood-ratio p-value of the slope (b = 0)
    x_min: float
    x_max: float
    threshold: float | None  # knob value where p = 75%, when inside the swept range
    verdict: str  # "flat", "above", "below", "not reached in range", "above 75% across the range"

    def predict(self, x: np.ndarray | float) -> np.ndarray:
        return self.chance + (1.0 - self.chance) * expit(self.a + self.b * np.asarray(x, dtype=float))

    def describe(self, knob: str) -> str:
        """One line for the table, e.g. ``75% above 38.2 rotation_deg``."""
        if self.verdict in ("above", "below"):
            return f"≥ 75% {self.verdict} {self.threshold:.3g} {knob}"
        return self.verdict


def _nll(params: np.ndarray, z: np.ndarray, k: np.ndarray, n: np.ndarray, c: float) -> float:
    p = np.clip(c + (1.0 - c) * expit(params[0] + params[1] * z), _EPS, 1.0 - _EPS)
    return float(-(k * np.log(p) + (n - k) * np.log1p(-p)).sum())


def _loglik_const(k: np.ndarray, n: np.ndarray, c: float) -> float:
    """Maximum log-likelihood of one accuracy for every value, constrained to [c, 1]."""
    p = min(max(k.sum() / n.sum(), c), 1.0)
    p = min(max(p, _EPS), 1.0 - _EPS)
    return float((k * math.log(p) + (n - k) * math.log1p(-p)).sum())


def fit_curve(xs: list[float], correct: list[float], totals: list[float], chance: float) -> Fit:
    """Fit ``p(x) = c + (1-c) sigmoid(a + b x)`` to ``correct[i]`` of ``totals[i]`` at knob ``xs[i]``.

    ``xs`` needs at least :data:`MIN_VALUES` distinct values. Several starting points make
    the fit deterministic and robust: with a chance floor the likelihood is not concave.
    """
    x = np.asarray(xs, dtype=float)
    k = np.asarray(correct, dtype=float)
    n = np.asarray(totals, dtype=float)
    if len(np.unique(x)) < MIN_VALUES:
        raise ValueError(f"a psychometric fit needs {MIN_VALUES}+ distinct knob values, got {sorted(set(xs))}")
    if not 0.0 <= chance < 1.0:
        raise ValueError(f"chance rate {chance} outside [0, 1)")
    mu, sd = float(x.mean()), float(x.std()) or 1.0
    z = (x - mu) / sd
    best = None
    for a0 in (-2.0, 0.0, 2.0):
        for b0 in (-2.0, 0.0, 2.0):
            res = minimize(_nll, np.array([a0, b0]), args=(z, k, n, chance), method="L-BFGS-B",
                           bounds=[(-_BOUND, _BOUND)] * 2)
            if best is None or res.fun < best.fun - 1e-12:
                best = res
    a_z, b_z = (float(v) for v in best.x)
    lr = max(0.0, 2.0 * (-best.fun - _loglik_const(k, n, chance)))
    lr_p = float(chi2.sf(lr, 1))
    a, b = a_z - b_z * mu / sd, b_z / sd  # back to the knob's own scale
    lo, hi = float(x.min()), float(x.max())
    fit = Fit(chance, a, b, lr_p, lo, hi, None, "flat")
    if lr_p >= FLAT_ALPHA or b == 0.0:
        return fit
    q = (TARGET - chance) / (1.0 - chance)
    if q <= 0.0:  # chance alone is at or above 75% (not a benchmark design we make)
        return Fit(chance, a, b, lr_p, lo, hi, None, "above 75% across the range")
    x75 = (float(logit(q)) - a) / b
    if lo <= x75 <= hi:
        return Fit(chance, a, b, lr_p, lo, hi, x75, "above" if b > 0 else "below")
    ends = fit.predict(np.array([lo, hi]))
    verdict = "above 75% across the range" if ends.min() >= TARGET else "not reached in range"
    return Fit(chance, a, b, lr_p, lo, hi, None, verdict)


def wilson_interval(correct: float, n: float) -> tuple[float, float]:
    """95% Wilson score interval of ``correct / n`` (sensible at 0/n and n/n, unlike the normal one)."""
    return wilson(correct / n if n else 0.0, n)
