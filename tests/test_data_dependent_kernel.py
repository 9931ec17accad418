"""DataDependentKernel (paper 002) against the dense formulas of eqs. (4), (6) and (7)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC

from oracles import data_dependent_kernel, landmark_regularizer, rbf_gram
from semiscale.graph import DisconnectedGraphWarning, KNNGraph
from semiscale.kernels import RBF, DataDependentKernel, Linear
from semiscale.kernels._data_dependent_fit import LandmarkWarning
from semiscale.kernels.data_dependent import BASE_WIDTH_FACTOR, paper_graph
from semiscale.linalg import kernel_matmul

GAMMA = 0.5


def moons(n=120, seed=0, labels=3):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.08, random_state=seed)
    y_ssl = np.full(n, -1)
    rng = np.random.default_rng(seed)
    for c in (0, 1):
        y_ssl[rng.choice(np.flatnonzero(y == c), labels, replace=False)] = c
    return X, y, y_ssl


def kernel(**params):
    params.setdefault("ridge", 0.1)
    params.setdefault("eta", 5.0)
    params.setdefault("random_state", 0)
    params.setdefault("base_kernel", RBF(gamma=GAMMA))
    return DataDependentKernel(**params)


def oracle(fitted, L, A, B):
    """Eq. (6) on the fitted landmarks with Q̂ of eq. (7), all dense."""
    s = fitted.landmarks_
    P = fitted.landmark_points_
    Q_hat = landmark_regularizer(L, fitted.ridge, fitted.power, s)
    return data_dependent_kernel(
        rbf_gram(A, B, GAMMA),
        rbf_gram(P, A, GAMMA),
        rbf_gram(P, B, GAMMA),
        rbf_gram(P, P, GAMMA),
        Q_hat,
        fitted.eta,
    )


def default_laplacian(X, normalized=False):
    """The Laplacian of graph=None (normalized=True: paper_graph()'s)."""
    graph = KNNGraph(n_neighbors=5, weights="binary", symmetrize="union", normalized=normalized)
    return graph.fit(X).laplacian_


@pytest.mark.parametrize("solver", ["direct", "amg"])
@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("normalized", [False, True])
def test_every_point_a_landmark_is_the_exact_kernel(solver, power, normalized):
    """Theorem 3.2: with n̂ = n, eq. (6) with Q̂ = ((Q⁻¹)_ss)⁺ is eq. (4)."""
    X, _, y_ssl = moons(80)
    T = np.random.default_rng(1).normal(size=(15, 2))
    graph = paper_graph() if normalized else None
    fitted = kernel(n_landmarks=80, solver=solver, tol=1e-12, power=power, graph=graph)
    fitted = fitted.fit(X, y_ssl)
    exact = kernel(construction="exact", power=power, graph=graph).fit(X, y_ssl)
    assert fitted.landmarks_.size == 80
    for A, B in ((X, X), (T, X), (T, T)):
        np.testing.assert_allclose(fitted(A, B), exact(A, B), atol=1e-9)
    # eq. (4) written out: M = (I + ηQK)⁻¹Q with Q = (L + ridge·I)^p
    L = default_laplacian(X, normalized).toarray()
    Q = np.linalg.matrix_power(L + 0.1 * np.eye(80), power)
    K = rbf_gram(X, X, GAMMA)
    M = np.linalg.solve(np.eye(80) + 5.0 * Q @ K, Q)
    expected = rbf_gram(T, X, GAMMA) - 5.0 * rbf_gram(T, X, GAMMA) @ M @ K
    np.testing.assert_allclose(exact(T, X), expected, atol=1e-10)


@pytest.mark.parametrize("construction", ["landmarks", "budget"])
def test_landmark_kernel_equals_the_literal_formula(construction):
    """The stable (A + ηK̂)⁻¹ route equals eq. (6)'s (I + ηQ̂K̂)⁻¹Q̂ with a pseudo-inverse."""
    X, _, y_ssl = moons(150)
    T = np.random.default_rng(2).normal(size=(20, 2))
    fitted = kernel(n_landmarks=30, power=2, solver="direct", construction=construction).fit(
        X, y_ssl
    )
    P = fitted.landmark_points_
    if construction == "landmarks":
        L = default_laplacian(X)
        np.testing.assert_allclose(fitted(T, X), oracle(fitted, L, T, X), atol=1e-9)
    else:  # the graph on the landmarks alone: Q̂ = (L_b + ridge·I)^p
        L_b = default_laplacian(P).toarray()
        Q_hat = np.linalg.matrix_power(L_b + 0.1 * np.eye(30), 2)
        expected = data_dependent_kernel(
            rbf_gram(T, X, GAMMA),
            rbf_gram(P, T, GAMMA),
            rbf_gram(P, X, GAMMA),
            rbf_gram(P, P, GAMMA),
            Q_hat,
            5.0,
        )
        np.testing.assert_allclose(fitted(T, X), expected, atol=1e-9)
    # and with the fitted A itself: Q̂ = pinv(A)
    expected = data_dependent_kernel(
        rbf_gram(T, X, GAMMA),
        rbf_gram(P, T, GAMMA),
        rbf_gram(P, X, GAMMA),
        rbf_gram(P, P, GAMMA),
        np.linalg.pinv(fitted.A_, hermitian=True),
        5.0,
    )
    np.testing.assert_allclose(fitted(T, X), expected, atol=1e-9)


def test_defaults():
    """graph=None is the 5-NN 0-1 graph with D - W; the base RBF is 4x the median heuristic."""
    X, _, y_ssl = moons(100)
    fitted = DataDependentKernel(n_landmarks=20, random_state=0).fit(X, y_ssl)
    median = RBF(gamma="median").fit(X, random_state=0).gamma
    assert fitted.base_kernel_.gamma == pytest.approx(BASE_WIDTH_FACTOR * median)
    explicit = DataDependentKernel(
        RBF(gamma=BASE_WIDTH_FACTOR * median),
        KNNGraph(n_neighbors=5, weights="binary", symmetrize="union"),
        n_landmarks=20,
        random_state=0,
    ).fit(X, y_ssl)
    np.testing.assert_allclose(fitted(X), explicit(X), atol=1e-12)
    assert fitted.get_params()["eta"] == 100.0 and fitted.power == 2 and fitted.ridge == 1e-3


def test_landmarks_are_labeled_first():
    X, _, y_ssl = moons(150, labels=4)
    fitted = kernel(n_landmarks=20).fit(X, y_ssl)
    assert set(np.flatnonzero(y_ssl != -1)) <= set(fitted.landmarks_)
    assert fitted.landmarks_.size == 20 and np.unique(fitted.landmarks_).size == 20
    np.testing.assert_array_equal(fitted.landmark_points_, X[fitted.landmarks_])
    # more labeled points than landmarks: a subset of the labeled ones
    few = kernel(n_landmarks=5).fit(X, y_ssl)
    assert set(few.landmarks_) <= set(np.flatnonzero(y_ssl != -1))
    # NaN marks an unlabeled row whatever the marker
    y_nan = np.where(y_ssl == -1, np.nan, y_ssl.astype(float))
    assert set(kernel(n_landmarks=20).fit(X, y_nan).landmarks_) >= set(np.flatnonzero(y_ssl != -1))


def test_A_within_theorem_4_2_bound():
    """|A_ij − Q̂⁺_ij| ≤ (ε_i + ε_j + ε_iε_j)·√(Q̂⁺_ii Q̂⁺_jj) for the ε the solver reports."""
    X, _, y_ssl = moons(300)
    fitted = kernel(n_landmarks=25, power=2, solver="amg", tol=1e-5).fit(X, y_ssl)
    s = fitted.landmarks_
    L = default_laplacian(X).toarray()
    Q_inv = np.linalg.inv(np.linalg.matrix_power(L + 0.1 * np.eye(300), 2))[np.ix_(s, s)]
    eps = fitted.epsilon_
    assert eps.shape == (25,) and np.all(eps > 0) and np.all(eps < 1)
    d = np.sqrt(np.diag(Q_inv))
    bound = (eps[:, None] + eps[None, :] + np.outer(eps, eps)) * np.outer(d, d)
    error = np.abs(fitted.A_ - Q_inv)
    assert np.all(error <= bound)
    assert error.max() > 0  # a loose tolerance leaves a measurable error, inside the bound
    # and the bound is not vacuous: an ε overstated 100-fold would leave every ratio < 1e-2
    assert (error / bound).max() > 1e-2


def test_symmetric_psd_on_new_points():
    X, _, y_ssl = moons(200)
    fitted = kernel(n_landmarks=40, eta=50.0).fit(X, y_ssl)
    Z = np.vstack([np.random.default_rng(3).normal(size=(60, 2)), X[:60]])
    K = fitted(Z)
    np.testing.assert_allclose(K, K.T, atol=1e-13)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    np.testing.assert_allclose(fitted.diag(Z), np.diag(K), atol=1e-13)
    np.testing.assert_allclose(fitted(Z, Z.copy()), K, atol=1e-12)
    # the correction only removes: K̃(x, x) ≤ K(x, x) = 1
    assert np.all(np.diag(K) <= 1 + 1e-12) and fitted.kappa2 == 1.0


def test_svc_callable_equals_precomputed():
    X, y, y_ssl = moons(150)
    fitted = kernel(n_landmarks=30).fit(X, y_ssl)
    lab = y_ssl != -1
    T = np.random.default_rng(4).normal(size=(40, 2))
    by_callable = SVC(kernel=fitted, C=10.0).fit(X[lab], y_ssl[lab])
    by_matrix = SVC(kernel="precomputed", C=10.0).fit(fitted(X[lab], X[lab]), y_ssl[lab])
    np.testing.assert_array_equal(by_callable.predict(T), by_matrix.predict(fitted(T, X[lab])))
    np.testing.assert_allclose(
        by_callable.decision_function(T),
        by_matrix.decision_function(fitted(T, X[lab])),
        atol=1e-10,
    )


@pytest.mark.parametrize("construction", ["landmarks", "exact"])
def test_blocks_under_a_tiny_budget_equal_dense(construction):
    X, _, y_ssl = moons(100)
    fitted = kernel(n_landmarks=30, construction=construction).fit(X, y_ssl)
    T = np.random.default_rng(5).normal(size=(37, 2))
    dense = fitted(T, X)
    budget = fitted._block_plan(T, X)[1] * 3 + fitted._block_plan(T, X)[2]
    pieces = [(rows, K.copy()) for rows, K in fitted.blocks(T, X, memory_budget=budget)]
    assert len(pieces) > 5
    out = np.empty_like(dense)
    for rows, K in pieces:
        out[rows] = K
    np.testing.assert_allclose(out, dense, atol=1e-13)
    V = np.random.default_rng(6).normal(size=(100, 3))
    np.testing.assert_allclose(
        kernel_matmul(fitted, T, X, V, memory_budget=budget), dense @ V, atol=1e-12
    )
    sym = [K.copy() for _, K in fitted.blocks(X, memory_budget=budget)]
    np.testing.assert_allclose(np.vstack(sym), fitted(X), atol=1e-13)


def test_float32_and_sparse_inputs():
    X, _, y_ssl = moons(100)
    fitted = kernel(n_landmarks=20).fit(X, y_ssl)
    T = np.random.default_rng(7).normal(size=(10, 2))
    K32 = fitted(T.astype(np.float32), X.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, fitted(T, X), atol=1e-5)
    sparse = kernel(n_landmarks=20).fit(sp.csr_matrix(X), y_ssl)
    np.testing.assert_array_equal(sparse.landmarks_, fitted.landmarks_)
    np.testing.assert_allclose(sparse(sp.csr_matrix(T), X), fitted(T, X), atol=1e-10)


def test_with_ambient_equals_a_fresh_fit():
    X, _, y_ssl = moons(120)
    fitted = kernel(n_landmarks=30).fit(X, y_ssl)
    T = np.random.default_rng(8).normal(size=(20, 2))
    for eta, base in ((0.5, None), (None, RBF(gamma=2.0)), (20.0, Linear())):
        changed = fitted.with_ambient(eta=eta, base_kernel=base)
        params = {"eta": eta or fitted.eta, "base_kernel": base or RBF(gamma=GAMMA)}
        fresh = kernel(n_landmarks=30, **params).fit(X, y_ssl)
        np.testing.assert_array_equal(changed.landmarks_, fresh.landmarks_)
        np.testing.assert_allclose(changed(T, X), fresh(T, X), atol=1e-12)
        assert changed.get_params()["eta"] == params["eta"]
    np.testing.assert_allclose(fitted(T, X), kernel(n_landmarks=30).fit(X, y_ssl)(T, X))
    # a heuristic width needs the training points, as in fit
    with pytest.raises(ValueError, match="pass X="):
        fitted.with_ambient(base_kernel=RBF(gamma="median"))
    median = fitted.with_ambient(base_kernel=RBF(gamma="median"), X=X)
    fresh = kernel(n_landmarks=30).set_params(base_kernel=RBF(gamma="median")).fit(X, y_ssl)
    np.testing.assert_allclose(median(T, X), fresh(T, X), atol=1e-12)
    exact = kernel(construction="exact").fit(X, y_ssl)
    np.testing.assert_allclose(
        exact.with_ambient(eta=0.5)(T, X),
        kernel(construction="exact", eta=0.5).fit(X, y_ssl)(T, X),
        atol=1e-12,
    )


def test_random_state():
    X, _, y_ssl = moons(150, labels=1)
    free = DataDependentKernel(RBF(gamma=GAMMA), n_landmarks=20, landmark_selection="random")
    a, b = free.fit(X, random_state=3), free.fit(X, random_state=3)
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)
    assert not np.array_equal(a.landmarks_, free.fit(X, random_state=4).landmarks_)
    own = clone(free).set_params(random_state=3)
    np.testing.assert_array_equal(own.fit(X, random_state=99).landmarks_, a.landmarks_)
    assert not hasattr(free, "landmarks_")  # fit returns a copy


def test_semiscale_estimator_protocol():
    from semiscale.models import LapRLSClassifier

    X, y, y_ssl = moons(150)
    model = LapRLSClassifier(kernel=kernel(n_landmarks=30), intrinsic_reg=0).fit(X, y_ssl)
    assert isinstance(model.kernel_, DataDependentKernel) and hasattr(model.kernel_, "A_")
    assert np.mean(model.predict(X) == y) > 0.8
    # graph="estimator": the Laplacian the estimator builds for its own intrinsic term
    model = LapRLSClassifier(kernel=kernel(n_landmarks=30, graph="estimator")).fit(X, y_ssl)
    assert model.kernel_.landmarks_.size == 30
    with pytest.raises(ValueError, match="graph='estimator'"):
        LapRLSClassifier(kernel=kernel(graph="estimator"), intrinsic_reg=0).fit(X, y_ssl)


# --------------------------------------------------------------------------- edge cases
def test_disconnected_graph_warns_for_a_component_without_landmarks():
    """A component without a landmark is invisible to the intrinsic term: fit warns, naming it."""
    X, _, _ = moons(60)
    Xd = np.vstack([X, X[:20] + 100.0])  # a far copy of 20 points: its own component
    y_ssl = np.full(80, -1)
    y_ssl[:6] = [0, 1, 0, 1, 0, 1]
    # labeled landmarks only, all in the first component
    with pytest.warns(DisconnectedGraphWarning, match="20 of 80 training points.*1 connected"):
        fitted = kernel(n_landmarks=6).fit(Xd, y_ssl)
    np.testing.assert_array_equal(fitted.landmarks_, np.arange(6))
    # far from every landmark k̂ vanishes: the graph adds nothing there, K̃ is the base kernel
    far = Xd[60:]
    np.testing.assert_allclose(fitted(far), rbf_gram(far, far, GAMMA), atol=1e-12)
    assert np.linalg.eigvalsh(fitted(Xd)).min() > -1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error", DisconnectedGraphWarning)
        kernel(n_landmarks=80).fit(Xd, y_ssl)  # every component holds landmarks: silent


def test_ridge_must_be_positive():
    X, _, y_ssl = moons(50)
    for ridge in (0, 0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="ridge"):
            kernel(ridge=ridge).fit(X, y_ssl)
    from semiscale.kernels._data_dependent_fit import regularizer_base

    with pytest.raises(ValueError, match="ridge must be > 0.*singular"):
        regularizer_base(default_laplacian(X), 0.0)


def test_more_landmarks_than_points():
    X, _, y_ssl = moons(40)
    with pytest.warns(LandmarkWarning, match="n_landmarks=250 is larger than the 40"):
        fitted = kernel().fit(X, y_ssl)
    np.testing.assert_array_equal(fitted.landmarks_, np.arange(40))


def test_labeled_selection_without_labels():
    X, _, _ = moons(60)
    with pytest.warns(LandmarkWarning, match="no labeled point"):
        a = kernel(n_landmarks=10).fit(X, np.full(60, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LandmarkWarning)
        b = kernel(n_landmarks=10).fit(X)  # y=None: random, silently
    np.testing.assert_array_equal(a.landmarks_, b.landmarks_)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"power": 0}, "power"),
        ({"power": 1.5}, "power"),
        ({"n_landmarks": 0}, "n_landmarks"),
        ({"eta": 0.0}, "eta"),
        ({"eta": -1}, "eta"),
        ({"tol": 0}, "tol"),
        ({"landmark_selection": "first"}, "landmark_selection"),
        ({"construction": "full"}, "construction"),
        ({"solver": "lu"}, "solver"),
        ({"graph": "knn"}, "graph"),
        ({"base_kernel": "rbf"}, "base_kernel"),
        ({"graph": KNNGraph(power=2)}, "graph has power=2"),
        ({"graph": KNNGraph(ridge=0.1)}, "graph has ridge=0.1"),
    ],
)
def test_bad_parameters(params, match):
    X, _, y_ssl = moons(50)
    with pytest.raises(ValueError, match=match):
        kernel(**params).fit(X, y_ssl)


def test_other_errors():
    X, _, y_ssl = moons(50)
    with pytest.raises(NotFittedError, match="not fitted.*fit"):
        kernel()(X)
    with pytest.raises(NotFittedError):
        SVC(kernel=kernel()).fit(X, y_ssl)
    with pytest.raises(ValueError, match="construction='landmarks'"):
        kernel(construction="exact").fit(np.zeros((5001, 2)))
    with pytest.raises(ValueError, match="y must have shape"):
        kernel().fit(X, y_ssl[:-1])
    with pytest.raises(ValueError, match="pass a graph object"):
        kernel(graph="estimator", construction="budget").fit(X, laplacian=default_laplacian(X))
    with pytest.raises(ValueError, match="laplacian has shape"):
        kernel(graph="estimator").fit(X, laplacian=default_laplacian(X[:10]))


def test_clone_keeps_the_fit_for_scikit_learn_tools():
    """cross_val_score clones SVC(kernel=fitted), and with it the kernel: the fit must survive."""
    from sklearn.model_selection import cross_val_score

    X, y, y_ssl = moons(150, labels=8)
    fitted = kernel(n_landmarks=30).fit(X, y_ssl)
    copy = clone(fitted)
    assert copy is not fitted and copy.landmarks_ is fitted.landmarks_
    np.testing.assert_array_equal(copy(X[:5], X), fitted(X[:5], X))
    assert not hasattr(clone(kernel()), "landmarks_")
    lab = y_ssl != -1
    scores = cross_val_score(SVC(kernel=fitted, C=10.0), X[lab], y[lab], cv=2)
    assert scores.shape == (2,) and np.all(scores > 0.5)


def test_landmark_columns_in_batches(monkeypatch):
    """Columns solved in several batches (large graphs) give the kernel of one batch."""
    from semiscale.kernels import _data_dependent_fit

    X, _, y_ssl = moons(120)
    one = kernel(n_landmarks=40, solver="amg", tol=1e-12).fit(X, y_ssl)
    monkeypatch.setattr(_data_dependent_fit, "RHS_BYTES", 0)  # batches of LANDMARK_BATCH_MIN
    batched = kernel(n_landmarks=40, solver="amg", tol=1e-12).fit(X, y_ssl)
    assert _data_dependent_fit.LANDMARK_BATCH_MIN < 40
    np.testing.assert_allclose(batched.A_, one.A_, rtol=1e-9)
    assert batched.epsilon_.shape == batched.residual_.shape == (40,)
    # converged_: every nested solve reached tol; the outer residual of p = 2 nested solves
    # only comes near it (rounding of R·s_k, solvers/sdd.py): 4e-12 with a float32 V-cycle
    assert batched.converged_ and np.all(batched.residual_ <= 1e-10)


def test_labels_as_the_estimators_mark_them():
    """String labels with their own marker, and a regressor's 2-D targets with NaN rows."""
    X, y, y_ssl = moons(100, labels=3)
    first = set(np.flatnonzero(y_ssl != -1))
    names = np.where(y_ssl == -1, "?", np.where(y_ssl == 1, "b", "a")).astype(object)
    fitted = kernel(n_landmarks=20, unlabeled="?").fit(X, names)
    assert first <= set(fitted.landmarks_)
    Y = np.where((y_ssl != -1)[:, None], np.c_[y, 2.0 * y], np.nan)
    Y[np.flatnonzero(y_ssl != -1)[0], 1] = np.nan  # a partly labeled row is labeled
    assert first <= set(kernel(n_landmarks=20).fit(X, Y).landmarks_)
    with pytest.raises(ValueError, match="y must have shape"):
        kernel().fit(X, np.zeros((100, 2, 2)))


def test_set_params_on_a_fitted_kernel_leaves_no_stale_fit():
    """η changed on a fitted kernel refactorizes (as with_ambient); a graph/solve parameter
    drops the fit; verbose and memory_budget keep it.  Before: the old factor with the new η."""
    from sklearn.model_selection import GridSearchCV

    X, y, y_ssl = moons(120, labels=8)
    fitted = kernel(n_landmarks=30).fit(X, y_ssl)
    T = np.random.default_rng(9).normal(size=(10, 2))
    changed = clone(fitted).set_params(eta=50.0)
    np.testing.assert_allclose(changed(T, X), kernel(n_landmarks=30, eta=50.0).fit(X, y_ssl)(T, X))
    np.testing.assert_allclose(changed(T, X), fitted.with_ambient(eta=50.0)(T, X), atol=1e-12)
    np.testing.assert_allclose(fitted(T, X), kernel(n_landmarks=30).fit(X, y_ssl)(T, X))
    for params in ({"power": 1}, {"ridge": 1.0}, {"base_kernel": RBF(gamma=2.0)}, {"tol": 1e-3}):
        with pytest.raises(NotFittedError, match="set_params"):
            clone(fitted).set_params(**params)(T, X)
    with pytest.raises(NotFittedError):
        clone(fitted).set_params(base_kernel__gamma=2.0)(T, X)
    kept = clone(fitted).set_params(verbose=1, memory_budget=2**20, eta=fitted.eta)
    assert kept.factor_ is fitted.factor_
    # a search over the SVC's kernel__eta sees each η, not the fitted one
    lab = y_ssl != -1
    search = GridSearchCV(SVC(kernel=fitted, C=10.0), {"kernel__eta": [5.0, 1e4]}, cv=2)
    search.fit(X[lab], y[lab])
    best = search.best_estimator_.kernel
    assert best.eta == search.best_params_["kernel__eta"]
    np.testing.assert_allclose(best(T, X), fitted.with_ambient(eta=best.eta)(T, X), atol=1e-12)


def test_semiscale_estimators_hand_the_kernel_their_marker():
    """A kernel model reads y with its own marker: the kernel's landmark selection must too.
    Before, the kernel read y with its default -1: strings marked '?' all counted as labeled
    (random landmarks), and a regressor's -1 targets counted as unlabeled."""
    from semiscale.models import LapRLSClassifier, LapRLSRegressor, SparseLapCVMClassifier

    X, y, y_ssl = moons(150, labels=3)
    first = set(np.flatnonzero(y_ssl != -1))
    names = np.where(y_ssl == -1, "?", np.where(y_ssl == 1, "b", "a")).astype(object)
    ddk = kernel(n_landmarks=20)
    for model in (
        LapRLSClassifier(kernel=ddk, unlabeled="?", intrinsic_reg=0),
        SparseLapCVMClassifier(kernel=ddk, unlabeled="?"),
    ):
        assert first <= set(model.fit(X, names).kernel_.landmarks_), type(model).__name__
        assert model.kernel is ddk and ddk.unlabeled == -1  # the parameter is not changed
    targets = np.where(y_ssl == -1, np.nan, 2.0 * y_ssl - 1.0)  # ±1 targets, NaN unlabeled
    regressor = LapRLSRegressor(kernel=ddk, intrinsic_reg=0).fit(X, targets)
    assert first <= set(regressor.kernel_.landmarks_)


def test_with_ambient_resolves_a_heuristic_width_with_the_fits_seed():
    """Above 1,000 points the median heuristic samples: with_ambient must sample as the fit
    did when the seed came from fit's random_state (an estimator's), not the kernel's."""
    from sklearn.datasets import make_moons

    X, _ = make_moons(1500, noise=0.08, random_state=0)
    free = DataDependentKernel(RBF(gamma=GAMMA), n_landmarks=20, ridge=0.1, eta=5.0)
    fitted = free.fit(X, random_state=3)
    changed = fitted.with_ambient(base_kernel=RBF(gamma="median"), X=X, random_state=3)
    fresh = clone(free).set_params(base_kernel=RBF(gamma="median")).fit(X, random_state=3)
    assert changed.base_kernel_.gamma == fresh.base_kernel_.gamma
    np.testing.assert_allclose(changed(X[:10], X[:50]), fresh(X[:10], X[:50]), atol=1e-12)
