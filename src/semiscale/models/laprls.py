"""Laplacian regularized least squares on the full problem (the reference model).

Paper 000 (Li et al. 2019), §3, eq. (3): with f = Σ_j α_j k(x_j, ·) over all n training points,
the minimiser of

.. math::

    \\sum_{i \\le l} (y_i - f(x_i))^2 + \\lambda_A \\|f\\|_K^2 + \\lambda_I f^\\top L f

is :math:`\\alpha = (J K + \\lambda_A I + \\lambda_I L K)^{-1} J y` with J the diagonal indicator of
labeled points.  semiscale's canonical scaling (DESIGN.md §3) sets λ_A = l·ambient_reg and
λ_I = l·intrinsic_reg / tr(L) (see :mod:`semiscale.scaling`).

With ``intrinsic_reg = 0`` the unlabeled coefficients are zero and the labeled ones solve
(K_ll + λ_A I) α_l = y_l: supervised RLS, i.e. kernel ridge regression with alpha = λ_A.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from ._base import (
    ManifoldLeastSquaresMixin,
    Problem,
    Solution,
    SSLClassifierMixin,
    SSLRegressorMixin,
)

__all__ = ["LapRLSClassifier", "LapRLSRegressor"]


def _check_dense_fits(n, problem: Problem, n_arrays: int, what: str):
    needed = n_arrays * n * n * 8
    budget = parse_memory_budget(problem.memory_budget)
    if needed > budget:
        raise MemoryBudgetError(
            f"{what} needs {format_bytes(needed)} for n={n} points but memory_budget is "
            f"{format_bytes(budget)}; raise memory_budget, or use NystromLapRLS for large n"
        )


def _solve_spd_or_lstsq(A, B, *, assume_a):
    """Solve A X = B; fall back to least squares (with a warning) when A is singular."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            X = sla.solve(A, B, assume_a=assume_a, check_finite=False)
        if np.all(np.isfinite(X)):
            return X
    except (np.linalg.LinAlgError, sla.LinAlgWarning, ValueError):
        pass
    warnings.warn(
        "the LapRLS system is singular or ill-conditioned; using a least-squares solution "
        "(increase ambient_reg to make the problem well-posed)",
        RuntimeWarning,
        stacklevel=4,
    )
    return sla.lstsq(A, B, check_finite=False)[0]


def _solve_rls(problem: Problem) -> Solution:
    """Supervised RLS: (K_ll + λ_A I) α_l = y_l on the labeled points only (O(l³))."""
    idx = np.flatnonzero(problem.labeled)
    X_l = problem.X[idx]
    K_ll = problem.kernel(X_l)
    K_ll.flat[:: K_ll.shape[0] + 1] += problem.lambda_ambient
    alpha = _solve_spd_or_lstsq(K_ll, problem.Y[idx], assume_a="pos")
    return Solution(X_fit=X_l, dual_coef=alpha, info={"system": "labeled", "n_fit": idx.size})


def _solve_direct(problem: Problem) -> Solution:
    """Dense LU solve of (JK + λ_A I + λ_I LK) α = J y, paper 000 eq. (3). O(n³) time, O(n²) memory.

    The system matrix overwrites K column block by column block, so the peak is one n×n array.
    """
    if problem.lambda_intrinsic == 0:
        return _solve_rls(problem)
    X, L, labeled = problem.X, problem.laplacian, problem.labeled
    n = X.shape[0]
    _check_dense_fits(n, problem, 1, "LapRLS with solver='direct'")
    K = np.asarray(problem.kernel(X), dtype=np.float64)
    # System matrix A = J K + λ_I L K + λ_A I, formed in place in K, in column blocks.
    step = max(1, min(n, (32 * 1024**2) // (8 * n)))
    rows_labeled = np.flatnonzero(labeled)
    for start in range(0, n, step):
        cols = slice(start, min(start + step, n))
        block = L @ K[:, cols]
        block *= problem.lambda_intrinsic
        block[rows_labeled] += K[rows_labeled, cols]
        K[:, cols] = block
    K.flat[:: n + 1] += problem.lambda_ambient
    B = problem.Y * labeled[:, None]
    alpha = _solve_spd_or_lstsq(K, B, assume_a="gen")
    return Solution(X_fit=X, dual_coef=alpha, info={"system": "full", "n_fit": n})


#: Solvers by name: each maps a :class:`Problem` to a :class:`Solution`.
SOLVERS = {"direct": _solve_direct}


class _LapRLSBase(ManifoldLeastSquaresMixin, BaseEstimator):
    def _solve(self, problem: Problem) -> Solution:
        try:
            solver = SOLVERS[self.solver]
        except KeyError:
            raise ValueError(f"solver={self.solver!r} is not one of {sorted(SOLVERS)}") from None
        return solver(problem)


_PARAMS_DOC = """
    Parameters
    ----------
    kernel : Kernel, default=None
        Kernel object from :mod:`semiscale.kernels`; None means ``RBF(gamma="median")``.
    graph : KNNGraph, default=None
        Graph builder whose ``laplacian_`` defines the intrinsic term; None means ``KNNGraph()``.
        Ignored when ``fit`` receives ``laplacian=`` or when ``intrinsic_reg == 0``.
    ambient_reg : float, default=1e-4
        Weight of ‖f‖²_K in the canonical objective.
    intrinsic_reg : float, default=1.0
        Weight of fᵀLf / tr(L); 0 gives supervised RLS on the labeled points.
    solver : {"direct"}, default="direct"
        "direct": dense LU of paper 000's eq. (3), O(n³) time and n² floats of memory.
    memory_budget : int or str, default=None
        Largest working memory (bytes or e.g. "4GB"); None = a quarter of available memory.
        A problem that does not fit raises ``MemoryBudgetError`` before allocating.
    random_state : int, RandomState or None, default=None
        Seeds data-dependent kernel heuristics (``gamma="median"``).
    verbose : int, default=0
"""


class LapRLSRegressor(SSLRegressorMixin, _LapRLSBase):
    __doc__ = (
        """Laplacian regularized least-squares regression (exact; paper 000 eq. 3).

    Minimises ``(1/l) Σ_labeled (y_i − f(x_i))² + ambient_reg‖f‖²_K + intrinsic_reg fᵀLf/tr(L)``
    over f in the span of k(x_j, ·) for all training points. NaN targets mark unlabeled points.
"""
        + _PARAMS_DOC
        + """
    Attributes
    ----------
    kernel_ : Kernel
        The kernel with data-dependent parameters resolved.
    graph_ : KNNGraph or None
        The fitted graph (None when a Laplacian was passed or intrinsic_reg = 0).
    X_fit_ : ndarray
        Expansion points (all training points; the labeled ones when intrinsic_reg = 0).
    dual_coef_ : ndarray of shape (n_fit, n_targets)
    transduction_ : ndarray
        f on the training points.
    timings_ : dict
        Seconds spent in graph construction, solving, and in total.
    """
    )

    def __init__(
        self,
        kernel=None,
        graph=None,
        ambient_reg=1e-4,
        intrinsic_reg=1.0,
        solver="direct",
        memory_budget=None,
        random_state=None,
        verbose=0,
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.solver = solver
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose


class LapRLSClassifier(SSLClassifierMixin, _LapRLSBase):
    __doc__ = (
        """Laplacian regularized least-squares classification (exact; paper 000 eq. 3).

    Binary problems regress ±1 targets; multiclass problems solve one-vs-rest with one right-hand
    side per class in a single factorization. ``y == unlabeled`` marks unlabeled points.
"""
        + _PARAMS_DOC
        + """    unlabeled : int, float or str, default=-1
        Marker of unlabeled points in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_, graph_, X_fit_, dual_coef_, timings_
        As in :class:`LapRLSRegressor`.
    transduction_ : ndarray of shape (n_samples,)
        Predicted labels of the training points (labeled and unlabeled).
    """
    )

    def __init__(
        self,
        kernel=None,
        graph=None,
        ambient_reg=1e-4,
        intrinsic_reg=1.0,
        solver="direct",
        memory_budget=None,
        random_state=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.solver = solver
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.unlabeled = unlabeled
