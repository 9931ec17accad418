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

import dataclasses

import numpy as np
from sklearn.base import BaseEstimator

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from ..linalg import FullLapRLSHessian, kernel_matmul, kernel_matrix
from ..solvers import cg
from ..solvers.dense import solve_or_lstsq
from ._base import (
    ManifoldLeastSquaresMixin,
    Problem,
    Solution,
    SSLClassifierMixin,
    SSLRegressorMixin,
)
from ._krylov import solve_hessian_system

__all__ = ["LapRLSClassifier", "LapRLSRegressor"]


def _check_dense_fits(n, problem: Problem, n_arrays: int, what: str):
    needed = n_arrays * n * n * 8
    budget = parse_memory_budget(problem.memory_budget)
    if needed > budget:
        raise MemoryBudgetError(
            f"{what} needs {format_bytes(needed)} for n={n} points but memory_budget is "
            f"{format_bytes(budget)}; raise memory_budget, or use NystromLapRLS for large n"
        )


def _solve_rls(problem: Problem) -> Solution:
    """Supervised RLS: (K_ll + λ_A I) α_l = y_l on the labeled points only (O(l³))."""
    idx = np.flatnonzero(problem.labeled)
    X_l = problem.X[idx]
    K_ll = kernel_matrix(problem.kernel, X_l, memory_budget=problem.memory_budget)
    K_ll.flat[:: K_ll.shape[0] + 1] += problem.lambda_ambient
    alpha = solve_or_lstsq(K_ll, problem.Y[idx], assume_a="pos", what="RLS system")
    return Solution(X_fit=X_l, dual_coef=alpha, info={"system": "labeled", "n_fit": idx.size})


def _solve_direct(problem: Problem) -> Solution:
    """Dense LU solve of (JK + λ_A I + λ_I LK) α = J y, paper 000 eq. (3). O(n³) time, O(n²) memory.

    The system matrix overwrites K column block by column block; LAPACK factors a copy (so that a
    singular system can fall back to least squares): the peak is two n×n arrays.
    """
    if problem.lambda_intrinsic == 0:
        return _solve_rls(problem)
    X, L, labeled = problem.X, problem.laplacian, problem.labeled
    n = X.shape[0]
    _check_dense_fits(n, problem, 2, "LapRLS with solver='direct'")
    K = np.asarray(kernel_matrix(problem.kernel, X, memory_budget=problem.memory_budget), float)
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
    alpha = solve_or_lstsq(K, B, what="LapRLS system")
    return Solution(X_fit=X, dual_coef=alpha, info={"system": "full", "n_fit": n})


def _solve_rls_cg(problem: Problem, options) -> Solution:
    """Supervised RLS by (P)CG on the SPD system (K_ll + λ_A I) α_l = y_l (paper 000's RLS-CG).

    K_ll is stored when it fits in half the memory budget; otherwise every CG iteration
    recomputes it in blocks (``kernel_matmul``), so memory stays O(l) at O(l²d) per iteration.
    """
    idx = np.flatnonzero(problem.labeled)
    X_l = problem.X[idx]
    lam = problem.lambda_ambient
    stored = idx.size**2 * 8 <= parse_memory_budget(problem.memory_budget) // 2
    if stored:
        K_ll = kernel_matrix(problem.kernel, X_l, memory_budget=problem.memory_budget)
        K_ll.flat[:: K_ll.shape[0] + 1] += lam
        diagonal = np.diag(K_ll).copy()
        operator = K_ll
    else:
        diagonal = problem.kernel.diag(X_l) + lam

        def operator(V):
            return kernel_matmul(problem.kernel, X_l, None, V, problem.memory_budget) + lam * V

    precond = None
    if options["solver"] == "pcg":
        precond = lambda V: V / diagonal[:, None]  # noqa: E731 - Jacobi on an SPD system
    result = cg(
        operator,
        problem.Y[idx],
        preconditioner=precond,
        tol=options["tol"],
        max_iter=options["max_iter"],
    )
    info = {"system": "labeled", "n_fit": idx.size, "converged": bool(result.converged)}
    info["cached"] = stored
    return Solution(
        X_fit=X_l,
        dual_coef=result.x,
        n_iter=int(result.n_iter),
        residuals=result.residuals,
        info=info,
    )


def _solve_iterative(problem: Problem, options) -> Solution:
    """CG/PCG on the full LapRLS system in symmetric form, H = K(JK + λ_A I + λ_I LK), z = KJy.

    This is the Nyström system with every training point a center (s = n); f = Kα equals the
    solution of eq. (3).  K (n×n) is cached when it fits the memory budget, else recomputed in
    blocks at each iteration (O(n²d) per product).
    """
    if problem.lambda_intrinsic == 0:
        return _solve_rls_cg(problem, options)
    labeled_index = np.flatnonzero(problem.labeled)
    hessian = FullLapRLSHessian(
        problem.kernel,
        problem.X,
        labeled_index,
        problem.laplacian,
        problem.lambda_ambient,
        problem.lambda_intrinsic,
        memory_budget=problem.memory_budget,
    )
    z = hessian.rhs(problem.Y[labeled_index])
    preconditioner_options = {}
    if options["preconditioner"] == "sampled-hessian":
        preconditioner_options["random_state"] = problem.random_state
    alpha, n_iter, residuals, info = solve_hessian_system(
        hessian,
        z,
        solver=options["solver"],
        preconditioner=options["preconditioner"],
        preconditioner_options=preconditioner_options,
        tol=options["tol"],
        max_iter=options["max_iter"],
        memory_budget=problem.memory_budget,
        verbose=problem.verbose,
    )
    info.update(system="full", n_fit=problem.X.shape[0], cached=hessian.cached_)
    return Solution(
        X_fit=problem.X,
        dual_coef=alpha,
        train_decision=hessian.kns_matmul(alpha),
        n_iter=n_iter,
        residuals=residuals,
        info=info,
    )


#: Solvers by name: each maps a :class:`Problem` (and the estimator's options) to a Solution.
SOLVERS = {
    "direct": lambda problem, options: _solve_direct(problem),
    "cg": _solve_iterative,
    "pcg": _solve_iterative,
}


class _LapRLSBase(ManifoldLeastSquaresMixin, BaseEstimator):
    def _solve(self, problem: Problem) -> Solution:
        try:
            solver = SOLVERS[self.solver]
        except (KeyError, TypeError):
            raise ValueError(f"solver={self.solver!r} is not one of {sorted(SOLVERS)}") from None
        options = {
            "solver": self.solver,
            "preconditioner": self.preconditioner,
            "tol": self.tol,
            "max_iter": self.max_iter,
        }
        if problem.X.dtype != np.float64:
            # The exact reference computes in float64 whatever X's dtype: float32 kernel blocks
            # carry errors of about κ(H)·6e-8 (see NystromLapRLSRegressor's kernel_dtype).
            problem = dataclasses.replace(problem, X=problem.X.astype(np.float64))
        return solver(problem, options)


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
    solver : {"direct", "cg", "pcg"}, default="direct"
        "direct": dense LU of paper 000's eq. (3), O(n³) time, two n×n arrays of memory.
        "cg"/"pcg": (preconditioned) conjugate gradient on the symmetric form
        K(JK + λ_A I + λ_I LK)α = KJy, K cached when it fits ``memory_budget``
        (paper 000's LapRLS-CG/PCG); with ``intrinsic_reg=0``, CG on (K_ll + λ_A I)α = y (RLS-CG).
    preconditioner : str or None, default="sampled-hessian"
        For ``solver="pcg"``: a name of :data:`semiscale.solvers.PRECONDITIONERS`.
    tol : float, default=1e-6
        Relative residual at which CG/PCG stops.
    max_iter : int, default=None
        CG/PCG iteration cap (None: 10·n).
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
        preconditioner="sampled-hessian",
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        random_state=None,
        verbose=0,
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.solver = solver
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
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
        preconditioner="sampled-hessian",
        tol=1e-6,
        max_iter=None,
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
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.unlabeled = unlabeled
