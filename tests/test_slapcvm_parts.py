"""Parts of SLapCVM (paper 001, issue 13): the transformed kernel K̃ of eq. (8) and the SMO
solver of its simplex QP, against explicit feature vectors and a generic QP solver."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, Linear
from semiscale.solvers.slapcvm_kernel import SLapCVMKernel, graph_edges
from semiscale.solvers.smo import simplex_qp_smo


def _problem(normalized, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 3))
    W = KNNGraph(n_neighbors=4, method="exact").fit(X).adjacency_
    labeled = np.array([0, 5, 9, 17])
    y = np.array([1.0, -1.0, -1.0, 1.0])
    return X, W, labeled, y, graph_edges(W, normalized=normalized)


@pytest.mark.parametrize("normalized", [False, True])
def test_transformed_kernel_is_the_gram_matrix_of_the_explicit_items(normalized):
    """With the linear kernel φ(x) = x: build every item's feature vector [φ; bias; slack]
    by hand (eq. 8's definitions) and compare Z Zᵀ with every block of K̃."""
    X, W, labeled, y, edges = _problem(normalized)
    u, v, w, s = edges
    ridge_l, ridge_e = 0.3, 0.7
    K = SLapCVMKernel(Linear(), X, labeled, y, edges, ridge_l, ridge_e)
    n_items = labeled.size + 2 * u.size
    assert K.n_items == n_items
    phi = np.hstack([X, np.ones((X.shape[0], 1))])  # φ̃ = [x; 1]
    psi = np.sqrt(w)[:, None] * (phi[u] / s[u, None] - phi[v] / s[v, None])
    Z = np.vstack([y[:, None] * phi[labeled], psi, -psi])
    slack = np.sqrt(np.r_[np.full(labeled.size, ridge_l), np.full(2 * u.size, ridge_e)])
    Z = np.hstack([Z, np.diag(slack)])
    G = Z @ Z.T
    items = np.arange(n_items)
    np.testing.assert_allclose(K.block(items, items), G, atol=1e-12)
    rng = np.random.default_rng(1)
    rows, cols = rng.choice(n_items, 9, replace=False), rng.choice(n_items, 7, replace=False)
    np.testing.assert_allclose(K.block(rows, cols), G[np.ix_(rows, cols)], atol=1e-12)
    np.testing.assert_allclose(K.diag(), np.diag(G), atol=1e-12)
    if not normalized:
        np.testing.assert_array_equal(K.tau, 0.0)  # τ_e = 0 with the unnormalized Laplacian


def test_expansion_evaluates_the_combination_of_items():
    X, W, labeled, y, edges = _problem(normalized=True)
    kernel = RBF(gamma=0.5)
    K = SLapCVMKernel(kernel, X, labeled, y, edges, 0.1, 0.1)
    rng = np.random.default_rng(2)
    coef = np.where(rng.random(K.n_items) < 0.3, rng.standard_normal(K.n_items), 0.0)
    points, weights, bias = K.expansion(coef)
    X_new = rng.standard_normal((5, 3))
    f = kernel(X_new, X[points]) @ weights + bias
    # the same by the items' terms: Σ_a c_a (Σ coef·k(x_row, ·) + bias_a)
    rows, c2, b2 = K._terms(np.arange(K.n_items))
    expected = sum(
        coef[a]
        * (
            c2[a, 0] * kernel(X_new, X[rows[a, :1]])[:, 0]
            + c2[a, 1] * kernel(X_new, X[rows[a, 1:]])[:, 0]
            + b2[a]
        )
        for a in np.flatnonzero(coef)
    )
    np.testing.assert_allclose(f, expected, atol=1e-12)
    assert points.size <= 2 * np.count_nonzero(coef)


def test_graph_edges_refuses_bad_adjacency():
    with pytest.raises(ValueError, match="symmetric"):
        graph_edges(sp.csr_matrix(np.array([[0.0, 1.0], [0.0, 0.0]])))
    with pytest.raises(ValueError, match="negative"):
        graph_edges(sp.csr_matrix(np.array([[0.0, -1.0], [-1.0, 0.0]])))
    with pytest.raises(ValueError, match="square"):
        graph_edges(sp.csr_matrix(np.ones((2, 3))))


def _generic_qp(Q, v):
    k = v.size
    res = minimize(
        lambda a: a @ Q @ a - v @ a,
        np.full(k, 1.0 / k),
        jac=lambda a: 2 * Q @ a - v,
        bounds=[(0, None)] * k,
        constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1.0, "jac": lambda a: np.ones(k)}],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    return res.x


@pytest.mark.parametrize("seed", range(5))
def test_smo_matches_a_generic_qp_and_satisfies_kkt(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((12, 6))
    Q = A @ A.T + 0.05 * np.eye(12)
    v = rng.standard_normal(12) + np.diag(Q)
    result = simplex_qp_smo(Q, v, tol=1e-10)
    alpha = result.alpha
    assert alpha.min() >= 0 and abs(alpha.sum() - 1) < 1e-12
    g = 2 * Q @ alpha - v
    lam = g[alpha > 0].mean()
    np.testing.assert_allclose(g[alpha > 0], lam, atol=1e-8)  # equal gradient on the support
    assert np.all(g >= lam - 1e-8)  # none below it
    reference = _generic_qp(Q, v)
    objective = lambda a: v @ a - a @ Q @ a  # noqa: E731
    assert objective(alpha) >= objective(reference) - 1e-9
    np.testing.assert_allclose(alpha, reference, atol=1e-4)


def test_smo_warm_start_and_bad_input():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 8))
    Q, v = A @ A.T, rng.standard_normal(8)
    cold = simplex_qp_smo(Q, v, tol=1e-10)
    warm = simplex_qp_smo(Q, v, cold.alpha, tol=1e-10)
    assert warm.n_iter <= 1
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-12)
    with pytest.raises(ValueError, match="simplex"):
        simplex_qp_smo(Q, v, np.full(8, 0.5))
    with pytest.raises(ValueError, match="shape"):
        simplex_qp_smo(Q[:3], v)


@pytest.mark.parametrize("C,theta", [(1.0, 10.0), (10.0, 100.0)])
def test_cvm_ball_is_within_its_1_plus_eps_bound_of_the_exact_meb(C, theta):
    """Every item examined at each step (n_candidates = all): the CVM's ball radius R satisfies
    R*/(1+ε) ≤ R ≤ R* against the exact QP (8) over every item, and every item lies within
    (1+ε)R of its center."""
    from semiscale.solvers.cvm import core_vector_machine

    X, W, labeled, y, edges = _problem(normalized=False, seed=3)
    m, n_edges = labeled.size, edges[0].size
    mu = 1.0 / m
    K = SLapCVMKernel(RBF(gamma=0.5), X, labeled, y, edges, mu * m / C, n_edges * mu / (C * theta))
    items = np.arange(K.n_items)
    Q, v = K.block(items, items), np.where(items < m, 2.0 / C, 0.0)
    eta = np.max(np.diag(Q) - v)
    exact = simplex_qp_smo(Q, v, tol=1e-12, max_iter=10**6).alpha
    r2_exact = eta + v @ exact - exact @ Q @ exact
    eps = 1e-3
    result = core_vector_machine(
        K, 2.0 / C, initial=np.arange(m), tol=eps, n_candidates=K.n_items, random_state=0
    )
    assert result.converged and result.eta == pytest.approx(eta)
    alpha = np.zeros(K.n_items)
    alpha[result.core_set] = result.alpha
    r2 = eta + v @ alpha - alpha @ Q @ alpha
    assert r2_exact / (1 + eps) ** 2 - 1e-9 <= r2 <= r2_exact + 1e-9
    dist2 = alpha @ Q @ alpha - 2 * Q @ alpha + eta + v
    assert dist2.max() <= (1 + eps) ** 2 * r2 + 1e-9
    assert result.core_set.size < K.n_items  # the core set is a subset


def test_cvm_refuses_a_core_set_too_small_for_the_labels():
    from semiscale.solvers.cvm import core_vector_machine

    X, W, labeled, y, edges = _problem(normalized=False)
    K = SLapCVMKernel(RBF(gamma=0.5), X, labeled, y, edges, 1.0, 1.0)
    with pytest.raises(ValueError, match="max_core_set"):
        core_vector_machine(K, 2.0, initial=np.arange(labeled.size), max_core_set=2)


def test_a_vanishing_tube_recovers_the_two_norm_lapsvm():
    """Paper 001 §3.1: with ε̄ = 0 the primal (5) is the two-norm LapSVM with a penalised bias,
    ‖w‖² + b² + C/(mμ) Σ max(0, 1 − y f)² + Cθ/(|E|μ) Σ_e w_e (f_u − f_v)².  μ sets ε̄ (it
    falls as μ grows, and turns negative: the dual does not impose ε̄ ≥ 0), so μ is bisected to
    ε̄ = 0 — read from the KKT conditions, ε̄ = 1 − ξ_i − y_i f(x_i) with ξ_i = mμ α_i on a
    labeled item in the support — and the dual's recovered f must then equal the minimiser of
    that problem, found by L-BFGS over f = Σ_j α_j k(x_j, ·) + b on all points."""
    X, W, labeled, y, edges = _problem(normalized=False, seed=4)
    kernel = RBF(gamma=0.5)
    K = kernel(X, X)
    m, n_edges = labeled.size, edges[0].size
    C, theta = 10.0, 100.0

    def dual_fit(mu):
        K_t = SLapCVMKernel(kernel, X, labeled, y, edges, mu * m / C, n_edges * mu / (C * theta))
        items = np.arange(K_t.n_items)
        alpha = simplex_qp_smo(
            K_t.block(items, items), np.where(items < m, 2.0 / C, 0.0), tol=1e-13, max_iter=10**6
        ).alpha
        points, weights, bias = K_t.expansion(C * alpha)
        f = K[:, points] @ weights + bias
        i = int(np.argmax(alpha[:m]))  # a labeled item in the support
        return f, 1.0 - m * mu * alpha[i] - y[i] * f[labeled[i]]

    low, high = np.log(1e-3 / m), np.log(1e3 / m)
    assert dual_fit(np.exp(low))[1] > 0 > dual_fit(np.exp(high))[1]
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if dual_fit(np.exp(mid))[1] > 0 else (low, mid)
    mu = np.exp((low + high) / 2)
    f_dual, eps_bar = dual_fit(mu)
    assert abs(eps_bar) < 1e-8

    u, v, w, _ = edges
    lab_w, edge_w = C / (m * mu), C * theta / (n_edges * mu)

    def objective(params):
        a, b = params[:-1], params[-1]
        f = K @ a + b
        slack = np.maximum(0.0, 1.0 - y * f[labeled])
        diff = np.sqrt(w) * (f[u] - f[v])
        value = a @ K @ a + b * b + lab_w * slack @ slack + edge_w * diff @ diff
        g_f = np.zeros_like(f)
        np.add.at(g_f, labeled, -2 * lab_w * slack * y)
        np.add.at(g_f, u, 2 * edge_w * np.sqrt(w) * diff)
        np.add.at(g_f, v, -2 * edge_w * np.sqrt(w) * diff)
        return value, np.r_[2 * K @ a + K @ g_f, 2 * b + g_f.sum()]

    res = minimize(
        objective,
        np.zeros(X.shape[0] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12},
    )
    f_primal = K @ res.x[:-1] + res.x[-1]
    np.testing.assert_allclose(f_dual, f_primal, atol=1e-4 * np.abs(f_primal).max())
