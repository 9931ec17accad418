"""Review of the loss-agnostic core (issue 10 part 1, commit 2abab6b): defects as failing tests.

Each test states the defect it pins down; all of them fail on the core as committed.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.losses import EpsilonInsensitiveLoss, HuberHingeLoss
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
)
from semiscale.models._base import DEFAULT_KERNEL
from semiscale.solvers.exact import solve_exact
from semiscale.solvers.newton import solve_manifold
from semiscale.solvers.nystrom_quadratic import NystromSolver
from semiscale.solvers.problem import ManifoldProblem


def _reference_value(X, y, labeled, L, loss, lam_a, lam_i, kernel, centers, intercept):
    """min over (α, b) of Σ loss + λ_A αᵀK_ssα + λ_I fᵀLf by L-BFGS (small dense problems)."""
    C = X[centers]
    K_ns, K_ss = kernel(X, C), kernel(C, C)
    lab = np.flatnonzero(labeled)
    L = sp.csr_matrix(L) if L is not None else sp.csr_matrix((X.shape[0], X.shape[0]))

    def fun(theta):
        alpha, b = theta[:-1], (theta[-1] if intercept else 0.0)
        f = K_ns @ alpha + b
        Lf = L @ f
        value = loss.value(y[lab], f[lab]).sum() + lam_a * alpha @ K_ss @ alpha + lam_i * f @ Lf
        g = np.zeros_like(f)
        g[lab] = loss.derivative(y[lab], f[lab])
        g += 2 * lam_i * Lf
        return value, np.append(K_ns.T @ g + 2 * lam_a * K_ss @ alpha, g.sum() if intercept else 0)

    res = minimize(fun, np.zeros(C.shape[0] + 1), jac=True, method="L-BFGS-B",
                   options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10})  # fmt: skip
    return res.fun, fun


def _balanced_binary(n=40, seed=0):
    """Two-class data with as many labeled points of each class (a stratified labeled set)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    labeled = np.zeros(n, dtype=bool)
    labeled[:10] = True
    y = np.zeros(n)
    y[:5], y[5:10] = 1.0, -1.0
    return X, y, labeled


def _binary_laplacian(X, k=5):
    """Unnormalized Laplacian of a symmetrized 0/1 kNN graph: integer entries, L·1 == 0 exactly."""
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1)[:, :k]
    W = np.zeros_like(D)
    W[np.repeat(np.arange(X.shape[0]), k), nn.ravel()] = 1.0
    W = np.maximum(W, W.T)
    return sp.csr_matrix(np.diag(W.sum(1)) - W)


# ------------------------------------------------------------------------------------------------
# Defect 1: solvers/newton.py:171-185 + 84-89.  With fit_intercept, a Huber-hinge (or smoothed
# ε-insensitive) problem whose labeled points all start in the linear zone and whose bias
# direction is *flat* there (balanced classes: Σ y_i = 0) never gets an active point: shift_bias
# finds no strict decrease and returns 0, and the bordered step then has σ = 1ᵀ(J_a + λ_I L)1 = 0
# (L·1 = 0), so _solve_with_intercept raises "none is active (all margins satisfied ...)" — the
# opposite of the truth (every margin is violated).  A convex problem with a finite minimum
# (the reference below finds it) is refused.  With a float-weighted graph L·1 ≈ 1e-16 instead
# of 0, σ passes the `> 0` test and the step divides round-off by round-off.
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "loss", [HuberHingeLoss(0.05), EpsilonInsensitiveLoss(0.1, 0.05)], ids=lambda s: s.name
)
@pytest.mark.parametrize("graph", [False, True], ids=["rls", "graph"])
@pytest.mark.parametrize("solver", ["direct", "nystrom"])
def test_intercept_with_flat_bias_direction_is_solved(loss, graph, solver):
    X, y, labeled = _balanced_binary()
    if loss.name == "epsilon_insensitive":
        y = 2.0 * y  # |y| well outside the tube: every labeled point in the linear zone at f = 0
    L = _binary_laplacian(X) if graph else None
    lam_a, lam_i = 0.05, (0.5 if graph else 0.0)
    kernel = RBF(gamma=2.0)
    problem = ManifoldProblem(
        X=X, targets=y[:, None], labeled=labeled, laplacian=L, lambda_ambient=lam_a,
        lambda_intrinsic=lam_i, kernel=kernel, loss=loss, fit_intercept=True,
        memory_budget="1GB", random_state=0,
    )  # fmt: skip
    if solver == "direct":
        quadratic = partial(solve_exact, solver="direct")
        centers = np.arange(X.shape[0]) if graph else np.flatnonzero(labeled)
    else:
        centers = np.arange(0, X.shape[0], 2)
        quadratic = NystromSolver(centers, solver="pcg", tol=1e-12, max_iter=500)
    solution = solve_manifold(problem, quadratic)  # raises ValueError today
    best, fun = _reference_value(X, y, labeled, L, loss, lam_a, lam_i, kernel, centers, True)
    ours, _ = fun(np.append(solution.dual_coef[:, 0], solution.intercept[0]))
    assert ours <= best + 1e-7 * abs(best)


def test_huber_hinge_classifier_with_intercept_on_stratified_labels():
    """The same defect through an estimator: a primal-LapSVM-style subclass (the loss is data of
    the problem, issue 10) with fit_intercept=True fails on a stratified labeled set."""

    class HuberLapRLS(LapRLSClassifier):
        _loss = "huber_hinge"

    X, y = make_two_moons(200, noise=0.08, random_state=0)
    y_ssl = np.full_like(y, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    y_ssl[lab] = y[lab]
    est = HuberLapRLS(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8), fit_intercept=True)
    est.fit(X, y_ssl)  # ValueError: "... none is active (all margins satisfied with zero bias)"
    assert est.score(X, y_ssl) == 1.0


# ------------------------------------------------------------------------------------------------
# Defect 2: solvers/newton.py:240-242 vs 292-298.  A target column whose optimum is f = 0 at the
# start (every labeled residual inside the ε tube: zero loss, zero gradient) returns the "zero
# solution" with X_fit = X[labeled]; every other column returns the quadratic solver's span
# (all n points, or the Nyström centers), so solve_manifold raises "the quadratic solver changed
# its expansion points between columns" on an ordinary multi-output problem.
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("solver", ["direct", "nystrom"])
def test_multi_output_with_a_column_already_inside_the_tube(solver, fit_intercept):
    rng = np.random.RandomState(0)
    n = 60
    X = rng.uniform(-1, 1, size=(n, 2))
    L = KNNGraph(n_neighbors=6, method="exact").fit(X).laplacian_
    labeled = np.zeros(n, dtype=bool)
    labeled[:12] = True
    # Second output: small values, all within ε = 0.1 of 0.
    Y = np.column_stack([np.sin(3 * X[:, 0]), 0.01 * X[:, 1]]) * labeled[:, None]
    problem = ManifoldProblem(
        X=X, targets=Y, labeled=labeled, laplacian=L, lambda_ambient=0.05, lambda_intrinsic=0.5,
        kernel=RBF(gamma=2.0), loss=EpsilonInsensitiveLoss(0.1, 0.05),
        fit_intercept=fit_intercept,
    )  # fmt: skip
    if solver == "direct":
        quadratic = partial(solve_exact, solver="direct")
    else:
        quadratic = NystromSolver(np.arange(0, n, 3), solver="pcg", tol=1e-10)
    solution = solve_manifold(problem, quadratic)  # RuntimeError today
    assert solution.dual_coef.shape == (np.shape(solution.X_fit)[0], 2)
    np.testing.assert_allclose(solution.train_decision[:, 1], 0.0, atol=1e-12)
    # Each column alone gives the same answer as the two together.
    alone = solve_manifold(
        ManifoldProblem(**{**vars(problem), "targets": Y[:, :1]}), quadratic
    ).train_decision[:, 0]
    np.testing.assert_allclose(solution.train_decision[:, 0], alone, atol=1e-8)


# ------------------------------------------------------------------------------------------------
# Defect 3: models/_base.py:316 and :372.  score() indexes X with `X[keep]` (or `.iloc`), so it
# fails on inputs that fit() and predict() accept: a list of lists ("only integer scalar arrays
# can be converted to a scalar index") and a COO matrix ("'coo_matrix' object is not
# subscriptable"; check_X accepts COO).  Scikit-learn's score() takes any array-like.
# ------------------------------------------------------------------------------------------------
def _fitted_pair():
    X, y = make_two_moons(120, noise=0.08, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[::6] = y[::6]
    kw = dict(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8))
    clf = LapRLSClassifier(**kw).fit(X, y_ssl)
    y_reg = np.where(y_ssl != -1, y.astype(float), np.nan)
    reg = LapRLSRegressor(**kw).fit(X, y_reg)
    return X, y_ssl, y_reg, clf, reg


@pytest.mark.parametrize("kind", ["list", "coo"])
def test_score_accepts_what_fit_and_predict_accept(kind):
    X, y_ssl, y_reg, clf, reg = _fitted_pair()
    X_in = X.tolist() if kind == "list" else sp.coo_matrix(X)
    clf.predict(X_in), reg.predict(X_in)  # both work
    assert clf.score(X_in, y_ssl) == pytest.approx(clf.score(X, y_ssl))
    assert reg.score(X_in, y_reg) == pytest.approx(reg.score(X, y_reg))


# ------------------------------------------------------------------------------------------------
# Defect 4 (low severity): models/_base.py:94-105.  set_params' protection of the shared
# defaults looks at the value *before* the update, so a call that sets `kernel` to the shared
# default and a nested kernel parameter in one go edits DEFAULT_KERNEL itself (every later
# estimator built with the default then carries gamma=3).  It should look at
# params.get(name, getattr(self, name)).
# ------------------------------------------------------------------------------------------------
def test_set_params_with_the_shared_default_and_a_nested_update_keeps_the_default():
    est = LapRLSClassifier(kernel=RBF(gamma=1.0))
    try:
        est.set_params(kernel=DEFAULT_KERNEL, kernel__gamma=3.0)
        assert est.kernel.gamma == 3.0
        assert DEFAULT_KERNEL.gamma == "median"
        assert (
            LapRLSClassifier().kernel.gamma == "local"
        )  # its own default (the regressors: median)
    finally:
        DEFAULT_KERNEL.set_params(gamma="median")  # do not leak into other tests


# ------------------------------------------------------------------------------------------------
# Defect 5 (low severity): models/_base.py:94-105 with laprls.py:56-58.  `kernel=None` /
# `graph=None` are documented as "also RBF(gamma='median')" / "also KNNGraph()", but a nested
# update on them still raises AttributeError: 'NoneType' object has no attribute 'set_params' —
# the very failure issue 10 reports for GridSearchCV over kernel__gamma / graph__n_neighbors.
# set_params could put a fresh default_kernel()/default_graph() in place of None first.
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [LapRLSClassifier, NystromLapRLSClassifier])
def test_nested_set_params_on_documented_none_defaults(cls):
    est = cls(kernel=None, graph=None)
    est.set_params(kernel__gamma=0.5, graph__n_neighbors=3)
    assert est.kernel.gamma == 0.5 and est.graph.n_neighbors == 3
