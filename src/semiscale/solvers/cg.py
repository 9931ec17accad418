"""Conjugate gradient for symmetric positive (semi-)definite systems with several right-hand sides.

The solver sees only a *block* matvec ``V ↦ A V`` (one BLAS-3 product for all columns), so the same
code serves a dense matrix, a sparse matrix, a :class:`scipy.sparse.linalg.LinearOperator` and the
blocked Nyström Hessian of :mod:`semiscale.linalg.operators`.

The ``r`` columns of ``B`` are solved by ``r`` *independent* (block-diagonal) CG recurrences run in
lock-step: each column has its own step sizes ``α_j`` and ``β_j``, but the products ``A P`` and
``M⁻¹ R`` are applied to all still-active columns at once.  A column stops (is frozen) as soon as
its relative residual reaches ``tol``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._progress import enabled, log, progress
from ..linalg.ops import get_ops

__all__ = ["SolveResult", "cg"]


@dataclass(frozen=True)
class SolveResult:
    """Result of an iterative solve.

    Attributes
    ----------
    x : ndarray of shape (n,) or (n, r)
        Approximate solution, with the shape of the right-hand side.
    n_iter : int
        Iterations performed (the maximum over columns).
    converged : bool
        True when every column reached ``‖b − A x‖ ≤ tol · ‖b‖``.
    residuals : ndarray of shape (n_iter + 1, r)
        History of relative residual norms ``‖b − A x_k‖ / ‖b‖`` (recursively updated residual),
        row 0 being the initial guess; a frozen column repeats its last value, so
        ``residuals[-1] <= tol`` is the per-column convergence mask.
    broken : ndarray of bool, shape (r,), or None
        Columns frozen by a breakdown (``pᵀAp ≤ 0`` or ``rᵀM⁻¹r ≤ 0``) before converging.
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    residuals: np.ndarray
    broken: np.ndarray | None = None


def _as_block_operator(A, name):
    """Wrap a matrix, LinearOperator or callable as ``V (n, k) -> A V (n, k)``.

    A stored matrix is multiplied by the array-operations layer (an ``n × n`` kernel matrix makes
    this the heavy product of the iteration).
    """
    if hasattr(A, "matmat"):
        return A.matmat
    if hasattr(A, "shape") and hasattr(A, "__matmul__") and not callable(A):
        if sp.issparse(A):
            return lambda V: get_ops().sparse_matmul(A, V)
        return lambda V: get_ops().matmul(A, V)
    if hasattr(A, "apply") and callable(A.apply):
        return A.apply
    if callable(A):
        return A
    raise TypeError(
        f"{name} must be a callable V -> {name}(V), an object with .apply, a matrix or a "
        f"LinearOperator; got {type(A).__name__}"
    )


def _as_preconditioner(M):
    if M is None:
        return None
    if hasattr(M, "apply") and callable(M.apply):
        return M.apply
    return _as_block_operator(M, "preconditioner")


def _apply(op, V, n, dtype):
    out = np.asarray(op(V))
    if out.size != V.size:
        raise ValueError(
            f"operator returned an array of shape {out.shape} for an input block of shape {V.shape}"
        )
    return out.reshape(n, V.shape[1]).astype(dtype, copy=False)


def _column_dot(U, V):
    return np.einsum("ij,ij->j", U, V)


def _residual_text(rel, active, r, tol):
    """The progress postfix: the largest relative residual, and the columns still iterating."""
    text = f"residual {np.max(rel):.2e} (tol {tol:.0e})"
    return text if r == 1 else f"{text}, {active.size}/{r} columns active"


def cg(
    matvec,
    B,
    *,
    preconditioner=None,
    x0=None,
    tol=1e-6,
    max_iter=None,
    callback=None,
    verbose=None,
    desc="CG",
):
    r"""Solve ``A X = B`` by (preconditioned) conjugate gradient, one recurrence per column.

    For every column ``b`` of ``B`` the classical PCG recurrence is run (Hestenes–Stiefel):

    .. math::

        r_0 = b - A x_0,\quad z_0 = M^{-1} r_0,\quad p_0 = z_0, \\
        \alpha_k = \frac{r_k^\top z_k}{p_k^\top A p_k},\quad
        x_{k+1} = x_k + \alpha_k p_k,\quad r_{k+1} = r_k - \alpha_k A p_k, \\
        z_{k+1} = M^{-1} r_{k+1},\quad
        \beta_k = \frac{r_{k+1}^\top z_{k+1}}{r_k^\top z_k},\quad p_{k+1} = z_{k+1} + \beta_k p_k.

    The scalars are per column; ``A P`` and ``M⁻¹ R`` are computed for all active columns with one
    call each.  ``A`` must be symmetric positive definite on the Krylov space (a consistent
    positive *semi*-definite system also converges) and ``M`` symmetric positive definite.

    Parameters
    ----------
    matvec : callable, LinearOperator or matrix
        ``matvec(V)`` applies ``A`` to an ``(n, k)`` block (all ``k`` columns in one call).
    B : array_like of shape (n,) or (n, r)
        Right-hand side(s), e.g. one column per class.
    preconditioner : callable, object with ``apply``, LinearOperator, matrix or None
        Applies ``M⁻¹`` to an ``(n, k)`` block.
    x0 : array_like of shape of ``B``, optional
        Initial guess (zeros by default).
    tol : float
        Stop a column when ``‖b − A x‖₂ ≤ tol · ‖b‖₂``.
    max_iter : int, optional
        Maximum number of iterations; default ``10 n``.
    callback : callable, optional
        ``callback(k, x, residuals)`` after iteration ``k`` (1-based) with the current solution
        (shape of ``B``; do not modify it) and the current relative residuals, shape ``(r,)``.
    verbose : int or None
        1: an iteration counter on stderr, the largest relative residual (and the columns still
        iterating) beside it; 2: also one line per iteration.
        None adds nothing to the ambient verbosity (:mod:`semiscale._progress`).
    desc : str
        The bar's label (e.g. ``"PCG (sampled-hessian)"``).

    Returns
    -------
    SolveResult
        ``x`` has the shape and floating dtype of ``B`` (float64 for integer input).  A zero column
        of ``B`` gets a zero solution.  A breakdown (``pᵀAp ≤ 0`` or ``rᵀM⁻¹r ≤ 0`` with a non-zero
        residual: the operator or preconditioner is not positive definite) freezes that column,
        leaves it unconverged and emits a ``RuntimeWarning``.
    """
    B = np.asarray(B)
    if B.ndim not in (1, 2):
        raise ValueError(f"B must have shape (n,) or (n, r), got shape {B.shape}")
    dtype = B.dtype if B.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    n = B.shape[0]
    B2 = B.reshape(n, -1).astype(dtype, copy=False)
    r = B2.shape[1]
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol!r}")
    max_iter = 10 * n if max_iter is None else int(max_iter)
    if max_iter < 0:
        raise ValueError(f"max_iter must be non-negative, got {max_iter}")
    A = _as_block_operator(matvec, "matvec")
    M = _as_preconditioner(preconditioner)

    b_norm = np.linalg.norm(B2, axis=0)
    zero = b_norm == 0
    scale = np.where(zero, 1, b_norm).astype(dtype)
    if x0 is None:
        X = np.zeros((n, r), dtype=dtype)
        R = B2.copy()
    else:
        x0 = np.asarray(x0, dtype=dtype)
        if x0.shape != B.shape:
            raise ValueError(f"x0 must have the shape of B {B.shape}, got {x0.shape}")
        X = x0.reshape(n, r).copy()
        X[:, zero] = 0
        R = B2 - _apply(A, X, n, dtype)
        R[:, zero] = 0
    rel = np.linalg.norm(R, axis=0) / scale
    history = [rel.copy()]
    broken = np.zeros(r, dtype=bool)

    active = np.flatnonzero(rel > tol)
    P = np.zeros((n, r), dtype=dtype)
    rz = np.zeros(r, dtype=dtype)
    if active.size:
        Z = _apply(M, R[:, active], n, dtype) if M is not None else R[:, active]
        rz[active] = _column_dot(R[:, active], Z)
        P[:, active] = Z

    def cols(idx):
        return slice(None) if idx.size == r else idx

    # A counter, not a bar to max_iter: CG stops at tol, usually long before max_iter.
    chatty = enabled(verbose, 2)
    n_iter = 0
    with progress(desc=desc, verbose=verbose, unit="it") as bar:
        while active.size and n_iter < max_iter:
            c = cols(active)
            Pa = P[:, c]
            AP = _apply(A, Pa, n, dtype)
            pAp = _column_dot(Pa, AP)
            ok = (pAp > 0) & (rz[active] > 0) & np.isfinite(pAp)
            alpha = np.where(ok, rz[active] / np.where(ok, pAp, 1), 0).astype(dtype)
            X[:, c] += alpha * Pa
            R[:, c] -= alpha * AP
            rel[active] = np.linalg.norm(R[:, c], axis=0) / scale[active]
            n_iter += 1
            history.append(rel.copy())
            broken[active[~ok]] = True
            keep = ok & (rel[active] > tol)
            active = active[keep]
            if active.size:
                c = cols(active)
                Ra = R[:, c]
                Z = _apply(M, Ra, n, dtype) if M is not None else Ra
                rz_new = _column_dot(Ra, Z)
                beta = (rz_new / np.where(rz[active] != 0, rz[active], 1)).astype(dtype)
                P[:, c] = Z + beta * P[:, c]
                rz[active] = rz_new
            if not bar.disable:
                text = _residual_text(rel, active, r, tol)
                bar.set_postfix_str(text, refresh=False)
                bar.update()
                if chatty:
                    log(f"[{desc}] iteration {n_iter}: {text}", verbose, level=2)
            if callback is not None:
                callback(n_iter, X.reshape(B.shape), rel.copy())

    converged_cols = rel <= tol
    if np.any(broken & ~converged_cols):
        warnings.warn(
            f"CG broke down in column(s) {np.flatnonzero(broken & ~converged_cols).tolist()}: "
            "pᵀAp ≤ 0 or rᵀM⁻¹r ≤ 0, so the operator or the preconditioner is not positive "
            "definite (or the system is inconsistent)",
            RuntimeWarning,
            stacklevel=2,
        )
    return SolveResult(
        x=X.reshape(B.shape),
        n_iter=n_iter,
        converged=bool(np.all(converged_cols)),
        residuals=np.asarray(history),
        broken=broken & ~converged_cols,
    )
