"""The KNNGraph estimator: attributes, semantics, warnings, errors, scikit-learn API."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.neighbors import kneighbors_graph

from semiscale.graph import DisconnectedGraphWarning, KNNGraph, laplacian


def points(n=400, seed=0):
    """Uniform points in the unit square (their kNN graphs are connected for k >= 4)."""
    return np.random.default_rng(seed).random((n, 2))


def assert_valid_graph(g, n):
    W = g.adjacency_
    assert sp.isspmatrix_csr(W) and W.dtype == np.float64 and W.shape == (n, n)
    assert abs(W - W.T).max() == 0
    assert (W.diagonal() == 0).all()
    assert (W.data > 0).all()
    assert sp.isspmatrix_csr(g.laplacian_) and g.laplacian_.shape == (n, n)
    np.testing.assert_allclose(g.degree_, np.asarray(W.sum(axis=1)).ravel())
    assert g.trace_ == pytest.approx(g.laplacian_.diagonal().sum())
    assert set(g.timings_) == {"search", "weights", "laplacian"}
    assert g.fit_time_ == pytest.approx(sum(g.timings_.values()))
    assert g.n_samples_fit_ == n
    assert g.n_components_ == 1


def test_fit_matches_sklearn_heat_union():
    X = points()
    g = KNNGraph(n_neighbors=7, bandwidth="mean", symmetrize="union").fit(X)
    assert_valid_graph(g, len(X))
    assert g.search_method_ == "kdtree" and g.search_recall_ is None
    D = kneighbors_graph(X, 7, mode="distance")
    assert g.bandwidth_ == pytest.approx(D.data.mean())
    D.data = np.exp(-(D.data**2) / (2 * g.bandwidth_**2))
    np.testing.assert_allclose(g.adjacency_.toarray(), D.maximum(D.T).toarray(), atol=1e-12)
    np.testing.assert_allclose(g.laplacian_.toarray(), laplacian(g.adjacency_).toarray())
    assert g.trace_ == pytest.approx(g.adjacency_.sum())  # tr(D - W) = total weight


def test_default_graph_is_contrast_heat_averaged():
    # the default: 2σ² = d̄_k² − d̄_1², and W = (A + Aᵀ)/2 of the directed heat weights
    X = points()
    g = KNNGraph(n_neighbors=7).fit(X)
    assert_valid_graph(g, len(X))
    D = kneighbors_graph(X, 7, mode="distance")
    dist = D.data.reshape(len(X), 7)
    near, far = dist.min(axis=1).mean(), dist.max(axis=1).mean()
    assert g.bandwidth_ == pytest.approx(np.sqrt((far**2 - near**2) / 2))
    # the contrast it sets: an edge of length d̄_1 weighs e times one of length d̄_k
    w = lambda d: np.exp(-(d**2) / (2 * g.bandwidth_**2))  # noqa: E731
    assert w(near) / w(far) == pytest.approx(np.e)
    D.data = w(D.data)
    np.testing.assert_allclose(g.adjacency_.toarray(), ((D + D.T) / 2).toarray(), atol=1e-12)


def test_contrast_bandwidth_falls_back_to_the_mean_without_contrast():
    # every point's neighbours at one distance (a ring of equally spaced points, k = 2)
    angles = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    X = np.c_[np.cos(angles), np.sin(angles)]
    g = KNNGraph(n_neighbors=2, method="exact").fit(X)
    step = np.linalg.norm(X[1] - X[0])
    assert g.bandwidth_ == pytest.approx(step)  # "mean": the one edge length
    assert np.isfinite(g.adjacency_.data).all() and (g.adjacency_.data > 0).all()


def test_paper000_bandwidth_and_binary_weights():
    X = points(200)
    g = KNNGraph(n_neighbors=5, bandwidth=np.sqrt(2), symmetrize="union").fit(X)
    D = kneighbors_graph(X, 5, mode="distance")
    D.data = np.exp(-(D.data**2) / 4)
    np.testing.assert_allclose(g.adjacency_.toarray(), D.maximum(D.T).toarray(), atol=1e-12)
    b = KNNGraph(n_neighbors=5, weights="binary", symmetrize="union").fit(X)
    assert b.bandwidth_ is None
    assert (b.adjacency_.data == 1).all()
    assert b.adjacency_.nnz == g.adjacency_.nnz


@pytest.mark.parametrize(
    ("symmetrize", "edges", "n_components"),
    [("union", {(0, 1), (1, 2), (2, 3)}, 1), ("mutual", {(0, 1)}, 3)],
)
def test_union_and_mutual_on_a_line(symmetrize, edges, n_components):
    # k = 1 on a line: 0 -> 1, 1 -> 0, 2 -> 1, 3 -> 2; only 0 <-> 1 is mutual
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = KNNGraph(n_neighbors=1, weights="binary", symmetrize=symmetrize).fit(X)
    W = g.adjacency_.toarray()
    assert {(i, j) for i, j in zip(*np.nonzero(W)) if i < j} == edges
    assert g.n_components_ == n_components
    # a graph alone sees no labels: its components are the estimators' to judge
    assert not [w for w in caught if issubclass(w.category, DisconnectedGraphWarning)]


def test_a_disconnected_graph_says_so_in_its_attributes_without_warning():
    # Before (issue 28): it warned "raise n_neighbors" for any graph of several components, also
    # two moons with a label on each moon, where labels reach every point.  The estimators that
    # read labels warn when a component has no labeled point (tests/test_graph_reach.py).
    X = np.concatenate([points(100), points(100) + 100.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisconnectedGraphWarning)
        g = KNNGraph(n_neighbors=5).fit(X)
    assert issubclass(DisconnectedGraphWarning, UserWarning)
    assert g.n_components_ == 2
    assert (g.component_labels_[:100] != g.component_labels_[100:].reshape(-1, 1)).all()
    L = g.laplacian_.toarray()
    ones = np.zeros(200)
    ones[:100] = 1.0
    np.testing.assert_allclose(L @ ones, 0.0, atol=1e-12)  # each component's indicator


def test_duplicate_points():
    X = points(100)
    X = np.concatenate([X, X[:10]])
    g = KNNGraph(n_neighbors=4).fit(X)
    assert_valid_graph(g, 110)
    assert all(g.adjacency_[i, 100 + i] == 1.0 for i in range(10))  # exp(0) = 1
    with pytest.warns(UserWarning, match="every kNN distance is 0"):
        same = KNNGraph(n_neighbors=3, symmetrize="union").fit(np.ones((10, 4)))
    assert same.bandwidth_ == 1.0 and (same.adjacency_.data == 1.0).all()


def test_sparse_input_matches_dense():
    rng = np.random.default_rng(0)
    Xs = sp.random(300, 40, density=0.2, format="csr", random_state=rng)
    gs = KNNGraph(n_neighbors=6, method="exact").fit(Xs)
    gd = KNNGraph(n_neighbors=6, method="exact").fit(Xs.toarray())
    assert gs.search_method_ == "brute"
    np.testing.assert_allclose(gs.adjacency_.toarray(), gd.adjacency_.toarray(), atol=1e-12)
    assert_valid_graph(gs, 300)


@pytest.mark.parametrize("normalized", [False, True])
def test_laplacian_options_pass_through(normalized):
    X = points(150)
    g = KNNGraph(n_neighbors=5, normalized=normalized, power=2, ridge=0.1).fit(X)
    ref = laplacian(g.adjacency_, normalized=normalized, power=2, ridge=0.1)
    np.testing.assert_allclose(g.laplacian_.toarray(), ref.toarray())
    if normalized:
        g1 = KNNGraph(n_neighbors=5, normalized=True).fit(X)
        assert g1.trace_ == pytest.approx(150)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"weights": "gaussian"}, "weights"),
        ({"symmetrize": "max"}, "symmetrize"),
        ({"power": 0}, "power"),
        ({"ridge": -1.0}, "ridge"),
        ({"bandwidth": -1.0}, "bandwidth"),
        ({"bandwidth": "max"}, "bandwidth"),
        ({"method": "ball_tree"}, "method"),
        ({"n_neighbors": 0}, "n_neighbors"),
        ({"n_neighbors": 50}, "n_neighbors=50 must be smaller"),
    ],
)
def test_invalid_parameters_raise_in_fit(params, match):
    g = KNNGraph(**params)  # __init__ only stores
    with pytest.raises(ValueError, match=match):
        g.fit(points(50))


def test_nan_input():
    X = points(50)
    X[4, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KNNGraph().fit(X)


def test_clone_get_set_params(capsys):
    g = KNNGraph(n_neighbors=5, weights="binary", method="exact", verbose=1)
    params = g.get_params()
    assert params["n_neighbors"] == 5 and params["weights"] == "binary"
    assert set(params) == {
        "n_neighbors",
        "weights",
        "bandwidth",
        "symmetrize",
        "normalized",
        "power",
        "ridge",
        "method",
        "ann_library",
        "memory_budget",
        "random_state",
        "n_jobs",
        "verbose",
    }
    c = clone(g).set_params(n_neighbors=3)
    assert c.n_neighbors == 3 and g.n_neighbors == 5
    c.fit(points(60))
    out, err = capsys.readouterr()
    assert "[KNNGraph] n=60" in err and not out  # progress and messages go to stderr
    assert "kNN graph of 60 points" in err
    assert not hasattr(clone(c), "adjacency_")


def test_graph_is_silent_without_verbose(capsys):
    KNNGraph(n_neighbors=3).fit(points(60))
    assert capsys.readouterr() == ("", "")


def test_a_laplacian_power_stays_within_the_graph_budget():
    from semiscale._memory import MemoryBudgetError
    from semiscale.datasets import make_two_moons

    X, _ = make_two_moons(3000, noise=0.1, random_state=0)
    # L^16 of an 8-NN graph fills in (about 1 GB at 20,000 points): refused, naming the power
    with pytest.raises(MemoryBudgetError, match="power"):
        KNNGraph(power=16, memory_budget="4MiB").fit(X)
    assert KNNGraph(power=2, memory_budget="64MiB").fit(X).laplacian_.shape == (3000, 3000)
    # the same for a precomputed adjacency, and an estimator's budget reaches it
    from semiscale.graph import PrecomputedGraph
    from semiscale.models import NystromLapRLSRegressor

    W = KNNGraph().fit(X).adjacency_
    with pytest.raises(MemoryBudgetError, match="power"):
        PrecomputedGraph(W, X, power=16, memory_budget="4MiB").fit(X)
    y = np.where(np.arange(3000) < 30, X[:, 0], np.nan)
    graph = PrecomputedGraph(W, X, power=16)
    # (exact LapRLS by CG now refuses 4 MiB before the graph: its n x n K does not fit)
    estimator = NystromLapRLSRegressor(graph=graph, n_centers=50, memory_budget="4MiB")
    with pytest.raises(MemoryBudgetError, match="power"):
        estimator.fit(X, y)
