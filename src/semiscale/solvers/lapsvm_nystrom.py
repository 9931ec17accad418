r"""The Newton steps of the Nyström LapSVM by one s × s factorization each, the rest kept.

A Newton step of the primal LapSVM on s centers (:mod:`semiscale.solvers.newton`) solves

.. math::

    \big(K_{as}^\top K_{as} + λ_A K_{ss} + λ_I G\big)\, α = K_{ns}^\top\, \mathrm{rhs},
    \qquad G = K_{ns}^\top L K_{ns},

where only the active rows ``a`` (labeled points in the loss's quadratic zone) and the right-hand
side change from step to step. :class:`CachedNystromSolver` computes ``K_ns``, ``K_ss`` and ``G``
once per fit (``O(n s² + nnz(L) s)``); a step then costs the ``|a| × s`` update, one Cholesky
factorization of the ``s × s`` system (``s³/3``; jittered by
:meth:`~semiscale.linalg.ops.ArrayOps.jittered_cholesky` when round-off makes it singular) and two
``n × s`` products (``K_nsᵀ rhs`` and ``f = K_ns α``), instead of building a preconditioner and
running PCG with kernel passes over all n points at every step. It needs ``K_ns`` in memory
(:func:`cached_solver_bytes`); the estimator falls back to PCG when that does not fit.
"""

from __future__ import annotations

import time

import numpy as np

from .._memory import parse_memory_budget
from ..linalg.ops import get_ops
from .problem import QuadraticProblem, Solution

__all__ = ["CachedNystromSolver", "cached_solver_bytes"]


def cached_solver_bytes(n_samples: int, n_centers: int, n_columns: int = 2) -> int:
    """Bytes :class:`CachedNystromSolver` holds: ``K_ns`` and ``L K_ns`` (n × s, the second
    while ``G`` is formed), ``K_ss``, ``G``, the step's ``H`` and LAPACK's copy of it (s × s),
    and the ``n × n_columns`` right-hand sides and predictions."""
    n, s = int(n_samples), int(n_centers)
    return 8 * (2 * n * s + 4 * s * s + 2 * n * n_columns)


def cached_solver_fits(n_samples: int, n_centers: int, memory_budget) -> bool:
    """Whether :func:`cached_solver_bytes` fits in ``memory_budget`` (half of it: the rest is
    left to the graph, the kernel blocks of ``predict`` and the caller's arrays)."""
    return cached_solver_bytes(n_samples, n_centers) <= parse_memory_budget(memory_budget) // 2


class CachedNystromSolver:
    """``QuadraticProblem -> Solution`` over fixed centers, the step-independent parts cached.

    Parameters
    ----------
    center_index : ndarray of int, shape (s,)
        Rows of the problems' ``X`` used as centers.
    n_jobs : int or None
        Threads for the kernel matrices.

    Notes
    -----
    Every problem handed to one instance must share ``X``, the kernel and the Laplacian (the
    Newton steps of one fit do; their λ's may differ, as the continuation's scales do).
    ``info["factor_seconds"]`` is the time spent forming ``K_ns``, ``K_ss`` and ``G``.
    """

    def __init__(self, center_index, *, n_jobs=None):
        self.center_index = np.asarray(center_index)
        self.n_jobs = n_jobs
        self._K_ns = self._K_ss = self._G = None

    def _prepare(self, qp: QuadraticProblem) -> float:
        """Form ``K_ns``, ``K_ss`` and ``G`` at the first step; the seconds it took (0 later)."""
        if self._K_ns is not None:
            return 0.0
        tic, ops = time.perf_counter(), get_ops()
        centers = qp.X[self.center_index]
        K_ns = ops.kernel_matrix(qp.kernel, qp.X, centers, qp.memory_budget, self.n_jobs)
        self._K_ns = np.asarray(K_ns, dtype=np.float64)
        # a center's kernel row is a row of K_ns: K_ss costs no kernel evaluation
        K_ss = self._K_ns[self.center_index]
        self._K_ss = 0.5 * (K_ss + K_ss.T)
        if qp.laplacian is not None:
            LK = np.asarray(ops.sparse_matmul(qp.laplacian, self._K_ns), dtype=np.float64)
            # the n·s² product is most of the fit: every core, also where the small s × s
            # factorizations run on one (models._nystrom_fit.SINGLE_THREAD_BLAS_MAX_CENTERS)
            with ops.blas_threads(ops.n_threads(-1)):
                G = ops.matmul(self._K_ns.T, LK)
            del LK
            self._G = 0.5 * (G + G.T)  # symmetric up to round-off; Cholesky reads one triangle
        return time.perf_counter() - tic

    def __call__(self, qp: QuadraticProblem) -> Solution:
        factor_seconds = self._prepare(qp)
        ops, tic = get_ops(), time.perf_counter()
        active = np.flatnonzero(qp.active)
        K_as = self._K_ns[active]
        H = ops.matmul(K_as.T, K_as)
        H += qp.lambda_ambient * self._K_ss
        if self._G is not None and qp.lambda_intrinsic > 0:
            H += qp.lambda_intrinsic * self._G
        rhs = np.asarray(qp.rhs, dtype=np.float64)
        rows = np.flatnonzero(np.any(rhs != 0, axis=1))
        # a Newton step's right-hand side lives on the labeled rows; the bias column on all
        z = ops.matmul(self._K_ns[rows].T, rhs[rows])
        # H is positive definite but, with the default tiny ambient_reg, often below LAPACK's
        # condition threshold: a jitter of the order of round-off replaces the least-squares
        # fallback (an SVD, ten times a Cholesky) that the dense "direct" path takes there.
        factor, jitter = ops.jittered_cholesky(H)
        alpha = ops.cho_solve(factor, z)
        info = {
            "solver": "direct (cached K_ns and G)",
            "jitter": jitter,
            "n_centers": int(self.center_index.size),
            "factor_seconds": factor_seconds,
            "iterations_seconds": time.perf_counter() - tic,
        }
        return Solution(
            X_fit=qp.X[self.center_index],
            dual_coef=alpha,
            train_decision=ops.matmul(self._K_ns, alpha),
            n_iter=0,
            info=info,
        )
