"""scikit-learn conventions (issue 11, part 5): n_jobs, random_state, feature names, parameter
validation, KNNGraph.fit_transform, and the estimator's memory budget reaching its graph."""

from functools import partial

import joblib
import numpy as np
import pytest

from semiscale._parallel import resolve_n_jobs
from semiscale.graph import KNNGraph, knn

pytestmark = [
    pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning"),
    # DataDependentSVC's default kernel asks for 250 landmarks, more than these tests' points
    pytest.mark.filterwarnings("ignore::semiscale.kernels._data_dependent_fit.LandmarkWarning"),
]


def _parallel_context(n_jobs):
    if hasattr(joblib, "parallel_config"):  # joblib >= 1.3
        return joblib.parallel_config(n_jobs=n_jobs)
    return joblib.parallel_backend("threading", n_jobs=n_jobs)  # pragma: no cover


# ------------------------------------------------------------------------------------ n_jobs
def test_n_jobs_none_means_one_unless_a_joblib_context_says_otherwise():
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(1) == 1
    assert resolve_n_jobs(-1) == joblib.cpu_count()
    with _parallel_context(3):
        assert resolve_n_jobs(None) == 3
        assert resolve_n_jobs(2) == 2  # an explicit value wins over the context


def test_knngraph_searches_with_one_thread_by_default(monkeypatch):
    seen = []
    kdtree = knn._BACKENDS["kdtree"]

    def spy(X, k, **options):
        seen.append(options["n_jobs"])
        return kdtree(X, k, **options)

    monkeypatch.setitem(knn._BACKENDS, "kdtree", spy)
    X = np.random.default_rng(0).standard_normal((60, 2))
    KNNGraph(n_neighbors=4).fit(X)
    KNNGraph(n_neighbors=4, n_jobs=2).fit(X)
    with _parallel_context(2):
        KNNGraph(n_neighbors=4).fit(X)
    assert seen == [1, 2, 2]


# ------------------------------------------------------------------------------ random_state
def _ssl_moons(n, seed=0):
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    y_ssl = np.full_like(y, -1)
    rng = np.random.default_rng(seed)
    for c in (0, 1):
        y_ssl[rng.choice(np.flatnonzero(y == c), 5, replace=False)] = c
    return X, y, y_ssl


def _estimators():
    # every classifier and regressor of the registry (semiscale.utils.all_estimators), at
    # settings that keep the 1,100-point fits small: intrinsic_reg=0 makes an exact fit RLS on
    # the labeled points while the kernel still resolves gamma="median" on a random sample of
    # the 1,100 points; a Nyström fit gets 50 centers
    from semiscale.utils import all_estimators

    graph = KNNGraph(n_neighbors=6)
    estimators = []
    for _, cls in all_estimators(type_filter=["classifier", "regressor"]):
        est = cls()
        params = est.get_params(deep=False)
        if "graph" in params:  # (DataDependentSVC's graph belongs to its kernel)
            est.set_params(graph=graph)
        if "n_centers" in params:
            est.set_params(n_centers=50)
        elif "intrinsic_reg" in params:
            est.set_params(intrinsic_reg=0.0)
        estimators.append(est)
    return estimators


def _targets(estimator, y_ssl):
    if hasattr(estimator, "unlabeled"):
        return y_ssl
    return np.where(y_ssl < 0, np.nan, y_ssl.astype(float))


def _seeded(estimators):
    """Those with a ``random_state`` (NearestNeighborsClassifier has no randomness, hence none:
    its FitContract's fit path says so)."""
    return [e for e in estimators if "random_state" in e.get_params(deep=False)]


@pytest.mark.parametrize("estimator", _seeded(_estimators()), ids=lambda e: type(e).__name__)
def test_every_estimator_takes_every_kind_of_random_state(estimator):
    # n > 1000: the "median" bandwidth samples 1000 points with random_state; the Nyström
    # estimators also draw their centers and the preconditioner's rows from it.
    X, _, y_ssl = _ssl_moons(1100)
    y = _targets(estimator, y_ssl)
    predictions = {}
    for name, seed in [
        ("int", 3),
        ("int again", 3),
        ("RandomState", np.random.RandomState(3)),
        ("Generator", np.random.default_rng(3)),
        ("SeedSequence", np.random.SeedSequence(3)),
        ("None", None),
    ]:
        model = estimator.set_params(random_state=seed).fit(X, y)
        predictions[name] = model.predict(X[:50])
    np.testing.assert_array_equal(predictions["int"], predictions["int again"])


def test_a_generator_is_advanced_like_a_random_state():
    from semiscale.models import NystromLapRLSRegressor

    X, _, y_ssl = _ssl_moons(300)
    y = np.where(y_ssl < 0, np.nan, y_ssl.astype(float))
    rng = np.random.default_rng(0)
    model = NystromLapRLSRegressor(graph=KNNGraph(n_neighbors=6), n_centers=30, random_state=rng)
    first = model.fit(X, y).center_index_
    second = model.fit(X, y).center_index_  # the generator moved on: other centers
    assert not np.array_equal(first, second)
    again = model.set_params(random_state=np.random.default_rng(0)).fit(X, y).center_index_
    np.testing.assert_array_equal(first, again)


def test_random_state_helpers():
    from semiscale._random import as_generator, as_random_state, check_random_state

    # ints and RandomStates keep the draws they always gave (scikit-learn's check_random_state)
    assert check_random_state(5).randint(1000) == np.random.RandomState(5).randint(1000)
    state = np.random.RandomState(1)
    assert as_random_state(state) is state and check_random_state(state) is state
    assert as_random_state(None) is None and as_random_state(np.int64(4)) == 4
    # a Generator is drawn from, and advanced
    gen = np.random.default_rng(2)
    check_random_state(gen).randint(1000)
    assert gen.random() != np.random.default_rng(2).random()
    assert as_generator(gen) is gen
    assert as_generator(7).random() == np.random.default_rng(7).random()
    assert as_random_state(np.random.SeedSequence(0)) == as_random_state(np.random.SeedSequence(0))
    for bad in ("seed", 1.5):
        with pytest.raises(TypeError, match="random_state must be"):
            check_random_state(bad)
    with pytest.raises(ValueError, match="random_state"):
        check_random_state(-1)


def test_knngraph_approximate_search_takes_a_generator():
    pytest.importorskip("voyager", reason="the approximate search needs the 'ann' extra")
    X = np.random.default_rng(0).standard_normal((300, 20))
    graph = KNNGraph(n_neighbors=5, method="approximate", random_state=np.random.default_rng(0))
    assert graph.fit(X).search_method_ == "hnsw"
    a = KNNGraph(n_neighbors=5, method="approximate", random_state=4, n_jobs=1).fit(X)
    b = KNNGraph(n_neighbors=5, method="approximate", random_state=4, n_jobs=1).fit(X)
    assert (a.laplacian_ != b.laplacian_).nnz == 0


# ------------------------------------------------------------------------- feature names
def _frame(X, columns=("a", "b")):
    pd = pytest.importorskip("pandas", reason="feature names come from pandas DataFrames")
    return pd.DataFrame(X, columns=list(columns))


@pytest.mark.parametrize("estimator", _estimators(), ids=lambda e: type(e).__name__)
def test_feature_names_are_recorded_and_checked(estimator):
    X, _, y_ssl = _ssl_moons(120)
    y = _targets(estimator, y_ssl)
    if "random_state" in estimator.get_params(deep=False):
        estimator.set_params(random_state=0)
    model = estimator.fit(_frame(X), y)
    assert list(model.feature_names_in_) == ["a", "b"] and model.n_features_in_ == 2
    assert model.feature_names_in_.dtype == object
    named = model.predict(_frame(X[:5]))

    swapped = _frame(X[:, ::-1], columns=("b", "a"))  # same names, other order: refused
    methods = [model.predict, lambda Z: model.score(Z, y)]
    if hasattr(model, "decision_function"):
        methods.append(model.decision_function)
    for method in methods:
        with pytest.raises(ValueError, match="must be in the same order as they were in fit"):
            method(swapped)
        with pytest.raises(ValueError, match="Feature names unseen at fit time"):
            method(_frame(X, columns=("a", "c")))

    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        unnamed = model.predict(X[:5])  # fitted with names, predicting without
    np.testing.assert_array_equal(named, unnamed)

    model.fit(X, y)  # a refit on an array forgets the names
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but"):
        model.predict(_frame(X[:5]))
    with pytest.raises(ValueError, match="X has 3 features, but .* is expecting 2 features"):
        model.predict(np.zeros((2, 3)))


@pytest.mark.parametrize("estimator", _estimators(), ids=lambda e: type(e).__name__)
def test_scikit_learn_dataframe_column_check(estimator):
    # scikit-learn runs this check only on its own estimators; semiscale's pass it too
    pytest.importorskip("pandas", reason="the check fits on a pandas DataFrame")
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    check_dataframe_column_names_consistency(type(estimator).__name__, estimator)


def test_knngraph_records_feature_names():
    X = np.random.default_rng(0).standard_normal((40, 2))
    graph = KNNGraph(n_neighbors=4).fit(_frame(X))
    assert list(graph.feature_names_in_) == ["a", "b"] and graph.n_features_in_ == 2
    assert not hasattr(graph.fit(X), "feature_names_in_")


# ------------------------------------------------------------------ parameter validation
def _graphs():
    from semiscale.graph import PrecomputedGraph

    X = np.random.RandomState(0).uniform(size=(20, 5))  # check_param_validation's X
    return [KNNGraph(n_neighbors=3), PrecomputedGraph(KNNGraph(n_neighbors=3).fit(X).adjacency_, X)]


@pytest.mark.parametrize("estimator", _estimators() + _graphs(), ids=lambda e: type(e).__name__)
def test_every_parameter_is_validated_declaratively(estimator):
    # scikit-learn's own check: _parameter_constraints lists every parameter, and fit refuses a
    # value of a wrong type or outside the constraints with an InvalidParameterError (a
    # ValueError and a TypeError) saying "The 'name' parameter of Class must be ... Got ...".
    from sklearn.utils.estimator_checks import check_param_validation

    check_param_validation(type(estimator).__name__, estimator)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"ambient_reg": -1.0}, "The 'ambient_reg' parameter of LapRLSClassifier must be"),
        ({"intrinsic_reg": np.nan}, "The 'intrinsic_reg' parameter"),
        ({"kernel": "gaussian"}, "'kernel' parameter .* must be an instance of 'semiscale.kernels"),
        ({"graph": 8}, "'graph' parameter .* must be an object implementing 'fit'"),
        ({"solver": "lu"}, "'solver' parameter .* must be a str among"),
        ({"preconditioner": "magic"}, "'preconditioner' parameter"),
        ({"memory_budget": -5}, "'memory_budget' parameter"),
        ({"random_state": "seed"}, "'random_state' parameter .*Generator"),
        ({"unlabeled": [-1]}, "'unlabeled' parameter"),
    ],
)
def test_invalid_parameters_are_named_before_any_work(params, message, monkeypatch):
    from semiscale.models import LapRLSClassifier

    def no_graph(*args, **kwargs):
        raise AssertionError("the graph was built before the parameters were checked")

    monkeypatch.setattr(KNNGraph, "fit", no_graph)
    X, _, y_ssl = _ssl_moons(60)
    with pytest.raises(ValueError, match=message):
        LapRLSClassifier(**params).fit(X, y_ssl)


# ----------------------------------------------------------------- KNNGraph.fit_transform
def test_knngraph_fit_transform_returns_the_laplacian():
    import scipy.sparse as sp
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).standard_normal((80, 3)) * [1.0, 10.0, 100.0]
    graph = KNNGraph(n_neighbors=5)
    L = graph.fit_transform(X)
    assert sp.isspmatrix_csr(L) and L.shape == (80, 80) and L is graph.laplacian_
    again = KNNGraph(n_neighbors=5).fit(X).laplacian_
    assert (again != L).nnz == 0
    assert not hasattr(graph, "transform")  # transductive: defined on the fitted points only
    # the last step of a pipeline: the Laplacian of the scaled points
    piped = make_pipeline(StandardScaler(), KNNGraph(n_neighbors=5)).fit_transform(X)
    scaled = KNNGraph(n_neighbors=5).fit(StandardScaler().fit_transform(X)).laplacian_
    assert (piped != scaled).nnz == 0


def test_precomputed_graph_fit_transform_returns_the_induced_laplacian():
    from semiscale.graph import PrecomputedGraph

    X = np.random.default_rng(0).standard_normal((50, 2))
    full = KNNGraph(n_neighbors=5).fit(X)
    graph = PrecomputedGraph(full.adjacency_, X)
    L = graph.fit_transform(X[10:40])
    assert L.shape == (30, 30) and L is graph.laplacian_
    again = PrecomputedGraph(full.adjacency_, X).fit(X[10:40]).laplacian_
    assert (again != L).nnz == 0


# ------------------------------------------------- the estimator's memory budget reaches its graph
def _budget_problem():
    X = np.random.default_rng(0).standard_normal((400, 20))  # d > 15: brute-force search
    y = np.full(400, -1)
    y[:2] = [0, 1]
    return X, y


def test_the_estimators_memory_budget_bounds_its_graph_search():
    from semiscale._memory import MemoryBudgetError
    from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier

    X, y = _budget_problem()
    # (an exact *direct* fit refuses such a budget before any graph: the CG solver does not)
    for model in (partial(LapRLSClassifier, solver="cg"), NystromLapRLSClassifier):
        user_graph = KNNGraph(n_neighbors=5)
        # 1000 bytes hold neither the solver's arrays nor the graph's: refused before the graph
        # since issue 26 (it used to run the search under a quarter of the machine's memory,
        # and the solver refused afterwards)
        with pytest.raises(MemoryBudgetError, match="1000 B"):
            model(graph=user_graph, memory_budget=1000).fit(X, y)
        assert user_graph.memory_budget is None  # the user's object is not modified
    # the graph itself, given that budget, refuses before its search
    with pytest.raises(MemoryBudgetError, match=r"1000 B is too small for the kNN graph"):
        KNNGraph(n_neighbors=5, memory_budget=1000).fit(X)


def test_the_graph_gets_the_estimators_budget_and_threads_only_where_it_sets_none():
    from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier

    X, y = _budget_problem()
    own = KNNGraph(n_neighbors=5, memory_budget="64MiB")
    model = LapRLSClassifier(graph=own, memory_budget="32MiB").fit(X, y)
    assert model.graph_.memory_budget == "64MiB"  # the graph's own budget wins
    model = LapRLSClassifier(graph=KNNGraph(n_neighbors=5), memory_budget="32MiB").fit(X, y)
    assert model.graph_.memory_budget == "32MiB" and model.graph.memory_budget is None
    nystrom = NystromLapRLSClassifier(
        graph=KNNGraph(n_neighbors=5), n_centers=40, memory_budget="32MiB", n_jobs=2
    ).fit(X, y)
    assert (nystrom.graph_.memory_budget, nystrom.graph_.n_jobs) == ("32MiB", 2)
    assert LapRLSClassifier(graph=KNNGraph(n_neighbors=5)).fit(X, y).graph_.memory_budget is None


# --------------------------------------------------------------------- static docstrings
@pytest.mark.parametrize("estimator", _estimators(), ids=lambda e: type(e).__name__)
def test_estimator_docstrings_are_static_text_with_an_example(estimator):
    # literal docstrings (readable in the source, found by documentation tools that parse it),
    # each with the sections of a numpydoc estimator page and a doctest
    import ast
    import inspect

    cls = type(estimator)
    tree = ast.parse(inspect.getsource(inspect.getmodule(cls)))
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    assert ast.get_docstring(node, clean=False) == cls.__doc__
    for section in ("Parameters", "Attributes", "See Also", "Examples"):
        assert f"\n    {section}\n    ---" in cls.__doc__
    examples = cls.__doc__.split("\n    Examples\n    ---")[1]
    assert f"{cls.__name__}(" in examples and ">>> " in examples  # a doctest that builds one
    for name in estimator.get_params(deep=False):
        assert f"\n    {name} : " in cls.__doc__, name
