"""The AMG preconditioner of graph-Laplacian solves and the graph-learning ``solver`` option.

Dense references: ``M⁻¹`` formed column by column must be symmetric positive definite (the
condition for preconditioned CG); Laplace and Poisson learning with ``solver="amg"`` must equal
the dense solves of ``tests/oracles.py``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from oracles import dense_harmonic, dense_poisson
from reference_problems import blobs_graph_and_labels, hide_labels
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.models import HarmonicClassifier, PoissonClassifier
from semiscale.models.graph_learning import AMG_MIN_SIZE
from semiscale.solvers.amg import CHEBYSHEV_DEGREE, AMGPreconditioner
from semiscale.solvers.cg import cg


def _dense_inverse(M, n):
    return M.apply(np.eye(n))


def test_the_preconditioner_is_symmetric_positive_definite_on_a_sub_laplacian():
    _, _, y_ssl, L = blobs_graph_and_labels(n_per_class=120, n_classes=3)
    free = y_ssl < 0
    A = sp.csr_matrix(L[np.ix_(free, free)])
    Minv = _dense_inverse(AMGPreconditioner(A), A.shape[0])
    np.testing.assert_allclose(Minv, Minv.T, atol=1e-10 * np.abs(Minv).max())
    assert np.linalg.eigvalsh((Minv + Minv.T) / 2).min() > 0


def test_the_preconditioner_is_positive_on_the_range_of_a_singular_laplacian():
    _, _, _, L = blobs_graph_and_labels(n_per_class=100, n_classes=2)
    Minv = _dense_inverse(AMGPreconditioner(sp.csr_matrix(L)), L.shape[0])
    np.testing.assert_allclose(Minv, Minv.T, atol=1e-10 * np.abs(Minv).max())
    # on zero-sum vectors (the range of L, where Poisson learning's sources live)
    n = L.shape[0]
    Q = np.eye(n) - 1.0 / n
    assert np.linalg.eigvalsh(Q @ ((Minv + Minv.T) / 2) @ Q)[1:].min() > 0


def test_a_vector_and_a_block_give_the_same_columns():
    _, _, _, L = blobs_graph_and_labels(n_per_class=50, n_classes=2)
    M = AMGPreconditioner(sp.csr_matrix(L + 0.01 * np.eye(L.shape[0])))
    V = np.random.default_rng(0).standard_normal((L.shape[0], 3))
    np.testing.assert_allclose(M.apply(V)[:, 1], M.apply(V[:, 1]))
    np.testing.assert_allclose(M.aslinearoperator() @ V, M.apply(V))


def _with_faint_points(L, points, weight):
    """The Laplacian of ``L``'s graph with every edge of ``points`` set to ``weight``."""
    W = -sp.csr_matrix(L)
    W.setdiag(0)
    W.eliminate_zeros()
    W = W.tolil()
    for i in points:
        for j in W.rows[i]:
            W[i, j] = W[j, i] = weight
    W = W.tocsr()
    return sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)


def test_underflowing_weights_do_not_make_the_hierarchy_nan():
    # heat weights of outliers underflow to 1e-300: the rows of such points must not turn the
    # coarse operators into NaN (they did before DROP_TOL and SHIFT)
    _, _, _, L = blobs_graph_and_labels(n_per_class=150, n_classes=2)
    A = _with_faint_points(L, range(0, 300, 37), 1e-300)  # their edges almost vanish
    M = AMGPreconditioner(A)
    for level in M.hierarchy.levels:
        assert np.all(np.isfinite(level.A.data))
    assert np.all(np.isfinite(M.apply(np.ones(A.shape[0]))))


def test_a_degree_below_one_over_the_largest_float_does_not_make_the_setup_nan():
    # a million two-moons points (seed 2) gave a point of degree 3.9e-315, whose 1/d overflows
    # to inf inside pyamg's evolution strength; such a row keeps no edge in P and is inverted
    # alone
    _, y, y_ssl, L = blobs_graph_and_labels(n_per_class=400, n_classes=2)
    A = _with_faint_points(L, [5], 1e-317)
    assert 0 < A.diagonal()[5] < 1 / np.finfo(float).max
    M = AMGPreconditioner(A)
    assert 5 in M.isolated
    for level in M.hierarchy.levels:
        assert np.all(np.isfinite(level.A.data))
    Minv = _dense_inverse(M, A.shape[0])
    assert np.all(np.isfinite(Minv))
    np.testing.assert_allclose(
        Minv, Minv.T, atol=1e-10 * np.abs(Minv[np.ix_(M.coupled, M.coupled)]).max()
    )

    for Estimator in (PoissonClassifier, HarmonicClassifier):
        for solver in ("amg", "cg"):  # Jacobi's 1/d overflowed too: NaN scores, 50 % right
            model = Estimator(solver=solver).fit(np.zeros((A.shape[0], 1)), y_ssl, laplacian=A)
            assert np.all(np.isfinite(model.scores_))
            assert np.mean(model.transduction_ == y) > 0.95


def test_the_hierarchy_is_reproducible_and_leaves_the_global_generator_alone():
    # pyamg's spectral-radius estimates start from np.random vectors: unseeded, two setups on
    # one matrix gave different V-cycles (and 37 vs 52 CG iterations on a million points)
    _, _, _, L = blobs_graph_and_labels(n_per_class=400, n_classes=2)
    A = sp.csr_matrix(L + 1e-3 * sp.eye(L.shape[0]))
    v = np.random.default_rng(0).standard_normal(A.shape[0])
    np.random.seed(123)  # noqa: NPY002 - the legacy generator pyamg reads
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    first = AMGPreconditioner(A).apply(v)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    np.random.rand(10)  # noqa: NPY002 - another global state, the same hierarchy
    np.testing.assert_array_equal(AMGPreconditioner(A).apply(v), first)


def test_a_non_positive_diagonal_is_refused_with_the_fix():
    A = sp.csr_matrix(np.diag([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match="positive diagonal.*solver='cg'"):
        AMGPreconditioner(A)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_harmonic_with_amg_equals_a_dense_solve(n_classes):
    X, y, y_ssl, L = blobs_graph_and_labels(n_per_class=240 // n_classes, n_classes=n_classes)
    model = HarmonicClassifier(solver="amg", tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    F_u = dense_harmonic(L, y_ssl, n_classes)
    np.testing.assert_allclose(model.label_distributions_[y_ssl < 0], F_u, atol=1e-9)
    assert model.solver_ == "amg"
    jacobi = HarmonicClassifier(solver="cg", tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    assert jacobi.solver_ == "cg" and model.n_iter_ < jacobi.n_iter_


@pytest.mark.parametrize("n_classes", [2, 4])
def test_poisson_with_amg_equals_a_dense_pseudo_inverse_solve(n_classes):
    X, y, y_ssl, L = blobs_graph_and_labels(n_per_class=240 // n_classes, n_classes=n_classes)
    model = PoissonClassifier(solver="amg", tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    U = dense_poisson(L, y_ssl, n_classes)
    np.testing.assert_allclose(model.scores_, U, atol=1e-9 * np.abs(U).max())
    assert model.residuals_.shape[1] == n_classes - 1  # the last column is not solved


def test_harmonic_on_a_normalized_laplacian_solves_every_column():
    X, y = make_two_moons(200, noise=0.05, random_state=0)
    y_ssl = hide_labels(y, 2)
    model = HarmonicClassifier(graph=KNNGraph(normalized=True), tol=1e-10).fit(X, y_ssl)
    # the constants are not harmonic for I - D^-1/2 W D^-1/2: no column is inferred
    assert model.residuals_.shape[1] == 2
    L = model.graph_.laplacian_.toarray()
    F_u = dense_harmonic(L, y_ssl, 2)
    np.testing.assert_allclose(model.label_distributions_[y_ssl < 0], F_u, atol=1e-7)


@pytest.mark.parametrize("Estimator", [HarmonicClassifier, PoissonClassifier])
def test_auto_takes_amg_from_its_threshold_on(Estimator, monkeypatch):
    assert AMG_MIN_SIZE == 50_000  # the measured crossover (benchmarks/results/graph_solvers/)
    monkeypatch.setattr("semiscale.models.graph_learning.AMG_MIN_SIZE", 1000)
    X, y = make_two_moons(1010, noise=0.1, random_state=0)
    y_ssl = hide_labels(y, 1)
    model = Estimator().fit(X, y_ssl)
    assert model.solver_ == "amg" and model.n_iter_ < 50
    assert (model.transduction_ == y).mean() > 0.99
    small = Estimator().fit(X[:990], hide_labels(y[:990], 1))
    assert small.solver_ == "cg"


def test_solver_is_validated():
    X, y = make_two_moons(50, random_state=0)
    with pytest.raises(ValueError, match="solver"):
        PoissonClassifier(solver="multigrid").fit(X, hide_labels(y, 1))


def test_an_amg_solve_without_max_iter_is_capped(monkeypatch):
    X, y, y_ssl, L = blobs_graph_and_labels(n_per_class=100, n_classes=2)
    L = sp.csr_matrix(L)
    monkeypatch.setattr("semiscale.models.graph_learning.AMG_MAX_ITER", 2)
    with pytest.warns(ConvergenceWarning, match="after 2 iterations"):
        model = PoissonClassifier(solver="amg", tol=1e-14).fit(X, y_ssl, laplacian=L)
    assert model.n_iter_ == 2
    # an explicit max_iter is used as given; the Jacobi default is not capped
    model = PoissonClassifier(solver="amg", tol=1e-14, max_iter=5).fit(X, y_ssl, laplacian=L)
    assert 2 < model.n_iter_ <= 5
    model = PoissonClassifier(solver="cg", tol=1e-10).fit(X, y_ssl, laplacian=L)
    assert model.n_iter_ > 2


@pytest.mark.parametrize("near_nullspace", [False, True])
def test_the_blocked_cycle_is_symmetric_positive_definite(near_nullspace):
    # paper 002's graph: 5-NN binary weights, normalized Laplacian plus a small ridge
    X, _ = make_two_moons(1200, noise=0.08, random_state=0)  # above AMG_MAX_COARSE: 2 levels
    graph = KNNGraph(
        n_neighbors=5, weights="binary", symmetrize="union", normalized=True, ridge=1e-6
    ).fit(X)
    A = sp.csr_matrix(graph.laplacian_)
    B = np.sqrt(graph.degree_) if near_nullspace else None
    M = AMGPreconditioner(A, near_nullspace=B, cycle="blocked")
    assert len(M.hierarchy.levels) >= 2  # the cycle has a coarse level, not only a solve
    Minv = _dense_inverse(M, A.shape[0])
    np.testing.assert_allclose(Minv, Minv.T, atol=1e-12 * np.abs(Minv).max())
    assert np.linalg.eigvalsh((Minv + Minv.T) / 2).min() > 0


def test_the_blocked_cycle_matches_a_plain_python_reference():
    # the cycle of BlockedVCycle's docstring written out with dense matrices, column by column
    _, _, _, L = blobs_graph_and_labels(n_per_class=400, n_classes=2)
    A = sp.csr_matrix(L + 1e-3 * np.eye(L.shape[0]))
    M = AMGPreconditioner(A, cycle="blocked")
    cycle = M.blocked
    assert len(cycle.levels) >= 1

    def chebyshev(level, b, x):
        Al, inverse, _, _, (a, c) = cycle.levels[level]
        Al = Al.toarray()
        theta, delta = (c + a) / 2, (c - a) / 2
        sigma = theta / delta
        r = b - Al @ x
        d = inverse * r / theta
        x = x + d
        rho_old = 1 / sigma
        for _ in range(CHEBYSHEV_DEGREE - 1):
            r = r - Al @ d
            rho = 1 / (2 * sigma - rho_old)
            d = rho * rho_old * d + 2 * rho / delta * inverse * r
            rho_old = rho
            x = x + d
        return x

    def v_cycle(level, b):
        if level == len(cycle.levels):
            coarse = M.hierarchy.levels[-1].A.toarray()
            return np.linalg.solve(coarse, b)
        Al, _, P, _, _ = cycle.levels[level]
        x = chebyshev(level, b, np.zeros_like(b))
        x = x + P.toarray() @ v_cycle(level + 1, P.toarray().T @ (b - Al.toarray() @ x))
        return chebyshev(level, b, x)

    V = np.random.default_rng(0).standard_normal((A.shape[0], 3))
    expected = np.column_stack([v_cycle(0, V[:, j]) for j in range(3)])
    np.testing.assert_allclose(M.apply(V), expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


def test_blocked_and_pyamg_cycles_give_the_same_cg_solution():
    _, _, _, L = blobs_graph_and_labels(n_per_class=300, n_classes=3)
    A = sp.csr_matrix(L + 1e-4 * np.eye(L.shape[0]))
    B = np.random.default_rng(1).standard_normal((A.shape[0], 4))
    reference = np.linalg.solve(A.toarray(), B)
    for cycle in ("pyamg", "blocked"):
        result = cg(A, B, preconditioner=AMGPreconditioner(A, cycle=cycle), tol=1e-12)
        assert result.converged and result.n_iter < 60
        np.testing.assert_allclose(result.x, reference, rtol=0, atol=1e-8 * np.abs(reference).max())


def test_an_unknown_cycle_is_refused():
    with pytest.raises(ValueError, match="cycle must be one of"):
        AMGPreconditioner(sp.identity(4, format="csr"), cycle="W")


def test_the_float32_cycle_stays_float32_and_matches_the_float64_cycle():
    # paper 002's graph, where the SDD solver runs the cycle in float32
    X, _ = make_two_moons(1200, noise=0.08, random_state=0)
    graph = KNNGraph(
        n_neighbors=5, weights="binary", symmetrize="union", normalized=True, ridge=1e-6
    ).fit(X)
    A = sp.csr_matrix(graph.laplacian_)
    B = np.sqrt(graph.degree_)
    M64 = AMGPreconditioner(A, near_nullspace=B, cycle="blocked")
    M32 = AMGPreconditioner(A, near_nullspace=B, cycle="blocked", cycle_dtype=np.float32)
    V = np.random.default_rng(0).standard_normal((A.shape[0], 5))
    # every work block in float32 (a float64 scalar in the Chebyshev recurrence promoted them)
    assert M32.blocked.apply(V).dtype == np.float32
    out32, out64 = M32.apply(V), M64.apply(V)
    assert out32.dtype == np.float64
    np.testing.assert_allclose(out32, out64, rtol=0, atol=1e-5 * np.abs(out64).max())
    # CG in float64 with the float32 cycle reaches the float64 cycle's solution and iterations
    reference = cg(A, V, preconditioner=M64, tol=1e-10)
    result = cg(A, V, preconditioner=M32, tol=1e-10)
    assert result.converged and result.n_iter <= reference.n_iter + 1
    np.testing.assert_allclose(result.x, reference.x, rtol=0, atol=1e-8 * np.abs(reference.x).max())


def test_an_unknown_cycle_dtype_is_refused():
    with pytest.raises(ValueError, match="cycle_dtype must be float32 or float64"):
        AMGPreconditioner(sp.identity(600, format="csr") * 2.0, cycle="blocked", cycle_dtype=int)
