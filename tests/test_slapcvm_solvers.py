"""SLapCVM's solvers at scale (issue 26): libsvm's one-class solver for the QP on the core set
against SMO, η without a pass over every item, candidate draws in O(candidates), the CVM's
iteration cap, and the paper's preset as the estimators' default."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, Linear
from semiscale.models import SparseLapCVMClassifier, SparseLapCVMRegressor
from semiscale.solvers import cvm
from semiscale.solvers.cvm import _draw_outside, core_vector_machine
from semiscale.solvers.simplex_qp_libsvm import simplex_qp_libsvm
from semiscale.solvers.slapcvm_kernel import SLapCVMKernel, graph_edges
from semiscale.solvers.smo import simplex_qp_smo


def _objective(Q, v, alpha):
    return v @ alpha - alpha @ Q @ alpha


def _kkt_gap(Q, v, alpha):
    g = 2 * Q @ alpha - v
    return g[alpha > 0].max() - g.min()


@pytest.mark.parametrize("seed", range(6))
def test_libsvm_solves_the_simplex_qp_as_smo_does(seed):
    """Random PSD problems of 2-120 items, some rank-deficient, linear terms of both signs:
    libsvm (then the SMO polish) reaches SMO's objective and the KKT gap in double."""
    rng = np.random.default_rng(seed)
    k = [2, 7, 30, 60, 90, 120][seed]
    A = rng.standard_normal((k, max(1, k // 3)))
    Q = A @ A.T + (0.0 if seed % 2 else 0.01) * np.eye(k)
    v = 0.3 * rng.standard_normal(k) + np.diag(Q)
    smo = simplex_qp_smo(Q, v, tol=1e-10, max_iter=10**6)
    lib = simplex_qp_libsvm(Q, v, tol=1e-10)
    assert lib.alpha.min() >= 0 and abs(lib.alpha.sum() - 1) < 1e-12
    assert _kkt_gap(Q, v, lib.alpha) <= 1e-10
    assert _objective(Q, v, lib.alpha) == pytest.approx(_objective(Q, v, smo.alpha), abs=1e-10)


def test_libsvm_on_a_real_slapcvm_core_set():
    """The QP on the core set of an SLapCVM fit (K̃ with its labeled and edge items): the same
    optimum as SMO's, and a single item is the trivial simplex."""
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    labeled = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    graph = KNNGraph(n_neighbors=6, bandwidth="mean-square", method="exact").fit(X)
    edges = graph_edges(graph.adjacency_)
    m, C = 2, 100.0
    K = SLapCVMKernel(
        RBF(gamma=4.0), X, labeled, np.array([-1.0, 1.0]), edges, 1 / C, 1 / (100 * C)
    )
    result = core_vector_machine(K, 2 / C, initial=np.arange(m), tol=1e-6, random_state=0)
    core = result.core_set
    assert core.size > 10
    Q = K.block(core, core)
    v = np.where(core < m, 2 / C, 0.0)
    smo = simplex_qp_smo(Q, v, tol=1e-11, max_iter=10**6)
    lib = simplex_qp_libsvm(Q, v, tol=1e-11)
    assert _objective(Q, v, lib.alpha) == pytest.approx(_objective(Q, v, smo.alpha), abs=1e-11)
    assert _kkt_gap(Q, v, lib.alpha) <= 1e-11
    one = simplex_qp_libsvm(Q[:1, :1], v[:1])
    np.testing.assert_array_equal(one.alpha, [1.0])


@pytest.mark.parametrize("inner", ["smo", "libsvm"])
def test_cvm_gives_the_same_ball_with_either_inner_solver(inner):
    X, y = make_two_moons(300, noise=0.1, random_state=1)
    labeled = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    edges = graph_edges(KNNGraph(n_neighbors=6, method="exact").fit(X).adjacency_)
    K = SLapCVMKernel(RBF(gamma=4.0), X, labeled, np.array([-1.0, 1.0]), edges, 0.01, 1e-4)
    reference = core_vector_machine(K, 0.02, initial=[0, 1], tol=1e-5, random_state=0, inner="smo")
    result = core_vector_machine(K, 0.02, initial=[0, 1], tol=1e-5, random_state=0, inner=inner)
    np.testing.assert_array_equal(result.core_set, reference.core_set)
    # both stop at a KKT gap of 1e-8 (smo_tol): equal optima, weights equal to that precision
    np.testing.assert_allclose(result.alpha, reference.alpha, atol=1e-5)
    assert result.radius2 == pytest.approx(reference.radius2, rel=1e-8)
    with pytest.raises(ValueError, match="inner must be one of"):
        core_vector_machine(K, 0.02, initial=[0, 1], inner="cvxopt")


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize(
    "kernel,nonnegative", [(RBF(gamma=4.0), True), (RBF(gamma=0.3), False), (Linear(), False)]
)
@pytest.mark.parametrize("C", [1.0, 100.0, 1e5])
def test_eta_is_the_exact_maximum_with_few_kernel_values(normalized, kernel, nonnegative, C):
    """η = max_a (K̃_aa − v_a) against the full diagonal, whichever items the bound prunes;
    with the paper's setting (RBF, unnormalized, 2/C on the labels) only a few edges are
    evaluated."""
    X, y = make_two_moons(400, noise=0.1, random_state=2)
    W = KNNGraph(n_neighbors=6, bandwidth="mean-square", method="exact").fit(X).adjacency_
    edges = graph_edges(W, normalized=normalized)
    labeled = np.array([3, 17, 40])
    K = SLapCVMKernel(
        kernel,
        X,
        labeled,
        np.array([1.0, -1.0, 1.0]),
        edges,
        3 / (3 * C),
        edges[0].size / (3 * C * 100 * edges[0].size / 3),
        nonnegative=nonnegative,
    )
    v = np.where(np.arange(K.n_items) < 3, 2.0 / C, 0.0)
    assert K.eta(2.0 / C) == pytest.approx(np.max(K.diag() - v), rel=1e-13)
    asked = []
    diag = K.diag
    K.diag = lambda items=None: (
        asked.append(K.n_items if items is None else len(items)) or diag(items)
    )
    K.eta(2.0 / C)
    if isinstance(kernel, RBF) and nonnegative and not normalized and C >= 100:
        assert sum(asked) < 0.05 * K.n_items


class _Counting:
    """A K̃ that counts the items whose entries the CVM asks for."""

    def __init__(self, K):
        self.K, self.items = K, 0
        self.n_items, self.m = K.n_items, K.m

    def block(self, rows, cols):
        self.items += len(rows) + len(cols)
        return self.K.block(rows, cols)

    def diag(self, items=None):
        self.items += self.n_items if items is None else len(items)
        return self.K.diag(items)

    def eta(self, linear):
        return self.K.eta(linear)


def test_cvm_work_per_iteration_does_not_grow_with_the_items():
    """Each iteration asks for O(|S| + candidates) entries, never for all m + 2|E| items: the
    entries asked for over a whole run stay below the number of items on 20,000 points."""
    X, y = make_two_moons(20000, noise=0.1, random_state=0)
    labeled = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    edges = graph_edges(KNNGraph(n_neighbors=6, bandwidth="mean-square").fit(X).adjacency_)
    C = 100.0
    K = _Counting(
        SLapCVMKernel(
            RBF(gamma=4.0),
            X,
            labeled,
            np.array([-1.0, 1.0]),
            edges,
            1 / C,
            1 / (100 * C),
            nonnegative=True,
        )
    )
    result = core_vector_machine(K, 2 / C, initial=[0, 1], random_state=0)
    assert result.converged
    per_iteration = result.n_iter * (2 * result.core_set.size + 2 * 59 + 2)
    assert K.items <= per_iteration < 0.05 * K.n_items


def test_candidate_draws_are_distinct_uniform_and_outside_the_core_set():
    rng = np.random.RandomState(0)
    n = 50
    in_core = np.zeros(n, dtype=bool)
    in_core[[0, 7, 8, 30]] = True
    counts = np.zeros(n)
    for _ in range(4000):
        draw = _draw_outside(rng, n, in_core, 4, 10)
        assert draw.size == 10 and np.unique(draw).size == 10 and not in_core[draw].any()
        counts[draw] += 1
    expected = 4000 * 10 / 46
    assert np.all(counts[in_core] == 0)
    assert np.abs(counts[~in_core] - expected).max() < 5 * np.sqrt(expected)
    in_core[:40] = True  # S holds most items: the outside ones are listed
    draw = _draw_outside(rng, n, in_core, 40, 10)
    np.testing.assert_array_equal(np.sort(draw), np.arange(40, 50))


def test_max_iter_stops_the_cvm_with_a_warning():
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    params = dict(kernel=RBF(gamma=4.0), mu=50.0, tol=1e-6, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=3 iterations"):
        model = SparseLapCVMClassifier(max_iter=3, **params).fit(X, y_ssl)
    assert model.n_iter_ == 3 and not model.converged_
    assert model.core_set_size_ == [4]  # two labeled items, two added, the third check fails


def test_inner_cap_is_reported(monkeypatch):
    """An inner QP stopped by its cap leaves a KKT gap above smo_tol: a ConvergenceWarning."""
    monkeypatch.setattr(cvm, "_SMO_UPDATES_PER_ITEM", 0)
    monkeypatch.setattr(cvm, "_SMO_UPDATES_FLOOR", 1)
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    labeled = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    edges = graph_edges(KNNGraph(n_neighbors=6, method="exact").fit(X).adjacency_)
    K = SLapCVMKernel(RBF(gamma=4.0), X, labeled, np.array([-1.0, 1.0]), edges, 0.5, 1e-3)
    with pytest.warns(ConvergenceWarning, match="QP on the core set"):
        core_vector_machine(K, 0.02, initial=[0, 1], tol=1e-6, inner="smo", random_state=0)


@pytest.mark.parametrize("Model", [SparseLapCVMClassifier, SparseLapCVMRegressor])
def test_theta_auto_is_the_papers_preset(Model):
    """theta="auto" is θ = 100·|E|/m, the paper 001 benchmark's setting."""
    X, y = make_two_moons(400, noise=0.1, random_state=3)
    labeled = np.unique([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0], 200, 201])
    if Model is SparseLapCVMClassifier:
        y_ssl = np.full_like(y, -1)
        y_ssl[labeled] = y[labeled]
    else:
        y_ssl = np.full(y.size, np.nan)
        y_ssl[labeled] = y[labeled]
    auto = Model(kernel=RBF(gamma=4.0), random_state=0).fit(X, y_ssl)
    assert auto.theta_ == pytest.approx(100 * auto.n_edges_ / labeled.size)
    explicit = Model(kernel=RBF(gamma=4.0), theta=auto.theta_, random_state=0).fit(X, y_ssl)
    np.testing.assert_allclose(auto.predict(X), explicit.predict(X))


def test_the_default_fit_converges_with_a_small_core_set():
    """Issue 26: at the old default θ = 1 the edges' ridge |E|μ/(Cθ) is large, the core set
    grows towards every item and a default fit on 2,000 points did not finish in minutes; the
    default preset converges with a core set of a few items."""
    X, y = make_two_moons(2000, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = SparseLapCVMClassifier(random_state=0).fit(X, y_ssl)
    assert model.converged_ and model.core_set_size_[0] < 50


def test_expansion_of_given_items_equals_the_dense_one():
    X, y = make_two_moons(200, noise=0.1, random_state=4)
    W = KNNGraph(n_neighbors=5, method="exact").fit(X).adjacency_
    for normalized in (False, True):
        K = SLapCVMKernel(
            RBF(gamma=1.0),
            X,
            np.array([0, 9]),
            np.array([1.0, -1.0]),
            graph_edges(W, normalized=normalized),
            0.1,
            0.1,
        )
        rng = np.random.default_rng(0)
        items = np.r_[1, rng.choice(np.arange(2, K.n_items), 40, replace=False)]
        values = rng.standard_normal(items.size)
        dense = np.zeros(K.n_items)
        dense[items] = values
        points, weights, bias = K.expansion(values, items=items)
        ref_points, ref_weights, ref_bias = K.expansion(dense)
        np.testing.assert_array_equal(points, ref_points)
        np.testing.assert_allclose(weights, ref_weights, rtol=1e-12, atol=1e-14)
        assert bias == pytest.approx(ref_bias, abs=1e-14)
