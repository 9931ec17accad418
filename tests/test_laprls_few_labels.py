"""LapRLS classifiers at few labels (issue 12, part 3; ``benchmarks/results/few_label_laprls/``).

Class-balanced zero-mean targets, columns centred by their diag(L)-weighted mean (Poisson
learning's normalization) and ``intrinsic_reg="auto"`` = 0.01·(n/l)².
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from oracles import balanced_class_targets, zero_mean_class_targets
from semiscale._validation import (
    balanced_targets,
    check_classification_targets,
    one_vs_rest_targets,
    zero_mean_targets,
)
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import (
    LapRLSClassifier,
    LapRLSRegressor,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)
from semiscale.models._base import auto_intrinsic_reg


def _targets(y_ssl):
    return check_classification_targets(np.asarray(y_ssl), len(y_ssl), unlabeled=-1)


# -- balanced_targets -------------------------------------------------------------------------


def test_zero_mean_targets_binary_equal_counts_are_plus_minus_one():
    t = _targets([0, 1, -1, 1, 0, -1])
    Y = balanced_targets(t)
    np.testing.assert_array_equal(Y[:, 0], [-1.0, 1.0, 0.0, 1.0, -1.0, 0.0])
    np.testing.assert_array_equal(Y, one_vs_rest_targets(t))


def test_zero_mean_targets_binary_unequal_counts():
    # l = 4 labels: three of class "a" (classes_[0]), one of class "b" (classes_[1])
    t = check_classification_targets(np.array(["a", "a", "?", "a", "b"]), 5, unlabeled="?")
    Y = balanced_targets(t)
    np.testing.assert_allclose(Y[:, 0], [-4 / 6, -4 / 6, 0.0, -4 / 6, 4 / 2])
    assert Y[:, 0].sum() == pytest.approx(0.0)  # each class carries l/2 in absolute value


def test_zero_mean_targets_multiclass():
    y_ssl = np.array([0, 0, 0, 0, 1, 2, 2, -1, -1, 1, 1, 1, 1, 1])
    Y = balanced_targets(_targets(y_ssl))
    l, C = 12, 3
    assert Y.shape == (14, 3)
    np.testing.assert_allclose(Y, balanced_class_targets(y_ssl))
    np.testing.assert_allclose(Y[0], np.array([2 / 3, -1 / 3, -1 / 3]) * l / (C * 4))
    np.testing.assert_allclose(Y.sum(axis=1), 0.0, atol=1e-15)  # rows sum to 0
    np.testing.assert_array_equal(Y[[7, 8]], 0.0)  # unlabeled rows
    for c in range(C):  # every class has the same total weight, whatever its count
        rows = y_ssl == c
        np.testing.assert_allclose(Y[rows].sum(axis=0), np.eye(C)[c] * l / C - l / C**2)


# -- centring and the fitted model ------------------------------------------------------------


def _blobs(seed=0, n_per=60, labels=(1, 1, 1)):
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat([0, 1, 2], n_per)
    X = centers[y] + 0.6 * rng.standard_normal((y.size, 2))
    y_ssl = np.full_like(y, -1)
    for c, m in enumerate(labels):
        y_ssl[rng.choice(np.flatnonzero(y == c), m, replace=False)] = c
    return X, y, y_ssl


CLASSIFIERS = [
    pytest.param(lambda **kw: LapRLSClassifier(**kw), id="exact"),
    pytest.param(
        lambda **kw: NystromLapRLSClassifier(n_centers=80, random_state=0, **kw), id="nystrom"
    ),
]


@pytest.mark.parametrize("make", CLASSIFIERS)
@pytest.mark.parametrize("labels", [(1, 1, 1), (1, 4, 2)])
def test_decision_is_centred_and_consistent(make, labels):
    X, _, y_ssl = _blobs(labels=labels)
    graph = KNNGraph(n_neighbors=8, method="exact")
    model = make(kernel=RBF(gamma=0.5), graph=graph).fit(X, y_ssl)
    d = model.graph_.laplacian_.diagonal()
    D = model.decision_function(X)
    scale = np.abs(D).max()
    # the centred fit has diag(L)-weighted mean 0, the labeled proportions are added back
    prior = np.bincount(y_ssl[y_ssl >= 0]) / np.sum(y_ssl >= 0)
    np.testing.assert_allclose(d @ D / d.sum(), prior, atol=1e-9 * scale)
    np.testing.assert_array_equal(model.classes_[D.argmax(axis=1)], model.transduction_)
    np.testing.assert_array_equal(model.predict(X), model.transduction_)
    assert model.decision_scale_ > 0


def test_binary_decision_is_centred_and_positive_means_classes_1():
    X, y, y_ssl = _blobs(labels=(2, 3, 0))
    keep = y < 2
    X, y, y_ssl = X[keep], y[keep], y_ssl[keep]
    labels = np.array(["neg", "pos"])[y].astype(object)
    labels[y_ssl == -1] = "?"
    model = LapRLSClassifier(kernel=RBF(gamma=0.5), unlabeled="?").fit(X, labels)
    f = model.decision_function(X)
    assert f.shape == (X.shape[0],)
    d = model.graph_.laplacian_.diagonal()
    share_pos = 3 / 5  # labeled proportions: 2 "neg", 3 "pos"
    assert abs(d @ f / d.sum() - (share_pos - (1 - share_pos))) <= 1e-9 * np.abs(f).max()
    np.testing.assert_array_equal(np.where(f > 0, "pos", "neg"), model.predict(X))
    assert (model.predict(X) == np.array(["neg", "pos"])[y]).mean() > 0.95


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_no_centring_without_graph(make):
    X, _, y_ssl = _blobs(labels=(3, 3, 3))
    model = make(kernel=RBF(gamma=0.5), intrinsic_reg=0.0).fit(X, y_ssl)
    assert model.graph_ is None and model.intrinsic_reg_ == 0.0
    np.testing.assert_allclose(model.intercept_, 1 / 3)  # the labeled prior only, no shift


def test_hinge_type_loss_keeps_plus_minus_one_and_no_centring():
    class HuberLapRLS(LapRLSClassifier):
        _loss = "huber_hinge"

    X, _, y_ssl = _blobs(labels=(3, 3, 3))
    model = HuberLapRLS(kernel=RBF(gamma=0.5), intrinsic_reg=1.0).fit(X, y_ssl)
    np.testing.assert_array_equal(model.intercept_, 0.0)


# -- intrinsic_reg="auto" ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls,regressor",
    [(LapRLSClassifier, LapRLSRegressor), (NystromLapRLSClassifier, NystromLapRLSRegressor)],
)
def test_auto_intrinsic_reg(cls, regressor):
    assert cls().get_params()["intrinsic_reg"] == "auto"
    assert regressor().get_params()["intrinsic_reg"] == 1.0  # the regressors keep theirs
    X, _, y_ssl = _blobs(labels=(1, 2, 1))
    n, l = X.shape[0], 4
    assert auto_intrinsic_reg(n, l) == pytest.approx(0.01 * (n / l) ** 2)
    # the exact classifier's factor was re-chosen on the default graph (auto_intrinsic_reg/)
    factor = 1.0 if cls is LapRLSClassifier else 0.01
    assert auto_intrinsic_reg(n, l, factor) == pytest.approx(factor * (n / l) ** 2)
    kw = dict(kernel=RBF(gamma=0.5), graph=KNNGraph(n_neighbors=8, method="exact"))
    if cls is NystromLapRLSClassifier:
        kw.update(n_centers=80, random_state=0)
    auto = cls(**kw).fit(X, y_ssl)
    assert auto.intrinsic_reg_ == pytest.approx(factor * (n / l) ** 2)
    explicit = cls(intrinsic_reg=factor * (n / l) ** 2, **kw).fit(X, y_ssl)
    assert explicit.intrinsic_reg_ == auto.intrinsic_reg_
    np.testing.assert_allclose(auto.decision_function(X), explicit.decision_function(X))
    with pytest.raises(ValueError, match="intrinsic_reg"):
        cls(intrinsic_reg="large").fit(X, y_ssl)
    with pytest.raises(ValueError, match="intrinsic_reg"):
        regressor(intrinsic_reg="auto").fit(X, np.where(y_ssl == -1, np.nan, y_ssl))


def test_auto_with_a_precomputed_laplacian_and_direct_budget_check():
    X, _, y_ssl = _blobs(labels=(1, 1, 1))
    L = KNNGraph(n_neighbors=8, method="exact").fit(X).laplacian_
    model = LapRLSClassifier(kernel=RBF(gamma=0.5)).fit(X, y_ssl, laplacian=L)
    assert model.intrinsic_reg_ == pytest.approx(1.0 * (X.shape[0] / 3) ** 2)  # the exact factor
    assert model.graph_ is None


# -- one label per class: the new defaults against the previous ones --------------------------


class _PreviousModel(LapRLSClassifier):
    """The classifier before issue 12 part 3: ±1 one-vs-rest targets, no centring."""

    _zero_mean_targets = False
    _centre_decision = False


def test_one_label_per_class_digits_new_default_beats_previous():
    """sklearn's digits (1,797 images), one label per class, three draws: LapRLSClassifier()
    against the previous model and default (±1, no centring, intrinsic_reg=1).  Measured:
    93.8/83.3/92.2 % against 92.6/81.0/91.3 %."""
    X, y = load_digits(return_X_y=True)
    gains = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        y_ssl = np.full_like(y, -1)
        for c in range(10):
            y_ssl[rng.choice(np.flatnonzero(y == c))] = c
        unlabeled = y_ssl == -1
        graph = KNNGraph(random_state=0).fit(X)

        def accuracy(model, y_ssl=y_ssl, graph=graph, unlabeled=unlabeled):
            model.fit(X, y_ssl, laplacian=graph.laplacian_)
            return (model.transduction_[unlabeled] == y[unlabeled]).mean()

        new = accuracy(LapRLSClassifier(random_state=0))
        old = accuracy(_PreviousModel(intrinsic_reg=1.0, random_state=0))
        assert new > old
        gains.append(new - old)
    assert np.mean(gains) > 0.01


# -- zero-mean targets (the default) and balanced_targets=True ----------------------------------
def test_zero_mean_targets_keep_the_labeled_proportions():
    y_ssl = np.array([0, 0, 0, 1, 2, 2, -1, -1])
    Y = zero_mean_targets(_targets(y_ssl))
    np.testing.assert_allclose(Y, zero_mean_class_targets(y_ssl))
    np.testing.assert_allclose(Y[:6].sum(axis=0), 0.0, atol=1e-12)  # zero mean per column
    np.testing.assert_allclose(Y[:6].sum(axis=1), 0.0, atol=1e-12)  # rows sum to 0
    binary = np.array([0, 0, 0, 1, -1])
    np.testing.assert_allclose(zero_mean_targets(_targets(binary)).ravel(), [-0.5] * 3 + [1.5, 0])


def test_zero_mean_and_balanced_targets_agree_at_equal_counts():
    y_ssl = np.array([0, 0, 1, 1, 2, 2, -1])
    np.testing.assert_allclose(
        zero_mean_targets(_targets(y_ssl)), balanced_targets(_targets(y_ssl))
    )


def test_balanced_targets_option_switches_the_coding():
    X, y = make_two_moons(120, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[np.flatnonzero(y == 0)[:6]] = 0  # unequal counts: 6 against 2
    y_ssl[np.flatnonzero(y == 1)[:2]] = 1
    default = LapRLSClassifier().fit(X, y_ssl)
    balanced = LapRLSClassifier(balanced_targets=True).fit(X, y_ssl)
    assert not np.allclose(default.decision_function(X), balanced.decision_function(X))
    with pytest.raises(ValueError, match="balanced_targets"):
        LapRLSClassifier(balanced_targets="yes").fit(X, y_ssl)


# -- the labeled prior added back to the decision -----------------------------------------------


class _NoPrior(LapRLSClassifier):
    _prior_decision = False


class _NystromNoPrior(NystromLapRLSClassifier):
    _prior_decision = False


@pytest.mark.parametrize(
    "cls,no_prior,kw",
    [
        (LapRLSClassifier, _NoPrior, {}),
        (NystromLapRLSClassifier, _NystromNoPrior, {"n_centers": 80, "random_state": 0}),
    ],
)
@pytest.mark.parametrize("labels", [(1, 1, 1), (6, 2, 1)])
def test_prior_decision_is_the_scaled_fit_plus_the_labeled_proportions(cls, no_prior, kw, labels):
    X, _, y_ssl = _blobs(labels=labels)
    kw = dict(kernel=RBF(gamma=0.5), graph=KNNGraph(n_neighbors=8, method="exact"), **kw)
    model, plain = cls(**kw).fit(X, y_ssl), no_prior(**kw).fit(X, y_ssl)
    F = plain.decision_function(X)
    lab = y_ssl >= 0
    Y = np.eye(3)[y_ssl[lab]]
    prior = Y.mean(axis=0)
    Y -= prior  # the zero-mean targets
    alpha = np.vdot(F[lab], Y) / np.vdot(F[lab], F[lab])
    assert model.decision_scale_ == pytest.approx(alpha)
    np.testing.assert_allclose(model.decision_function(X), alpha * F + prior, atol=1e-8)
    X_new = X[:7] + 0.1
    np.testing.assert_allclose(
        model.decision_function(X_new), alpha * plain.decision_function(X_new) + prior, atol=1e-8
    )
    if len(set(labels)) == 1:  # equal counts: a constant shift, the same predictions
        np.testing.assert_array_equal(model.transduction_, plain.transduction_)


def test_prior_decision_favours_the_frequent_class_on_imbalanced_data():
    """Two overlapping Gaussians, 80 % of class 0, labels drawn at random (so the labeled
    proportions estimate the prior): the prior-aware decision predicts the frequent class more
    often and is more accurate than the arg max of the zero-mean fit."""
    rng = np.random.default_rng(0)
    y = (rng.random(600) < 0.2).astype(int)
    X = rng.standard_normal((600, 2)) + 1.2 * y[:, None]
    y_ssl = np.full_like(y, -1)
    y_ssl[:40] = y[:40]
    kw = dict(kernel=RBF(gamma=0.5), graph=KNNGraph(n_neighbors=8, method="exact"))
    model, plain = LapRLSClassifier(**kw).fit(X, y_ssl), _NoPrior(**kw).fit(X, y_ssl)
    u = y_ssl == -1
    assert (model.transduction_ == 0).mean() > (plain.transduction_ == 0).mean()
    assert (model.transduction_[u] == y[u]).mean() > (plain.transduction_[u] == y[u]).mean()


def test_balanced_targets_add_no_prior():
    X, _, y_ssl = _blobs(labels=(6, 2, 1))
    model = LapRLSClassifier(kernel=RBF(gamma=0.5)).fit(X, y_ssl)
    assert hasattr(model, "decision_scale_")
    model.set_params(balanced_targets=True).fit(X, y_ssl)  # refit: no stale scale
    assert not hasattr(model, "decision_scale_")
    d = model.graph_.laplacian_.diagonal()
    D = model.decision_function(X)
    np.testing.assert_allclose(d @ D, 0.0, atol=1e-9 * np.abs(D).max() * d.sum())
