"""The array-operations layer: dispatch (get_ops/use_ops/set_ops) and every method against a
dense NumPy/SciPy reference."""

import threading
import tracemalloc

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from semiscale._memory import MemoryBudgetError
from semiscale.kernels import RBF, Linear
from semiscale.linalg import kernel_matmul
from semiscale.linalg.ops import ArrayOps, get_ops, set_ops, use_ops


class Tagged(ArrayOps):
    """An implementation that marks its results, to see which one ran."""

    def matmul(self, A, B, *, out=None):
        return super().matmul(A, B, out=out) + 1.0


def spd(s, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(s, s + 3))
    return F @ F.T / s + np.eye(s)


# --------------------------------------------------------------------------------- dispatch
def test_use_ops_nests_restores_and_is_per_thread():
    default = get_ops()
    a, b = Tagged(), Tagged()
    seen = {}
    with use_ops(a) as entered:
        assert entered is a and get_ops() is a
        worker = threading.Thread(target=lambda: seen.setdefault("thread", get_ops()))
        worker.start()
        worker.join()
        with use_ops(b):
            assert get_ops() is b
        assert get_ops() is a
        with pytest.raises(RuntimeError), use_ops(b):
            raise RuntimeError
        assert get_ops() is a
    assert get_ops() is default
    assert seen["thread"] is default  # a thread without use_ops sees the default


def test_set_ops_changes_the_default_everywhere():
    mine = Tagged()
    previous = set_ops(mine)
    try:
        seen = {}
        worker = threading.Thread(target=lambda: seen.setdefault("thread", get_ops()))
        worker.start()
        worker.join()
        assert get_ops() is mine and seen["thread"] is mine
    finally:
        assert set_ops(previous) is mine
    assert get_ops() is previous


def test_only_array_ops_are_accepted():
    with pytest.raises(TypeError, match="ArrayOps"):
        set_ops(object())
    with pytest.raises(TypeError, match="ArrayOps"), use_ops(np):
        pass


def test_library_calls_go_to_the_implementation_in_use():
    """A Hessian product asks for the implementation at call time, not at construction."""
    from semiscale.linalg.operators import NystromLapRLSHessian

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    H = NystromLapRLSHessian(RBF(0.5), X, np.arange(8), np.arange(5), None, 0.1, 0.0)
    V = rng.normal(size=(8, 2))
    plain = H @ V
    with use_ops(Tagged()):
        tagged = H @ V  # the cached K_ms products go through Tagged.matmul
    assert not np.allclose(plain, tagged)
    np.testing.assert_array_equal(H @ V, plain)


# --------------------------------------------------------------------------------- kernels
def test_kernel_methods_equal_the_dense_kernel():
    ops, rng = ArrayOps(), np.random.default_rng(1)
    A, B = rng.normal(size=(30, 4)), rng.normal(size=(12, 4))
    K = RBF(0.3)(A, B)
    V, U = rng.normal(size=(12, 2)), rng.normal(size=(30, 3))
    np.testing.assert_allclose(ops.kernel_matmul(RBF(0.3), A, B, V), K @ V, rtol=1e-13)
    np.testing.assert_allclose(ops.kernel_rmatmul(RBF(0.3), A, B, U), K.T @ U, rtol=1e-13)
    np.testing.assert_allclose(ops.kernel_matrix(RBF(0.3), A, B), K, rtol=1e-14)
    np.testing.assert_array_equal(
        kernel_matmul(RBF(0.3), A, B, V), ops.kernel_matmul(RBF(0.3), A, B, V)
    )
    rows = ops.kernel_block_rows(Linear(), A, B, memory_budget=10_000)
    blocks = list(ops.kernel_blocks(Linear(), A, B, memory_budget=10_000))
    assert all(K_b.shape[0] <= rows for _, K_b in blocks) and len(blocks) == -(-30 // rows)
    with pytest.raises(MemoryBudgetError):
        ops.kernel_block_rows(Linear(), A, B, memory_budget=100)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_skinny_products_are_fortran_ordered_and_equal_the_c_ordered_ones(n_jobs, dtype):
    # the layout is the speed-up (streaming.product_order); the values must not change
    ops, rng = ArrayOps(), np.random.default_rng(4)
    A, B = rng.normal(size=(500, 6)).astype(dtype), rng.normal(size=(40, 6)).astype(dtype)
    V, U = rng.normal(size=(40, 3)).astype(dtype), rng.normal(size=(500, 3)).astype(dtype)
    K = RBF(0.3)(A.astype(np.float64), B.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-13
    budget = 80_000  # B-side operands and about 20 rows: the result is written by slices
    KV = ops.kernel_matmul(RBF(0.3), A, B, V, memory_budget=budget, n_jobs=n_jobs)
    KtU = ops.kernel_rmatmul(RBF(0.3), A, B, U, memory_budget=budget + 2 * 40 * 3 * 8)
    for got, expected in ((KV, K @ V), (KtU, K.T @ U)):
        assert got.dtype == dtype and got.flags.f_contiguous and not got.flags.c_contiguous
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    Kd = K.astype(dtype)
    for left, right in ((Kd, V), (Kd.T, U)):
        product = ops.matmul(left, right)
        assert product.dtype == dtype and product.flags.f_contiguous
        np.testing.assert_allclose(product, left @ right, rtol=tol, atol=tol)
    assert ops.matmul(Kd, V[:, :1]).flags.c_contiguous  # one column: C order
    assert ops.kernel_matmul(RBF(0.3), A, B, V[:, 0]).shape == (500,)
    assert ops.matmul(V.T, Kd.T).flags.c_contiguous  # wider than tall: C order


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_sq_distance_scan_gives_every_block_its_rows(sparse, n_jobs):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(70, 5))
    if sparse:
        X = sp.csr_matrix(X * (rng.random(X.shape) < 0.5))
    dense = X.toarray() if sparse else X
    sq = np.einsum("ij,ij->i", dense, dense)
    queries = rng.choice(70, 33, replace=False)
    G_all = np.full((33, 70), np.nan)

    def reduce(block, G):
        G_all[block] = G

    ArrayOps().sq_distance_scan(X, sq, queries, reduce, memory_budget=20_000, n_jobs=n_jobs)
    expected = sq[None, :] - 2 * dense[queries] @ dense.T
    expected[np.arange(33), queries] = np.inf
    np.testing.assert_allclose(G_all, expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------- dense algebra
def test_products_and_gram_updates():
    ops, rng = ArrayOps(), np.random.default_rng(3)
    A, B = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
    np.testing.assert_array_equal(ops.matmul(A, B), A @ B)
    out = np.empty((6, 3))
    assert ops.matmul(A, B, out=out) is out
    S = sp.random(6, 6, density=0.4, random_state=0, format="csr")
    np.testing.assert_allclose(ops.sparse_matmul(S, A), S.toarray() @ A, rtol=1e-14)
    C = np.asfortranarray(spd(6))
    expected = C + 0.5 * A @ A.T
    assert ops.syrk(C, A, 0.5) is C
    np.testing.assert_allclose(np.tril(C), np.tril(expected), rtol=1e-14)
    with pytest.raises(ValueError, match="Fortran"):
        ops.syrk(np.ascontiguousarray(spd(6)), A)
    L = np.linalg.cholesky(spd(6))
    np.testing.assert_allclose(np.tril(ops.lauum(L)), np.tril(L.T @ L), rtol=1e-13)
    K = rng.normal(size=(700, 700))
    ops.symmetrize(K)
    np.testing.assert_array_equal(K, K.T)


def test_factorizations_and_solves():
    ops, rng = ArrayOps(), np.random.default_rng(4)
    A, B = spd(8), rng.normal(size=(8, 2))
    L, jitter = ops.jittered_cholesky(A)
    assert jitter == 0.0
    np.testing.assert_allclose(L @ L.T, A, rtol=1e-13)
    np.testing.assert_allclose(ops.cho_solve(L, B), np.linalg.solve(A, B), rtol=1e-12)
    np.testing.assert_allclose(ops.solve_triangular(L, B), sla.solve_triangular(L, B, lower=True))
    np.testing.assert_allclose(
        ops.solve_triangular(L, B, trans=True), np.linalg.solve(L.T, B), rtol=1e-12
    )
    F = rng.normal(size=(5, 8))
    np.testing.assert_allclose(
        ops.solve_triangular(L, F.copy(order="F"), trans=True, side="right"),
        F @ np.linalg.inv(L.T),
        rtol=1e-10,
    )
    with pytest.raises(ValueError, match="side"):
        ops.solve_triangular(L, B, side="top")
    G = rng.normal(size=(8, 8))
    np.testing.assert_allclose(ops.lu_solve(ops.lu_factor(G), B), np.linalg.solve(G, B))
    for assume_a, M in (("gen", G), ("pos", A)):
        np.testing.assert_allclose(ops.solve(M, B, assume_a=assume_a), np.linalg.solve(M, B))
    singular = np.ones((3, 3))
    with pytest.raises(np.linalg.LinAlgError):
        ops.solve(singular, np.ones(3))
    hilbert = 1.0 / (np.arange(14)[:, None] + np.arange(14)[None, :] + 1)  # rcond ~ 1e-19
    with pytest.raises(np.linalg.LinAlgError, match="Ill-conditioned"):
        ops.solve(hilbert, np.ones(14))
    G32 = G.astype(np.float32)
    np.testing.assert_allclose(ops.solve(G32, B), np.linalg.solve(G, B), rtol=1e-3)
    work = G.copy(order="F")
    np.testing.assert_allclose(ops.solve(work, B, overwrite_a=True), np.linalg.solve(G, B))
    np.testing.assert_allclose(ops.lstsq(singular, np.ones(3)), np.full(3, 1 / 3))
    # A singular PSD matrix is jittered until its pivots are not lost in round-off.
    L, jitter = ops.jittered_cholesky(np.ones((4, 4)))
    assert jitter > 0
    np.testing.assert_allclose(L @ L.T, np.ones((4, 4)) + jitter * np.eye(4), rtol=1e-12)


# --------------------------------------------------------------------------------- systems
@pytest.mark.parametrize("budget", [None, 5_000])
def test_laprls_system_inplace_is_JK_plus_lambda_I_LK_plus_lambda_A_I(budget):
    rng = np.random.default_rng(5)
    n = 40
    X = rng.normal(size=(n, 3))
    K = RBF(0.5)(X)
    W = sp.random(n, n, density=0.1, random_state=1)
    W = W + W.T
    L = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 7, replace=False)] = True
    J = np.diag(labeled.astype(float))
    expected = J @ K + 0.3 * (L @ K) + 0.01 * np.eye(n)
    for rows in (labeled, np.flatnonzero(labeled)):
        A = ArrayOps().laprls_system_inplace(K.copy(), L, rows, 0.3, 0.01, budget)
        np.testing.assert_allclose(A, expected, rtol=1e-13, atol=1e-15)
    with pytest.raises(MemoryBudgetError):
        ArrayOps().laprls_system_inplace(K.copy(), L, labeled, 0.3, 0.01, 100)


def test_dense_from_matmat_rebuilds_a_symmetric_operator():
    A = spd(30)
    calls = []

    def matmat(E):
        calls.append(E.shape[1])
        return A @ E

    H = ArrayOps().dense_from_matmat(
        matmat, 30, column_bytes=2_000, memory_budget=30 * 30 * 8 + 20_000
    )
    np.testing.assert_allclose(H, A, rtol=1e-14)
    assert len(calls) == 3 and sum(calls) == 30  # 10 columns per block fit the budget


def test_block_rows_and_threads():
    ops = ArrayOps()
    assert ops.block_rows(100, 10, 205) == 20
    assert [(s.start, s.stop) for s in ops.row_blocks(5, 10, 20)] == [(0, 2), (2, 4), (4, 5)]
    with pytest.raises(MemoryBudgetError, match="kNN"):
        ops.block_rows(5, 100, 10, what="kNN")
    assert ops.n_threads(3) == 3 and ops.n_threads(None) >= 1
    with ops.blas_threads(1):
        pass


# ------------------------------------------------------------------------ symmetric row sums
@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 32 rows (float64; 45 in float32) and threads from 2,048 kernel entries on."""
    from semiscale.linalg import streaming

    monkeypatch.setattr(streaming, "STREAM_BLOCK_BYTES", 8 * 32 * 32)
    monkeypatch.setattr(streaming, "PARALLEL_MIN_ENTRIES", 1024)
    return streaming


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("fmt", ["dense", "sparse", "sparse-dense-tiles"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", [RBF(0.3), Linear()], ids=["rbf", "linear"])
def test_kernel_row_sums_equal_the_dense_row_sums(small_tiles, kernel, dtype, fmt, n_jobs):
    rng = np.random.default_rng(5)
    density = 0.5 if fmt == "sparse-dense-tiles" else 0.05
    X = (rng.normal(size=(203, 7)) * (rng.random((203, 7)) < density)).astype(dtype)
    X_in = X if fmt == "dense" else sp.csr_matrix(X)
    if fmt != "dense":  # the tiles of sparse X are densified only from DENSE_TILE_DENSITY on
        assert small_tiles._dense_tiles(X_in, 32) is (fmt == "sparse-dense-tiles")
    expected = kernel(X.astype(np.float64)).sum(axis=1)
    got = ArrayOps().kernel_row_sums(kernel, X_in, "4MB", n_jobs)
    assert got.dtype == np.float64 and got.shape == (203,)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    again = ArrayOps().kernel_row_sums(kernel, X_in, "4MB", n_jobs)
    np.testing.assert_array_equal(got, again)  # reproducible for a given n_jobs


def test_kernel_row_sums_compute_the_tiles_on_and_above_the_diagonal(small_tiles, monkeypatch):
    entries = []
    blocks = small_tiles.kernel_blocks

    def counting(*args, **kwargs):
        for rows, K in blocks(*args, **kwargs):
            entries.append(K.size)
            yield rows, K

    monkeypatch.setattr(small_tiles, "kernel_blocks", counting)
    X = np.random.default_rng(6).normal(size=(200, 3))  # tiles of 32 rows: 6 full, one of 8
    d = ArrayOps().kernel_row_sums(RBF(0.5), X, "4MB")
    np.testing.assert_allclose(d, RBF(0.5)(X).sum(axis=1), rtol=1e-13)
    sides = [32] * 6 + [8]
    assert sum(entries) == sum(a * b for j, b in enumerate(sides) for a in sides[: j + 1])
    assert sum(entries) < 0.6 * 200 * 200  # n (n + 32) / 2 of the 200² entries


@pytest.mark.parametrize("sparse", [False, True])
def test_kernel_row_sums_stay_in_the_budget(sparse):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3000, 20)) * (rng.random((3000, 20)) < 0.05)
    X = sp.csr_matrix(X) if sparse else X
    budget = 2_000_000  # the whole K would be 72 MB
    ArrayOps().kernel_row_sums(RBF(0.2), X, budget)  # warm up imports and caches
    tracemalloc.start()
    try:
        d = ArrayOps().kernel_row_sums(RBF(0.2), X, budget)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= budget + d.nbytes + 50_000
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        ArrayOps().kernel_row_sums(RBF(0.2), X, 30_000)
