"""CG / PCG over a table of named SPD problems, against dense direct solves."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator

from semiscale.solvers import SolveResult, cg


def _spd(n, eigenvalues, seed):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return (Q * eigenvalues) @ Q.T


def _chain_laplacian(n):
    main = np.r_[1.0, 2.0 * np.ones(n - 2), 1.0]
    return sp.diags([-np.ones(n - 1), main, -np.ones(n - 1)], [-1, 0, 1], format="csr")


PROBLEMS = {
    "well-conditioned": lambda: _spd(50, np.linspace(1, 10, 50), 0),
    "ill-conditioned": lambda: _spd(60, np.logspace(0, -6, 60), 1),
    "clustered-spectrum": lambda: _spd(80, np.r_[np.ones(75), [10, 50, 100, 500, 1000]], 2),
    "sparse-laplacian+ridge": lambda: _chain_laplacian(100) + 0.05 * sp.eye(100, format="csr"),
    "diagonal-badly-scaled": lambda: np.diag(np.logspace(0, 5, 40)),
}
FORMS = {
    "ndarray-or-sparse": lambda A: A,
    "linear-operator": aslinearoperator,
    "callable": lambda A: lambda V: A @ V,
}


def _dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", PROBLEMS)
def test_cg_matches_direct_solve(name, form):
    A = PROBLEMS[name]()
    Ad = _dense(A)
    n = Ad.shape[0]
    B = np.random.default_rng(3).normal(size=(n, 3))
    res = cg(FORMS[form](A), B, tol=1e-10, max_iter=20 * n)
    assert isinstance(res, SolveResult)
    assert res.converged and res.x.shape == B.shape
    direct = np.linalg.solve(Ad, B)
    assert np.linalg.norm(res.x - direct) <= 1e-6 * np.linalg.norm(direct) * max(
        1, np.linalg.cond(Ad) * 1e-4
    )
    true_res = np.linalg.norm(B - Ad @ res.x, axis=0) / np.linalg.norm(B, axis=0)
    assert np.all(true_res < 1e-8)
    assert res.residuals.shape == (res.n_iter + 1, 3)
    assert np.all(res.residuals[-1] <= 1e-10)


@pytest.mark.parametrize("name", PROBLEMS)
def test_pcg_equals_direct_solve_to_1e6(name):
    A = PROBLEMS[name]()
    Ad = _dense(A)
    n = Ad.shape[0]
    b = np.random.default_rng(4).normal(size=n)
    jacobi = 1.0 / np.diag(Ad)
    res = cg(A, b, preconditioner=lambda V: jacobi[:, None] * V, tol=1e-12, max_iter=20 * n)
    x = np.linalg.solve(Ad, b)
    assert res.x.shape == (n,)
    assert np.linalg.norm(res.x - x) <= 1e-6 * np.linalg.norm(x)


def test_exact_preconditioner_converges_in_one_iteration():
    A = PROBLEMS["ill-conditioned"]()
    factor = sla.cho_factor(A)
    res = cg(A, np.ones(60), preconditioner=lambda V: sla.cho_solve(factor, V), tol=1e-8)
    assert res.n_iter <= 2 and res.converged


def test_jacobi_preconditioner_cuts_iterations_on_badly_scaled_problem():
    A = PROBLEMS["diagonal-badly-scaled"]() + 0.01 * _spd(40, np.ones(40), 5)
    b = np.ones(40)
    plain = cg(A, b, tol=1e-8)
    pre = cg(A, b, preconditioner=np.diag(1 / np.diag(A)), tol=1e-8)
    assert pre.converged and pre.n_iter < plain.n_iter / 2


class _ApplyObject:
    def __init__(self, d):
        self.d = d

    def apply(self, V):
        return V / self.d[:, None]


@pytest.mark.parametrize(
    "make",
    [
        lambda d: lambda V: V / d[:, None],
        lambda d: _ApplyObject(d),
        lambda d: sp.diags(1 / d),
        lambda d: aslinearoperator(sp.diags(1 / d)),
    ],
    ids=["callable", "apply-object", "sparse-matrix", "linear-operator"],
)
def test_preconditioner_forms_agree(make):
    A = PROBLEMS["well-conditioned"]()
    d = np.diag(A).copy()
    b = np.arange(1.0, 51.0)
    ref = cg(A, b, preconditioner=lambda V: V / d[:, None], tol=1e-10)
    res = cg(A, b, preconditioner=make(d), tol=1e-10)
    assert res.n_iter == ref.n_iter
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12)


@pytest.mark.parametrize("name", ["well-conditioned", "clustered-spectrum"])
def test_multi_rhs_equals_separate_solves(name):
    A = PROBLEMS[name]()
    B = np.random.default_rng(6).normal(size=(A.shape[0], 4))
    B[:, 2] *= 1e-3
    together = cg(A, B, tol=1e-8, max_iter=2000)
    iters = []
    for j in range(4):
        alone = cg(A, B[:, j], tol=1e-8, max_iter=2000)
        iters.append(alone.n_iter)
        # same recurrence; only BLAS rounding (matrix-matrix vs matrix-vector) differs
        err = np.linalg.norm(together.x[:, j] - alone.x) / np.linalg.norm(alone.x)
        assert err < 1e-7
        k = min(alone.n_iter, 10)
        np.testing.assert_allclose(together.residuals[:k, j], alone.residuals[:k, 0], rtol=1e-6)
        last = np.flatnonzero(together.residuals[:, j] <= 1e-8)[0]
        assert abs(last - alone.n_iter) <= 1
        assert np.all(together.residuals[last:, j] == together.residuals[last, j])  # frozen
    assert abs(together.n_iter - max(iters)) <= 1


def test_one_block_product_per_iteration():
    A = PROBLEMS["well-conditioned"]()
    calls = []

    def matvec(V):
        calls.append(V.shape)
        return A @ V

    res = cg(matvec, np.ones((50, 5)), tol=1e-8)
    assert len(calls) == res.n_iter
    assert calls[0] == (50, 5)


def test_zero_rhs_column_gives_zero_solution():
    A = PROBLEMS["well-conditioned"]()
    B = np.random.default_rng(7).normal(size=(50, 3))
    B[:, 1] = 0
    res = cg(A, B, tol=1e-10, x0=np.ones_like(B))
    assert res.converged
    assert np.all(res.x[:, 1] == 0)
    assert np.all(res.residuals[:, 1] == 0)
    zero = cg(A, np.zeros(50))
    assert zero.converged and zero.n_iter == 0 and np.all(zero.x == 0)


def test_float32_path():
    A = PROBLEMS["well-conditioned"]()
    B = np.random.default_rng(8).normal(size=(50, 2))
    res = cg(A.astype(np.float32), B.astype(np.float32), tol=1e-5)
    assert res.x.dtype == np.float32 and res.converged
    direct = np.linalg.solve(A, B)
    assert np.linalg.norm(res.x - direct) <= 1e-4 * np.linalg.norm(direct)


def test_integer_rhs_gives_float64():
    res = cg(np.eye(3) * 2, np.array([2, 4, 6]))
    assert res.x.dtype == np.float64
    np.testing.assert_allclose(res.x, [1, 2, 3])


def test_x0_at_solution_needs_no_iteration():
    A = PROBLEMS["well-conditioned"]()
    b = np.ones(50)
    x = np.linalg.solve(A, b)
    res = cg(A, b, x0=x, tol=1e-8)
    assert res.n_iter == 0 and res.converged


def test_callback_sees_every_iteration():
    A = PROBLEMS["clustered-spectrum"]()
    seen = []
    res = cg(A, np.ones((80, 2)), tol=1e-8, callback=lambda k, x, r: seen.append((k, x.shape, r)))
    assert [k for k, _, _ in seen] == list(range(1, res.n_iter + 1))
    assert seen[0][1] == (80, 2) and seen[-1][2].shape == (2,)
    np.testing.assert_allclose(seen[-1][2], res.residuals[-1])


def test_max_iter_stops_unconverged():
    A = PROBLEMS["ill-conditioned"]()
    res = cg(A, np.ones(60), tol=1e-12, max_iter=3)
    assert res.n_iter == 3 and not res.converged and res.residuals.shape == (4, 1)


def test_indefinite_operator_warns():
    with pytest.warns(RuntimeWarning, match="not positive definite"):
        res = cg(-np.eye(5), np.ones(5))
    assert not res.converged


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"B": np.ones((3, 2, 2))}, ValueError),
        ({"tol": 0.0}, ValueError),
        ({"max_iter": -1}, ValueError),
        ({"x0": np.ones(4)}, ValueError),
        ({"matvec": "not an operator"}, TypeError),
    ],
)
def test_bad_arguments(kwargs, error):
    args = {"matvec": np.eye(3), "B": np.ones(3)}
    args.update(kwargs)
    matvec, B = args.pop("matvec"), args.pop("B")
    with pytest.raises(error):
        cg(matvec, B, **args)
