"""Graph Laplacians of a symmetric non-negative weight matrix ``W`` (sparse in, CSR out).

With degrees ``d_i = Σ_j w_ij`` and ``D = diag(d)``:

- unnormalized: ``L = D − W``, so ``fᵀ L f = ½ Σ_ij w_ij (f_i − f_j)²`` and ``L·1 = 0``;
- symmetric normalized: ``L_sym = I − D^{-1/2} W D^{-1/2}``, eigenvalues in ``[0, 2]``.
  An isolated vertex (``d_i = 0``) gets an all-zero row and column, diagonal included (as in
  ``scipy.sparse.csgraph.laplacian(normed=True)``): its quadratic form is 0 like the unnormalized
  Laplacian's, and ``tr(L_sym) = n − #isolated``;
- iterated: ``L^p`` (``p ≥ 1``, sparse products by repeated squaring), as paper 002's
  ``Q = L_sym^p``;
- ridge: ``+ ridge · I`` (makes ``L`` positive definite for sparse SDD solves).

The diagonal of ``W`` is ignored: a self-loop does not change ``fᵀ L f``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components as _scipy_components

__all__ = ["check_power_ridge", "connected_components", "degree", "laplacian"]


def _check_weights(W) -> sp.csr_matrix:
    """CSR float64 copy of ``W`` without its diagonal; square, finite, non-negative."""
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square (n, n) weight matrix, got shape {W.shape}")
    W.sum_duplicates()
    if not np.isfinite(W.data).all():
        raise ValueError("W contains NaN or infinite weights")
    if (W.data < 0).any():
        raise ValueError("W has negative weights; graph Laplacians need w_ij >= 0")
    diagonal = W.diagonal()
    if diagonal.any():
        W = (W - sp.diags(diagonal, format="csr")).tocsr()
    W.eliminate_zeros()
    return W


def degree(W) -> np.ndarray:
    """Vertex degrees ``d_i = Σ_j w_ij`` as a float64 vector (diagonal of ``W`` included)."""
    return np.asarray(sp.csr_matrix(W).sum(axis=1), dtype=np.float64).ravel()


def connected_components(W) -> tuple[int, np.ndarray]:
    """Connected components of the undirected graph with an edge where ``w_ij != 0``.

    Returns
    -------
    n_components : int
    labels : ndarray of int, shape (n_samples,)
        Component of each vertex, numbered from 0.
    """
    W = sp.csr_matrix(W)
    n_components, labels = _scipy_components(W, directed=False)
    return int(n_components), labels


def _matrix_power(L: sp.csr_matrix, power: int) -> sp.csr_matrix:
    """``L^power`` by repeated squaring, symmetrized against round-off."""
    result, base, p = None, L, power
    while p:
        if p & 1:
            result = base if result is None else (result @ base).tocsr()
        p >>= 1
        if p:
            base = (base @ base).tocsr()
    result = ((result + result.T) * 0.5).tocsr()
    return result


def check_power_ridge(power, ridge) -> None:
    """Raise ValueError unless ``power`` is an integer ≥ 1 and ``ridge`` a finite number ≥ 0."""
    if isinstance(power, bool) or not isinstance(power, Integral) or power < 1:
        raise ValueError(f"power must be an integer >= 1, got {power!r}")
    if isinstance(ridge, bool) or not isinstance(ridge, Real) or not (0 <= ridge < np.inf):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")


def laplacian(W, *, normalized: bool = False, power: int = 1, ridge: float = 0.0) -> sp.csr_matrix:
    """Graph Laplacian ``(D − W)^p + ridge·I`` or ``(I − D^{-1/2} W D^{-1/2})^p + ridge·I``.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative weights (symmetry is the caller's contract; it is not checked).
    normalized : bool
        Symmetric normalized Laplacian ``I − D^{-1/2} W D^{-1/2}`` instead of ``D − W``;
        isolated vertices get an all-zero row (see the module docstring).
    power : int
        ``p ≥ 1``: the Laplacian is raised to this power (sparse products; the number of
        non-zeros grows like ``k^p`` per row).
    ridge : float
        ``≥ 0``, added to the diagonal after the power.

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (n, n)
        Symmetric positive semi-definite (definite when ``ridge > 0``), sorted indices.

    Raises
    ------
    ValueError
        Non-square, non-finite or negative ``W``; ``power`` not an integer ≥ 1; ``ridge`` < 0.
    """
    check_power_ridge(power, ridge)
    W = _check_weights(W)
    n = W.shape[0]
    deg = degree(W)
    if normalized:
        connected = deg > 0
        inv_sqrt = np.zeros(n)
        inv_sqrt[connected] = 1.0 / np.sqrt(deg[connected])
        # w_ij (s_i s_j) rounds identically for (i, j) and (j, i): L stays exactly symmetric
        rows = np.repeat(np.arange(n), np.diff(W.indptr))
        S = sp.csr_matrix(
            (W.data * (inv_sqrt[rows] * inv_sqrt[W.indices]), W.indices, W.indptr), shape=W.shape
        )
        L = sp.diags(connected.astype(np.float64), format="csr") - S
    else:
        L = sp.diags(deg, format="csr") - W
    L = L.tocsr()
    if power > 1:
        L = _matrix_power(L, int(power))
    if ridge:
        L = (L + float(ridge) * sp.eye(n, format="csr")).tocsr()
    L.sum_duplicates()
    L.eliminate_zeros()
    L.sort_indices()
    return L
