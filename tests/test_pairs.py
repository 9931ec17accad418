"""Kernel blocks of two sparse operands: the product plans of ``semiscale._pairs`` against the
dense path, and their memory model against what they allocate."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from semiscale._pairs import _IDX_BYTES, _Pair
from semiscale.kernels import RBF, Linear, Polynomial
from semiscale.linalg import kernel_matmul

KERNELS = [RBF(gamma=0.4), Linear(), Polynomial(degree=2, gamma=0.5, coef0=1.0)]


def _sparse(n, d, density, seed, dtype):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    return sp.csr_matrix(X.astype(dtype))


@pytest.mark.parametrize("kernel", KERNELS, ids=["rbf", "linear", "poly"])
@pytest.mark.parametrize("density", [0.02, 0.15, 0.5, 1.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("symmetric", [False, True])
def test_sparse_blocks_equal_the_dense_ones(kernel, density, dtype, symmetric):
    A = _sparse(60, 30, density, 1, dtype)
    B = None if symmetric else _sparse(45, 30, density, 2, dtype)
    assert _Pair(A, B).dot_setup()[0] == "ss"  # A blocks densified, B kept sparse
    got = kernel(A, B)
    expected = kernel(A.toarray(), None if symmetric else B.toarray())
    assert got.dtype == dtype
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    if symmetric and isinstance(kernel, RBF):
        np.testing.assert_array_equal(np.diagonal(got), 1.0)  # exact zero self-distances


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_sparse_data_keep_the_sparse_product(dtype):
    # d · itemsize > (itemsize + 8) · n_b: a dense A row would cost more than a sparse result row
    A, B = _sparse(20, 4000, 0.01, 3, dtype), _sparse(30, 4000, 0.01, 4, dtype)
    assert _Pair(A, B).dot_setup()[0] == "ssr"
    tol = 2e-6 if dtype == np.float32 else 1e-13
    got, expected = RBF(gamma=0.5)(A, B), RBF(gamma=0.5)(A.toarray(), B.toarray())
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_the_dense_plan_counts_a_dense_row_not_a_sparse_result_row():
    # a9a's shape: a sparse result row (16 bytes per point of B) used to be counted, and made
    # blocks 16x smaller than a dense row of A needs
    A = _sparse(50, 123, 0.11, 5, np.float64)
    B = _sparse(5000, 123, 0.11, 6, np.float64)
    pair = _Pair(A, B)
    assert pair.dot_row_bytes() == pair.a_row_bytes() + 8 + 123 * 8
    assert pair.dot_row_bytes() < (8 + _IDX_BYTES) * 5000
    assert pair.dot_fixed_bytes() == 2 * 5000 * 8  # B itself, no transposed copy


@pytest.mark.parametrize("wide", [False, True])
def test_the_traced_peak_of_sparse_products_stays_in_the_budget(wide):
    d, density = (3000, 0.01) if wide else (40, 0.2)
    A, B = _sparse(1500, d, density, 7, np.float64), _sparse(600, d, density, 8, np.float64)
    V = np.ones((B.shape[0], 2))
    kernel = RBF(gamma=0.1)
    _, per_row, fixed = kernel._block_plan(A, B)
    budget = fixed + 30 * per_row  # 30-row blocks; the whole K would be 7 MB
    assert (_Pair(A, B).dot_setup()[0] == "ssr") is wide
    kernel_matmul(kernel, A, B, V, memory_budget=budget)  # warm up imports and caches
    tracemalloc.start()
    try:
        out = kernel_matmul(kernel, A, B, V, memory_budget=budget)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= budget + out.nbytes + 50_000
