"""Shared machinery of the least-squares manifold-regularization estimators.

Every estimator here is *graph + kernel + solver*: ``fit`` validates the input, resolves the kernel
(data-dependent bandwidths), builds or accepts the graph Laplacian, and hands a small problem
description to the estimator's solver; the learned function is the kernel expansion

.. math::  f(x) = \\sum_{j} \\alpha_j\\, k(x_j, x)

(+ ``intercept_`` when a bias is fitted) over ``X_fit_`` (all training points for exact LapRLS,
the labeled ones for RLS, the Nyström centers for Nyström LapRLS).  The fit path is the same for
every estimator — validate → graph (or a given Laplacian) → fit the kernel → assemble a
:class:`~semiscale.solvers.problem.ManifoldProblem` (loss, bias and target columns are data) →
solve → store — and subclasses implement :meth:`_solve` only, usually as
``solve_manifold(problem, <their quadratic solver>)``.

What the path reads of an estimator beyond its common parameters is declared once per class,
in its ``_fit_contract`` (:class:`~semiscale.models._contract.FitContract`: an intercept, early
stopping, centring, class-balanced targets, the graph extension, a memory budget, threads):
an optional parameter is read where it is declared, never probed for.  How the raw fit becomes
the decision (targets, centring, labeled prior) is :func:`~semiscale.models._contract.fit_rules`
of that declaration and the parameters, kept in the fit state approximate CV repeats.
"""

from __future__ import annotations

import inspect
import time
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.validation import check_is_fitted

from .._random import as_random_state
from .._validation import (
    check_classification_targets,
    check_laplacian,
    check_regression_targets,
    check_X,
    label_array,
    unlabeled_rows,
    validate_X,
)
from ..graph._graph import KERNEL_ONLY, warn_unreached
from ..linalg.ops import use_ops
from ..scaling import solver_lambdas
from ..solvers.problem import ManifoldProblem, Solution
from ._contract import FitContract, fit_rules, labels_from_decision
from ._dask_placement import dask_ops_for, dask_placement
from ._defaults import (  # noqa: F401 - re-exported: the estimators import them from here
    AUTO_INTRINSIC_REG_CONSTRAINT,
    AUTO_INTRINSIC_REG_FACTOR,
    BALANCED_TARGETS_CONSTRAINT,
    DEFAULT_CLASSIFIER_KERNEL,
    DEFAULT_GRAPH,
    DEFAULT_KERNEL,
    EARLY_STOPPING_CONSTRAINTS,
    EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR,
    KERNEL_CONSTRAINT,
    MANIFOLD_PARAMETER_CONSTRAINTS,
    OUT_OF_SAMPLE_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    _is_shared_default,
    auto_intrinsic_reg,
    default_graph,
    default_kernel,
    kernel_reading_marker,
    kernel_to_fit,
)
from ._extension import extend, extension_rule
from ._fit_state import FitState, centring_offset, labeled_prior

__all__ = [
    "DEFAULT_CLASSIFIER_KERNEL",
    "DEFAULT_GRAPH",
    "DEFAULT_KERNEL",
    "FitContract",
    "FitState",
    "GraphOwnerMixin",
    "ManifoldMixin",
    "ManifoldProblem",
    "SSLClassifierMixin",
    "SSLRegressorMixin",
    "Solution",
    "centring_offset",
    "default_graph",
    "default_kernel",
    "labeled_prior",
]


def _check_fit_laplacian(laplacian, n_samples):
    shape = getattr(laplacian, "shape", None)
    if shape is not None and len(shape) == 2 and shape[0] == n_samples and shape[1] != n_samples:
        raise ValueError(
            f"laplacian has shape {shape} for {n_samples} samples: it looks like a Laplacian of "
            "the whole data set whose rows were subset (scikit-learn's GridSearchCV and "
            "cross_val_score slice fit parameters by rows). Pass the graph as "
            "graph=semiscale.graph.PrecomputedGraph(L, X_all), which subsets it consistently, "
            "or search with semiscale.model_selection.SSLGridSearchCV(...).fit(X, y, laplacian=L)"
        )
    return check_laplacian(laplacian, n_samples)


class GraphOwnerMixin:
    """What every estimator that fits its own graph shares: protection of the shared default
    objects in ``set_params``, and the copy of ``graph`` it fits (:meth:`_graph_to_fit`).

    Every concrete estimator declares ``_fit_contract`` (:class:`FitContract`).
    """

    def set_params(self, **params):
        # The defaults of `kernel` and `graph` are objects shared by every instance (so that
        # nested parameters such as graph__n_neighbors work in any search): a nested update of a
        # parameter holding (or being given) that shared default edits a private copy instead,
        # and one of a parameter set to None (documented as "the default") edits a fresh default.
        defaults = inspect.signature(type(self).__init__).parameters
        params = dict(params)
        nested_names = {key.partition("__")[0] for key in params if "__" in key}
        for name in nested_names & set(defaults):
            default = defaults[name].default
            target = params[name] if name in params else getattr(self, name, None)
            if target is None and default is not None and default is not inspect.Parameter.empty:
                target = clone(default)
            elif target is not None and (target is default or _is_shared_default(target)):
                target = clone(target)
            else:
                continue
            if name in params:
                params[name] = target
            else:
                setattr(self, name, target)
        return super().set_params(**params)

    #: Parameters a graph leaves at None that it takes from the estimator which fits it (those
    #: of them the estimator's contract declares; every estimator has ``random_state``).
    _GRAPH_INHERITS = ("memory_budget", "n_jobs", "random_state")
    #: The graph used when ``graph=None`` (a copy of it).
    _default_graph = DEFAULT_GRAPH

    def _graph_to_fit(self):
        """A fresh copy of ``graph`` (of ``_default_graph`` for None) to fit in this estimator.

        Where the graph leaves ``memory_budget``, ``n_jobs`` or ``random_state`` at None (its
        default) and the estimator sets them, the copy gets the estimator's values, so that a
        budget given to the estimator bounds its graph search too and its seed makes an
        approximate graph reproducible.  The user's ``graph`` is not modified.
        """
        graph = clone(self.graph if self.graph is not None else self._default_graph)
        own = graph.get_params(deep=False)
        contract = self._fit_contract
        declared = {"memory_budget": contract.memory_budget, "n_jobs": contract.n_jobs}
        inherited = {
            name: getattr(self, name)  # a declared parameter of the estimator
            for name in self._GRAPH_INHERITS
            if declared.get(name, True)
            and name in own
            and own[name] is None
            and getattr(self, name) is not None
        }
        return graph.set_params(**inherited) if inherited else graph


class ManifoldMixin(GraphOwnerMixin):
    """The loss-agnostic fit path of every manifold-regularization estimator.

    Subclasses define ``_solve(problem: ManifoldProblem) -> Solution``,
    ``_parameter_constraints`` (scikit-learn's declarative validation, which ``fit`` checks
    first: :data:`MANIFOLD_PARAMETER_CONSTRAINTS` plus their own parameters) and
    ``_fit_contract`` (:class:`FitContract`, ``fit_path="manifold"``: which optional parameters
    the path reads), and may set ``_loss`` (a :mod:`semiscale.losses` name or object; default
    squared) or override ``_problem_loss`` and ``_check_before_graph``.  ``fit`` records
    ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame) with scikit-learn's
    ``validate_data``; ``predict``, ``decision_function`` and ``score`` check ``X`` against
    them.
    """

    _loss = "squared"
    #: The kernel used when ``kernel=None`` (a copy of it).
    _default_kernel = DEFAULT_KERNEL
    #: ``c`` of ``intrinsic_reg="auto"`` = ``c · (n / l)²`` (:func:`auto_intrinsic_reg`).
    _auto_intrinsic_factor = AUTO_INTRINSIC_REG_FACTOR
    #: The classifiers' model switches (:class:`SSLClassifierMixin`, which turns them on);
    #: a regressor fits its targets as they are and never centres or adds a prior.
    _zero_mean_targets = False
    _centre_decision = False
    _prior_decision = False
    #: Set on an instance before ``fit`` to keep a :class:`FitState` in ``_fit_state_`` (what
    #: approximate CV expands; :mod:`semiscale.model_selection.bif`).
    _keep_fit_state = False

    def _check_before_graph(self, n_samples: int, n_labeled: int) -> None:
        """Refuse, before the graph is built, what the solve would refuse after it (a hook)."""

    def _problem_loss(self):
        return self._loss

    def _resolve_intrinsic_reg(self, n_samples: int, n_labeled: int) -> float:
        """``intrinsic_reg`` as a number (``"auto"`` resolved by :func:`auto_intrinsic_reg`)."""
        return fit_rules(self).resolve_intrinsic_reg(n_samples, n_labeled)

    def _fit_problem(self, X, Y, labeled, laplacian, y=None):
        """Graph, kernel, scaled regularizers, the problem, the solver; store the results.

        The parameters were validated by ``fit`` (``_parameter_constraints``).  An estimator
        declaring ``dask`` fits a dask ``X`` (or a NumPy ``X`` under a ``DaskOps`` context)
        on the Dask workers (:mod:`._dask_placement`).
        """
        ops, X = dask_placement(self, X)
        if ops is None:
            return self._fit_problem_here(X, Y, labeled, laplacian, y)
        with use_ops(ops):
            return self._fit_problem_here(X, Y, labeled, laplacian, y)

    def _fit_problem_here(self, X, Y, labeled, laplacian, y=None):
        contract = self._fit_contract
        rules = fit_rules(self)
        fit_intercept = contract.fit_intercept and bool(self.fit_intercept)
        memory_budget = self.memory_budget if contract.memory_budget else None
        start = time.perf_counter()
        timings = {}
        n_labeled = int(labeled.sum())
        # One object for every consumer: a Generator becomes a RandomState on its bit generator.
        random_state = as_random_state(self.random_state)

        intrinsic_reg = rules.resolve_intrinsic_reg(X.shape[0], n_labeled)
        self.intrinsic_reg_ = intrinsic_reg
        self._check_before_graph(X.shape[0], n_labeled)
        L = None
        trace = 0.0
        tic = time.perf_counter()
        if laplacian is not None:
            L = _check_fit_laplacian(laplacian, X.shape[0])
            self.graph_ = None
        elif intrinsic_reg > 0:
            self.graph_ = self._graph_to_fit().fit(X)
            L = self.graph_.laplacian_
        else:
            self.graph_ = None
        timings["graph"] = time.perf_counter() - tic
        if L is not None and intrinsic_reg > 0:  # stacklevel: past fit, _fit_context, _fit_problem
            warn_unreached(L, labeled, graph=self.graph_, consequence=KERNEL_ONLY, stacklevel=5)
        kernel = kernel_reading_marker(kernel_to_fit(self.kernel, self._default_kernel), self)
        self.kernel_ = kernel.fit(X, y, laplacian=L, random_state=random_state)
        if L is not None:
            trace = float(L.diagonal().sum())
        lambda_ambient, lambda_intrinsic = solver_lambdas(
            self.ambient_reg, intrinsic_reg, n_labeled, trace
        )
        # early stopping's sides are those of the centred decision (the weights only then)
        early_stopping = contract.early_stopping and bool(self.early_stopping)
        centred = rules.centres(lambda_intrinsic)
        problem = ManifoldProblem(
            X=X,
            targets=Y,
            labeled=labeled,
            laplacian=L if lambda_intrinsic > 0 else None,
            lambda_ambient=lambda_ambient,
            lambda_intrinsic=lambda_intrinsic,
            kernel=self.kernel_,
            loss=rules.loss,
            fit_intercept=fit_intercept,
            memory_budget=memory_budget,
            random_state=random_state,
            verbose=self.verbose,
            n_jobs=self.n_jobs if contract.n_jobs else None,
            stability_tol=self.stability_tol if early_stopping else None,
            stability_weights=L.diagonal() if early_stopping and centred else None,
        )
        tic = time.perf_counter()
        solution = self._solve(problem)
        timings["solve"] = time.perf_counter() - tic

        self.X_fit_ = _in_input_dtype(solution.X_fit, X)
        self.dual_coef_ = np.asarray(solution.dual_coef).reshape(np.shape(solution.X_fit)[0], -1)
        r = self.dual_coef_.shape[1]
        self.intercept_ = (
            np.zeros(r) if solution.intercept is None else np.asarray(solution.intercept)
        )
        self.n_iter_ = solution.n_iter
        self.residuals_ = solution.residuals
        self.laplacian_trace_ = trace
        self.n_labeled_ = n_labeled
        self.solver_info_ = solution.info
        if solution.train_decision is not None:
            train_decision = np.asarray(solution.train_decision).reshape(X.shape[0], -1)
        else:
            train_decision = self._raw_decision(X)
        if self._keep_fit_state:
            # References and one (n, r) copy: what approximate CV (model_selection.bif) reads.
            self._fit_state_ = FitState(problem, train_decision.copy(), solution, rules)
        if centred:
            # the shift moves into intercept_ so that decision_function and predict give the
            # same values on the training points
            offset = centring_offset(train_decision, L)
            train_decision = train_decision - offset
            self.intercept_ = self.intercept_ - offset
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        return train_decision

    def _compute_dtype(self) -> np.dtype:
        """The dtype the solver evaluated the kernel in (float64: the exact solvers' reference)."""
        return np.dtype(np.float64)

    def _raw_decision(self, X):
        from ..linalg.blocked import kernel_matmul

        budget = self.memory_budget if self._fit_contract.memory_budget else None
        if X.dtype != self._compute_dtype() and self.X_fit_.dtype != self._compute_dtype():
            # float32 points of a float64 fit: the kernel in the fit's precision, as the fit
            # (a kernel block is in float64 when either operand is, _pairs.result_dtype)
            X = X.astype(self._compute_dtype())
        n_jobs = self.n_jobs if self._fit_contract.n_jobs else None
        with dask_ops_for(X):  # a dask X: its chunks' products on the workers
            decision = kernel_matmul(self.kernel_, X, self.X_fit_, self.dual_coef_, budget, n_jobs)
        if np.any(self.intercept_):
            decision = decision + self.intercept_
        return decision

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def _check_predict_X(self, X):
        """``X`` checked against the features seen in ``fit`` (their number, names and order)."""
        check_is_fitted(self, "dual_coef_")
        return validate_X(self, X, reset=False)


def _in_input_dtype(X_fit, X):
    """The expansion points in the training data's dtype.

    The exact solvers compute in float64, so a float32 ``X`` reaches them as a float64 copy
    (and the Nyström ones in ``kernel_dtype``); keeping that copy in ``X_fit_`` would hold the
    expansion at twice the memory of its data.  Casting back is exact (every float32 is a
    float64), and ``_raw_decision`` evaluates the kernel in the fit's dtype again.
    """
    if X.dtype == np.float32 and X_fit.dtype == np.float64:
        return X_fit.astype(np.float32)
    return X_fit


def _unlabeled_rows(y, unlabeled):
    """Boolean mask of the rows of a classifier's ``y`` that carry the marker or no label."""
    return unlabeled_rows(y, unlabeled)


def _labeled_rows_of(X, keep):
    """Rows ``keep`` of any input ``fit`` accepts (pandas keeps its columns for ``predict``)."""
    if hasattr(X, "iloc"):
        return X.iloc[keep]
    return check_X(X)[keep]


def _check_y_given(estimator, y):
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )


def _column_or_1d_labels(y):
    """Labels as 1-D; a column vector is accepted with scikit-learn's DataConversionWarning.

    A list mixing numbers and strings stays an object array: ``np.asarray`` would turn every
    label into a string before ``check_classification_targets`` could refuse the mix.
    """
    y = label_array(y)  # a pandas Int64 column beside pd.NA stays integers
    if not hasattr(y, "dtype"):
        as_object = np.asarray(y, dtype=object)
        if len({isinstance(v, str) for v in as_object.ravel().tolist()}) == 2:
            y = as_object
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; y is ravelled.",
            DataConversionWarning,
            stacklevel=4,
        )
        y = y.ravel()
    if y.dtype.kind == "f" and y.ndim == 1:
        finite = y[np.isfinite(y)]
        if finite.size and np.any(finite != np.round(finite)):
            raise ValueError(
                "Unknown label type: continuous targets were passed to a classifier; use a "
                "regressor (e.g. LapRLSRegressor) for real-valued targets"
            )
    return y


class SSLClassifierMixin(ClassifierMixin):
    """Semi-supervised classification: ``y == unlabeled`` marks unlabeled points.

    With the squared loss, binary problems solve one least-squares problem and multiclass
    problems one column per class (a single factorization / Krylov run), on the zero-mean
    targets of :func:`~semiscale._validation.zero_mean_targets` (class-balanced ones,
    :func:`~semiscale._validation.balanced_targets`, with ``balanced_targets=True``); with a
    graph, every
    fitted column is then centred, ``Σ_i d_i f_c(x_i) = 0`` over the training points with
    ``d = diag(L)`` (Poisson learning's normalization), the shift being kept in ``intercept_``;
    with zero-mean targets the decision is then ``α f_c + ȳ_c`` (:meth:`_add_labeled_prior`).
    Other losses (a hinge-type ``_loss``) keep the ±1 one-vs-rest targets, centred only when
    the estimator's ``centring`` parameter is on (the LapSVMs' default).
    Both chosen by measurement (usps, 2,000 points): centring lifts LapRLS's large-weight limit
    from 68.1 / 83.8 % to Poisson learning's 77.9 / 87.5 % at 1 / 3 labels per class, and with
    unequal label counts balanced targets label 83.2 % right against 66.4 % for the best ±1
    coding; see ``benchmarks/results/few_label_laprls/``.
    """

    _default_kernel = DEFAULT_CLASSIFIER_KERNEL
    #: Fit zero-mean targets (squared loss; class-balanced with ``balanced_targets=True``);
    #: False: the ±1 one-vs-rest coding.
    _zero_mean_targets = True
    #: Centre the fitted columns by their diag(L)-weighted mean (squared loss, with a graph).
    _centre_decision = True
    #: Rescale the zero-mean fit to the labeled targets and add the labeled class proportions
    #: back (``decision_scale_``): the arg max then favours the frequent classes as the ±1
    #: coding does.  Chosen by measurement: a9a with 100 stratified labels, exact LapRLS 0.809
    #: with it against 0.725 without (no change at equal label counts); see
    #: ``benchmarks/results/defaults/``.
    _prior_decision = True

    # prefer_skip_nested_validation=False: the graph and kernel fitted inside check their own
    # parameters too.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, laplacian=None):
        """Fit on labeled + unlabeled points.

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
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        rules = fit_rules(self)
        Y = rules.encode_targets(targets)
        self.classes_ = targets.classes
        decision = self._fit_problem(X, Y, targets.labeled, laplacian, y=y)
        self.__dict__.pop("decision_scale_", None)  # from an earlier fit
        # (labeled_prior first: a fit without an intrinsic weight, SLapCVM's, adds none)
        if rules.labeled_prior and rules.adds_labeled_prior(self.intrinsic_reg_):
            decision = self._add_labeled_prior(decision, Y, targets, rules.plus_minus)
        self.transduction_ = self._labels_from_decision(decision)
        self.extension_ = self._extension_of(X, decision)
        return self

    def _extension_of(self, X, decision):
        """``out_of_sample="graph"`` with a graph term: the rule of :mod:`._extension`."""
        if not (self._fit_contract.out_of_sample and self.out_of_sample == "graph"):
            return None
        if not self.intrinsic_reg_ > 0:
            return None
        graph = self.graph_ if self.graph_ is not None else self.graph
        return extension_rule(graph, self.graph_, X, decision)

    def _new_decision(self, X):
        X = self._check_predict_X(X)
        if self.extension_ is None:
            return self._raw_decision(X)
        contract = self._fit_contract
        budget = self.memory_budget if contract.memory_budget else None
        return extend(self.extension_, X, budget, self.n_jobs if contract.n_jobs else None)

    def _add_labeled_prior(self, decision, Y, targets, plus_minus):
        r"""Map the zero-mean fit f to ``g_c = α f_c + ȳ_c``, kept in ``dual_coef_``/``intercept_``.

        ``ȳ`` are the labeled class proportions and ``α = ⟨F_l, Y_l⟩ / ⟨F_l, F_l⟩`` the
        least-squares scale of the fit on the labeled rows (one scalar for every column, 1
        when the fit does not correlate with the labels), so that ``g`` estimates the one-hot
        targets again and its arg max is the most probable class rather than the class that
        most exceeds its prior.  With equal label counts ``ȳ`` is constant and the
        predictions do not change.
        """
        alpha, shift = labeled_prior(
            decision,
            Y,
            targets.codes,
            np.flatnonzero(targets.labeled),
            self.classes_.shape[0],
            plus_minus=plus_minus,
        )
        self.dual_coef_ = self.dual_coef_ * alpha
        self.intercept_ = self.intercept_ * alpha + shift
        self.decision_scale_ = alpha
        return decision * alpha + shift

    def _labels_from_decision(self, decision):
        return labels_from_decision(self.classes_, decision)

    def decision_function(self, X):
        """The decision values: the centred fit, scaled, plus the labeled prior (class docstring).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Points to evaluate (new or training points).

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary problems: one value per point, positive means ``classes_[1]``.  Multiclass
            problems: one column per class of ``classes_``; ``predict`` takes the arg max.
            With a graph and the default zero-mean targets, on the training points each
            column's ``diag(L)``-weighted mean is the labeled proportion of its class (0 with
            ``balanced_targets=True``).
        """
        decision = self._new_decision(X)
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def predict(self, X):
        """Predicted class labels for new points (inductive; ``out_of_sample``'s rule)."""
        return self._labels_from_decision(self._new_decision(X))

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on the *labeled* rows of ``(X, y)``; unlabeled markers are ignored.

        Rows with ``y == unlabeled`` are dropped before scoring, so scikit-learn's
        ``GridSearchCV`` and ``cross_val_score`` score only points whose label is known.

        Raises
        ------
        ValueError
            When no row of ``y`` is labeled.
        """
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        keep = ~_unlabeled_rows(y, self.unlabeled)
        if not keep.any():
            raise ValueError(
                f"score needs labeled rows, but every label equals the unlabeled marker "
                f"{self.unlabeled!r}"
            )
        X = _labeled_rows_of(X, keep)
        weight = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return accuracy_score(y[keep], self.predict(X), sample_weight=weight)


class SSLRegressorMixin(RegressorMixin):
    """Semi-supervised regression: ``NaN`` in ``y`` marks unlabeled points."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    # prefer_skip_nested_validation=False: the graph and kernel fitted inside check their own
    # parameters too.
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, laplacian=None):
        """Fit on labeled + unlabeled points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets; ``NaN`` marks an unlabeled point.
        laplacian : sparse matrix of shape (n_samples, n_samples), optional
            A precomputed graph Laplacian on ``X`` to reuse.

        Returns
        -------
        self
        """
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y, labeled = check_regression_targets(y, X.shape[0])
        self._y_ndim = y.ndim
        Y = np.where(np.isnan(y), 0.0, y)
        Y = Y.reshape(X.shape[0], -1)
        decision = self._fit_problem(X, Y, labeled, laplacian, y=y)
        self.transduction_ = decision[:, 0] if self._y_ndim == 1 else decision
        return self

    def predict(self, X):
        """Predicted targets for new points (inductive)."""
        decision = self._raw_decision(self._check_predict_X(X))
        return decision[:, 0] if self._y_ndim == 1 else decision

    def score(self, X, y, sample_weight=None):
        """R² on the *labeled* rows of ``(X, y)``: rows whose target is NaN are ignored.

        Raises
        ------
        ValueError
            When every target is NaN.
        """
        y = np.asarray(y, dtype=np.float64)
        nan = np.isnan(y) if y.ndim == 1 else np.isnan(y).all(axis=1)
        keep = ~nan
        if not keep.any():
            raise ValueError("score needs labeled rows, but every target is NaN (unlabeled)")
        X = _labeled_rows_of(X, keep)
        weight = None if sample_weight is None else np.asarray(sample_weight)[keep]
        return r2_score(y[keep], self.predict(X), sample_weight=weight)
