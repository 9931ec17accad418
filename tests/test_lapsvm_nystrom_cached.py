"""NystromLapSVC's default solver: K_ns, K_ss and K_nsᵀLK_ns once per fit (issue 26, part A)."""

import numpy as np
import pytest

import semiscale.solvers.lapsvm_nystrom as cached_module
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import NystromLapSVC
from semiscale.solvers.lapsvm_nystrom import cached_solver_bytes


def _problem(n=300, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    if classes == 3:
        y = np.where(X[:, 0] > 1.0, 2, y)
    y_ssl = np.full_like(y, -1)
    for c in np.unique(y):
        y_ssl[rng.choice(np.flatnonzero(y == c), 3, replace=False)] = c
    return X, y_ssl, KNNGraph(n_neighbors=8, method="exact").fit(X).laplacian_


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("loss", ["squared_hinge", "huber_hinge"])
def test_cached_steps_match_the_dense_direct_solve(classes, loss):
    X, y_ssl, L = _problem(classes=classes)
    # ambient_reg large enough for LAPACK to factor H without the dense path's lstsq fallback
    common = dict(kernel=RBF(gamma=4.0), n_centers=80, random_state=0, loss=loss, ambient_reg=1e-3)
    cached = NystromLapSVC(**common).fit(X, y_ssl, laplacian=L)
    dense = NystromLapSVC(**common, solver="direct").fit(X, y_ssl, laplacian=L)
    assert cached.solver_info_["solver"] == "direct (cached K_ns and G)"
    assert cached.solver_info_["jitter"] == 0.0
    np.testing.assert_array_equal(cached.center_index_, dense.center_index_)
    f, g = cached.decision_function(X), dense.decision_function(X)
    np.testing.assert_allclose(f, g, atol=1e-5 * np.abs(g).max())
    np.testing.assert_allclose(cached.intercept_, dense.intercept_, atol=1e-5)
    assert cached.solver_info_["newton_iterations"] == dense.solver_info_["newton_iterations"]


def test_kernel_rows_are_computed_once_for_every_newton_step(monkeypatch):
    X, y_ssl, L = _problem(classes=3)
    calls = []
    real = cached_module.get_ops

    class Counting:
        def __getattr__(self, name):
            if name == "kernel_matrix":

                def kernel_matrix(*args, **kwargs):
                    calls.append(args[1].shape[0])
                    return real().kernel_matrix(*args, **kwargs)

                return kernel_matrix
            return getattr(real(), name)

    monkeypatch.setattr(cached_module, "get_ops", Counting)
    model = NystromLapSVC(kernel=RBF(gamma=4.0), n_centers=80, random_state=0)
    model.fit(X, y_ssl, laplacian=L)
    assert sum(model.solver_info_["newton_iterations"]) > 3  # three columns, several steps
    assert calls == [X.shape[0]]  # one n x s kernel matrix for the whole fit


def test_auto_falls_back_to_pcg_when_k_ns_does_not_fit():
    X, y_ssl, L = _problem()
    # room for the PCG path's s x s arrays but not for the cached n x s ones
    budget = cached_solver_bytes(X.shape[0], 80) * 2 - 8
    model = NystromLapSVC(
        kernel=RBF(gamma=4.0), n_centers=80, random_state=0, memory_budget=budget
    ).fit(X, y_ssl, laplacian=L)
    assert model.solver_info_["solver"] == "pcg"
    roomy = NystromLapSVC(kernel=RBF(gamma=4.0), n_centers=80, random_state=0).fit(
        X, y_ssl, laplacian=L
    )
    f = roomy.decision_function(X)
    np.testing.assert_allclose(model.decision_function(X), f, atol=1e-4 * np.abs(f).max())


def test_defaults_need_no_least_squares_fallback(recwarn):
    X, y_ssl, L = _problem()
    cached = NystromLapSVC(n_centers=80, random_state=0).fit(X, y_ssl, laplacian=L)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    pcg = NystromLapSVC(n_centers=80, random_state=0, solver="pcg").fit(X, y_ssl, laplacian=L)
    assert np.mean(cached.transduction_ == pcg.transduction_) > 0.99
