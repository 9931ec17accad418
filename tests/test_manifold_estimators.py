"""What every manifold-regularization estimator shares (:mod:`semiscale.models._base`).

``score`` on the labeled rows of any input ``fit`` accepts; the shared default kernel and graph,
never modified by nested parameters (``kernel__gamma``, ``graph__n_neighbors``) in a search or
``set_params``; a given Laplacian that does not match X; kernels fitted on the training data.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.model_selection import GridSearchCV

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)
from semiscale.models._base import DEFAULT_CLASSIFIER_KERNEL, DEFAULT_GRAPH, DEFAULT_KERNEL


# --------------------------------------------------------------------------------- scoring
def _moons(n=300, n_labeled=6, seed=0):
    X, y = make_two_moons(n, noise=0.08, random_state=seed)
    rng = np.random.RandomState(seed)
    y_ssl = np.full_like(y, -1)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), n_labeled // 2, replace=False) for c in (0, 1)]
    )
    y_ssl[lab] = y[lab]
    return X, y, y_ssl


def test_score_ignores_unlabeled_rows():
    X, y, y_ssl = _moons()
    est = LapRLSClassifier(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_ssl)
    labeled = y_ssl != -1
    assert est.score(X, y_ssl) == pytest.approx((est.predict(X[labeled]) == y[labeled]).mean())
    assert est.score(X, y_ssl) == 1.0  # the labeled points are fitted
    with pytest.raises(ValueError, match="needs labeled rows"):
        est.score(X, np.full_like(y, -1))
    y_reg = np.where(labeled, y.astype(float), np.nan)
    reg = LapRLSRegressor(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_reg)
    pred = reg.predict(X[labeled])
    r2 = 1 - ((pred - y[labeled]) ** 2).sum() / ((y[labeled] - y[labeled].mean()) ** 2).sum()
    assert reg.score(X, y_reg) == pytest.approx(r2)


# score() takes any array-like that fit() and predict() take: a list of lists, a COO matrix.
def _fitted_pair():
    X, y = make_two_moons(120, noise=0.08, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[::6] = y[::6]
    kw = dict(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8))
    clf = LapRLSClassifier(**kw).fit(X, y_ssl)
    y_reg = np.where(y_ssl != -1, y.astype(float), np.nan)
    reg = LapRLSRegressor(**kw).fit(X, y_reg)
    return X, y_ssl, y_reg, clf, reg


@pytest.mark.parametrize("kind", ["list", "coo"])
def test_score_accepts_what_fit_and_predict_accept(kind):
    X, y_ssl, y_reg, clf, reg = _fitted_pair()
    X_in = X.tolist() if kind == "list" else sp.coo_matrix(X)
    clf.predict(X_in), reg.predict(X_in)  # both work
    assert clf.score(X_in, y_ssl) == pytest.approx(clf.score(X, y_ssl))
    assert reg.score(X_in, y_reg) == pytest.approx(reg.score(X, y_reg))


# ---------------------------------------------------------- shared defaults, nested params
@pytest.mark.parametrize("cls", [LapRLSClassifier, NystromLapRLSClassifier])
def test_gridsearchcv_over_nested_params_of_the_default_objects(cls):
    X, y, y_ssl = _moons(200, n_labeled=20)
    est = cls(ambient_reg=1e-4, intrinsic_reg=10.0)
    default_kernel = DEFAULT_CLASSIFIER_KERNEL if is_classifier(est) else DEFAULT_KERNEL
    assert est.kernel is default_kernel and est.graph is DEFAULT_GRAPH
    grid = {"graph__n_neighbors": [2, 10], "kernel__gamma": [0.01, 10.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(est, grid, cv=2).fit(X, y_ssl)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_index_ == int(np.argmax(scores))
    assert search.best_params_["kernel__gamma"] == 10.0
    assert search.best_score_ > 0.9 > scores.min()
    # The shared defaults were never modified.
    assert DEFAULT_GRAPH.n_neighbors == 8 and DEFAULT_KERNEL.gamma == "median"
    assert DEFAULT_CLASSIFIER_KERNEL.gamma == "local"


def test_classifiers_default_to_the_local_width_and_regressors_to_the_median():
    for cls in (LapRLSClassifier, NystromLapRLSClassifier):
        assert cls().kernel is DEFAULT_CLASSIFIER_KERNEL and cls().ambient_reg == 1e-6
        assert cls(kernel=None)._default_kernel is DEFAULT_CLASSIFIER_KERNEL
    for cls in (LapRLSRegressor, NystromLapRLSRegressor):
        assert cls().kernel is DEFAULT_KERNEL and cls().ambient_reg == 1e-4
    X, y, y_ssl = _moons(200, n_labeled=20)
    fitted = LapRLSClassifier(kernel=None).fit(X, y_ssl)
    assert fitted.kernel_.gamma == RBF(gamma="local").resolve(X).gamma


def test_nested_set_params_copies_the_shared_default():
    est = LapRLSRegressor()
    est.set_params(graph__n_neighbors=3, kernel__gamma=0.5)
    assert est.graph is not DEFAULT_GRAPH and est.graph.n_neighbors == 3
    assert est.kernel.gamma == 0.5
    assert DEFAULT_GRAPH.n_neighbors == 8 and DEFAULT_KERNEL.gamma == "median"
    assert LapRLSRegressor().graph.n_neighbors == 8


# set_params protects the shared default it is *given*, not only the one it replaces.
def test_set_params_with_the_shared_default_and_a_nested_update_keeps_the_default():
    est = LapRLSClassifier(kernel=RBF(gamma=1.0))
    try:
        est.set_params(kernel=DEFAULT_KERNEL, kernel__gamma=3.0)
        assert est.kernel.gamma == 3.0
        assert DEFAULT_KERNEL.gamma == "median"
        assert (
            LapRLSClassifier().kernel.gamma == "local"
        )  # its own default (the regressors: median)
    finally:
        DEFAULT_KERNEL.set_params(gamma="median")  # do not leak into other tests


# ``kernel=None`` / ``graph=None`` mean the defaults, nested updates included.
@pytest.mark.parametrize("cls", [LapRLSClassifier, NystromLapRLSClassifier])
def test_nested_set_params_on_documented_none_defaults(cls):
    est = cls(kernel=None, graph=None)
    est.set_params(kernel__gamma=0.5, graph__n_neighbors=3)
    assert est.kernel.gamma == 0.5 and est.graph.n_neighbors == 3


def test_sliced_laplacian_gets_a_clear_error():
    X, y, y_ssl = _moons(100)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    with pytest.raises(ValueError, match="PrecomputedGraph"):
        LapRLSClassifier().fit(X[:60], y_ssl[:60], laplacian=L[:60])


# ------------------------------------------------------------------------- fitted kernels
class CenteredRBF(RBF):
    """A kernel that learns from data: RBF on points shifted by the labeled points' mean."""

    def fit(self, X, y=None, *, laplacian=None, random_state=None):
        new = self.resolve(X, random_state=random_state)
        labeled = np.asarray(y) != -1
        new.shift_ = np.asarray(X)[labeled].mean(axis=0)
        new.seen_laplacian_ = laplacian
        return new

    def __call__(self, A, B=None):
        return super().__call__(A - self.shift_, None if B is None else B - self.shift_)

    def blocks(self, A, B=None, memory_budget=None, **kw):
        shift = getattr(self, "shift_", 0.0)
        return super().blocks(A - shift, None if B is None else B - shift, memory_budget, **kw)

    def diag(self, A):
        return super().diag(A)


def test_fitted_kernel_is_fitted_with_the_training_data_and_graph():
    X, y, y_ssl = _moons(150)
    est = LapRLSClassifier(kernel=CenteredRBF(gamma=10.0), graph=KNNGraph(n_neighbors=8))
    est.fit(X, y_ssl)
    assert not hasattr(est.kernel, "shift_")  # the parameter is untouched
    np.testing.assert_allclose(est.kernel_.shift_, X[y_ssl != -1].mean(axis=0))
    assert est.kernel_.seen_laplacian_ is est.graph_.laplacian_
    # A translation-invariant kernel: shifting everything changes nothing.
    ref = LapRLSClassifier(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_ssl)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-8)
