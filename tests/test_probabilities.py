"""Class probabilities of the graph estimators (``predict_proba``, ``transduction_proba_``)
against dense references, their agreement with ``predict``, and the scikit-learn tools that
need them (self-training, soft voting, the log-loss scorer)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax
from sklearn.datasets import load_wine
from sklearn.ensemble import VotingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import log_loss
from sklearn.model_selection import cross_val_score
from sklearn.semi_supervised import SelfTrainingClassifier

from oracles import dense_harmonic, dense_poisson
from reference_problems import blobs, blobs_graph_and_labels, hide_labels, two_moons_ssl
from semiscale.graph import DisconnectedGraphWarning, KNNGraph
from semiscale.model_selection import SSLKFold
from semiscale.models import HarmonicClassifier, PoissonClassifier
from semiscale.models.poisson import POISSON_TEMPERATURE_FACTOR
from semiscale.utils import all_estimators

GRAPH_ESTIMATORS = [HarmonicClassifier, PoissonClassifier]


def _check_consistent(model, X_new):
    """Rows are distributions, and predict / transduction_ are their arg max."""
    for proba in (model.transduction_proba_, model.predict_proba(X_new)):
        assert proba.shape[1] == model.classes_.shape[0]
        assert np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    proba = model.predict_proba(X_new)
    np.testing.assert_array_equal(model.predict(X_new), model.classes_[proba.argmax(axis=1)])
    np.testing.assert_array_equal(
        model.transduction_, model.classes_[model.transduction_proba_.argmax(axis=1)]
    )
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(model.predict_log_proba(X_new), np.log(proba))


# ---------------------------------------------------------------- against dense references
@pytest.mark.parametrize("cmn", [True, False])
def test_harmonic_probabilities_are_the_renormalized_cmn_distributions(cmn):
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=2)
    model = HarmonicClassifier(class_mass_normalization=cmn, tol=1e-12).fit(
        X, y_ssl, laplacian=sp.csr_matrix(L)
    )
    unl = y_ssl < 0
    F = dense_harmonic(L, y_ssl, 3)
    if cmn:  # each class times its prior (label shares, 1/3 here) over its mass
        F = F * ((1 / 3) / F.sum(axis=0))
    np.testing.assert_allclose(
        model.transduction_proba_[unl], F / F.sum(axis=1, keepdims=True), rtol=1e-8, atol=1e-12
    )
    np.testing.assert_array_equal(model.transduction_proba_[~unl], np.eye(3)[y_ssl[~unl]])
    if not cmn:  # the harmonic rows themselves
        np.testing.assert_allclose(model.transduction_proba_, model.label_distributions_)
    _check_consistent(model, X + 0.1)


def test_poisson_probabilities_are_a_softmax_at_the_stated_temperature():
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=2)
    model = PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    scores = dense_poisson(L, y_ssl, 3)  # mass balancing's factors are 1 at the default prior
    np.testing.assert_allclose(model.scores_, scores, atol=1e-8)
    unl = y_ssl < 0
    T = POISSON_TEMPERATURE_FACTOR * scores[unl].std()  # the unlabeled rows' spread
    assert model.temperature_ == pytest.approx(T, rel=1e-6)
    np.testing.assert_allclose(
        model.transduction_proba_[unl], softmax(scores[unl] / T, axis=1), atol=1e-6
    )
    X_new = X[::7] + 0.05
    np.testing.assert_allclose(
        model.predict_proba(X_new), softmax(model.decision_function(X_new) / T, axis=1)
    )
    _check_consistent(model, X_new)


def test_poisson_temperature_ignores_the_spikes_at_the_labeled_points():
    # unscaled wine, 5 labels a class (the reviewer's draw): a labeled point of small degree is a
    # source whose score spikes to ~1e5, 2,000 times the unlabeled rows' spread; a temperature
    # from every entry made the probabilities nearly uniform (log loss 1.097 ~ ln 3 at 71 %
    # accuracy)
    X, y = load_wine(return_X_y=True)
    rng = np.random.default_rng(0)
    y_ssl = np.full_like(y, -1)
    for c in range(3):
        y_ssl[rng.choice(np.flatnonzero(y == c), 5, replace=False)] = c
    model = PoissonClassifier().fit(X, y_ssl)
    unl = y_ssl < 0
    assert model.scores_.std() > 1000 * model.scores_[unl].std()  # the spikes dominate
    assert model.temperature_ == pytest.approx(
        POISSON_TEMPERATURE_FACTOR * model.scores_[unl].std()
    )
    proba = model.transduction_proba_[unl]
    assert log_loss(y[unl], proba, labels=[0, 1, 2]) < 0.9
    _check_consistent(model, X[::5] * 1.01)


def test_poisson_probabilities_do_not_depend_on_the_scale_of_the_weights():
    X, y, y_ssl, L = blobs_graph_and_labels(per_class=2)
    one = PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(L))
    three = PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=sp.csr_matrix(3.0 * L))
    np.testing.assert_allclose(three.scores_, one.scores_ / 3.0, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(three.transduction_proba_, one.transduction_proba_, atol=1e-9)


def test_poisson_temperature_when_the_unlabeled_scores_are_all_equal():
    # a path 0 - 1 - 2 labeled 0 and 1 at its ends: the middle point's scores are 0 in both
    # classes, so the unlabeled rows have no spread; the temperature then comes from the solved
    # rows (a fixed T = 1 made the probabilities of new points depend on the weights' scale:
    # 0.617, 1.0 and 0.501 for the class of the nearer end at scales 1, 0.01 and 100)
    X = np.array([[0.0], [1.0], [2.0]])
    y_ssl = np.array([0, -1, 1])
    L = sp.csr_matrix([[1.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 1.0]])
    X_new = np.array([[0.1], [1.0], [1.9]])
    fits = [PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=s * L) for s in (1.0, 0.01, 100.0)]
    np.testing.assert_allclose(fits[0].scores_[1], 0.0, atol=1e-12)
    assert fits[0].temperature_ == pytest.approx(POISSON_TEMPERATURE_FACTOR * fits[0].scores_.std())
    for other in fits[1:]:
        np.testing.assert_allclose(other.predict_proba(X_new), fits[0].predict_proba(X_new))
    for model in fits:
        _check_consistent(model, X_new)


@pytest.mark.parametrize("Estimator", GRAPH_ESTIMATORS)
def test_columns_follow_classes(Estimator):
    X, y = blobs(40, 3, seed=1)
    names = np.array(["zebra", "ant", "moth"])  # classes_ sorts them: ant, moth, zebra
    y_ssl = np.where(hide_labels(y, 3, seed=1) < 0, "?", names[y])
    model = Estimator(unlabeled="?").fit(X, y_ssl)
    assert model.classes_.tolist() == ["ant", "moth", "zebra"]
    proba = model.predict_proba(X)
    for k, name in enumerate(model.classes_):
        assert proba[names[y] == name].mean(axis=0).argmax() == k


# ------------------------------------------------------------------- degenerate rows, ties
def _two_islands():
    """Two blobs far apart, labels on the first only (the second is unreached)."""
    X, y = blobs(30, 2, seed=2, spread=0.3)
    X = np.concatenate([X, X + 100.0])
    y = np.concatenate([y, y])
    y_ssl = np.full_like(y, -1)
    y_ssl[[0, 1, 30, 31]] = y[[0, 1, 30, 31]]
    return X, y_ssl


@pytest.mark.parametrize("Estimator", GRAPH_ESTIMATORS)
@pytest.mark.parametrize("prior", [None, "uniform"])
def test_unreached_points_get_the_prior_and_ties_agree(Estimator, prior):
    X, y_ssl = _two_islands()
    with pytest.warns(DisconnectedGraphWarning):
        model = Estimator(class_prior=prior).fit(X, y_ssl)
    far = np.arange(60, 120)
    assert model.n_unreached_ == far.size
    np.testing.assert_allclose(
        model.transduction_proba_[far], np.tile(model.class_prior_, (far.size, 1))
    )
    # with the uniform prior every unreached row is an exact tie: the first class wins in both
    X_new = np.concatenate([X[far] + 0.01, X[:60:5] + 0.01])
    _check_consistent(model, X_new)


def _main_and_single_class_island():
    """Three blobs (labels of both classes 0 and 1) and a far island of class-0 points with one
    label: a solved component and a single-class one, with a kNN graph's Laplacian."""
    X, y = blobs(30, 2, seed=3, spread=0.3)
    X = np.concatenate([X, X[:30] + 100.0])
    y_ssl = np.full(90, -1)
    y_ssl[[0, 1, 30, 31, 60]] = [0, 0, 1, 1, 0]
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    return X, y_ssl, sp.csr_matrix(L)


def test_poisson_single_class_component_is_certain_at_any_scale_of_the_weights():
    X, y_ssl, L = _main_and_single_class_island()
    island = np.arange(60, 90)
    X_new = np.concatenate([X[:60:3] + 0.01, X[island][::3] + 0.01])  # near each component
    fits = []
    for scale in (1.0, 0.01, 100.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DisconnectedGraphWarning)
            fits.append(PoissonClassifier(tol=1e-12).fit(X, y_ssl, laplacian=scale * L))
    one = fits[0]
    # the island's scores are set (one-hot), not solved: its probabilities are the prediction's
    np.testing.assert_array_equal(one.transduction_proba_[island], np.eye(2)[[0] * 30])
    np.testing.assert_array_equal(one.predict_proba(X[island] + 0.01), np.eye(2)[[0] * 30])
    for other in fits[1:]:
        np.testing.assert_allclose(other.transduction_proba_, one.transduction_proba_, atol=1e-9)
        np.testing.assert_allclose(other.predict_proba(X_new), one.predict_proba(X_new), atol=1e-9)
        np.testing.assert_array_equal(other.transduction_, one.transduction_)
    for model in fits:
        _check_consistent(model, X_new)


def test_poisson_single_class_component_is_certain():
    X, y = blobs(30, 2, seed=3, spread=0.3)
    X = np.concatenate([X, X[:30] + 100.0])  # an island of class-0 points, one of them labeled
    y_ssl = np.full(90, -1)
    y_ssl[[0, 30, 60]] = [0, 1, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        model = PoissonClassifier().fit(X, y_ssl)
    island = np.arange(60, 90)
    assert np.all(model.transduction_[island] == 0)
    np.testing.assert_array_equal(model.transduction_proba_[island, 0], 1.0)
    _check_consistent(model, X[island] + 0.01)


def test_harmonic_row_without_positive_score_gets_the_prior():
    X, y = blobs(20, 2, seed=4)
    model = HarmonicClassifier(class_prior=[0.3, 0.7]).fit(X, hide_labels(y, 2, seed=4))
    scores = np.array([[0.0, 0.0], [-1e-9, -2e-9], [0.25, -1e-12], [0.2, 0.6]])
    proba = model._proba_from_scores(scores)
    np.testing.assert_allclose(proba, [[0.3, 0.7], [0.3, 0.7], [1.0, 0.0], [0.25, 0.75]])


# ---------------------------------------------------- scikit-learn tools that need predict_proba
def test_self_training_with_poisson():
    X, y, y_ssl = two_moons_ssl(300, 5)
    model = SelfTrainingClassifier(PoissonClassifier()).fit(X, y_ssl)
    assert (model.predict(X) == y).mean() > 0.95
    assert model.predict_proba(X).shape == (300, 2)


def test_soft_voting_of_prefitted_graph_estimators():
    X, y, y_ssl = two_moons_ssl(300, 5)
    labeled = y_ssl >= 0
    members = [
        ("h", FrozenEstimator(HarmonicClassifier().fit(X, y_ssl))),
        ("p", FrozenEstimator(PoissonClassifier().fit(X, y_ssl))),
    ]
    # the voter is fitted on the labeled rows only: it label-encodes y, so -1 would be a class
    voter = VotingClassifier(members, voting="soft").fit(X[labeled], y_ssl[labeled])
    assert voter.classes_.tolist() == [0, 1]
    proba = voter.predict_proba(X)
    np.testing.assert_allclose(
        proba, (members[0][1].predict_proba(X) + members[1][1].predict_proba(X)) / 2
    )
    assert (voter.predict(X) == y).mean() > 0.95


def test_voting_on_ssl_labels_would_make_the_marker_a_class():
    # why the spelling above: VotingClassifier encodes -1 as a class for its members
    X, y, y_ssl = two_moons_ssl(120, 5)
    voter = VotingClassifier([("h", HarmonicClassifier())], voting="soft").fit(X, y_ssl)
    assert voter.classes_.tolist() == [-1, 0, 1]
    assert voter.estimators_[0].n_labeled_ == 120


@pytest.mark.parametrize("Estimator", GRAPH_ESTIMATORS)
def test_neg_log_loss_with_ssl_folds(Estimator):
    X, y, y_ssl = two_moons_ssl(300, 5)
    scores = cross_val_score(
        Estimator(), X, y_ssl, scoring="neg_log_loss", cv=SSLKFold(random_state=0)
    )
    assert scores.shape == (5,)
    assert np.all(np.isfinite(scores)) and np.all(scores <= 0)


def test_only_the_graph_estimators_have_predict_proba():
    # the kernel classifiers' decision values are margins or regression outputs, not probabilities
    classifiers = all_estimators(type_filter="classifier")
    with_proba = {name for name, cls in classifiers if hasattr(cls(), "predict_proba")}
    assert with_proba == {"HarmonicClassifier", "PoissonClassifier", "PoissonMBOClassifier"}
