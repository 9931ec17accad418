"""TSVMClassifier: Joachims' label switching, its class-ratio constraint, TSVM+RandSub's budget."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC

from reference_problems import blobs, hide_labels, two_moons_ssl
from semiscale._memory import MemoryBudgetError, parse_memory_budget
from semiscale.datasets import make_two_moons
from semiscale.kernels import RBF
from semiscale.models import TSVMClassifier
from semiscale.models import tsvm as tsvm_module


def _moons(n=200, per_class=5, seed=0):
    return two_moons_ssl(n, per_class, seed=seed)


@pytest.mark.parametrize("fraction", [None, 0.3, 0.7])
def test_the_final_labeling_keeps_the_class_ratio(fraction):
    X, _, y_ssl = _moons(240, 4)
    y_ssl[np.flatnonzero(y_ssl == 1)[:2]] = -1  # 4 labels of class 0, 2 of class 1
    model = TSVMClassifier(kernel=RBF(gamma=2.0), positive_fraction=fraction).fit(X, y_ssl)
    u = int(np.sum(y_ssl == -1))
    r = 2 / 6 if fraction is None else fraction
    assert model.n_unlabeled_fit_ == u and model.imputed_positive_.shape == (1, u)
    assert int(model.imputed_positive_.sum()) == round(r * u)
    assert model.n_switched_[0] > 0  # the ratio held through switches, not only at the start


def test_each_one_vs_rest_machine_keeps_its_class_share():
    X, y = blobs(50, 3, seed=1, spread=1.5)
    y_ssl = hide_labels(y, 4, seed=1)
    y_ssl[np.flatnonzero(y_ssl == 2)[:2]] = -1  # shares 4/10, 4/10, 2/10
    model = TSVMClassifier(kernel=RBF(gamma=0.5)).fit(X, y_ssl)
    u = model.n_unlabeled_fit_
    assert model.imputed_positive_.shape == (3, u)
    np.testing.assert_array_equal(
        model.imputed_positive_.sum(axis=1), [round(0.4 * u), round(0.4 * u), round(0.2 * u)]
    )
    decision = model.decision_function(X)
    assert decision.shape == (150, 3)
    np.testing.assert_array_equal(model.predict(X), np.argmax(decision, axis=1))
    np.testing.assert_array_equal(model.transduction_, model.predict(X))


def test_three_classes_with_their_true_shares_are_learned():
    X, y = blobs(50, 3, seed=1, spread=1.5)
    y_ssl = hide_labels(y, 3, seed=1)
    model = TSVMClassifier(kernel=RBF(gamma=0.5)).fit(X, y_ssl)
    labeled = y_ssl != -1
    svc = SVC(kernel="rbf", gamma=0.5).fit(X[labeled], y[labeled])
    # 0.900 against 0.833 for the SVM on the 9 labeled points
    assert np.mean(model.transduction_ == y) > np.mean(svc.predict(X) == y) + 0.05


def test_positive_fraction_is_refused_with_more_than_two_classes():
    X, y = blobs(20, 3)
    with pytest.raises(ValueError, match="positive_fraction=0.5 is the share.*leave it None"):
        TSVMClassifier(positive_fraction=0.5).fit(X, hide_labels(y, 2))


def test_switchable_pairs_are_a_maximal_set_of_valid_disjoint_pairs():
    rng = np.random.default_rng(0)
    for _ in range(200):
        u = int(rng.integers(2, 30))
        y_u = np.where(rng.random(u) < 0.5, 1.0, -1.0)
        f_u = rng.normal(0, 1.5, u)
        pos, neg = TSVMClassifier._switchable_pairs(y_u, f_u)
        slack = np.maximum(0, 1 - y_u * f_u)
        assert np.all(y_u[pos] > 0) and np.all(y_u[neg] < 0)
        assert len(set(pos)) == pos.size and len(set(neg)) == neg.size
        assert np.all((slack[pos] > 0) & (slack[neg] > 0) & (slack[pos] + slack[neg] > 2))
        # no valid pair is left among the points not switched (brute force)
        rest_pos = [i for i in np.flatnonzero(y_u > 0) if i not in set(pos) and slack[i] > 0]
        rest_neg = [j for j in np.flatnonzero(y_u < 0) if j not in set(neg) and slack[j] > 0]
        assert not any(slack[i] + slack[j] > 2 for i in rest_pos for j in rest_neg)


def test_without_unlabeled_points_it_is_svc_on_the_labeled_points():
    X, _, y_ssl = _moons(150, 6)
    labeled = y_ssl != -1
    model = TSVMClassifier(kernel=RBF(gamma=3.0), C=5.0, max_unlabeled=0).fit(X, y_ssl)
    reference = SVC(kernel="rbf", gamma=3.0, C=5.0).fit(X[labeled], y_ssl[labeled])
    np.testing.assert_allclose(
        model.decision_function(X), reference.decision_function(X), rtol=1e-6, atol=1e-6
    )
    assert model.n_unlabeled_fit_ == 0 and model.n_iter_.tolist() == [1]


def test_the_final_machine_is_libsvm_on_the_final_labels_and_weights():
    # the precomputed Gram matrix and the kept dual coefficients against libsvm's own RBF
    X, _, y_ssl = _moons(160, 4)
    model = TSVMClassifier(kernel=RBF(gamma=2.0), C=3.0, C_unlabeled=0.5).fit(X, y_ssl)
    rows = model.fit_indices_
    labeled = y_ssl[rows] != -1
    targets = np.where(labeled, np.where(y_ssl[rows] == 1, 1.0, -1.0), 0.0)
    targets[~labeled] = np.where(model.imputed_positive_[0], 1.0, -1.0)
    weights = np.where(labeled, 3.0, 0.5)
    reference = SVC(kernel="rbf", gamma=2.0, C=1.0).fit(X[rows], targets, sample_weight=weights)
    np.testing.assert_allclose(
        model.decision_function(X), reference.decision_function(X), rtol=1e-6, atol=1e-6
    )


def test_at_its_defaults_an_unlabeled_point_weighs_a_tenth_of_a_labeled_one():
    # C = 1, C_unlabeled = 0.1 (benchmarks/results/paper003_defaults/: higher AUC than C* = 1
    # on all six sets)
    X, _, y_ssl = _moons(160, 4)
    model = TSVMClassifier(kernel=RBF(gamma=2.0)).fit(X, y_ssl)
    rows = model.fit_indices_
    labeled = y_ssl[rows] != -1
    targets = np.where(y_ssl[rows] == 1, 1.0, -1.0)
    targets[~labeled] = np.where(model.imputed_positive_[0], 1.0, -1.0)
    weights = np.where(labeled, 1.0, 0.1)
    reference = SVC(kernel="rbf", gamma=2.0, C=1.0).fit(X[rows], targets, sample_weight=weights)
    np.testing.assert_allclose(
        model.decision_function(X), reference.decision_function(X), rtol=1e-6, atol=1e-6
    )


def test_the_linear_kernel_trains_liblinear_with_the_hinge():
    X, _, y_ssl = _moons(160, 4)
    model = TSVMClassifier(kernel="linear", C_unlabeled=0.5, random_state=0).fit(X, y_ssl)
    rows = model.fit_indices_
    labeled = y_ssl[rows] != -1
    targets = np.where(y_ssl[rows] == 1, 1.0, -1.0)
    targets[~labeled] = np.where(model.imputed_positive_[0], 1.0, -1.0)
    weights = np.where(labeled, 1.0, 0.5)
    reference = LinearSVC(loss="hinge", dual=True, tol=1e-3, max_iter=10_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(X[rows], targets, sample_weight=weights)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-8)
    np.testing.assert_allclose(model.decision_function(X), reference.decision_function(X))
    assert model.X_fit_.shape == (0, 2)


def test_unfinished_switching_warns_naming_max_iter():
    X, _, y_ssl = _moons(200, 3)
    with pytest.warns(ConvergenceWarning, match="raise max_iter"):
        TSVMClassifier(kernel=RBF(gamma=2.0), max_iter=1).fit(X, y_ssl)


def test_a_switch_back_to_a_labeling_already_tried_ends_the_weight(monkeypatch):
    # australian (10 % labels, seed 0) switched one pair back and forth 50 times at
    # C* = 3.2e-4, where a switch gains less than libsvm's tolerance: a cycle, not progress
    X, _, y_ssl = _moons(120, 4)
    first = {}

    def always_the_same_pair(y_u, f_u):
        if not first:  # the first positive and negative of the initial labeling
            first["pair"] = (np.flatnonzero(y_u > 0)[:1], np.flatnonzero(y_u < 0)[:1])
        i, j = first["pair"]
        return (i, j) if y_u[i[0]] > 0 else (j, i)  # switch them, then switch them back

    monkeypatch.setattr(TSVMClassifier, "_switchable_pairs", staticmethod(always_the_same_pair))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = TSVMClassifier(kernel=RBF(gamma=2.0), C_unlabeled=1e-4, max_iter=50).fit(X, y_ssl)
    weights = 5  # 1e-5 doubled up to 1e-4: 1e-5, 2e-5, 4e-5, 8e-5, 1e-4
    # each weight: a training, the switch, a training, the switch back refused
    assert model.n_iter_[0] == 1 + 2 * weights
    assert model.n_switched_[0] == weights


def test_the_labeled_machine_on_the_whole_gram_matrix_is_the_svm_of_the_labeled_points():
    X, _, y_ssl = _moons(120, 6)
    order = np.argsort(y_ssl == -1, kind="stable")  # labeled rows first, as the fit orders them
    X, y_ssl = X[order], y_ssl[order]
    l = 12
    K = RBF(gamma=2.0)(X)
    y_l = np.where(y_ssl[:l] == 1, 1.0, -1.0)
    model = TSVMClassifier(C=3.0)
    model.kernel_ = RBF(gamma=2.0)
    weights = np.r_[np.full(l, 3.0), np.zeros(108)]
    machine = model._train(K, np.r_[y_l, np.ones(108)], weights)
    reference = SVC(kernel="precomputed", C=3.0).fit(K[:l, :l], y_l)
    np.testing.assert_allclose(
        model._decision_on(machine, K, slice(0, 120)),
        reference.decision_function(K[:, :l]),
        rtol=1e-8,
        atol=1e-8,
    )


def test_the_traced_peak_of_a_fit_stays_within_its_estimate():
    # 900 of 1,000 points labeled: the labeled machine's l x l block of the Gram matrix was
    # copied (a non-contiguous view handed to libsvm), 6.5 MB beside the 8 MB matrix
    import tracemalloc

    X, y = make_two_moons(1000, noise=0.1, random_state=0)
    y_ssl = np.where(np.arange(1000) % 10 == 0, -1, y)
    model = TSVMClassifier(kernel=RBF(gamma=2.0), C_unlabeled=1e-3, memory_budget="12MB")
    tracemalloc.start()
    try:
        model.fit(X, y_ssl)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= model.estimated_bytes_ <= parse_memory_budget("12MB"), (peak, model)


def test_the_gamma_heuristic_is_counted_and_refused_before_it_runs():
    # the median heuristic's 1,000-point sample (19.5 MiB traced) ran before the budget check
    # and was not counted: estimated 5.0 MiB at memory_budget="5MB"
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 10))
    y = (X[:, 0] > 0).astype(int)
    y[500:] = -1
    model = TSVMClassifier(memory_budget="5MB", max_unlabeled="budget")
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match="gamma='median'.*numeric gamma"):
            model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak  # refused before the sample's distances
    model = TSVMClassifier(memory_budget="40MB", max_unlabeled=300, random_state=0)
    tracemalloc.start()
    try:
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= model.estimated_bytes_ <= parse_memory_budget("40MB"), (peak, model)


# ------------------------------------------------------------------ TSVM+RandSub's budget
def test_an_integer_max_unlabeled_draws_that_many_unlabeled_points():
    X, _, y_ssl = _moons(200, 5)
    model = TSVMClassifier(max_unlabeled=50, random_state=0).fit(X, y_ssl)
    assert model.n_unlabeled_fit_ == 50
    assert np.all(y_ssl[model.unlabeled_indices_] == -1)
    np.testing.assert_array_equal(model.fit_indices_[:10], np.flatnonzero(y_ssl != -1))
    again = TSVMClassifier(max_unlabeled=50, random_state=0).fit(X, y_ssl)
    np.testing.assert_array_equal(again.unlabeled_indices_, model.unlabeled_indices_)
    assert model.transduction_.shape == (200,)  # the others are predicted inductively


def test_the_budget_sample_grows_with_the_budget_and_its_count_stays_under_it():
    X, _, y_ssl = _moons(3000, 20)
    sizes = []
    for budget in ("2MB", "8MB", "32MB"):
        # a numeric gamma: the median heuristic's sample alone needs 24.8 MiB here
        model = TSVMClassifier(
            kernel=RBF(gamma=2.0), max_unlabeled="budget", memory_budget=budget, random_state=0
        )
        model.set_params(C_unlabeled=1e-3).fit(X, y_ssl)  # few switches: a quick fit
        assert model.estimated_bytes_ <= parse_memory_budget(budget)
        sizes.append(model.n_unlabeled_fit_)
        # the largest sample: one more point would not fit
        parts = model._training_bytes(40 + model.n_unlabeled_fit_ + 1, X, 3000, 1, RBF())
        assert model.n_unlabeled_fit_ == 2960 or sum(parts.values()) > parse_memory_budget(budget)
    assert sizes[0] < sizes[1] < sizes[2]


def test_a_budget_too_small_is_refused_before_the_gram_matrix(monkeypatch):
    X, _, y_ssl = _moons(400, 5)

    def no_gram(*args, **kwargs):
        raise AssertionError("the Gram matrix was computed before the budget was checked")

    monkeypatch.setattr(tsvm_module, "kernel_matrix", no_gram)
    with pytest.raises(MemoryBudgetError, match="set max_unlabeled='budget'") as info:
        TSVMClassifier(kernel=RBF(gamma=2.0), memory_budget="1MB").fit(X, y_ssl)
    assert "400x400 Gram matrix" in str(info.value)
    with pytest.raises(MemoryBudgetError, match="memory_budget=10.0 KiB") as info:
        TSVMClassifier(kernel=RBF(gamma=2.0), memory_budget="10KB", max_unlabeled="budget").fit(
            X, y_ssl
        )
    assert "10 labeled and 0 unlabeled" in str(info.value)
    assert "set max_unlabeled" not in str(info.value)  # it is set: no fix to offer but the budget
