"""Cross-fitting: every item is predicted by a model that never saw its own cluster.

A *cluster* is the set of items that share a fact: the same ``group`` (variants of one
question), the same ``scene_id`` or the same unit index (the coarse and granular
items of one scene). Clusters are joined transitively (union-find), then dealt into
up to five folds in a seeded order; each fold is predicted by a logistic regression
fitted on the other folds. So a text model cannot score by having seen the other
wording of the same question, and the score it reaches is what a learner could reach
on new items of the same generator.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from perspecta.audit.features import Features, unit_of
from perspecta.dataset.item import Item

N_FOLDS = 5


def clusters(items: list[Item]) -> np.ndarray:
    """Cluster index per item (0..C-1, numbered by first appearance)."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, it in enumerate(items):
        unit, _ = unit_of(it)
        keys = [("group", it.group), ("scene", it.scene_id)]
        if unit is not None:
            keys.append(("unit", f"{it.suite}/{it.task}/{unit}"))
        for kind, value in keys:
            if not value:
                continue
            j = first.setdefault((kind, value), i)
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    roots = [find(i) for i in range(len(items))]
    numbering: dict[int, int] = {}
    return np.array([numbering.setdefault(r, len(numbering)) for r in roots], dtype=np.int64)


def folds(cluster: np.ndarray, key: str) -> np.ndarray:
    """Fold per item: clusters shuffled with a seed from ``key`` and dealt round-robin."""
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    k = min(N_FOLDS, n_clusters)
    if k < 2:
        return np.zeros(len(cluster), dtype=np.int64) - 1
    rng = np.random.default_rng(zlib.crc32(key.encode("utf-8")))
    order = rng.permutation(n_clusters)
    fold_of_cluster = np.empty(n_clusters, dtype=np.int64)
    fold_of_cluster[order] = np.arange(n_clusters) % k
    return fold_of_cluster[cluster]


def matrix(rows: list[Features]) -> tuple[sparse.csr_matrix, list[str]]:
    """Rows as a sparse matrix over the population's own feature names (a compact,
    vocabulary in order of first use: the solver's cost grows with the number of columns)."""
    vocab: dict[str, int] = {}
    indices: list[int] = []
    data: list[float] = []
    indptr = [0]
    for row in rows:
        for name, value in row.items():
            indices.append(vocab.setdefault(name, len(vocab)))
            data.append(value)
        indptr.append(len(indices))
    X = sparse.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                           np.array(indptr, dtype=np.int64)), shape=(len(rows), max(len(vocab), 1)))
    return X, list(vocab)


def _model() -> LogisticRegression:
    return LogisticRegression(C=1.0, solver="liblinear", dual=True, max_iter=200, random_state=0)


def _fit(X: sparse.csr_matrix, y: np.ndarray) -> LogisticRegression:
    model = _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return model


def strongest_features(X: sparse.csr_matrix, names: list[str], label: np.ndarray, k: int = 3) -> list[str]:
    """The ``k`` features that most raise a candidate's score in a model fitted on the
    whole population: what the shortcut *is* (e.g. ``meta:category=ball=1|c=cannot be
    determined``). For reading only; the scores come from the out-of-fold models."""
    if label.all() or not label.any():
        return []
    coef = _fit(X, label).coef_[0]
    order = np.argsort(-coef, kind="stable")[:k]
    return [names[i] for i in order if i < len(names) and coef[i] > 0]


def out_of_fold_correct(X: sparse.csr_matrix, row_item: np.ndarray, label: np.ndarray, n_items: int,
                        fold: np.ndarray) -> np.ndarray | None:
    """Per item, whether the candidate scored highest by a model fitted on the other folds
    is the right one (None when there are fewer than two folds)."""
    if n_items == 0 or fold.min() < 0:
        return None
    correct = np.zeros(n_items, dtype=bool)
    row_fold = fold[row_item]
    starts = np.searchsorted(row_item, np.arange(n_items))
    ends = np.searchsorted(row_item, np.arange(n_items), side="right")
    for k in np.unique(fold):
        train = row_fold != k
        test_items = np.flatnonzero(fold == k)
        y = label[train]
        if y.all() or not y.any():  # nothing to learn from: fall back to the first candidate
            scores = np.zeros(X.shape[0])
        else:
            model = _fit(X[train], y)
            test_rows = np.flatnonzero(row_fold == k)
            scores = np.zeros(X.shape[0])
            scores[test_rows] = model.decision_function(X[test_rows])
        for i in test_items:
            s, e = starts[i], ends[i]
            if e > s:
                correct[i] = bool(label[s + int(np.argmax(scores[s:e]))])
    return correct
