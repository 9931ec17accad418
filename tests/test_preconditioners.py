"""Preconditioners for the Nyström LapRLS system: each ``apply`` inverts the ``P`` it claims."""

import numpy as np
import pytest
import scipy.sparse as sp

from oracles import dense_nystrom_laprls_hessian
from reference_problems import heat_laplacian
from semiscale.kernels import RBF
from semiscale.linalg.centers import select_centers
from semiscale.linalg.operators import NystromLapRLSHessian
from semiscale.solvers import PRECONDITIONERS, cg, make_preconditioner
from semiscale.solvers.preconditioners import DensePreconditioner


def setup(n=150, s=25, m=10, gamma=1.0, lam=(1e-2, 0.05), seed=0, normalized=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    centers = rng.choice(n, s, replace=False)
    labeled = rng.choice(n, m, replace=False)
    L = heat_laplacian(X, normalized=normalized)
    H = NystromLapRLSHessian(RBF(gamma=gamma), X, centers, labeled, L, *lam)
    return H, X, centers, labeled, L, heat_laplacian(X[centers])


def options(name, L_ss):
    if name in ("paper", "paper5", "paper6", "falkon"):
        return {"center_laplacian": L_ss}
    if name == "sampled-hessian":
        return {"n_rows": 40, "random_state": 0}
    return {}


NAMES = [k for k in PRECONDITIONERS if k is not None]


@pytest.mark.parametrize("name", NAMES)
def test_apply_equals_dense_solve_with_its_P(name):
    H, *_, L_ss = setup(gamma=3.0)
    P = make_preconditioner(name, H, **options(name, L_ss))
    V = np.random.default_rng(1).normal(size=(25, 3))
    Pd = P.dense()
    np.testing.assert_allclose(Pd, Pd.T, rtol=1e-10, atol=1e-12 * np.abs(Pd).max())
    assert np.linalg.eigvalsh(Pd).min() > 0
    expected = np.linalg.solve(Pd, V)
    err = np.linalg.norm(P.apply(V) - expected) / np.linalg.norm(expected)
    assert err < 1e-12 * np.linalg.cond(Pd)
    np.testing.assert_allclose(P.apply(V[:, 0]), P.apply(V)[:, 0], rtol=1e-12)


@pytest.mark.parametrize("m, variant", [(10, 5), (20, 6)])
def test_paper_formula_and_automatic_variant(m, variant):
    """m ≤ √n picks eq. (5), m > √n eq. (6) (n = 150, √n ≈ 12.2)."""
    H, X, centers, labeled, L, L_ss = setup(m=m, gamma=3.0)
    kernel, n, s = H.kernel, 150, 25
    K_ss = kernel(X[centers], X[centers])
    K_ms = kernel(X[labeled], X[centers])
    lap = H.intrinsic_lambda * n**2 / s**2 * (K_ss @ (L_ss @ K_ss))
    labeled_term = K_ms.T @ K_ms if variant == 5 else (m / s) * K_ss @ K_ss
    expected = labeled_term + H.ambient_lambda * K_ss + lap
    auto = make_preconditioner("paper", H, center_laplacian=L_ss)
    explicit = make_preconditioner(f"paper{variant}", H, center_laplacian=L_ss)
    falkon = make_preconditioner("falkon", H, center_laplacian=L_ss)
    for P in (auto, explicit):
        np.testing.assert_allclose(
            P.dense(),
            expected + P.jitter_ * np.eye(s),
            rtol=1e-10,
            atol=1e-12 * np.abs(expected).max(),
        )
    # FALKON's factored form is the same P (up to the jitter of K_ss)
    np.testing.assert_allclose(
        falkon.dense(), expected, rtol=1e-6, atol=1e-8 * np.abs(expected).max()
    )


def test_laplacian_scale_option():
    H, *_, L_ss = setup(gamma=3.0)
    a = make_preconditioner("paper6", H, center_laplacian=L_ss)
    b = make_preconditioner("paper6", H, center_laplacian=L_ss, laplacian_scale=(150 / 25) ** 2)
    np.testing.assert_allclose(a.dense(), b.dense())


def test_sampled_hessian_with_every_row_is_the_hessian():
    H, X, centers, labeled, L, _ = setup(gamma=3.0)
    dense = dense_nystrom_laprls_hessian(
        H.kernel, X, centers, labeled, L, H.ambient_lambda, H.intrinsic_lambda
    )
    P = make_preconditioner("sampled-hessian", H, n_rows=150)
    np.testing.assert_allclose(P.dense(), dense, rtol=1e-9, atol=1e-10 * np.abs(dense).max())
    z = H.rhs(np.ones(10))
    res = cg(H, z, preconditioner=P, tol=1e-10)
    assert res.converged and res.n_iter <= 2


@pytest.mark.parametrize("overlap", ["some", "all", "superset"])
def test_sampled_hessian_reads_center_features_from_the_cholesky_factor(overlap):
    # Labeled points that are centers get their features from chol(K_ss) (all of them: LAPACK
    # lauum) instead of a kernel row and a triangular solve; P must still equal H.
    rng = np.random.default_rng(3)
    n, s = 150, 25
    X = rng.normal(size=(n, 3))
    centers = rng.choice(n, s, replace=False)
    if overlap == "some":
        labeled = np.concatenate([centers[:6], np.setdiff1d(np.arange(n), centers)[:8]])
    elif overlap == "all":
        labeled = rng.permutation(centers)
    else:
        labeled = np.concatenate([centers, np.setdiff1d(np.arange(n), centers)[:5]])
    L = heat_laplacian(X)
    H = NystromLapRLSHessian(RBF(gamma=3.0), X, centers, labeled, L, 1e-2, 0.05)
    positions = H.center_positions(labeled)
    assert np.array_equal(centers[positions[positions >= 0]], labeled[positions >= 0])
    dense = dense_nystrom_laprls_hessian(RBF(gamma=3.0), X, centers, labeled, L, 1e-2, 0.05)
    P = make_preconditioner("sampled-hessian", H, n_rows=n)
    np.testing.assert_allclose(P.dense(), dense, rtol=1e-9, atol=1e-10 * np.abs(dense).max())
    # Centers given as points (not indices): no positions known, the same P by the slow path.
    H_points = NystromLapRLSHessian(RBF(gamma=3.0), X, X[centers], labeled, L, 1e-2, 0.05)
    assert np.all(H_points.center_positions(labeled) == -1)
    P_points = make_preconditioner("sampled-hessian", H_points, n_rows=n)
    np.testing.assert_allclose(
        P_points.dense(), P.dense(), rtol=1e-9, atol=1e-10 * np.abs(dense).max()
    )


def test_factored_preconditioner_lower_triangle_convention():
    from semiscale.solvers.preconditioners import FactoredPreconditioner

    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    G = A @ A.T + np.eye(6)
    L = np.linalg.cholesky(G + 6 * np.eye(6))
    lower_only = np.tril(G) + np.triu(rng.normal(size=(6, 6)), 1)  # garbage above
    P = FactoredPreconditioner(L, lower_only, G_triangle="lower")
    np.testing.assert_allclose(P.dense(), L @ G @ L.T, rtol=1e-12)
    np.testing.assert_allclose(P.apply(np.eye(6)), np.linalg.inv(L @ G @ L.T), rtol=1e-9)
    with pytest.raises(ValueError, match="G_triangle"):
        FactoredPreconditioner(L, G, G_triangle="upper")


def test_sampled_hessian_labeled_term_is_exact_by_default():
    # Without a graph term only the labeled Gram matrix is estimated: by default it is exact
    # (m <= 4s), so P equals H; a labeled subsample gives an unbiased but different P.
    H, X, centers, labeled, *_ = setup(m=60)
    H0 = NystromLapRLSHessian(H.kernel, X, centers, labeled, None, 1e-2, 0.0)
    dense = H0 @ np.eye(H0.shape[0])
    P = make_preconditioner("sampled-hessian", H0, random_state=0)
    np.testing.assert_allclose(P.dense(), dense, rtol=1e-9, atol=1e-10 * np.abs(dense).max())
    sub = make_preconditioner("sampled-hessian", H0, n_labeled_rows=30, random_state=0)
    assert not np.allclose(sub.dense(), dense, rtol=1e-3)
    with pytest.raises(ValueError, match="n_labeled_rows"):
        make_preconditioner("sampled-hessian", H0, n_labeled_rows=0)


def test_sampled_hessian_subsamples_labeled_rows_and_any_laplacian():
    H, *_ = setup(m=60, normalized=True)
    P = make_preconditioner(
        "sampled-hessian", H, n_rows=20, n_labeled_rows=20, random_state=0
    )  # 20 < m = 60
    assert np.linalg.eigvalsh(P.dense()).min() > 0
    z = H.rhs(np.random.default_rng(2).normal(size=60))
    res = cg(H, z, preconditioner=P, tol=1e-8)
    assert res.converged
    direct = np.linalg.lstsq(H @ np.eye(25), z, rcond=1e-13)[0]
    f, f_ref = H.kns_matmul(res.x), H.kns_matmul(direct)
    assert np.linalg.norm(f - f_ref) <= 1e-6 * np.linalg.norm(f_ref)


@pytest.mark.parametrize("name", NAMES + [None])
def test_pcg_equals_direct_solve(name):
    H, X, centers, labeled, L, L_ss = setup(n=300, s=60, m=20, gamma=0.5, lam=(1e-3, 1e-2))
    Y = np.random.default_rng(3).choice([-1.0, 1.0], size=(20, 2))
    z = H.rhs(Y)
    f_ref = H.kns_matmul(np.linalg.lstsq(H @ np.eye(60), z, rcond=1e-14)[0])
    P = make_preconditioner(name, H, **options(name, L_ss))
    res = cg(H, z, preconditioner=P, tol=1e-10, max_iter=5000)
    assert res.converged
    f = H.kns_matmul(res.x)
    assert np.linalg.norm(f - f_ref) <= 1e-6 * np.linalg.norm(f_ref)


def test_preconditioners_cut_iterations():
    H, *_, L_ss = setup(n=400, s=80, m=40, gamma=0.5, lam=(1e-3, 1e-2))
    z = H.rhs(np.random.default_rng(4).choice([-1.0, 1.0], size=40))
    settings = {
        "none": (None, {}),
        "paper": ("paper", {"center_laplacian": L_ss}),
        "falkon": ("falkon", {"center_laplacian": L_ss}),
    }
    iters = {
        key: cg(
            H, z, preconditioner=make_preconditioner(name, H, **kw), tol=1e-6, max_iter=5000
        ).n_iter
        for key, (name, kw) in settings.items()
    }
    assert iters["paper"] < iters["none"] / 4 and iters["falkon"] < iters["none"] / 4
    # The sampled preconditioner draws its rows at random: compare medians over fixed seeds,
    # since one draw each can order the two row counts either way (11 vs 12 iterations seen).
    for key, n_rows in (("sampled default", None), ("sampled 2s", 160)):
        iters[key] = np.median(
            [
                cg(
                    H,
                    z,
                    preconditioner=make_preconditioner(
                        "sampled-hessian", H, n_rows=n_rows, random_state=seed
                    ),
                    tol=1e-6,
                    max_iter=5000,
                ).n_iter
                for seed in range(5)
            ]
        )
    # A larger row sample buys fewer iterations; the default (s/8) still beats the paper's P.
    assert iters["sampled 2s"] <= min(iters["paper"] / 4, 15)
    assert iters["sampled 2s"] < iters["sampled default"] < iters["paper"]


def test_without_graph_term_no_center_laplacian_needed():
    H, X, centers, labeled, *_ = setup()
    H0 = NystromLapRLSHessian(H.kernel, X, centers, labeled, None, 1e-2, 0.0)
    for name in ("paper", "falkon", "sampled-hessian"):
        P = make_preconditioner(name, H0)
        res = cg(H0, H0.rhs(np.ones(10)), preconditioner=P, tol=1e-8)
        assert res.converged


def test_jacobi_is_the_diagonal():
    H, X, centers, labeled, L, _ = setup()
    dense = dense_nystrom_laprls_hessian(
        H.kernel, X, centers, labeled, L, H.ambient_lambda, H.intrinsic_lambda
    )
    np.testing.assert_allclose(make_preconditioner("jacobi", H).dense(), np.diag(np.diag(dense)))


def test_dense_preconditioner_falls_back_to_lu():
    P = DensePreconditioner(np.diag([2.0, -1.0, 3.0]))
    assert P.method_ == "lu"
    np.testing.assert_allclose(P.apply(np.ones(3)), [0.5, -1.0, 1 / 3])


def test_lookup_errors():
    H, *_ = setup()
    assert make_preconditioner(None, H) is None
    with pytest.raises(ValueError, match="unknown"):
        make_preconditioner("ilu", H)
    with pytest.raises(ValueError, match="center_laplacian"):
        make_preconditioner("paper", H)
    with pytest.raises(ValueError, match="shape"):
        make_preconditioner("falkon", H, center_laplacian=sp.eye(3))
    with pytest.raises(ValueError, match="variant"):
        make_preconditioner("falkon", H, center_laplacian=sp.eye(25), variant=7)


@pytest.mark.slow
def test_iterations_on_a9a(capsys):
    """Paper 000's bar: Nyström-PCG in about 10 iterations (a9a, 3000 points, 10 % labeled)."""
    from semiscale.datasets import load_dataset

    X, y = load_dataset("a9a", dense=True)
    rng = np.random.default_rng(0)
    idx = rng.choice(X.shape[0], 3000, replace=False)
    X, y = X[idx], y[idx]
    n = 3000
    m, s = n // 10, n // 10
    kernel = RBF(gamma="median").resolve(X, random_state=0)
    L = heat_laplacian(X, k=8)
    labeled = rng.choice(n, m, replace=False)
    centers = select_centers(X, s, random_state=1)
    L_ss = heat_laplacian(X[centers], k=8)
    for ambient_reg, intrinsic_reg in [(1e-4, 1.0), (1e-6, 100.0)]:
        H = NystromLapRLSHessian(
            kernel, X, centers, labeled, L, m * ambient_reg, m * intrinsic_reg / L.diagonal().sum()
        )
        z = H.rhs(y[labeled])
        iters = {}
        for name, kw in [
            (None, {}),
            ("paper", {"center_laplacian": L_ss}),
            ("falkon", {"center_laplacian": L_ss}),
            ("sampled-hessian", {"random_state": 0}),
        ]:
            res = cg(
                H, z, preconditioner=make_preconditioner(name, H, **kw), tol=1e-6, max_iter=5000
            )
            iters[name] = res.n_iter
        with capsys.disabled():
            print(f"\na9a n={n} ambient_reg={ambient_reg} intrinsic_reg={intrinsic_reg}: {iters}")
        assert iters["sampled-hessian"] <= 12
        assert iters["paper"] <= 60 < iters[None]


def test_sampled_hessian_sample_grows_with_the_graph_share():
    from semiscale.solvers import preconditioners as pc

    # A weak graph term: the default sample, and the share it carries is reported.
    weak, *_ = setup(lam=(1e-2, 1e-6))
    t0 = pc._default_laplacian_rows(weak)
    assert t0 == pc.LAPLACIAN_ROWS_MIN  # s = 25: s/8 is below the floor
    P = make_preconditioner("sampled-hessian", weak, random_state=0)
    assert P.laplacian_rows_ == t0 and 0 < P.graph_trace_share_ < pc.GRAPH_SHARE_REFERENCE
    # A dominant graph term: the sample grows by the full factor ...
    strong, *_ = setup(n=1000, lam=(1e-2, 10.0))  # n above the grown sample
    P = make_preconditioner("sampled-hessian", strong, random_state=0)
    t_grown = int(np.ceil(t0 * pc.LAPLACIAN_ROWS_MAX_GROWTH))
    assert t_grown < 1000
    assert P.graph_trace_share_ > 0.5 and P.laplacian_rows_ == t_grown
    # ... and the grown estimate is exactly the one drawn at that size from the start (the
    # first rows are re-weighted, not biased).
    direct = make_preconditioner("sampled-hessian", strong, n_rows=t_grown, random_state=0)
    np.testing.assert_allclose(P.dense(), direct.dense(), rtol=1e-10)
    # An explicit n_rows is kept.
    P = make_preconditioner("sampled-hessian", strong, n_rows=5, random_state=0)
    assert P.laplacian_rows_ == 5


# ------------------------------------------------------------------ the NystromSystem protocol
class DenseSystem:
    """A :class:`NystromSystem` holding dense matrices: no kernel, no operator, no blocks.

    Preconditioners built from it must equal those built from the Hessian, which proves they
    read nothing but the protocol.
    """

    def __init__(self, K_ns, center_index, labeled_index, laplacian, lam_A, lam_I, diagonal):
        self.K_ns, self.center_index = K_ns, center_index
        self.n_samples, self.n_centers = K_ns.shape
        self.labeled_index = labeled_index
        self.laplacian, self.ambient_lambda, self.intrinsic_lambda = laplacian, lam_A, lam_I
        self.memory_budget = 1 << 30
        self.kernel_cached = True
        self._diagonal = diagonal

    def kernel_ss(self):
        return self.K_ns[self.center_index]

    def kernel_rows(self, index):
        return self.K_ns[np.asarray(index)]

    def kernel_ms(self):
        return self.K_ns[self.labeled_index]

    def center_positions(self, index):
        lookup = np.full(self.n_samples, -1)
        lookup[self.center_index] = np.arange(self.n_centers)
        return lookup[np.asarray(index)]

    def diagonal(self):
        return self._diagonal


def test_hessians_implement_the_protocol():
    from semiscale.linalg import FullLapRLSHessian, NystromSystem

    H, X, _, labeled, L, _ = setup()
    assert isinstance(H, NystromSystem)
    full = FullLapRLSHessian(H.kernel, X, labeled, L, 1e-2, 0.05)
    assert isinstance(full, NystromSystem)
    assert (full.n_samples, full.n_centers) == (150, 150) and full.kernel_cached
    np.testing.assert_array_equal(full.labeled_index, labeled)


@pytest.mark.parametrize("name", NAMES)
def test_preconditioners_read_only_the_protocol(name):
    H, X, centers, labeled, L, L_ss = setup(gamma=3.0)
    # Half the labeled points are centers, so the factor's shortcut for centers is exercised.
    labeled = np.concatenate([centers[:5], labeled[:5]])
    H = NystromLapRLSHessian(H.kernel, X, centers, labeled, L, H.ambient_lambda, H.intrinsic_lambda)
    double = DenseSystem(
        H.kernel(X, X[centers]),
        centers,
        labeled,
        L,
        H.ambient_lambda,
        H.intrinsic_lambda,
        H.diagonal(),
    )
    P_h = make_preconditioner(name, H, **options(name, L_ss))
    P_d = make_preconditioner(name, double, **options(name, L_ss))
    np.testing.assert_allclose(P_d.dense(), P_h.dense(), rtol=1e-10, atol=1e-12)
    V = np.random.default_rng(5).normal(size=(25, 2))
    np.testing.assert_allclose(P_d.apply(V), P_h.apply(V), rtol=1e-8)
    op = P_h.aslinearoperator()
    assert op.shape == (25, 25)
    np.testing.assert_allclose(op @ V, P_h.apply(V))
    np.testing.assert_allclose(op.matvec(V[:, 0]), P_h.apply(V[:, 0]))
