"""The graph-reusing search (``SSLGridSearchCV``): each graph and kernel width built once.

Every point of the grid is validated before any fit, failed fits get ``error_score``, and the
refit delegates to the best estimator.  Data and model helpers come from test_model_selection.py.
"""

import warnings
from numbers import Real

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import accuracy_score
from sklearn.utils._param_validation import Interval

from semiscale.graph import KNNGraph, PrecomputedGraph
from semiscale.kernels import RBF
from semiscale.model_selection import SSLGridSearchCV, SSLKFold, ssl_cross_validate
from semiscale.models import LapRLSClassifier
from test_model_selection import CountingKNNGraph, _laprls, _moons, _sine_regression

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


@pytest.fixture
def counting():
    CountingKNNGraph.builds = []
    return CountingKNNGraph


# ---------------------------------------------------------------------------------- search
@pytest.mark.parametrize("transductive", [True, False])
def test_search_builds_each_graph_once_per_fold_and_setting(counting, transductive):
    X, _, y_ssl = _moons(300, 6)
    model = _laprls(graph=counting())
    grid = {
        "graph__n_neighbors": [6, 9],
        "intrinsic_reg": [1.0, 100.0],
        "kernel__gamma": [5.0, 20.0],
    }
    cv = SSLKFold(3, transductive=transductive, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # disconnected k=6 graphs on some folds
        search = SSLGridSearchCV(model, grid, cv=cv, refit=True).fit(X, y_ssl)
    if transductive:
        assert counting.builds == [300, 300]  # one per setting, reused by the refit
        assert search.n_graph_fits_ == 2
    else:
        assert len(counting.builds) == 2 * 3 + 1  # per fold and setting, + the refit
        assert counting.builds[-1] == 300 and max(counting.builds[:-1]) < 300
        assert search.n_graph_fits_ == 7
    assert search.n_splits_ == 3
    results = search.cv_results_
    assert len(results["params"]) == 8
    for key in ("mean_test_score", "std_test_score", "rank_test_score", "mean_fit_time"):
        assert results[key].shape == (8,)
    neighbors = [p["graph__n_neighbors"] for p in results["params"]]
    assert list(results["param_graph__n_neighbors"]) == neighbors
    # the best point is the brute-force loop's
    brute = [
        ssl_cross_validate(_laprls().set_params(**params), X, y_ssl, cv=cv)["test_score"].mean()
        for params in results["params"]
    ]
    np.testing.assert_allclose(results["mean_test_score"], brute)
    assert search.best_score_ == pytest.approx(max(brute))
    assert search.best_index_ == int(np.argmax(brute))
    assert search.best_params_ == results["params"][int(np.argmax(brute))]
    assert search.predict(X).shape == (300,)


def test_search_invalid_point_fails_before_any_fit(counting):
    X, _, y_ssl = _moons(200, 6)
    model = _laprls(graph=counting())
    for grid, match in [
        ({"intrinsic_reg": [1.0, -1.0]}, "intrinsic_reg"),
        ({"graph__weights": ["heat", "nope"]}, "weights"),
        ({"kernel__gamma": [1.0, "medain"]}, "gamma"),
        ({"no_such_param": [1]}, "no_such_param"),
    ]:
        with pytest.raises(ValueError, match=match):
            SSLGridSearchCV(model, grid, cv=SSLKFold(3)).fit(X, y_ssl)
    assert counting.builds == []


class _Declared(BaseEstimator, ClassifierMixin):
    """A classifier with scikit-learn's declarative constraints and no _validate_params of its
    own, counting its fits."""

    _parameter_constraints: dict = {"alpha": [Interval(Real, 0, None, closed="left")]}
    fits = 0

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y):
        type(self).fits += 1
        self.classes_ = np.unique(y[y != -1])
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_search_checks_declared_constraints_before_any_fit():
    X, _, y_ssl = _moons(60, 6)
    _Declared.fits = 0
    with pytest.raises(ValueError, match="point 1 .*alpha.*nothing was fitted"):
        SSLGridSearchCV(_Declared(), {"alpha": [1.0, -1.0]}, cv=SSLKFold(3)).fit(X, y_ssl)
    assert _Declared.fits == 0


def test_search_validates_without_the_validate_params_overrides(counting, monkeypatch):
    # the overrides only named _validate_params for the search to find; without them the
    # search still checks every point's _parameter_constraints before fitting anything
    from semiscale.models._base import ManifoldMixin

    for klass in (ManifoldMixin, KNNGraph, PrecomputedGraph):
        if "_validate_params" in vars(klass):
            monkeypatch.delattr(klass, "_validate_params")
    X, _, y_ssl = _moons(200, 6)
    model = _laprls(graph=counting())
    for grid, match in [
        ({"intrinsic_reg": [1.0, -1.0]}, "intrinsic_reg"),
        ({"graph__n_neighbors": [8, 0]}, "n_neighbors"),
        ({"graph__weights": ["heat", "nope"]}, "weights"),
    ]:
        with pytest.raises(ValueError, match=f"point 1 .*{match}.*nothing was fitted"):
            SSLGridSearchCV(model, grid, cv=SSLKFold(3)).fit(X, y_ssl)
    assert counting.builds == []


def test_search_regression_nan_markers():
    X, y_ssl, model = _sine_regression(2)
    search = SSLGridSearchCV(
        model,
        {"intrinsic_reg": [0.0, 1.0], "ambient_reg": [1e-4, 1e-1]},
        cv=SSLKFold(4, random_state=0),
        scoring="neg_root_mean_squared_error",
    ).fit(X, y_ssl)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.transduction_.shape == (150,)


# ---------------------------------------------------------------------------------- laplacian
def test_search_with_laplacian_subsets_it_per_fold():
    X, _, y_ssl = _moons(300, 6)
    graph = KNNGraph(n_neighbors=8).fit(X)
    cv = SSLKFold(3, transductive=False, random_state=0)
    search = SSLGridSearchCV(_laprls(), {"intrinsic_reg": [1.0, 100.0]}, cv=cv)
    search.fit(X, y_ssl, laplacian=graph.laplacian_)
    assert search.n_graph_fits_ == 0
    # the same as a PrecomputedGraph on the adjacency
    with_graph = SSLGridSearchCV(
        _laprls(graph=PrecomputedGraph(graph.adjacency_, X)), {"intrinsic_reg": [1.0, 100.0]}, cv=cv
    ).fit(X, y_ssl)
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], with_graph.cv_results_["mean_test_score"]
    )
    with pytest.raises(ValueError, match="laplacian was given"):
        SSLGridSearchCV(_laprls(), {"graph__n_neighbors": [5]}, cv=cv).fit(
            X, y_ssl, laplacian=graph.laplacian_
        )


# ---------------------------------------------------------------------------------- reuse
class CountingRBF(RBF):
    """RBF that records each resolution of a heuristic width (not of a numeric one)."""

    resolutions: list = []

    def resolve(self, X, random_state=None):
        if isinstance(self.gamma, str):
            CountingRBF.resolutions.append(X.shape[0])
        return super().resolve(X, random_state=random_state)


@pytest.mark.parametrize("transductive", [True, False])
def test_search_resolves_median_gamma_once_per_training_set(transductive):
    CountingRBF.resolutions = []
    X, _, y_ssl = _moons(200, 6)
    model = _laprls(kernel=CountingRBF(gamma="median"))
    cv = SSLKFold(3, transductive=transductive, random_state=0)
    grid = {"intrinsic_reg": [1.0, 10.0, 100.0], "ambient_reg": [1e-6, 1e-3]}
    search = SSLGridSearchCV(model, grid, cv=cv).fit(X, y_ssl)
    # once on all rows (checking the grid; reused by transductive folds and the refit), plus
    # once per inductive training set
    if transductive:
        assert CountingRBF.resolutions == [200]
    else:
        assert CountingRBF.resolutions[0] == 200 and len(CountingRBF.resolutions) == 4
    gamma = search.best_estimator_.kernel_.gamma
    assert search.best_estimator_.kernel.gamma == "median"  # the parameter as given
    assert gamma == pytest.approx(RBF(gamma="median").resolve(X, random_state=None).gamma)
    # the same scores as fits that resolve the width themselves
    brute = ssl_cross_validate(
        _laprls(kernel=RBF(gamma="median")).set_params(**search.best_params_), X, y_ssl, cv=cv
    )
    np.testing.assert_allclose(brute["test_score"].mean(), search.best_score_)


def test_points_without_graph_term_build_no_graph(counting):
    X, _, y_ssl = _moons(200, 6)
    search = SSLGridSearchCV(
        _laprls(graph=counting()), {"intrinsic_reg": [0.0]}, cv=SSLKFold(3, random_state=0)
    ).fit(X, y_ssl)
    assert counting.builds == [] and search.n_graph_fits_ == 0 and search.best_graph_ is None


def test_search_default_graph_list_grid_verbose_and_refit_false(capsys):
    X, _, y_ssl = _moons(200, 6)
    model = LapRLSClassifier(kernel=RBF(gamma=20.0), graph=None, ambient_reg=1e-6)
    grid = [{"graph__n_neighbors": [6, 8]}, {"intrinsic_reg": [0.0]}]
    # verbose=1: a progress bar over the 9 fits, no line per fit (semiscale._progress)
    SSLGridSearchCV(model, grid, cv=SSLKFold(3, random_state=0), refit=False, verbose=1).fit(
        X, y_ssl
    )
    out, err = capsys.readouterr()
    assert out == "" and "SSLGridSearchCV:" in err and "/9 [" in err
    assert not any("score" in line for line in err.splitlines())
    # verbose=2: also a line per graph build and per fit
    search = SSLGridSearchCV(model, grid, cv=SSLKFold(3, random_state=0), refit=False, verbose=2)
    search.fit(X, y_ssl)
    out, err = capsys.readouterr()
    assert out == ""  # progress lines go to stderr (semiscale._progress.log), results to stdout
    lines = err.splitlines()
    assert sum("graph" in line and "points:" in line for line in lines) == 2
    assert sum("score" in line for line in lines) == 9
    assert len(search.cv_results_["params"]) == 3
    assert search.cv_results_["param_intrinsic_reg"].mask.tolist() == [True, True, False]
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError, match="refit=True"):
        search.predict(X)


def test_failed_fits_get_error_score():
    X, _, y_ssl = _moons(200, 6)
    model = _laprls(graph=KNNGraph())
    grid = {"graph__n_neighbors": [8, 500]}  # k >= n fails at fit time
    with pytest.warns(FitFailedWarning, match="n_neighbors"):
        search = SSLGridSearchCV(model, grid, cv=SSLKFold(3, random_state=0)).fit(X, y_ssl)
    assert np.isnan(search.cv_results_["mean_test_score"][1])
    assert search.cv_results_["rank_test_score"].tolist() == [1, 2]
    with pytest.raises(ValueError, match="n_neighbors"):
        SSLGridSearchCV(model, grid, cv=SSLKFold(3), error_score="raise").fit(X, y_ssl)


def test_search_delegates_to_the_best_estimator():
    X, y, y_ssl = _moons(200, 6)
    search = SSLGridSearchCV(
        _laprls(), {"intrinsic_reg": [1.0, 100.0]}, cv=SSLKFold(3, random_state=0)
    ).fit(X, y_ssl)
    best = search.best_estimator_
    np.testing.assert_array_equal(search.classes_, [0, 1])
    np.testing.assert_array_equal(search.predict(X), best.predict(X))
    np.testing.assert_allclose(search.decision_function(X), best.decision_function(X))
    np.testing.assert_array_equal(search.transduction_, best.transduction_)
    assert search.score(X, y_ssl) == pytest.approx(
        accuracy_score(y_ssl[y_ssl >= 0], best.predict(X[y_ssl >= 0]))
    )
    assert not hasattr(search, "predict_proba")
    assert search.best_graph_ is not None and search.best_graph_.laplacian_.shape == (200, 200)
