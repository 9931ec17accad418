"""Common tests of every public estimator, found by the registry (scikit-learn's test_common).

:func:`semiscale.utils.all_estimators` walks the package, so an estimator added to the library
is run through every test below without being listed here; a new kind of estimator (one the
helpers below cannot build or fit) fails them until the helpers learn it.  What is listed by
hand is only what is *excluded* or *expected to fail*, each with its reason
(``tests/sklearn_checks.py``).
"""

import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import semiscale
from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import Kernel
from semiscale.utils import all_estimators
from semiscale.utils.discovery import TYPES
from sklearn_checks import expected_failed_checks

pytestmark = [
    pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning"),
    # DataDependentSVC's default kernel asks for 250 landmarks; the checks' data sets are smaller,
    # so every point is a landmark (the documented fallback, which warns)
    pytest.mark.filterwarnings("ignore::semiscale.kernels._data_dependent_fit.LandmarkWarning"),
    # scikit-learn's checks label every point, so the cluster kernels' poly-step cut l + 9
    # passes the rank of their small problems (the documented CutWarning)
    pytest.mark.filterwarnings("ignore::semiscale.cluster_kernels.CutWarning"),
]

ESTIMATORS = all_estimators()
MODELS = all_estimators(type_filter=["classifier", "regressor"])
#: Unsupervised estimators (KernelKMeans): fitted on X alone, held to scikit-learn's checks too.
CLUSTERERS = all_estimators(type_filter="cluster")
#: Transformers with a ``transform`` of new points (the cluster kernels): held to scikit-learn's
#: checks too.  The graphs are transformers as well, of the training points only (their
#: ``fit_transform`` is the Laplacian): they have their own tests.
TRANSFORMERS = [
    (n, c) for n, c in all_estimators(type_filter="transformer") if not TYPES["graph"](c)
]

#: The canonical documentation of ``verbose`` (semiscale._progress): every estimator's
#: docstring carries these lines verbatim.
VERBOSE_DOC = (
    "    verbose : int or bool, default=0\n"
    "        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;\n"
    "        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a\n"
    "        search).  True means 1 (:mod:`semiscale._progress`).\n"
)


def _ids(pairs):
    return [name for name, _ in pairs]


# ------------------------------------------------------------------------ tiny problems
def _data(n=60, seed=0):
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    y_ssl = np.full_like(y, -1)
    for c in (0, 1):
        y_ssl[np.flatnonzero(y == c)[:3]] = c
    return X, y, y_ssl


def _is_classifier(est):
    return TYPES["classifier"](type(est)) or (
        TYPES["search"](type(est)) and TYPES["classifier"](type(est.estimator))
    )


def _targets(est, y_ssl):
    """``y`` with the SSL markers of ``est``: -1 for classifiers, NaN for regressors."""
    if _is_classifier(est):
        return y_ssl
    return np.where(y_ssl == -1, np.nan, y_ssl.astype(float))


def _instance(cls, X=None):
    """A small instance of ``cls``: defaults, except a 5-NN graph and a fixed seed.

    Required parameters (those without a default) are supplied for the classes known to need
    them; a new class with required parameters raises ``TypeError`` here, so it fails every
    common test until it is taught.
    """
    if TYPES["search"](cls):
        # seeded folds: an int cv shuffles without a seed (documented in SSLGridSearchCV)
        cv = semiscale.SSLKFold(2, random_state=0)
        est = cls(_instance(semiscale.LapRLSClassifier), {"intrinsic_reg": [0.1, 1.0]}, cv=cv)
    elif cls.__name__ == "PrecomputedGraph":
        X = _data()[0] if X is None else X
        est = cls(KNNGraph(n_neighbors=5).fit(X).adjacency_, X)
    else:
        est = cls()
    params = est.get_params(deep=False)
    if "graph" in params:
        est.set_params(graph=KNNGraph(n_neighbors=5))
    if "n_neighbors" in params:
        est.set_params(n_neighbors=5)
    if "random_state" in params:
        est.set_params(random_state=0)
    if "n_clusters" in params:
        est.set_params(n_clusters=2)  # the two moons
    contract = getattr(cls, "_fit_contract", None)
    if contract is not None and contract.expansion == "centers":
        # fewer centers than points: on the checks' small data "auto" would take them all
        est.set_params(n_centers=0.5)
    return est


def _is_transformer(est):
    return TYPES["transformer"](type(est)) and not TYPES["graph"](type(est))


def _fit_output(est, X, y_ssl):
    """Fit ``est`` on the tiny problem and return what it computes (predictions, Laplacian or
    transformed points)."""
    if TYPES["graph"](type(est)):
        return est.fit(X).laplacian_.toarray()
    if _is_transformer(est):
        return est.fit(X, y_ssl).transform(X)
    if TYPES["cluster"](type(est)):
        return est.fit(X).predict(X)
    est.fit(X, _targets(est, y_ssl))
    out = est.predict(X)
    if hasattr(est, "decision_function"):
        out = (out, est.decision_function(X))
    return out


def _assert_same(a, b, rtol=0.0):
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y, rtol)
    elif rtol:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------ registry
def test_registry_finds_every_public_estimator_class():
    # every public BaseEstimator class with a fit anywhere in semiscale is in the registry,
    # except the kernels (excluded, see semiscale.utils.discovery)
    import pkgutil
    from importlib import import_module

    from semiscale.utils.discovery import _SKIPPED_MODULES

    registered = {cls for _, cls in ESTIMATORS}
    seen = set()
    for info in pkgutil.walk_packages(semiscale.__path__, prefix="semiscale."):
        if info.name in _SKIPPED_MODULES:
            continue
        for name, cls in vars(import_module(info.name)).items():
            if (
                inspect.isclass(cls)
                and issubclass(cls, BaseEstimator)
                and cls.__module__.startswith("semiscale")
                and not name.startswith("_")
                and not inspect.isabstract(cls)
            ):
                seen.add(cls)
    excluded = {cls for cls in seen - registered}
    assert all(issubclass(cls, Kernel) for cls in excluded), excluded - {Kernel}
    assert registered <= seen and len(registered) >= 10


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_every_estimator_is_of_a_known_type(name, cls):
    # a kind of estimator none of the common tests' helpers know must fail here first
    kinds = [
        t for t in ("classifier", "regressor", "cluster", "transformer", "search") if TYPES[t](cls)
    ]
    assert len(kinds) == 1, (name, kinds)
    # a graph is a transformer (of its training points)
    assert not TYPES["graph"](cls) or kinds == ["transformer"], (name, kinds)


def test_type_filter():
    classifiers = set(_ids(all_estimators(type_filter="classifier")))
    assert {"LapSVC", "NystromLapSVC", "SparseLapCVMClassifier"} <= classifiers
    assert set(_ids(all_estimators(type_filter=["classifier", "regressor"]))) == set(_ids(MODELS))
    assert set(_ids(all_estimators(type_filter="search"))) >= {"BIFSearchCV", "SSLGridSearchCV"}
    assert set(_ids(all_estimators(type_filter="transformer"))) >= {
        "KNNGraph",
        "ClusterKernel",
        "NystromClusterKernel",
    }
    with pytest.raises(ValueError, match="type_filter must be None or among"):
        all_estimators(type_filter="clusterer")


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_every_estimator_is_exported_at_the_top_level(name, cls):
    assert name in semiscale.__all__, f"{name} is missing from semiscale._PUBLIC"
    assert getattr(semiscale, name) is cls


def test_top_level_exports_resolve_and_cover_the_public_modules():
    import semiscale.graph
    import semiscale.model_selection
    import semiscale.models

    for name in semiscale.__all__:
        assert getattr(semiscale, name) is not None
    # every estimator and model-selection tool (bif_cross_val_* are functions, not estimators)
    for module in (semiscale.models, semiscale.model_selection):
        for name in module.__all__:
            assert getattr(semiscale, name) is getattr(module, name), name
    assert semiscale.bif_cross_val_score is semiscale.model_selection.bif_cross_val_score
    with pytest.raises(AttributeError):
        semiscale.not_a_name  # noqa: B018


# ------------------------------------------------------------------ scikit-learn's checks
@parametrize_with_checks(
    [_instance(cls) for _, cls in MODELS + CLUSTERERS + TRANSFORMERS],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------- the constructor
@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_hyper_parameters_are_keyword_only(name, cls):
    # as scikit-learn's: what has a default is keyword-only; only required arguments (a
    # search's estimator and grid, a precomputed graph's matrix and points) may be positional
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    for p in params:
        if p.default is not inspect.Parameter.empty:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, f"{name}({p.name}=...) positional"
        else:
            assert p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, p.name
    with pytest.raises(TypeError, match="positional"):
        args = [None] * (sum(p.default is inspect.Parameter.empty for p in params) + 1)
        cls(*args)


# -------------------------------------------------------------------- fitted behaviour
@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_pickle_round_trip_predicts_the_same(name, cls):
    X, _, y_ssl = _data()
    est = _instance(cls)
    before = _fit_output(est, X, y_ssl)
    again = pickle.loads(pickle.dumps(est))
    if TYPES["graph"](cls):
        assert (again.laplacian_ != est.laplacian_).nnz == 0
    elif _is_transformer(est):
        _assert_same(before, again.transform(X), rtol=1e-12)
    else:
        out = again.predict(X)
        if hasattr(again, "decision_function"):
            out = (out, again.decision_function(X))
        # equal up to rounding: an unpickled array may change the BLAS's summation order (the
        # LapRLS regressor's predictions moved by 3e-14 here)
        _assert_same(before, out, rtol=1e-12)


@pytest.mark.parametrize("name, cls", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_a_seed_reproduces_the_fit(name, cls):
    X, _, y_ssl = _data()
    est = _instance(cls)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=3)
    _assert_same(_fit_output(clone(est), X, y_ssl), _fit_output(clone(est), X, y_ssl))


@pytest.mark.parametrize("name, cls", MODELS, ids=_ids(MODELS))
def test_ssl_markers_and_score_on_labeled_rows(name, cls):
    X, y, y_ssl = _data()
    est = _instance(cls)
    targets = _targets(est, y_ssl)
    est.fit(X, targets)
    labeled = y_ssl != -1
    if _is_classifier(est):
        # -1 marks unlabeled rows: never a class, never predicted
        assert list(est.classes_) == [0, 1]
        assert set(np.unique(est.predict(X))) <= {0, 1}
        if hasattr(est, "transduction_"):
            assert set(np.unique(est.transduction_)) <= {0, 1}
        # score drops the marked rows (accuracy on the labeled ones only)
        expected = (est.predict(X[labeled]) == y[labeled]).mean()
        assert est.score(X, y_ssl) == pytest.approx(expected)
        # another marker (NaN, with float labels) gives the same fit
        other = clone(est).set_params(unlabeled=np.nan)
        nan_targets = np.where(labeled, y_ssl, np.nan).astype(float)
        np.testing.assert_array_equal(other.fit(X, nan_targets).predict(X), est.predict(X))
    else:
        # NaN marks unlabeled rows; score is R² on the finite rows
        from sklearn.metrics import r2_score

        assert np.isnan(targets).sum() == (~labeled).sum()
        assert np.all(np.isfinite(est.predict(X)))
        expected = r2_score(targets[labeled], est.predict(X[labeled]))
        assert est.score(X, targets) == pytest.approx(expected)


_BUDGETED = [(n, c) for n, c in ESTIMATORS if "memory_budget" in inspect.signature(c).parameters]


@pytest.mark.parametrize("name, cls", _BUDGETED, ids=_ids(_BUDGETED))
def test_a_tiny_memory_budget_is_refused_naming_the_parameter(name, cls):
    X, _, y_ssl = _data()
    est = _instance(cls).set_params(memory_budget=1000)
    if cls.__name__ == "PrecomputedGraph":
        est.set_params(power=2)  # its budget bounds L^p, the only array it computes
    with pytest.raises(MemoryBudgetError) as info:
        _fit_output(est, X, y_ssl)
    # the message names the parameter, the value refused and the fix
    message = str(info.value)
    assert "memory_budget" in message and "1000 B" in message and "raise" in message, message
    # and one that holds the problem fits
    _fit_output(est.set_params(memory_budget="64MiB"), X, y_ssl)


# ------------------------------------------------------------------------------ verbose
_VERBOSE = [(n, c) for n, c in ESTIMATORS if "verbose" in inspect.signature(c).parameters]


#: Estimators without a ``verbose`` parameter, and why.
_NO_VERBOSE = {"PrecomputedGraph": "indexes a matrix it is given: no long step to report"}


def test_every_estimator_has_verbose():
    assert set(_ids(ESTIMATORS)) - set(_ids(_VERBOSE)) == set(_NO_VERBOSE)


@pytest.mark.parametrize("name, cls", _VERBOSE, ids=_ids(_VERBOSE))
def test_verbose_is_documented_the_same_everywhere(name, cls):
    assert VERBOSE_DOC in cls.__doc__, f"{name}'s docstring does not carry the verbose entry"
    assert _instance(cls).get_params(deep=False)["verbose"] == 0


#: Fits with no loop at their defaults, so nothing more to say at verbose=2: a kNN search, and
#: LapRLS's one direct solve.
ONE_STEP_FITS = {"KNNGraph", "LapRLSClassifier", "LapRLSRegressor"}


@pytest.mark.parametrize("name, cls", _VERBOSE, ids=_ids(_VERBOSE))
def test_verbose_levels(name, cls, capsys, monkeypatch):
    # 0: nothing on stderr; 1 (or True): something; 2: at least what 1 says.  stdout stays
    # clean at every level (it keeps results).
    monkeypatch.setattr("semiscale._progress.MIN_INTERVAL", 0)
    X, _, y_ssl = _data()
    err = {}
    for level in (0, 1, True, 2):
        est = _instance(cls)
        est.set_params(verbose=level)
        with warnings.catch_warnings():  # a warning is not a progress message
            warnings.simplefilter("ignore")
            _fit_output(est, X, y_ssl)
        out, err[level] = capsys.readouterr()
        assert out == ""
    assert err[0] == ""
    assert err[1] != "" and err[True] != ""
    lines = {level: len(text.splitlines()) for level, text in err.items()}
    # a fit that iterates (CG, Newton, core set) or a search (its fits) adds lines at 2; only
    # the fits without a loop are excused, by name
    if name in ONE_STEP_FITS:
        assert lines[2] >= lines[1]
    else:
        assert lines[2] > lines[1], err[2]


# ------------------------------------------------------------------------------ float32
_KERNEL_MODELS = [(n, c) for n, c in MODELS if "kernel" in inspect.signature(c).parameters]


@pytest.mark.parametrize("name, cls", _KERNEL_MODELS, ids=_ids(_KERNEL_MODELS))
def test_float32_data_keeps_float32_expansion_points_and_predicts_as_float64(name, cls):
    # X_fit_ holds (a part of) the training data: a float64 copy of float32 data would double
    # its memory; the predictions are those of the same data in float64
    X, _, y_ssl = _data()
    X32 = X.astype(np.float32)
    X_new = X32[:20] + np.float32(0.05)
    fitted = {}
    for dtype in (np.float32, np.float64):
        est = _instance(cls)
        if "out_of_sample" in est.get_params():
            est.set_params(out_of_sample="kernel")  # the kernel expansion over X_fit_ itself
        fitted[dtype] = est.fit(X32.astype(dtype), _targets(est, y_ssl))
        assert est.X_fit_.dtype == dtype
    method = "decision_function" if hasattr(fitted[np.float32], "decision_function") else "predict"
    np.testing.assert_allclose(
        getattr(fitted[np.float32], method)(X_new),
        getattr(fitted[np.float64], method)(X_new.astype(np.float64)),
        rtol=1e-5,
        atol=1e-5,
    )
