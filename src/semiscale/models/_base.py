"""Shared machinery of the least-squares manifold-regularization estimators.

Every estimator here is *graph + kernel + solver*: ``fit`` validates the input, resolves the kernel
(data-dependent bandwidths), builds or accepts the graph Laplacian, and hands a small problem
description to the estimator's solver; the learned function is the kernel expansion

.. math::  f(x) = \\sum_{j} \\alpha_j\\, k(x_j, x)

over ``X_fit_`` (all training points for exact LapRLS, the labeled ones for RLS, the Nyström
centers for Nyström LapRLS).  Subclasses implement :meth:`_solve` only.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_classification_targets,
    check_laplacian,
    check_regression_targets,
    check_X,
    one_vs_rest_targets,
)
from ..scaling import solver_lambdas

__all__ = ["ManifoldLeastSquaresMixin", "SSLClassifierMixin", "SSLRegressorMixin", "Solution"]


@dataclass
class Problem:
    """What a solver needs: the canonical objective in paper 000's un-normalised form.

    Solve ``min_α  Σ_{i∈labeled} (y_i − f(x_i))² + λ_A‖f‖² + λ_I fᵀ L f`` for every column of ``Y``.
    """

    X: np.ndarray
    Y: np.ndarray  # (n, r): targets on labeled rows, 0 elsewhere
    labeled: np.ndarray  # (n,) bool
    laplacian: sp.csr_matrix | None  # None when lambda_intrinsic == 0
    lambda_ambient: float
    lambda_intrinsic: float
    kernel: object
    memory_budget: object
    random_state: object
    verbose: int


@dataclass
class Solution:
    """What a solver returns: the expansion points, coefficients and diagnostics."""

    X_fit: np.ndarray
    dual_coef: np.ndarray  # (n_fit, r)
    train_decision: np.ndarray | None = None  # f on the training points, if cheaply known
    n_iter: int = 0
    residuals: np.ndarray | None = None
    info: dict = field(default_factory=dict)


def _default_kernel():
    from ..kernels import RBF

    return RBF(gamma="median")


def _default_graph():
    from ..graph import KNNGraph

    return KNNGraph()


class ManifoldLeastSquaresMixin:
    """fit/predict plumbing shared by LapRLS-type estimators (subclasses define ``_solve``)."""

    def _check_hyperparameters(self):
        for name in ("ambient_reg", "intrinsic_reg"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise ValueError(f"{name} must be a non-negative float, got {value!r}")
            if not (value >= 0 and np.isfinite(value)):
                raise ValueError(f"{name} must be a non-negative finite float, got {value!r}")

    def _fit_problem(self, X, Y, labeled, laplacian):
        """Resolve kernel and graph, scale the regularizers, call the solver, store results."""
        self._check_hyperparameters()
        start = time.perf_counter()
        timings = {}
        kernel = self.kernel if self.kernel is not None else _default_kernel()
        self.kernel_ = kernel.resolve(X, random_state=self.random_state)
        n_labeled = int(labeled.sum())

        L = None
        trace = 0.0
        tic = time.perf_counter()
        if laplacian is not None:
            L = check_laplacian(laplacian, X.shape[0])
            self.graph_ = None
        elif self.intrinsic_reg > 0:
            graph = clone(self.graph) if self.graph is not None else _default_graph()
            self.graph_ = graph.fit(X)
            L = self.graph_.laplacian_
        else:
            self.graph_ = None
        timings["graph"] = time.perf_counter() - tic
        if L is not None:
            trace = float(L.diagonal().sum())
        lambda_ambient, lambda_intrinsic = solver_lambdas(
            self.ambient_reg, self.intrinsic_reg, n_labeled, trace
        )
        problem = Problem(
            X=X,
            Y=Y,
            labeled=labeled,
            laplacian=L if lambda_intrinsic > 0 else None,
            lambda_ambient=lambda_ambient,
            lambda_intrinsic=lambda_intrinsic,
            kernel=self.kernel_,
            memory_budget=getattr(self, "memory_budget", None),
            random_state=self.random_state,
            verbose=getattr(self, "verbose", 0),
        )
        tic = time.perf_counter()
        solution = self._solve(problem)
        timings["solve"] = time.perf_counter() - tic

        self.X_fit_ = solution.X_fit
        self.dual_coef_ = solution.dual_coef
        self.n_iter_ = solution.n_iter
        self.residuals_ = solution.residuals
        self.laplacian_trace_ = trace
        self.n_labeled_ = n_labeled
        self.n_features_in_ = X.shape[1]
        self.solver_info_ = solution.info
        if solution.train_decision is not None:
            train_decision = solution.train_decision
        else:
            train_decision = self._raw_decision(X)
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        return train_decision

    def _raw_decision(self, X):
        from ..linalg.blocked import kernel_matmul

        return kernel_matmul(
            self.kernel_, X, self.X_fit_, self.dual_coef_, getattr(self, "memory_budget", None)
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    def _check_predict_X(self, X):
        check_is_fitted(self, "dual_coef_")
        X = check_X(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        return X


def _check_y_given(estimator, y):
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y is None"
        )


def _column_or_1d_labels(y):
    """Labels as 1-D; a column vector is accepted with scikit-learn's DataConversionWarning."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; y is ravelled.",
            DataConversionWarning,
            stacklevel=3,
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

    Binary problems solve one least-squares problem with ±1 targets; multiclass problems solve
    one-vs-rest with one right-hand side per class (a single factorization / Krylov run).
    """

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
        X = check_X(X, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        Y = one_vs_rest_targets(targets)
        self.classes_ = targets.classes
        decision = self._fit_problem(X, Y, targets.labeled, laplacian)
        self.transduction_ = self._labels_from_decision(decision)
        return self

    def _labels_from_decision(self, decision):
        if decision.shape[1] == 1:
            return self.classes_[(decision[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(decision, axis=1)]

    def decision_function(self, X):
        """f(x): shape (n,) for binary problems (positive means ``classes_[1]``), else (n, C)."""
        decision = self._raw_decision(self._check_predict_X(X))
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def predict(self, X):
        """Predicted class labels for new points (inductive)."""
        decision = self._raw_decision(self._check_predict_X(X))
        return self._labels_from_decision(decision)


class SSLRegressorMixin(RegressorMixin):
    """Semi-supervised regression: ``NaN`` in ``y`` marks unlabeled points."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

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
        X = check_X(X, min_samples=2)
        _check_y_given(self, y)
        y, labeled = check_regression_targets(y, X.shape[0])
        self._y_ndim = y.ndim
        Y = np.where(np.isnan(y), 0.0, y)
        Y = Y.reshape(X.shape[0], -1)
        decision = self._fit_problem(X, Y, labeled, laplacian)
        self.transduction_ = decision[:, 0] if self._y_ndim == 1 else decision
        return self

    def predict(self, X):
        """Predicted targets for new points (inductive)."""
        decision = self._raw_decision(self._check_predict_X(X))
        return decision[:, 0] if self._y_ndim == 1 else decision
