"""SpinBench's formulas: chance-corrected kappa, Cohen's kappa, pairwise consistency and
the 16 four-variant answer patterns. :mod:`.accumulate` folds records into the counts
these take; nothing here holds records.

Kappa comes in the two forms the paper's citations (Cohen 1960; Coenen 2014) give:

* :func:`chance_kappa` — accuracy normalised by the chance rate of a k-option MCQ,
  ``(acc - p_e) / (1 - p_e)`` with ``p_e`` the mean of ``1/k`` over the items. This is
  what makes tasks with 2, 3 and 4 options comparable (0 = guessing, 1 = perfect) and
  is the per-subtype ``kappa`` reported.
* :func:`cohen_kappa` — Cohen's kappa between gold and predicted labels, with ``p_e``
  from the two label distributions (identical to ``sklearn.metrics.cohen_kappa_score``);
  reported as ``cohen_kappa``. It also penalises a model that always answers "A".

Every record asked counts: a failed request or an unparsed reply is a wrong answer, and
for Cohen's kappa a prediction of its own :data:`NO_ANSWER` label (never a gold label,
so always a disagreement).

Consistency (paper B.2.2): two variants of one question agree when both are right or
both wrong; a failed or unparsed variant agrees with nothing (:func:`agree`), so failures
can only lower it. A group's consistency is the share of agreeing pairs, and the metric
is the mean over groups. Perfect rate is the
share of 4-variant groups answered CCCC or WWWW.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

VARIANT_ORDER = ("base", "symmetric", "syntactic", "symmetric+syntactic")
PATTERNS = tuple("".join(p) for p in itertools.product("CW", repeat=4))  # CCCC, CCCW, ..., WWWW
NO_ANSWER = "<none>"


def cohen_kappa(pairs: Mapping[tuple[Hashable, Hashable], int]) -> float:
    """Cohen's kappa (unweighted) from (gold, predicted) label-pair counts; NaN when
    chance agreement is 1."""
    if not sum(pairs.values()):
        raise ValueError("cohen_kappa needs at least one label pair")
    labels = sorted({a for a, _ in pairs} | {p for _, p in pairs}, key=repr)
    index = {lab: i for i, lab in enumerate(labels)}
    cm = np.zeros((len(labels), len(labels)))
    for (a, p), c in pairs.items():
        cm[index[a], index[p]] += c
    n = cm.sum()
    p_o = np.trace(cm) / n
    p_e = float(cm.sum(axis=1) @ cm.sum(axis=0)) / (n * n)
    return float("nan") if p_e == 1.0 else float((p_o - p_e) / (1.0 - p_e))


def chance_kappa(correct: float, n: float, inv_k_sum: float) -> float:
    """Accuracy ``correct / n`` corrected for the mean chance rate ``inv_k_sum / n`` (the
    sum of ``1/k`` over the items' option counts)."""
    p_e = inv_k_sum / n
    return (correct / n - p_e) / (1.0 - p_e)


def agree(a: bool | None, b: bool | None) -> bool:
    """Two variants' outcomes agree: both answered, and both right or both wrong.

    ``None`` is a variant with no answer (failed request or unparsed reply). It agrees
    with nothing — not even another missing answer — so failures can only lower
    consistency; counting them as two matching W's would let a run whose every request
    failed read 100% consistent."""
    return a is not None and b is not None and a == b


def group_consistency(outcomes: Sequence[bool | None]) -> float:
    """Share of pairs among one group's outcomes that :func:`agree`."""
    if len(outcomes) < 2:
        raise ValueError("a group needs at least two variants for consistency")
    pairs = list(itertools.combinations(outcomes, 2))
    return sum(agree(a, b) for a, b in pairs) / len(pairs)


def pattern(outcomes_by_variant: Mapping[str, bool]) -> str:
    """The C/W pattern of a 4-variant group in the order base, symmetric, syntactic, both."""
    if set(outcomes_by_variant) != set(VARIANT_ORDER):
        raise ValueError(f"a pattern needs exactly the variants {VARIANT_ORDER}, got {sorted(outcomes_by_variant)}")
    return "".join("C" if outcomes_by_variant[v] else "W" for v in VARIANT_ORDER)
