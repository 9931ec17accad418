"""Semi-supervised model selection: folds, scorers, exact CV and precomputed graphs.

The graph-reusing search (``SSLGridSearchCV``) is tested in test_model_selection_search.py,
which shares this module's data and model helpers.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import accuracy_score, mean_squared_error
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from reference_problems import two_moons_ssl
from semiscale.graph import KNNGraph, PrecomputedGraph
from semiscale.kernels import RBF
from semiscale.model_selection import (
    SSLGridSearchCV,
    SSLKFold,
    get_ssl_scorer,
    make_ssl_scorer,
    ssl_cross_val_score,
    ssl_cross_validate,
)
from semiscale.models import LapRLSClassifier, LapRLSRegressor

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


class CountingKNNGraph(KNNGraph):
    """KNNGraph that records the number of rows of every graph it builds."""

    builds: list = []

    def fit(self, X, y=None):
        CountingKNNGraph.builds.append(X.shape[0])
        return super().fit(X, y)


@pytest.fixture
def counting():
    CountingKNNGraph.builds = []
    return CountingKNNGraph


def _moons(n, labels_per_class, seed=0):
    return two_moons_ssl(n, labels_per_class, noise=0.1, seed=seed)


def _sine_regression(seed):
    """150 points in 2-D, y = sin(2 x₀), 100 of them unlabeled (NaN), and a LapRLS regressor."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((150, 2))
    y_ssl = np.sin(2 * X[:, 0])
    y_ssl[rng.permutation(150)[:100]] = np.nan
    model = LapRLSRegressor(kernel=RBF(gamma=1.0), ambient_reg=1e-4, intrinsic_reg=1.0)
    return X, y_ssl, model


def _laprls(graph=None, **params):
    defaults = dict(
        kernel=RBF(gamma=20.0),
        graph=graph if graph is not None else KNNGraph(n_neighbors=8),
        ambient_reg=1e-6,
        intrinsic_reg=100.0,
    )
    return LapRLSClassifier(**{**defaults, **params})


# ---------------------------------------------------------------------------------- scorer
def test_cross_val_score_one_percent_labels_matches_held_out_accuracy():
    """The issue's check: scikit-learn's cross_val_score gives the held-out labeled accuracy."""
    X, y, y_ssl = _moons(1000, 5)  # 1 % labeled
    model = _laprls()
    cv = SSLKFold(5, transductive=False, random_state=0)
    scores = cross_val_score(model, X, y_ssl, cv=cv, scoring=get_ssl_scorer())
    by_hand = []
    for train, test in cv.split(X, y_ssl):
        fitted = _laprls().fit(X[train], y_ssl[train])
        by_hand.append(accuracy_score(y_ssl[test], fitted.predict(X[test])))
    np.testing.assert_allclose(scores, by_hand)
    assert min(by_hand) >= 0.99
    assert scores.mean() >= 0.99
    # a plain KFold puts unlabeled rows in the test folds: the scorer skips them
    plain = cross_val_score(
        model, X, y_ssl, cv=KFold(2, shuffle=True, random_state=0), scoring="accuracy"
    )
    ssl = cross_val_score(
        model, X, y_ssl, cv=KFold(2, shuffle=True, random_state=0), scoring=get_ssl_scorer()
    )
    assert ssl.min() >= 0.99 and plain.max() < 0.1


def test_scorer_regression_nan_markers():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = np.sin(X[:, 0])
    y_ssl = y.copy()
    y_ssl[rng.permutation(200)[:150]] = np.nan
    model = LapRLSRegressor(kernel=RBF(gamma=0.5), ambient_reg=1e-4, intrinsic_reg=1.0)
    model.fit(X, y_ssl)
    labeled = ~np.isnan(y_ssl)
    scorer = make_ssl_scorer(mean_squared_error, greater_is_better=False)
    expected = -mean_squared_error(y[labeled], model.predict(X[labeled]))
    assert scorer(model, X, y_ssl) == pytest.approx(expected)
    assert get_ssl_scorer("neg_mean_squared_error")(model, X, y_ssl) == pytest.approx(expected)


def test_scorer_without_labeled_rows_is_a_clear_error():
    X, _, y_ssl = _moons(200, 3)
    model = _laprls().fit(X, y_ssl)
    with pytest.raises(ValueError, match="none of the 5 rows to score is labeled"):
        get_ssl_scorer()(model, X[:5], np.full(5, -1))


def test_sklearn_default_score_and_grid_search_agree_with_the_ssl_scorer():
    X, _, y_ssl = _moons(400, 8)
    cv = SSLKFold(4, random_state=0)
    model = _laprls()
    default = cross_val_score(model, X, y_ssl, cv=cv)  # the estimator's own score()
    ssl = cross_val_score(model, X, y_ssl, cv=cv, scoring=get_ssl_scorer())
    np.testing.assert_allclose(default, ssl)
    search = GridSearchCV(model, {"intrinsic_reg": [1.0, 100.0]}, cv=cv).fit(X, y_ssl)
    assert search.best_score_ >= 0.99


# ---------------------------------------------------------------------------------- folds
@pytest.mark.parametrize("transductive", [True, False])
def test_sslkfold_splits_labeled_and_unlabeled_separately(transductive):
    X, _, y_ssl = _moons(300, 10)
    cv = SSLKFold(4, transductive=transductive, random_state=3)
    labeled = np.flatnonzero(y_ssl != -1)
    folds = list(cv.split_ssl(X, y_ssl))
    assert len(folds) == cv.get_n_splits() == 4
    tests = [f.test_rows for f in folds]
    # test folds: labeled only, disjoint, covering the labeled points, stratified
    np.testing.assert_array_equal(np.sort(np.concatenate(tests)), labeled)
    for fold in folds:
        assert (y_ssl[fold.test_rows] != -1).all()
        assert set(np.bincount(y_ssl[fold.test_rows])) <= {2, 3}
        if transductive:
            np.testing.assert_array_equal(fold.fit_rows, np.arange(300))
            np.testing.assert_array_equal(fold.hidden_rows, fold.test_rows)
        else:
            assert fold.hidden_rows.size == 0
            assert np.intersect1d(fold.fit_rows, fold.test_rows).size == 0
    if not transductive:
        # every unlabeled point is left out of exactly one fold, about 290/4 per fold
        left_out = [np.setdiff1d(np.arange(300), f.fit_rows) for f in folds]
        unl = [np.setdiff1d(rows, labeled) for rows in left_out]
        np.testing.assert_array_equal(np.sort(np.concatenate(unl)), np.flatnonzero(y_ssl == -1))
        assert max(r.size for r in unl) - min(r.size for r in unl) <= 1
    # reproducible with an int random_state, different with another
    again = [f.test_rows for f in cv.split_ssl(X, y_ssl)]
    assert all(np.array_equal(a, b) for a, b in zip(tests, again))
    other = [f.test_rows for f in SSLKFold(4, random_state=4).split_ssl(X, y_ssl)]
    assert not all(np.array_equal(a, b) for a, b in zip(tests, other))


def test_sslkfold_transductive_split_never_leaks_to_sklearn():
    X, _, y_ssl = _moons(200, 6)
    for train, test in SSLKFold(3, random_state=0).split(X, y_ssl):
        assert np.intersect1d(train, test).size == 0
        assert (y_ssl[test] != -1).all()
        # the fold's unlabeled points stay in training: only held-out labels are removed
        assert train.size == 200 - test.size


def test_sslkfold_errors():
    X = np.zeros((20, 1))
    y = np.full(20, -1)
    y[:3] = [0, 1, 0]
    with pytest.raises(ValueError, match="n_splits=4 folds need at least 4 labeled points"):
        list(SSLKFold(4).split(X, y))
    y[:6] = [0, 1, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="class 1 has 2"):
        list(SSLKFold(3).split(X, y))
    assert len(list(SSLKFold(3, stratify=False).split(X, y))) == 3
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        SSLKFold(1).get_n_splits()


def test_sslkfold_regression_nan_markers():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(50)
    y[rng.permutation(50)[:30]] = np.nan
    folds = list(SSLKFold(4, random_state=0).split_ssl(np.zeros((50, 1)), y))
    np.testing.assert_array_equal(
        np.sort(np.concatenate([f.test_rows for f in folds])), np.flatnonzero(~np.isnan(y))
    )


def _pin_y():
    y = np.full(30, -1)
    y[[0, 3, 5, 7, 11, 13, 17, 19, 23, 29]] = [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]
    return np.zeros((30, 1)), y


def _folds(cv, X, y):
    return [(f.fit_rows.tolist(), f.test_rows.tolist()) for f in cv.split_ssl(X, y)]


def test_sslkfold_int_random_state_folds_are_pinned():
    X, y = _pin_y()
    folds = list(SSLKFold(2, random_state=4).split_ssl(X, y))
    assert [f.test_rows.tolist() for f in folds] == [[0, 3, 11, 23, 29], [5, 7, 13, 17, 19]]
    folds = list(SSLKFold(2, transductive=False, random_state=4).split_ssl(X, y))
    assert folds[1].fit_rows.tolist() == [0, 1, 3, 6, 8, 10, 11, 18, 20, 21, 23, 26, 27, 28, 29]


@pytest.mark.parametrize("transductive", [True, False])
def test_sslkfold_accepts_a_generator(transductive):
    X, y = _pin_y()
    cv = SSLKFold(3, transductive=transductive, random_state=np.random.default_rng(0))
    first, second = _folds(cv, X, y), _folds(cv, X, y)
    assert first != second  # the generator advances, as a RandomState does
    # a Generator draws as a RandomState over its own bit generator (semiscale._random)
    again = SSLKFold(3, transductive=transductive, random_state=np.random.default_rng(0))
    assert _folds(again, X, y) == first
    as_legacy = np.random.RandomState(np.random.default_rng(0).bit_generator)
    assert _folds(SSLKFold(3, transductive=transductive, random_state=as_legacy), X, y) == first
    seeded = SSLKFold(3, transductive=transductive, random_state=np.random.SeedSequence(0))
    assert _folds(seeded, X, y) == _folds(seeded, X, y)
    with pytest.raises(TypeError, match="random_state"):
        list(SSLKFold(3, random_state="zero").split_ssl(X, y))


def test_search_with_a_generator_seeded_sslkfold():
    X, _, y_ssl = _moons(200, 6)
    cv = SSLKFold(3, random_state=np.random.default_rng(0))
    search = SSLGridSearchCV(_laprls(), {"intrinsic_reg": [1.0, 100.0]}, cv=cv).fit(X, y_ssl)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    scores = ssl_cross_val_score(_laprls(), X, y_ssl, cv=cv)
    assert scores.shape == (3,) and np.isfinite(scores).all()


@pytest.mark.parametrize(
    "n_labeled,n_unlabeled,n_classes,k",
    [(10, 0, 2, 5), (12, 3, 3, 4), (40, 200, 4, 3), (7, 1, 1, 7), (30, 29, 2, 2)],
)
def test_sslkfold_partitions_for_many_shapes(n_labeled, n_unlabeled, n_classes, k):
    rng = np.random.default_rng(n_labeled + n_unlabeled)
    labels = np.array(["a", "b", "c", "d"])[np.arange(n_labeled) % n_classes]
    y = np.concatenate([labels, np.full(n_unlabeled, "?")])
    order = rng.permutation(y.size)
    y = y[order]
    X = np.zeros((y.size, 1))
    labeled = np.flatnonzero(y != "?")
    for transductive in (True, False):
        cv = SSLKFold(k, transductive=transductive, random_state=0, unlabeled="?")
        folds = list(cv.split_ssl(X, y))
        tests = np.concatenate([f.test_rows for f in folds])
        np.testing.assert_array_equal(np.sort(tests), labeled)  # disjoint and covering
        sizes = [f.test_rows.size for f in folds]
        assert max(sizes) - min(sizes) <= max(1, n_classes - 1)
        for (train, test), fold in zip(cv.split(X, y), folds):
            assert np.intersect1d(train, test).size == 0
            np.testing.assert_array_equal(test, fold.test_rows)
        if not transductive:
            left_out = np.concatenate([np.setdiff1d(np.arange(y.size), f.fit_rows) for f in folds])
            np.testing.assert_array_equal(np.sort(left_out), np.arange(y.size))


# ---------------------------------------------------------------------------------- CV
def test_ssl_cross_validate_transductive_builds_one_graph(counting):
    X, y, y_ssl = _moons(400, 6)
    model = _laprls(graph=counting(n_neighbors=8))
    result = ssl_cross_validate(model, X, y_ssl, cv=SSLKFold(3, random_state=0))
    assert counting.builds == [400]
    assert result["n_graph_fits"] == 1
    assert result["test_score"].min() >= 0.99
    # the same folds by hand: hide the fold's labels, fit on everything, read transduction_
    by_hand = []
    for fold in SSLKFold(3, random_state=0).split_ssl(X, y_ssl):
        y_fit = y_ssl.copy()
        y_fit[fold.hidden_rows] = -1
        fitted = _laprls().fit(X, y_fit)
        by_hand.append(accuracy_score(y_ssl[fold.test_rows], fitted.transduction_[fold.test_rows]))
    np.testing.assert_allclose(result["test_score"], by_hand)


def test_ssl_cross_validate_regression():
    X, y_ssl, model = _sine_regression(1)
    for transductive in (True, False):
        scores = ssl_cross_val_score(
            model, X, y_ssl, cv=SSLKFold(5, transductive=transductive, random_state=0)
        )
        assert scores.shape == (5,) and np.isfinite(scores).all() and scores.mean() > 0.5


def test_transductive_scoring_with_decision_function():
    X, y, y_ssl = _moons(300, 10)
    result = ssl_cross_validate(
        _laprls(), X, y_ssl, cv=SSLKFold(4, random_state=0), scoring="roc_auc"
    )
    assert result["test_score"].min() >= 0.99


def test_given_laplacian_that_cannot_be_subset_is_an_error_not_a_failed_fit():
    X, _, y_ssl = _moons(200, 6)
    normalized = KNNGraph(n_neighbors=8, normalized=True).fit(X).laplacian_
    inductive = SSLKFold(3, transductive=False, random_state=0)
    with pytest.raises(ValueError, match="not D - W"):
        ssl_cross_validate(_laprls(), X, y_ssl, cv=inductive, laplacian=normalized)
    # transductive folds use it as is
    scores = ssl_cross_val_score(
        _laprls(), X, y_ssl, cv=SSLKFold(3, random_state=0), laplacian=normalized
    )
    assert np.isfinite(scores).all()
    with pytest.raises(ValueError, match=r"matrix has shape \(199, 199\) but X has 200 rows"):
        ssl_cross_validate(_laprls(), X, y_ssl, laplacian=normalized[:199, :199])


# ---------------------------------------------------------------------------------- graphs
@pytest.mark.parametrize("normalized", [False, True])
def test_precomputed_graph_is_the_induced_subgraph(normalized):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 3))
    full = KNNGraph(n_neighbors=6, normalized=normalized).fit(X)
    rows = np.sort(rng.choice(120, 70, replace=False))
    expected = KNNGraph(normalized=normalized).set_params()  # only for its normalization
    graph = PrecomputedGraph(full.adjacency_, X, normalized=normalized).fit(X[rows])
    W_sub = full.adjacency_[rows][:, rows]
    from semiscale.graph import laplacian

    np.testing.assert_array_equal(graph.rows_, rows)
    assert abs(graph.adjacency_ - W_sub).max() == 0
    assert abs(graph.laplacian_ - laplacian(W_sub, normalized=normalized)).max() < 1e-14
    assert graph.trace_ == pytest.approx(graph.laplacian_.diagonal().sum())
    del expected
    # permuted rows are found in their order
    perm = rng.permutation(rows)
    np.testing.assert_array_equal(PrecomputedGraph(full.adjacency_, X).fit(X[perm]).rows_, perm)
    # the whole set gives the matrix back
    if not normalized:
        whole = PrecomputedGraph(full.laplacian_, X).fit(X.copy())
        assert abs(whole.laplacian_ - full.laplacian_).max() == 0
        sub = PrecomputedGraph(full.laplacian_, X).fit(X[rows])
        assert abs(sub.laplacian_ - laplacian(W_sub)).max() < 1e-12


def test_precomputed_graph_errors():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    full = KNNGraph(n_neighbors=4, normalized=True).fit(X)
    with pytest.raises(ValueError, match="not rows of the X it was built on"):
        PrecomputedGraph(full.adjacency_, X).fit(X[:5] + 1e-9)
    with pytest.raises(ValueError, match="not D - W"):
        PrecomputedGraph(full.laplacian_, X).fit(X[:20])
    with pytest.raises(ValueError, match=r"matrix has shape \(40, 40\) but X has 39 rows"):
        PrecomputedGraph(full.adjacency_, X[:39]).fit(X[:5])


def test_precomputed_graph_in_sklearn_grid_search():
    X, _, y_ssl = _moons(300, 6)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = _laprls(graph=PrecomputedGraph(L, X))
    search = GridSearchCV(
        model,
        {"intrinsic_reg": [1.0, 100.0]},
        cv=SSLKFold(3, transductive=False, random_state=0),
        scoring=get_ssl_scorer(),
    ).fit(X, y_ssl)
    assert search.best_score_ >= 0.99


@pytest.mark.parametrize("sparse", [False, True])
def test_rows_are_matched_exactly_copies_in_order(sparse):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    X[[5, 17, 40]] = X[3]  # four copies of one point
    X[7] = -0.0 * X[8] + 0.0  # a row of zeros, written with negative zeros in the query below
    W = KNNGraph(n_neighbors=4).fit(X).adjacency_
    X_graph = sp.csr_matrix(X) if sparse else X
    rows = np.unique(rng.permutation(60)[:25].tolist() + [3, 5, 17, 40, 7])
    query = X[rows]
    query[rows == 7] *= -1.0  # -0.0 matches 0.0
    found = PrecomputedGraph(W, X_graph).fit(sp.csr_matrix(query) if sparse else query).rows_
    np.testing.assert_array_equal(found, rows)
    # copies are told apart by order only: the first two copies of the point are taken
    copies = PrecomputedGraph(W, X_graph).fit(X[[17, 40]]).rows_
    np.testing.assert_array_equal(copies, [3, 5])
    with pytest.raises(ValueError, match="are not rows"):
        PrecomputedGraph(W, X_graph).fit(X[[3, 3, 3, 3, 3]])
