"""Solve a LapRLS Hessian system ``H α = z`` directly, by CG, or by PCG (shared by estimators)."""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import stage
from ..linalg.ops import get_ops
from .cg import cg
from .dense import solve_or_lstsq
from .preconditioners import T_MIN_PIVOT, make_preconditioner

__all__ = ["ITERATIVE_SOLVERS", "solve_hessian_system"]

ITERATIVE_SOLVERS = ("direct", "cg", "pcg")

#: Preconditioners built on T = chol(K_ss): retried with a pivot floor after a breakdown.
_T_FACTORED = ("sampled-hessian", "falkon")


def _dense_hessian(hessian, memory_budget):
    """Form the s×s matrix H column block by column block (each block costs one pass over K_ns)."""
    s = hessian.shape[0]
    rows = hessian.n_samples_ if hessian.laplacian is not None else hessian.n_labeled_
    # Per column: the n-row work vectors u and v of the product, plus the output column.
    return get_ops().dense_from_matmat(
        hessian.matmat, s, column_bytes=3 * (rows + s) * 8, memory_budget=memory_budget
    )


def solve_hessian_system(
    hessian,
    z,
    *,
    solver,
    preconditioner=None,
    preconditioner_options=None,
    tol=1e-6,
    max_iter=None,
    memory_budget=None,
    verbose=0,
):
    """Return ``(alpha, n_iter, residuals, info)`` for ``H α = z``.

    ``solver="direct"`` forms H (s×s) and factors it; ``"cg"`` runs conjugate gradient on the
    blocked operator; ``"pcg"`` builds ``preconditioner`` (a name of
    :data:`semiscale.solvers.PRECONDITIONERS`) first.  A run that stops before ``tol`` warns with a
    ``ConvergenceWarning``.  ``verbose`` >= 1 names the direct solve and the preconditioner's
    construction while they run and counts (P)CG iterations, residual beside, on stderr
    (:mod:`semiscale._progress`); >= 2 adds a line per iteration.
    """
    # Krylov recurrences run in float64 even over a float32 operator (float32 kernel blocks are
    # the heavy part; float32 recurrences lose orthogonality and stall near 1e-4).
    z = np.asarray(z, dtype=np.float64)
    info = {"solver": solver}
    if solver == "direct":
        tic = time.perf_counter()
        with stage(f"forming and factoring the {hessian.shape[0]}×{hessian.shape[0]} H", verbose):
            H = _dense_hessian(hessian, memory_budget)
            alpha = solve_or_lstsq(H, z, assume_a="pos", overwrite_a=False, what="Nyström system")
        info["iterations_seconds"] = time.perf_counter() - tic
        return alpha, 0, None, info
    if solver not in ITERATIVE_SOLVERS:
        raise ValueError(f"solver={solver!r} is not one of {list(ITERATIVE_SOLVERS)}")
    precond = None
    tic = time.perf_counter()
    if solver == "pcg":
        with stage(f"preconditioner ({preconditioner})", verbose):
            options = preconditioner_options or {}
            precond = make_preconditioner(preconditioner, hessian, **options)
        info["preconditioner"] = preconditioner
        info["preconditioner_jitter"] = getattr(precond, "jitter_", None)
        if hasattr(precond, "laplacian_rows_"):  # the sampled-Hessian preconditioner
            info["laplacian_rows"] = precond.laplacian_rows_
            info["graph_trace_share"] = precond.graph_trace_share_
    info["preconditioner_seconds"] = time.perf_counter() - tic

    # verbose >= 1: an iteration counter with the residual on stderr; >= 2: a line per iteration.
    desc = solver.upper() if precond is None else f"PCG ({preconditioner})"
    tic = time.perf_counter()
    retry = solver == "pcg" and preconditioner in _T_FACTORED
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = cg(
            hessian,
            z,
            preconditioner=precond,
            tol=tol,
            max_iter=max_iter,
            verbose=verbose,
            desc=desc,
        )
    broke = result.broken is not None and bool(np.any(result.broken))
    if retry and broke:
        # A breakdown (pᵀHp ≤ 0) with a near-singular K_ss: T⁻¹ amplified round-off.  Rebuild P
        # with T's pivots floored at T_MIN_PIVOT and start again from zero (the broken iterate
        # is dominated by near-null directions and breaks the retry down too).
        options = {**(preconditioner_options or {}), "t_min_pivot": T_MIN_PIVOT}
        precond = None  # the budget holds one preconditioner's s×s arrays, not two at once
        precond = make_preconditioner(preconditioner, hessian, **options)
        info["preconditioner_retry"] = f"T pivot floor {T_MIN_PIVOT:g} after a breakdown"
        first = result
        left = None if max_iter is None else max(max_iter - first.n_iter, 1)
        result = cg(
            hessian,
            z,
            preconditioner=precond,
            tol=tol,
            max_iter=left,
            verbose=verbose,
            desc=f"{desc}, retry",
        )
        # Both histories are relative to ‖z‖; the retry's row 0 (its restart at 1) is dropped so
        # that the history keeps n_iter + 1 rows.
        history = np.concatenate([first.residuals, result.residuals[1:]])
        result = type(result)(
            x=result.x,
            n_iter=first.n_iter + result.n_iter,
            converged=result.converged,
            residuals=history,
            broken=result.broken,
        )
    else:
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    info["iterations_seconds"] = time.perf_counter() - tic
    info["converged"] = bool(result.converged)
    if not result.converged:
        advice = (
            "raise max_iter, use solver='pcg' with preconditioner='sampled-hessian', or a "
            "larger ambient_reg"
        )
        if hessian.dtype == np.float32:
            # float32 blocks put an error floor of about κ(H)·6e-8 under the residual.
            advice = (
                f"use kernel_dtype='float64' (float32 kernel blocks limit the accuracy), {advice}"
            )
        warnings.warn(
            f"{solver.upper()} stopped after {result.n_iter} iterations with relative residual "
            f"{np.max(result.residuals[-1]):.2e} > tol={tol:g}; {advice}",
            ConvergenceWarning,
            stacklevel=3,
        )
    return result.x, int(result.n_iter), result.residuals, info
