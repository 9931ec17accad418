"""The loss-agnostic estimator core (issue 10, part 1): losses, Newton, bias, defaults, kernels."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import is_classifier
from sklearn.model_selection import GridSearchCV

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
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)
from semiscale.models._base import DEFAULT_CLASSIFIER_KERNEL, DEFAULT_GRAPH, DEFAULT_KERNEL
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


# ----------------------------------------------------------------------- Newton vs a reference
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


def _reference(X, y, labeled, L, loss, lam_a, lam_i, kernel, centers=None, intercept=False):
    """Minimise Σ loss + λ_A αᵀK_ssα + λ_I fᵀLf over (α, b) by L-BFGS (dense, small n)."""
    C = X if centers is None else X[centers]
    K_ns = kernel(X, C)
    K_ss = kernel(C, C)
    lab = np.flatnonzero(labeled)

    def fun(theta):
        alpha, b = theta[:-1], theta[-1] if intercept else 0.0
        f = K_ns @ alpha + b
        Lf = L @ f
        value = loss.value(y[lab], f[lab]).sum() + lam_a * alpha @ K_ss @ alpha + lam_i * f @ Lf
        g_f = np.zeros_like(f)
        g_f[lab] = loss.derivative(y[lab], f[lab])
        g_f += 2 * lam_i * Lf
        grad = np.append(K_ns.T @ g_f + 2 * lam_a * K_ss @ alpha, g_f.sum() if intercept else 0.0)
        return value, grad

    result = minimize(
        fun,
        np.zeros(C.shape[0] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10},
    )
    return result.fun, fun


@pytest.mark.parametrize("loss", ALL_LOSSES[1:], ids=lambda loss: loss.name)
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("solver", ["direct", "pcg", "nystrom"])
def test_newton_reaches_the_reference_minimum(loss, intercept, solver):
    X, Y, labeled, L = _problem(loss.task)
    kernel = RBF(gamma=2.0)
    lam_a, lam_i = 0.05, 0.5
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
        centers = np.arange(0, X.shape[0], 2)
        quadratic = NystromSolver(centers, solver="pcg", tol=1e-12, max_iter=500)
    else:
        quadratic = partial(
            solve_exact, solver=solver, preconditioner="sampled-hessian", tol=1e-12, max_iter=500
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither Newton nor CG may stop unconverged
        solution = solve_manifold(problem, quadratic)
    best, fun = _reference(
        X, Y[:, 0], labeled, L, loss, lam_a, lam_i, kernel, centers=centers, intercept=intercept
    )
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
        X=X, targets=Y + 3.0 * labeled[:, None], labeled=labeled, laplacian=L,
        lambda_ambient=lam_a, lambda_intrinsic=lam_i, kernel=kernel, fit_intercept=True,
    )  # fmt: skip
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
        X=X, targets=Y, labeled=labeled, laplacian=None, lambda_ambient=0.05,
        lambda_intrinsic=0.0, kernel=kernel, loss=loss,
    )  # fmt: skip
    for solver in ("direct", "cg"):
        solution = solve_manifold(problem, partial(solve_exact, solver=solver, tol=1e-12))
        lab = np.flatnonzero(labeled)
        best, fun = _reference(X, Y[:, 0], labeled, 0 * L, loss, 0.05, 0.0, kernel, centers=lab)
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


# ------------------------------------------------------------------------- scoring, defaults
def test_nystrom_solver_seeds_its_sampled_preconditioner_from_the_problem():
    """The sampled preconditioner draws rows at random: a problem's ``random_state`` must fix
    them (it once did not, and tests seeded this way drew from fresh entropy)."""
    X, Y, labeled, L = _problem("regression")

    def solve(seed):
        problem = ManifoldProblem(X=X, targets=Y, labeled=labeled, laplacian=L,
                                  lambda_ambient=0.05, lambda_intrinsic=0.5, kernel=RBF(gamma=2.0),
                                  random_state=seed)  # fmt: skip
        # three PCG iterations: the iterate still depends on the preconditioner's rows
        quadratic = NystromSolver(np.arange(0, X.shape[0], 2), solver="pcg", tol=1e-14,
                                  max_iter=3, preconditioner_options={"n_rows": 8})  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve_manifold(problem, quadratic).dual_coef

    np.testing.assert_array_equal(solve(0), solve(0))
    assert not np.allclose(solve(0), solve(1))


def _moons(n=300, n_labeled=6, seed=0):
    X, y = make_two_moons(n, noise=0.08, random_state=seed)
    rng = np.random.RandomState(seed)
    y_ssl = np.full_like(y, -1)
    lab = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), n_labeled // 2, replace=False) for c in (0, 1)]
    )
    y_ssl[lab] = y[lab]
    return X, y, y_ssl


def test_score_ignores_unlabeled_rows():
    X, y, y_ssl = _moons()
    est = LapRLSClassifier(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_ssl)
    labeled = y_ssl != -1
    assert est.score(X, y_ssl) == pytest.approx((est.predict(X[labeled]) == y[labeled]).mean())
    assert est.score(X, y_ssl) == 1.0  # the labeled points are fitted
    with pytest.raises(ValueError, match="needs labeled rows"):
        est.score(X, np.full_like(y, -1))
    y_reg = np.where(labeled, y.astype(float), np.nan)
    reg = LapRLSRegressor(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_reg)
    pred = reg.predict(X[labeled])
    r2 = 1 - ((pred - y[labeled]) ** 2).sum() / ((y[labeled] - y[labeled].mean()) ** 2).sum()
    assert reg.score(X, y_reg) == pytest.approx(r2)


@pytest.mark.parametrize("cls", [LapRLSClassifier, NystromLapRLSClassifier])
def test_gridsearchcv_over_nested_params_of_the_default_objects(cls):
    X, y, y_ssl = _moons(200, n_labeled=20)
    est = cls(ambient_reg=1e-4, intrinsic_reg=10.0)
    default_kernel = DEFAULT_CLASSIFIER_KERNEL if is_classifier(est) else DEFAULT_KERNEL
    assert est.kernel is default_kernel and est.graph is DEFAULT_GRAPH
    grid = {"graph__n_neighbors": [2, 10], "kernel__gamma": [0.01, 10.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(est, grid, cv=2).fit(X, y_ssl)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_index_ == int(np.argmax(scores))
    assert search.best_params_["kernel__gamma"] == 10.0
    assert search.best_score_ > 0.9 > scores.min()
    # The shared defaults were never modified.
    assert DEFAULT_GRAPH.n_neighbors == 8 and DEFAULT_KERNEL.gamma == "median"
    assert DEFAULT_CLASSIFIER_KERNEL.gamma == "local"


def test_classifiers_default_to_the_local_width_and_regressors_to_the_median():
    for cls in (LapRLSClassifier, NystromLapRLSClassifier):
        assert cls().kernel is DEFAULT_CLASSIFIER_KERNEL and cls().ambient_reg == 1e-6
        assert cls(kernel=None)._default_kernel is DEFAULT_CLASSIFIER_KERNEL
    for cls in (LapRLSRegressor, NystromLapRLSRegressor):
        assert cls().kernel is DEFAULT_KERNEL and cls().ambient_reg == 1e-4
    X, y, y_ssl = _moons(200, n_labeled=20)
    fitted = LapRLSClassifier(kernel=None).fit(X, y_ssl)
    assert fitted.kernel_.gamma == RBF(gamma="local").resolve(X).gamma


def test_nested_set_params_copies_the_shared_default():
    est = LapRLSRegressor()
    est.set_params(graph__n_neighbors=3, kernel__gamma=0.5)
    assert est.graph is not DEFAULT_GRAPH and est.graph.n_neighbors == 3
    assert est.kernel.gamma == 0.5
    assert DEFAULT_GRAPH.n_neighbors == 8 and DEFAULT_KERNEL.gamma == "median"
    assert LapRLSRegressor().graph.n_neighbors == 8


def test_sliced_laplacian_gets_a_clear_error():
    X, y, y_ssl = _moons(100)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    with pytest.raises(ValueError, match="PrecomputedGraph"):
        LapRLSClassifier().fit(X[:60], y_ssl[:60], laplacian=L[:60])


# ------------------------------------------------------------------------- fitted kernels
class CenteredRBF(RBF):
    """A kernel that learns from data: RBF on points shifted by the labeled points' mean."""

    def fit(self, X, y=None, *, laplacian=None, random_state=None):
        new = self.resolve(X, random_state=random_state)
        labeled = np.asarray(y) != -1
        new.shift_ = np.asarray(X)[labeled].mean(axis=0)
        new.seen_laplacian_ = laplacian
        return new

    def __call__(self, A, B=None):
        return super().__call__(A - self.shift_, None if B is None else B - self.shift_)

    def blocks(self, A, B=None, memory_budget=None, **kw):
        shift = getattr(self, "shift_", 0.0)
        return super().blocks(A - shift, None if B is None else B - shift, memory_budget, **kw)

    def diag(self, A):
        return super().diag(A)


def test_fitted_kernel_is_fitted_with_the_training_data_and_graph():
    X, y, y_ssl = _moons(150)
    est = LapRLSClassifier(kernel=CenteredRBF(gamma=10.0), graph=KNNGraph(n_neighbors=8))
    est.fit(X, y_ssl)
    assert not hasattr(est.kernel, "shift_")  # the parameter is untouched
    np.testing.assert_allclose(est.kernel_.shift_, X[y_ssl != -1].mean(axis=0))
    assert est.kernel_.seen_laplacian_ is est.graph_.laplacian_
    # A translation-invariant kernel: shifting everything changes nothing.
    ref = LapRLSClassifier(kernel=RBF(gamma=10.0), graph=KNNGraph(n_neighbors=8)).fit(X, y_ssl)
    np.testing.assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-8)
