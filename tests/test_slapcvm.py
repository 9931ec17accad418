"""SLapCVM estimators (paper 001, issue 13): SparseLapCVMClassifier and SparseLapCVMRegressor
against a generic minimisation of their primal (5)-(7), and their errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from oracles import slapcvm_primal_minimiser
from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import SparseLapCVMClassifier, SparseLapCVMRegressor
from semiscale.models.slapcvm import SLAPCVM_GRAPH
from semiscale.solvers.cvm import core_set_bytes, core_vector_machine, largest_core_set
from semiscale.solvers.slapcvm_kernel import SLapCVMKernel, graph_edges

# the blobs and the small moons fall apart into one component per class, as wanted here
pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


def _small(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 2))
    graph = KNNGraph(n_neighbors=4, method="exact", bandwidth="mean-square")
    return X, graph


@pytest.mark.parametrize("regression", [False, True])
def test_estimators_solve_their_primal(regression):
    """With a tight ball (tol = 1e-9) and every item a candidate, the CVM's f equals the
    primal minimiser on 30 points."""
    X, graph = _small()
    labeled = np.array([0, 4, 11, 19, 25])
    kernel = RBF(gamma=0.5)
    C, mu, theta = 10.0, 0.3, 50.0
    if regression:
        targets = np.sin(X[labeled, 0]) + 0.1 * X[labeled, 1]
        y = np.full(X.shape[0], np.nan)
        y[labeled] = targets
        est = SparseLapCVMRegressor(
            kernel=kernel,
            graph=graph,
            C=C,
            mu=mu,
            theta=theta,
            tol=1e-9,
            n_candidates=10**6,
            random_state=0,
        )
    else:
        targets = np.array([1.0, -1.0, 1.0, -1.0, -1.0])
        y = np.full(X.shape[0], -1)
        y[labeled] = (targets > 0).astype(int)
        est = SparseLapCVMClassifier(
            kernel=kernel,
            graph=graph,
            C=C,
            mu=mu,
            theta=theta,
            tol=1e-9,
            n_candidates=10**6,
            random_state=0,
        )
    est.fit(X, y)
    f = est.predict(X) if regression else est.decision_function(X)
    edges = graph_edges(est.graph_.adjacency_)
    f_primal = slapcvm_primal_minimiser(
        kernel(X, X), labeled, targets, edges, C, mu, theta, regression
    )
    np.testing.assert_allclose(f, f_primal, atol=2e-3 * np.abs(f_primal).max())
    assert est.converged_ and set(est.support_) <= set(range(X.shape[0]))
    np.testing.assert_allclose(f, est.transduction_ if regression else f)


def test_regressor_without_edges_is_two_norm_svr_with_a_penalised_bias():
    """Paper 001 eq. (12) plus b²: the regressor's labeled items alone (no edge constraint)
    solve the two-norm ε-SVR whose tube μ sets (the CVM on the K̃ of the labeled items only)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, (12, 1))
    targets = np.sin(2 * X[:, 0])
    kernel = RBF(gamma=1.0)
    labeled = np.arange(12)
    no_edges = (np.zeros(0, int), np.zeros(0, int), np.zeros(0), np.ones(12))
    C, mu = 20.0, 0.05
    rows = np.r_[labeled, labeled]
    signs = np.r_[np.ones(12), -np.ones(12)]
    K_t = SLapCVMKernel(kernel, X, rows, signs, no_edges, mu * 12 / C, 1.0)
    result = core_vector_machine(
        K_t, np.r_[targets, -targets] * 2 / C, initial=np.arange(24), tol=1e-10
    )
    coef = np.zeros(K_t.n_items)
    coef[result.core_set] = C * result.alpha
    points, weights, bias = K_t.expansion(coef)
    f = kernel(X, X[points]) @ weights + bias
    f_primal = slapcvm_primal_minimiser(
        kernel(X, X), labeled, targets, no_edges[:3] + (None,), C, mu, 1.0, regression=True
    )
    np.testing.assert_allclose(f, f_primal, atol=1e-4)


def test_classifier_multiclass_one_vs_rest_and_sparse_predictor():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    X = np.vstack([c + 0.5 * rng.standard_normal((40, 2)) for c in centers])
    y_true = np.repeat([0, 1, 2], 40)
    y = np.full(120, -1)
    y[[0, 1, 40, 41, 80, 81]] = y_true[[0, 1, 40, 41, 80, 81]]
    est = SparseLapCVMClassifier(C=100.0, theta=1e3, random_state=0).fit(X, y)
    assert est.dual_coef_.shape == (est.n_support_, 3) and est.intercept_.shape == (3,)
    assert len(est.core_set_size_) == 3 and est.n_support_ < X.shape[0]
    decision = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[decision.argmax(axis=1)])
    np.testing.assert_array_equal(est.transduction_, est.predict(X))
    assert np.mean(est.predict(X) == y_true) > 0.95
    # the predictor uses only the support points
    from semiscale.kernels import RBF as _RBF

    assert isinstance(est.kernel_, _RBF) and not isinstance(est.kernel_.gamma, str)
    np.testing.assert_allclose(
        decision, est.kernel_(X, X[est.support_]) @ est.dual_coef_ + est.intercept_
    )


def test_a_precomputed_laplacian_gives_the_graphs_fit():
    X, y = make_two_moons(200, noise=0.1, random_state=1)
    y_ssl = np.full_like(y, -1)
    y_ssl[[0, 1, 2, 3]] = y[[0, 1, 2, 3]]
    graph = KNNGraph(n_neighbors=6, bandwidth="mean-square", method="exact")
    params = dict(kernel=RBF(gamma=4.0), C=10.0, theta=100.0, random_state=0)
    a = SparseLapCVMClassifier(graph=graph, **params).fit(X, y_ssl)
    L = KNNGraph(n_neighbors=6, bandwidth="mean-square", method="exact").fit(X).laplacian_
    b = SparseLapCVMClassifier(**params).fit(X, y_ssl, laplacian=L)
    assert b.graph_ is None and a.n_edges_ == b.n_edges_
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-10)


def test_errors_name_the_cause():
    X, graph = _small()
    y = np.full(30, -1)
    y[[0, 1]] = 0
    with pytest.raises(ValueError, match="class"):
        SparseLapCVMClassifier(graph=graph).fit(X, y)
    y[1] = 1
    with pytest.raises(ValueError, match="max_core_set"):
        SparseLapCVMClassifier(graph=graph, max_core_set=1).fit(X, y)
    with pytest.raises(ValueError, match="no edges"):
        SparseLapCVMClassifier().fit(X, y, laplacian=sp.csr_matrix((30, 30)))
    y_reg = np.full(30, np.nan)
    y_reg[[0, 1]] = [0.5, 1.5]
    with pytest.raises(ValueError, match="2 labeled points"):
        SparseLapCVMRegressor(graph=graph, max_core_set=3).fit(X, y_reg)
    with pytest.raises(ValueError, match="C"):
        SparseLapCVMClassifier(C=0.0).fit(X, y)


def _growing_core_set():
    """Two moons, one label per class, a setting whose core set grows past the labeled items
    (``test_max_iter_stops_the_cvm_with_a_warning``); its graph has a budget of its own."""
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    graph = clone(SLAPCVM_GRAPH).set_params(memory_budget="64MiB")
    params = dict(kernel=RBF(gamma=4.0), graph=graph, mu=50.0, tol=1e-6, random_state=0)
    return X, y_ssl, params


def test_memory_budget_bounds_the_core_set():
    X, y_ssl, params = _growing_core_set()
    params["max_iter"] = 100
    with pytest.warns(ConvergenceWarning, match="max_iter=100"):
        free = SparseLapCVMClassifier(**params).fit(X, y_ssl)
    assert free.core_set_size_[0] > 70
    # room for a core set of 70 items (started from 2) and predict's kernel blocks
    budget = core_set_bytes(70, 2)
    assert largest_core_set(budget, 2, 5000) == 70
    with pytest.warns(ConvergenceWarning, match="memory_budget holds \\(70 items"):
        bounded = SparseLapCVMClassifier(memory_budget=budget, **params).fit(X, y_ssl)
    assert bounded.core_set_size_ == [70] and not bounded.converged_
    # too small for the labeled items themselves: refused before the graph is built
    with pytest.raises(MemoryBudgetError, match="initial core set of 2 labeled items"):
        SparseLapCVMClassifier(memory_budget=core_set_bytes(2, 2) - 1, **params).fit(X, y_ssl)
    assert core_set_bytes(64, 2) == 8 * (64**2 + 64**2)  # the first buffer holds 64 rows
    assert core_set_bytes(65, 2) == 8 * (128**2 + 64**2 + 65**2)  # doubled, with its old copy


@pytest.mark.parametrize("Model", [SparseLapCVMClassifier, SparseLapCVMRegressor])
def test_n_jobs_threads_the_graph_and_gives_the_same_fit(Model):
    X, y_ssl, _ = _growing_core_set()
    params = dict(random_state=0)  # the defaults: a small core set
    y = y_ssl if Model is SparseLapCVMClassifier else np.where(y_ssl == -1, np.nan, y_ssl * 1.0)
    one = Model(n_jobs=1, **params).fit(X, y)
    two = Model(n_jobs=2, **params).fit(X, y)
    assert one.graph_.n_jobs == 1 and two.graph_.n_jobs == 2
    X_new = X[:20] + 0.05
    method = "decision_function" if Model is SparseLapCVMClassifier else "predict"
    np.testing.assert_allclose(getattr(one, method)(X_new), getattr(two, method)(X_new))
    np.testing.assert_array_equal(one.support_, two.support_)
