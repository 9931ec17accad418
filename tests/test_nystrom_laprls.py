import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from oracles import add_labeled_prior, centre_by_degree, zero_mean_class_targets
from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)
from sklearn_checks import expected_failed_checks

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((240, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(240)
    y_ssl = y.copy()
    y_ssl[rng.random(240) > 0.2] = np.nan
    L = KNNGraph(n_neighbors=7, bandwidth=1.0, symmetrize="union").fit(X).laplacian_
    return X, y_ssl, L


KW = dict(kernel=RBF(gamma=0.3), ambient_reg=1e-3, intrinsic_reg=5.0)


@pytest.mark.parametrize("solver", ["direct", "pcg"])
def test_all_points_as_centers_equals_exact_laprls(problem, solver):
    # ambient_reg=1e-2 keeps the n×n system well conditioned, so that 1e-8 measures the method,
    # not round-off (at 1e-3 predictions at new points agree to ~2e-8 and vary with BLAS threads).
    X, y, L = problem
    kw = dict(KW, ambient_reg=1e-2)
    exact = LapRLSRegressor(**kw).fit(X, y, laplacian=L)
    nys = NystromLapRLSRegressor(n_centers=1.0, solver=solver, tol=1e-12, random_state=0, **kw)
    nys.fit(X, y, laplacian=L)
    X_new = np.random.default_rng(1).standard_normal((50, 3))
    np.testing.assert_allclose(nys.transduction_, exact.transduction_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(nys.predict(X_new), exact.predict(X_new), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize(
    "preconditioner,tol,max_iter,rtol",
    [
        ("sampled-hessian", 1e-10, None, 1e-6),
        ("paper", 1e-10, None, 1e-6),
        ("falkon", 1e-10, None, 1e-6),
        # Without a Nyström-aware preconditioner H's conditioning (~κ(K_ss)²) limits CG.
        ("jacobi", 1e-9, 20000, 1e-4),
        (None, 1e-9, 20000, 1e-4),
    ],
)
def test_pcg_equals_direct_solve_of_the_same_system(problem, preconditioner, tol, max_iter, rtol):
    X, y, L = problem
    common = dict(n_centers=60, random_state=3, graph=KNNGraph(n_neighbors=7, bandwidth=1.0), **KW)
    direct = NystromLapRLSRegressor(solver="direct", **common).fit(X, y, laplacian=L)
    pcg = NystromLapRLSRegressor(
        solver="pcg", preconditioner=preconditioner, tol=tol, max_iter=max_iter, **common
    ).fit(X, y, laplacian=L)
    np.testing.assert_array_equal(direct.center_index_, pcg.center_index_)
    scale = np.abs(direct.transduction_).max()
    np.testing.assert_allclose(pcg.transduction_, direct.transduction_, atol=rtol * scale)
    assert pcg.residuals_.shape == (pcg.n_iter_ + 1, 1)


def test_pcg_needs_few_iterations_cg_many(problem):
    X, y, L = problem
    common = dict(n_centers=80, random_state=0, **KW)
    pcg = NystromLapRLSRegressor(solver="pcg", **common).fit(X, y, laplacian=L)
    with pytest.warns(ConvergenceWarning):  # plain CG: H's conditioning is ~κ(K_ss)²
        cg = NystromLapRLSRegressor(solver="cg", **common).fit(X, y, laplacian=L)
    with pytest.warns(ConvergenceWarning):
        NystromLapRLSRegressor(solver="cg", max_iter=3, **common).fit(X, y, laplacian=L)
    assert pcg.solver_info_["converged"]
    assert 10 * pcg.n_iter_ < cg.n_iter_
    # The sampled-Hessian preconditioner reports its graph sample and the graph term's share.
    info = pcg.solver_info_
    assert 32 <= info["laplacian_rows"] <= X.shape[0] and 0 < info["graph_trace_share"] < 1
    explicit = NystromLapRLSRegressor(
        solver="pcg", preconditioner_options={"n_rows": 40}, **common
    ).fit(X, y, laplacian=L)
    assert explicit.solver_info_["laplacian_rows"] == 40


@pytest.mark.parametrize("solver", ["pcg", "cg", "direct"])
def test_fit_phases_are_timed(problem, solver):
    X, y, L = problem
    est = NystromLapRLSRegressor(n_centers=40, solver=solver, random_state=0, **KW)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # plain CG at this conditioning
        est.fit(X, y, laplacian=L)
    phases = ["centers_seconds", "rhs_seconds", "iterations_seconds"]
    phases += ["preconditioner_seconds"] if solver != "direct" else []
    seconds = [est.solver_info_[phase] for phase in phases]
    assert all(t >= 0 for t in seconds) and sum(seconds) <= est.timings_["solve"]


def test_multiclass_right_hand_sides_equal_separate_solves():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 50)
    X = np.array([[0, 0], [3, 0], [0, 3]])[y] + 0.6 * rng.standard_normal((150, 2))
    y_ssl = np.where(rng.random(150) < 0.15, y, -1)
    L = KNNGraph(n_neighbors=6, bandwidth=1.0).fit(X).laplacian_
    common = dict(n_centers=40, solver="pcg", tol=1e-10, random_state=2, label_diffusion=5, **KW)
    multi = NystromLapRLSClassifier(**common).fit(X, y_ssl, laplacian=L)
    Y = zero_mean_class_targets(y_ssl)  # the classifier's targets; its columns are then centred
    columns = []
    for c in range(3):
        yc = np.where(y_ssl == -1, np.nan, Y[:, c])
        single = NystromLapRLSRegressor(**common).fit(X, yc, laplacian=L)
        columns.append(centre_by_degree(single.predict(X)[:, None], L)[:, 0])
    expected = add_labeled_prior(np.column_stack(columns), y_ssl)  # α f + labeled proportions
    np.testing.assert_allclose(multi.decision_function(X), expected, rtol=1e-6, atol=1e-7)
    assert (multi.transduction_ == y).mean() > 0.9


def test_float32_path(problem):
    """float32 kernel blocks: the error is ~κ(H)·ε₃₂ (measured 3e-4 at ambient_reg=1e-3, 1e-4 at
    1e-2, relative to max |f|); at ambient_reg=5e-2 it is well inside 1e-4."""
    X, y, L = problem
    kw = dict(KW, ambient_reg=5e-2)
    common = dict(n_centers=60, solver="pcg", random_state=0, **kw)
    f64 = NystromLapRLSRegressor(tol=1e-8, **common).fit(X, y, laplacian=L)
    f32 = NystromLapRLSRegressor(tol=1e-5, kernel_dtype="float32", **common).fit(X, y, laplacian=L)
    assert f64.solver_info_["kernel_dtype"] == "float64"
    assert f32.solver_info_["kernel_dtype"] == "float32" and f32.X_fit_.dtype == np.float32
    scale = np.abs(f64.transduction_).max()
    np.testing.assert_allclose(f32.transduction_, f64.transduction_, atol=1e-4 * scale)


def test_float32_input_is_computed_in_float64_by_default(problem):
    """float32 X alone does not switch to float32 kernel blocks (they fail on ill-conditioned
    systems: NystromLapRLSRegressor's kernel_dtype docstring); the exact LapRLS never does.
    The expansion points stay float32 (the data's dtype); the computation is float64."""
    X, y, L = problem
    X32 = X.astype(np.float32)
    for estimator in (
        NystromLapRLSRegressor(n_centers=60, random_state=0, **KW),
        LapRLSRegressor(solver="cg", **KW),
    ):
        from_32 = estimator.fit(X32, y, laplacian=L).transduction_
        assert estimator.X_fit_.dtype == np.float32
        from_64 = estimator.fit(X32.astype(np.float64), y, laplacian=L).transduction_
        np.testing.assert_array_equal(from_32, from_64)
    assert estimator.solver_info_.get("kernel_dtype", "float64") == "float64"


def test_float32_blocks_that_miss_tol_say_so(problem):
    """A smooth kernel with ambient_reg 1e-8: float64 converges, float32 blocks do not (max |f|
    352 against 4.3 when measured) and the warning names the cure."""
    X, y, L = problem
    kw = dict(kernel=RBF(gamma=0.05), ambient_reg=1e-8, intrinsic_reg=1.0)
    common = dict(n_centers=60, max_iter=50, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert NystromLapRLSRegressor(**common).fit(X, y, laplacian=L).solver_info_["converged"]
    with pytest.warns(ConvergenceWarning, match="kernel_dtype='float64'"):
        NystromLapRLSRegressor(kernel_dtype="float32", **common).fit(X, y, laplacian=L)


@pytest.mark.parametrize("kernel_dtype", ["float16", "int64", "double-ish", None])
def test_invalid_kernel_dtype(problem, kernel_dtype):
    X, y, L = problem
    est = NystromLapRLSRegressor(n_centers=20, kernel_dtype=kernel_dtype, **KW)
    with pytest.raises(ValueError, match="kernel_dtype"):
        est.fit(X, y, laplacian=L)


def test_duplicate_centers_still_solve(problem):
    X, y, L = problem
    X_dup = np.vstack([X, X[:120]])  # every center candidate appears twice
    y_dup = np.concatenate([y, np.full(120, np.nan)])
    L_dup = KNNGraph(n_neighbors=7, bandwidth=1.0).fit(X_dup).laplacian_
    for solver in ("direct", "pcg"):
        model = NystromLapRLSRegressor(n_centers=200, solver=solver, random_state=0, **KW)
        model.fit(X_dup, y_dup, laplacian=L_dup)
        assert np.all(np.isfinite(model.predict(X)))


def test_budget_too_small_is_a_clear_error(problem):
    X, y, L = problem
    model = NystromLapRLSRegressor(n_centers=100, memory_budget=1000, **KW)
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        model.fit(X, y, laplacian=L)


def test_blocked_and_cached_agree(problem):
    X, y, L = problem
    common = dict(n_centers=50, solver="pcg", tol=1e-10, random_state=0, **KW)
    cached = NystromLapRLSRegressor(**common).fit(X, y, laplacian=L)
    blocked = NystromLapRLSRegressor(memory_budget=200_000, **common).fit(X, y, laplacian=L)
    assert cached.solver_info_["cached"] and not blocked.solver_info_["cached"]
    np.testing.assert_allclose(blocked.transduction_, cached.transduction_, rtol=1e-7, atol=1e-9)


def test_n_centers_forms_and_reproducibility(problem):
    X, y, L = problem
    for n_centers, expected in [(30, 30), (0.25, 60), ("sqrt", 16)]:
        m = NystromLapRLSRegressor(n_centers=n_centers, random_state=7, **KW).fit(X, y, laplacian=L)
        assert m.X_fit_.shape[0] == expected
    a = NystromLapRLSRegressor(random_state=7, **KW).fit(X, y, laplacian=L)
    b = NystromLapRLSRegressor(random_state=7, **KW).fit(X, y, laplacian=L)
    np.testing.assert_array_equal(a.center_index_, b.center_index_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    with pytest.raises(ValueError, match="n_centers"):
        NystromLapRLSRegressor(n_centers=0, **KW).fit(X, y, laplacian=L)
    with pytest.raises(ValueError, match="solver"):
        NystromLapRLSRegressor(solver="lu", **KW).fit(X, y, laplacian=L)
    with pytest.raises(ValueError, match="preconditioner"):
        NystromLapRLSRegressor(preconditioner="magic", **KW).fit(X, y, laplacian=L)


def test_labeled_points_become_centers_when_they_fit(problem):
    X, y, L = problem
    labeled = np.flatnonzero(np.isfinite(y))  # m = 50 of 240
    with_labeled = NystromLapRLSRegressor(n_centers=80, random_state=0, **KW).fit(X, y, laplacian=L)
    assert np.isin(labeled, with_labeled.center_index_).all()
    assert np.unique(with_labeled.center_index_).size == 80
    plain = NystromLapRLSRegressor(n_centers=80, labeled_centers=False, random_state=0, **KW)
    assert not np.isin(labeled, plain.fit(X, y, laplacian=L).center_index_).all()
    # m > s: labeled_centers has no effect (centers chosen by center_selection alone).
    few = [
        NystromLapRLSRegressor(n_centers=30, labeled_centers=flag, random_state=0, **KW)
        .fit(X, y, laplacian=L)
        .center_index_
        for flag in (True, False)
    ]
    np.testing.assert_array_equal(*few)
    with pytest.raises(TypeError, match="labeled_centers"):
        NystromLapRLSRegressor(labeled_centers="yes", **KW).fit(X, y, laplacian=L)


@pytest.mark.parametrize("solver", ["direct", "pcg"])
def test_labeled_centers_without_graph_term_is_kernel_rls(problem, solver):
    # Representer theorem: RLS's minimizer lies in span{k(x_l, ·)}, which the centers contain,
    # so Nyström LapRLS with intrinsic_reg=0 is exactly kernel RLS on the labeled points.
    X, y, L = problem
    kw = dict(KW, intrinsic_reg=0.0, ambient_reg=1e-2)
    rls = LapRLSRegressor(**kw).fit(X, y)
    nys = NystromLapRLSRegressor(n_centers=100, solver=solver, tol=1e-12, random_state=0, **kw)
    nys.fit(X, y, laplacian=L)
    X_new = np.random.default_rng(1).standard_normal((50, 3))
    np.testing.assert_allclose(nys.predict(X_new), rls.predict(X_new), rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("solver", ["cg", "pcg"])
def test_full_laprls_iterative_equals_direct(problem, solver):
    # Plain CG on H = K(JK + λ_A I + λ_I LK) (condition ~κ(K)²) stalls near a 1e-8 residual; at
    # ambient_reg=1e-3 where it stops depends on round-off (1.2e-6 vs 7.4e-7 relative error
    # for two exact evaluations of K), so the system is regularized enough to test the method.
    X, y, L = problem
    kw = dict(KW, ambient_reg=1e-2)
    direct = LapRLSRegressor(**kw).fit(X, y, laplacian=L)
    iterative = LapRLSRegressor(solver=solver, tol=1e-12, max_iter=20000, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        iterative.fit(X, y, laplacian=L)
    scale = np.abs(direct.transduction_).max()
    np.testing.assert_allclose(iterative.transduction_, direct.transduction_, atol=1e-6 * scale)


@pytest.mark.parametrize("solver", ["cg", "pcg"])
@pytest.mark.parametrize("memory_budget", [None, 200_000])  # K_ll stored / recomputed in blocks
def test_rls_cg_equals_rls_direct(problem, solver, memory_budget):
    X, y, _ = problem
    y = np.where(np.isnan(y), np.sin(X[:, 0]), y)  # all 240 labeled: K_ll is 460 kB
    kw = dict(KW, intrinsic_reg=0.0)
    direct = LapRLSRegressor(**kw).fit(X, y)
    iterative = LapRLSRegressor(solver=solver, tol=1e-12, memory_budget=memory_budget, **kw)
    iterative.fit(X, y)
    np.testing.assert_allclose(iterative.dual_coef_, direct.dual_coef_, rtol=1e-6, atol=1e-9)
    assert iterative.n_iter_ > 0
    assert iterative.solver_info_["cached"] == (memory_budget is None)


def _small_graph():
    return KNNGraph(n_neighbors=3)


# scikit-learn's checks of every estimator at its defaults run in tests/test_common.py (from
# the registry); here only the other solvers' configurations.
@parametrize_with_checks(
    [LapRLSClassifier(graph=_small_graph(), solver="pcg")],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible_pcg(estimator, check):
    check(estimator)


def test_preconditioner_options_reach_the_builder(problem):
    X, y, L = problem
    kw = dict(KW, n_centers=0.5, random_state=0)
    # Every row sampled: P equals H up to jitter, so PCG needs one or two iterations.
    full = NystromLapRLSRegressor(
        **kw, preconditioner_options={"n_rows": X.shape[0], "n_labeled_rows": X.shape[0]}
    ).fit(X, y, laplacian=L)
    assert full.n_iter_ <= 2
    small = NystromLapRLSRegressor(
        **kw, preconditioner_options={"n_rows": 1, "n_labeled_rows": 1}
    ).fit(X, y, laplacian=L)
    assert small.n_iter_ > full.n_iter_
    np.testing.assert_allclose(small.transduction_, full.transduction_, rtol=1e-4, atol=1e-4)
    with pytest.raises(TypeError, match="'preconditioner_options' parameter .* must be .*'dict'"):
        NystromLapRLSRegressor(**kw, preconditioner_options=[("n_rows", 3)]).fit(X, y, laplacian=L)
    with pytest.raises(TypeError, match="unexpected keyword"):
        NystromLapRLSRegressor(**kw, preconditioner_options={"bogus": 1}).fit(X, y, laplacian=L)


def test_pcg_breakdown_is_retried_with_a_pivot_floor(problem, monkeypatch):
    # A breakdown (pᵀHp ≤ 0 or rᵀM⁻¹r ≤ 0) is what a near-singular K_ss did on skin_nonskin; here
    # the first preconditioner is made indefinite on purpose, and the retry (which asks for the
    # T pivot floor) gets the real one.
    import semiscale.solvers.hessian_system as krylov
    from semiscale.solvers.preconditioners import JacobiPreconditioner

    X, y, L = problem
    real = krylov.make_preconditioner
    calls = []

    def first_broken(name, hessian, **options):
        calls.append(options.get("t_min_pivot"))
        if len(calls) == 1:
            broken = JacobiPreconditioner(np.ones(hessian.shape[0]))
            broken.diagonal = -broken.diagonal  # P = -I: rᵀP⁻¹r < 0 at once
            return broken
        return real(name, hessian, **options)

    monkeypatch.setattr(krylov, "make_preconditioner", first_broken)
    est = NystromLapRLSRegressor(**KW, n_centers=0.5, random_state=0).fit(X, y, laplacian=L)
    monkeypatch.undo()
    reference = NystromLapRLSRegressor(**KW, n_centers=0.5, random_state=0).fit(X, y, laplacian=L)
    assert calls[0] is None and calls[1] == krylov.T_MIN_PIVOT
    assert est.solver_info_["converged"] and "preconditioner_retry" in est.solver_info_
    assert est.residuals_.shape[0] == est.n_iter_ + 1
    np.testing.assert_allclose(est.transduction_, reference.transduction_, rtol=1e-4, atol=1e-4)


def test_auto_centers_shrink_to_the_memory_budget():
    from semiscale._memory import MemoryBudgetError
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(2000, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    roomy = NystromLapRLSClassifier(random_state=0).fit(X, y_ssl)
    assert roomy.X_fit_.shape[0] == 1000
    # 12 MiB cannot hold 1,000 centers' K_ss and preconditioner (4 × 8 MB): fewer centers
    small = NystromLapRLSClassifier(memory_budget="12MiB", random_state=0).fit(X, y_ssl)
    assert 50 <= small.X_fit_.shape[0] < 1000
    assert np.mean(small.transduction_ == y) > 0.9
    # an explicit n_centers is kept, and refused when it does not fit
    with pytest.raises(MemoryBudgetError, match="12"):
        NystromLapRLSClassifier(n_centers=1000, memory_budget="12MiB").fit(X, y_ssl)


@pytest.mark.parametrize("cls", [NystromLapRLSClassifier, NystromLapRLSRegressor])
def test_label_diffusion_with_a_bias_is_refused_naming_both_parameters(cls):
    # Before: "label_diffusion applies to the squared loss only", though the loss is squared.
    X, y = make_two_moons(n_samples=200, noise=0.1, random_state=0)
    y = np.where(
        np.isin(np.arange(200), [0, 1, 100, 101]),
        y,
        -1 if cls is NystromLapRLSClassifier else np.nan,
    )
    with pytest.raises(ValueError, match="label_diffusion=.*fit_intercept=True.*label_diffusion=0"):
        cls(fit_intercept=True, label_diffusion=3, n_centers=20, random_state=0).fit(X, y)
    fitted = cls(fit_intercept=True, label_diffusion=0, n_centers=20, random_state=0).fit(X, y)
    assert np.all(np.isfinite(fitted.predict(X)))
