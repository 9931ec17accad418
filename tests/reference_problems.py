"""Named problems shared by tests.

``CASES``: the fixed problems whose predictions are pinned (``tests/test_pinned_predictions.py``,
``tests/data/``).  Below them, a small gallery of toy problems that several test files build the
same way (labels hidden per class, Gaussian blobs on a circle with their graph, a heat-kernel
kNN Laplacian); a test that needs one of these imports it rather than rebuilding it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import kneighbors_graph

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)

# KNNGraph's defaults before the "contrast" bandwidth and "average" symmetrization (the
# references were computed with them)
_GRAPH = KNNGraph(n_neighbors=10, bandwidth="mean", symmetrize="union", method="exact")
_COMMON = dict(kernel=RBF(gamma=4.0), graph=_GRAPH)

#: name -> (estimator factory, problem kind)
CASES = {
    "laprls_direct_clf": (
        lambda: LapRLSClassifier(
            **_COMMON, ambient_reg=1e-4, intrinsic_reg=10.0, out_of_sample="kernel"
        ),
        "moons",
    ),
    "laprls_cg_reg": (
        lambda: LapRLSRegressor(**_COMMON, solver="cg", ambient_reg=1.0, intrinsic_reg=1.0),
        "wave",
    ),
    "laprls_pcg_reg": (
        lambda: LapRLSRegressor(
            **_COMMON, solver="pcg", ambient_reg=1e-3, intrinsic_reg=1.0, random_state=0
        ),
        "wave",
    ),
    "rls_direct_reg": (lambda: LapRLSRegressor(**_COMMON, intrinsic_reg=0.0), "wave"),
    "nystrom_pcg_clf3": (
        lambda: NystromLapRLSClassifier(
            **_COMMON,
            label_diffusion=0,
            n_centers=60,
            ambient_reg=1e-4,
            intrinsic_reg=10.0,
            random_state=0,
            out_of_sample="kernel",
        ),
        "three",
    ),
    "nystrom_pcg_reg": (
        lambda: NystromLapRLSRegressor(
            **_COMMON, n_centers=50, ambient_reg=1e-3, intrinsic_reg=1.0, random_state=1
        ),
        "wave",
    ),
    "nystrom_direct_reg": (
        lambda: NystromLapRLSRegressor(
            **_COMMON,
            n_centers=50,
            solver="direct",
            ambient_reg=1e-3,
            intrinsic_reg=1.0,
            random_state=1,
        ),
        "wave",
    ),
    "nystrom_cg_clf": (
        lambda: NystromLapRLSClassifier(
            **_COMMON,
            label_diffusion=0,
            n_centers=40,
            solver="cg",
            ambient_reg=1e-1,
            intrinsic_reg=1.0,
            random_state=2,
            out_of_sample="kernel",
        ),
        "moons",
    ),
}


def build(name):
    return CASES[name][0]()


def problem(name):
    """(X, y with unlabeled marked, X_test) of a case."""
    kind = CASES[name][1]
    rng = np.random.RandomState(0)
    if kind == "moons":
        X, y = make_two_moons(300, noise=0.1, random_state=0)
        lab = rng.choice(300, 12, replace=False)
        y_ssl = np.full_like(y, -1)
        y_ssl[lab] = y[lab]
        return X, y_ssl, make_two_moons(50, noise=0.1, random_state=1)[0]
    if kind == "three":
        X = np.vstack([rng.normal(c, 0.4, size=(100, 2)) for c in ((0, 0), (2, 0), (0, 2))])
        y = np.repeat([0, 1, 2], 100)
        y_ssl = np.full(300, -1)
        lab = rng.choice(300, 15, replace=False)
        y_ssl[lab] = y[lab]
        return X, y_ssl, rng.normal(1, 1.5, size=(40, 2))
    X = rng.uniform(-1, 1, size=(250, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    y_ssl = np.full(250, np.nan)
    lab = rng.choice(250, 30, replace=False)
    y_ssl[lab] = y[lab]
    return X, y_ssl, rng.uniform(-1, 1, size=(40, 3))


# --------------------------------------------------------------------------- the gallery
def hide_labels(y, per_class, seed=0, marker=-1):
    """``y`` with all but ``per_class`` labels of each class (drawn at random) set to ``marker``."""
    rng = np.random.default_rng(seed)
    y_ssl = np.full_like(y, marker)
    for c in np.unique(y):
        keep = rng.choice(np.flatnonzero(y == c), per_class, replace=False)
        y_ssl[keep] = c
    return y_ssl


def two_moons_ssl(n, per_class, noise=0.1, seed=0):
    """``(X, y, y_ssl)``: two moons with ``per_class`` labels of each moon, the rest ``-1``."""
    X, y = make_two_moons(n, noise=noise, random_state=seed)
    return X, y, hide_labels(y, per_class, seed)


def blobs(n_per_class=60, n_classes=3, seed=0, spread=0.9):
    """``(X, y)``: ``n_classes`` Gaussian blobs of width ``spread`` on a circle of radius 4."""
    rng = np.random.default_rng(seed)
    centers = 4.0 * np.c_[np.cos(np.arange(n_classes)), np.sin(np.arange(n_classes))]
    X = np.concatenate([c + spread * rng.standard_normal((n_per_class, 2)) for c in centers])
    y = np.repeat(np.arange(n_classes), n_per_class)
    return X, y


def blobs_graph_and_labels(n_per_class=60, n_classes=3, per_class=2, seed=0, k=8):
    """``(X, y, y_ssl, L)``: :func:`blobs`, ``per_class`` labels each, the default kNN graph's
    Laplacian (connected, dense ndarray)."""
    X, y = blobs(n_per_class, n_classes, seed)
    graph = KNNGraph(n_neighbors=k).fit(X)
    assert graph.n_components_ == 1
    return X, y, hide_labels(y, per_class, seed), graph.laplacian_.toarray()


def heat_laplacian(X, k=6, normalized=False):
    """Laplacian of the symmetrized ``k``-NN graph with heat weights ``exp(−d²/4)`` (CSR)."""
    W = kneighbors_graph(X, k, mode="distance")
    W.data = np.exp(-(W.data**2) / 4)
    W = W.maximum(W.T).tocsr()
    d = np.asarray(W.sum(axis=1)).ravel()
    if normalized:
        s = sp.diags(1 / np.sqrt(d))
        return (sp.eye(W.shape[0]) - s @ W @ s).tocsr()
    return (sp.diags(d) - W).tocsr()
