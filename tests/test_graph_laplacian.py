"""Laplacian invariants (hypothesis), edge weights, and symmetrization semantics."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import laplacian as scipy_laplacian

from semiscale.graph import connected_components, laplacian
from semiscale.graph.laplacian import degree
from semiscale.graph.weights import (
    binary_weights,
    heat_weights,
    knn_adjacency,
    resolve_bandwidth,
)


@st.composite
def weight_matrices(draw, max_n=10):
    """Symmetric non-negative sparse W (zero diagonal, possibly isolated vertices)."""
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    rng = np.random.default_rng(seed)
    A = rng.random((n, n)) * scale * (rng.random((n, n)) < density)
    W = np.triu(A, 1)
    return sp.csr_matrix(W + W.T)


def _scale(W):
    return max(1.0, float(abs(W).max()) if W.nnz else 1.0)


@settings(max_examples=60, deadline=None)
@given(W=weight_matrices(), normalized=st.booleans())
def test_laplacian_symmetric_psd(W, normalized):
    L = laplacian(W, normalized=normalized)
    assert sp.isspmatrix_csr(L) and L.dtype == np.float64
    dense = L.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    eig = np.linalg.eigvalsh(dense)
    tol = 1e-9 * (1.0 if normalized else _scale(W) * W.shape[0])
    assert eig.min() >= -tol
    if normalized:
        assert eig.max() <= 2 + 1e-9


@settings(max_examples=60, deadline=None)
@given(W=weight_matrices())
def test_unnormalized_annihilates_constants_and_matches_scipy(W):
    L = laplacian(W)
    n = W.shape[0]
    np.testing.assert_allclose(L @ np.ones(n), 0.0, atol=1e-12 * _scale(W) * n)
    np.testing.assert_allclose(L.toarray(), scipy_laplacian(W.toarray()), atol=1e-12 * _scale(W))
    np.testing.assert_allclose(L.diagonal(), degree(W))


@settings(max_examples=60, deadline=None)
@given(W=weight_matrices())
def test_normalized_matches_scipy_and_isolated_rows_are_zero(W):
    L = laplacian(W, normalized=True)
    np.testing.assert_allclose(L.toarray(), scipy_laplacian(W.toarray(), normed=True), atol=1e-12)
    isolated = degree(W) == 0
    assert np.all(L.toarray()[isolated] == 0)
    np.testing.assert_allclose(L.diagonal().sum(), W.shape[0] - isolated.sum())
    # D^{1/2} 1 spans the null space of each connected block
    v = np.sqrt(degree(W))
    np.testing.assert_allclose(L @ v, 0.0, atol=1e-9 * max(1.0, v.max()))


@settings(max_examples=40, deadline=None)
@given(W=weight_matrices(max_n=8), power=st.integers(1, 4), normalized=st.booleans())
def test_power_equals_dense_matrix_power(W, power, normalized):
    L1 = laplacian(W, normalized=normalized).toarray()
    Lp = laplacian(W, normalized=normalized, power=power).toarray()
    ref = np.linalg.matrix_power(L1, power)
    np.testing.assert_allclose(Lp, ref, atol=1e-10 * max(1.0, abs(ref).max()))
    np.testing.assert_array_equal(Lp, Lp.T)


@settings(max_examples=40, deadline=None)
@given(W=weight_matrices(), ridge=st.floats(0.0, 10.0), power=st.integers(1, 2))
def test_ridge_adds_identity(W, ridge, power):
    base = laplacian(W, power=power).toarray()
    ridged = laplacian(W, power=power, ridge=ridge).toarray()
    np.testing.assert_allclose(ridged, base + ridge * np.eye(W.shape[0]), atol=1e-12)


def test_diagonal_of_w_is_ignored():
    W = sp.csr_matrix(np.array([[5.0, 1.0], [1.0, 7.0]]))
    np.testing.assert_allclose(laplacian(W).toarray(), [[1.0, -1.0], [-1.0, 1.0]])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"power": 0}, "power"),
        ({"power": 1.5}, "power"),
        ({"power": True}, "power"),
        ({"ridge": -1.0}, "ridge"),
        ({"ridge": float("nan")}, "ridge"),
    ],
)
def test_laplacian_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplacian(sp.eye(3, format="csr"), **kwargs)


@pytest.mark.parametrize(
    ("W", "match"),
    [
        (np.ones((2, 3)), "square"),
        (np.array([[0.0, -1.0], [-1.0, 0.0]]), "negative"),
        (np.array([[0.0, np.nan], [np.nan, 0.0]]), "NaN"),
    ],
)
def test_laplacian_bad_weights(W, match):
    with pytest.raises(ValueError, match=match):
        laplacian(W)


def test_connected_components():
    W = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0.0]]))
    n, labels = connected_components(W)
    assert n == 2
    assert labels[0] == labels[1] != labels[2] == labels[3]


# ---------------------------------------------------------------------------- weights
def test_heat_weights_formula_and_paper000_convention():
    d = np.array([[0.0, 1.0, 2.5]])
    np.testing.assert_allclose(heat_weights(d, 0.7), np.exp(-(d**2) / (2 * 0.7**2)))
    np.testing.assert_allclose(heat_weights(d, np.sqrt(2.0)), np.exp(-(d**2) / 4))
    np.testing.assert_array_equal(binary_weights(d), np.ones_like(d))


def test_resolve_bandwidth():
    d = np.array([[1.0, 2.0], [3.0, 6.0]])
    assert resolve_bandwidth(d, "mean") == pytest.approx(3.0)
    assert resolve_bandwidth(d, "median") == pytest.approx(2.5)
    assert resolve_bandwidth(d, 0.5) == 0.5
    with pytest.warns(UserWarning, match="every kNN distance is 0"):
        assert resolve_bandwidth(np.zeros((3, 2)), "mean") == 1.0
    for bad in (0.0, -1.0, float("inf"), "max", True, None):
        with pytest.raises(ValueError, match="bandwidth"):
            resolve_bandwidth(d, bad)


def test_union_and_mutual_symmetrization_hand_example():
    # directed kNN (k=1): 0 -> 1, 1 -> 2, 2 -> 1, 3 -> 2 ; weights 1..4 by source
    indices = np.array([[1], [2], [1], [2]])
    weights = np.array([[1.0], [2.0], [3.0], [4.0]])
    union = knn_adjacency(indices, weights, symmetrize="union").toarray()
    expected_union = np.zeros((4, 4))
    for i, j, w in [(0, 1, 1.0), (1, 2, 3.0), (2, 3, 4.0)]:  # max of both directions
        expected_union[i, j] = expected_union[j, i] = w
    np.testing.assert_array_equal(union, expected_union)
    mutual = knn_adjacency(indices, weights, symmetrize="mutual").toarray()
    expected_mutual = np.zeros((4, 4))
    expected_mutual[1, 2] = expected_mutual[2, 1] = 2.0  # only 1 <-> 2 is mutual; min weight
    np.testing.assert_array_equal(mutual, expected_mutual)
    with pytest.raises(ValueError, match="symmetrize"):
        knn_adjacency(indices, weights, symmetrize="max")


def test_adjacency_drops_self_loops_and_zeros():
    indices = np.array([[0, 1], [0, 2], [1, 0]])
    weights = np.array([[5.0, 1.0], [1.0, 0.0], [0.0, 2.0]])
    W = knn_adjacency(indices, weights)
    assert W.diagonal().sum() == 0
    assert (W.data > 0).all()
    np.testing.assert_array_equal(W.toarray(), W.toarray().T)
