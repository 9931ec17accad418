"""Laplace learning (HarmonicClassifier) and Poisson learning (PoissonClassifier).

Dense references (``tests/oracles.py``): the harmonic solution by ``numpy.linalg.solve`` of
``L_uu F_u = −L_ul Y_l``, Poisson learning by the pseudo-inverse of ``L`` with Calder et al.'s
normalization ``Σ_i d_i U_ic = 0``.
"""

import ast
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from oracles import dense_harmonic, dense_poisson
from reference_problems import blobs, blobs_graph_and_labels, hide_labels
from semiscale.datasets import make_two_moons
from semiscale.graph import DisconnectedGraphWarning, KNNGraph, PrecomputedGraph, laplacian
from semiscale.models import HarmonicClassifier, PoissonClassifier
from semiscale.models._base import DEFAULT_GRAPH

ESTIMATORS = (HarmonicClassifier, PoissonClassifier)


# ------------------------------------------------------------------ dense references
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_harmonic_equals_a_dense_solve(n_classes):
    X, y, y_ssl, L = blobs_graph_and_labels(n_per_class=250 // n_classes, n_classes=n_classes)
    model = HarmonicClassifier(class_mass_normalization=False, tol=1e-12).fit(
        X, y_ssl, laplacian=sp.csr_matrix(L)
    )
    lab, unl = y_ssl >= 0, y_ssl < 0
    Y = np.eye(n_classes)[y_ssl[lab]]
    F_u = dense_harmonic(L, y_ssl, n_classes)
    np.testing.assert_allclose(model.label_distributions_[unl], F_u, atol=1e-9)
    np.testing.assert_array_equal(model.label_distributions_[lab], Y)
    np.testing.assert_allclose(model.label_distributions_.sum(axis=1), 1.0, atol=1e-9)
    assert model.scores_.shape == (X.shape[0], n_classes) and model.n_iter_ > 0
    expected = model.classes_[np.argmax(F_u, axis=1)]
    np.testing.assert_array_equal(model.transduction_[unl], expected)


@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_harmonic_solution_satisfies_its_equation_to_the_solver_tolerance(tol):
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=1)
    L = sp.csr_matrix(L)
    model = HarmonicClassifier(tol=tol).fit(X, y_ssl, laplacian=L)
    F = model.label_distributions_
    lab, unl = np.flatnonzero(y_ssl >= 0), np.flatnonzero(y_ssl < 0)
    rhs = -(L[unl][:, lab] @ F[lab])
    residual = L[unl][:, unl] @ F[unl] - rhs
    relative = np.linalg.norm(residual, axis=0) / np.linalg.norm(rhs, axis=0)
    assert np.all(relative <= 2 * tol), relative
    assert model.residuals_[-1].max() <= tol


@pytest.mark.parametrize("n_classes", [2, 4])
def test_poisson_equals_a_dense_pseudo_inverse_solve(n_classes):
    X, y, y_ssl, L = blobs_graph_and_labels(n_per_class=240 // n_classes, n_classes=n_classes)
    model = PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    U = dense_poisson(L, y_ssl, n_classes)
    np.testing.assert_allclose(model.class_scale_, 1.0)  # default prior: no rescaling
    np.testing.assert_allclose(model.scores_, U, atol=1e-9 * np.abs(U).max())
    np.testing.assert_allclose(np.diag(L) @ model.scores_, 0.0, atol=1e-9)
    unl = y_ssl < 0
    np.testing.assert_array_equal(model.transduction_[unl], np.argmax(U[unl], axis=1))


def test_poisson_mass_balancing_scales_by_prior_over_label_share():
    X, y, _, L = blobs_graph_and_labels(n_per_class=80, n_classes=3)
    y_ssl = np.full_like(y, -1)
    y_ssl[[0, 1, 2, 80, 160]] = [0, 0, 0, 1, 2]  # label shares 3/5, 1/5, 1/5
    prior = np.array([0.2, 0.3, 0.5])
    model = PoissonClassifier(class_prior=prior, tol=1e-12).fit(
        X, y_ssl, laplacian=sp.csr_matrix(L)
    )
    share = np.array([3, 1, 1]) / 5
    np.testing.assert_allclose(model.class_scale_, prior / share)
    np.testing.assert_allclose(model.class_prior_, prior)
    U = dense_poisson(L, y_ssl, 3)
    np.testing.assert_allclose(model.scores_, U * prior / share, atol=1e-9 * np.abs(U).max())
    uniform = PoissonClassifier(class_prior="uniform").fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    np.testing.assert_allclose(uniform.class_scale_, (1 / 3) / share)


def test_poisson_with_a_ridge_solves_the_nonsingular_system():
    X, y, y_ssl, L = blobs_graph_and_labels()
    L = L + 0.1 * np.eye(L.shape[0])
    model = PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    lab = np.flatnonzero(y_ssl >= 0)
    Y = np.eye(3)[y_ssl[lab]]
    B = np.zeros((L.shape[0], 3))
    B[lab] = Y - Y.mean(axis=0)
    np.testing.assert_allclose(model.scores_, np.linalg.solve(L, B), atol=1e-10)


def test_poisson_refuses_a_normalized_laplacian():
    X, y = blobs()
    with pytest.raises(ValueError, match="normalized=False"):
        PoissonClassifier(graph=KNNGraph(normalized=True)).fit(X, hide_labels(y, 2))
    # Laplace learning takes any Laplacian
    model = HarmonicClassifier(graph=KNNGraph(normalized=True)).fit(X, hide_labels(y, 2))
    assert (model.transduction_ == y).mean() > 0.95


# -------------------------------------------------------------- class mass normalization
@pytest.mark.parametrize("class_prior", [None, [0.5, 0.3, 0.2], "uniform"])
def test_cmn_rescales_the_class_masses_to_the_priors(class_prior):
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=1)
    y_ssl[np.flatnonzero(y == 0)[-3:]] = 0  # 4 labels of class 0: prior 4/6 when estimated
    model = HarmonicClassifier(class_mass_normalization=True, class_prior=class_prior)
    model.fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    expected = {
        None: np.array([4, 1, 1]) / 6,
        "uniform": np.full(3, 1 / 3),
    }.get(class_prior if class_prior is None or isinstance(class_prior, str) else "given")
    if expected is None:
        expected = np.asarray(class_prior)
    np.testing.assert_allclose(model.class_prior_, expected)
    unl = y_ssl < 0
    np.testing.assert_allclose(model.scores_[unl].sum(axis=0), expected, rtol=1e-12)
    mass = model.label_distributions_[unl].sum(axis=0)
    np.testing.assert_allclose(model.class_scale_, expected / mass)
    plain = HarmonicClassifier(class_mass_normalization=False).fit(
        X, y_ssl, laplacian=sp.csr_matrix(L)
    )
    np.testing.assert_allclose(plain.class_scale_, 1.0)
    np.testing.assert_allclose(plain.label_distributions_, model.label_distributions_)


def test_cmn_lifts_harmonic_accuracy_when_labels_are_unbalanced():
    X, y = make_two_moons(600, noise=0.1, random_state=1)
    y_ssl = np.full_like(y, -1)
    y_ssl[np.flatnonzero(y == 0)[:12]] = 0
    y_ssl[np.flatnonzero(y == 1)[:1]] = 1
    graph = KNNGraph(n_neighbors=10)
    plain = HarmonicClassifier(graph=graph, class_mass_normalization=False).fit(X, y_ssl)
    cmn = HarmonicClassifier(graph=graph, class_mass_normalization=True, class_prior="uniform")
    cmn.fit(X, y_ssl)
    assert (cmn.transduction_ == y).mean() >= (plain.transduction_ == y).mean()


# ------------------------------------------------------------- disconnected components
def _with_an_unlabeled_island(n_island=7):
    X, y = blobs(n_per_class=40, n_classes=3)
    island = 100.0 + 0.1 * np.random.default_rng(5).standard_normal((n_island, 2))
    X = np.vstack([X, island])
    y_ssl = hide_labels(y, 2)
    y_ssl[np.flatnonzero(y == 1)[:3]] = 1  # class 1 is the most frequent labeled class
    y_ssl = np.r_[y_ssl, np.full(n_island, -1)]
    return X, y, y_ssl


@pytest.mark.parametrize("Estimator", ESTIMATORS)
@pytest.mark.filterwarnings("ignore:the kNN graph has")  # the graph's own warning
def test_an_unlabeled_component_warns_and_gets_the_most_frequent_class(Estimator):
    X, y, y_ssl = _with_an_unlabeled_island(7)
    with pytest.warns(DisconnectedGraphWarning, match="7 of 127 training points"):
        model = Estimator(graph=KNNGraph(n_neighbors=5)).fit(X, y_ssl)
    assert model.n_unreached_ == 7
    np.testing.assert_array_equal(model.transduction_[-7:], 1)
    np.testing.assert_allclose(model.scores_[-7:], np.tile(model.class_prior_, (7, 1)))
    assert (model.transduction_[:-7] == y).mean() > 0.95
    np.testing.assert_array_equal(model.predict(X[-7:] + 0.01), 1)
    with pytest.warns(DisconnectedGraphWarning, match="7 of 127"):  # a given prior decides
        given = Estimator(graph=KNNGraph(n_neighbors=5), class_prior=[0.2, 0.2, 0.6]).fit(X, y_ssl)
    np.testing.assert_array_equal(given.transduction_[-7:], 2)


@pytest.mark.filterwarnings("ignore:the kNN graph has")  # the graph's own warning
def test_poisson_solves_each_labeled_component_on_its_own():
    X, y = blobs(n_per_class=40, n_classes=3)
    far = X[y == 2] + 100.0  # a second copy of class 2, labeled with one class only
    X = np.vstack([X, far])
    y = np.r_[y, np.full(40, 2)]
    y_ssl = hide_labels(y[:120], 2)
    y_ssl = np.r_[y_ssl, np.full(40, -1)]
    y_ssl[130] = 2
    model = PoissonClassifier(graph=KNNGraph(n_neighbors=6, bandwidth=1.0), tol=1e-10).fit(X, y_ssl)
    assert model.n_unreached_ == 0
    np.testing.assert_array_equal(model.transduction_[120:], 2)
    np.testing.assert_array_equal(model.scores_[120:], np.tile([0.0, 0.0, 1.0], (40, 1)))
    assert (model.transduction_ == y).mean() > 0.95
    # the first component alone gives the same scores there
    alone = PoissonClassifier(graph=KNNGraph(n_neighbors=6, bandwidth=1.0), tol=1e-10).fit(
        X[:120], y_ssl[:120]
    )
    np.testing.assert_allclose(model.scores_[:120], alone.scores_, atol=1e-8)


# ------------------------------------------------------------------- the labels
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_labeled_points_keep_their_labels(Estimator):
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=3)
    wrong = np.flatnonzero((y == 0) & (y_ssl < 0))[0]
    y_ssl[wrong] = 1  # a wrong label deep in class 0
    model = Estimator().fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    lab = y_ssl >= 0
    np.testing.assert_array_equal(model.transduction_[lab], y_ssl[lab])


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_multiclass_with_string_labels_and_a_string_marker(Estimator):
    X, y = blobs(n_per_class=50, n_classes=4)
    names = np.array(["a", "b", "c", "d"], dtype=object)[y]
    y_ssl = names.copy()
    y_ssl[hide_labels(y, 2) < 0] = "?"
    model = Estimator(graph=KNNGraph(n_neighbors=8), unlabeled="?").fit(X, y_ssl)
    assert model.classes_.tolist() == ["a", "b", "c", "d"]
    assert (model.transduction_ == names).mean() > 0.95
    assert model.decision_function(X[:5]).shape == (5, 4)
    assert set(model.predict(X[:20])) <= {"a", "b", "c", "d"}
    assert model.score(X, names) > 0.95


def test_poisson_learning_two_moons_one_label_per_class():
    for seed in (0, 1, 3):  # seeds whose 10-NN graph is connected (one moon per component
        # would make the problem trivial)
        X, y = make_two_moons(1000, noise=0.1, random_state=seed)
        y_ssl = hide_labels(y, 1, seed=seed)
        model = PoissonClassifier(graph=KNNGraph(n_neighbors=10)).fit(X, y_ssl)
        assert model.graph_.n_components_ == 1
        assert (model.transduction_ == y).mean() >= 0.99, seed


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_a_precomputed_laplacian_or_graph_gives_the_fitted_graphs_result(Estimator):
    X, y = blobs()
    y_ssl = hide_labels(y, 2)
    graph = KNNGraph(n_neighbors=7)
    fitted = Estimator(graph=graph).fit(X, y_ssl)
    given = Estimator().fit(X, y_ssl, laplacian=graph.fit(X).laplacian_)
    pre = Estimator(graph=PrecomputedGraph(graph.fit(X).adjacency_, X)).fit(X, y_ssl)
    np.testing.assert_allclose(given.scores_, fitted.scores_)
    np.testing.assert_allclose(pre.scores_, fitted.scores_)
    assert given.graph_ is None and isinstance(fitted.graph_, KNNGraph)
    assert fitted.extension_ == {
        "n_neighbors": 7,
        "weights": "heat",
        "bandwidth": fitted.graph_.bandwidth_,
    }
    assert given.extension_ == {"n_neighbors": 8, "weights": "heat", "bandwidth": None}


# -------------------------------------------------------------- predicting new points
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_predict_extends_the_graph_to_new_points(Estimator):
    X, y = make_two_moons(800, noise=0.08, random_state=0)
    y_ssl = hide_labels(y, 2)
    model = Estimator(graph=KNNGraph(n_neighbors=10)).fit(X, y_ssl)
    # on the training points: close to the transduction
    assert (model.predict(X) == model.transduction_).mean() > 0.98
    X_new, y_new = make_two_moons(300, noise=0.08, random_state=1)
    assert (model.predict(X_new) == y_new).mean() > 0.97
    # the extension rule, computed directly for a few points
    sigma = model.graph_.bandwidth_
    for x in X_new[:5]:
        d = np.linalg.norm(X - x, axis=1)
        near = np.argsort(d)[:10]
        w = np.exp(-(d[near] ** 2) / (2 * sigma**2))
        expected = w @ model.scores_[near] / w.sum()
        np.testing.assert_allclose(model.decision_function(x[None]), expected[1] - expected[0])
    # subsets and one row at a time give the same answer
    np.testing.assert_allclose(
        model.decision_function(X_new[:7]),
        np.concatenate([model.decision_function(X_new[i : i + 1]) for i in range(7)]),
    )


def test_binary_decision_function_is_the_score_difference():
    X, y = make_two_moons(300, noise=0.1, random_state=0)
    model = PoissonClassifier(graph=KNNGraph(n_neighbors=10)).fit(X, hide_labels(y, 3))
    decision = model.decision_function(X[:50])
    assert decision.shape == (50,)
    np.testing.assert_array_equal(model.predict(X[:50]), (decision > 0).astype(int))


def test_a_far_away_new_point_gets_its_nearest_neighbours_scores():
    # the heat weights are shifted by the nearest distance: no 0/0 far from the data
    X, y = make_two_moons(200, noise=0.1, random_state=0)
    model = HarmonicClassifier(graph=KNNGraph(n_neighbors=8)).fit(X, hide_labels(y, 3))
    far = np.array([[1e4, 1e4]])
    assert np.all(np.isfinite(model.decision_function(far)))


def test_binary_weights_average_uniformly():
    X, y = make_two_moons(200, noise=0.1, random_state=0)
    model = PoissonClassifier(graph=KNNGraph(n_neighbors=8, weights="binary")).fit(
        X, hide_labels(y, 3)
    )
    assert model.extension_["weights"] == "binary"
    x = np.array([[0.3, 0.8]])
    near = np.argsort(np.linalg.norm(X - x, axis=1))[:8]
    expected = model.scores_[near].mean(axis=0)
    np.testing.assert_allclose(model.decision_function(x), [expected[1] - expected[0]])


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_bad_labels_get_the_shared_messages(Estimator):
    X, y = blobs()
    with pytest.raises(ValueError, match="only one class"):
        Estimator().fit(X, np.where(y == 0, 0, -1))
    with pytest.raises(ValueError, match="no labeled point"):
        Estimator().fit(X, np.full_like(y, -1))
    y_nan = hide_labels(y, 2).astype(float)
    y_nan[y_nan < 0] = np.nan  # a missing label marks an unlabeled point (issue 28)
    np.testing.assert_array_equal(
        Estimator().fit(X, y_nan).transduction_, Estimator().fit(X, hide_labels(y, 2)).transduction_
    )
    with pytest.raises(ValueError, match="missing labels.*unlabeled=None"):
        Estimator(unlabeled=None).fit(X, y_nan)
    with pytest.raises(ValueError, match="continuous targets"):
        Estimator().fit(X, y + 0.5)
    with pytest.raises(ValueError, match="requires y to be passed"):
        Estimator().fit(X, None)
    with pytest.raises(ValueError, match="class_prior must hold one positive number per class"):
        Estimator(class_prior=[0.5, 0.5]).fit(X, hide_labels(y, 2))
    with pytest.raises(ValueError, match="class_prior must hold one positive number per class"):
        Estimator(class_prior=[0.5, 0.5, 0.0]).fit(X, hide_labels(y, 2))
    with pytest.raises(ValueError, match="laplacian has shape"):
        Estimator().fit(X, hide_labels(y, 2), laplacian=sp.eye(10, format="csr"))
    with pytest.raises(ValueError, match="looks like an adjacency"):
        W = KNNGraph(n_neighbors=5).fit(X).adjacency_
        Estimator().fit(X, hide_labels(y, 2), laplacian=W)


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_an_unconverged_solve_warns(Estimator):
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=1)
    with pytest.warns(ConvergenceWarning, match="CG stopped after 2 iterations"):
        model = Estimator(max_iter=2).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    assert model.n_iter_ == 2


# ------------------------------------------------------------ scikit-learn conventions
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_docstrings_are_static_text_with_an_example(Estimator):
    tree = ast.parse(inspect.getsource(inspect.getmodule(Estimator)))
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == Estimator.__name__]
    assert ast.get_docstring(node, clean=False) == Estimator.__doc__
    for section in ("Parameters", "Attributes", "See Also", "Examples"):
        assert f"\n    {section}\n    ---" in Estimator.__doc__
    assert ">>> model = " in Estimator.__doc__
    for name in Estimator().get_params(deep=False):
        assert f"\n    {name} : " in Estimator.__doc__, name


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_every_parameter_is_validated_declaratively(Estimator):
    from sklearn.utils.estimator_checks import check_param_validation

    check_param_validation(Estimator.__name__, Estimator(graph=KNNGraph(n_neighbors=3)))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_feature_names_are_recorded_and_checked(Estimator):
    pd = pytest.importorskip("pandas")
    X, y = make_two_moons(120, noise=0.1, random_state=0)
    frame = pd.DataFrame(X, columns=["a", "b"])
    model = Estimator(graph=KNNGraph(n_neighbors=10)).fit(frame, hide_labels(y, 3))
    assert list(model.feature_names_in_) == ["a", "b"]
    with pytest.raises(ValueError, match="same order"):
        model.predict(pd.DataFrame(X[:, ::-1], columns=["b", "a"]))


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_nested_graph_parameters_do_not_touch_the_shared_default(Estimator):
    model = Estimator().set_params(graph__n_neighbors=3)
    assert model.graph.n_neighbors == 3 and DEFAULT_GRAPH.n_neighbors == 8
    assert Estimator(graph=None).set_params(graph__n_neighbors=4).graph.n_neighbors == 4


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_the_graph_inherits_the_estimators_budget_threads_and_seed(Estimator):
    X, y = blobs()
    graph = KNNGraph(n_neighbors=8)
    model = Estimator(graph=graph, memory_budget="64MiB", n_jobs=2, random_state=3)
    model.fit(X, hide_labels(y, 2))
    params = model.graph_.get_params()
    assert (params["memory_budget"], params["n_jobs"], params["random_state"]) == ("64MiB", 2, 3)
    assert graph.memory_budget is None  # the user's graph is not modified


def test_laplacian_helper_agrees_with_the_graph():
    # the dense references above read L from KNNGraph; laplacian(W) is the same matrix
    X, _ = blobs()
    graph = KNNGraph(n_neighbors=8).fit(X)
    np.testing.assert_allclose(laplacian(graph.adjacency_).toarray(), graph.laplacian_.toarray())


def test_prediction_on_a_self_tuning_graph_uses_its_local_scales():
    from semiscale.datasets import make_two_moons
    from semiscale.graph import KNNGraph
    from semiscale.models import PoissonClassifier

    X, y = make_two_moons(600, noise=0.05, random_state=0)
    y_ssl = np.where(np.arange(600) < 40, y, -1)
    model = PoissonClassifier(graph=KNNGraph(weights="self-tuning")).fit(X, y_ssl)
    assert model.extension_["weights"] == "self-tuning"
    assert np.mean(model.predict(X) == model.transduction_) > 0.97
    X_new, y_new = make_two_moons(300, noise=0.05, random_state=1)
    assert np.mean(model.predict(X_new) == y_new) > 0.95
