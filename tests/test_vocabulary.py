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
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, Linear
from semiscale.model_selection.bif import supports_bif
from semiscale.models import LapRLSClassifier, LapRLSRegressor, LapSVC, NystromLapSVC
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
    if "graph" not in inspect.signature(cls).parameters:
        del small["graph"]  # DataDependentSVC: the graph belongs to its kernel
    default = cls(**small)
    # None: DataDependentSVC's DataDependentKernel(); its "rbf" is RBF(gamma="median")
    rbf = default.kernel if default.kernel is not None else RBF(gamma="median")
    by_name = cls(kernel="rbf", **small).fit(X, y)
    by_object = cls(kernel=clone(rbf), **small).fit(X, y)
    assert isinstance(rbf, RBF)
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


# ------------------------------------------------------------------- n_jobs and memory_budget
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: LapRLSClassifier(**kw),
        lambda **kw: LapRLSClassifier(solver="cg", ambient_reg=1e-2, **kw),  # CG converges
        lambda **kw: LapRLSRegressor(**kw),
        lambda **kw: LapSVC(**kw),
        lambda **kw: LapSVC(formulation="dual", **kw),
    ],
    ids=["LapRLSClassifier", "LapRLSClassifier-cg", "LapRLSRegressor", "LapSVC", "LapSVC-dual"],
)
def test_exact_estimators_thread_their_kernel_blocks_and_graph_with_the_same_result(
    make, monkeypatch
):
    import semiscale.linalg.ops as ops

    X, y = _moons(120)
    if not is_classifier(make()):
        y = np.where(y == -1, np.nan, y.astype(float))
    X_new = X[:30] + 0.05
    seen = []
    original = ops.ArrayOps.kernel_matrix

    def spy(self, kernel, A, B=None, memory_budget=None, n_jobs=1):
        seen.append(n_jobs)
        return original(self, kernel, A, B, memory_budget, n_jobs)

    monkeypatch.setattr(ops.ArrayOps, "kernel_matrix", spy)
    outputs = {}
    for n_jobs in (1, 2):
        seen.clear()
        model = make(n_jobs=n_jobs, random_state=0).fit(X, y)
        assert seen and set(seen) == {n_jobs}  # the solve's kernel matrix
        assert model.graph_.n_jobs == n_jobs  # the graph inherits it
        method = "decision_function" if is_classifier(model) else "predict"
        outputs[n_jobs] = (model.transduction_, getattr(model, method)(X_new))
    for one, two in zip(outputs[1], outputs[2], strict=True):
        np.testing.assert_allclose(one, two, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ the table of parameters
PARAMETERS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "parameters.md"
_MODELS = dict(all_estimators(type_filter=["classifier", "regressor"]))


def _documented_defaults():
    """``{parameter: {estimator: default repr or None (none)}}`` of docs/parameters.md."""
    rows = {}
    for line in PARAMETERS_PAGE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        defaults = {}
        for group in cells[2].split("; "):
            value, _, names = group.rpartition(": ")
            value = None if value == "none" else value.strip("`")
            for name in names.split(", "):
                assert name not in defaults, f"{cells[0]}: {name} listed twice"
                defaults[name] = value
        rows[cells[0].strip("`")] = defaults
    return rows


def test_the_parameter_tables_hold_every_shared_parameter_and_its_defaults():
    rows = _documented_defaults()
    signatures = {name: inspect.signature(cls).parameters for name, cls in _MODELS.items()}
    counts = {}
    for parameters in signatures.values():
        for parameter in parameters:
            counts[parameter] = counts.get(parameter, 0) + 1
    shared = {parameter for parameter, count in counts.items() if count >= 2}
    assert shared <= set(rows), f"shared parameters missing from the page: {shared - set(rows)}"
    problems = []
    for parameter, defaults in rows.items():
        for name, parameters in signatures.items():
            has = parameter in parameters
            if name not in defaults:
                if has:
                    problems.append(f"{parameter}: {name} has it but is not listed")
            elif defaults[name] is None:
                if has:
                    problems.append(f"{parameter}: {name} is listed as 'none' but has it")
            elif not has:
                problems.append(f"{parameter}: {name} is listed but has no such parameter")
            elif repr(parameters[parameter].default) != defaults[name]:
                problems.append(
                    f"{parameter}: {name}'s default is {parameters[parameter].default!r}, the "
                    f"page says {defaults[name]}"
                )
        unknown = set(defaults) - set(signatures)
        if unknown:
            problems.append(f"{parameter}: no estimator is called {sorted(unknown)}")
    assert not problems, "docs/parameters.md drifted from the code:\n" + "\n".join(problems)


@pytest.mark.parametrize("kernel", [None, "rbf"])
def test_a_grid_over_the_parameters_of_a_default_or_named_kernel_names_the_fix(kernel):
    # kernel="rbf" is a name, not an object: kernel__gamma failed with "'str' object has no
    # attribute 'set_params'", which names neither the parameter nor the fix
    from semiscale.model_selection import SSLGridSearchCV

    X, y_ssl = _moons(80)
    search = SSLGridSearchCV(LapRLSClassifier(kernel=kernel), {"kernel__gamma": [0.5, 2.0]})
    with pytest.raises(ValueError, match=r"sets 'kernel__gamma'.*explicit kernel object"):
        search.fit(X, y_ssl)
