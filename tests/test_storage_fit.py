"""StorageFitClassifier: a linear classifier on the virtual samples of a cluster kernel."""

import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from reference_problems import blobs, hide_labels, two_moons_ssl
from semiscale._memory import MemoryBudgetError
from semiscale.cluster_kernels import ClusterKernel, NystromClusterKernel
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
    # the budget less the classifier's reserved part
    assert np.isnan(params["unlabeled"]) and params["memory_budget"] == model.transformer_budget_
    assert 0 < model.transformer_budget_ < 64 * 2**20
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


def _classifier_bytes(n, n_labeled, k, n_columns=1):
    # the labeled rows, liblinear's nodes (16 bytes, k + 2 a row) and the decision values
    return 8 * n_labeled * k + 16 * n_labeled * (k + 2) + 8 * n * n_columns


def test_the_classifiers_part_is_reserved_before_the_transformer_sizes_its_model():
    # REV's failing input: the whole budget went to NysCK (k = 209), and the classifier's copy
    # of the 8,000 labeled rows was refused after the fit ("70.6 MiB needed" of 60 MB)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 10))
    y = (X[:, 0] > 0).astype(int)
    y[8000:] = -1
    transformer = NystromClusterKernel(n_components="budget", gamma=0.05)
    model = StorageFitClassifier(transformer=transformer, memory_budget="60MB", random_state=0)
    model.fit(X, y)
    k = model.n_components_
    assert model.transformer_.memory_budget == model.transformer_budget_ < 60 * 2**20
    used = model.transformer_.estimated_bytes_ + _classifier_bytes(20000, 8000, k)
    assert used <= 60 * 2**20, used


@pytest.mark.parametrize("virtual_samples", ["all", "streamed"])
def test_the_transformer_and_the_classifier_share_the_budget(virtual_samples):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 10))
    y = (X[:, 0] > 0).astype(int)
    y[2400:] = -1
    model = StorageFitClassifier(
        transformer=NystromClusterKernel(n_components="budget", gamma=0.05),
        memory_budget="16MB",
        virtual_samples=virtual_samples,
        random_state=0,
    )
    tracemalloc.start()
    try:
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    k = model.n_components_
    used = model.transformer_.estimated_bytes_ + _classifier_bytes(6000, 2400, k)
    assert used <= 16 * 2**20 and peak <= 16 * 2**20, (used, peak)


@pytest.mark.parametrize(
    "transformer",
    [
        lambda: NystromClusterKernel(n_components=30, random_state=0),
        lambda: ClusterKernel(gamma=2.0, random_state=0),
        lambda: ClusterKernel(gamma=2.0, max_samples=120, random_state=0),
    ],
)
def test_streamed_virtual_samples_give_the_model_of_all_of_them(transformer):
    X, _, y_ssl = two_moons_ssl(300, 10)
    Z = np.random.RandomState(3).randn(50, 2)
    models = {
        mode: StorageFitClassifier(
            transformer=transformer(), virtual_samples=mode, memory_budget="64MB", random_state=0
        ).fit(X, y_ssl)
        for mode in ("all", "streamed")
    }
    all_, streamed = models["all"], models["streamed"]
    assert all_.n_components_ == streamed.n_components_
    np.testing.assert_allclose(
        streamed.classifier_.coef_, all_.classifier_.coef_, rtol=1e-8, atol=1e-8
    )
    np.testing.assert_array_equal(streamed.transduction_, all_.transduction_)
    np.testing.assert_allclose(
        streamed.decision_function(Z), all_.decision_function(Z), rtol=1e-8, atol=1e-10
    )
    np.testing.assert_array_equal(streamed.predict(X), all_.predict(X))


def test_streamed_random_subsample_fits_where_all_rows_are_refused():
    # ClusK+RandSub: fit_transform holds F of every row (6,000 x >= 1,000); fit and blocks of
    # transform do not, and the traced peak stays within the budget
    rng = np.random.RandomState(0)
    X = rng.randn(6000, 5)
    y = np.full(6000, -1)
    y[:1000] = (X[:1000, 0] > 0).astype(int)
    params = dict(
        transformer=ClusterKernel(max_samples="budget", gamma=0.5, random_state=0),
        memory_budget="64MB",
        random_state=0,
    )
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        StorageFitClassifier(**params).fit(X, y)
    model = StorageFitClassifier(virtual_samples="streamed", **params)
    tracemalloc.start()
    try:
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 64 * 2**20, peak
    assert 1000 < model.transformer_.n_fit_samples_ < 6000
    assert model.transduction_.shape == (6000,)
    np.testing.assert_array_equal(model.predict(X[:500]), model.transduction_[:500])


def test_decisions_in_blocks_equal_one_block():
    X, _, y_ssl = two_moons_ssl(400, 10)
    model = StorageFitClassifier(transformer=_nysck(), memory_budget="64MB", random_state=0)
    model.fit(X, y_ssl)
    whole = model.classifier_.decision_function(model.transformer_.transform(X))
    model.set_params(memory_budget=8 * 8 * (20 + 1) * 7)  # blocks of 7 rows
    np.testing.assert_allclose(model.decision_function(X), whole, rtol=1e-9, atol=1e-12)


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
