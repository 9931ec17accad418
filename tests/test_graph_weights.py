"""Self-tuning edge weights of ``KNNGraph`` (issue 12, part 1)."""

import warnings

import numpy as np
import pytest

from oracles import dense_kth_gaussian, dense_self_tuning
from semiscale.graph import DisconnectedGraphWarning, KNNGraph
from semiscale.graph.weights import WEIGHTS, resolve_local_scale, self_tuning_weights


@pytest.mark.parametrize("symmetrize", ["union", "mutual"])
@pytest.mark.parametrize("n, d, k", [(150, 3, 8), (200, 20, 10)])
def test_self_tuning_equals_dense_reference(symmetrize, n, d, k):
    X = np.random.default_rng(n + d).normal(size=(n, d)) * np.linspace(0.5, 3.0, n)[:, None]
    graph = KNNGraph(n_neighbors=k, weights="self-tuning", symmetrize=symmetrize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)  # a mutual graph may split
        graph.fit(X)
    W, sigma = dense_self_tuning(X, k, symmetrize)
    np.testing.assert_allclose(graph.local_scale_, sigma, rtol=1e-10)
    np.testing.assert_allclose(graph.adjacency_.toarray(), W, rtol=1e-10, atol=1e-14)
    assert graph.bandwidth_ is None


@pytest.mark.parametrize("symmetrize", ["union", "mutual"])
def test_self_tuning_adjacency_is_symmetric_with_positive_weights(symmetrize):
    X = np.random.default_rng(1).normal(size=(300, 5))
    graph = KNNGraph(n_neighbors=6, weights="self-tuning", symmetrize=symmetrize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        W = graph.fit(X).adjacency_
    assert abs(W - W.T).max() == 0.0
    assert W.diagonal().max() == 0.0
    assert (W.data > 0).all() and (W.data <= 1).all()
    if symmetrize == "union":  # the union keeps every directed edge
        assert W.nnz >= X.shape[0] * 6


def test_self_tuning_is_invariant_to_scaling_x():
    X = np.random.default_rng(2).normal(size=(250, 4))
    base = KNNGraph(n_neighbors=8, weights="self-tuning").fit(X)
    for c in (1e-3, 7.5, 1e4):
        scaled = KNNGraph(n_neighbors=8, weights="self-tuning").fit(c * X)
        np.testing.assert_allclose(scaled.local_scale_, c * base.local_scale_, rtol=1e-9)
        np.testing.assert_allclose(
            scaled.adjacency_.toarray(), base.adjacency_.toarray(), rtol=1e-9, atol=1e-14
        )
    # heat weights with a fixed bandwidth are not: the check has teeth
    heat = KNNGraph(n_neighbors=8, bandwidth=1.0)
    assert not np.allclose(heat.fit(X).adjacency_.data, heat.fit(7.5 * X).adjacency_.data)


@pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")
def test_self_tuning_duplicates_floor_the_scale_with_a_warning():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    X = np.vstack([X, np.repeat(X[:1], 5, axis=0)])  # point 0 and 5 copies: 6 identical rows
    k = 4
    with pytest.warns(UserWarning, match="local scale 0"):
        graph = KNNGraph(n_neighbors=k, weights="self-tuning").fit(X)
    sigma = graph.local_scale_
    duplicates = np.r_[0, np.arange(60, 65)]
    positive = np.delete(sigma, duplicates)
    assert (sigma > 0).all() and np.isfinite(graph.adjacency_.data).all()
    np.testing.assert_allclose(sigma[duplicates], positive.min())
    W = graph.adjacency_.toarray()
    assert W[0, 60] == 1.0 and W[61, 62] == 1.0  # distance 0: weight exp(0)


def test_self_tuning_all_duplicates_use_scale_one():
    d = np.zeros((5, 2))
    with pytest.warns(UserWarning, match="local scale 0"):
        sigma = resolve_local_scale(d)
    np.testing.assert_array_equal(sigma, 1.0)
    idx = np.array([[1, 2], [0, 2], [0, 1], [4, 0], [3, 0]])
    np.testing.assert_array_equal(self_tuning_weights(d, idx, sigma), 1.0)


def test_self_tuning_weights_formula():
    distances = np.array([[1.0, 2.0], [1.0, 3.0], [2.0, 3.0]])
    indices = np.array([[1, 2], [0, 2], [0, 1]])
    sigma = resolve_local_scale(distances)
    np.testing.assert_array_equal(sigma, [2.0, 3.0, 3.0])
    expected = np.exp(-np.array([[1 / 6, 4 / 6], [1 / 6, 9 / 9], [4 / 6, 9 / 9]]))
    np.testing.assert_allclose(self_tuning_weights(distances, indices), expected)
    assert "self-tuning" in WEIGHTS


def test_invalid_weights_option_is_refused():
    X = np.random.default_rng(4).normal(size=(30, 2))
    with pytest.raises(ValueError, match="'weights' parameter of KNNGraph must be a str among"):
        KNNGraph(weights="selftuning").fit(X)
    with pytest.raises(ValueError, match="self-tuning"):
        KNNGraph(weights="local").fit(X)


def test_heat_and_binary_have_no_local_scale():
    X = np.random.default_rng(5).normal(size=(40, 2))
    assert KNNGraph().fit(X).local_scale_ is None
    assert KNNGraph(weights="binary").fit(X).local_scale_ is None


def test_mean_square_bandwidth_gives_paper_001s_heat_weights():
    """bandwidth="mean-square": w = exp(−d²/β_g), β_g the mean squared directed kNN edge length
    (the 6 nearest other points of every point, by scikit-learn as the reference)."""
    from sklearn.neighbors import NearestNeighbors

    X = np.random.default_rng(0).standard_normal((80, 3))
    graph = KNNGraph(
        n_neighbors=6, bandwidth="mean-square", symmetrize="union", method="exact"
    ).fit(X)
    dist, _ = NearestNeighbors(n_neighbors=7).fit(X).kneighbors(X)
    beta_g = np.mean(dist[:, 1:] ** 2)
    assert 2 * graph.bandwidth_**2 == pytest.approx(beta_g, rel=1e-12)
    rows, cols = graph.adjacency_.nonzero()
    d2 = ((X[rows] - X[cols]) ** 2).sum(axis=1)
    np.testing.assert_allclose(graph.adjacency_[rows, cols].A1, np.exp(-d2 / beta_g), rtol=1e-10)


@pytest.mark.parametrize("symmetrize", ["average", "union"])
def test_kth_gaussian_equals_dense_reference(symmetrize):
    X = np.random.default_rng(3).normal(size=(160, 4)) * np.linspace(0.5, 3.0, 160)[:, None]
    graph = KNNGraph(n_neighbors=7, weights="kth-gaussian", symmetrize=symmetrize).fit(X)
    W, sigma = dense_kth_gaussian(X, 7, symmetrize)
    np.testing.assert_allclose(graph.local_scale_, sigma, rtol=1e-10)
    np.testing.assert_allclose(graph.adjacency_.toarray(), W, rtol=1e-10, atol=1e-14)
    L = graph.laplacian_.toarray()
    np.testing.assert_allclose(L, np.diag(W.sum(1)) - W, atol=1e-12)


def test_kth_gaussian_weights_formula_and_scale_invariance():
    from semiscale.graph.weights import kth_gaussian_weights

    d = np.array([[1.0, 2.0], [0.5, 0.5]])
    w = kth_gaussian_weights(d)
    np.testing.assert_allclose(w, [[np.exp(-1.0), np.exp(-4.0)], [np.exp(-4.0)] * 2])
    np.testing.assert_allclose(kth_gaussian_weights(7.0 * d), w)
    assert "kth-gaussian" in WEIGHTS


def test_average_symmetrization_halves_one_sided_edges():
    from semiscale.graph.weights import knn_adjacency

    indices = np.array([[1], [0], [0]])  # 0 <-> 1 both ways, 2 -> 0 one way
    W = knn_adjacency(indices, np.array([[0.8], [0.6], [1.0]]), symmetrize="average").toarray()
    np.testing.assert_allclose(W, [[0, 0.7, 0.5], [0.7, 0, 0], [0.5, 0, 0]])
