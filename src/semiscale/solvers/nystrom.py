r"""The Nyström quadratic solver (paper 000 §4): ``H α = z`` over fixed centers, by (P)CG.

For a :class:`~semiscale.solvers.problem.QuadraticProblem` with active rows ``a`` and right-hand
side ``rhs`` the restriction of f to the span of ``s`` centers gives (paper 000 eq. 4)

.. math::

    H = K_{as}^\top K_{as} + λ_A K_{ss} + λ_I K_{ns}^\top L K_{ns},
    \qquad z = K_{ns}^\top \mathrm{rhs},

with ``H·α`` evaluated blockwise (eq. 7) by :class:`semiscale.linalg.NystromLapRLSHessian`.  The
centers are chosen once per fit, before the solver is built, so every Newton step of a
non-quadratic loss (:mod:`semiscale.solvers.manifold`) uses the same span.
"""

from __future__ import annotations

import time

import numpy as np

from ..linalg import NystromLapRLSHessian, kernel_rmatmul
from .hessian_system import solve_hessian_system
from .problem import QuadraticProblem, Solution

__all__ = ["NEEDS_CENTER_GRAPH", "NystromSolver"]

#: Preconditioners that need a kNN graph on the centers (paper 000's L_ss term).
NEEDS_CENTER_GRAPH = {"paper", "paper5", "paper6", "falkon"}


class NystromSolver:
    """``QuadraticProblem -> Solution`` over the centers ``X[center_index]``.

    Parameters
    ----------
    center_index : ndarray of int, shape (s,)
        Rows of the problems' ``X`` used as centers.
    solver : {"pcg", "cg", "direct"}
    preconditioner : str or None
        A name of :data:`semiscale.solvers.PRECONDITIONERS` (``solver="pcg"``).
    preconditioner_options : dict
        Keyword arguments of the preconditioner's builder (its ``random_state`` and, for the
        paper's preconditioners, ``center_laplacian`` already filled in by the caller).
    tol, max_iter : float, int or None
        CG/PCG stopping rule.
    memory_budget : int, str or None
        Bytes for ``K_ss``, the cached ``K_ns`` or one kernel block, and the work arrays.
    n_jobs : int or None
        Threads for the kernel blocks.
    """

    def __init__(
        self,
        center_index,
        *,
        solver="pcg",
        preconditioner="sampled-hessian",
        preconditioner_options=None,
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        n_jobs=None,
    ):
        self.center_index = np.asarray(center_index)
        self.solver = solver
        self.preconditioner = preconditioner
        self.preconditioner_options = dict(preconditioner_options or {})
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.n_jobs = n_jobs

    def __call__(self, qp: QuadraticProblem) -> Solution:
        X = qp.X
        centers = self.center_index
        active_index = np.flatnonzero(qp.active)
        hessian = NystromLapRLSHessian(
            qp.kernel,
            X,
            centers,
            active_index,
            qp.laplacian,
            qp.lambda_ambient,
            qp.lambda_intrinsic,
            memory_budget=self.memory_budget,
            n_jobs=self.n_jobs,
        )
        tic = time.perf_counter()
        if active_index.size:
            z = hessian.rhs(qp.rhs[active_index])  # fills the K_ns cache when it fits
        else:  # a Newton step with every labeled row in a linear or zero zone
            z = np.zeros((centers.size, qp.rhs.shape[1]), dtype=hessian.dtype)
        if not qp.rhs_on_active_only:
            # Newton steps of non-quadratic losses: the linear zone adds K_{bs}ᵀ rhs_b.
            extra = np.flatnonzero(~qp.active & np.any(qp.rhs != 0, axis=1))
            z = z + kernel_rmatmul(
                qp.kernel, X[extra], X[centers], qp.rhs[extra], self.memory_budget, self.n_jobs
            ).reshape(z.shape).astype(z.dtype, copy=False)
        rhs_seconds = time.perf_counter() - tic
        alpha, n_iter, residuals, info = solve_hessian_system(
            hessian,
            z,
            solver=self.solver,
            preconditioner=self.preconditioner,
            preconditioner_options=self.preconditioner_options,
            tol=self.tol,
            max_iter=self.max_iter,
            memory_budget=self.memory_budget,
            verbose=qp.verbose,
        )
        info.update(
            n_centers=centers.size,
            cached=hessian.cached_,
            n_matvec=hessian.n_matvec_,
            kernel_dtype=hessian.dtype.name,
            rhs_seconds=rhs_seconds,
        )
        return Solution(
            X_fit=X[centers],
            dual_coef=alpha,
            train_decision=hessian.kns_matmul(alpha),
            n_iter=n_iter,
            residuals=residuals,
            info=info,
        )
