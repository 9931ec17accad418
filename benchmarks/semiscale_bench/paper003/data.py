"""Paper 003's data: its sets as binary 0/1 problems, and the labeled draws.

Table 3 and Figure 2 (transductive, every row labeled or unlabeled): features svm-scaled to
[-1, 1] on all rows (the scaling sees no label), 10 % of the rows labeled, stratified.  Figure 1:
a9a and w8a as LIBSVM gives them (binary features, sparse: the budget is the estimators', the
data's own storage is the child's baseline), 1,000 or 3,000 rows labeled at random (the paper:
"we randomly pick 1K or 3K examples").
"""

from __future__ import annotations

import numpy as np

from semiscale_bench.harness import load_dense, minmax_scaler, n_labeled

__all__ = ["draw_labeled", "load_budget_set", "load_set", "observed", "scores"]

#: Seed of the fixed row subsamples (quick runs, the kr-vs-kp stand-in): load_dense's.
SUBSAMPLE_SEED = 12345


def _binary(y) -> np.ndarray:
    """The larger label value is the positive class 1, the other 0."""
    y = np.asarray(y)
    return (y == y.max()).astype(np.int64)


def load_set(protocol, name: str, data_home=None):
    """Dense ``(X, y)`` of a Table 3 / Figure 2 set: scaled to [-1, 1], y in {0, 1}."""
    rows = [r for r in (protocol.max_samples, protocol.curve_rows.get(name)) if r]
    X, y = load_dense(protocol.dataset(name).source, min(rows) if rows else None, data_home)
    return minmax_scaler(X)(X), _binary(y)


def load_budget_set(protocol, name: str, data_home=None):
    """Sparse CSR ``(X, y)`` of a Figure 1 set as LIBSVM gives it (quick: a fixed subsample)."""
    from semiscale.datasets import load_dataset

    X, y = load_dataset(protocol.dataset(name).source, data_home=data_home, dense=False)
    X = X.tocsr().astype(np.float64)
    if protocol.max_samples and X.shape[0] > protocol.max_samples:
        rng = np.random.default_rng(SUBSAMPLE_SEED)
        keep = np.sort(rng.choice(X.shape[0], protocol.max_samples, replace=False))
        X, y = X[keep], np.asarray(y)[keep]
    return X, _binary(y)


def draw_labeled(y, m: int | None, seed: int, *, fraction=None, stratify=True) -> np.ndarray:
    """Sorted indices of the labeled rows: ``m`` of them (or ``fraction`` of all), seed ``seed``."""
    from sklearn.model_selection import train_test_split

    if m is None:
        m = n_labeled(y.size, fraction)
    idx = np.arange(y.size)
    labeled, _ = train_test_split(
        idx, train_size=m, stratify=y if stratify else None, random_state=seed
    )
    return np.sort(labeled)


def observed(y, labeled) -> np.ndarray:
    """Targets with -1 (semiscale's unlabeled marker) outside ``labeled``."""
    out = np.full(y.size, -1, dtype=np.int64)
    out[labeled] = y[labeled]
    return out


def scores(est, X, rows) -> np.ndarray:
    """The fitted model's value for the positive class on training ``rows`` (for the AUC).

    The transductive values where the estimator keeps them (``transductive_decision_`` of
    :func:`~.methods.storage_fit_classifier`: the linear SVM on the fitted rows of F;
    ``transduction_proba_`` of the graph estimators: the harmonic / Poisson solution itself);
    otherwise
    ``decision_function`` of the rows (a kernel expansion's value at a training point, the
    linear SVM on the cluster kernel's F, the TSVM's SVC).
    """
    decision = getattr(est, "transductive_decision_", None)
    if decision is not None:
        decision = np.asarray(decision)
        return decision[rows] if decision.ndim == 1 else decision[rows, list(est.classes_).index(1)]
    proba = getattr(est, "transduction_proba_", None)
    if proba is not None:
        return np.asarray(proba)[rows, list(est.classes_).index(1)]
    values = np.asarray(est.decision_function(X[rows]))
    return values if values.ndim == 1 else values[:, list(est.classes_).index(1)]
