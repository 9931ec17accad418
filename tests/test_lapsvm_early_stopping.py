"""Early stopping of the primal LapSVMs' Newton iteration (Melacci & Belkin's stability check)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from semiscale.graph import KNNGraph
from semiscale.models import LapSVC, NystromLapSVC
from semiscale.solvers.newton import _sides


def _problem(n=300, n_labeled=80, seed=0):
    X, y = make_classification(n, 10, n_informative=5, flip_y=0.05, random_state=seed)
    y_ssl = np.where(np.arange(n) < n_labeled, y, -1)
    L = KNNGraph(method="exact").fit(X).laplacian_
    return X, y, y_ssl, L


def test_sides_are_taken_after_the_centring():
    f = np.array([1.0, 2.0, 3.0, 10.0])
    np.testing.assert_array_equal(_sides(f, None), [True, True, True, True])
    # weighted mean (1 + 2 + 3 + 10·3) / 6 = 6: only the last point is above it
    np.testing.assert_array_equal(_sides(f, np.array([1.0, 1.0, 1.0, 3.0])), [0, 0, 0, 1])


@pytest.mark.parametrize(
    "estimator",
    [LapSVC(loss="huber_hinge"), NystromLapSVC(loss="huber_hinge", n_centers=100, random_state=0)],
)
def test_early_stopping_takes_fewer_newton_steps_and_predicts_alike(estimator):
    """The Huber hinge without early stopping takes 20-odd Newton steps here (continuation);
    stopped once at most 1 % of the points change side, it takes fewer and predicts the same
    labels on at least 97 % of the points."""
    from sklearn.base import clone

    X, _, y_ssl, L = _problem()
    full = clone(estimator).fit(X, y_ssl, laplacian=L)
    early = clone(estimator).set_params(early_stopping=True, stability_tol=0.01)
    early.fit(X, y_ssl, laplacian=L)
    info = early.solver_info_
    assert info["stopped_early"] == [True]
    (changes,) = info["side_changes"]
    # one change recorded per step after the first, the last within the tolerance
    assert len(changes) == info["newton_iterations"][0] - 1
    # an earlier change within the tolerance only at the last step of a continuation stage,
    # which hands over to the next width instead of stopping (change j is at step j + 2)
    stage_ends = np.cumsum([stage["newton_iterations"] for stage in info["continuation"][0]]) - 2
    assert changes[-1] <= 0.01
    assert all(c > 0.01 or j in stage_ends for j, c in enumerate(changes[:-1]))
    assert info["newton_iterations"][0] < full.solver_info_["newton_iterations"][0]
    assert np.mean(early.transduction_ == full.transduction_) >= 0.97
    # without early stopping nothing is reported
    assert "stopped_early" not in full.solver_info_


def test_a_tolerance_of_one_stops_at_the_first_comparison_and_zero_needs_no_change():
    """Sides are compared from the second step on (across continuation stages); a stage that
    converges hands over to the next width instead of stopping."""
    X, _, y_ssl, L = _problem()
    first = LapSVC(loss="huber_hinge", early_stopping=True, stability_tol=1.0)
    first.fit(X, y_ssl, laplacian=L)
    assert first.solver_info_["stopped_early"] == [True]
    assert first.solver_info_["side_changes"][0] == first.solver_info_["side_changes"][0][:1]
    assert first.solver_info_["newton_iterations"][0] == 2
    exact = LapSVC(loss="huber_hinge", early_stopping=True, stability_tol=0.0)
    exact.fit(X, y_ssl, laplacian=L)
    (changes,) = exact.solver_info_["side_changes"]
    assert exact.solver_info_["stopped_early"] == [True] and changes[-1] == 0.0
    assert all(c > 0.0 for c in changes[:-1])


def test_early_stopping_is_per_class():
    X, y = make_classification(
        240, 8, n_informative=6, n_classes=3, n_clusters_per_class=1, random_state=1
    )
    y_ssl = np.where(np.arange(240) < 60, y, -1)
    model = LapSVC(loss="huber_hinge", early_stopping=True, stability_tol=0.02).fit(X, y_ssl)
    info = model.solver_info_
    assert len(info["stopped_early"]) == len(info["side_changes"]) == 3
    assert model.transduction_.shape == (240,)


def test_early_stopping_with_the_dual_or_approximate_cv_is_refused():
    from semiscale.model_selection import bif_cross_val_score

    X, _, y_ssl, L = _problem(n=120, n_labeled=40)
    with pytest.raises(ValueError, match="early_stopping=True.*formulation='primal'"):
        LapSVC(formulation="dual", early_stopping=True).fit(X, y_ssl)
    with pytest.raises(ValueError, match="early_stopping=False"):
        bif_cross_val_score(LapSVC(loss="huber_hinge", early_stopping=True), X, y_ssl, cv=3)


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_stability_tol_out_of_range_is_refused_with_its_name(bad):
    X, _, y_ssl, _ = _problem(n=60, n_labeled=20)
    with pytest.raises(ValueError, match="stability_tol"):
        LapSVC(early_stopping=True, stability_tol=bad).fit(X, y_ssl)
