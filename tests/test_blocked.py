"""Blocked kernel products against dense references, under memory budgets."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from semiscale._memory import MemoryBudgetError
from semiscale.kernels import RBF, LaplacianKernel, Linear, Polynomial
from semiscale.linalg import kernel_matmul, kernel_matrix, kernel_rmatmul

KERNELS = [RBF(0.4), LaplacianKernel(0.2), Linear(), Polynomial(2, 0.3, 1.0)]
IDS = ["rbf", "laplacian", "linear", "poly"]


def _data(sparse_a=False, sparse_b=False, n=37, m=23, d=5, seed=0):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    if sparse_a:
        A = sp.csr_matrix(A * (rng.random(A.shape) < 0.5))
    if sparse_b:
        B = sp.csr_matrix(B * (rng.random(B.shape) < 0.5))
    return A, B


def _one_row_budget(kernel, A, B):
    """Smallest budget kernel.blocks accepts: it must give 1-row blocks."""
    lo, hi = 1, 1 << 24
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            kernel.blocks(A, B, memory_budget=mid)
            hi = mid
        except MemoryBudgetError:
            lo = mid + 1
    return lo


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse_a,sparse_b", [(False, False), (True, True), (False, True)])
def test_blocked_products_equal_dense(kernel, sparse_a, sparse_b):
    A, B = _data(sparse_a, sparse_b)
    K = kernel(A, B)
    rng = np.random.default_rng(1)
    V, U = rng.standard_normal((B.shape[0], 3)), rng.standard_normal((A.shape[0], 2))
    one_row = _one_row_budget(kernel, A, B)
    assert all(K_blk.shape[0] == 1 for _, K_blk in kernel.blocks(A, B, memory_budget=one_row))
    # the products' own buffers (V cast, (n_b, r) accumulator) come on top of the blocks
    extra = U.shape[1] * B.shape[0] * 8
    for budget in (None, "1GB", 3 * one_row, one_row + extra):
        np.testing.assert_allclose(
            kernel_matmul(kernel, A, B, V, memory_budget=budget), K @ V, rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(
            kernel_rmatmul(kernel, A, B, U, memory_budget=budget), K.T @ U, rtol=1e-12, atol=1e-12
        )
    v, u = V[:, 0], U[:, 0]
    out = kernel_matmul(kernel, A, B, v, memory_budget=one_row)
    assert out.shape == (A.shape[0],)
    np.testing.assert_allclose(out, K @ v, rtol=1e-12, atol=1e-12)
    out = kernel_rmatmul(kernel, A, B, u, memory_budget=one_row + B.shape[0] * 8)
    assert out.shape == (B.shape[0],)
    np.testing.assert_allclose(out, K.T @ u, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_symmetric_products_and_float32(kernel):
    A, _ = _data(d=3)
    A = A / 2
    V = np.random.default_rng(2).standard_normal((A.shape[0], 2))
    K = kernel(A)
    budget = _one_row_budget(kernel, A, None) + 4096  # several blocks, plus product buffers
    np.testing.assert_allclose(kernel_matmul(kernel, A, None, V, budget), K @ V, rtol=1e-12)
    np.testing.assert_allclose(kernel_rmatmul(kernel, A, None, V, budget), K.T @ V, rtol=1e-12)
    A32 = A.astype(np.float32)
    out = kernel_matmul(kernel, A32, A32, V, memory_budget=budget)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, K @ V, rtol=1e-4, atol=1e-4)
    out = kernel_rmatmul(kernel, A32, A32, V.astype(np.float32), memory_budget=budget)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, K.T @ V, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True])
def test_blocks_respect_budget(kernel, sparse):
    A, B = _data(sparse, sparse, n=80, m=60)
    one_row = _one_row_budget(kernel, A, B)
    for budget in (one_row, one_row + 20_000, one_row + 100_000):
        seen = 0
        for rows, K_blk in kernel.blocks(A, B, memory_budget=budget):
            assert K_blk.nbytes <= budget and K_blk.shape == (rows.stop - rows.start, 60)
            assert rows.start == seen
            seen = rows.stop
        assert seen == 80


def test_budget_too_small_raises_before_allocating():
    A, B = _data(n=2000, m=3000)
    k = RBF(1.0)
    tracemalloc.start()
    try:
        for call in (
            lambda: k.blocks(A, B, memory_budget=1000),
            lambda: kernel_matmul(k, A, B, np.ones(3000), memory_budget=1000),
            lambda: kernel_rmatmul(k, A, B, np.ones(2000), memory_budget=30_000),
        ):
            with pytest.raises(MemoryBudgetError, match="memory_budget"):
                call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200_000  # nothing of the 48 MB kernel matrix was allocated


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_peak_memory_within_budget(kernel):
    A, B = _data(n=1500, m=1000, d=10)
    V = np.ones((1000, 2))
    budget = 400_000  # the full K would be 12 MB
    kernel_matmul(kernel, A, B, V, memory_budget=budget)  # warm up imports and caches
    tracemalloc.start()
    try:
        out = kernel_matmul(kernel, A, B, V, memory_budget=budget)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= budget + out.nbytes + 50_000


def test_shape_and_value_errors():
    A, B = _data()
    with pytest.raises(ValueError, match=r"V must have shape \(23,\)"):
        kernel_matmul(RBF(), A, B, np.ones(5))
    with pytest.raises(ValueError, match=r"U must have shape \(37,\)"):
        kernel_rmatmul(RBF(), A, B, np.ones((23, 2)))
    with pytest.raises(ValueError, match="NaN"):
        kernel_matmul(RBF(), A, B, np.full(23, np.nan))
    with pytest.raises(ValueError, match="resolve"):
        kernel_matmul(RBF("median"), A, B, np.ones(23))


def test_empty_rows():
    _, B = _data()
    out = kernel_matmul(RBF(), np.zeros((0, 5)), B, np.ones((23, 2)))
    assert out.shape == (0, 2)
    out = kernel_rmatmul(RBF(), np.zeros((0, 5)), B, np.ones((0, 2)))
    assert out.shape == (23, 2) and not out.any()


def test_kernel_matrix_blocked_fill_and_budget():
    from semiscale._memory import MemoryBudgetError
    from semiscale.kernels import RBF

    rng = np.random.default_rng(0)
    A, B = rng.random((60, 4)), rng.random((25, 4))
    kernel = RBF(gamma=0.7)
    np.testing.assert_allclose(kernel_matrix(kernel, A, B, memory_budget="1MB"), kernel(A, B))
    np.testing.assert_allclose(kernel_matrix(kernel, A, memory_budget="1MB"), kernel(A))
    with pytest.raises(MemoryBudgetError, match="kernel matrix"):
        kernel_matrix(kernel, A, B, memory_budget=60 * 25 * 8)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocks_into_out_equal_the_dense_kernel(kernel, sparse, dtype):
    A, B = _data(sparse, False, n=80, m=60)
    A, B = A.astype(dtype), B.astype(dtype)
    out = np.full((80, 60), np.nan, dtype=dtype)
    budget = _one_row_budget(kernel, A, B) + 5_000
    for _rows, K_blk in kernel.blocks(A, B, memory_budget=budget, out=out):
        assert np.shares_memory(K_blk, out)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, kernel(A, B), rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="out must be"):
        next(kernel.blocks(A, B, out=np.empty((80, 60), dtype=np.float16)))


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True])
def test_threads_split_rows_and_agree_with_one_thread(kernel, sparse, monkeypatch):
    import semiscale.linalg.streaming as streaming
    from semiscale._parallel import row_chunks

    # Small operands, so lower the size at which products are split.
    monkeypatch.setattr(streaming, "PARALLEL_MIN_ENTRIES", 0)
    A, B = _data(sparse, False, n=101, m=40)
    K = kernel(A, B)
    rng = np.random.default_rng(2)
    V, U = rng.standard_normal((40, 3)), rng.standard_normal((101, 2))
    assert len(streaming._chunks(A, B, 3, 1 << 30)) == 3
    assert len(streaming._chunks(A, None, 3, 1 << 30)) == 1  # one operand: never split
    assert len(streaming._chunks(A, B, 3, 1000)) == 1  # budget too small to share
    for n_jobs in (1, 2, 3, None):
        np.testing.assert_allclose(
            kernel_matmul(kernel, A, B, V, n_jobs=n_jobs), K @ V, rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(
            kernel_rmatmul(kernel, A, B, U, n_jobs=n_jobs), K.T @ U, rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(
            kernel_matrix(kernel, A, B, n_jobs=n_jobs), K, rtol=1e-12, atol=1e-13
        )
    # Reproducible for a given number of threads.
    runs = [kernel_rmatmul(kernel, A, B, U, n_jobs=2) for _ in range(2)]
    np.testing.assert_array_equal(*runs)
    assert [(c.start, c.stop) for c in row_chunks(10, 3)] == [(0, 3), (3, 7), (7, 10)]
    assert row_chunks(2, 5) == [slice(0, 1), slice(1, 2)]


def test_worker_errors_reach_the_caller():
    from semiscale._parallel import run_chunks

    def work(chunk):
        if chunk == 1:
            raise ValueError("chunk 1 failed")
        return chunk

    assert run_chunks(lambda c: c * 2, [1, 2, 3]) == [2, 4, 6]
    with pytest.raises(ValueError, match="chunk 1 failed"):
        run_chunks(work, [0, 1, 2])
