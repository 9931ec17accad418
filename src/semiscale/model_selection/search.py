"""Grid search for semi-supervised estimators that builds each graph once per fold and setting.

A grid over LapRLS's ``ambient_reg``, ``intrinsic_reg`` and ``kernel__gamma`` changes nothing
about the kNN graph, yet scikit-learn's ``GridSearchCV`` rebuilds it in every fit.
:class:`SSLGridSearchCV` groups the grid points by their graph setting (``graph`` and
``graph__*``), builds each setting's graph once on each fold's training points and passes
``laplacian=`` to every fit of the group.  With transductive folds every fold trains on all
points, so each graph setting costs one build for the whole search (and the refit).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._evaluate import (
    Evaluator,
    all_failed_error,
    check_error_score,
    check_input,
    graph_params_of,
)
from ._markers import estimator_marker
from ._pipelines import transduction_of
from .folds import check_ssl_cv
from .scoring import get_ssl_scorer

__all__ = ["SSLGridSearchCV"]


def _rank(scores: np.ndarray) -> np.ndarray:
    """Rank 1 for the best mean score, ties sharing the smaller rank; NaN scores rank last."""
    finite = np.where(np.isnan(scores), -np.inf, scores)
    ranks = rankdata(-finite, method="min").astype(np.int32)
    nan = np.isnan(scores)
    if nan.any():
        ranks[nan] = int((~nan).sum()) + 1
    return ranks


def _best_has(method):
    """``available_if`` check: the (unfitted) estimator or the best one has ``method``."""

    def check(search):
        estimator = getattr(search, "best_estimator_", search.estimator)
        getattr(estimator, method)  # raises AttributeError, which hides the method
        return True

    return check


def template_for(estimator, points, laplacian):
    """A clone of ``estimator`` to set every grid point on, with a graph object where the grid
    sets ``graph__*`` on an estimator whose ``graph`` is None; refuses, before any fit,
    parameters of a None or named (``"rbf"``) kernel and a graph grid together with a given
    ``laplacian``."""
    estimator = clone(estimator)
    own = estimator.get_params(deep=False)
    for point in points:
        for key in point:
            name = key.split("__", 1)[0]
            value = own.get(name, ...)
            if "__" in key and (value is None or isinstance(value, str)) and name != "graph":
                # None (the default object) and a name (kernel="rbf") have no parameters
                raise ValueError(
                    f"param_grid sets {key!r}, but the estimator's {name} is {value!r}, which "
                    f"has no parameters to set; give the estimator an explicit {name} object "
                    "(e.g. kernel=RBF(gamma='median'))"
                )
    if laplacian is not None and any(graph_params_of(p) for p in points):
        raise ValueError(
            "param_grid sets the graph (graph or graph__*), but a laplacian was given to "
            "fit, which replaces the graph; drop the graph parameters from the grid or "
            "fit without laplacian"
        )
    varies_graph = any(k.startswith("graph__") for point in points for k in point)
    if varies_graph and "graph" in own and own["graph"] is None:
        # graph=None means KNNGraph(); make it an object so graph__* can be set on it
        from ..graph import KNNGraph

        estimator.set_params(graph=KNNGraph())
    return estimator


class SSLGridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive search over a grid with semi-supervised cross-validation and graph reuse.

    Parameters
    ----------
    estimator : estimator
        A semiscale estimator (``graph`` parameter, ``fit(X, y, laplacian=None)``) gets the graph
        reuse described in the module docstring; any other estimator is fitted plainly.  A
        scikit-learn ``Pipeline`` whose earlier steps are transformers
        (``make_pipeline(StandardScaler(), LapRLSClassifier())``) works with every kind of
        folds: transductive folds read the final step's ``transduction_``, its labels for the
        training rows, which the transformers map one to one.  An estimator without
        ``transduction_`` is refused at its first fit, naming the fix (inductive folds).
    param_grid : dict or list of dicts
        Parameter names (nested with ``__``, e.g. ``"graph__n_neighbors"``,
        ``"kernel__gamma"``) to lists of values, as scikit-learn's ``ParameterGrid``.  Every point
        is checked (parameter names, the estimator's, graph's and kernel's own checks) before
        anything is fitted.
    cv : int, SSLKFold, scikit-learn splitter or None, default=5
        An int (None: 5): ``SSLKFold(cv, shuffle=False)``, transductive folds of the labeled
        and of the unlabeled points in row order, the same on every call (scikit-learn's
        ``GridSearchCV(cv=int)`` does not shuffle either).  Pass an :class:`SSLKFold` with a
        ``random_state`` for shuffled folds, ``transductive=False`` for inductive ones.
    scoring : None, str, callable or SSLScorer, default=None
        On labeled held-out points only; None is accuracy (classifiers) or R² (regressors).
    refit : bool, default=True
        Refit the best point on all of ``(X, y)`` as ``best_estimator_``; transductive searches
        reuse the graph already built for the best setting.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    error_score : "raise" or float, default=np.nan
        Score of a fit that fails (with a ``FitFailedWarning``), or "raise".  When every grid
        point fails the search raises a ``ValueError`` naming the first failure.
    n_jobs : int or None, default=None
        Fits run in parallel with joblib, as in scikit-learn's ``GridSearchCV``: None is 1
        (unless inside a ``joblib.parallel_config`` context), -1 all cores.  Graphs are still
        built once, in the calling process, and sent to the fits that use them; each fit is
        the computation ``n_jobs=1`` makes, so the scores are the same (up to rounding, where
        a worker process uses fewer BLAS threads).  Leave the estimator's own ``n_jobs`` at 1
        (or None) when using it, or the two multiply.

    Attributes
    ----------
    cv_results_ : dict of arrays
        scikit-learn's layout: ``"params"``, ``"param_<name>"`` (masked arrays),
        ``"split<k>_test_score"``, ``"mean_test_score"``, ``"std_test_score"``,
        ``"rank_test_score"``, ``"mean_fit_time"``, ``"std_fit_time"``, ``"mean_score_time"``,
        ``"std_score_time"``.  Fit times exclude the shared graph builds (``graph_time_``).
    best_index_ : int
        Index of the best point (first of the best mean scores).
    best_params_ : dict
    best_score_ : float
        Mean cross-validated score of the best point.
    best_estimator_ : estimator
        Refitted on all data (when ``refit``); fitted with ``laplacian=`` when the graph was
        reused, so its ``graph_`` is None -- the graph is ``best_graph_``.
    best_graph_ : fitted graph object or None
        The best setting's graph on all points (None without refit or without graph reuse).
    n_splits_ : int
    n_graph_fits_ : int
        Graphs built: (graph settings used) × (training sets), i.e. one per setting for
        transductive folds, one per fold and setting for inductive ones, plus one for an
        inductive refit; 0 when a ``laplacian`` is given.
    graph_time_ : float
        Seconds spent building graphs.
    refit_time_ : float
    scorer_ : SSLScorer
    classes_ : ndarray
        The best estimator's classes (classifiers).
    transduction_ : ndarray
        The best estimator's labels for the training points (a pipeline's final step's).
    n_features_in_ : int
        The best estimator's (with ``refit``).
    feature_names_in_ : ndarray of str
        The column names of a DataFrame ``X``, from the best estimator, which is refitted on
        ``X`` as given (with ``refit``; absent for an ``X`` without string column names).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.models import LapRLSClassifier
    >>> from semiscale.model_selection import SSLGridSearchCV, SSLKFold
    >>> X, y = make_two_moons(300, random_state=0)
    >>> y_ssl = np.where(np.arange(300) % 10 == 0, y, -1)
    >>> model = LapRLSClassifier(kernel=RBF(gamma=20.0), graph=KNNGraph(), ambient_reg=1e-6)
    >>> search = SSLGridSearchCV(
    ...     model,
    ...     {"intrinsic_reg": [1.0, 100.0], "graph__n_neighbors": [8, 12]},
    ...     cv=SSLKFold(3, random_state=0),
    ... ).fit(X, y_ssl)
    >>> search.n_graph_fits_  # one per graph setting: the folds are transductive
    2
    """

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        cv=5,
        scoring=None,
        refit=True,
        verbose=0,
        error_score=np.nan,
        n_jobs=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.verbose = verbose
        self.error_score = error_score
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ checks
    def _points(self):
        grid = self.param_grid
        if isinstance(grid, Mapping):
            grid = [grid]
        try:
            points = list(ParameterGrid(grid))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"param_grid must be a dict or a list of dicts of parameter lists: {exc}"
            ) from None
        if not points:
            raise ValueError("param_grid is empty: give at least one value per parameter")
        return points

    def _template(self, points, laplacian):
        """The estimator every point is set on; a default graph object where one is needed."""
        return template_for(self.estimator, points, laplacian)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, laplacian=None):
        """Cross-validate every point of the grid, then refit the best one.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            All points, labeled and unlabeled.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets with unlabeled points marked (the estimator's ``unlabeled`` for classifiers,
            NaN for regressors).
        laplacian : sparse matrix of shape (n_samples, n_samples), optional
            A Laplacian of all points to use instead of the estimator's graph; inductive folds
            use its induced subgraphs (see :class:`~semiscale.graph.PrecomputedGraph`).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            An invalid grid point (before any fit), too few labeled points for the folds, or a
            laplacian together with a grid over the graph.
        """
        error_score = check_error_score(self.error_score)
        points = self._points()
        template = self._template(points, laplacian)
        X_given = X
        X, y = check_input(template, X, y, laplacian)
        splitter = check_ssl_cv(self.cv)
        default_marker = getattr(splitter, "unlabeled", -1)
        evaluator = Evaluator(
            template,
            X,
            y,
            laplacian=laplacian,
            error_score=error_score,
            verbose=self.verbose,
            name=type(self).__name__,
            default_marker=default_marker,
            n_jobs=self.n_jobs,
            X_refit=X_given,
        )
        evaluator.check(points)  # every point, before any fit
        self._check_before_fits(template, points)
        self.scorer_ = get_ssl_scorer(self.scoring, unlabeled=default_marker)
        marker = estimator_marker(template, default_marker)
        folds = list(splitter.split_ssl(X, y, unlabeled=marker))
        self.n_splits_ = len(folds)
        results = self._evaluate(evaluator, points, folds, marker)
        self.cv_results_ = self._results(points, results)
        means = self.cv_results_["mean_test_score"]
        if np.isnan(means).all():
            raise all_failed_error(evaluator, len(points))
        self.best_index_ = int(np.flatnonzero(self.cv_results_["rank_test_score"] == 1)[0])
        self.best_params_ = points[self.best_index_]
        self.best_score_ = float(means[self.best_index_])

        self.best_graph_ = None
        if self.refit:
            tic = time.perf_counter()
            self.best_estimator_, self.best_graph_ = self._refit_best(evaluator)
            self.refit_time_ = time.perf_counter() - tic
        self.n_graph_fits_ = evaluator.n_graph_fits
        self.graph_time_ = evaluator.graph_time
        return self

    def _check_before_fits(self, template, points):
        """Refuse, before any fit, what the evaluation would refuse (a hook)."""

    def _refit_best(self, evaluator):
        """``(best_estimator_, best_graph_)``: the best point fitted on all rows (a hook)."""
        return evaluator.refit(self.best_params_)

    def _evaluate(self, evaluator, points, folds, marker):
        """Scores and times of every (point, fold): exact CV, each fold fitted."""
        return evaluator.run(points, folds, self.scorer_)

    def _results(self, points, results):
        scores = results.scores
        n_points = len(points)
        out = {}
        names = sorted({name for point in points for name in point})
        for name in names:
            column = np.ma.MaskedArray(np.empty(n_points, dtype=object), mask=True)
            for i, point in enumerate(points):
                if name in point:
                    column[i] = point[name]
            out[f"param_{name}"] = column
        out["params"] = points
        for k in range(scores.shape[1]):
            out[f"split{k}_test_score"] = scores[:, k]
        out["mean_test_score"] = scores.mean(axis=1)
        out["std_test_score"] = scores.std(axis=1)
        out["rank_test_score"] = _rank(out["mean_test_score"])
        out["mean_fit_time"] = results.fit_times.mean(axis=1)
        out["std_fit_time"] = results.fit_times.std(axis=1)
        out["mean_score_time"] = results.score_times.mean(axis=1)
        out["std_score_time"] = results.score_times.std(axis=1)
        return out

    # ------------------------------------------------------------------ delegation
    def _best(self, what):
        check_is_fitted(self, "cv_results_")
        if not self.refit:
            raise AttributeError(
                f"{what} is only available with refit=True; this search ran with refit=False"
            )
        return self.best_estimator_

    @available_if(_best_has("predict"))
    def predict(self, X):
        """Predictions of the best estimator for new points."""
        return self._best("predict").predict(X)

    @available_if(_best_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the best estimator."""
        return self._best("decision_function").decision_function(X)

    @available_if(_best_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the best estimator."""
        return self._best("predict_proba").predict_proba(X)

    def score(self, X, y):
        """The search's scorer (labeled rows only) applied to the best estimator on ``(X, y)``."""
        return self.scorer_(self._best("score"), X, y)

    @property
    def transduction_(self):
        """Labels (or targets) the best estimator inferred for the training points."""
        return transduction_of(self._best("transduction_"))

    @property
    def classes_(self):
        """Classes of the best estimator."""
        return self._best("classes_").classes_

    @property
    def n_features_in_(self):
        """Number of features the best estimator was fitted on."""
        return self._best("n_features_in_").n_features_in_

    @property
    def feature_names_in_(self):
        """Column names of the DataFrame ``X`` the best estimator was fitted on."""
        return self._best("feature_names_in_").feature_names_in_
