"""StorageFitClassifier: a linear classifier on the virtual samples of a cluster kernel."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from reference_problems import blobs, hide_labels, two_moons_ssl
from semiscale._memory import MemoryBudgetError
from semiscale.cluster_kernels import NystromClusterKernel
from semiscale.model_selection import SSLGridSearchCV, SSLKFold, ssl_cross_val_score
from semiscale.models import StorageFitClassifier
from semiscale.models.storage_fit import default_classifier


def _nysck(**params):
    return NystromClusterKernel(n_components=20, random_state=0, **params)


def test_it_is_the_classifier_on_the_labeled_rows_of_the_transformers_features():
    X, _, y_ssl = two_moons_ssl(200, 5)
    labeled = y_ssl != -1
    model = StorageFitClassifier(transformer=_nysck(), random_state=0).fit(X, y_ssl)
    F = _nysck().fit_transform(X, y_ssl)
    reference = default_classifier().set_params(random_state=0).fit(F[labeled], y_ssl[labeled])
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(F))
    np.testing.assert_array_equal(model.transduction_, reference.predict(F))
    # the inductive path reproduces the training rows' features
    np.testing.assert_array_equal(model.predict(X), model.transduction_)
    assert model.n_components_ == 20 and model.n_labeled_ == 10


def test_the_default_classifier_is_scikit_learns_linear_svm_at_its_defaults():
    # the squared hinge at C = 1 (benchmarks/results/paper003_defaults/: mean AUC 0.8605
    # against 0.8507 for the hinge)
    X, _, y_ssl = two_moons_ssl(200, 5)
    labeled = y_ssl != -1
    model = StorageFitClassifier(transformer=_nysck(), random_state=0).fit(X, y_ssl)
    F = _nysck().fit_transform(X, y_ssl)
    reference = LinearSVC(max_iter=10_000, random_state=0).fit(F[labeled], y_ssl[labeled])
    assert model.classifier_.loss == "squared_hinge" and model.classifier_.C == 1.0
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(F))


def test_any_scikit_learn_transformer_and_classifier_compose():
    X, _, y_ssl = two_moons_ssl(150, 5)
    labeled = y_ssl != -1
    transformer = Nystroem(gamma=2.0, n_components=40, random_state=1)
    model = StorageFitClassifier(transformer=transformer, classifier=LogisticRegression())
    model.fit(X, y_ssl)
    F = clone(transformer).fit_transform(X)
    reference = LogisticRegression().fit(F[labeled], y_ssl[labeled])
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(F))
    assert transformer.get_params()["n_components"] == 40 and not hasattr(
        transformer, "components_"
    )


def test_the_marker_budget_seed_and_verbosity_reach_the_components_where_unset():
    X, _, y_ssl = two_moons_ssl(120, 4)
    y_nan = np.where(y_ssl == -1, np.nan, y_ssl)
    model = StorageFitClassifier(
        transformer=_nysck(), memory_budget="64MiB", random_state=7, unlabeled=np.nan
    ).fit(X, y_nan)
    params = model.transformer_.get_params()
    assert np.isnan(params["unlabeled"]) and params["memory_budget"] == "64MiB"
    assert params["random_state"] == 0  # the transformer's own seed is kept
    assert model.classifier_.random_state == 7
    assert model.transformer_.cut_ == 8 + 9  # l = 8 read with the marker NaN
    mine = StorageFitClassifier(transformer=_nysck(memory_budget="32MiB"), memory_budget="1GiB")
    assert mine.fit(X, y_ssl).transformer_.memory_budget == "32MiB"


def test_a_tiny_budget_is_refused_by_the_transformer_before_its_arrays():
    X, _, y_ssl = two_moons_ssl(200, 5)
    model = StorageFitClassifier(transformer=_nysck(), memory_budget="4KB")
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        model.fit(X, y_ssl)
    assert not hasattr(model, "transformer_")


def test_the_classifiers_copy_is_checked_beside_the_features():
    # a transformer without a budget of its own: the classifier's part is still refused
    X, _, y_ssl = two_moons_ssl(200, 5)
    transformer = Nystroem(gamma=2.0, n_components=100, random_state=0)
    model = StorageFitClassifier(transformer=transformer, memory_budget=100_000)
    with pytest.raises(MemoryBudgetError, match="200x100 virtual samples"):
        model.fit(X, y_ssl)


def test_three_classes_one_vs_rest():
    X, y = blobs(40, 3, seed=3)
    y_ssl = hide_labels(y, 3, seed=3)
    model = StorageFitClassifier(transformer=_nysck(), random_state=0).fit(X, y_ssl)
    decision = model.decision_function(X)
    assert decision.shape == (120, 3)
    np.testing.assert_array_equal(model.predict(X), np.argmax(decision, axis=1))
    assert np.mean(model.transduction_ == y) > 0.9


def test_nested_parameters_in_a_search_and_cross_validation():
    X, _, y_ssl = two_moons_ssl(160, 8)
    model = StorageFitClassifier(transformer=_nysck(), classifier=LinearSVC(), random_state=0)
    grid = {"transformer__gamma": [0.5, 4.0], "classifier__C": [0.1, 10.0]}
    cv = SSLKFold(2, random_state=0)
    search = SSLGridSearchCV(model, grid, cv=cv).fit(X, y_ssl)
    assert len(search.cv_results_["params"]) == 4
    best = search.best_estimator_
    assert best.transformer_.gamma in (0.5, 4.0) and best.classifier_.C in (0.1, 10.0)
    assert model.transformer.gamma == "median"  # the grid set copies, not the given objects
    scores = ssl_cross_val_score(model, X, y_ssl, cv=cv)
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))
