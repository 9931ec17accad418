"""NearestNeighborsClassifier: the 1-NN baseline and its distance margin for AUC."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics import roc_auc_score
from sklearn.neighbors import KNeighborsClassifier

from reference_problems import blobs, hide_labels, two_moons_ssl
from semiscale.models import NearestNeighborsClassifier
from semiscale.models._contract import FitContract


def test_one_neighbour_predicts_as_scikit_learns_1nn_on_the_labeled_points():
    X, y, y_ssl = two_moons_ssl(300, 6, noise=0.15)
    labeled = y_ssl != -1
    model = NearestNeighborsClassifier().fit(X, y_ssl)
    reference = KNeighborsClassifier(n_neighbors=1).fit(X[labeled], y_ssl[labeled])
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    np.testing.assert_array_equal(model.transduction_, reference.predict(X))
    assert model.score(X, y) == pytest.approx(reference.score(X, y))


def test_the_binary_decision_is_the_margin_of_distances():
    X, y, y_ssl = two_moons_ssl(200, 5)
    labeled = y_ssl != -1
    model = NearestNeighborsClassifier().fit(X, y_ssl)
    D = cdist(X, X[labeled])
    nearest = [D[:, y_ssl[labeled] == c].min(axis=1) for c in (0, 1)]
    np.testing.assert_allclose(model.decision_function(X), nearest[0] - nearest[1], atol=1e-12)
    # a score that ranks: no ties, unlike the 0/1 vote, and better than chance on the moons
    unlabeled = ~labeled
    assert np.unique(model.decision_function(X[unlabeled])).size == unlabeled.sum()
    assert roc_auc_score(y[unlabeled], model.decision_function(X[unlabeled])) > 0.8


def test_more_neighbours_average_their_distances_and_more_classes_get_columns():
    X, y = blobs(40, 3, seed=2)
    y_ssl = hide_labels(y, 4, seed=2)
    y_ssl[np.flatnonzero(y_ssl == 2)[:2]] = -1  # class 2 keeps 2 labels, fewer than k
    labeled = y_ssl != -1
    model = NearestNeighborsClassifier(n_neighbors=3).fit(X, y_ssl)
    D = cdist(X, X[labeled])
    expected = np.column_stack(
        [-np.sort(D[:, y_ssl[labeled] == c], axis=1)[:, :3].mean(axis=1) for c in range(3)]
    )
    np.testing.assert_allclose(model.decision_function(X), expected, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), np.argmax(expected, axis=1))


def test_the_metric_is_the_searchs():
    X, _, y_ssl = two_moons_ssl(120, 4)
    labeled = y_ssl != -1
    model = NearestNeighborsClassifier(metric="manhattan").fit(X, y_ssl)
    D = cdist(X, X[labeled], metric="cityblock")
    nearest = [D[:, y_ssl[labeled] == c].min(axis=1) for c in (0, 1)]
    np.testing.assert_allclose(model.decision_function(X), nearest[0] - nearest[1], atol=1e-12)


def test_a_contract_without_an_expansion_is_only_for_the_paths_that_have_none():
    with pytest.raises(ValueError, match="fit_path='nearest-neighbors' needs expansion None"):
        FitContract(fit_path="nearest-neighbors", expansion="training")
    with pytest.raises(ValueError, match="needs expansion other than None"):
        FitContract(fit_path="kernel-machine", expansion=None)
    assert "random_state" not in FitContract("nearest-neighbors", None).parameters()
    assert {"transformer", "classifier"} <= FitContract("feature-machine", "support").parameters()
