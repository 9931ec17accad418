r"""The spectral step shared by every cluster kernel: from eigenpairs of L to virtual samples.

Paper 003 eqs. (4)–(6) (Algorithm 1 lines 8–10, Algorithm 2 line 5).  With the top ``k``
eigenpairs :math:`(U, σ)` of :math:`L = D^{-1/2} K D^{-1/2}` (:math:`D_{ii} = \sum_j K_{ij}`),
eigenvalues decreasing, and a transfer function :math:`φ`
(:mod:`semiscale.cluster_kernels.transfer`):

.. math::

    \tilde Σ = \mathrm{diag}(φ(σ)),\qquad
    \tilde L^{1/2} = U \tilde Σ^{1/2},\qquad
    \tilde D_{ii} = 1 / \tilde L_{ii} = 1 \Big/ \sum_j \tilde σ_j U_{ij}^2,\qquad
    F = \tilde D^{1/2} \tilde L^{1/2},

so that :math:`F F^\top = \tilde K = \tilde D^{1/2} U \tilde Σ U^\top \tilde D^{1/2}`, the
cluster kernel (Chapelle et al. 2002), whose diagonal is 1: every row of ``F`` is the row of
:math:`U \tilde Σ^{1/2}` scaled to unit length.  A linear SVM on the rows of ``F`` is the kernel
SVM with :math:`\tilde K` (paper 003, Proposition 1).

New points get rows of ``F`` by the Nyström extension of the eigenvectors
(:func:`extend_eigenvectors`).  The degree vector is exact and blockwise
(:func:`kernel_degrees`).
"""

from __future__ import annotations

import numpy as np

from ..linalg.blocked import kernel_matmul
from ..linalg.ops import get_ops
from .transfer import apply_transfer

__all__ = ["EIGEN_RTOL", "extend_eigenvectors", "kernel_degrees", "virtual_samples"]

#: Eigenvalues at most ``EIGEN_RTOL`` times the largest count as zero where the extension divides
#: by them (a pseudo-inverse): below it, rounding in ``K(x, X) u_i`` is amplified past 1e-4
#: relative (float64 rounding ~1e-16 · n, divided by σ_i).
EIGEN_RTOL = 1e-10


def virtual_samples(U, sigma, transfer, cut, *, overwrite_u=False):
    r"""The virtual samples :math:`F = \tilde D^{1/2} U \tilde Σ^{1/2}` (eqs. 4–6).

    Parameters
    ----------
    U : ndarray of shape (n, k)
        Eigenvectors of :math:`L` (or their extension to other points), one per column, in the
        order of ``sigma``.  They need not be orthonormal: the Nyström vectors of eq. (13) are
        not, and ``F`` is defined from them all the same.
    sigma : ndarray of shape (k,)
        The eigenvalues, decreasing.  Negative ones (rounding errors of the PSD ``L``) are
        clipped to 0 before the transfer.
    transfer : str or callable
        See :func:`~semiscale.cluster_kernels.transfer.resolve_transfer`.
    cut : int
        The transfer's ``h``: indices ``i ≤ h`` (1-based) are the head.
    overwrite_u : bool, default=False
        Compute ``F`` in ``U``'s buffer (float64 ``U`` only): no second ``n × k`` array.

    Returns
    -------
    F : ndarray of shape (n, k), float64
        Rows of unit length; a row where :math:`\tilde L_{ii} = 0` (every transferred
        eigenvalue of its nonzero coordinates is 0, e.g. a step transfer cutting all of them)
        has no defined :math:`\tilde D_{ii}` and is left at 0 (its kernel row is 0), instead of
        dividing by zero.
    transferred : ndarray of shape (k,)
        :math:`\tilde σ = φ(\max(σ, 0))`.
    """
    sigma = np.maximum(np.asarray(sigma, dtype=np.float64), 0.0)
    transferred = apply_transfer(transfer, sigma, cut)
    if overwrite_u and isinstance(U, np.ndarray) and U.dtype == np.float64:
        F = U
    else:
        F = np.array(U, dtype=np.float64)
    F *= np.sqrt(transferred)  # L̃^{1/2} = U Σ̃^{1/2}
    # L̃_ii = ‖row i of L̃^{1/2}‖², D̃_ii = 1 / L̃_ii, F = D̃^{1/2} L̃^{1/2}
    norms = np.sqrt(np.einsum("ij,ij->i", F, F))
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    F *= scale[:, None]
    return F, transferred


def kernel_degrees(kernel, X, memory_budget=None, n_jobs=1, *, rows=None):
    r"""The degrees :math:`d_i = \sum_j K(x_i, x_j)`, exact, without forming ``K``.

    One pass of :meth:`~semiscale.linalg.ops.ArrayOps.kernel_row_sums` over the square tiles on
    and above the diagonal of the symmetric ``K`` (each off-diagonal tile gives its row sums to
    its rows and its column sums to its columns): ``n(n + t)/2`` kernel entries for tiles of
    ``t`` rows, ``O(n²d)`` time (the distance products and the exponentials), ``O(n)`` memory
    besides one tile's blocks and operands, all within ``memory_budget``, on ``n_jobs`` threads.
    Degrees of new points (``rows``) are one :meth:`~semiscale.linalg.ops.ArrayOps.kernel_matmul`
    of ``K(rows, X)`` with a vector of ones.  Measured on a9a (32,561 × 123, RBF with the median
    width γ = 1/32, SoCK's budget for this pass, one BLAS thread, ``n_jobs=None``): 4.9 s on the
    CSR matrix, 5.1 s dense (medians of 3, shared 2-core machine at load 1.3).  NysCK does not
    need them (the landmarks' degrees suffice,
    :class:`~semiscale.cluster_kernels.NystromClusterKernel`); SoCK does.

    Parameters
    ----------
    kernel : Kernel
        A resolved kernel (numeric parameters).
    X : ndarray or sparse matrix of shape (n, d)
        The points summed over.
    memory_budget : int, str or None
        Bytes for the kernel blocks and their operands.
    n_jobs : int or None, default=1
        Threads of the blocked product.
    rows : ndarray or sparse matrix of shape (m, d), optional
        Points whose degrees over ``X`` are wanted (new points); None: ``X`` itself, with its
        exact zero self-distances (:math:`K_{ii} = 1` for the RBF).

    Returns
    -------
    ndarray of shape (n,) or (m,), float64
    """
    if rows is None:  # K(X, X) is symmetric: the tiles on and above its diagonal
        d = get_ops().kernel_row_sums(kernel, X, memory_budget, n_jobs)
    else:
        ones = np.ones(X.shape[0], dtype=np.float64)
        d = kernel_matmul(kernel, rows, X, ones, memory_budget, n_jobs)
    return np.asarray(d, dtype=np.float64)


def _inverse_sqrt(d):
    """:math:`d^{-1/2}`, 0 where ``d`` is 0 (a point that no kernel weight reaches)."""
    d = np.asarray(d, dtype=np.float64)
    return np.divide(1.0, np.sqrt(np.maximum(d, 0.0)), out=np.zeros_like(d), where=d > 0)


def extend_eigenvectors(
    kernel,
    X_fit,
    degrees,
    U,
    sigma,
    X_new,
    *,
    new_degrees=None,
    scale=1.0,
    rtol=EIGEN_RTOL,
    memory_budget=None,
    n_jobs=1,
):
    r"""Nyström extension of eigenvectors of :math:`L = D^{-1/2} K D^{-1/2}` to new points.

    For a point ``x``, with :math:`d_x = \sum_j K(x, x_j)` over the fitted points:

    .. math::

        u_i(x) = \frac{c}{σ_i}\, d_x^{-1/2} \sum_j K(x, x_j)\, d_j^{-1/2}\, U_{ji},

    i.e. :math:`u_i(x) = c\,L(x, X) u_i / σ_i` with :math:`L(x, X) = d_x^{-1/2} K(x, X)
    D^{-1/2}`.  On a fitted point :math:`x_j`, :math:`L(x_j, X) u_i = (L u_i)_j = σ_i U_{ji}`,
    so the extension **reproduces the fitted rows** of exact eigenvectors (``c = 1``; tested).
    The rows of ``F`` for the new points are then :func:`virtual_samples` of ``u(x)``, i.e.
    :math:`\tilde D_x = 1 / \sum_i \tilde σ_i u_i(x)^2`.

    The same formula with ``X_fit`` the ``s`` landmarks, ``(U, σ)`` the eigenpairs of their
    ``s × s`` block :math:`W` of ``L``, ``degrees`` their degrees over all ``n`` points,
    ``new_degrees`` the new points' degrees over all ``n`` points and :math:`c = \sqrt{s/n}` is
    paper 003's eq. (13) for a row of ``C``: the Nyström eigenvector.

    Parameters
    ----------
    kernel : Kernel
        The resolved kernel of the fit.
    X_fit : ndarray or sparse matrix of shape (n, d)
        The points the eigenvectors live on.
    degrees : ndarray of shape (n,)
        Their degrees :math:`d_j`.
    U : ndarray of shape (n, k)
    sigma : ndarray of shape (k,)
        Eigenvalues of ``U``'s columns.  Those at most ``rtol · max(σ)`` are treated as 0 (a
        pseudo-inverse, as eq. (13)'s :math:`Σ_W^+`): their extended coordinate is 0.
    X_new : ndarray or sparse matrix of shape (m, d)
    new_degrees : ndarray of shape (m,), optional
        The new points' degrees; None: computed over ``X_fit`` in the same pass as the product.
    scale : float, default=1.0
        The constant ``c``.
    rtol : float, default=EIGEN_RTOL
    memory_budget : int, str or None
        Bytes for the kernel blocks (the result, ``m × k``, is not counted).
    n_jobs : int or None, default=1

    Returns
    -------
    ndarray of shape (m, k), float64
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    k = sigma.shape[0]
    top = sigma.max(initial=0.0)
    inv = np.divide(scale, sigma, out=np.zeros_like(sigma), where=sigma > rtol * top)
    extra = 1 if new_degrees is None else 0
    V = np.empty((U.shape[0], k + extra))
    np.multiply(U, _inverse_sqrt(degrees)[:, None], out=V[:, :k])
    V[:, :k] *= inv
    if extra:
        V[:, k] = 1.0  # the degrees d_x in the same pass over K(X_new, X_fit)
    P = np.asarray(kernel_matmul(kernel, X_new, X_fit, V, memory_budget, n_jobs), np.float64)
    d_new = P[:, k] if extra else np.asarray(new_degrees, dtype=np.float64)
    out = P[:, :k] if extra else P
    out *= _inverse_sqrt(d_new)[:, None]
    return np.ascontiguousarray(out)
