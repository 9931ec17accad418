r"""The Nyström quadratic solver (paper 000 §4): ``H α = z`` over fixed centers, by (P)CG.

For a :class:`~semiscale.solvers.problem.QuadraticProblem` with active rows ``a`` and right-hand
side ``rhs`` the restriction of f to the span of ``s`` centers gives (paper 000 eq. 4)

.. math::

    H = K_{as}^\top K_{as} + λ_A K_{ss} + λ_I K_{ns}^\top L K_{ns},
    \qquad z = K_{ns}^\top \mathrm{rhs},

with ``H·α`` evaluated blockwise (eq. 7) by :class:`semiscale.linalg.NystromLapRLSHessian`.  The
centers are chosen once per fit, before the solver is built, so every Newton step of a
non-quadratic loss (:mod:`semiscale.solvers.newton`) uses the same span.
"""

from __future__ import annotations

import time

import numpy as np

from ..graph.diffusion import label_diffusion_weights
from ..linalg import NystromLapRLSHessian, kernel_rmatmul
from ..linalg.streaming import STREAM_BLOCK_BYTES
from .hessian_system import solve_hessian_system
from .preconditioners import preconditioner_memory
from .problem import QuadraticProblem, Solution

__all__ = ["NEEDS_CENTER_GRAPH", "NystromSolver", "solver_memory"]

#: Preconditioners that need a kNN graph on the centers (paper 000's L_ss term).
NEEDS_CENTER_GRAPH = {"paper", "paper5", "paper6", "falkon"}


def solver_memory(solver, preconditioner, n_samples, n_labeled, n_centers, *, degree=0.0):
    """Bytes the solve keeps beside the Nyström operator, by part (``{what: bytes}``).

    ``"pcg"``: the preconditioner's
    (:func:`semiscale.solvers.preconditioners.preconditioner_memory`); ``"direct"``: the dense
    ``H``, LAPACK's working copy and one column block of ``H`` (at most
    :data:`~semiscale.linalg.streaming.STREAM_BLOCK_BYTES`); ``"cg"``: nothing
    (its ``s × r`` vectors are part of the constant overhead).  The operator is built with
    these as ``reserved`` (:class:`~semiscale.linalg.operators.NystromLapRLSHessian`), so that
    a budget too small for the whole fit is refused before ``K_ss`` is allocated.
    """
    s = int(n_centers)
    if solver == "direct":
        return {
            "the dense H and LAPACK's copy of it (2 s×s)": 2 * s * s * 8,
            "one column block of H": STREAM_BLOCK_BYTES,
        }
    if solver == "pcg":
        return preconditioner_memory(preconditioner, n_samples, n_labeled, s, degree=degree)
    return {}


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
        Bytes for everything the solve allocates in proportion to ``n·s``, ``s²`` or ``n·r``:
        ``K_ss``, the preconditioner (:func:`solver_memory`), the cached ``K_ns`` or the kernel
        blocks, and the ``n × r`` work arrays.  A budget that cannot hold them is refused before
        any of them is allocated.  Not in it (a constant overhead, documented in
        ``docs/architecture.md``): the points ``X`` and copies of them, the Laplacian and
        copies of it, ``O(n·r)`` label and prediction vectors.
    n_jobs : int or None
        Threads for the kernel blocks.
    label_diffusion : int, default=0
        Compare each label with the ``label_diffusion``-step random-walk average of the
        predictions around its point instead of the prediction at the point
        (:func:`semiscale.graph.label_diffusion_weights`, the operator's ``label_weights``).
        Needs the graph term and a quadratic loss (the labeled rows are the active ones).
    cache : {"auto", True, False}, default="auto"
        The operator's ``K_ns`` cache (:class:`~semiscale.linalg.operators.NystromLapRLSHessian`):
        ``"auto"`` stores it when it fits and once the products made without it have cost as
        much as filling it (:func:`~semiscale.linalg.operators.cache_fill_passes`); True at
        the first product (refused when it does not fit); False never.
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
        cache="auto",
        label_diffusion=0,
    ):
        self.center_index = np.asarray(center_index)
        self.label_diffusion = label_diffusion
        self.cache = cache
        self.solver = solver
        self.preconditioner = preconditioner
        self.preconditioner_options = dict(preconditioner_options or {})
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.n_jobs = n_jobs

    def _preconditioner_options(self, qp) -> dict:
        """The builder's options; the sampled preconditioner draws its rows from the problem's
        ``random_state`` unless the options seed it themselves."""
        options = dict(self.preconditioner_options or {})
        if self.preconditioner == "sampled-hessian" and qp.random_state is not None:
            options.setdefault("random_state", qp.random_state)
        return options

    def __call__(self, qp: QuadraticProblem) -> Solution:
        X = qp.X
        centers = self.center_index
        active_index = np.flatnonzero(qp.active)
        L = qp.laplacian if qp.lambda_intrinsic > 0 else None
        degree = L.nnz / max(L.shape[0], 1) if L is not None else 0.0
        reserved = solver_memory(
            self.solver,
            self.preconditioner,
            X.shape[0],
            active_index.size,
            centers.size,
            degree=degree,
        )
        label_weights = None
        if self.label_diffusion:
            if L is None:
                raise ValueError(
                    "label_diffusion averages predictions along the graph: it needs a graph "
                    "and intrinsic_reg > 0; use label_diffusion=0 without them"
                )
            if not qp.rhs_on_active_only:
                raise ValueError(
                    "label_diffusion applies to the squared loss only (its labeled rows are "
                    "fixed); use label_diffusion=0 with other losses"
                )
            label_weights = label_diffusion_weights(L, active_index, self.label_diffusion)
        # Everything the solve holds is checked here, before K_ss or a kernel block exists.
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
            cache=self.cache,
            reserved=reserved,
            n_columns=qp.rhs.shape[1],
            label_weights=label_weights,
        )
        tic = time.perf_counter()
        if active_index.size:
            z = hessian.rhs(qp.rhs[active_index])
        else:  # a Newton step with every labeled row in a linear or zero zone
            z = np.zeros((centers.size, qp.rhs.shape[1]), dtype=hessian.dtype)
        if not qp.rhs_on_active_only:
            # Newton steps of non-quadratic losses: the linear zone adds K_{bs}ᵀ rhs_b.
            extra = np.flatnonzero(~qp.active & np.any(qp.rhs != 0, axis=1))
            budget = hessian._work_budget(qp.rhs.shape[1])
            z = z + kernel_rmatmul(
                qp.kernel, X[extra], hessian.centers_, qp.rhs[extra], budget, self.n_jobs
            ).reshape(z.shape).astype(z.dtype, copy=False)
        rhs_seconds = time.perf_counter() - tic
        alpha, n_iter, residuals, info = solve_hessian_system(
            hessian,
            z,
            solver=self.solver,
            preconditioner=self.preconditioner,
            preconditioner_options=self._preconditioner_options(qp),
            tol=self.tol,
            max_iter=self.max_iter,
            memory_budget=self.memory_budget,
            verbose=qp.verbose,
        )
        info.update(
            n_centers=centers.size,
            label_diffusion=int(self.label_diffusion),
            cached=hessian.cached_,
            cache_filled=hessian.cache_filled_,
            uncached_passes=hessian.uncached_passes_,
            n_matvec=hessian.n_matvec_,
            kernel_dtype=hessian.dtype.name,
            rhs_seconds=rhs_seconds,
        )
        return Solution(
            X_fit=hessian.centers_,  # the rows X[centers], local (gathered once)
            dual_coef=alpha,
            train_decision=hessian.kns_matmul(alpha),
            n_iter=n_iter,
            residuals=residuals,
            info=info,
        )
