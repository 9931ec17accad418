"""Blocked Nyström LapRLS Hessian (paper 000 eqs. 4 and 7) against dense references."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from oracles import dense_nystrom_laprls_hessian
from reference_problems import heat_laplacian
from semiscale._memory import MemoryBudgetError
from semiscale.kernels import RBF
from semiscale.linalg import FullLapRLSHessian, NystromLapRLSHessian
from semiscale.solvers import cg, make_preconditioner


class SpyRBF(RBF):
    """RBF recording the number of rows of every kernel block it computes."""

    rows: list = []

    def _block(self, pair, rows, state, out=None):
        type(self).rows.append(rows.stop - rows.start)
        return super()._block(pair, rows, state, out)


def problem(n=120, s=25, m=15, d=4, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    return X, rng.choice(n, s, replace=False), rng.choice(n, m, replace=False), heat_laplacian(X)


ARGS = {"ambient_lambda": 1e-2, "intrinsic_lambda": 0.05}


def smallest_budget(make):
    """Smallest budget (bytes) for which ``make(budget) @ V`` runs, by bisection."""
    lo, hi = 1, 1 << 26
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            make(mid)
            hi = mid
        except MemoryBudgetError:
            lo = mid
    return hi


@pytest.mark.parametrize("laplacian", [True, False], ids=["with-graph", "labeled-only"])
@pytest.mark.parametrize("blocks", ["one-row", "several", "cached"])
def test_blocked_product_equals_dense(blocks, laplacian):
    X, centers, labeled, L = problem()
    L = L if laplacian else None
    rows = 120 if laplacian else 15  # rows of X the operator needs
    kernel = SpyRBF(gamma=0.3)
    V = np.random.default_rng(1).normal(size=(25, 3))
    dense = dense_nystrom_laprls_hessian(kernel, X, centers, labeled, L, **ARGS)
    cache = blocks == "cached"

    def run(budget):
        H = NystromLapRLSHessian(
            kernel, X, centers, labeled, L, **ARGS, memory_budget=budget, cache=cache
        )
        H.kernel_ss()
        SpyRBF.rows = []
        return H, H @ V

    one_row = smallest_budget(lambda b: run(b)[1])
    budget = {"one-row": one_row, "several": one_row + 1000, "cached": None}[blocks]
    H, HV = run(budget)
    assert H.cached_ == cache
    sizes = SpyRBF.rows
    if blocks == "one-row":  # the tighter of the two passes runs one row at a time
        assert min(sizes) == 1 and max(sizes) <= 4
    elif blocks == "several":
        assert 1 < max(sizes) < rows and len(sizes) > 2
    else:
        assert sizes == [rows]  # K_ns (or K_ms) in a single block, computed once
    if not H.cached_:  # two passes over the rows actually needed, nothing else
        assert sum(sizes) == 2 * rows
    np.testing.assert_allclose(HV, dense @ V, rtol=1e-12, atol=1e-12 * np.abs(dense @ V).max())
    np.testing.assert_allclose(H.matvec(V[:, 0]), dense @ V[:, 0], rtol=1e-11, atol=1e-12)
    assert H.n_matvec_ == 2


def test_cache_decided_by_budget():
    X, centers, labeled, L = problem()
    kernel = RBF(gamma=0.3)

    def make(budget, cache="auto"):
        return NystromLapRLSHessian(
            kernel, X, centers, labeled, L, **ARGS, memory_budget=budget, cache=cache
        )

    assert make(None).cached_
    small = smallest_budget(lambda b: make(b, cache=False) @ np.ones((25, 1)))
    assert not make(small).cached_
    with pytest.raises(MemoryBudgetError, match="cache=True"):
        make(small, cache=True)
    with pytest.raises(ValueError, match="cache"):
        make(None, cache="yes")


def test_linear_operator_protocol():
    X, centers, labeled, L = problem()
    H = NystromLapRLSHessian(RBF(gamma=0.3), X, centers, labeled, L, **ARGS)
    assert isinstance(H, LinearOperator) and H.shape == (25, 25) and H.dtype == np.float64
    v = np.ones(25)
    np.testing.assert_allclose(H.T @ v, H @ v)
    np.testing.assert_allclose(H.rmatvec(v), H.matvec(v))
    assert H.matvec(v).shape == (25,)


def test_rhs_kns_matmul_and_diagonal():
    X, centers, labeled, L = problem()
    kernel = RBF(gamma=0.3)
    K_ns = kernel(X, X[centers])
    dense = dense_nystrom_laprls_hessian(kernel, X, centers, labeled, L, **ARGS)
    Y = np.random.default_rng(2).normal(size=(15, 2))
    alpha = np.random.default_rng(3).normal(size=(25, 2))
    for cache in (True, False):
        H = NystromLapRLSHessian(kernel, X, centers, labeled, L, **ARGS, cache=cache)
        np.testing.assert_allclose(H.rhs(Y), K_ns[labeled].T @ Y, rtol=1e-12)
        assert H.rhs(Y[:, 0]).shape == (25,)
        np.testing.assert_allclose(H.kns_matmul(alpha), K_ns @ alpha, rtol=1e-12)
        np.testing.assert_allclose(H.diagonal(), np.diag(dense), rtol=1e-12)
        np.testing.assert_allclose(H.kernel_ms(), K_ns[labeled])
    with pytest.raises(ValueError, match="Y must have shape"):
        H.rhs(np.ones(14))


def test_centers_as_points_and_boolean_mask():
    X, centers, labeled, L = problem()
    mask = np.zeros(120, dtype=bool)
    mask[labeled] = True
    kernel = RBF(gamma=0.3)
    a = NystromLapRLSHessian(kernel, X, centers, np.sort(labeled), L, **ARGS)
    b = NystromLapRLSHessian(kernel, X, X[centers], mask, L, **ARGS)
    V = np.eye(25)
    np.testing.assert_allclose(a @ V, b @ V, rtol=1e-12)


def test_float32_path():
    X, centers, labeled, L = problem(dtype=np.float32)
    kernel = RBF(gamma=0.3)
    H = NystromLapRLSHessian(kernel, X, centers, labeled, L, **ARGS)
    dense = dense_nystrom_laprls_hessian(kernel, X.astype(np.float64), centers, labeled, L, **ARGS)
    V = np.random.default_rng(4).normal(size=(25, 2))
    out = H @ V.astype(np.float32)
    assert H.dtype == np.float32 and out.dtype == np.float32
    assert np.linalg.norm(out - dense @ V) <= 1e-4 * np.linalg.norm(dense @ V)


def test_full_operator_equals_exact_laprls():
    """s = n: f = K α from H α = K J y equals the exact solution of paper 000 eq. (3)."""
    n, m = 80, 12
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, 3))
    labeled = rng.choice(n, m, replace=False)
    y = rng.choice([-1.0, 1.0], size=m)
    L = heat_laplacian(X)
    kernel = RBF(gamma=2.0)  # well-conditioned K
    lam_A, lam_I = 0.1, 0.05
    K = kernel(X)
    J = np.zeros((n, n))
    J[labeled, labeled] = 1
    Jy = np.zeros(n)
    Jy[labeled] = y
    f_exact = K @ np.linalg.solve(J @ K + lam_A * np.eye(n) + lam_I * (L @ K), Jy)

    H = FullLapRLSHessian(kernel, X, labeled, L, lam_A, lam_I)
    z = H.rhs(y)
    np.testing.assert_allclose(z, K @ Jy, atol=1e-12)
    alpha_direct = np.linalg.solve(H @ np.eye(n), z)
    np.testing.assert_allclose(K @ alpha_direct, f_exact, rtol=0, atol=1e-8 * np.abs(f_exact).max())
    P = make_preconditioner("sampled-hessian", H, n_rows=n)  # = H: one or two iterations
    res = cg(H, z, preconditioner=P, tol=1e-13)
    assert res.converged and res.n_iter <= 3
    np.testing.assert_allclose(H.kns_matmul(res.x), f_exact, atol=1e-8 * np.abs(f_exact).max())


def test_full_operator_stores_one_symmetric_kernel_matrix():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 4))
    H = FullLapRLSHessian(RBF(gamma=0.7), X, np.arange(30), heat_laplacian(X), 0.1, 0.05)
    V = rng.normal(size=(300, 2))
    HV = H @ V
    K = H.kernel_ss()
    assert H.cached_ and H._K_rows is None and H._cache() is K  # K_ns is K_ss: one n x n array
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_allclose(K, RBF(gamma=0.7)(X), rtol=1e-13, atol=1e-15)
    dense = dense_nystrom_laprls_hessian(
        RBF(gamma=0.7), X, np.arange(300), np.arange(30), heat_laplacian(X), 0.1, 0.05
    )
    np.testing.assert_allclose(HV, dense @ V, rtol=1e-11, atol=1e-11 * np.abs(dense @ V).max())


def test_duplicate_centers_still_solve():
    X, _, labeled, L = problem(seed=6)
    centers = np.r_[np.arange(20), np.arange(5)]  # K_ss exactly singular
    kernel = RBF(gamma=0.3)
    H = NystromLapRLSHessian(kernel, X, centers, labeled, L, **ARGS)
    y = np.random.default_rng(7).normal(size=(15, 2))
    z = H.rhs(y)
    Hd = dense_nystrom_laprls_hessian(kernel, X, centers, labeled, L, **ARGS)
    f_ref = H.kns_matmul(sla.lstsq(Hd, z, cond=1e-12)[0])
    for name in ("falkon", "sampled-hessian"):
        kw = {"center_laplacian": heat_laplacian(X[centers])} if name == "falkon" else {}
        res = cg(H, z, preconditioner=make_preconditioner(name, H, **kw), tol=1e-10)
        assert res.converged
        f = H.kns_matmul(res.x)
        assert np.linalg.norm(f - f_ref) <= 1e-6 * np.linalg.norm(f_ref)


def test_budget_errors():
    X, centers, labeled, L = problem()
    kernel = RBF(gamma=0.3)
    with pytest.raises(MemoryBudgetError, match="K_ss"):
        NystromLapRLSHessian(kernel, X, centers, labeled, L, **ARGS, memory_budget=1000)
    H = NystromLapRLSHessian(kernel, X, centers, labeled, L, **ARGS, memory_budget=25 * 25 * 8 + 10)
    assert not H.cached_  # K_ss fits, but no kernel block row does
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        H @ np.ones((25, 2))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"labeled_index": [0, 500]}, "outside"),
        ({"labeled_index": [3, 4, 3]}, "duplicate"),
        ({"ambient_lambda": -1.0}, "non-negative"),
        ({"laplacian": sp.eye(7)}, "shape"),
        ({"labeled_index": np.ones(5, dtype=bool)}, "boolean"),
        ({"centers": [[0.5, 1.5]]}, "features"),
    ],
)
def test_validation(kwargs, match):
    X, centers, labeled, L = problem()
    args = dict(
        kernel=RBF(gamma=0.3), X=X, centers=centers, labeled_index=labeled, laplacian=L, **ARGS
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        NystromLapRLSHessian(**args) @ np.ones(args["X"].shape[0] and 25)
