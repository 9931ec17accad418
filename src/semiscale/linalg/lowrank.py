r"""Low-rank building blocks of the stochastic cluster kernel (paper 003, Algorithm 1).

Two pieces, both streaming over the n rows and never forming an n × n matrix:

- :func:`rbf_random_features`: random Fourier features (Rahimi & Recht 2007) of the Gaussian
  kernel :math:`k(x, y) = \exp(-γ‖x − y‖^2)`, a random :math:`Φ ∈ ℝ^{n×a}` with
  :math:`E[ΦΦ^⊤] = K`;
- :func:`svt_update`: the factored singular value thresholding step
  :math:`D_τ[α\,U\,\mathrm{diag}(s)\,U^⊤ + β\,PP^⊤]` of Avron et al. (2012, Lemma 2.4), by a thin
  QR of the new columns and an eigendecomposition of a small ``(b + a) × (b + a)`` core.

Both live in the array-operations layer: their products go through :func:`get_ops`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from semiscale._memory import row_slices
from semiscale._random import check_random_state
from semiscale.linalg.ops import get_ops

__all__ = [
    "FEATURE_BLOCK_BYTES",
    "low_rank_distance",
    "rbf_random_features",
    "random_features_bytes",
    "svt_update",
    "svt_update_bytes",
]

#: Bytes of the ``X W`` block (rows × a/2 float64) that :func:`rbf_random_features` computes at
#: a time; it is written into the output's columns block by block, so the whole ``X W`` is never
#: held besides the output.
FEATURE_BLOCK_BYTES = 4 * 1024**2


def random_features_bytes(n_features_in, n_features, itemsize=8):
    """Bytes :func:`rbf_random_features` allocates besides its ``(n, a)`` output.

    The frequencies ``W`` (``d × a/2``) and one block of ``X W`` (:data:`FEATURE_BLOCK_BYTES`,
    at least one row).  A sparse ``X``'s row block (a CSR slice) is not counted: it is a few
    non-zeros per row of the block.
    """
    half = max(int(n_features) // 2, 1)
    return int(n_features_in) * half * itemsize + max(FEATURE_BLOCK_BYTES, half * itemsize)


def rbf_random_features(X, n_features, gamma, random_state=None):
    r"""Random Fourier features of the RBF kernel: :math:`Φ` with :math:`E[ΦΦ^⊤] = K`.

    With :math:`m = a/2` frequencies :math:`w_j \sim N(0, 2γ I_d)` (the spectral density of
    :math:`\exp(-γ‖δ‖^2)`, Bochner's theorem),

    .. math::

        Φ = \frac{1}{\sqrt m}\,[\cos(XW),\ \sin(XW)] ∈ ℝ^{n×a},\qquad
        (ΦΦ^⊤)_{ij} = \frac1m \sum_{j'=1}^m \cos\big(w_{j'}^⊤(x_i − x_j)\big),

    whose expectation is :math:`k(x_i, x_j)` since :math:`E\cos(w^⊤δ) = \exp(-γ‖δ‖^2)`.

    Paired cos/sin features rather than Rahimi & Recht's :math:`\sqrt{2/a}\cos(w^⊤x + b)` with a
    random phase b: for the same a columns, the pair's estimate has an exact diagonal
    (:math:`(ΦΦ^⊤)_{ii} = 1 = k(x_i, x_i)`, so :math:`D^{-1/2}ΦΦ^⊤D^{-1/2}` has L's diagonal) and,
    for the Gaussian kernel, a lower variance off the diagonal (Sutherland & Schneider 2015); the
    phase form's extra term :math:`\cos(w^⊤(x_i + x_j) + 2b)` only adds noise.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Points; a sparse ``X`` is multiplied block by block (``X[rows] @ W``) and never
        densified.
    n_features : int
        a, the number of columns; even (a/2 cos and a/2 sin columns).
    gamma : float
        Positive width γ of :math:`\exp(-γ‖x − y‖^2)`.
    random_state : None, int, RandomState, Generator or SeedSequence
        Draws W (see :mod:`semiscale._random`).

    Returns
    -------
    Phi : ndarray of shape (n, a), Fortran order
        Fortran order so that a QR factorization can overwrite it without a copy.
    """
    a = int(n_features)
    if a < 2 or a % 2:
        raise ValueError(
            f"n_features must be an even integer >= 2 (a/2 cos and a/2 sin columns), got "
            f"{n_features!r}; pass an even number"
        )
    gamma = float(gamma)
    if not gamma > 0:
        raise ValueError(f"gamma must be positive, got {gamma!r}; pass gamma > 0")
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    m = a // 2
    rng = check_random_state(random_state)
    W = rng.normal(scale=np.sqrt(2.0 * gamma), size=(d, m))
    ops = get_ops()
    Phi = np.empty((n, a), dtype=np.float64, order="F")
    scale = 1.0 / np.sqrt(m)
    rows_per_block = max(FEATURE_BLOCK_BYTES // (8 * m), 1)
    block = np.empty((min(rows_per_block, max(n, 1)), m), dtype=np.float64)
    for rows in row_slices(n, rows_per_block):
        size = rows.stop - rows.start
        if sp.issparse(X):
            XW = ops.sparse_matmul(X[rows], W)
        else:
            XW = ops.matmul(X[rows], W, out=block[:size])
        np.cos(XW, out=Phi[rows, :m])
        np.sin(XW, out=Phi[rows, m:])
    Phi *= scale
    return Phi


def svt_update_bytes(n, rank, n_new, max_rank=None):
    """Bytes :func:`svt_update` allocates at its peak besides its inputs ``U`` and ``P``.

    The new factor ``U'`` (n × b', b' ≤ min(b + a, max_rank)), the projection's row block
    (:data:`FEATURE_BLOCK_BYTES`) and the small ``(b + a)``-sized core with its eigenvectors
    (three such matrices), with ``P`` overwritten (``overwrite_p=True``; otherwise add its
    n × a copy).  When ``b + a > n`` the concatenation [U, P] and its thin Q (n × (b + a) and
    n × min(n, b + a)) are added.
    """
    n, r = int(n), int(rank) + int(n_new)
    kept = r if max_rank is None else min(r, int(max_rank))
    concatenated = 8 * n * (r + min(n, r)) if r > n else 0
    return 8 * (n * min(kept, n) + 3 * r * r) + FEATURE_BLOCK_BYTES + concatenated


def low_rank_distance(U, s, reference):
    r""":math:`‖U\,\mathrm{diag}(s)\,U^⊤ − R‖_F` for a dense ``(n, n)`` reference R.

    Forms the n × n difference: a diagnostic for small data (convergence studies, tests).
    """
    diff = get_ops().matmul(U * s, U.T)
    diff -= reference
    return float(np.linalg.norm(diff))


def _subtract_projection(P, U, C):
    """``P ← P − U C`` in place, row block by row block (no n × a temporary)."""
    ops = get_ops()
    rows_per_block = max(FEATURE_BLOCK_BYTES // (8 * max(P.shape[1], 1)), 1)
    for rows in row_slices(P.shape[0], rows_per_block):
        P[rows] -= ops.matmul(U[rows], C)


def svt_update(U, s, P, scale_old, scale_new, threshold, max_rank=None, *, overwrite_p=False):
    r"""Factored singular value thresholding of a symmetric low-rank sum.

    Given :math:`Z = U\,\mathrm{diag}(s)\,U^⊤` (U n × b with orthonormal columns) and a new
    term :math:`PP^⊤` (P n × a), returns :math:`U', s'` with

    .. math::

        U'\,\mathrm{diag}(s')\,U'^⊤ = D_τ\big[α Z + β PP^⊤\big],\qquad
        D_τ[M] = \sum_{i:\,|μ_i| > τ} \mathrm{sign}(μ_i)(|μ_i| − τ)\, v_i v_i^⊤

    for the eigenpairs :math:`(μ_i, v_i)` of the symmetric M: the proximal operator of
    :math:`τ‖\cdot‖_*`, the SVT of Cai et al. (2010) written for a symmetric matrix, whose
    singular values are the :math:`|μ_i|` and whose singular vectors are the :math:`v_i` up to
    sign.  For a positive semi-definite M (SoCK's iterate: α = 1 − η_t ≥ 0 for t ≥ 2 and
    :math:`Z_1 = 0`) it keeps the eigenvalues above τ, shifted down by τ.

    How (Avron et al. 2012, Lemma 2.4): project the new columns off U twice (classical
    Gram–Schmidt with reorthogonalization), :math:`P_⊥ = P − UC`, :math:`C = U^⊤P`; a thin
    Householder QR :math:`P_⊥ = QR`; then :math:`[U, Q]` is orthonormal and

    .. math::

        αZ + βPP^⊤ = [U, Q]\Big(\begin{bmatrix}α\,\mathrm{diag}(s) & 0\\0 & 0\end{bmatrix}
        + β\begin{bmatrix}C\\R\end{bmatrix}\begin{bmatrix}C\\R\end{bmatrix}^⊤\Big)[U, Q]^⊤,

    so the eigenpairs of M are those of the ``(b + a) × (b + a)`` core, rotated by [U, Q]:
    :math:`U' = U V_1 + Q V_2`.  Cost :math:`O(n\,a\,b + n\,a^2 + n(a + b)b')` flops, no n × n
    matrix.  When :math:`b + a > n` the columns cannot all be orthogonal to U; then a thin QR of
    the concatenation [U, P] (n × n at most) is used instead, the same lemma.

    ``max_rank`` (b in paper 003's storage formula) keeps only the ``max_rank`` eigenvalues of
    largest magnitude after thresholding: a truncation that Algorithm 1 does not have (its
    iterate's rank is whatever the threshold leaves), added so that the factor fits a memory
    budget.  With it, the result is the best rank-``max_rank`` approximation of
    :math:`D_τ[M]`, no longer the exact proximal step.

    Parameters
    ----------
    U : ndarray of shape (n, b)
        Orthonormal columns (b may be 0: Z = 0).
    s : ndarray of shape (b,)
    P : ndarray of shape (n, a)
    scale_old, scale_new : float
        α and β.
    threshold : float
        τ ≥ 0.
    max_rank : int or None
        Keep at most this many eigenpairs (None: all above the threshold).
    overwrite_p : bool, default=False
        Use P as the workspace of its projection and QR (saves an n × a copy); P is then
        destroyed.  It must be a Fortran-ordered float64 array for the QR to work in place.

    Returns
    -------
    U_new : ndarray of shape (n, b')
        Orthonormal columns, ordered by decreasing ``|s_new|``.
    s_new : ndarray of shape (b',)
    """
    U = np.asarray(U, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64).ravel()
    n, b = U.shape
    if P.ndim != 2 or P.shape[0] != n:
        raise ValueError(f"P must have {n} rows like U, got shape {P.shape}")
    if s.shape[0] != b:
        raise ValueError(f"s must have one value per column of U ({b}), got {s.shape[0]}")
    threshold = float(threshold)
    if not threshold >= 0:
        raise ValueError(f"threshold must be >= 0, got {threshold!r}")
    if max_rank is not None and int(max_rank) < 0:
        raise ValueError(f"max_rank must be None or >= 0, got {max_rank!r}")
    a = P.shape[1]
    ops = get_ops()
    if b + a <= n:
        if overwrite_p and P.flags.f_contiguous and P.dtype == np.float64:
            work = P
        else:
            work = np.array(P, dtype=np.float64, order="F")
        C = np.zeros((b, a))
        for _ in range(2 if b else 0):
            # Twice: one Gram–Schmidt pass leaves ~eps·κ of P's part in span(U) (Kahan's
            # "twice is enough").
            step = ops.matmul(U.T, work)
            _subtract_projection(work, U, step)
            C += step
        Q, R = sla.qr(work, mode="economic", overwrite_a=True, check_finite=False)
        G = np.vstack([C, R])
        core = scale_new * ops.matmul(G, G.T)
        core[np.arange(b), np.arange(b)] += scale_old * s
        blocks = (U, Q)
    else:
        Q, R = sla.qr(np.hstack([U, P]), mode="economic", check_finite=False)
        weights = np.concatenate([scale_old * s, np.full(a, float(scale_new))])
        core = ops.matmul(R * weights, R.T)
        blocks = (Q,)
    core = (core + core.T) / 2
    mu, V = np.linalg.eigh(core)
    keep = np.flatnonzero(np.abs(mu) > threshold)
    keep = keep[np.argsort(-np.abs(mu[keep]), kind="stable")]
    if max_rank is not None:
        keep = keep[: int(max_rank)]
    s_new = np.sign(mu[keep]) * (np.abs(mu[keep]) - threshold)
    V = V[:, keep]
    U_new = np.empty((n, keep.size), dtype=np.float64, order="F")
    if len(blocks) == 2:
        # U' = U V₁ + Q V₂ row block by row block: no second n × b' temporary.
        rows_per_block = max(FEATURE_BLOCK_BYTES // (8 * max(keep.size, 1)), 1)
        for rows in row_slices(n, rows_per_block):
            U_new[rows] = ops.matmul(U[rows], V[:b])
            U_new[rows] += ops.matmul(Q[rows], V[b:])
    else:
        ops.matmul(Q, V[: Q.shape[1]], out=U_new)
    return U_new, s_new
