"""Every estimator's declared :class:`~semiscale.models._contract.FitContract` is the truth.

The shared fit path (``models/_base.py``) and approximate CV (``model_selection/bif.py``) read
what an estimator declares instead of probing it for attributes, so a declaration that claims a
capability the estimator lacks, or misses one it has, would be silently wrong.  These tests find
every public estimator class through the registry that walks the package
(:func:`semiscale.utils.all_estimators`, less the graphs and the searches: a new estimator is
checked without being listed here), check each declaration against the class (its parameters,
its fit path, its solvers) and against what a fit does, and check that the checker itself
catches broken declarations.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone, is_classifier

import semiscale.models
from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.model_selection import SSLKFold, bif_cross_val_score
from semiscale.model_selection.bif import supports_bif
from semiscale.models import LapRLSRegressor
from semiscale.models._base import ManifoldMixin
from semiscale.models._contract import (
    CAPABILITY_PARAMETERS,
    PATHS_WITHOUT_EXPANSION,
    FitContract,
    fit_contract,
    fit_rules,
)
from semiscale.models._fit_state import fit_with_state
from semiscale.models.graph_learning import _GraphLearningClassifier
from semiscale.utils import all_estimators

SRC = Path(semiscale.models.__file__).resolve().parents[1]


def public_estimators():
    """Every estimator of the registry that fits a semi-supervised model: not a graph, not a
    search, not a clusterer (unsupervised: no labels, no graph term, no fit path to declare),
    not a transformer (the cluster kernels: they make features, another estimator fits)."""
    kinds = ["graph", "search", "cluster", "transformer"]
    others = {cls for _, cls in all_estimators(type_filter=kinds)}
    return [cls for _, cls in all_estimators() if cls not in others]


ESTIMATORS = public_estimators()
#: Those fitted through ``ManifoldMixin`` (a ManifoldProblem handed to their solver).
MANIFOLD = [c for c in ESTIMATORS if getattr(fit_contract(c), "fit_path", None) == "manifold"]


def _parameters(cls):
    return set(inspect.signature(cls.__init__).parameters) - {"self"}


def _formulation_values(cls):
    """The string values the ``formulation`` constraint admits (None if it has no such option)."""
    values = set()
    for constraint in cls._parameter_constraints.get("formulation", []):
        values |= set(getattr(constraint, "options", ()))
    return values or None


def contract_problems(cls) -> list[str]:
    """What is wrong with ``cls``'s declaration, as static facts about the class (empty: none)."""
    contract = fit_contract(cls)
    if contract is None:
        return [f"{cls.__name__} declares no FitContract (_fit_contract)"]
    problems = []
    params = _parameters(cls)
    missing = contract.parameters() - params
    if missing:
        problems.append(f"declares capabilities whose parameters it lacks: {sorted(missing)}")
    for capability, names in CAPABILITY_PARAMETERS.items():
        if not getattr(contract, capability) and set(names) & params:
            problems.append(f"has {sorted(set(names) & params)} but does not declare {capability}")
    own_fit = issubclass(cls, ManifoldMixin) and cls._fit_problem is not ManifoldMixin._fit_problem
    if contract.fit_path == "manifold":
        if not issubclass(cls, ManifoldMixin) or own_fit:
            problems.append("fit_path='manifold' but the class does not fit through ManifoldMixin")
        elif not callable(getattr(cls, "_solve", None)):
            problems.append("fit_path='manifold' but the class defines no _solve")
    elif contract.fit_path == "core-vector-machine" and not own_fit:
        problems.append("fit_path='core-vector-machine' but the class has no fit of its own")
    elif contract.fit_path == "label-propagation" and not issubclass(cls, _GraphLearningClassifier):
        problems.append("fit_path='label-propagation' but the class propagates no labels")
    if (contract.expansion == "centers") != ("n_centers" in params):
        problems.append(f"expansion={contract.expansion!r} but n_centers in params is not so")
    if (contract.expansion is None) != (contract.fit_path in PATHS_WITHOUT_EXPANSION):
        problems.append(f"only {PATHS_WITHOUT_EXPANSION} have no kernel expansion (expansion=None)")
    if contract.approximate_cv_formulations is not None:
        values = _formulation_values(cls)
        if values is None or not set(contract.approximate_cv_formulations) <= values:
            problems.append(
                f"approximate_cv_formulations={contract.approximate_cv_formulations} are not all "
                f"values of its formulation parameter ({values})"
            )
    return problems


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_estimator_declares_a_contract_that_matches_its_class(cls):
    assert contract_problems(cls) == []


def test_the_walk_finds_every_exported_estimator():
    names = {cls.__name__ for cls in ESTIMATORS}
    clusterers = {name for name, _ in all_estimators(type_filter="cluster")}
    assert set(semiscale.models.__all__) - clusterers <= names
    assert len(ESTIMATORS) >= 10


# --------------------------------------------------- the checker catches broken declarations
class _ClaimsEarlyStopping(LapRLSRegressor):
    _fit_contract = dataclasses.replace(LapRLSRegressor._fit_contract, early_stopping=True)


class _HidesItsIntercept(LapRLSRegressor):
    _fit_contract = dataclasses.replace(LapRLSRegressor._fit_contract, fit_intercept=False)


class _Undeclared(LapRLSRegressor):
    _fit_contract = None


class _ClaimsCenters(LapRLSRegressor):
    _fit_contract = dataclasses.replace(LapRLSRegressor._fit_contract, expansion="centers")


@pytest.mark.parametrize(
    "cls,message",
    [
        (_ClaimsEarlyStopping, "parameters it lacks: ['early_stopping', 'stability_tol']"),
        (_HidesItsIntercept, "does not declare fit_intercept"),
        (_Undeclared, "declares no FitContract"),
        (_ClaimsCenters, "expansion='centers'"),
    ],
)
def test_the_checker_refuses_a_wrong_declaration(cls, message):
    problems = contract_problems(cls)
    assert any(message in problem for problem in problems), problems


def test_a_contract_refuses_approximate_cv_off_the_manifold_path():
    with pytest.raises(ValueError, match="approximate_cv=True needs fit_path='manifold'"):
        FitContract(fit_path="label-propagation", expansion=None, approximate_cv=True)
    with pytest.raises(ValueError, match="memory_budget=True"):
        FitContract(
            fit_path="manifold", expansion="training", memory_budget=False, approximate_cv=True
        )
    with pytest.raises(ValueError, match="fit_path must be one of"):
        FitContract(fit_path="newton", expansion="training")


# ------------------------------------------------------------- declarations against a fit
def _data(cls):
    X, y = make_two_moons(60, noise=0.1, random_state=0)
    labeled = np.zeros(60, dtype=bool)
    labeled[np.flatnonzero(y == 0)[:4]] = labeled[np.flatnonzero(y == 1)[:4]] = True
    if is_classifier(cls()):
        return X, np.where(labeled, y, -1)
    return X, np.where(labeled, X[:, 1] + y, np.nan)


def _small(cls, **params):
    """An instance that fits in a fraction of a second on 60 points."""
    est = cls()
    own = est.get_params(deep=False)
    if "graph" in own:
        params.setdefault("graph", KNNGraph(n_neighbors=6, method="exact"))
    if "n_centers" in own:
        params.setdefault("n_centers", 20)
    if "random_state" in own:
        params.setdefault("random_state", 0)
    return est.set_params(**params)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_memory_budget_is_honoured_where_declared(cls):
    X, y = _data(cls)
    contract = fit_contract(cls)
    if not contract.memory_budget:
        assert "memory_budget" not in _parameters(cls)
        return
    est = _small(cls, memory_budget="1KB")
    with pytest.raises(MemoryBudgetError):
        _fit(est, X, y)
    assert not hasattr(est, "graph_"), "the budget was refused only after the graph was built"


@pytest.mark.parametrize("cls", MANIFOLD, ids=lambda c: c.__name__)
def test_the_manifold_problem_carries_the_declared_parameters(cls):
    """A manifold fit hands the solver what the contract declares, and its kept rules are the
    estimator's: the intercept, early stopping's tolerance, the budget."""
    contract = fit_contract(cls)
    X, y = _data(cls)
    params = {"memory_budget": "512MB", "verbose": 0}
    if contract.fit_intercept:
        params["fit_intercept"] = not cls().fit_intercept
    if contract.label_diffusion:  # (which refuses the intercept's bordered system)
        params["label_diffusion"] = 0
    if contract.early_stopping:
        params.update(early_stopping=True, stability_tol=0.05)
    est = _small(cls, **params)
    state = fit_with_state(est, lambda est: _fit(est, X, y))
    assert not hasattr(est, "_fit_state_") and not est._keep_fit_state
    assert state.problem.fit_intercept == (contract.fit_intercept and est.fit_intercept)
    assert state.problem.memory_budget == "512MB"
    assert state.problem.stability_tol == (0.05 if contract.early_stopping else None)
    assert state.rules == fit_rules(est)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_approximate_cv_runs_exactly_where_declared(cls):
    contract = fit_contract(cls)
    X, y = _data(cls)
    est = _small(cls, **({"out_of_sample": "kernel"} if contract.out_of_sample else {}))
    if contract.label_diffusion:
        est.set_params(label_diffusion=0)
    cv = SSLKFold(2, random_state=0)
    if not contract.approximate_cv:
        assert not supports_bif(est)
        with pytest.raises(TypeError, match="approximate CV needs"):
            bif_cross_val_score(est, X, y, cv=cv)
        return
    assert supports_bif(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = bif_cross_val_score(est, X, y, cv=cv, random_state=0)
    assert scores.shape == (2,) and np.all(np.isfinite(scores))
    if contract.approximate_cv_formulations is not None:
        formulations = _formulation_values(cls) - set(contract.approximate_cv_formulations)
        for formulation in sorted(formulations):
            assert not supports_bif(clone(est).set_params(formulation=formulation))


def _decisions_differ(cls, X, y, **two_settings):
    ((name, (a, b)),) = two_settings.items()
    first, second = (_fit(_small(cls, **{name: v}), X, y) for v in (a, b))
    method = "decision_function" if is_classifier(cls()) else "predict"
    return not np.allclose(getattr(first, method)(X), getattr(second, method)(X))


OPTIONS = ("centring", "balanced_targets", "label_diffusion", "out_of_sample", "n_jobs")
WITH_OPTIONS = [c for c in ESTIMATORS if any(getattr(fit_contract(c), o, False) for o in OPTIONS)]


@pytest.mark.parametrize("cls", WITH_OPTIONS, ids=lambda c: c.__name__)
def test_declared_model_options_change_the_fit(cls):
    """``centring``, ``balanced_targets``, ``label_diffusion`` and ``out_of_sample`` are read
    where declared: switching one changes the decision (with unequal label counts)."""
    contract = fit_contract(cls)
    X, y = _data(cls)
    if is_classifier(cls()):
        y = y.copy()
        y[[4, 5, 6]] = 0  # unequal label counts: balanced targets differ from zero-mean ones
    if contract.centring:
        assert _decisions_differ(cls, X, y, centring=(True, False))
    if contract.balanced_targets:
        assert _decisions_differ(cls, X, y, balanced_targets=(True, False))
    if contract.label_diffusion:
        assert _decisions_differ(cls, X, y, label_diffusion=(0, 3))
    if contract.out_of_sample:
        graph = _fit(_small(cls, out_of_sample="graph"), X, y)
        kernel = _fit(_small(cls, out_of_sample="kernel"), X, y)
        assert graph.extension_ is not None and kernel.extension_ is None
    if contract.n_jobs:
        est = _small(cls, n_jobs=1, graph=KNNGraph(n_neighbors=6))
        assert est._graph_to_fit().n_jobs == 1  # the graph inherits the declared n_jobs


# ----------------------------------------------------------------- no probing left behind
PROBE_FREE = [
    "models/_base.py",
    "models/_nystrom_fit.py",
    "models/graph_learning.py",
    "model_selection/bif.py",
    "model_selection/_fold_objectives.py",
    "model_selection/bif_search.py",
]
ESTIMATOR_NAMES = {"self", "est", "estimator", "candidate", "template"}


def _probes(path):
    """``getattr(<estimator>, "<name>", default)`` and ``hasattr(<estimator>, "<name>")``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in ("getattr", "hasattr") or len(node.args) < 2:
            continue
        target, name = node.args[0], node.args[1]
        literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
        probe = node.func.id == "hasattr" or len(node.args) == 3
        if isinstance(target, ast.Name) and target.id in ESTIMATOR_NAMES and literal and probe:
            found.append(f"{path.name}:{node.lineno} {node.func.id}({target.id}, {name.value!r})")
    return found


@pytest.mark.parametrize("module", PROBE_FREE)
def test_the_fit_path_and_approximate_cv_probe_no_estimator(module):
    assert _probes(SRC / module) == []


def test_the_probe_finder_sees_a_probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text('def f(self):\n    return getattr(self, "centring", False)\n')
    assert _probes(path) == ["probe.py:2 getattr(self, 'centring')"]
