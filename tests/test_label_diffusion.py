"""Label diffusion: the random-walk weights, the operator, preconditioners and estimators.

``label_diffusion_weights`` against dense powers of ``T = D⁻¹W``; the Nyström operator with
``label_weights`` against its dense reference (cached and blocked); the sampled-Hessian
preconditioner with every row is the Hessian; the estimator's PCG fit equals its direct solve
and a dense minimiser of the objective; bad input fails naming the parameter.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

from oracles import dense_nystrom_laprls_hessian, dense_walk_weights
from reference_problems import heat_laplacian
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph, label_diffusion_weights
from semiscale.kernels import RBF
from semiscale.linalg.operators import NystromLapRLSHessian
from semiscale.models import NystromLapRLSClassifier, NystromLapRLSRegressor
from semiscale.solvers import cg, make_preconditioner


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("steps", [0, 1, 3])
def test_weights_are_the_dense_walk(steps, normalized):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    L = heat_laplacian(X, normalized=normalized)
    labeled = np.array([5, 0, 17])
    R = label_diffusion_weights(L, labeled, steps)
    assert sp.issparse(R) and R.shape == (60, 3)
    np.testing.assert_allclose(R.toarray(), dense_walk_weights(L, labeled, steps), atol=1e-14)
    np.testing.assert_allclose(np.asarray(R.sum(axis=0)).ravel(), 1.0)
    assert R.min() >= 0


def test_isolated_labeled_point_keeps_its_own_prediction():
    W = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    R = label_diffusion_weights(L, [2, 0], 3).toarray()
    np.testing.assert_array_equal(R[:, 0], [0, 0, 1])
    np.testing.assert_allclose(R[:, 1], [0.5, 0.5, 0])  # 2 or 3 steps on an edge: both ends


def test_two_point_graph_keeps_each_label_at_its_own_point():
    # Before (issue 26): five plain steps on an edge end on the other point, and the default
    # classifier swapped the two labels.
    W = sp.csr_matrix(np.array([[0, 1], [1, 0]], dtype=float))
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    np.testing.assert_array_equal(label_diffusion_weights(L, [0, 1], 5).toarray(), np.eye(2))
    model = NystromLapRLSClassifier(graph=KNNGraph(n_neighbors=1), n_centers=2)
    np.testing.assert_array_equal(
        model.fit([[0, 0], [1, 1]], [0, 1]).predict([[0, 0], [1, 1]]), [0, 1]
    )


@pytest.mark.parametrize("y", [[0, 1, -1], [0, -1, 1], [-1, 0, 1]])
def test_three_point_path_agrees_with_exact_laprls(y):
    # Before: labels at both ends of a path were both compared with the middle point (odd
    # steps), and a label next to another was fitted at the other one.
    from semiscale.models import LapRLSClassifier

    X = [[0.0, 0.0], [1.0, 1.0], [2.5, 2.5]]
    graph = KNNGraph(n_neighbors=1)
    exact = LapRLSClassifier(graph=graph).fit(X, y).predict(X)
    nystrom = NystromLapRLSClassifier(graph=graph, n_centers=3).fit(X, y).predict(X)
    labeled = np.asarray(y) >= 0
    np.testing.assert_array_equal(nystrom[labeled], np.asarray(y)[labeled])
    np.testing.assert_array_equal(nystrom, exact)


@pytest.mark.parametrize("steps", [-1, 1.5, True, None])
def test_bad_steps(steps):
    with pytest.raises(ValueError, match="steps must be a non-negative integer"):
        label_diffusion_weights(sp.eye(3), [0], steps)


def operator_setup(cache):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    centers = rng.choice(120, 20, replace=False)
    labeled = np.sort(rng.choice(120, 8, replace=False))
    L = heat_laplacian(X)
    R = label_diffusion_weights(L, labeled, 2)
    H = NystromLapRLSHessian(
        RBF(gamma=2.0), X, centers, labeled, L, 1e-3, 0.05, cache=cache, label_weights=R
    )
    dense = dense_nystrom_laprls_hessian(
        RBF(gamma=2.0), X, centers, labeled, L, 1e-3, 0.05, label_weights=R
    )
    return H, dense, X, centers, R


@pytest.mark.parametrize("cache", [True, False])
def test_operator_equals_its_dense_reference(cache):
    H, dense, X, centers, R = operator_setup(cache)
    V = np.random.default_rng(2).normal(size=(20, 3))
    np.testing.assert_allclose(H @ V, dense @ V, rtol=1e-10, atol=1e-12 * np.abs(dense).max())
    K_ns = RBF(gamma=2.0)(X, X[centers])
    Y = np.random.default_rng(3).normal(size=(8, 2))
    np.testing.assert_allclose(H.rhs(Y), K_ns.T @ (R @ Y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H.kernel_ms(), R.T @ K_ns, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(H.diagonal(), np.diag(dense), rtol=1e-10)


def test_without_diffusion_the_labeled_term_is_the_labeled_rows():
    H, _, X, centers, _ = operator_setup(False)
    labeled = H.labeled_index
    E = sp.csr_matrix((np.ones(8), (labeled, np.arange(8))), shape=(120, 8))
    plain = NystromLapRLSHessian(RBF(gamma=2.0), X, centers, labeled, H.laplacian, 1e-3, 0.05)
    with_e = NystromLapRLSHessian(
        RBF(gamma=2.0), X, centers, labeled, H.laplacian, 1e-3, 0.05, label_weights=E
    )
    V = np.random.default_rng(4).normal(size=(20, 2))
    np.testing.assert_allclose(with_e @ V, plain @ V, rtol=1e-12)


def test_operator_refuses_weights_without_graph_or_of_the_wrong_shape():
    H, _, X, centers, R = operator_setup(False)
    labeled = H.labeled_index
    with pytest.raises(ValueError, match="needs the graph term"):
        NystromLapRLSHessian(RBF(), X, centers, labeled, None, 1e-3, 0.0, label_weights=R)
    with pytest.raises(ValueError, match=r"label_weights must have shape \(n_samples, n_labeled"):
        NystromLapRLSHessian(
            RBF(), X, centers, labeled, H.laplacian, 1e-3, 0.05, label_weights=R[:, :5]
        )


def test_sampled_hessian_with_every_row_is_the_diffused_hessian():
    H, dense, *_ = operator_setup(False)
    P = make_preconditioner("sampled-hessian", H, n_rows=120)
    np.testing.assert_allclose(P.dense(), dense, rtol=1e-9, atol=1e-10 * np.abs(dense).max())
    z = H.rhs(np.ones(8))
    res = cg(H, z, preconditioner=P, tol=1e-10)
    assert res.converged and res.n_iter <= 2


@pytest.fixture(scope="module")
def moons():
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    rng = np.random.default_rng(0)
    for c in (0, 1):
        y_ssl[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    return X, y, y_ssl, L


@pytest.mark.parametrize("preconditioner", ["sampled-hessian", "jacobi", "falkon"])
def test_pcg_equals_direct(moons, preconditioner):
    X, _, y_ssl, L = moons
    common = dict(label_diffusion=3, n_centers=80, random_state=0, intrinsic_reg=10.0)
    direct = NystromLapRLSClassifier(solver="direct", **common).fit(X, y_ssl, laplacian=L)
    pcg = NystromLapRLSClassifier(
        solver="pcg", preconditioner=preconditioner, tol=1e-11, max_iter=5000, **common
    ).fit(X, y_ssl, laplacian=L)
    scale = np.abs(direct.dual_coef_).max()
    np.testing.assert_allclose(pcg.dual_coef_, direct.dual_coef_, atol=1e-5 * scale)
    assert direct.solver_info_["label_diffusion"] == 3


def test_regressor_minimises_the_diffused_objective(moons):
    """f = K_ns α, α the dense minimiser of ‖Rᵀ K_ns α − y‖² + λ_A αᵀK_ssα + λ_I ‖K_ns α‖²_L."""
    X, y, y_ssl, L = moons
    y_reg = np.where(y_ssl >= 0, y_ssl, np.nan).astype(float)
    model = NystromLapRLSRegressor(
        kernel=RBF(gamma=2.0),
        label_diffusion=2,
        n_centers=60,
        ambient_reg=1e-3,
        intrinsic_reg=5.0,
        solver="direct",
        random_state=0,
    ).fit(X, y_reg, laplacian=L)
    labeled = np.flatnonzero(y_ssl >= 0)
    l, trace = labeled.size, L.diagonal().sum()
    R = label_diffusion_weights(L, labeled, 2)
    C = X[model.center_index_]
    H = dense_nystrom_laprls_hessian(
        RBF(gamma=2.0),
        X,
        model.center_index_,
        labeled,
        L,
        l * 1e-3,
        l * 5.0 / trace,
        label_weights=R,
    )
    K_ns = RBF(gamma=2.0)(X, C)
    alpha = np.linalg.solve(H, K_ns.T @ (R @ y_reg[labeled]))
    np.testing.assert_allclose(model.transduction_, K_ns @ alpha, rtol=1e-7, atol=1e-9)


def test_diffusion_needs_the_graph_term_and_is_ignored_without_it(moons):
    X, _, y_ssl, L = moons
    kw = dict(n_centers=50, random_state=0, intrinsic_reg=0.0)
    a = NystromLapRLSClassifier(label_diffusion=3, **kw).fit(X, y_ssl)
    b = NystromLapRLSClassifier(label_diffusion=0, **kw).fit(X, y_ssl)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.solver_info_["label_diffusion"] == 0


def test_approximate_cv_refuses_diffusion_and_exact_cv_runs(moons):
    from semiscale.model_selection import bif_cross_val_score

    X, _, y_ssl, L = moons
    est = NystromLapRLSClassifier(n_centers=40, random_state=0)
    with pytest.raises(ValueError, match="use label_diffusion=0"):
        bif_cross_val_score(est, X, y_ssl, cv=2, laplacian=L)
    scores = bif_cross_val_score(est.set_params(label_diffusion=0), X, y_ssl, cv=2, laplacian=L)
    assert np.all(np.isfinite(scores))


@pytest.mark.parametrize("value", [-1, 1.5, "3"])
def test_invalid_label_diffusion(moons, value):
    X, _, y_ssl, L = moons
    with pytest.raises(InvalidParameterError, match="label_diffusion"):
        NystromLapRLSClassifier(label_diffusion=value).fit(X, y_ssl, laplacian=L)


def test_diffusion_lifts_one_label_per_class_on_moons():
    """Two moons, one label per class, 200 centers: the diffused fit is at least as accurate."""
    X, y = make_two_moons(600, noise=0.1, random_state=1)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    L = KNNGraph().fit(X).laplacian_
    acc = {
        m: np.mean(
            NystromLapRLSClassifier(label_diffusion=m, n_centers=200, random_state=0)
            .fit(X, y_ssl, laplacian=L)
            .transduction_
            == y
        )
        for m in (0, 3)
    }
    assert acc[3] >= acc[0] - 0.005 and acc[3] > 0.95, acc
