r"""Preconditioners for the Nyström LapRLS system ``H α = z`` (paper 000 §4.2).

Notation (paper 000 eq. 4): ``H = K_msᵀK_ms + λ_A K_ss + λ_I K_nsᵀ L K_ns``; ``n`` points, ``m``
labeled, ``s`` centers.  Every preconditioner is an object whose ``apply(V)`` returns ``P⁻¹ V``
for an ``(s, r)`` block (``apply_t`` is the same, ``P`` being symmetric) and whose ``dense()``
returns the ``P`` it inverts (jitter included), for tests.  Build them by name with
:func:`make_preconditioner` (lookup table :data:`PRECONDITIONERS`).

**Nyström factorization.**  With ``K_ss + εI = TᵀT`` (``T`` upper, ``ε`` the jitter of
:func:`~semiscale.linalg.nystrom.jittered_cholesky`) and the Nyström features
``Φ = K_ns T⁻¹`` (``ΦΦᵀ = K_ns K_ss⁻¹ K_sn``), the Hessian is exactly

.. math::

    H = T^\top G\, T,\qquad G = Φ^\top (J + λ_I L)\, Φ + λ_A I \quad (ε = 0),

and ``G ⪰ λ_A I`` is well conditioned even when ``K_ss`` is numerically singular.  The FALKON-style
preconditioners keep this form, ``P = Tᵀ Ĝ T`` with ``Ĝ = AᵀA`` (Cholesky), so that

.. math::

    P^{-1} V = T^{-1} A^{-1} A^{-\top} T^{-\top} V

costs four ``s × s`` triangular solves and never squares the condition number of ``K_ss``.

**Names.**  ``"paper5"``/``"paper6"``: paper 000's eq. (5)/(6), formed explicitly and factorized
(jittered Cholesky, LU if not PSD); ``"paper"`` picks (5) when ``m ≤ √n``, else (6);
``"falkon"``: the same ``P`` in the factored form above (``variant="auto"|5|6``);
``"sampled-hessian"`` (the default): ``Ĝ`` with the exact labeled term and the graph term
estimated on a row sample of the real graph — compared with ``"paper"`` on every dataset of
paper 000's Table 3 in ``benchmarks/results/nystrom_table3.md`` (columns "Nyström-PCG" and
"Nyström-PCG (paper P)"); ``"jacobi"``: ``diag(H)``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._memory import block_rows
from ..linalg.nystrom import _rng, jittered_cholesky

#: Pivot floor of ``T = chol(K_ss)`` (squared pivot relative to the mean diagonal, jitter added
#: below it) used when PCG breaks down with the default ``s·u`` floor (``t_min_pivot`` option;
#: the estimators retry with it).  Measured on a 4000-point skin_nonskin subsample (s = 400,
#: gamma = 4 × median, ambient_reg 1e-6): with ``s·u`` PCG broke down (pᵀHp ≤ 0) far from the
#: solution; with 1e-10 it converged (``benchmarks/skin_convergence.py``, second table of
#: ``benchmarks/results/skin_convergence.md``).  Not the default: the jitter loosens P where
#: K_ss is ill-conditioned (space_ga, ambient_reg 1e-6: up to 17 iterations instead of 6).
T_MIN_PIVOT = 1e-10

#: Default Laplacian sample of ``"sampled-hessian"``: ``t = ⌈s/8⌉`` rows, at most
#: ``LAPLACIAN_ROWS_CAP`` when ``K_ns`` is cached, and ``⌈s/4⌉`` when it is not (then every PCG
#: iteration recomputes two n × s kernel passes, so a better P pays for itself).  Measured by
#: ``benchmarks/laplacian_sample.py`` (``benchmarks/results/laplacian_sample.md``).  At least
#: ``LAPLACIAN_ROWS_MIN`` rows (a few hundred features, negligible work): the estimate's noise
#: depends on ``t`` itself, and ``t = 5`` rows (s = 35, a 500-point ijcnn1 subsample at
#: intrinsic_reg 1) needed 9 PCG iterations where 20-40 rows need 5-6.
LAPLACIAN_ROWS_FRACTION = 1 / 8
LAPLACIAN_ROWS_CAP = 256
LAPLACIAN_ROWS_MIN = 32
LAPLACIAN_ROWS_FRACTION_UNCACHED = 1 / 4

#: The default sample grows with the graph term's share ``ρ`` of ``Ĝ``'s trace.  The sampled
#: term's relative error falls like ``1/√t``, so its error relative to ``H`` is about
#: ``ρ/√t``: above ``GRAPH_SHARE_REFERENCE`` the sample is
#: ``t · min((ρ / GRAPH_SHARE_REFERENCE)², LAPLACIAN_ROWS_MAX_GROWTH)`` rows.  Measured by
#: ``benchmarks/laplacian_share.py`` (``benchmarks/results/laplacian_share.md``): at the bench's
#: parameters ``ρ < 0.011`` on every dataset but phishing; on phishing ``t = s/8`` needs 7–8
#: PCG iterations at ``ρ ≈ 0.04`` (intrinsic_reg 3.16) and 11–13 at ``ρ ≈ 0.11`` (10).
GRAPH_SHARE_REFERENCE = 0.05
LAPLACIAN_ROWS_MAX_GROWTH = 4.0

__all__ = [
    "PRECONDITIONERS",
    "DensePreconditioner",
    "FactoredPreconditioner",
    "JacobiPreconditioner",
    "falkon_preconditioner",
    "jacobi_preconditioner",
    "make_preconditioner",
    "paper_preconditioner",
    "sampled_hessian_preconditioner",
]


class DensePreconditioner:
    """``P`` given as an explicit ``s × s`` matrix, factorized once.

    Cholesky with adaptive jitter (``P + jitter_·I = LLᵀ``); LU when ``P`` is not positive
    semi-definite (paper 000, Remark 1).  ``method_`` says which.
    """

    def __init__(self, P):
        P = np.asarray(P, dtype=np.float64)
        self.P = (P + P.T) / 2
        try:
            self._factor, self.jitter_ = jittered_cholesky(self.P)
            self.method_ = "cholesky"
        except np.linalg.LinAlgError:
            self._factor, self.jitter_ = sla.lu_factor(self.P, check_finite=False), 0.0
            self.method_ = "lu"

    def apply(self, V):
        """``P⁻¹ V``."""
        if self.method_ == "cholesky":
            return sla.cho_solve((self._factor, True), V, check_finite=False)
        return sla.lu_solve(self._factor, V, check_finite=False)

    apply_t = apply

    def dense(self):
        """The matrix inverted by :meth:`apply`."""
        return self.P + self.jitter_ * np.eye(self.P.shape[0])


class FactoredPreconditioner:
    r"""``P = Tᵀ Ĝ T`` from the lower Cholesky factor ``L = Tᵀ`` of ``K_ss`` and an SPD ``Ĝ``.

    ``apply(V) = T⁻¹ A⁻¹ A⁻ᵀ T⁻ᵀ V`` with ``Ĝ + jitter_·I = AᵀA``.  ``G_triangle="lower"``
    says that only ``G``'s lower triangle holds ``Ĝ`` (as BLAS ``syrk`` leaves it); the
    Cholesky factorization reads nothing else, so ``Ĝ`` is never mirrored except by
    :meth:`dense`.
    """

    def __init__(self, L, G, *, G_triangle=None):
        if G_triangle not in (None, "lower"):
            raise ValueError(f"G_triangle must be None or 'lower', got {G_triangle!r}")
        self.L = L
        G = np.asarray(G, dtype=np.float64)
        self._G_lower = G_triangle == "lower"
        self.G = G if self._G_lower else (G + G.T) / 2
        self._A, self.jitter_ = jittered_cholesky(self.G)

    def apply(self, V):
        """``P⁻¹ V``: four triangular solves."""
        W = sla.solve_triangular(self.L, V, lower=True, check_finite=False)
        W = sla.cho_solve((self._A, True), W, check_finite=False)
        return sla.solve_triangular(self.L, W, lower=True, trans="T", check_finite=False)

    apply_t = apply

    def dense(self):
        """``Tᵀ (Ĝ + jitter_·I) T``."""
        G = np.tril(self.G) + np.tril(self.G, -1).T if self._G_lower else self.G.copy()
        G.flat[:: G.shape[0] + 1] += self.jitter_
        return self.L @ G @ self.L.T


class JacobiPreconditioner:
    """``P = diag(H)`` (zero diagonal entries are replaced by 1)."""

    def __init__(self, diagonal):
        d = np.asarray(diagonal, dtype=np.float64)
        self.diagonal = np.where(d > 0, d, 1.0)

    def apply(self, V):
        V = np.asarray(V)
        return V / (self.diagonal if V.ndim == 1 else self.diagonal[:, None])

    apply_t = apply

    def dense(self):
        return np.diag(self.diagonal)


# ---------------------------------------------------------------------------------- builders
def _float(A):
    return np.asarray(A, dtype=np.float64)


def _paper_terms(hessian, center_laplacian, variant, laplacian_scale):
    n, m, s = hessian.n_samples_, hessian.n_labeled_, hessian.n_centers_
    if variant == "auto":
        variant = 5 if m <= math.sqrt(n) else 6
    if variant not in (5, 6):
        raise ValueError(f"variant must be 5, 6 or 'auto', got {variant!r}")
    lam_I = hessian.intrinsic_lambda if hessian.laplacian is not None else 0.0
    L_ss = None
    if lam_I > 0:
        if center_laplacian is None:
            raise ValueError(
                "the paper's preconditioner (eqs. 5-6) needs center_laplacian, the Laplacian of a "
                "kNN graph on the s centers built like the full graph"
            )
        L_ss = sp.csr_matrix(center_laplacian, dtype=np.float64)
        if L_ss.shape != (s, s):
            raise ValueError(f"center_laplacian must have shape ({s}, {s}), got {L_ss.shape}")
    scale = lam_I * (n / s) ** 2 if laplacian_scale is None else lam_I * laplacian_scale
    return variant, L_ss, scale


def paper_preconditioner(hessian, center_laplacian=None, *, variant="auto", laplacian_scale=None):
    r"""Paper 000's preconditioner, formed explicitly and factorized.

    .. math::

        P_5 = K_{ms}^\top K_{ms} + λ_A K_{ss} + c\, K_{ss} L_{ss} K_{ss} \quad (m \le \sqrt n,
        \text{ eq. 5}), \qquad
        P_6 = \tfrac{m}{s} K_{ss}^2 + λ_A K_{ss} + c\, K_{ss} L_{ss} K_{ss} \quad (\text{eq. 6}),

    with ``c = λ_I n²/s²`` (or ``λ_I · laplacian_scale``) and ``L_ss`` the Laplacian of a kNN graph
    on the centers.  ``K_ss²`` squares the condition number of ``K_ss``, so jitter is usually
    needed; prefer :func:`falkon_preconditioner`, the same ``P`` in factored form.
    """
    variant, L_ss, c = _paper_terms(hessian, center_laplacian, variant, laplacian_scale)
    K_ss = _float(hessian.kernel_ss())
    s, m = hessian.n_centers_, hessian.n_labeled_
    if variant == 5:
        K_ms = _float(hessian.kernel_ms())
        P = K_ms.T @ K_ms
    else:
        P = (m / s) * (K_ss @ K_ss)
    P += hessian.ambient_lambda * K_ss
    if L_ss is not None:
        P += c * (K_ss @ (L_ss @ K_ss))
    return DensePreconditioner(P)


def falkon_preconditioner(
    hessian, center_laplacian=None, *, variant="auto", laplacian_scale=None, t_min_pivot=None
):
    r"""Paper 000's eq. (5)/(6) in FALKON's factored form ``P = Tᵀ Ĝ T`` (module docstring).

    With ``K_ss ≈ TᵀT``: ``K_ss² = Tᵀ(TTᵀ)T``, ``K_ss L_ss K_ss = Tᵀ(T L_ss Tᵀ)T`` and
    ``K_msᵀK_ms = Tᵀ(Φ_mᵀΦ_m)T`` with ``Φ_m = K_ms T⁻¹``, hence

    .. math::

        Ĝ_5 = Φ_m^\top Φ_m + λ_A I + c\, T L_{ss} T^\top, \qquad
        Ĝ_6 = \tfrac{m}{s} T T^\top + λ_A I + c\, T L_{ss} T^\top,

    both ``⪰ λ_A I``: only ``K_ss`` itself needs jitter.  ``c`` as in
    :func:`paper_preconditioner`; ``t_min_pivot`` as in :func:`sampled_hessian_preconditioner`.
    """
    variant, L_ss, c = _paper_terms(hessian, center_laplacian, variant, laplacian_scale)
    L, _ = jittered_cholesky(_float(hessian.kernel_ss()).T, min_pivot=t_min_pivot)  # symmetric
    s, m = hessian.n_centers_, hessian.n_labeled_
    if variant == 5:
        Phi_t = sla.solve_triangular(L, _float(hessian.kernel_ms()).T, lower=True)
        G = Phi_t @ Phi_t.T
    else:
        G = (m / s) * (L.T @ L)
    G += hessian.ambient_lambda * np.eye(s)
    if L_ss is not None:
        G += c * (L.T @ (L_ss @ L))
    return FactoredPreconditioner(L, G)


def _edge_form(laplacian):
    """``L ≈ Lap(W) + diag(c)`` with ``W = max(−offdiag(L), 0)``, ``c = max(diag(L) − W1, 0)``.

    Exact for ``L = D − W`` (+ ridge); for other Laplacians (normalized, powers) the clipping
    keeps the sampled estimate positive semi-definite.
    """
    L = sp.csr_matrix(laplacian, dtype=np.float64)
    W = -(L - sp.diags(L.diagonal()))
    W.data = np.maximum(W.data, 0)
    W.eliminate_zeros()
    c = np.maximum(L.diagonal() - np.asarray(W.sum(axis=1)).ravel(), 0)
    return W.tocsr(), c


def _features_t(hessian, L, index):
    """``Φᵀ = T⁻ᵀ K(X[index], C)ᵀ``, shape (s, len(index)).

    A point that is center ``j`` has ``K(x, C) = K_ss[j] = (L Lᵀ − εI)[j]``, so its feature
    column is ``Lᵀ e_j − ε L⁻¹ e_j``: row ``j`` of ``L``, read without a kernel row or a
    triangular solve (the ``ε`` term, at most the jitter in norm, is dropped).
    """
    index = np.asarray(index)
    pos = hessian.center_positions(index)
    on_center = pos >= 0
    if not on_center.any():
        # The kernel rows are a fresh copy (cache rows are gathered), so solve in place.
        K_t = _float(hessian.kernel_rows(index)).T
        return sla.solve_triangular(L, K_t, lower=True, overwrite_b=True, check_finite=False)
    F = np.empty((L.shape[0], index.size), order="F")
    F[:, on_center] = L[pos[on_center]].T
    other = ~on_center
    if other.any():
        K_t = _float(hessian.kernel_rows(index[other])).T
        F[:, other] = sla.solve_triangular(L, K_t, lower=True, overwrite_b=True, check_finite=False)
    return F


def _center_gram(L, pos, weight):
    """A new ``G`` (lower triangle) ``= weight · Σ_{j ∈ pos} L[j]ᵀ L[j]``.

    This is the labeled term of the labeled points that are centers (:func:`_features_t`).
    When every center is labeled (``m = s`` with the labeled points taken as centers) the sum
    is ``LᵀL``, which LAPACK's ``lauum`` forms in ``s³/3`` flops (a third of ``syrk``'s).
    """
    s = L.shape[0]
    if pos.size == s and np.array_equal(np.sort(pos), np.arange(s)):
        G, info = sla.lapack.dlauum(np.asfortranarray(L), lower=1)
        if info != 0:  # pragma: no cover - lauum fails only on invalid arguments
            raise np.linalg.LinAlgError(f"LAPACK dlauum failed (info={info})")
        # lauum wrote LᵀL's lower triangle; its upper one is L's, which G's lower-triangle
        # convention (see _add_gram) never reads.
        if weight != 1.0:
            G *= weight
        return G
    G = np.zeros((s, s), order="F")
    if pos.size:
        _add_gram(G, L[pos].T, weight)
    return G


def _add_gram(G, F_t, weight=1.0):
    """``G += weight · F_t F_tᵀ`` for ``F_t`` of shape (s, r), lower triangle only (BLAS syrk).

    Returns the trace added, ``weight · ‖F_t‖²_F``.  Half the flops of ``F_t @ F_t.T``.
    ``G`` (Fortran-ordered) is updated in place; its upper triangle is never read
    (:class:`FactoredPreconditioner` with ``G_triangle="lower"``).
    """
    if not F_t.shape[1]:
        return 0.0
    # Feature blocks come Fortran-ordered from the triangular solves: no copy here.
    F_t = np.asfortranarray(F_t, dtype=np.float64)
    before = np.trace(G)  # s strided reads, where ‖F_t‖²_F would read all of F_t again
    sla.blas.dsyrk(weight, F_t, beta=1.0, c=G, trans=0, lower=1, overwrite_c=1)
    return float(np.trace(G) - before)


def sampled_hessian_preconditioner(
    hessian, *, n_rows=None, n_labeled_rows=None, random_state=None, t_min_pivot=None
):
    r"""``P = Tᵀ Ĝ T`` with ``Ĝ`` an unbiased row-sampled estimate of the exact ``G``.

    The exact ``G = Φᵀ(J + λ_I L)Φ + λ_A I`` (module docstring) is a sum over rows of ``Φ``.
    Writing ``L = Σ_{i} Σ_{j≠i} ½ W_ij (e_i − e_j)(e_i − e_j)ᵀ + diag(c)``, keep for a uniform
    sample ``R`` of ``t = n_rows`` points their half-edges and diagonal terms:

    .. math::

        \hat G = w_J\, Φ_{J'}^\top Φ_{J'} + λ_I \frac{n}{t}\, Φ_U^\top \hat L_U Φ_U + λ_A I,
        \qquad
        \hat L = \operatorname{Lap}\big(\tfrac12(χ_R W + W χ_R)\big) + \operatorname{diag}(c\,χ_R),

    where ``χ_R`` is the 0/1 diagonal of ``R``, ``U = R ∪ N(R)`` the sampled points and their
    graph neighbours, and ``J'`` the labeled points: all of them (``w_J = 1``) when
    ``m ≤ n_labeled_rows``, else a uniform sample of that many (``w_J = m / n_labeled_rows``).
    ``E[Ĝ] = G``, ``Ĝ ⪰ λ_A I`` (``L̂`` is a Laplacian plus a non-negative diagonal), and
    ``Ĝ = G`` (so ``P = H`` up to jitter) when ``t ≥ n`` and ``n_labeled_rows ≥ m``.  Unlike paper
    000's ``(n²/s²) K_ss L_ss K_ss``, no separate graph on the centers and no guessed scale are
    needed: the estimate uses the real graph.

    Both terms are accumulated as Gram matrices by BLAS ``syrk``: ``Φ_{J'}`` row by row and
    ``L̂`` in its edge form, one row ``√(W_rj/2)(φ_r − φ_j)`` per sampled half-edge and
    ``√c_r φ_r`` per sampled point.  Cost: ``Φ`` rows for the ``m' + |U|`` points
    (``m'`` labeled, ``|U| ≈ t(k + 1)``; a triangular solve, ``s²`` flops per row, plus their kernel
    rows unless ``K_ns`` is cached) and ``s²`` flops per Gram row, in chunks under the operator's
    memory budget; plus the two ``s³/3`` Cholesky factorizations of ``K_ss`` and ``Ĝ``.  Points
    that are centers cost nothing of this: their features are rows of ``T``'s transpose
    (:func:`_features_t`), and with every center labeled the labeled term is ``TTᵀ``
    (``lauum``, ``s³/3``).

    Why the labeled term is exact by default: the labeled block ``Φ_mᵀΦ_m`` dominates ``H`` for
    the paper's ``m = s = 0.1 n``, and a rank-``t`` subsample of it (``t < s``) leaves most of
    ``H``'s large eigenvalues unmatched.  Measured by ``benchmarks/preconditioner_labeled.py``
    (``benchmarks/results/preconditioner_labeled.md``: repeat 0 of ``semiscale bench nystrom``'s
    protocol, CV-chosen parameters, relative residual 1e-6), with ``t = s/4`` Laplacian rows:
    sampling the labeled term to ``t`` rows needed 10–33 iterations on madelon, space_ga,
    abalone, phishing and ijcnn1, the exact labeled term 3–4.  The Laplacian term tolerates a
    much smaller sample (``t = s/16``…``s/4``: 3–10 iterations with the exact labeled term on
    every dataset of that table).

    Parameters
    ----------
    hessian : NystromLapRLSHessian
    n_rows : int, optional
        Laplacian sample size ``t``; default ``min(⌈s/8⌉, 256)`` (at least 32) when ``K_ns``
        is cached, ``⌈s/4⌉`` when it is recomputed (:data:`LAPLACIAN_ROWS_FRACTION`;
        ``benchmarks/results/laplacian_sample.md``); the default then grows, up to 4×, when
        the sampled graph term carries more than :data:`GRAPH_SHARE_REFERENCE` of ``Ĝ``'s
        trace (more rows are drawn and the first ones re-weighted: the estimate is the one
        drawn at the final size).  The returned preconditioner records the size used,
        ``laplacian_rows_``, and the share, ``graph_trace_share_``.
    n_labeled_rows : int, optional
        Labeled rows kept; default ``max(4s, ⌈n/4⌉)``: all of them whenever ``m ≤ n/4`` (the
        usual semi-supervised case), a uniform sample beyond (``benchmarks/
        skin_convergence.py`` shows what a labeled subsample costs when the labeled term is
        large).
    random_state : int, Generator, RandomState or None
    t_min_pivot : float, optional
        Pivot floor of ``T`` (``min_pivot`` of :func:`jittered_cholesky`); None is ``s·u``.
        :data:`T_MIN_PIVOT` after a breakdown.
    """
    rng = _rng(random_state)
    n, m, s = hessian.n_samples_, hessian.n_labeled_, hessian.n_centers_
    t = _default_laplacian_rows(hessian) if n_rows is None else int(n_rows)
    if t < 1:
        raise ValueError(f"n_rows must be positive, got {n_rows!r}")
    t_J = max(4 * s, math.ceil(n / 4), t) if n_labeled_rows is None else int(n_labeled_rows)
    if t_J < 1:
        raise ValueError(f"n_labeled_rows must be positive, got {n_labeled_rows!r}")
    # K_ss is symmetric, so its transpose (Fortran-ordered: LAPACK's working copy is a plain
    # memory copy instead of a transposing one) is the same matrix.
    L, _ = jittered_cholesky(_float(hessian.kernel_ss()).T, min_pivot=t_min_pivot)
    labeled = hessian.labeled_index_
    rows, w = (labeled, 1.0) if m <= t_J else (rng.choice(labeled, t_J, replace=False), m / t_J)
    G = _labeled_gram(hessian, L, rows, w)
    labeled_trace = float(np.trace(G))  # the diagonal is in G's lower triangle
    t_used, share = 0, 0.0
    if hessian.laplacian is not None:
        W, c = _edge_form(hessian.laplacian)
        order = rng.permutation(n)  # every prefix is a uniform sample without replacement
        t_used = min(t, n)
        graph_trace = _add_laplacian_rows(G, hessian, L, W, c, order[:t_used], n / t_used)
        share = _share(graph_trace, labeled_trace, hessian.ambient_lambda * s)
        if n_rows is None and share > GRAPH_SHARE_REFERENCE:
            growth = min((share / GRAPH_SHARE_REFERENCE) ** 2, LAPLACIAN_ROWS_MAX_GROWTH)
            t_new = min(n, math.ceil(t_used * growth))
            if t_new > t_used:
                # G = labeled + graph estimate from t_used rows.  For the larger sample those
                # rows keep a share a = t_used/t_new: G <- a·G + (1 − a)·labeled, with the labeled
                # term recomputed (only here, where the extra rows cost more than it does).
                keep = t_used / t_new
                G *= keep
                G_labeled = _labeled_gram(hessian, L, rows, w)
                G_labeled *= 1 - keep
                G += G_labeled
                del G_labeled
                graph_trace = keep * graph_trace + _add_laplacian_rows(
                    G, hessian, L, W, c, order[t_used:t_new], n / t_new
                )
                t_used = t_new
                share = _share(graph_trace, labeled_trace, hessian.ambient_lambda * s)
    G.flat[:: s + 1] += hessian.ambient_lambda
    P = FactoredPreconditioner(L, G, G_triangle="lower")
    P.laplacian_rows_ = t_used
    P.graph_trace_share_ = share
    return P


def _labeled_gram(hessian, L, rows, weight):
    """A new ``G`` (lower triangle) holding the labeled term ``weight · Φ_rowsᵀ Φ_rows``."""
    pos = hessian.center_positions(rows)
    G = _center_gram(L, pos[pos >= 0], weight)
    other = rows[pos < 0]
    for sl in _chunks(len(other), L.shape[0], 1, hessian):
        _add_gram(G, _features_t(hessian, L, other[sl]), weight)
    return G


def _share(graph_trace, labeled_trace, ambient_trace):
    total = graph_trace + labeled_trace + ambient_trace
    return graph_trace / total if total > 0 else 0.0


def _add_laplacian_rows(G, hessian, L, W, c, sample, weight):
    """Add the graph term of the sampled points ``sample`` with weight ``λ_I · weight``.

    Returns the trace added.  See :func:`sampled_hessian_preconditioner` for the edge form.
    """
    R = np.sort(sample)
    degree = W.nnz / max(W.shape[0], 1) + 1
    trace = 0.0
    for sl in _chunks(R.size, L.shape[0], 2 * degree, hessian):
        Rb = R[sl]
        half = sp.coo_matrix(W[Rb])  # half-edges (r -> j), weight W_rj / 2 each
        U = np.union1d(Rb, half.col)
        pos_r = np.searchsorted(U, Rb)
        F = _features_t(hessian, L, U)  # (s, |U|)
        root = np.sqrt(half.data / 2 * weight)
        n_edges = half.data.size
        # Edge incidence rows: +√(w/2) at the sampled point, −√(w/2) at its neighbour.
        incidence = sp.csr_matrix(
            (
                np.concatenate([root, -root]),
                (
                    np.tile(np.arange(n_edges), 2),
                    np.concatenate([pos_r[half.row], np.searchsorted(U, half.col)]),
                ),
            ),
            shape=(n_edges, U.size),
        )
        trace += _add_gram(G, np.asarray((incidence @ F.T).T), hessian.intrinsic_lambda)
        trace += _add_gram(G, F[:, pos_r] * np.sqrt(c[Rb] * weight), hessian.intrinsic_lambda)
    return trace


def _default_laplacian_rows(hessian):
    """``t`` by the rule of :data:`LAPLACIAN_ROWS_FRACTION` and its neighbours."""
    s = hessian.n_centers_
    if not getattr(hessian, "cached_", True):
        t = math.ceil(s * LAPLACIAN_ROWS_FRACTION_UNCACHED)
    else:
        t = min(math.ceil(s * LAPLACIAN_ROWS_FRACTION), LAPLACIAN_ROWS_CAP)
    return max(t, LAPLACIAN_ROWS_MIN)


def _chunks(n_items, s, rows_per_item, hessian):
    """Slices of items whose kernel rows and features (``3·s`` floats per row) fit the budget."""
    per_item = int(math.ceil(rows_per_item)) * 3 * s * 8
    budget = max(hessian.memory_budget - 3 * s * s * 8, 1)
    size = block_rows(n_items, per_item, budget, what="sampled-Hessian preconditioner chunk")
    return [slice(i, min(i + size, n_items)) for i in range(0, n_items, size)]


def jacobi_preconditioner(hessian):
    """``P = diag(H)`` from :meth:`NystromLapRLSHessian.diagonal`."""
    return JacobiPreconditioner(hessian.diagonal())


#: Lookup table ``name -> builder(hessian, **options)``; ``None`` means no preconditioner.
PRECONDITIONERS = {
    "paper": paper_preconditioner,
    "paper5": lambda h, center_laplacian=None, **kw: paper_preconditioner(
        h, center_laplacian, variant=5, **kw
    ),
    "paper6": lambda h, center_laplacian=None, **kw: paper_preconditioner(
        h, center_laplacian, variant=6, **kw
    ),
    "falkon": falkon_preconditioner,
    "sampled-hessian": sampled_hessian_preconditioner,
    "jacobi": jacobi_preconditioner,
    None: lambda h, **kw: None,
}


def make_preconditioner(name, hessian, **options):
    """Build the preconditioner ``name`` (a key of :data:`PRECONDITIONERS`) for ``hessian``.

    ``options`` go to the builder: ``center_laplacian``, ``variant`` and ``laplacian_scale`` for
    ``"paper*"``/``"falkon"``; ``n_rows`` and ``random_state`` for ``"sampled-hessian"``.
    """
    try:
        builder = PRECONDITIONERS[name]
    except (KeyError, TypeError):
        names = sorted(k for k in PRECONDITIONERS if k is not None)
        raise ValueError(
            f"preconditioner={name!r} is unknown; choose one of {names} or None"
        ) from None
    return builder(hessian, **options)
