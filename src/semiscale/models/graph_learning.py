r"""Label propagation on the graph: Laplace learning (harmonic functions) and Poisson learning.

This module holds the two estimators' shared fit path (validation, graph, unreached
components, the choice of the CG preconditioner, the extension to new points);
:mod:`semiscale.models.harmonic` and :mod:`semiscale.models.poisson` hold the two estimators,
and :mod:`semiscale.solvers.graph_learning` their mathematics.  Both solve one sparse linear
system in the graph Laplacian ``L`` of all training points, labeled and unlabeled, with one
column per class (the last one inferred), by conjugate gradient (:func:`semiscale.solvers.cg`,
every product ``L·V`` by the array-operations layer) preconditioned by one
algebraic-multigrid V-cycle (:mod:`semiscale.solvers.amg`) or by the diagonal (``solver``):
O(nnz(L)·C) per iteration, no kernel.

- **Laplace learning** (Zhu, Ghahramani & Lafferty, ICML 2003, "Gaussian fields and harmonic
  functions"): the class indicators ``F`` are harmonic on the unlabeled points and equal the
  one-hot labels ``Y_l`` on the labeled ones,

  .. math::  L_{uu} F_u = -L_{ul} Y_l ,

  and *class mass normalization* (CMN) rescales class ``c`` by ``q_c / Σ_u F_{uc}`` (its prior
  over its mass) before the arg max.
- **Poisson learning** (Calder, Cook, Thorpe & Slepčev, ICML 2020): the labels are sources and
  sinks, ``y_j − ȳ`` at each labeled point (``ȳ`` the mean one-hot label), and

  .. math::  L U = \sum_j (y_j - \bar y)\, \delta_{x_j}^\top, \qquad \sum_i d_i U_{ic} = 0,

  then *mass balancing* multiplies class ``c`` by ``b_c / ȳ_c`` (its prior over its share of the
  labels) before the arg max.

Points in a connected component without any labeled point cannot be reached by either method:
they get the class prior as scores (so the most probable class; the most frequent labeled one by
default) and a :class:`~semiscale.graph.DisconnectedGraphWarning` saying how many they are.

``predict(X_new)`` extends the graph to the new points (a harmonic extension): a new point's
scores are the heat-weighted average of the scores of its ``k`` nearest training points, with
the fitted graph's ``k`` and bandwidth.

``predict_proba`` maps the scores to probabilities, row by row, by each method's rule (Laplace
learning's scores are already class distributions, renormalized after CMN; Poisson learning's
go through a softmax at a temperature fixed in ``fit``, but where a row's scores are set rather
than solved); ``predict`` and ``transduction_`` are the arg max of those probabilities, so the
three always agree.
"""

from __future__ import annotations

import time
import warnings
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._memory import check_fits
from .._progress import log
from .._random import RANDOM_STATE_CONSTRAINT
from .._validation import check_classification_targets, validate_X
from ..graph import DisconnectedGraphWarning
from ..solvers.graph_learning import component_labels, graph_cg
from ._base import (
    UNLABELED_CONSTRAINT,
    FitContract,
    GraphOwnerMixin,
    SSLClassifierMixin,
    _check_fit_laplacian,
    _check_y_given,
    _column_or_1d_labels,
)
from ._extension import extend, neighbor_weighting

__all__ = ["GRAPH_LEARNING_PARAMETER_CONSTRAINTS"]

GRAPH_LEARNING_PARAMETER_CONSTRAINTS = {
    "graph": [HasMethods(["fit"]), None],
    "class_prior": [StrOptions({"uniform"}), "array-like", None],
    "solver": [StrOptions({"auto", "cg", "amg"})],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 0, None, closed="left"), None],
    "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
    "random_state": RANDOM_STATE_CONSTRAINT,
    "n_jobs": [Integral, None],
    "verbose": ["verbose"],
    **UNLABELED_CONSTRAINT,
}


#: ``solver="auto"`` uses AMG-preconditioned CG from this many unknowns on.  Chosen by
#: measurement, solve seconds at tol=1e-6: up to 10,000 points (usps, mnist test, two moons)
#: Jacobi 0.07–0.18 s against AMG's 0.13–0.26 s; letter's 15,000 points 0.75–4.07 s against
#: 1.04–1.45 s; 100,000 two-moons points 25.9 s (15,836 iterations) against 2.8 s (101); see
#: ``benchmarks/results/graph_solvers/``.
AMG_MIN_SIZE = 50_000


#: CG iteration cap of the AMG-preconditioned solve when ``max_iter`` is None (GraphLearning's
#: Poisson learning caps at 1,000 too; without a cap a stalled solve would run 10·n iterations).
#: Chosen by measurement: Poisson learning on 1,000,000 two-moons points takes 37–90 iterations
#: at tol=1e-3 (ten draws), see ``benchmarks/results/million_moons/``.
AMG_MAX_ITER = 1000


class _GraphLearningClassifier(
    SSLClassifierMixin, GraphOwnerMixin, BaseEstimator, metaclass=ABCMeta
):
    """Shared fit path: validate → graph → components → the subclass's solve → fallback → store.

    Subclasses implement ``_solve_scores(L, targets, components, reached, prior)`` returning the
    scores of every training point (rows of unreached points are overwritten) and set
    ``class_scale_``, and ``_proba_from_scores(scores)``, their map from scores to class
    probabilities (row by row, keeping each row's arg max); ``_fit_proba(scores, labeled)`` may
    fix that map's parameters from the training scores, and ``_training_proba(scores)`` /
    ``_new_proba(X)`` may replace the map on the training points / new points (Poisson
    learning: rows whose scores are set rather than solved).
    """

    _parameter_constraints: dict = dict(GRAPH_LEARNING_PARAMETER_CONSTRAINTS)

    #: Label of the solver in progress bars and messages.
    _method = ""
    _fit_contract = FitContract(fit_path="label-propagation", expansion=None, n_jobs=True)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------------------ fit
    def _class_prior(self, targets):
        n_classes = targets.classes.shape[0]
        counts = np.bincount(targets.codes[targets.labeled], minlength=n_classes)
        if self.class_prior is None:
            return counts / counts.sum()
        if isinstance(self.class_prior, str):  # "uniform"
            return np.full(n_classes, 1.0 / n_classes)
        prior = np.asarray(self.class_prior, dtype=np.float64)
        if prior.shape != (n_classes,) or not np.all(np.isfinite(prior)) or np.any(prior <= 0):
            raise ValueError(
                f"class_prior must hold one positive number per class, in the order of classes_ "
                f"({targets.classes.tolist()}); got {self.class_prior!r}"
            )
        return prior / prior.sum()

    # prefer_skip_nested_validation=False: the graph fitted inside checks its own parameters.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, laplacian=None):
        """Propagate the labels over the graph of all training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            All training points, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Labels; ``unlabeled`` (default -1) marks an unlabeled point.
        laplacian : sparse matrix of shape (n_samples, n_samples), optional
            A precomputed graph Laplacian on ``X`` (in the same order) to reuse; when given,
            ``graph`` is ignored.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        self.classes_ = targets.classes
        prior = self._class_prior(targets)
        n, n_classes = X.shape[0], targets.classes.shape[0]
        # before the graph, as every estimator checks its own arrays: a budget that cannot hold
        # the solve is refused before any work is done
        check_fits(
            {f"the solver's {n}x{n_classes} arrays (CG's six, of float64)": 6 * 8 * n * n_classes},
            self.memory_budget,
            what=f"{type(self).__name__} on {n} points",
        )

        tic = time.perf_counter()
        if laplacian is not None:
            L = _check_fit_laplacian(laplacian, X.shape[0])
            self.graph_ = None
        else:
            self.graph_ = self._graph_to_fit().fit(X)
            L = sp.csr_matrix(self.graph_.laplacian_, dtype=np.float64)
        timings = {"graph": time.perf_counter() - tic}

        tic = time.perf_counter()
        components = component_labels(L, self.graph_)
        has_label = np.zeros(components.max() + 1, dtype=bool)
        has_label[components[targets.labeled]] = True
        reached = has_label[components]
        self.solver_ = None
        scores, result = self._solve_scores(L, targets, components, reached, prior)
        n_unreached = int(np.count_nonzero(~reached))
        if n_unreached:
            scores[~reached] = prior
            fallback = self.classes_[np.argmax(prior)]
            warnings.warn(
                f"{n_unreached} of {X.shape[0]} training points lie in "
                f"{np.unique(components[~reached]).size} connected component(s) of the graph "
                f"without a labeled point: labels cannot reach them, so they get the class prior "
                f"as scores (class {fallback!r}). Raise the graph's n_neighbors, or label a point "
                "of each component",
                DisconnectedGraphWarning,
                stacklevel=3,
            )
        timings["solve"] = time.perf_counter() - tic

        self.class_prior_ = prior
        self._fit_proba(scores, targets.labeled)
        proba = self._training_proba(scores)
        # the labeled points keep their labels; the unreached ones the prior (exactly, where
        # the map would change it: Poisson's softmax), which keeps the arg max
        proba[targets.labeled] = 0.0
        proba[targets.labeled, targets.codes[targets.labeled]] = 1.0
        proba[~reached & ~targets.labeled] = prior
        self.scores_ = scores
        self.transduction_proba_ = proba
        self.transduction_ = self.classes_[np.argmax(proba, axis=1)]
        self.n_labeled_ = targets.n_labeled
        self.n_unreached_ = n_unreached
        self.n_iter_ = 0 if result is None else int(result.n_iter)
        self.residuals_ = None if result is None else result.residuals
        self.X_fit_ = X
        graph = self.graph_ if self.graph_ is not None else self.graph
        self.extension_ = neighbor_weighting(graph, self.graph_, X.shape[0])
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        log(
            f"[{type(self).__name__}] n={X.shape[0]} labeled={self.n_labeled_} "
            f"classes={self.classes_.shape[0]}: {self.n_iter_} CG iterations, graph "
            f"{timings['graph']:.3f}s, solve {timings['solve']:.3f}s",
            self.verbose,
        )
        return self

    def _fit_proba(self, scores, labeled):
        """Fix the parameters of :meth:`_proba_from_scores` from the training scores (none);
        ``labeled`` marks the labeled rows."""

    def _training_proba(self, scores):
        """Class probabilities of the training points from their scores (before the labeled
        and unreached rows are set)."""
        return self._proba_from_scores(scores)

    def _new_proba(self, X):
        """Class probabilities of new points (validated by :meth:`_extend`)."""
        return self._proba_from_scores(self._extend(X))

    @abstractmethod
    def _proba_from_scores(self, scores):
        """Class probabilities of each row of ``scores`` (a new array; each subclass's rule)."""

    def _resolve_solver(self, size):
        if self.solver == "auto":
            return "amg" if size >= AMG_MIN_SIZE else "cg"
        return self.solver

    def _cg(self, A, B):
        """Preconditioned CG on ``A X = B`` (one recurrence per class column).

        The preconditioner is one smoothed-aggregation AMG V-cycle (:class:`~semiscale.solvers.amg.
        AMGPreconditioner`) or ``diag(A)⁻¹`` (Jacobi), by ``solver``; ``solver_`` records it
        (:func:`~semiscale.solvers.graph_learning.graph_cg`).
        """
        self.solver_ = self._resolve_solver(A.shape[0])
        result = graph_cg(
            A,
            B,
            preconditioner=self.solver_,
            tol=self.tol,
            max_iter=(
                AMG_MAX_ITER if self.max_iter is None and self.solver_ == "amg" else self.max_iter
            ),
            verbose=self.verbose,
            desc=f"CG ({self._method})",
        )
        if not result.converged:
            warnings.warn(
                f"{type(self).__name__}: CG stopped after {result.n_iter} iterations at a "
                f"relative residual of {result.residuals[-1].max():.2e} (tol={self.tol:g}); "
                "raise max_iter, or tol",
                ConvergenceWarning,
                stacklevel=5,  # past _cg, the solvers.graph_learning function, _solve_scores, fit
            )
        return result

    # ------------------------------------------------------------------------ predict
    def _extend(self, X, values=None):
        """Scores of new points: the heat-weighted mean of their k nearest training points'.

        ``values`` (one row per training point) replaces ``scores_`` as what is averaged.
        """
        check_is_fitted(self, "scores_")
        X = validate_X(self, X, reset=False)
        rule = {
            **self.extension_,
            "X": self.X_fit_,
            "scores": self.scores_ if values is None else values,
            "local_scale": getattr(self.graph_, "local_scale_", None),
        }
        return extend(rule, X, self.memory_budget, self.n_jobs, keep_fitted=False)

    def decision_function(self, X):
        """Class scores of new points, by extending the graph to them.

        A new point's scores are the weighted mean of the scores (``scores_``) of its ``k``
        nearest training points, with heat weights ``exp(−d²/(2σ²))`` of the fitted graph's
        bandwidth, or a self-tuning graph's ``exp(−d²/(σ_x σ_j))`` with its local scales
        (``extension_``).  On a training point this averages its own score with its
        neighbours'; ``transduction_`` holds the fitted labels of the training points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_classes)
            One column per class; for two classes the difference ``classes_[1]`` minus
            ``classes_[0]`` (positive means ``classes_[1]``).
        """
        scores = self._extend(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict_proba(self, X):
        """Class probabilities of new points, from the scores the graph extends to them.

        The scores of :meth:`decision_function` (one column per class) go through the
        estimator's map to probabilities, row by row (see the class's ``transduction_proba_``);
        the map keeps each row's arg max.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_classes)
            Non-negative rows summing to 1, columns in the order of ``classes_``.
        """
        return self._new_proba(X)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (``-inf`` where a probability is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Class labels of new points: the arg max of :meth:`predict_proba`.

        The map from scores to probabilities keeps each row's arg max (but in the degenerate
        rows each estimator's ``transduction_proba_`` names), so this is also the arg max of
        the class scores of :meth:`decision_function`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        proba = self.predict_proba(X)  # first: it raises NotFittedError before fit
        return self.classes_[np.argmax(proba, axis=1)]
