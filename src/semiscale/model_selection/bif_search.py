"""Grid search scored by approximate CV (paper 004's t-BIF): one fit per grid point.

:class:`BIFSearchCV` is :class:`~semiscale.model_selection.SSLGridSearchCV` (same grid checks,
graph reuse, ``cv_results_`` layout, refit and delegation) whose folds are not refitted: each
grid point is fitted once on all the data and every fold's held-out predictions come from
:mod:`semiscale.model_selection.bif`.  ``method="exact"`` runs the same search with exact CV,
the reference the approximation is measured against (``semiscale-bench paper004``).

A ``Pipeline`` whose last step is such an estimator is searched by fitting the steps before it
once per setting of theirs (on all rows, without labels) and expanding the last step's fit on
the transformed points.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.exceptions import FitFailedWarning

from .._progress import _as_level, log, progress
from .._random import check_random_state
from .._validation import check_X
from ..solvers.exact import reusing_kernel_matrices
from ..solvers.influence import reusing_step_blocks
from ._evaluate import (
    _ALL_ROWS,
    Evaluator,
    FoldResults,
    _freeze,
    graph_params_of,
    kernel_key_of,
)
from ._fold_objectives import check_folds
from ._markers import labeled_mask
from ._pipelines import check_unsupervised, fit_transform_steps, is_pipeline, split_pipeline
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
from .search import SSLGridSearchCV, template_for

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
        Nyström variants), or a scikit-learn ``Pipeline`` whose last step is one
        (``make_pipeline(StandardScaler(), LapRLSClassifier())``).  The steps before the last
        are fitted on all rows, labeled and unlabeled, without the labels: they must be
        unsupervised transforms (a scaler, a projection), which is legitimate in
        semi-supervised learning -- the unlabeled points are training data, and no held-out
        label reaches the transform.  A step that needs ``y`` is refused before any fit.  The
        approximate CV expands the last step's fit on the transformed points; a grid point
        that sets a parameter of an earlier step (``"standardscaler__with_std"``) refits the
        earlier steps for its setting, once per setting.
    param_grid : dict or list of dicts
        As :class:`~semiscale.model_selection.SSLGridSearchCV`: kernel width
        (``kernel__gamma``), ``ambient_reg``, ``intrinsic_reg``, ``graph__n_neighbors``,
        ``graph__bandwidth``, ...  Every point is checked before anything is fitted.
    cv : int, SSLKFold or None, default=5
        The folds approximated (an int: ``SSLKFold(cv, shuffle=False)``, transductive); paper
        004's are inductive, ``SSLKFold(t, transductive=False)``.
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
    n_jobs : int or None, default=None
        ``method="exact"``: fits in parallel, as
        :class:`~semiscale.model_selection.SSLGridSearchCV`.  ``method="bif"`` evaluates the
        grid points one after the other (consecutive points share the kernel matrix, the
        Nyström column blocks and the folds' subgraphs); the estimator's own ``n_jobs``
        parallelises inside each fit.

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
        n_jobs=None,
    ):
        super().__init__(
            estimator,
            param_grid,
            cv=cv,
            scoring=scoring,
            refit=refit,
            verbose=verbose,
            error_score=error_score,
            n_jobs=n_jobs,
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
                candidate = clone(template).set_params(**point)
                if is_pipeline(candidate):
                    before, (_, candidate) = split_pipeline(candidate)
                    check_unsupervised(before, type(self).__name__)
                _check_estimator(candidate)
            except TypeError as exc:
                raise TypeError(f"param_grid point {index} {point!r}: {exc}") from None
        self._score = score_function(self.scoring, is_classifier(template))

    def _evaluate(self, evaluator, points, folds, marker):
        if self.method == "exact":
            return super()._evaluate(evaluator, points, folds, marker)
        # one draw of the Nyström columns for every grid point: their scores stay comparable
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        n_points, n_folds = len(points), len(folds)
        out = (
            np.full((n_points, n_folds), np.nan),
            np.zeros((n_points, n_folds)),
            np.zeros((n_points, n_folds)),
        )
        if is_pipeline(evaluator.estimator):
            self._evaluate_pipeline(evaluator, points, folds, marker, seed, out)
        else:
            self._evaluate_bif(evaluator, evaluator, points, folds, marker, seed, out)
        return FoldResults(*out, [])

    def _evaluate_pipeline(self, evaluator, points, folds, marker, seed, out):
        """The BIF of the last step on ``X`` transformed by the earlier steps, fitted once per
        setting of theirs; each point's group is kept on ``evaluator`` for the refit
        (:meth:`_refit_best`), which lives as long as the search's ``fit``."""
        owner = type(self).__name__
        last = evaluator.estimator.steps[-1][0]
        prefix = last + "__"
        groups = {}
        for p, point in enumerate(points):
            before = {k: v for k, v in point.items() if not k.startswith(prefix)}
            groups.setdefault(_freeze(before), (before, []))[1].append(p)
        evaluator.pipeline_groups = {}
        for before, point_ids in groups.values():
            pipeline = clone(evaluator.estimator).set_params(**before)
            steps, (_, final) = split_pipeline(pipeline)
            try:
                X_t = check_X(fit_transform_steps(steps, evaluator.X, owner))
            except Exception as exc:  # every point of the setting fails with this cause
                if evaluator.error_score == "raise":
                    raise
                evaluator.n_attempts += len(point_ids)
                evaluator.failures.extend([exc] * len(point_ids))
                warnings.warn(
                    f"{owner}: the steps before the last, set to {before!r}, failed "
                    f"({type(exc).__name__}: {exc}); the scores of their {len(point_ids)} "
                    f"points are set to error_score={evaluator.error_score!r}",
                    FitFailedWarning,
                    stacklevel=3,
                )
                out[0][point_ids] = evaluator.error_score
                continue
            final_points = [
                {k[len(prefix) :]: v for k, v in points[p].items() if k.startswith(prefix)}
                for p in point_ids
            ]
            group = Evaluator(
                template_for(final, final_points, evaluator.laplacian),
                X_t,
                evaluator.y,
                laplacian=evaluator.laplacian,
                error_score=evaluator.error_score,
                verbose=evaluator.verbose,
                name=owner,
                default_marker=evaluator.default_marker,
            )
            sub = tuple(np.full((len(point_ids), len(folds)), np.nan) for _ in out)
            self._evaluate_bif(group, evaluator, final_points, folds, marker, seed, sub)
            for target, part in zip(out, sub):
                target[point_ids] = part
            evaluator.n_graph_fits += group.n_graph_fits
            evaluator.graph_time += group.graph_time
            for p, final_point in zip(point_ids, final_points):
                evaluator.pipeline_groups[p] = (pipeline, group, final_point)

    def _refit_best(self, evaluator):
        groups = getattr(evaluator, "pipeline_groups", None)
        if groups is None:
            return super()._refit_best(evaluator)
        pipeline, group, final_point = groups[self.best_index_]
        n_graphs, seconds = group.n_graph_fits, group.graph_time
        final, graph = group.refit(final_point)
        evaluator.n_graph_fits += group.n_graph_fits - n_graphs
        evaluator.graph_time += group.graph_time - seconds
        # the earlier steps are the group's, fitted on all rows; the last is the refitted one
        pipeline.steps[-1] = (pipeline.steps[-1][0], final)
        return pipeline, graph

    def _evaluate_bif(self, evaluator, record, points, folds, marker, seed, out):
        """Fit each point once on ``evaluator``'s data and approximate its folds; failures are
        recorded on ``record`` (the search's evaluator)."""
        X, y = evaluator.X, evaluator.y
        check_folds(evaluator.estimator, X, y, folds, marker, self.hessian, evaluator.laplacian)
        n_points = len(points)
        record.n_attempts += n_points
        # points sharing a graph setting one after the other: each graph is built once; and
        # within it those sharing a kernel: the exact solvers reuse K(X, X) between them, the
        # Nyström steps their column blocks (and the folds' subgraphs are built once)
        order = sorted(
            range(n_points),
            key=lambda p: (repr(_graph_key(evaluator, points[p])), kernel_key_of(points[p])),
        )
        with reusing_kernel_matrices(), reusing_step_blocks():
            self._evaluate_points(evaluator, record, points, folds, marker, order, seed, out)

    def _evaluate_points(self, evaluator, record, points, folds, marker, order, seed, out):
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
                record.failures.append(exc)
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
