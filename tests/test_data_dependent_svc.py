"""DataDependentSVC: the paper's recipe (kernel on all points, libsvm on the labeled ones)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC

from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.kernels import RBF, DataDependentKernel, Linear
from semiscale.models import DataDependentSVC


def _moons(n=200, per_class=4, seed=0):
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    y_ssl = np.full_like(y, -1)
    for c in (0, 1):
        y_ssl[np.flatnonzero(y == c)[:per_class]] = c
    return X, y, y_ssl


def _three_blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat([0, 1, 2], 40)
    X = centres[y] + rng.normal(scale=0.8, size=(120, 2))
    y_ssl = np.full_like(y, -1)
    for c in range(3):
        y_ssl[np.flatnonzero(y == c)[:5]] = c
    return X, y, y_ssl


def _ddk(**params):
    return DataDependentKernel(n_landmarks=30, random_state=0, **params)


@pytest.mark.parametrize("kernel", [RBF(gamma=2.0), _ddk()], ids=["rbf", "data-dependent"])
def test_equals_the_manual_recipe_exactly(kernel):
    X, _, y_ssl = _moons()
    X_new = X[:50] + 0.03
    model = DataDependentSVC(kernel=kernel, C=10.0, random_state=0).fit(X, y_ssl)
    # the recipe by hand: the kernel fitted on every point, SVC on the labeled Gram matrix
    fitted = kernel.fit(X, y_ssl, random_state=0)
    labeled = y_ssl != -1
    svc = SVC(kernel="precomputed", C=10.0).fit(fitted(X[labeled]), y_ssl[labeled])
    np.testing.assert_array_equal(
        model.decision_function(X_new), svc.decision_function(fitted(X_new, X[labeled]))
    )
    np.testing.assert_array_equal(model.transduction_, svc.predict(fitted(X, X[labeled])))
    np.testing.assert_array_equal(model.support_, np.sort(np.flatnonzero(labeled)[svc.support_]))


def test_equals_svc_with_the_fitted_kernel_as_a_callable():
    X, _, y_ssl = _moons()
    model = DataDependentSVC(kernel=_ddk(), random_state=0).fit(X, y_ssl)
    labeled = y_ssl != -1
    svc = SVC(kernel=model.kernel_).fit(X[labeled], y_ssl[labeled])
    np.testing.assert_array_equal(model.predict(X), svc.predict(X))
    np.testing.assert_allclose(
        model.decision_function(X), svc.decision_function(X), rtol=1e-12, atol=1e-12
    )


def test_multiclass_is_one_vs_rest_as_scikit_learns():
    X, y, y_ssl = _three_blobs()
    kernel = RBF(gamma=0.5)
    model = DataDependentSVC(kernel=kernel).fit(X, y_ssl)
    labeled = y_ssl != -1
    ovr = OneVsRestClassifier(SVC(kernel="precomputed")).fit(kernel(X[labeled]), y_ssl[labeled])
    K_new = kernel(X, X[labeled])
    assert len(model.estimators_) == 3 and model.n_iter_.shape == (3,)
    np.testing.assert_array_equal(model.decision_function(X), ovr.decision_function(K_new))
    np.testing.assert_array_equal(model.predict(X), ovr.predict(K_new))
    assert (model.transduction_ == y).mean() > 0.9


def test_a_fixed_rbf_kernel_is_svc_on_the_labeled_rows():
    X, _, y_ssl = _moons()
    labeled = y_ssl != -1
    # a tight libsvm tolerance: the two compute the Gaussian's rounding differently, so both
    # must reach the same optimum rather than stop at the same iterate
    model = DataDependentSVC(kernel=RBF(gamma=2.0), C=3.0, tol=1e-10).fit(X, y_ssl)
    svc = SVC(kernel="rbf", gamma=2.0, C=3.0, tol=1e-10).fit(X[labeled], y_ssl[labeled])
    np.testing.assert_allclose(
        model.decision_function(X), svc.decision_function(X), rtol=1e-7, atol=1e-7
    )
    np.testing.assert_array_equal(model.predict(X), svc.predict(X))


def test_class_weight_is_svcs_for_two_classes_and_the_original_classes_for_more():
    X, _, y_ssl = _moons(per_class=6)
    y_ssl[np.flatnonzero(y_ssl == 1)[:3]] = -1  # 6 against 3 labels
    labeled = y_ssl != -1
    kernel = RBF(gamma=2.0)
    for weight in ("balanced", {0: 1.0, 1: 5.0}):
        model = DataDependentSVC(kernel=kernel, class_weight=weight).fit(X, y_ssl)
        svc = SVC(kernel="precomputed", class_weight=weight).fit(kernel(X[labeled]), y_ssl[labeled])
        np.testing.assert_array_equal(
            model.decision_function(X), svc.decision_function(kernel(X, X[labeled]))
        )
    X, _, y_ssl = _three_blobs()
    labeled = y_ssl != -1
    weights = {0: 1.0, 1: 2.0, 2: 4.0}
    model = DataDependentSVC(kernel=kernel, class_weight=weights).fit(X, y_ssl)
    G, y_l = kernel(X[labeled]), y_ssl[labeled]
    for c, machine in enumerate(model.estimators_):
        by_hand = SVC(kernel="precomputed").fit(
            G, (y_l == c).astype(int), sample_weight=np.array([weights[v] for v in y_l])
        )
        np.testing.assert_array_equal(machine.dual_coef_, by_hand.dual_coef_)
    with pytest.raises(ValueError, match=r"class_weight names \[7\].*not classes"):
        DataDependentSVC(kernel=kernel, class_weight={7: 1.0}).fit(X, y_ssl)


def test_transduction_is_the_prediction_of_the_training_points():
    X, y, y_ssl = _moons(300, per_class=3)
    model = DataDependentSVC(kernel=_ddk(eta=10.0), C=10.0, random_state=0).fit(X, y_ssl)
    np.testing.assert_array_equal(model.transduction_, model.predict(X))
    assert model.transduction_.shape == (300,) and model.n_labeled_ == 6
    np.testing.assert_array_equal(model.X_fit_, X[y_ssl != -1])


def test_the_graph_kernel_beats_the_plain_rbf_on_two_moons_with_three_labels():
    # the paper's point (§5.1), on a small problem: the labels spread along the moons (at this
    # setting 95.9 % of the unlabeled points right against 82.3 % for the plain RBF SVM)
    X, y, y_ssl = _moons(300, per_class=3)
    plain = DataDependentSVC(kernel="rbf", random_state=0).fit(X, y_ssl)
    kernel = _ddk(base_kernel=RBF(gamma=2.0), power=1, eta=1000.0)
    graph = DataDependentSVC(kernel=kernel, random_state=0).fit(X, y_ssl)
    unlabeled = y_ssl == -1
    plain_acc = (plain.transduction_[unlabeled] == y[unlabeled]).mean()
    graph_acc = (graph.transduction_[unlabeled] == y[unlabeled]).mean()
    assert graph_acc > plain_acc and graph_acc > 0.95, (graph_acc, plain_acc)


def test_a_seed_reproduces_the_landmarks_and_the_fit():
    X, _, y_ssl = _moons()
    kernel = DataDependentKernel(n_landmarks=20, landmark_selection="random")
    first = DataDependentSVC(kernel=kernel, random_state=5).fit(X, y_ssl)
    again = DataDependentSVC(kernel=kernel, random_state=5).fit(X, y_ssl)
    other = DataDependentSVC(kernel=kernel, random_state=6).fit(X, y_ssl)
    np.testing.assert_array_equal(first.kernel_.landmarks_, again.kernel_.landmarks_)
    np.testing.assert_array_equal(first.decision_function(X), again.decision_function(X))
    assert not np.array_equal(first.kernel_.landmarks_, other.kernel_.landmarks_)


def test_blocks_under_a_small_budget_give_the_same_decision(monkeypatch):
    import semiscale.linalg.ops as ops

    X, _, y_ssl = _moons(400)
    rows = []
    original = ops.ArrayOps.kernel_blocks

    def spy(self, kernel, A, B=None, memory_budget=None, **kwargs):
        for sl, K in original(self, kernel, A, B, memory_budget, **kwargs):
            rows.append(sl.stop - sl.start)
            yield sl, K

    model = DataDependentSVC(kernel=Linear()).fit(X, y_ssl)
    whole = model.decision_function(X)
    monkeypatch.setattr(ops.ArrayOps, "kernel_blocks", spy)
    small = model.set_params(memory_budget=2000).decision_function(X)
    assert max(rows) < 400 and len(rows) > 1  # several blocks
    np.testing.assert_allclose(small, whole, rtol=1e-12, atol=1e-12)


def test_float32_data_give_the_float64_model():
    X, _, y_ssl = _moons()
    m32 = DataDependentSVC(kernel=RBF(gamma=2.0)).fit(X.astype(np.float32), y_ssl)
    m64 = DataDependentSVC(kernel=RBF(gamma=2.0)).fit(X.astype(np.float32).astype(float), y_ssl)
    assert m32.X_fit_.dtype == np.float32
    np.testing.assert_array_equal(m32.decision_function(X[:20]), m64.decision_function(X[:20]))


def test_clear_errors():
    X, _, y_ssl = _moons()
    with pytest.raises(ValueError, match="no labeled point"):
        DataDependentSVC(kernel=Linear()).fit(X, np.full_like(y_ssl, -1))
    one_class = np.where(y_ssl == 1, -1, y_ssl)
    with pytest.raises(ValueError, match="only one class"):
        DataDependentSVC(kernel=Linear()).fit(X, one_class)
    with pytest.raises(MemoryBudgetError, match="Gram matrix.*raise memory_budget"):
        DataDependentSVC(kernel=Linear(), memory_budget=500).fit(X, y_ssl)
