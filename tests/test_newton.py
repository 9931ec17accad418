"""Newton's method in the primal over every loss (:mod:`semiscale.solvers.newton`).

The losses' derivatives; Newton's solution against the minimum of the dense objective found by
L-BFGS (:func:`oracles.manifold_objective_minimum`), with and without the bias, on the exact and
Nyström quadratic solvers; the bias's bordered system; multi-output problems.
"""

from __future__ import annotations

import warnings
from functools import cache, partial

import numpy as np
import pytest
import scipy.sparse as sp

from oracles import manifold_objective_minimum
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.losses import (
    LOSSES,
    EpsilonInsensitiveLoss,
    HuberHingeLoss,
    SquaredHingeLoss,
    SquaredLoss,
    get_loss,
)
from semiscale.models import LapRLSClassifier, LapRLSRegressor, NystromLapRLSRegressor
from semiscale.solvers.exact import solve_exact
from semiscale.solvers.newton import solve_manifold
from semiscale.solvers.nystrom_quadratic import NystromSolver
from semiscale.solvers.problem import ManifoldProblem

ALL_LOSSES = [
    SquaredLoss(),
    SquaredHingeLoss(),
    HuberHingeLoss(0.05),
    EpsilonInsensitiveLoss(0.1, 0.05),
]


# ----------------------------------------------------------------------------------- losses
@pytest.mark.parametrize("loss", ALL_LOSSES, ids=lambda loss: loss.name)
def test_loss_derivatives_match_finite_differences(loss):
    rng = np.random.RandomState(0)
    y = np.sign(rng.randn(400)) if loss.task == "classification" else rng.randn(400)
    f = 3 * rng.randn(400)
    eps = 1e-6
    numeric = (loss.value(y, f + eps) - loss.value(y, f - eps)) / (2 * eps)
    np.testing.assert_allclose(loss.derivative(y, f), numeric, atol=1e-5)
    numeric2 = (loss.derivative(y, f + eps) - loss.derivative(y, f - eps)) / (2 * eps)
    # Away from the zone boundaries the generalized second derivative is the true one.
    inside = np.abs(numeric2 - loss.second_derivative(y, f)) < 1e-3
    assert inside.mean() > 0.95
    assert set(np.unique(loss.second_derivative(y, f))) <= {0.0, loss.curvature}


def test_get_loss_names_and_errors():
    for name, cls in LOSSES.items():
        assert isinstance(get_loss(name), cls)
    with pytest.raises(ValueError, match="loss='hinge' is not one of"):
        get_loss("hinge")
    with pytest.raises(ValueError, match="h must be a positive"):
        HuberHingeLoss(h=0.0)


# ------------------------------------------------------------ Newton against the dense minimum
def _problem(task, n=70, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    graph = KNNGraph(n_neighbors=6, method="exact").fit(X)
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 20, replace=False)] = True
    if task == "classification":
        y = np.where(X[:, 0] + 0.3 * np.sin(4 * X[:, 1]) > 0, 1.0, -1.0)
        y[rng.choice(n, 3, replace=False)] *= -1  # a few margin violators
    else:
        y = np.sin(3 * X[:, 0]) + 0.1 * rng.randn(n)
    return X, np.where(labeled, y, 0.0)[:, None], labeled, graph.laplacian_


#: The reference test's objective: kernel width, λ_A, λ_I, and the Nyström centers' stride.
REFERENCE_GAMMA, REFERENCE_LAM_A, REFERENCE_LAM_I, REFERENCE_STRIDE = 2.0, 0.05, 0.5, 2


@cache
def _reference_minimum(loss_index, intercept, nystrom):
    """L-BFGS's minimum for the reference test, once per objective (direct and pcg share it)."""
    loss = ALL_LOSSES[loss_index]
    X, Y, labeled, L = _problem(loss.task)
    centers = np.arange(0, X.shape[0], REFERENCE_STRIDE) if nystrom else None
    return manifold_objective_minimum(
        X,
        Y[:, 0],
        labeled,
        L,
        loss,
        REFERENCE_LAM_A,
        REFERENCE_LAM_I,
        RBF(gamma=REFERENCE_GAMMA),
        centers=centers,
        intercept=intercept,
    )


@pytest.mark.parametrize("loss", ALL_LOSSES[1:], ids=lambda loss: loss.name)
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("solver", ["direct", "pcg", "nystrom"])
def test_newton_reaches_the_reference_minimum(loss, intercept, solver):
    X, Y, labeled, L = _problem(loss.task)
    kernel = RBF(gamma=REFERENCE_GAMMA)
    lam_a, lam_i = REFERENCE_LAM_A, REFERENCE_LAM_I
    problem = ManifoldProblem(
        X=X,
        targets=Y,
        labeled=labeled,
        laplacian=L,
        lambda_ambient=lam_a,
        lambda_intrinsic=lam_i,
        kernel=kernel,
        loss=loss,
        fit_intercept=intercept,
        memory_budget="1GB",
        random_state=0,
    )
    centers = None
    if solver == "nystrom":
        centers = np.arange(0, X.shape[0], REFERENCE_STRIDE)
        quadratic = NystromSolver(centers, solver="pcg", tol=1e-12, max_iter=500)
    else:
        quadratic = partial(
            solve_exact, solver=solver, preconditioner="sampled-hessian", tol=1e-12, max_iter=500
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither Newton nor CG may stop unconverged
        solution = solve_manifold(problem, quadratic)
    best, fun = _reference_minimum(ALL_LOSSES.index(loss), intercept, solver == "nystrom")
    alpha = solution.dual_coef[:, 0]
    b = solution.intercept[0] if intercept else 0.0
    ours, _ = fun(np.append(alpha, b))
    assert ours <= best + 1e-7 * abs(best)
    # train_decision is f on every training point, bias included.
    C = X if centers is None else X[centers]
    np.testing.assert_allclose(solution.train_decision[:, 0], kernel(X, C) @ alpha + b, atol=1e-8)
    assert solution.info["newton_iterations"][0] < 30


@pytest.mark.parametrize("solver", ["direct", "cg"])
def test_squared_loss_with_intercept_matches_the_bordered_system(solver):
    X, Y, labeled, L = _problem("regression")
    kernel = RBF(gamma=2.0)
    lam_a, lam_i = 0.05, 0.5
    problem = ManifoldProblem(
        X=X,
        targets=Y + 3.0 * labeled[:, None],
        labeled=labeled,
        laplacian=L,
        lambda_ambient=lam_a,
        lambda_intrinsic=lam_i,
        kernel=kernel,
        fit_intercept=True,
    )
    solution = solve_manifold(
        problem, partial(solve_exact, solver=solver, tol=1e-11, max_iter=20000)
    )
    # Dense bordered normal equations in the symmetric (α, b) form.
    K = kernel(X, X)
    J = np.diag(labeled.astype(float))
    one = np.ones(X.shape[0])
    M = J + lam_i * L.toarray()
    H = K @ M @ K + lam_a * K
    u = K @ M @ one
    A = np.block([[H, u[:, None]], [u[None, :], np.array([[one @ M @ one]])]])
    t = problem.targets[:, 0]
    rhs = np.append(K @ (J @ t), one @ (J @ t))
    theta = np.linalg.lstsq(A, rhs, rcond=None)[0]
    f_ref = K @ theta[:-1] + theta[-1]
    np.testing.assert_allclose(solution.train_decision[:, 0], f_ref, atol=1e-6)
    np.testing.assert_allclose(solution.intercept[0], theta[-1], atol=1e-6)


def test_rls_newton_without_graph_matches_reference():
    X, Y, labeled, L = _problem("classification")
    kernel = RBF(gamma=2.0)
    loss = SquaredHingeLoss()
    problem = ManifoldProblem(
        X=X,
        targets=Y,
        labeled=labeled,
        laplacian=None,
        lambda_ambient=0.05,
        lambda_intrinsic=0.0,
        kernel=kernel,
        loss=loss,
    )
    for solver in ("direct", "cg"):
        solution = solve_manifold(problem, partial(solve_exact, solver=solver, tol=1e-12))
        lab = np.flatnonzero(labeled)
        best, fun = manifold_objective_minimum(
            X, Y[:, 0], labeled, 0 * L, loss, 0.05, 0.0, kernel, centers=lab
        )
        assert fun(np.append(solution.dual_coef[:, 0], 0.0))[0] <= best + 1e-7 * abs(best)


def test_intercept_recovers_a_shifted_target():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(120, 2))
    y = np.full(120, np.nan)
    y[:30] = 100.0 + 0.01 * X[:30, 0]
    kw = dict(kernel=RBF(gamma=1.0), graph=KNNGraph(n_neighbors=6), ambient_reg=1e-2)
    with_bias = LapRLSRegressor(**kw, fit_intercept=True).fit(X, y)
    without = LapRLSRegressor(**kw).fit(X, y)
    X_far = X + 10.0  # far from the data every kernel term vanishes: only the bias remains
    assert abs(with_bias.predict(X_far).mean() - 100.0) < 1.0
    assert abs(without.predict(X_far).mean()) < 1e-6
    assert with_bias.intercept_.shape == (1,) and without.intercept_.shape == (1,)
    nys = NystromLapRLSRegressor(**kw, n_centers=40, fit_intercept=True, random_state=0).fit(X, y)
    assert abs(nys.predict(X_far).mean() - 100.0) < 1.0


def test_nystrom_solver_seeds_its_sampled_preconditioner_from_the_problem():
    """The sampled preconditioner draws rows at random: a problem's ``random_state`` must fix
    them (it once did not, and tests seeded this way drew from fresh entropy)."""
    X, Y, labeled, L = _problem("regression")

    def solve(seed):
        problem = ManifoldProblem(
            X=X,
            targets=Y,
            labeled=labeled,
            laplacian=L,
            lambda_ambient=0.05,
            lambda_intrinsic=0.5,
            kernel=RBF(gamma=2.0),
            random_state=seed,
        )
        # three PCG iterations: the iterate still depends on the preconditioner's rows
        quadratic = NystromSolver(
            np.arange(0, X.shape[0], 2),
            solver="pcg",
            tol=1e-14,
            max_iter=3,
            preconditioner_options={"n_rows": 8},
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve_manifold(problem, quadratic).dual_coef

    np.testing.assert_array_equal(solve(0), solve(0))
    assert not np.allclose(solve(0), solve(1))


# --------------------------------------------------------------------- a flat bias direction
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


# With fit_intercept, a Huber-hinge (or smoothed ε-insensitive) problem whose labeled points all
# start in the linear zone and whose bias direction is flat there (balanced classes: Σ y_i = 0)
# has no active point at the start, and the bordered step's σ = 1ᵀ(J_a + λ_I L)1 is 0 (L·1 = 0)
# — or round-off over round-off on a float-weighted graph.  The problem is convex with a finite
# minimum: Newton must find it, not refuse it.
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
        X=X,
        targets=y[:, None],
        labeled=labeled,
        laplacian=L,
        lambda_ambient=lam_a,
        lambda_intrinsic=lam_i,
        kernel=kernel,
        loss=loss,
        fit_intercept=True,
        memory_budget="1GB",
        random_state=0,
    )
    if solver == "direct":
        quadratic = partial(solve_exact, solver="direct")
        centers = np.arange(X.shape[0]) if graph else np.flatnonzero(labeled)
    else:
        centers = np.arange(0, X.shape[0], 2)
        quadratic = NystromSolver(centers, solver="pcg", tol=1e-12, max_iter=500)
    solution = solve_manifold(problem, quadratic)
    best, fun = manifold_objective_minimum(
        X, y, labeled, L, loss, lam_a, lam_i, kernel, centers=centers, intercept=True
    )
    ours, _ = fun(np.append(solution.dual_coef[:, 0], solution.intercept[0]))
    assert ours <= best + 1e-7 * abs(best)


def test_huber_hinge_classifier_with_intercept_on_stratified_labels():
    """The flat bias direction through an estimator: a primal-LapSVM-style subclass (the loss
    is data of the problem) with fit_intercept=True on a stratified labeled set."""

    class HuberLapRLS(LapRLSClassifier):
        _loss = "huber_hinge"

    X, y = make_two_moons(200, noise=0.08, random_state=0)
    y_ssl = np.full_like(y, -1)
    lab = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    y_ssl[lab] = y[lab]
    est = HuberLapRLS(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8), fit_intercept=True)
    est.fit(X, y_ssl)
    assert est.score(X, y_ssl) == 1.0


# ----------------------------------------------------------- a column already at its optimum
# A target column whose optimum is f = 0 from the start (every labeled residual inside the ε
# tube) must give a solution over the same expansion points as the other columns.
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
        X=X,
        targets=Y,
        labeled=labeled,
        laplacian=L,
        lambda_ambient=0.05,
        lambda_intrinsic=0.5,
        kernel=RBF(gamma=2.0),
        loss=EpsilonInsensitiveLoss(0.1, 0.05),
        fit_intercept=fit_intercept,
    )
    if solver == "direct":
        quadratic = partial(solve_exact, solver="direct")
    else:
        quadratic = NystromSolver(np.arange(0, n, 3), solver="pcg", tol=1e-10)
    solution = solve_manifold(problem, quadratic)
    assert solution.dual_coef.shape == (np.shape(solution.X_fit)[0], 2)
    np.testing.assert_allclose(solution.train_decision[:, 1], 0.0, atol=1e-12)
    # Each column alone gives the same answer as the two together.
    alone = solve_manifold(
        ManifoldProblem(**{**vars(problem), "targets": Y[:, :1]}), quadratic
    ).train_decision[:, 0]
    np.testing.assert_allclose(solution.train_decision[:, 0], alone, atol=1e-8)
