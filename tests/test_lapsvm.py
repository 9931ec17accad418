"""LapSVC: the dual of paper 001 §2.1 and the primal Newton solver (issue 13)."""

import numpy as np
import pytest
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from oracles import rbf_gram
from reference_problems import two_moons_ssl
from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import LapSVC, NystromLapSVC
from sklearn_checks import expected_failed_checks


def _moons(n=120, seed=0, per_class=3):
    return two_moons_ssl(n, per_class, noise=0.08, seed=seed)


# centring=False: these tests check the optimisation itself (KKT conditions, objectives, dual
# against primal), which the centring shift of the decision would move
COMMON = dict(kernel=RBF(gamma=4.0), ambient_reg=1e-3, intrinsic_reg=10.0, centring=False)


def _hinge_objective(model, X, y_ssl, L):
    """(1/l) Σ hinge + ambient_reg αᵀKα + intrinsic_reg fᵀLf/tr(L) at the fitted model."""
    K = rbf_gram(X, X, 4.0)
    alpha = model.dual_coef_[:, 0]
    f = K @ alpha
    lab = y_ssl != -1
    s = np.where(y_ssl[lab] == 1, 1.0, -1.0)
    hinge = np.maximum(0.0, 1.0 - s * (f[lab] + model.intercept_[0])).mean()
    return hinge + 1e-3 * alpha @ K @ alpha + 10.0 * f @ (L @ f) / L.diagonal().sum()


def test_dual_satisfies_the_kkt_conditions_and_beats_the_smooth_primals():
    X, _, y_ssl = _moons()
    L = KNNGraph(n_neighbors=6, method="exact").fit(X).laplacian_
    dual = LapSVC(formulation="dual", tol=1e-8, **COMMON).fit(X, y_ssl, laplacian=L)
    lab = np.flatnonzero(y_ssl != -1)
    s = np.where(y_ssl[lab] == 1, 1.0, -1.0)
    margin = s * dual.decision_function(X)[lab]
    support = np.isin(lab, dual.support_[0])
    # β = 0 off the support: y f ≥ 1; on it y f ≤ 1 (= 1 where 0 < β < 1)
    assert np.all(margin[~support] >= 1 - 1e-6)
    assert np.all(margin[support] <= 1 + 1e-6)
    # the hinge objective: the dual's minimiser is no worse than the smooth primals' solutions
    best = _hinge_objective(dual, X, y_ssl, L)
    for loss in ("squared_hinge", "huber_hinge"):
        primal = LapSVC(loss=loss, **COMMON).fit(X, y_ssl, laplacian=L)
        assert best <= _hinge_objective(primal, X, y_ssl, L) + 1e-9


def test_huber_primal_tends_to_the_dual_as_the_width_shrinks():
    X, _, y_ssl = _moons(seed=1)
    L = KNNGraph(n_neighbors=6, method="exact").fit(X).laplacian_
    f_dual = LapSVC(formulation="dual", tol=1e-8, **COMMON).fit(X, y_ssl, laplacian=L)
    f_dual = f_dual.decision_function(X)
    errors = []
    for h in (1e-1, 1e-2, 1e-3):
        primal = LapSVC(loss="huber_hinge", huber_width=h, **COMMON).fit(X, y_ssl, laplacian=L)
        errors.append(np.abs(primal.decision_function(X) - f_dual).max())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 1e-2 * np.abs(f_dual).max()


def test_dual_without_graph_is_scikit_learns_svc():
    """intrinsic_reg = 0: SVC(C=1) on the kernel K / (2 l ambient_reg) of the labeled points."""
    X, _, y_ssl = _moons(seed=2, per_class=8)
    model = LapSVC(
        formulation="dual", tol=1e-8, kernel=RBF(gamma=4.0), ambient_reg=1e-2, intrinsic_reg=0.0
    ).fit(X, y_ssl)
    lab = y_ssl != -1
    scale = 2 * lab.sum() * 1e-2
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-8).fit(
        rbf_gram(X[lab], X[lab], 4.0) / scale, y_ssl[lab]
    )
    X_new = X[:15] + 0.05
    expected = svc.decision_function(rbf_gram(X_new, X[lab], 4.0) / scale)
    np.testing.assert_allclose(model.decision_function(X_new), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("formulation", ["primal", "dual"])
def test_two_moons_one_label_per_class(formulation):
    X, y, y_ssl = _moons(n=400, seed=3, per_class=1)
    X_test, y_test = make_two_moons(500, noise=0.08, random_state=4)
    model = LapSVC(formulation=formulation, random_state=0).fit(X, y_ssl)
    assert (model.transduction_ == y).mean() > 0.99
    assert model.score(X_test, y_test) > 0.99
    svm = LapSVC(formulation=formulation, intrinsic_reg=0.0, random_state=0).fit(X, y_ssl)
    assert (svm.transduction_ == y).mean() < 0.95  # the graph is what separates the moons


def test_multiclass_one_vs_rest_and_string_labels():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 40)
    X = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])[y] + 0.5 * rng.standard_normal((120, 2))
    labels = np.array(["a", "b", "c"])[y].astype(object)
    y_ssl = labels.copy()
    y_ssl[np.setdiff1d(np.arange(120), [0, 1, 40, 41, 80, 81])] = "?"
    for formulation in ("primal", "dual"):
        model = LapSVC(formulation=formulation, unlabeled="?", kernel=RBF(gamma=0.5))
        model = model.fit(X, y_ssl)
        assert model.decision_function(X).shape == (120, 3)
        assert model.dual_coef_.shape == (120, 3) and model.intercept_.shape == (3,)
        assert (model.predict(X) == labels).mean() > 0.95
        np.testing.assert_array_equal(model.predict(X), model.transduction_)


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(formulation="dual", loss="squared_hinge"), "hinge loss only"),
        (dict(formulation="primal", loss="hinge"), "smooth loss"),
        (dict(formulation="dual", fit_intercept=False), "fit_intercept"),
        (dict(formulation="dual", ambient_reg=0.0), "ambient_reg"),
        (dict(huber_width=0.0), "huber_width"),
        (dict(solver="qp"), "solver"),
        (dict(formulation="qp"), "formulation"),
    ],
)
def test_bad_parameters_are_refused_with_their_name(params, match):
    X, _, y_ssl = _moons()
    with pytest.raises(ValueError, match=match):
        LapSVC(**params).fit(X, y_ssl)


def test_one_labeled_class_and_memory_budget_are_refused():
    X, _, y_ssl = _moons()
    one_class = np.where(y_ssl == 1, -1, y_ssl)
    with pytest.raises(ValueError, match="class"):
        LapSVC(formulation="dual").fit(X, one_class)
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        LapSVC(formulation="dual", memory_budget=10_000).fit(X, y_ssl)


def _small_graph():
    return KNNGraph(n_neighbors=3)


# scikit-learn's checks of every estimator at its defaults run in tests/test_common.py (from
# the registry); here only the other solvers' configurations.
@parametrize_with_checks(
    [LapSVC(graph=_small_graph(), formulation="dual")],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible_dual(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ Nyström (reduced) LapSVM
@pytest.mark.parametrize("loss", ["squared_hinge", "huber_hinge"])
def test_nystrom_lapsvm_with_every_point_a_center_is_the_exact_primal(loss):
    X, _, y_ssl = _moons(n=150, seed=1, per_class=2)
    L = KNNGraph(n_neighbors=6, method="exact").fit(X).laplacian_
    exact = LapSVC(loss=loss, **COMMON).fit(X, y_ssl, laplacian=L)
    full = NystromLapSVC(loss=loss, n_centers=150, tol=1e-12, random_state=0, **COMMON)
    full.fit(X, y_ssl, laplacian=L)
    scale = np.abs(exact.decision_function(X)).max()
    np.testing.assert_allclose(
        full.decision_function(X), exact.decision_function(X), atol=1e-7 * scale
    )
    np.testing.assert_allclose(full.intercept_, exact.intercept_, atol=1e-7 * scale)


def test_reduced_lapsvm_on_two_moons_with_paper_001s_settings():
    """r = 200 random centers, β = 0.25 (paper 001 §4.1), one label per class, six draws:
    intrinsic_reg="auto" (10⁴ here) separates the moons on every draw; intrinsic_reg=1 does
    not, even for the exact dual without centring (the reason for the default)."""
    X_test, y_test = make_two_moons(1000, noise=0.08, random_state=6)
    weak = []
    for seed in range(6):
        X, y, y_ssl = _moons(n=2000, seed=seed, per_class=1)
        L = KNNGraph(random_state=0).fit(X).laplacian_
        model = NystromLapSVC(kernel=RBF(gamma=4.0), n_centers=200, random_state=0)
        model.fit(X, y_ssl, laplacian=L)
        assert model.X_fit_.shape == (200, 2) and model.center_index_.shape == (200,)
        assert (model.transduction_ == y).mean() > 0.99
        assert model.score(X_test, y_test) > 0.99
        one = LapSVC(formulation="dual", kernel=RBF(gamma=4.0), intrinsic_reg=1.0, centring=False)
        weak.append((one.fit(X, y_ssl, laplacian=L).transduction_ == y).mean())
    assert min(weak) < 0.9


@parametrize_with_checks(
    [NystromLapSVC(graph=_small_graph(), n_centers=0.5, random_state=0, solver="pcg")],
    expected_failed_checks=expected_failed_checks,
)
def test_nystrom_lapsvm_pcg_sklearn_compatible(estimator, check):
    check(estimator)


def test_primal_newton_steps_share_one_kernel_matrix_when_it_fits(monkeypatch):
    import semiscale.solvers.exact as exact

    calls = []
    original = exact.kernel_matrix
    monkeypatch.setattr(
        exact, "kernel_matrix", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    X, y = make_two_moons(120, noise=0.15, random_state=0)
    y_ssl = np.where(np.arange(120) % 6 == 0, y, -1)
    common = dict(
        formulation="primal", loss="huber_hinge", kernel=RBF(gamma=2.0), intrinsic_reg=1.0
    )
    cached = LapSVC(**common).fit(X, y_ssl)
    assert cached.solver_info_["newton_iterations"][0] >= 2
    assert len(calls) == 1
    calls.clear()
    # room for two n x n arrays but not three: K is recomputed at every step
    uncached = LapSVC(**common, memory_budget=3 * 120 * 120 * 8 - 1).fit(X, y_ssl)
    assert len(calls) >= uncached.solver_info_["newton_iterations"][0]
    # cached: the steps share one LU (Woodbury); uncached: a dense LU per step
    assert cached.solver_info_["active_set"] and "active_set" not in uncached.solver_info_
    f = uncached.decision_function(X)
    np.testing.assert_allclose(cached.decision_function(X), f, atol=1e-8 * np.abs(f).max())


def test_huber_continuation_reaches_the_same_minimiser_in_fewer_newton_steps(monkeypatch):
    """Widths 1, 0.1, 0.01 in turn (HuberHingeLoss.continuation) against Newton from f = 0."""
    from sklearn.datasets import make_classification

    from semiscale.losses import HuberHingeLoss

    X, y = make_classification(200, 10, n_informative=5, flip_y=0.05, random_state=0)
    y_ssl = np.where(np.arange(200) < 80, y, -1)
    L = KNNGraph(method="exact").fit(X).laplacian_
    continued = LapSVC(loss="huber_hinge").fit(X, y_ssl, laplacian=L)
    (stages,) = continued.solver_info_["continuation"]  # one target column
    assert [s["loss"] for s in stages] == [
        "HuberHingeLoss(h=1.0)",
        "HuberHingeLoss(h=0.1)",
        "HuberHingeLoss(h=0.01)",
    ]
    steps = continued.solver_info_["newton_iterations"][0]
    assert steps == sum(s["newton_iterations"] for s in stages)
    monkeypatch.setattr(HuberHingeLoss, "continuation", lambda self: [self])
    direct = LapSVC(loss="huber_hinge").fit(X, y_ssl, laplacian=L)
    assert "continuation" not in direct.solver_info_
    # measured: 23 steps against 40 (both converged, no ConvergenceWarning)
    assert steps < direct.solver_info_["newton_iterations"][0]
    assert stages[-1]["objective"] == continued.solver_info_["objective_history"][0]
    assert all(len(s["objective"]) == s["newton_iterations"] + 1 for s in stages)
    f = continued.decision_function(X)
    np.testing.assert_allclose(f, direct.decision_function(X), atol=1e-7 * np.abs(f).max())
    np.testing.assert_allclose(continued.intercept_, direct.intercept_, atol=1e-7)


@pytest.mark.parametrize(
    ("h", "widths"),
    [
        (0.01, [1.0, 0.1, 0.01]),
        (1.0, [1.0]),
        (0.5, [1.0, 0.5]),
        (2.0, [2.0]),
        (1e-300, [1.0, 1e-100, 1e-200, 1e-300]),  # at most 3 smoother losses
    ],
)
def test_huber_continuation_widths(h, widths):
    from semiscale.losses import HuberHingeLoss, SquaredHingeLoss

    stages = HuberHingeLoss(h).continuation()
    np.testing.assert_allclose([s.h for s in stages], widths, rtol=1e-12)
    assert stages[-1].h == h
    loss = SquaredHingeLoss()
    assert loss.continuation() == [loss]


def _three_classes(n=150):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n, 8, n_informative=5, n_classes=3, n_clusters_per_class=1, random_state=1
    )
    return X, np.where(np.arange(n) < n // 3, y, -1)


@pytest.mark.parametrize(
    "params",
    [
        dict(),
        dict(loss="huber_hinge"),
        dict(fit_intercept=False),
        dict(graph=KNNGraph(normalized=True)),  # the bias column lives off the labeled rows
        dict(loss="huber_hinge", graph=KNNGraph(normalized=True)),
        dict(loss="huber_hinge", ambient_reg=1e-8),  # B0's only ridge is tiny
    ],
)
def test_newton_steps_share_one_lu_and_equal_a_dense_lu_per_step(monkeypatch, params):
    """Woodbury on the active labeled rows (solvers.exact._ActiveSetFactor) against eq. (3)."""
    import semiscale.solvers.exact as exact

    X, y_ssl = _three_classes()
    factors, dense = [], []
    original_factor, original_dense = exact._ActiveSetFactor, exact.solve_or_lstsq
    monkeypatch.setattr(
        exact, "_ActiveSetFactor", lambda *a: factors.append(1) or original_factor(*a)
    )
    monkeypatch.setattr(
        exact, "solve_or_lstsq", lambda *a, **k: dense.append(1) or original_dense(*a, **k)
    )
    shared = LapSVC(**params).fit(X, y_ssl)
    assert shared.solver_info_["active_set"] is True
    assert len(factors) == 1 and dense == []  # one LU for 3 classes, every step and width
    monkeypatch.setattr(exact, "_solve_active_set", lambda *a: None)
    per_step = LapSVC(**params).fit(X, y_ssl)
    assert len(dense) == sum(per_step.solver_info_["newton_iterations"])
    X_new = X + 0.3 * np.random.default_rng(0).standard_normal(X.shape)  # points not fitted
    for points in (X, X_new):
        f = per_step.decision_function(points)
        np.testing.assert_allclose(shared.decision_function(points), f, atol=1e-6 * np.abs(f).max())
    # at ambient_reg = 1e-8 the bordered system's condition (~1e11) leaves the dense LU's own
    # bias uncertain at ~1e-4 (measured in review against an extended-precision solve)
    bias_tol = 1e-4 if params.get("ambient_reg") == 1e-8 else 1e-6
    np.testing.assert_allclose(shared.intercept_, per_step.intercept_, atol=bias_tol)
    assert shared.solver_info_["newton_iterations"] == per_step.solver_info_["newton_iterations"]


def test_an_inaccurate_shared_lu_falls_back_to_a_dense_lu(monkeypatch):
    import semiscale.solvers.exact as exact

    X, y_ssl = _three_classes()
    reference = LapSVC().fit(X, y_ssl).decision_function(X)
    monkeypatch.setattr(exact, "ACTIVE_SET_RESIDUAL_TOL", -1.0)  # every residual "too large"
    model = LapSVC().fit(X, y_ssl)
    assert "active_set" not in model.solver_info_
    np.testing.assert_allclose(
        model.decision_function(X), reference, atol=1e-5 * np.abs(reference).max()
    )


def test_shared_lu_over_the_memory_gate_is_not_built(monkeypatch):
    """Most points labeled: the factor's G and K_l. would exceed two n x n arrays."""
    import semiscale.solvers.exact as exact

    X, y = _three_classes()[0], _three_classes()[1]
    y_all = np.where(y == -1, 0, y)
    y_ssl = np.where(np.arange(y.size) < 0.6 * y.size, y_all, -1)
    built = []
    original = exact._ActiveSetFactor
    monkeypatch.setattr(exact, "_ActiveSetFactor", lambda *a: built.append(1) or original(*a))
    model = LapSVC().fit(X, y_ssl)
    assert built == [] and "active_set" not in model.solver_info_


def test_continuation_is_reported_per_class():
    X, y_ssl = _three_classes()
    info = LapSVC(loss="huber_hinge").fit(X, y_ssl).solver_info_
    assert len(info["continuation"]) == 3
    for column, stages in enumerate(info["continuation"]):
        assert sum(s["newton_iterations"] for s in stages) == info["newton_iterations"][column]
        assert stages[-1]["objective"] == info["objective_history"][column]


def test_huber_newton_without_ambient_reg_names_the_parameter():
    X, y_ssl = _three_classes()
    with pytest.raises(ValueError, match="raise ambient_reg"):
        LapSVC(loss="huber_hinge", ambient_reg=0.0).fit(X, y_ssl)


@pytest.mark.parametrize("estimator", [LapSVC(), NystromLapSVC(n_centers=60, random_state=0)])
def test_centring_shifts_the_decision_to_the_labeled_prior(estimator):
    """centring=True: g = α (f − c) + (p₁ − p₀) with Σ d_i (f_i − c) = 0 over the training
    points (d = diag L) and p the labeled class proportions; centring=False: the same f,
    neither shifted nor scaled (the papers' sign(f + b))."""
    from sklearn.base import clone

    X, y, y_ssl = _moons(n=150, seed=3, per_class=1)
    y_ssl[np.flatnonzero((y == 0) & (y_ssl == -1))[:2]] = 0  # 3 labels of class 0, 1 of class 1
    L = KNNGraph(method="exact").fit(X).laplacian_
    centred = clone(estimator).fit(X, y_ssl, laplacian=L)
    plain = clone(estimator).set_params(centring=False).fit(X, y_ssl, laplacian=L)
    d = L.diagonal()
    g, f = centred.decision_function(X), plain.decision_function(X)
    assert d @ g / d.sum() == pytest.approx(0.25 - 0.75)
    (alpha, shift), residual, *_ = np.linalg.lstsq(np.column_stack([f, np.ones_like(f)]), g)
    assert alpha == pytest.approx(centred.decision_scale_) and alpha > 0
    np.testing.assert_allclose(alpha * f + shift, g, atol=1e-9 * np.abs(g).max())
    # no graph term: nothing to centre on, no prior added
    no_graph = clone(estimator).set_params(intrinsic_reg=0.0).fit(X, y_ssl)
    unshifted = clone(estimator).set_params(intrinsic_reg=0.0, centring=False).fit(X, y_ssl)
    np.testing.assert_allclose(no_graph.intercept_, unshifted.intercept_)
    assert not hasattr(no_graph, "decision_scale_")


def test_centring_rescues_one_label_per_class():
    """Two clusters of 150 points in 5-D, one label each: the plain LapSVM's f decays away from
    the labels and sign(f + b) puts most points in one class (0.533 measured); 0.98 centred."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (150, 5)), rng.normal(0, 1, (150, 5)) + [4, 0, 0, 0, 0]])
    y = np.repeat([0, 1], 150)
    y_ssl = np.full(300, -1)
    y_ssl[[0, 150]] = [0, 1]
    L = KNNGraph(n_neighbors=6, method="exact").fit(X).laplacian_
    scores = {}
    for centring in (True, False):
        model = LapSVC(kernel=RBF(gamma="mean"), centring=centring).fit(X, y_ssl, laplacian=L)
        scores[centring] = (model.transduction_ == y).mean()
    assert scores[True] > 0.95 and scores[False] < 0.7
