"""Fit and score a list of hyper-parameter points on semi-supervised folds, reusing the graphs.

Shared by :func:`~semiscale.model_selection.ssl_cross_validate` (one point) and
:class:`~semiscale.model_selection.SSLGridSearchCV` (a grid).  What is reused:

* **the graph**: points are grouped by their graph setting (the ``graph`` parameter and every
  ``graph__*`` parameter they set); each group's graph is built once per *training set* on that
  set's rows, and its Laplacian given to every fit of the group (``fit(..., laplacian=L)``).
  Transductive folds all train on every point, so there a setting costs one build in total.
  A point with ``intrinsic_reg == 0`` does not use the graph and does not trigger a build.
* **a data-dependent kernel width**: a semiscale kernel with a heuristic parameter
  (``RBF(gamma="median")``) is resolved once per training set and kernel setting, and the fits
  get the resolved kernel (restored to the original parameter after the fit).

Kernel matrices themselves are not shared between fits: each estimator computes the blocks it
needs (they depend on the kernel's width, which the grid usually varies).

Estimators whose ``fit`` takes no ``laplacian`` or that have no ``graph`` parameter (a
``Pipeline``, a scikit-learn estimator) are fitted plainly: nothing is reused, and ``X`` is
passed to them as given (a DataFrame stays a DataFrame, so a ``ColumnTransformer`` can select
its columns by name).

With ``n_jobs`` the fits run in parallel (joblib, as scikit-learn's ``GridSearchCV``): the graphs
are still built once, in the calling process, and each fit receives its training set's
Laplacian; each fit is the computation ``n_jobs=1`` makes, so the scores are the same (up to
rounding, where a worker process uses fewer BLAS threads).
"""

from __future__ import annotations

import hashlib
import inspect
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.exceptions import FitFailedWarning
from sklearn.utils import _safe_indexing
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples

from .._progress import _as_level, log, progress
from .._validation import check_X, label_array
from ..solvers.exact import reusing_kernel_matrices
from ._markers import estimator_marker, hide_labels
from ._pipelines import NoTransductionError, is_pipeline

__all__ = ["Evaluator", "FoldResults", "check_error_score", "graph_params_of", "reuses_graph"]

#: Training-set key of folds that train on every row (all transductive folds share it).
_ALL_ROWS = "all"


def reuses_graph(estimator) -> bool:
    """True when ``estimator`` has a ``graph`` parameter and its ``fit`` takes ``laplacian``."""
    try:
        params = estimator.get_params(deep=False)
        signature = inspect.signature(estimator.fit)
    except (AttributeError, TypeError, ValueError):
        return False
    return "graph" in params and "laplacian" in signature.parameters


def graph_params_of(params: dict) -> dict:
    """The entries of a grid point that set the graph: ``graph`` and ``graph__*``."""
    return {k: v for k, v in params.items() if k == "graph" or k.startswith("graph__")}


def _kernel_params_of(params: dict) -> dict:
    # random_state seeds the "median" heuristic's sample, so it is part of the kernel setting
    return {
        k: v
        for k, v in params.items()
        if k in ("kernel", "random_state") or k.startswith("kernel__")
    }


def kernel_key_of(point: dict) -> str:
    """A sort key of a grid point's kernel setting (points with equal keys share a kernel)."""
    return repr(sorted(_kernel_params_of(point).items()))


def _freeze(params: dict) -> tuple:
    """A hashable key for a grid point's sub-dictionary (unhashable values by identity)."""
    items = []
    for name in sorted(params):
        value = params[name]
        try:
            hash(value)
        except TypeError:
            value = ("<object>", id(value))
        items.append((name, value))
    return tuple(items)


def _training_key(rows: np.ndarray, n_samples: int):
    if rows.size == n_samples and np.array_equal(rows, np.arange(n_samples)):
        return _ALL_ROWS
    return hashlib.sha1(np.ascontiguousarray(rows, dtype=np.int64).tobytes()).hexdigest()


def _own_method(obj, name):
    """``obj.name`` when a class other than scikit-learn's BaseEstimator defines it."""
    for klass in type(obj).__mro__:
        if name in vars(klass):
            return None if klass is BaseEstimator else getattr(obj, name)
    return None


def _validate_params(obj):
    """Run the parameter checks ``obj`` runs at the start of its ``fit``, without fitting.

    scikit-learn's declarative validation (``obj._validate_params()``) whenever ``obj`` declares
    ``_parameter_constraints`` (semiscale's estimators and graphs, and scikit-learn's own), or a
    ``_validate_params`` of its own class otherwise.
    """
    if getattr(obj, "_parameter_constraints", None) is not None:
        validate = getattr(obj, "_validate_params", None)
        if callable(validate):
            validate()
            return
    method = _own_method(obj, "_validate_params")
    if method is not None:
        method()


def _string_params(obj) -> dict:
    return {k: v for k, v in obj.get_params(deep=False).items() if isinstance(v, str)}


def _is_semiscale_kernel(kernel) -> bool:
    from ..kernels import Kernel

    return isinstance(kernel, Kernel)


def _only_resolves(kernel) -> bool:
    """True for a kernel whose fitting only fixes its width heuristics from ``X``.

    A kernel that learns from the data (it overrides ``Kernel.fit``: paper 002's data-dependent
    kernel reads the labels and the graph) must be fitted by each estimator on its own fold.
    """
    from ..kernels import Kernel

    base_fit = getattr(Kernel, "fit", None)
    return getattr(type(kernel), "fit", None) is base_fit


def resolve_kernel(kernel, X, random_state):
    """``kernel`` with its heuristic widths fixed from ``X``, or None when nothing to resolve.

    Only semiscale kernels whose fitting is this resolution, whose string parameters
    (``gamma="median"``) become numbers and whose other parameters stay equal are resolved here;
    anything else is left to the estimator.
    """
    if not _is_semiscale_kernel(kernel) or not _only_resolves(kernel):
        return None
    strings = _string_params(kernel)
    if not strings:
        return None
    try:
        resolved = kernel.resolve(X, random_state=random_state)
    except TypeError:  # a resolve that needs more than X: the estimator resolves it
        return None
    if type(resolved) is not type(kernel):
        return None
    before, after = kernel.get_params(deep=False), resolved.get_params(deep=False)
    for name, value in before.items():
        if name in strings:
            if isinstance(after[name], str):
                return None
        elif after[name] is not value:
            return None
    return resolved


@dataclass
class FoldResults:
    """Scores and times of every (point, fold), shape (n_points, n_folds)."""

    scores: np.ndarray
    fit_times: np.ndarray
    score_times: np.ndarray
    estimators: list = field(default_factory=list)  # [point][fold] when kept


class Evaluator:
    """Fit hyper-parameter points on folds of ``(X, y)`` and score them, building each graph once.

    Parameters
    ----------
    estimator : estimator
        Unfitted template; every fit uses ``clone(estimator).set_params(**point)``.
    X, y : the whole data set (``y`` with unlabeled points marked).
    laplacian : sparse matrix or None
        Laplacian of the whole data set; each training set gets its induced subgraph.
    error_score : "raise" or float
    verbose : int or bool
        1: a progress bar over the fits; 2: also a line per graph build and per fit on stderr
        (:func:`semiscale._progress.log`).  Only this parameter turns the lines on, not the
        command line's ambient verbosity: a search makes hundreds of fits.
    name : str
        Prefix of the progress lines.
    default_marker : scalar
        Unlabeled marker for classifiers without an ``unlabeled`` parameter.
    n_jobs : int or None, default=None
        Fits run in parallel (joblib): None is 1 unless a ``joblib.parallel_config`` context
        says otherwise, -1 all cores.
    X_refit : array-like or None
        ``X`` as the caller gave it (a DataFrame keeps its column names in the refitted
        estimator's ``feature_names_in_``); None: ``X``.
    """

    def __init__(
        self,
        estimator,
        X,
        y,
        *,
        laplacian=None,
        error_score=np.nan,
        verbose=0,
        name="ssl_cross_validate",
        default_marker=-1,
        n_jobs=None,
        X_refit=None,
    ):
        self.estimator = estimator
        self.X = X
        self.X_refit = X if X_refit is None else X_refit
        self.n_jobs = n_jobs
        self.n_samples = _num_samples(X)
        self.y = np.asarray(y)
        self.laplacian = laplacian
        self.error_score = error_score
        self.verbose = verbose
        self.name = name
        self.default_marker = default_marker
        self.folds = []
        self.scorer = None
        self.reuse = reuses_graph(estimator)
        if laplacian is not None and not self.reuse:
            raise ValueError(
                f"laplacian was given, but {type(estimator).__name__} has no graph parameter "
                "or its fit takes no laplacian; fit it without laplacian"
            )
        self.n_graph_fits = 0
        self.graph_time = 0.0
        self.failures = []  # the exceptions of the failed fits, in order
        self.n_attempts = 0  # fits tried (BIFSearchCV: one per grid point)
        self._graphs = {}  # (training key, graph key) -> fitted graph object
        self._last_rows = None  # (training key, X of its rows): the last training set's array
        self._kernels = {}  # (training key, kernel key) -> resolved kernel or None
        self._precomputed = None

    # ------------------------------------------------------------------ graphs
    def _graph_template(self, candidate):
        graph = candidate.get_params(deep=False).get("graph")
        if graph is None:
            from ..graph import KNNGraph

            graph = KNNGraph()
        return graph

    def graph_for(self, train_key, graph_key, candidate, fit_rows):
        """The fitted graph of ``candidate``'s setting on ``fit_rows``, built at most once."""
        key = (train_key, graph_key)
        if key in self._graphs:
            graph = self._graphs[key]
            if isinstance(graph, Exception):
                raise graph
            return graph
        tic = time.perf_counter()
        try:
            if self.laplacian is not None:
                if self._precomputed is None:
                    from ..graph import PrecomputedGraph

                    self._precomputed = PrecomputedGraph(self.laplacian, self.X, kind="laplacian")
                graph = clone(self._precomputed).fit_rows(fit_rows)
            else:
                graph = clone(self._graph_template(candidate))
                X_fit = self.X if train_key == _ALL_ROWS else _safe_indexing(self.X, fit_rows)
                graph.fit(X_fit)
                self.n_graph_fits += 1
        except Exception as exc:
            self._graphs[key] = exc  # every point of the setting fails with the same cause
            raise
        seconds = time.perf_counter() - tic
        self.graph_time += seconds
        self._graphs[key] = graph
        if self._lines and self.laplacian is None:
            log(
                f"[{self.name}] graph {dict(graph_key) or '(default)'} on {fit_rows.size} "
                f"points: {seconds:.3f} s",
                self.verbose,
                level=2,
            )
        return graph

    def release(self, train_key):
        """Forget the graphs of a training set that no fold uses any more."""
        for key in [k for k in self._graphs if k[0] == train_key]:
            del self._graphs[key]
        if self._last_rows is not None and self._last_rows[0] == train_key:
            self._last_rows = None

    # ------------------------------------------------------------------ kernels
    def _resolved_kernel(self, train_key, point, candidate, X_fit):
        key = (train_key, _freeze(_kernel_params_of(point)))
        if key not in self._kernels:
            own = candidate.get_params(deep=False)
            self._kernels[key] = resolve_kernel(own.get("kernel"), X_fit, own.get("random_state"))
        return self._kernels[key]

    # ------------------------------------------------------------------ checks
    def check(self, points):
        """Raise a ValueError naming the first invalid point, before anything is fitted.

        Each point is set on a clone (unknown names fail) and put through the checks its
        estimator, graph and kernel run at fit time, without fitting: the estimator's and the
        graph's declarative validation (``_validate_params`` wherever they declare
        ``_parameter_constraints``), the kernel's ``_check_params``, and the kernel's width
        heuristics resolved on all of ``X`` (which rejects an unknown heuristic).  Those
        resolutions are kept: they are the ones the all-rows fits (transductive folds, the
        refit) need.  A pipeline's steps get the same checks, except the resolution of a width
        heuristic: the final step sees ``X`` only after the earlier steps transform it.
        """
        for index, point in enumerate(points):
            try:
                candidate = clone(self.estimator).set_params(**point)
                self._check_candidate(candidate, point)
            except Exception as exc:
                raise ValueError(
                    f"param_grid point {index} {point!r} is invalid: {exc}; nothing was fitted"
                ) from exc

    def _check_candidate(self, candidate, point):
        _validate_params(candidate)
        if is_pipeline(candidate):
            for _, step in candidate.steps:
                if step is not None and not isinstance(step, str):
                    self._check_candidate(step, None)
            return
        own = candidate.get_params(deep=False)
        graph = own.get("graph")
        if graph is not None:
            _validate_params(graph)
        kernel = own.get("kernel")
        if not _is_semiscale_kernel(kernel):
            return
        if not _string_params(kernel):
            method = _own_method(kernel, "_check_params")
            if method is not None:
                method()
        elif point is None:
            return  # a pipeline's step: its X is the transformed one, known at fit time only
        elif not (
            self.reuse and self._resolved_kernel(_ALL_ROWS, point, candidate, self.X) is not None
        ):
            kernel.resolve(self.X, random_state=own.get("random_state"))

    # ------------------------------------------------------------------ one fit
    def _prepare(self, candidate, point, X_fit, fit_rows, train_key, graph_key):
        """Give ``candidate`` the shared resolved kernel; its fit's ``laplacian`` keyword.

        Returns ``(fit_params, original_kernel)``: the kernel to restore after the fit (None
        when the candidate keeps its own).  A failed graph build raises here.
        """
        fit_params = {}
        original_kernel = None
        if self.reuse:
            if getattr(candidate, "intrinsic_reg", None) != 0:
                graph = self.graph_for(train_key, graph_key, candidate, fit_rows)
                fit_params["laplacian"] = graph.laplacian_
            resolved = self._resolved_kernel(train_key, point, candidate, X_fit)
            if resolved is not None:
                original_kernel = candidate.get_params(deep=False)["kernel"]
                candidate.set_params(kernel=resolved)
        return fit_params, original_kernel

    def _fit(self, candidate, point, X_fit, y_fit, fit_rows, train_key, graph_key):
        """``candidate.fit`` with the shared graph and resolved kernel; returns the seconds."""
        fit_params, original_kernel = self._prepare(
            candidate, point, X_fit, fit_rows, train_key, graph_key
        )
        return _timed_fit(candidate, X_fit, y_fit, fit_params, original_kernel)

    def _training_rows(self, fold, train_key):
        """``X`` of a training set: one object per set, so that the points sharing a kernel
        share K(X, X) (the solvers recognise X by identity: reusing_kernel_matrices)."""
        if train_key == _ALL_ROWS:
            return self.X
        if self._last_rows is None or self._last_rows[0] != train_key:
            self._last_rows = (train_key, _safe_indexing(self.X, fold.fit_rows))
        return self._last_rows[1]

    def task(self, candidate, point, fold, train_key, graph_key):
        """The arguments of :func:`_fit_and_score` for ``candidate`` on ``fold``.

        Runs in the calling process: it builds (or reuses) the graph, resolves the kernel and
        hides the fold's labels.  A failed graph build is returned as the exception.
        """
        y = self.y
        X_fit = self._training_rows(fold, train_key)
        y_fit = y[fold.fit_rows]
        if fold.transductive:
            positions = np.searchsorted(fold.fit_rows, fold.hidden_rows)
            marker = estimator_marker(candidate, self.default_marker)
            y_fit = hide_labels(y_fit, positions, marker)
            scoring = ("transduction", y[fold.fit_rows], positions)
        else:
            rows = fold.test_rows
            scoring = ("inductive", _safe_indexing(self.X, rows), y[rows])
        try:
            fit_params, original_kernel = self._prepare(
                candidate, point, X_fit, fold.fit_rows, train_key, graph_key
            )
        except Exception as exc:
            return exc
        return (candidate, X_fit, y_fit, fit_params, original_kernel, self.scorer, scoring)

    def refit(self, point):
        """Fit ``point`` on all rows, reusing the all-rows graph and kernel when there are any.

        The fit gets ``X`` as the caller gave it (``X_refit``).

        Returns
        -------
        estimator : the fitted estimator
        graph : the fitted graph object it was given, or None
        """
        candidate = clone(self.estimator).set_params(**point)
        graph_key = _freeze(graph_params_of(point)) if self.reuse else ()
        rows = np.arange(self.n_samples)
        fit_params, original_kernel = self._prepare(
            candidate, point, self.X, rows, _ALL_ROWS, graph_key
        )
        _timed_fit(candidate, self.X_refit, self.y, fit_params, original_kernel)
        graph = self._graphs.get((_ALL_ROWS, graph_key))
        return candidate, None if isinstance(graph, Exception) else graph

    # ------------------------------------------------------------------ all fits
    def run(self, points, folds, scorer, *, keep_estimators=False) -> FoldResults:
        """Fit every point on every fold (a list of SSLFold) and score it with ``scorer``.

        The fits are grouped by training set, then graph setting, so that each graph is built
        once and only one training set's graphs are held at a time (the all-rows ones are kept
        for the refit).
        """
        self.folds, self.scorer = list(folds), scorer
        n_points, n_folds = len(points), len(self.folds)
        scores = np.full((n_points, n_folds), np.nan)
        fit_times = np.zeros((n_points, n_folds))
        score_times = np.zeros((n_points, n_folds))
        estimators = [[None] * n_folds for _ in range(n_points)]

        # Training sets in order of first use; transductive folds all share the "all rows" one.
        trainings: dict = {}
        for f, fold in enumerate(self.folds):
            trainings.setdefault(_training_key(fold.fit_rows, self.n_samples), []).append(f)
        groups: dict = {}
        for p, point in enumerate(points):
            key = _freeze(graph_params_of(point)) if self.reuse else ()
            groups.setdefault(key, []).append(p)
        for point_ids in groups.values():  # points sharing a kernel one after the other
            point_ids.sort(key=lambda p: kernel_key_of(points[p]))

        if self.laplacian is not None and trainings:
            # A given Laplacian that cannot be subset (wrong shape, normalized) is the caller's
            # error, not a failed fit: raise it now instead of scoring every point error_score.
            first_key, first_folds = next(iter(trainings.items()))
            self.graph_for(first_key, (), None, self.folds[first_folds[0]].fit_rows)

        order = [
            (train_key, graph_key, f, p)
            for train_key, fold_ids in trainings.items()
            for graph_key, point_ids in groups.items()
            for f in fold_ids
            for p in point_ids
        ]
        self.n_attempts += len(order)
        with reusing_kernel_matrices():  # K(X, X) shared by the points that share a kernel
            self._run(order, points, (scores, fit_times, score_times), estimators, keep_estimators)
        return FoldResults(scores, fit_times, score_times, estimators if keep_estimators else [])

    @property
    def _lines(self):
        # a line per graph and per fit at verbose >= 2, from this parameter only: the command
        # line's ambient verbosity shows the bar, not hundreds of lines
        return _as_level(self.verbose) >= 2

    def _tasks(self, order, points, keep):
        """The fits' arguments in ``order``, prepared one at a time as joblib asks for them.

        A training set's graphs are released once its last fit is handed out (a fit running
        in this process holds its Laplacian itself; a worker got a copy).
        """
        previous = None
        for train_key, graph_key, f, p in order:
            if previous is not None and train_key != previous and previous != _ALL_ROWS:
                self.release(previous)
            previous = train_key
            candidate = clone(self.estimator).set_params(**points[p])
            args = self.task(candidate, points[p], self.folds[f], train_key, graph_key)
            if isinstance(args, Exception):
                yield delayed(_failed)(args, self.error_score)
            else:
                yield delayed(_fit_and_score)(*args, error_score=self.error_score, keep=keep)
        if previous is not None and previous != _ALL_ROWS:
            self.release(previous)

    def _run(self, order, points, out, estimators, keep_estimators):
        scores, fit_times, score_times = out
        n_folds = len(self.folds)
        total = len(order)
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        with progress(total=total, desc=self.name, unit="fit", verbose=self.verbose) as bar:
            results = parallel(self._tasks(order, points, keep_estimators))
            for done, ((_, _, f, p), (outcome, result)) in enumerate(zip(order, results), 1):
                if outcome == "failed":
                    warnings.warn(
                        f"{self.name}: fitting point {points[p]!r} on fold {f} failed "
                        f"({type(result).__name__}: {result}); its score is set to "
                        f"error_score={self.error_score!r}",
                        FitFailedWarning,
                        stacklevel=4,
                    )
                    self.failures.append(result)
                    result, candidate = (self.error_score, 0.0, 0.0), None
                else:
                    result, candidate = result
                scores[p, f], fit_times[p, f], score_times[p, f] = result
                if keep_estimators:
                    estimators[p][f] = candidate
                bar.update(1)
                if self._lines:
                    log(
                        f"[{self.name}] {done}/{total} fold {f + 1}/{n_folds} "
                        f"{points[p]!r}: score {scores[p, f]:.4g} "
                        f"({fit_times[p, f]:.3f} s)",
                        self.verbose,
                        level=2,
                    )


def _timed_fit(candidate, X_fit, y_fit, fit_params, original_kernel):
    """``candidate.fit(X_fit, y_fit, **fit_params)``; the seconds it took."""
    tic = time.perf_counter()
    try:
        candidate.fit(X_fit, y_fit, **fit_params)
    finally:
        # the fitted estimator shows the parameters it was given (kernel_ is the resolved one)
        if original_kernel is not None:
            candidate.set_params(kernel=original_kernel)
    return time.perf_counter() - tic


def _score(candidate, X_fit, scorer, scoring):
    kind, *data = scoring
    if kind == "transduction":
        y_true, positions = data
        return scorer.score_transduction(candidate, X_fit, y_true, positions)
    X_test, y_test = data
    return scorer(candidate, X_test, y_test)


def _fit_and_score(
    candidate, X_fit, y_fit, fit_params, original_kernel, scorer, scoring, *, error_score, keep
):
    """Fit and score one (point, fold): ``("ok", ((score, fit s, score s), estimator))``.

    The fitted estimator is returned only when ``keep`` (from a worker it is a copy).

    A failure is returned as ``("failed", exception)`` unless ``error_score="raise"``; a
    missing ``transduction_`` always raises (no point can succeed).  Module-level, so that
    joblib can send it to a worker process.
    """
    try:
        fit_time = _timed_fit(candidate, X_fit, y_fit, fit_params, original_kernel)
        tic = time.perf_counter()
        score = _score(candidate, X_fit, scorer, scoring)
    except NoTransductionError:
        raise
    except Exception as exc:
        if error_score == "raise":
            raise
        return "failed", exc
    return "ok", ((score, fit_time, time.perf_counter() - tic), candidate if keep else None)


def _failed(exc, error_score):
    """A fit whose graph build failed (in the calling process): raise it or report it."""
    if error_score == "raise":
        raise exc
    return "failed", exc


def check_input(estimator, X, y, laplacian=None):
    """``(X, y)`` for the evaluation of ``estimator``: ``X`` validated as a feature matrix when
    the search builds graphs or resolves kernels on it (a semiscale estimator, or a given
    ``laplacian``), else passed as given (a pipeline validates its own input: a DataFrame with
    named or non-numeric columns stays one); ``y`` as an array with a row per sample (a
    classifier's nullable column as :func:`~semiscale._validation.label_array` gives it:
    ``np.asarray`` would turn ``Int64`` labels beside ``pd.NA`` into floats, and the fitted
    models' classes with them)."""
    if laplacian is not None or reuses_graph(estimator):
        X = check_X(X)
    y = np.asarray(label_array(y) if is_classifier(estimator) else y)
    n_samples = _num_samples(X)
    if y.ndim == 0 or y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0] if y.ndim else 0} rows but X has {n_samples} samples")
    return X, y


def all_failed_error(evaluator, n_points):
    """The ValueError of a search whose every grid point failed, naming the first cause."""
    failures = evaluator.failures
    if not failures:
        return ValueError(
            "every grid point's mean score is NaN, and no fit failed: the scorer returned NaN; "
            "check the scoring"
        )
    first = failures[0]
    if len(failures) == evaluator.n_attempts:
        what = f"All the {len(failures)} fits failed"
    else:
        what = (
            f"Every one of the {n_points} grid points failed on some fold "
            f"({len(failures)} of {evaluator.n_attempts} fits failed)"
        )
    return ValueError(
        f"{what}. The first failure: {type(first).__name__}: {first}. Fix its cause, or pass "
        "error_score='raise' to see its traceback"
    )


def check_error_score(error_score):
    """``error_score`` must be "raise" or a number."""
    if error_score == "raise" or isinstance(error_score, numbers.Real):
        return error_score
    raise ValueError(f"error_score must be 'raise' or a number, got {error_score!r}")
