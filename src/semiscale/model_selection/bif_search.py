"""Grid search scored by approximate CV (paper 004's t-BIF): one fit per grid point.

:class:`BIFSearchCV` is :class:`~semiscale.model_selection.SSLGridSearchCV` (same grid checks,
graph reuse, ``cv_results_`` layout, refit and delegation) whose folds are not refitted: each
grid point is fitted once on all the data and every fold's held-out predictions come from
:mod:`semiscale.model_selection.bif`.  ``method="exact"`` runs the same search with exact CV,
the reference the approximation is measured against (``semiscale-bench paper004``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.exceptions import FitFailedWarning

from .._progress import _as_level, log, progress
from .._random import check_random_state
from ..solvers.exact import reusing_kernel_matrices
from ..solvers.influence import reusing_step_blocks
from ._evaluate import _ALL_ROWS, FoldResults, _freeze, graph_params_of, kernel_key_of
from ._fold_objectives import check_folds
from ._markers import labeled_mask
from .bif import (
    MAX_NEWTON_STEPS,
    _check_estimator,
    _check_options,
    approximate_folds,
    fit_keeping_state,
    fold_scores,
    score_function,
    wants_factor,
)
from .search import SSLGridSearchCV

__all__ = ["BIFSearchCV"]

#: How the folds are scored: approximated from one fit, or refitted.
METHODS = ("bif", "exact")


class BIFSearchCV(SSLGridSearchCV):
    """Grid search with t-fold CV approximated by the Bouligand influence function (paper 004).

    Each point of ``param_grid`` costs one fit on all points plus one approximate-CV
    evaluation (:func:`~semiscale.model_selection.bif_cross_val_score`) instead of t fits;
    graphs are built once per graph setting and kernel widths resolved once per kernel
    setting, as in :class:`~semiscale.model_selection.SSLGridSearchCV`, whose parameters,
    attributes and methods this class shares.

    Parameters
    ----------
    estimator : estimator
        A semiscale manifold regularizer with a smooth loss (LapRLS,
        ``LapSVC(formulation="primal")`` -- paper 004 uses ``loss="huber_hinge"`` -- and their
        Nyström variants).
    param_grid : dict or list of dicts
        As :class:`~semiscale.model_selection.SSLGridSearchCV`: kernel width
        (``kernel__gamma``), ``ambient_reg``, ``intrinsic_reg``, ``graph__n_neighbors``,
        ``graph__bandwidth``, ...  Every point is checked before anything is fitted.
    cv : int, SSLKFold or None, default=5
        The folds approximated (an int: ``SSLKFold(cv)``, transductive); paper 004's are
        inductive, ``SSLKFold(t, transductive=False)``.
    method : {"bif", "exact"}, default="bif"
        ``"exact"``: refit every fold (the search of ``SSLGridSearchCV``).
    hessian : {"auto", "nystrom", "exact"}, default="auto"
        See :func:`~semiscale.model_selection.bif_cross_val_predict`.
    step : {"newton", "bif"}, default="newton"
        See :func:`~semiscale.model_selection.bif_cross_val_predict`.
    n_columns : "sqrt" or int, default="sqrt"
        Nyström columns besides the labeled points.
    scoring : None or str, default=None
        ``method="bif"`` scores predictions: None (accuracy or R²) or the name of a
        scikit-learn scorer of predictions (``"neg_mean_squared_error"``, ...).
    refit, error_score
        As :class:`~semiscale.model_selection.SSLGridSearchCV`.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the sampled Nyström columns.
    max_newton_steps : int, default=20
        See :func:`~semiscale.model_selection.bif_cross_val_predict`.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As :class:`~semiscale.model_selection.SSLGridSearchCV`.  With ``method="bif"`` a
        point's one fit and one evaluation are spread evenly over its folds
        (``mean_fit_time`` and ``mean_score_time`` are a t-th of them), so that sums over the
        folds compare with an exact search's.
    best_params_, best_score_, best_estimator_, best_index_, n_splits_, n_graph_fits_, \
graph_time_, refit_time_, scorer_
        As :class:`~semiscale.model_selection.SSLGridSearchCV`.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import LapRLSClassifier
    >>> from semiscale.model_selection import BIFSearchCV, SSLKFold
    >>> X, y = make_two_moons(300, random_state=0)
    >>> y_ssl = np.where(np.arange(300) % 10 == 0, y, -1)
    >>> search = BIFSearchCV(
    ...     LapRLSClassifier(kernel=RBF(gamma=10.0)),
    ...     {"intrinsic_reg": [0.01, 1.0, 100.0]},
    ...     cv=SSLKFold(5, random_state=0),
    ... ).fit(X, y_ssl)
    >>> sorted(search.best_params_)
    ['intrinsic_reg']
    """

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        cv=5,
        method="bif",
        hessian="auto",
        step="newton",
        n_columns="sqrt",
        scoring=None,
        refit=True,
        verbose=0,
        error_score=np.nan,
        random_state=None,
        max_newton_steps=MAX_NEWTON_STEPS,
    ):
        super().__init__(
            estimator,
            param_grid,
            cv=cv,
            scoring=scoring,
            refit=refit,
            verbose=verbose,
            error_score=error_score,
        )
        self.method = method
        self.hessian = hessian
        self.step = step
        self.n_columns = n_columns
        self.random_state = random_state
        self.max_newton_steps = max_newton_steps

    def _check_before_fits(self, template, points):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        _check_options(self.hessian, self.step, self.n_columns, self.max_newton_steps)
        if self.method == "exact":
            return
        for index, point in enumerate(points):  # a point may switch to what BIF cannot expand
            try:
                _check_estimator(clone(template).set_params(**point))
            except TypeError as exc:
                raise TypeError(f"param_grid point {index} {point!r}: {exc}") from None
        self._score = score_function(self.scoring, is_classifier(template))

    def _evaluate(self, evaluator, points, folds, marker):
        if self.method == "exact":
            return super()._evaluate(evaluator, points, folds, marker)
        X, y = evaluator.X, evaluator.y
        check_folds(evaluator.estimator, X, y, folds, marker, self.hessian, evaluator.laplacian)
        # one draw of the Nyström columns for every grid point: their scores stay comparable
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        n_points, n_folds = len(points), len(folds)
        out = (
            np.full((n_points, n_folds), np.nan),
            np.zeros((n_points, n_folds)),
            np.zeros((n_points, n_folds)),
        )
        # points sharing a graph setting one after the other: each graph is built once; and
        # within it those sharing a kernel: the exact solvers reuse K(X, X) between them, the
        # Nyström steps their column blocks (and the folds' subgraphs are built once)
        order = sorted(
            range(n_points),
            key=lambda p: (repr(_graph_key(evaluator, points[p])), kernel_key_of(points[p])),
        )
        with reusing_kernel_matrices(), reusing_step_blocks():
            self._evaluate_points(evaluator, points, folds, marker, order, seed, out)
        return FoldResults(*out, [])

    def _evaluate_points(self, evaluator, points, folds, marker, order, seed, out):
        X, y = evaluator.X, evaluator.y
        scores, fit_times, score_times = out
        n_folds = len(folds)
        rows = np.arange(X.shape[0])
        n_labeled = int(labeled_mask(y, marker).sum())
        keep_factor = wants_factor(
            self.hessian, self.step, X.shape[0], folds, evaluator.estimator, n_labeled
        )
        for p in progress(order, desc=type(self).__name__, verbose=self.verbose, unit="point"):
            point, graph_key = points[p], _graph_key(evaluator, points[p])
            candidate = clone(evaluator.estimator).set_params(**point)
            try:
                tic = time.perf_counter()
                est, state, factor = fit_keeping_state(
                    candidate,
                    X,
                    y,
                    fit=lambda e, point=point, key=graph_key: evaluator._fit(
                        e, point, X, y, rows, _ALL_ROWS, key
                    ),
                    keep_factor=keep_factor,
                )
                fit_seconds = time.perf_counter() - tic
                tic = time.perf_counter()
                pairs = approximate_folds(
                    est,
                    state,
                    X,
                    y,
                    folds,
                    marker,
                    self.hessian,
                    self.step,
                    self.n_columns,
                    seed,
                    evaluator.laplacian,
                    evaluator._graphs.get((_ALL_ROWS, graph_key)),
                    max_newton_steps=self.max_newton_steps,
                    factor=factor,
                )
                scores[p] = fold_scores(est, y, pairs, self._score, marker)
                score_seconds = time.perf_counter() - tic
            except Exception as exc:
                if self.error_score == "raise":
                    raise
                warnings.warn(
                    f"{type(self).__name__}: point {point!r} failed ({type(exc).__name__}: "
                    f"{exc}); its scores are set to error_score={self.error_score!r}",
                    FitFailedWarning,
                    stacklevel=2,
                )
                scores[p], fit_seconds, score_seconds = self.error_score, 0.0, 0.0
            fit_times[p] = fit_seconds / n_folds
            score_times[p] = score_seconds / n_folds
            if _as_level(self.verbose) >= 2:  # the parameter only, as SSLGridSearchCV's lines
                log(
                    f"[{type(self).__name__}] {point!r}: mean score {np.mean(scores[p]):.4g} "
                    f"(fit {fit_seconds:.3f} s, {n_folds} folds {score_seconds:.3f} s)",
                    self.verbose,
                    level=2,
                )


def _graph_key(evaluator, point):
    return _freeze(graph_params_of(point)) if evaluator.reuse else ()
