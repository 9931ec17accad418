r"""Sequential minimal optimization for a QP over the simplex (the CVM's inner problem).

Paper 001's dual (8), and every center-constrained MEB dual (9) of a core set, is

.. math::

    \max_α\; v^\top α - α^\top Q α \quad \text{s.t.}\; α \ge 0,\; 1^\top α = 1

with Q symmetric positive semi-definite.  SMO (Platt 1998, in the form of the CVM papers) keeps
``g = 2Qα − v`` (the gradient of the minimised ``αᵀQα − vᵀα``) and moves mass between two
coordinates at a time: from the one with the largest gradient among those with ``α_i > 0`` to
the one with the smallest, by the exact minimiser along that direction, clipped to ``[0, α_i]``.
The KKT conditions hold when ``max_{α_i > 0} g_i − min_j g_j ≤ tol``: every coordinate in the
support has the same gradient λ and no other is below it.  A warm start (the previous core
set's solution, padded with zeros) makes each CVM iteration a few updates.
"""

from __future__ import annotations

import numpy as np

from ..linalg.ops import get_ops

__all__ = ["SMOResult", "simplex_qp_smo"]


class SMOResult:
    """``alpha`` (the solution), ``n_iter`` (pair updates), ``gap`` (the final KKT violation)."""

    def __init__(self, alpha, n_iter, gap):
        self.alpha, self.n_iter, self.gap = alpha, n_iter, gap


def simplex_qp_smo(Q, v, alpha0=None, *, tol=1e-6, max_iter=None) -> SMOResult:
    """Maximise ``vᵀα − αᵀQα`` over the simplex by SMO (module docstring).

    Parameters
    ----------
    Q : ndarray of shape (k, k)
        Symmetric positive semi-definite.
    v : ndarray of shape (k,)
    alpha0 : ndarray of shape (k,), optional
        A feasible start (≥ 0, summing to 1); default: all mass on the coordinate of largest
        ``v_i − Q_ii``.
    tol : float, default=1e-6
        KKT violation ``max_{α_i>0} g_i − min_j g_j`` at which to stop.
    max_iter : int or None
        Pair updates before giving up (None: 100·k + 1000).

    Returns
    -------
    SMOResult
    """
    Q = np.asarray(Q, dtype=float)
    v = np.asarray(v, dtype=float)
    k = v.size
    if Q.shape != (k, k):
        raise ValueError(f"Q must have shape ({k}, {k}) to match v, got {Q.shape}")
    if alpha0 is None:
        alpha = np.zeros(k)
        alpha[np.argmax(v - np.diag(Q))] = 1.0
    else:
        alpha = np.array(alpha0, dtype=float)
        if alpha.shape != (k,) or alpha.min() < 0 or abs(alpha.sum() - 1.0) > 1e-9:
            raise ValueError("alpha0 must be a point of the simplex: >= 0 and summing to 1")
    max_iter = 100 * k + 1000 if max_iter is None else int(max_iter)
    diag = np.diag(Q).copy()
    g = 2.0 * get_ops().matmul(Q, alpha) - v
    # −inf outside the support, 0 on it: argmax(g + outside) is the largest gradient among
    # α_i > 0 in two array passes; only the two moved coordinates change it per update.
    outside = np.where(alpha > 0, 0.0, -np.inf)
    masked, delta = np.empty(k), np.empty(k)
    gap = np.inf
    for n_iter in range(max_iter + 1):
        np.add(g, outside, out=masked)
        i = int(masked.argmax())
        j = int(g.argmin())
        gap = float(g[i] - g[j])
        if gap <= tol or n_iter == max_iter:
            break
        # Q is symmetric: its rows i and j are its columns, and rows are contiguous
        row_i, row_j = Q[i], Q[j]
        curvature = 2.0 * (diag[i] + diag[j] - 2.0 * row_i[j])
        a_i = alpha[i]
        step = a_i if curvature <= 0 else min(a_i, gap / curvature)
        alpha[i] = a_i - step
        alpha[j] += step
        outside[j] = 0.0
        if alpha[i] < 1e-15:
            alpha[i] = 0.0
            outside[i] = -np.inf
        np.subtract(row_j, row_i, out=delta)
        delta *= 2.0 * step
        g += delta
    alpha /= alpha.sum()
    return SMOResult(alpha, n_iter, gap)
