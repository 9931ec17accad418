"""Fixed problems whose predictions must not change across refactors (tests/data/)."""

from __future__ import annotations

import numpy as np

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
