import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_ridge import KernelRidge

from oracles import (
    add_labeled_prior,
    centre_by_degree,
    dense_laplacian,
    laprls_train_decision,
    rbf_gram,
    zero_mean_class_targets,
)
from semiscale._memory import MemoryBudgetError
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, gamma_from_sigma
from semiscale.models import LapRLSClassifier, LapRLSRegressor


def _moons(n, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    upper = rng.random(n) < 0.5
    X = np.where(
        upper[:, None],
        np.c_[np.cos(t), np.sin(t)],
        np.c_[1 - np.cos(t), 0.5 - np.sin(t)],
    )
    X += noise * rng.standard_normal(X.shape)
    return X, upper.astype(int)


@pytest.fixture
def moons():
    X, y = _moons(300)
    y_ssl = np.full_like(y, -1)
    rng = np.random.default_rng(1)
    for c in (0, 1):
        y_ssl[rng.choice(np.flatnonzero(y == c), 3, replace=False)] = c
    return X, y, y_ssl


def test_rls_equals_kernel_ridge():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(120)
    y_ssl = y.copy()
    y_ssl[40:] = np.nan
    ambient_reg = 1e-3
    model = LapRLSRegressor(kernel=RBF(gamma=0.3), ambient_reg=ambient_reg, intrinsic_reg=0.0)
    model.fit(X, y_ssl)
    krr = KernelRidge(alpha=40 * ambient_reg, kernel="rbf", gamma=0.3).fit(X[:40], y[:40])
    X_test = rng.standard_normal((50, 4))
    np.testing.assert_allclose(model.predict(X_test), krr.predict(X_test), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(model.transduction_, krr.predict(X), rtol=1e-8, atol=1e-8)
    assert model.graph_ is None


@pytest.mark.parametrize("ambient_reg,intrinsic_reg", [(1e-3, 1.0), (1e-2, 50.0), (1e-4, 5.0)])
@pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")
def test_laprls_matches_dense_oracle(moons, ambient_reg, intrinsic_reg):
    X, _, y_ssl = moons
    graph = KNNGraph(n_neighbors=6, bandwidth=0.3)
    model = LapRLSClassifier(
        kernel=RBF(gamma=2.0), graph=graph, ambient_reg=ambient_reg, intrinsic_reg=intrinsic_reg
    ).fit(X, y_ssl)
    L = model.graph_.laplacian_
    np.testing.assert_allclose(L.toarray(), dense_laplacian(model.graph_.adjacency_), atol=1e-12)
    labeled = y_ssl != -1
    l = labeled.sum()
    Y = zero_mean_class_targets(y_ssl)
    trace = L.diagonal().sum()
    f = laprls_train_decision(
        rbf_gram(X, X, 2.0), L, labeled, Y, l * ambient_reg, l * intrinsic_reg / trace
    )
    f = centre_by_degree(f, L)  # Σ_i d_i f(x_i) = 0, d = diag(L)
    f = add_labeled_prior(f, y_ssl)  # α f + the labeled proportions
    np.testing.assert_allclose(model.decision_function(X), f[:, 0], rtol=1e-6, atol=1e-7)
    assert model.intrinsic_reg_ == intrinsic_reg


@pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")
def test_laplacian_scale_invariance_and_reuse(moons):
    """The intrinsic term is normalised by tr(L): rescaling L leaves the solution unchanged."""
    X, _, y_ssl = moons
    graph = KNNGraph(n_neighbors=6, bandwidth=0.3).fit(X)
    kw = dict(kernel=RBF(gamma=2.0), ambient_reg=1e-3, intrinsic_reg=10.0)
    a = LapRLSClassifier(graph=KNNGraph(n_neighbors=6, bandwidth=0.3), **kw).fit(X, y_ssl)
    b = LapRLSClassifier(**kw).fit(X, y_ssl, laplacian=graph.laplacian_)
    c = LapRLSClassifier(**kw).fit(X, y_ssl, laplacian=7.5 * graph.laplacian_)
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-10)
    np.testing.assert_allclose(b.decision_function(X), c.decision_function(X), rtol=1e-8)
    assert b.graph_ is None


def test_two_moons_laprls_beats_rls():
    X, y = _moons(600, noise=0.08, seed=3)
    y_ssl = np.full_like(y, -1)
    y_ssl[np.flatnonzero(y == 0)[0]] = 0
    y_ssl[np.flatnonzero(y == 1)[0]] = 1
    X_test, y_test = _moons(1000, noise=0.08, seed=4)
    # sigma = 0.3: the median heuristic (sigma ~ 1.2 here) is too wide to separate the moons.
    kernel = RBF(gamma=gamma_from_sigma(0.3))
    graph = KNNGraph(n_neighbors=8)
    lap = LapRLSClassifier(kernel=kernel, graph=graph, ambient_reg=1e-4, intrinsic_reg=10.0).fit(
        X, y_ssl
    )
    rls = LapRLSClassifier(kernel=kernel, ambient_reg=1e-4, intrinsic_reg=0.0).fit(X, y_ssl)
    assert lap.score(X_test, y_test) >= 0.99
    assert rls.score(X_test, y_test) < 0.9
    assert (lap.transduction_ == y).mean() >= 0.99


@pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")
def test_multiclass_equals_separate_one_vs_rest():
    rng = np.random.default_rng(2)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat([0, 1, 2], 40)
    X = centers[y] + 0.5 * rng.standard_normal((120, 2))
    y_ssl = np.full_like(y, -1)
    y_ssl[::8] = y[::8]
    graph = KNNGraph(n_neighbors=5, bandwidth=1.0).fit(X)
    kw = dict(kernel=RBF(gamma=0.5), ambient_reg=1e-3, intrinsic_reg=3.0)
    multi = LapRLSClassifier(**kw).fit(X, y_ssl, laplacian=graph.laplacian_)
    assert multi.decision_function(X).shape == (120, 3)
    Y = zero_mean_class_targets(y_ssl)
    columns = []
    for c in range(3):
        yc = np.where(y_ssl == -1, np.nan, Y[:, c])
        single = LapRLSRegressor(**kw).fit(X, yc, laplacian=graph.laplacian_)
        columns.append(centre_by_degree(single.predict(X)[:, None], graph.laplacian_)[:, 0])
    expected = add_labeled_prior(np.column_stack(columns), y_ssl)
    np.testing.assert_allclose(multi.decision_function(X), expected, rtol=1e-9, atol=1e-10)
    assert (multi.predict(X) == y).mean() > 0.95


def test_string_labels_and_custom_unlabeled_marker():
    X, y = _moons(200, seed=5)
    labels = np.array(["blue", "red"])[y].astype(object)
    labels[10:] = "?"
    labels[np.flatnonzero(y[10:] == 0)[0] + 10] = "blue"
    labels[np.flatnonzero(y[10:] == 1)[0] + 10] = "red"
    model = LapRLSClassifier(unlabeled="?", graph=KNNGraph(n_neighbors=6)).fit(X, labels)
    assert set(model.classes_) == {"blue", "red"}
    assert set(model.predict(X)) <= {"blue", "red"}


def test_regressor_multioutput_and_sparse_input():
    rng = np.random.default_rng(4)
    X = rng.random((80, 3))
    Y = np.c_[X.sum(1), X[:, 0] - X[:, 1]]
    Y[30:] = np.nan
    model = LapRLSRegressor(kernel=RBF(gamma=1.0), graph=KNNGraph(n_neighbors=5))
    dense = model.fit(X, Y).predict(X)
    sparse = model.fit(sp.csr_matrix(X), Y).predict(sp.csr_matrix(X))
    assert dense.shape == (80, 2)
    np.testing.assert_allclose(dense, sparse, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "y, match",
    [
        (np.full(30, -1), "no labeled point"),
        (np.r_[np.zeros(5), -np.ones(25)], "only one class"),
        (np.zeros(29), "29 labels but X has 30"),
    ],
)
def test_classifier_target_errors(y, match):
    X = np.random.default_rng(0).random((30, 2))
    with pytest.raises(ValueError, match=match):
        LapRLSClassifier(graph=KNNGraph(n_neighbors=4)).fit(X, y)


def test_regressor_target_errors():
    X = np.random.default_rng(0).random((30, 2))
    with pytest.raises(ValueError, match="no labeled point"):
        LapRLSRegressor().fit(X, np.full(30, np.nan))
    with pytest.raises(ValueError, match="infinite"):
        LapRLSRegressor().fit(X, np.r_[np.inf, np.zeros(29)])


@pytest.mark.parametrize("name,value", [("ambient_reg", -1.0), ("intrinsic_reg", np.nan)])
def test_bad_regularization(name, value):
    X, y = _moons(50)
    with pytest.raises(ValueError, match=name):
        LapRLSClassifier(**{name: value}).fit(X, y)


def test_memory_budget_checked_before_allocation():
    X, y = _moons(400)
    model = LapRLSClassifier(graph=KNNGraph(n_neighbors=5), memory_budget="1MB")
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        model.fit(X, y)


def test_bad_laplacian_and_predict_shape():
    X, y = _moons(60)
    with pytest.raises(ValueError, match="shape"):
        LapRLSClassifier().fit(X, y, laplacian=sp.eye(59))
    model = LapRLSClassifier(graph=KNNGraph(n_neighbors=5)).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="solver"):
        LapRLSClassifier(solver="magic", graph=KNNGraph(n_neighbors=5)).fit(X, y)


# The triplicated points make a graph of separate pieces, some without a label: that warning is
# expected beside the one under test.
@pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")
def test_singular_system_falls_back_with_warning():
    X = np.repeat(np.random.default_rng(0).random((10, 2)), 3, axis=0)  # triplicated points
    y = np.full(30, np.nan)
    y[:6] = np.arange(6.0)
    model = LapRLSRegressor(
        kernel=RBF(gamma=1.0), graph=KNNGraph(n_neighbors=4), ambient_reg=0.0, intrinsic_reg=1.0
    )
    with pytest.warns(RuntimeWarning, match="singular"):
        model.fit(X, y)
    assert np.all(np.isfinite(model.predict(X)))
