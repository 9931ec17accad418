"""One vocabulary across estimators (issue 28 items 6 and 7): renamed parameters and their
deprecation, kernel names.

``solver`` names, in every estimator, the method that solves the linear (or optimisation)
system; ``LapSVC``'s choice between the primal and the dual is ``formulation``.  The old
spellings (``LapSVC(solver="dual")``, ``linear_solver=``) keep working for one release with a
``FutureWarning`` naming the new one, and scikit-learn's ``get_params``/``set_params``/``clone``
keep them as given.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, Linear
from semiscale.model_selection.bif import supports_bif
from semiscale.models import LapRLSClassifier, LapSVC, NystromLapSVC
from semiscale.utils import all_estimators


def _moons(n=80):
    X, y = make_two_moons(n, noise=0.1, random_state=0)
    y_ssl = np.where(np.arange(n) % 8 == 0, y, -1)
    return X, y_ssl


def _lapsvc(**params):
    return LapSVC(kernel=RBF(gamma=4.0), graph=KNNGraph(n_neighbors=6), **params)


def _fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        return model.fit(X, y)


@pytest.mark.parametrize("formulation", ["primal", "dual"])
def test_old_solver_values_warn_and_fit_the_same_formulation(formulation):
    X, y = _moons()
    new = _fit_quietly(_lapsvc(formulation=formulation), X, y)
    with pytest.warns(FutureWarning, match=f"use formulation='{formulation}'"):
        old = _lapsvc(solver=formulation).fit(X, y)
    np.testing.assert_array_equal(old.decision_function(X), new.decision_function(X))
    assert hasattr(old, "support_") == (formulation == "dual")


def test_linear_solver_warns_and_is_the_solver():
    X, y = _moons()
    new = _fit_quietly(_lapsvc(solver="cg"), X, y)
    with pytest.warns(FutureWarning, match="use solver='cg'"):
        old = _lapsvc(linear_solver="cg").fit(X, y)
    assert old.n_iter_ == new.n_iter_ > 0
    np.testing.assert_array_equal(old.decision_function(X), new.decision_function(X))
    # both old spellings at once: the formulation and the step's solver
    with pytest.warns(FutureWarning) as record:
        both = _lapsvc(solver="primal", linear_solver="cg").fit(X, y)
    assert {"use formulation='primal'", "use solver='cg'"} <= {
        message for w in record for message in _fixes(str(w.message))
    }
    np.testing.assert_array_equal(both.decision_function(X), new.decision_function(X))


def _fixes(message):
    return [part.split(" (")[0] for part in message.split(": ")[1:]]


def test_the_defaults_and_new_names_do_not_warn():
    X, y = _moons()
    _fit_quietly(_lapsvc(), X, y)
    _fit_quietly(_lapsvc(formulation="dual"), X, y)
    _fit_quietly(_lapsvc(solver="pcg"), X, y)


def test_old_spellings_survive_get_params_set_params_and_clone():
    model = LapSVC(solver="dual", linear_solver="pcg")
    params = model.get_params()
    assert params["solver"] == "dual" and params["linear_solver"] == "pcg"
    assert params["formulation"] == "primal"
    copy = clone(model)
    assert copy.get_params()["solver"] == "dual" and copy.get_params()["linear_solver"] == "pcg"
    model.set_params(solver="direct", linear_solver="deprecated", formulation="dual")
    assert model.get_params()["formulation"] == "dual"
    assert LapSVC().get_params()["linear_solver"] == "deprecated"


@pytest.mark.parametrize(
    "params,match",
    [
        (dict(formulation="dual", solver="primal"), "contradict"),
        (dict(solver="cg", linear_solver="pcg"), "contradict"),
    ],
)
def test_contradicting_old_and_new_spellings_are_refused(params, match):
    X, y = _moons()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match=match):
            _lapsvc(**params).fit(X, y)


def test_approximate_cv_reads_the_formulation_of_either_spelling_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert supports_bif(LapSVC())
        assert not supports_bif(LapSVC(formulation="dual"))
        assert not supports_bif(LapSVC(solver="dual"))
        assert supports_bif(LapSVC(solver="primal"))


def test_nystrom_lapsvc_loss_auto_is_the_squared_hinge():
    X, y = _moons(120)
    common = dict(kernel=RBF(gamma=4.0), n_centers=30, random_state=0)
    auto = NystromLapSVC(**common).fit(X, y)
    assert NystromLapSVC().loss == LapSVC().loss == "auto"
    squared = NystromLapSVC(loss="squared_hinge", **common).fit(X, y)
    np.testing.assert_array_equal(auto.decision_function(X), squared.decision_function(X))


# --------------------------------------------------------------------------- kernel names
_KERNEL_MODELS = [
    cls
    for _, cls in all_estimators(type_filter=["classifier", "regressor"])
    if "kernel" in inspect.signature(cls).parameters
]


@pytest.mark.parametrize("cls", _KERNEL_MODELS, ids=lambda c: c.__name__)
def test_a_kernel_name_is_the_estimators_default_kernel_of_that_class(cls):
    # "rbf" means the estimator's own RBF (its default width), as SVC(kernel="rbf") means SVC's
    X, y = _moons(60)
    if not is_classifier(cls()):
        y = np.where(y == -1, np.nan, y.astype(float))
    small = dict(graph=KNNGraph(n_neighbors=6), random_state=0)
    if "n_centers" in inspect.signature(cls).parameters:
        small["n_centers"] = 20
    default = cls(**small)
    by_name = cls(kernel="rbf", **small).fit(X, y)
    by_object = cls(kernel=clone(default.kernel), **small).fit(X, y)
    assert isinstance(default.kernel, RBF)
    assert by_name.kernel_.get_params() == by_object.kernel_.get_params()
    np.testing.assert_array_equal(by_name.predict(X), by_object.predict(X))
    linear = cls(kernel="linear", **small).fit(X, y)
    assert isinstance(linear.kernel_, Linear)
    with pytest.raises(ValueError, match="'kernel' parameter.*'rbf'"):
        cls(kernel="gaussian", **small).fit(X, y)


def test_laprls_kernel_rbf_equals_its_rbf_object():
    X, y = _moons(100)
    by_name = LapRLSClassifier(kernel="rbf", random_state=0).fit(X, y)
    by_object = LapRLSClassifier(kernel=RBF(gamma="local"), random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_name.decision_function(X), by_object.decision_function(X))
    # with a fixed width the name is only a spelling: grid search over names works too
    assert LapRLSClassifier(kernel="laplacian").get_params()["kernel"] == "laplacian"
