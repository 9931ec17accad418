"""Cluster-kernel transformers (paper 003): the spectral core, the transfers, the sizing, and
:class:`ClusterKernel` / :class:`NystromClusterKernel` against dense closed forms (n ≤ 200)."""

import functools

import numpy as np
import pytest

from semiscale.cluster_kernels import transfer as tr
from semiscale.cluster_kernels._spectral import (
    extend_eigenvectors,
    kernel_degrees,
    virtual_samples,
)
from semiscale.kernels import RBF
from semiscale.linalg.ops import get_ops


def _points(n=120, d=3, seed=0):
    return np.random.RandomState(seed).randn(n, d)


def _dense_laplacian(X, gamma):
    K = RBF(gamma=gamma)(X)
    d = K.sum(axis=1)
    return K, d, K / np.sqrt(np.outer(d, d))


def _closed_form(L, transfer, cut):
    """K̃ = D̃^{1/2} U Σ̃ Uᵀ D̃^{1/2}, D̃_ii = 1 / L̃_ii, from numpy's own eigh."""
    w, V = np.linalg.eigh(L)
    w, V = np.maximum(w[::-1], 0.0), V[:, ::-1]
    s = tr.TRANSFERS[transfer](w, cut) if isinstance(transfer, str) else transfer(w, cut)
    Lt = (V * s) @ V.T
    Dt = 1.0 / np.diag(Lt)
    return np.sqrt(Dt)[:, None] * Lt * np.sqrt(Dt)[None, :]


# ----------------------------------------------------------------------------- transfers
SIGMA = np.array([0.9, 0.64, 0.25, 0.04, 0.01])


@pytest.mark.parametrize(
    "name, expected",
    [
        ("linear", SIGMA),
        ("step", [1.0, 1.0, 0.0, 0.0, 0.0]),
        ("linear-step", [0.9, 0.64, 0.0, 0.0, 0.0]),
        ("polynomial", SIGMA**2),
        ("poly-step", [0.9**0.5, 0.8, 0.25**2, 0.04**2, 0.01**2]),
    ],
)
def test_each_transfer_matches_its_formula(name, expected):
    np.testing.assert_allclose(tr.resolve_transfer(name)(SIGMA, 2), expected, rtol=1e-15)


def test_poly_step_with_a_cut_past_the_spectrum_is_a_square_root():
    np.testing.assert_allclose(tr.poly_step(SIGMA, 5), np.sqrt(SIGMA))
    np.testing.assert_allclose(tr.poly_step(SIGMA, 100), np.sqrt(SIGMA))


def test_transfer_names_and_callables_are_checked():
    cubic = functools.partial(tr.polynomial, power=3)
    assert tr.resolve_transfer(cubic) is cubic
    np.testing.assert_allclose(tr.apply_transfer(cubic, SIGMA, 0), SIGMA**3)
    with pytest.raises(ValueError, match="transfer='poly' names no transfer.*'poly-step'"):
        tr.resolve_transfer("poly")
    with pytest.raises(TypeError, match="transfer must be one of"):
        tr.resolve_transfer(3)
    with pytest.raises(ValueError, match="negative or non-finite"):
        tr.apply_transfer(lambda s, h: s - 1.0, SIGMA, 2)
    with pytest.raises(ValueError, match="one new eigenvalue per eigenvalue"):
        tr.apply_transfer(lambda s, h: s[:2], SIGMA, 2)


# ---------------------------------------------------------------------------- the core
def test_layer_eigh_gives_the_top_pairs_in_decreasing_order():
    A = np.random.RandomState(1).randn(40, 40)
    A = A + A.T
    w, V = np.linalg.eigh(A)
    values, vectors = get_ops().eigh(A.copy(), n_top=6)
    np.testing.assert_allclose(values, w[::-1][:6], rtol=1e-12)
    np.testing.assert_allclose(np.abs(vectors.T @ V[:, ::-1][:, :6]), np.eye(6), atol=1e-10)
    values, vectors = get_ops().eigh(A.copy(), overwrite_a=True)
    np.testing.assert_allclose((vectors * values) @ vectors.T, A, atol=1e-10)


def test_kernel_degrees_are_the_row_sums_blockwise():
    X = _points()
    K, d, _ = _dense_laplacian(X, 0.5)
    # a budget small enough for several row blocks
    np.testing.assert_allclose(kernel_degrees(RBF(gamma=0.5), X, "96KiB"), d, rtol=1e-12)
    Y = X[:7] + 0.1
    np.testing.assert_allclose(
        kernel_degrees(RBF(gamma=0.5), X, rows=Y), RBF(gamma=0.5)(Y, X).sum(axis=1), rtol=1e-12
    )


@pytest.mark.parametrize("transfer", ["poly-step", "linear", "step", "polynomial"])
def test_virtual_samples_give_the_closed_form_cluster_kernel(transfer):
    X = _points(100)
    _, _, L = _dense_laplacian(X, 0.5)
    values, vectors = get_ops().eigh(L.copy())
    F, transferred = virtual_samples(vectors, values, transfer, 12)
    np.testing.assert_allclose(F @ F.T, _closed_form(L, transfer, 12), atol=1e-10)
    np.testing.assert_allclose(np.diag(F @ F.T), 1.0, atol=1e-12)
    assert transferred.shape == values.shape


def test_a_row_with_no_transferred_weight_stays_zero():
    U = np.array([[1.0, 0.0], [0.0, 1.0]])
    F, _ = virtual_samples(U, np.array([0.5, 0.2]), "step", 1)
    np.testing.assert_array_equal(F, [[1.0, 0.0], [0.0, 0.0]])


def test_the_extension_reproduces_the_fitted_rows():
    X = _points(90)
    kernel = RBF(gamma=0.5)
    _, d, L = _dense_laplacian(X, 0.5)
    values, vectors = get_ops().eigh(L.copy())
    F, _ = virtual_samples(vectors, values, "poly-step", 10)
    U_new = extend_eigenvectors(kernel, X, d, vectors, values, X, memory_budget="96KiB")
    F_new, _ = virtual_samples(U_new, values, "poly-step", 10)
    np.testing.assert_allclose(F_new @ F_new.T, F @ F.T, atol=1e-9)
    # the leading eigenvectors themselves come back
    np.testing.assert_allclose(U_new[:, :10], vectors[:, :10], atol=1e-9)
