r"""Preconditioners for the Nyström LapRLS system ``H α = z`` (paper 000 §4.2).

Notation (paper 000 eq. 4): ``H = K_msᵀK_ms + λ_A K_ss + λ_I K_nsᵀ L K_ns``; ``n`` points, ``m``
labeled, ``s`` centers.  Every builder reads the system only through the documented protocol
:class:`semiscale.linalg.system.NystromSystem` (sizes, ``λ_A``, ``λ_I``, ``L``, ``K_ss``, kernel
rows of ``K_ns``, which points are centers, ``diag H``) — never an operator's internals — and
does its linear algebra through the array-operations layer (:func:`semiscale.linalg.ops.get_ops`).
Every preconditioner is an object whose ``apply(V)`` returns ``P⁻¹ V`` for an ``(s, r)`` block
(``apply_t`` is the same, ``P`` being symmetric), whose ``dense()`` returns the ``P`` it inverts
(jitter included), for tests, and whose ``aslinearoperator()`` wraps ``apply`` as a SciPy
``LinearOperator`` (pyamg's ``aspreconditioner()``).  Build them by name with
:func:`make_preconditioner` (lookup table :data:`PRECONDITIONERS`).

**Nyström factorization** (:class:`semiscale.linalg.system.NystromFactor`).  With
``K_ss + εI = TᵀT`` (``T`` upper, ``ε`` the jitter of
:meth:`~semiscale.linalg.ops.ArrayOps.jittered_cholesky`) and the Nyström features
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
paper 000's Table 3 in ``benchmarks/results/paper000/table3.md`` (columns "Nyström-PCG" and
"Nyström-PCG (paper P)"); ``"jacobi"``: ``diag(H)``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from ..linalg.centers import _rng
from ..linalg.ops import get_ops
from ..linalg.system import NystromFactor

#: Pivot floor of ``T = chol(K_ss)`` (squared pivot relative to the mean diagonal, jitter added
#: below it) used when PCG breaks down with the default ``s·u`` floor (``t_min_pivot`` option;
#: the estimators retry with it).  Measured on a 4000-point skin_nonskin subsample (s = 400,
#: gamma = 4 × median, ambient_reg 1e-6): with ``s·u`` PCG broke down (pᵀHp ≤ 0) far from the
#: solution; with 1e-10 it converged (second table of
#: ``benchmarks/results/skin_convergence/``).  Not the default: the jitter
#: loosens P where K_ss is ill-conditioned (space_ga, ambient_reg 1e-6: up to 17 iterations
#: instead of 6).
T_MIN_PIVOT = 1e-10

#: Default Laplacian sample of ``"sampled-hessian"``: ``t = ⌈s/8⌉`` rows, at most
#: ``LAPLACIAN_ROWS_CAP`` when ``K_ns`` is cached, and ``⌈s/4⌉`` when it is not (then every PCG
#: iteration recomputes two n × s kernel passes, so a better P pays for itself).  Measured by
#: ``benchmarks/results/laplacian_sample/``.  At least
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
#: ``t · min((ρ / GRAPH_SHARE_REFERENCE)², LAPLACIAN_ROWS_MAX_GROWTH)`` rows.  Chosen by
#: measurement: ``ρ < 0.011`` at the bench's parameters except on phishing, where ``t = s/8``
#: needs 7–8 PCG iterations at ``ρ ≈ 0.04`` and 11–13 at ``ρ ≈ 0.11``
#: (``benchmarks/results/laplacian_share/``).  With few labels ``ρ ≈ 1`` and the cap decides:
#: 16 rather than 4 took two moons with one label per class from 2,102–4,078 to 61–95 PCG
#: iterations at 10⁴–10⁵ points, same predictions; 64 cost more to build than it saved (ad
#: hoc runs of ``NystromLapRLSClassifier()``, s = 1,000).
GRAPH_SHARE_REFERENCE = 0.05
LAPLACIAN_ROWS_MAX_GROWTH = 16.0

__all__ = [
    "PRECONDITIONERS",
    "DensePreconditioner",
    "FactoredPreconditioner",
    "JacobiPreconditioner",
    "falkon_preconditioner",
    "jacobi_preconditioner",
    "make_preconditioner",
    "paper_preconditioner",
    "preconditioner_memory",
    "sampled_hessian_preconditioner",
]


class _Preconditioner:
    """``apply``/``apply_t`` of ``P⁻¹`` on ``(s, r)`` blocks, and its LinearOperator."""

    def aslinearoperator(self):
        """``P⁻¹`` as a :class:`scipy.sparse.linalg.LinearOperator` (``P`` is symmetric)."""
        s = self.size
        return LinearOperator(
            (s, s), matvec=self.apply, matmat=self.apply, rmatvec=self.apply_t, dtype=np.float64
        )


class DensePreconditioner(_Preconditioner):
    """``P`` given as an explicit ``s × s`` matrix, factorized once.

    Cholesky with adaptive jitter (``P + jitter_·I = LLᵀ``); LU when ``P`` is not positive
    semi-definite (paper 000, Remark 1).  ``method_`` says which.
    """

    def __init__(self, P):
        ops = get_ops()
        P = np.asarray(P, dtype=np.float64)
        self.P = (P + P.T) / 2
        self.size = P.shape[0]
        try:
            self._factor, self.jitter_ = ops.jittered_cholesky(self.P)
            self.method_ = "cholesky"
        except np.linalg.LinAlgError:
            self._factor, self.jitter_ = ops.lu_factor(self.P), 0.0
            self.method_ = "lu"

    def apply(self, V):
        """``P⁻¹ V``."""
        if self.method_ == "cholesky":
            return get_ops().cho_solve(self._factor, V)
        return get_ops().lu_solve(self._factor, V)

    apply_t = apply

    def dense(self):
        """The matrix inverted by :meth:`apply`."""
        return self.P + self.jitter_ * np.eye(self.P.shape[0])


class FactoredPreconditioner(_Preconditioner):
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
        self.size = L.shape[0]
        G = np.asarray(G, dtype=np.float64)
        self._G_lower = G_triangle == "lower"
        self.G = G if self._G_lower else (G + G.T) / 2
        self._A, self.jitter_ = get_ops().jittered_cholesky(self.G)

    def apply(self, V):
        """``P⁻¹ V``: four triangular solves."""
        ops = get_ops()
        W = ops.solve_triangular(self.L, V, lower=True)
        W = ops.cho_solve(self._A, W)
        return ops.solve_triangular(self.L, W, lower=True, trans=True)

    apply_t = apply

    def dense(self):
        """``Tᵀ (Ĝ + jitter_·I) T``."""
        G = np.tril(self.G) + np.tril(self.G, -1).T if self._G_lower else self.G.copy()
        G.flat[:: G.shape[0] + 1] += self.jitter_
        ops = get_ops()
        return ops.matmul(ops.matmul(self.L, G), self.L.T)


class JacobiPreconditioner(_Preconditioner):
    """``P = diag(H)`` (zero diagonal entries are replaced by 1)."""

    def __init__(self, diagonal):
        d = np.asarray(diagonal, dtype=np.float64)
        self.diagonal = np.where(d > 0, d, 1.0)
        self.size = d.size

    def apply(self, V):
        V = np.asarray(V)
        return V / (self.diagonal if V.ndim == 1 else self.diagonal[:, None])

    apply_t = apply

    def dense(self):
        return np.diag(self.diagonal)


# ---------------------------------------------------------------------------------- builders
def _float(A):
    return np.asarray(A, dtype=np.float64)


def _sizes(system):
    """``(n, m, s)`` of a :class:`~semiscale.linalg.system.NystromSystem`."""
    return system.n_samples, len(system.labeled_index), system.n_centers


def _paper_terms(system, center_laplacian, variant, laplacian_scale):
    n, m, s = _sizes(system)
    if variant == "auto":
        variant = 5 if m <= math.sqrt(n) else 6
    if variant not in (5, 6):
        raise ValueError(f"variant must be 5, 6 or 'auto', got {variant!r}")
    lam_I = system.intrinsic_lambda if system.laplacian is not None else 0.0
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


def paper_preconditioner(system, center_laplacian=None, *, variant="auto", laplacian_scale=None):
    r"""Paper 000's preconditioner, formed explicitly and factorized.

    .. math::

        P_5 = K_{ms}^\top K_{ms} + λ_A K_{ss} + c\, K_{ss} L_{ss} K_{ss} \quad (m \le \sqrt n,
        \text{ eq. 5}), \qquad
        P_6 = \tfrac{m}{s} K_{ss}^2 + λ_A K_{ss} + c\, K_{ss} L_{ss} K_{ss} \quad (\text{eq. 6}),

    with ``c = λ_I n²/s²`` (or ``λ_I · laplacian_scale``) and ``L_ss`` the Laplacian of a kNN graph
    on the centers.  ``K_ss²`` squares the condition number of ``K_ss``, so jitter is usually
    needed; prefer :func:`falkon_preconditioner`, the same ``P`` in factored form.
    """
    variant, L_ss, c = _paper_terms(system, center_laplacian, variant, laplacian_scale)
    ops = get_ops()
    K_ss = _float(system.kernel_ss())
    _, m, s = _sizes(system)
    if variant == 5:
        K_ms = _float(system.kernel_ms())
        P = ops.matmul(K_ms.T, K_ms)
    else:
        P = (m / s) * ops.matmul(K_ss, K_ss)
    P += system.ambient_lambda * K_ss
    if L_ss is not None:
        P += c * ops.matmul(K_ss, ops.sparse_matmul(L_ss, K_ss))
    return DensePreconditioner(P)


def falkon_preconditioner(
    system, center_laplacian=None, *, variant="auto", laplacian_scale=None, t_min_pivot=None
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
    variant, L_ss, c = _paper_terms(system, center_laplacian, variant, laplacian_scale)
    ops = get_ops()
    L = NystromFactor(system, min_pivot=t_min_pivot).lower
    _, m, s = _sizes(system)
    if variant == 5:
        Phi_t = ops.solve_triangular(L, _float(system.kernel_ms()).T, lower=True)
        G = ops.matmul(Phi_t, Phi_t.T)
    else:
        G = (m / s) * ops.matmul(L.T, L)
    G += system.ambient_lambda * np.eye(s)
    if L_ss is not None:
        G += c * ops.matmul(L.T, ops.sparse_matmul(L_ss, L))
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


def sampled_hessian_preconditioner(
    system, *, n_rows=None, n_labeled_rows=None, random_state=None, t_min_pivot=None
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
    (:meth:`~semiscale.linalg.system.NystromFactor.features_t`), and with every center labeled
    the labeled term is ``TTᵀ`` (``lauum``, ``s³/3``).

    Why the labeled term is exact by default: the labeled block ``Φ_mᵀΦ_m`` dominates ``H`` for
    the paper's ``m = s = 0.1 n``, and a rank-``t`` subsample of it (``t < s``) leaves most of
    ``H``'s large eigenvalues unmatched.  Chosen by measurement: 3–4 PCG iterations with the
    exact labeled term, 10–33 with it sampled to ``t = s/4`` rows, on five of paper 000's
    datasets; the Laplacian term tolerates ``t = s/16``…``s/4`` (3–10 iterations), see
    ``benchmarks/results/preconditioner_labeled/``.

    Parameters
    ----------
    system : NystromSystem
        The system (:class:`semiscale.linalg.system.NystromSystem`), e.g. a
        :class:`~semiscale.linalg.operators.NystromLapRLSHessian`.
    n_rows : int, optional
        Laplacian sample size ``t``; default ``min(⌈s/8⌉, 256)`` (at least 32) when ``K_ns``
        is cached, ``⌈s/4⌉`` when it is recomputed (:data:`LAPLACIAN_ROWS_FRACTION`;
        ``benchmarks/results/laplacian_sample/``); the default then grows, up to 16×, when
        the sampled graph term carries more than :data:`GRAPH_SHARE_REFERENCE` of ``Ĝ``'s
        trace (more rows are drawn and the first ones re-weighted: the estimate is the one
        drawn at the final size).  The returned preconditioner records the size used,
        ``laplacian_rows_``, and the share, ``graph_trace_share_``.
    n_labeled_rows : int, optional
        Labeled rows kept; default ``max(4s, ⌈n/4⌉)``: all of them whenever ``m ≤ n/4`` (the
        usual semi-supervised case), a uniform sample beyond (what a labeled subsample costs
        when the labeled term is large: ``benchmarks/results/skin_convergence/``).
    random_state : int, Generator, RandomState or None
    t_min_pivot : float, optional
        Pivot floor of ``T`` (``min_pivot`` of
        :meth:`~semiscale.linalg.ops.ArrayOps.jittered_cholesky`); None is ``s·u``.
        :data:`T_MIN_PIVOT` after a breakdown.
    """
    rng = _rng(random_state)
    n, m, s = _sizes(system)
    t = _default_laplacian_rows(system) if n_rows is None else int(n_rows)
    if t < 1:
        raise ValueError(f"n_rows must be positive, got {n_rows!r}")
    t_J = max(4 * s, math.ceil(n / 4), t) if n_labeled_rows is None else int(n_labeled_rows)
    if t_J < 1:
        raise ValueError(f"n_labeled_rows must be positive, got {n_labeled_rows!r}")
    factor = NystromFactor(system, min_pivot=t_min_pivot)
    labeled = np.asarray(system.labeled_index)
    if getattr(system, "label_weights", None) is not None:
        # diffused labels: the labeled term is Φᵀ Φ with Φ = Rᵀ K_ns T⁻¹, m rows, taken whole
        rows, w = _weighted_features_t(factor), 1.0
    elif m <= t_J:
        rows, w = labeled, 1.0
    else:
        rows, w = rng.choice(labeled, t_J, replace=False), m / t_J
    G = _labeled_gram(factor, rows, w)
    labeled_trace = float(np.trace(G))  # the diagonal is in G's lower triangle
    t_used, share = 0, 0.0
    if system.laplacian is not None:
        W, c = _edge_form(system.laplacian)
        order = rng.permutation(n)  # every prefix is a uniform sample without replacement
        t_used = min(t, n)
        graph_trace = _add_laplacian_rows(G, factor, W, c, order[:t_used], n / t_used)
        share = _share(graph_trace, labeled_trace, system.ambient_lambda * s)
        if n_rows is None and share > GRAPH_SHARE_REFERENCE:
            growth = min((share / GRAPH_SHARE_REFERENCE) ** 2, LAPLACIAN_ROWS_MAX_GROWTH)
            t_new = min(n, math.ceil(t_used * growth))
            if t_new > t_used:
                # G = labeled + graph estimate from t_used rows.  For the larger sample those
                # rows keep a share a = t_used/t_new: G <- a·G + (1 − a)·labeled, with the labeled
                # term recomputed (only here, where the extra rows cost more than it does).
                keep = t_used / t_new
                G *= keep
                G_labeled = _labeled_gram(factor, rows, w)
                G_labeled *= 1 - keep
                G += G_labeled
                del G_labeled
                graph_trace = keep * graph_trace + _add_laplacian_rows(
                    G, factor, W, c, order[t_used:t_new], n / t_new
                )
                t_used = t_new
                share = _share(graph_trace, labeled_trace, system.ambient_lambda * s)
    G.flat[:: s + 1] += system.ambient_lambda
    P = FactoredPreconditioner(factor.lower, G, G_triangle="lower")
    P.laplacian_rows_ = t_used
    P.graph_trace_share_ = share
    return P


def _weighted_features_t(factor):
    """``T⁻ᵀ (Rᵀ K_ns)ᵀ`` (s × m): the features of a system's diffused labeled rows."""
    K_t = _float(factor.system.kernel_ms()).T
    return get_ops().solve_triangular(factor.lower, K_t, lower=True, overwrite_b=True)


def _labeled_gram(factor, rows, weight):
    """A new ``G`` (lower triangle) holding the labeled term ``weight · Φ_rowsᵀ Φ_rows``.

    ``rows`` are row indices of ``K_ns``, or (2-D) the features ``Φ_rowsᵀ`` themselves.
    """
    if np.ndim(rows) == 2:
        s = rows.shape[0]
        G = np.zeros((s, s), order="F")
        factor.add_gram(G, rows, weight)
        return G
    pos = factor.system.center_positions(rows)
    G = factor.center_gram(pos[pos >= 0], weight)
    other = rows[pos < 0]
    for sl in _chunks(len(other), 1, factor.system):
        factor.add_gram(G, factor.features_t(other[sl]), weight)
    return G


def _share(graph_trace, labeled_trace, ambient_trace):
    total = graph_trace + labeled_trace + ambient_trace
    return graph_trace / total if total > 0 else 0.0


def _add_laplacian_rows(G, factor, W, c, sample, weight):
    """Add the graph term of the sampled points ``sample`` with weight ``λ_I · weight``.

    Returns the trace added.  See :func:`sampled_hessian_preconditioner` for the edge form.
    """
    R = np.sort(sample)
    degree = W.nnz / max(W.shape[0], 1) + 1
    trace, lam_I, ops = 0.0, factor.system.intrinsic_lambda, get_ops()
    # the system's kernel operands (optional protocol member; None when K_ns is stored)
    operands = getattr(factor.system, "kernel_rows_operands", None)
    for sl in _chunks(R.size, 2 * degree, factor.system):
        Rb = R[sl]
        half = sp.coo_matrix(W[Rb])  # half-edges (r -> j), weight W_rj / 2 each
        U = np.union1d(Rb, half.col)
        pos_r = np.searchsorted(U, Rb)
        pos_U = factor.system.center_positions(U)
        rows = None if operands is None else operands(U[pos_U < 0])
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
        if rows is not None:
            # One layer call from the kernel rows to G: a device backend keeps the rows, the
            # features and the edge rows where it computes them.  The diagonal rows √(c_r w) φ_r
            # are the selection (pos_r, scale), as in the step-by-step path below.
            diagonal = (pos_r, np.sqrt(c[Rb] * weight))
            trace += ops.nystrom_feature_gram(
                G, factor.lower, *rows[:3], pos_U, [incidence, diagonal], lam_I, rows[3]
            )
            continue
        F = factor.features_t(U)  # (s, |U|)
        edges_t = np.asarray(ops.sparse_matmul(incidence, F.T).T)
        trace += factor.add_gram(G, edges_t, lam_I)
        trace += factor.add_gram(G, F[:, pos_r] * np.sqrt(c[Rb] * weight), lam_I)
    return trace


def _default_laplacian_rows(system):
    """``t`` by the rule of :data:`LAPLACIAN_ROWS_FRACTION` and its neighbours."""
    s = system.n_centers
    if not system.kernel_cached:
        t = math.ceil(s * LAPLACIAN_ROWS_FRACTION_UNCACHED)
    else:
        t = min(math.ceil(s * LAPLACIAN_ROWS_FRACTION), LAPLACIAN_ROWS_CAP)
    return max(t, LAPLACIAN_ROWS_MIN)


def _chunks(n_items, rows_per_item, system):
    """Slices of items whose kernel rows and features (``3·s`` floats per row) fit the budget.

    The budget is the system's, less what the system holds (``K_ss``, a cached ``K_ns``:
    ``memory_held``) and the preconditioner's ``T``, ``Ĝ`` and ``chol(Ĝ)`` (``3·s²`` floats).
    """
    s = system.n_centers
    per_item = int(math.ceil(rows_per_item)) * 3 * s * 8
    held = int(getattr(system, "memory_held", 0))
    what = (
        "sampled-Hessian preconditioner chunk (after the system's K_ss and cache and the "
        "preconditioner's T, G and chol(G): 3·s² floats)"
    )
    return get_ops().row_blocks(
        n_items, per_item, system.memory_budget, what=what, reserved=3 * s * s * 8 + held
    )


def preconditioner_memory(name, n_samples, n_labeled, n_centers, *, degree=0.0):
    """Bytes a preconditioner holds at its peak beside the system, by part (``{what: bytes}``).

    The memory model behind a Nyström fit's up-front budget check
    (:func:`semiscale.solvers.nystrom_quadratic.solver_memory`): the ``s × s`` (and ``m × s``)
    arrays a builder keeps or forms at once, in float64, plus its smallest block.  Blocks beyond the
    smallest are sized by the builder in what the budget has left.

    Parameters
    ----------
    name : str or None
        A key of :data:`PRECONDITIONERS`.
    n_samples, n_labeled, n_centers : int
        ``n``, ``m``, ``s``.
    degree : float
        Mean non-zeros per row of the Laplacian (0 without a graph term): the sampled-Hessian
        builder's smallest chunk is one sampled point with its edges.
    """
    s, m = int(n_centers), int(n_labeled)
    square = s * s * 8
    if name == "sampled-hessian":
        rows = math.ceil(2 * (degree + 1)) if degree else 1
        return {
            "the sampled-Hessian preconditioner's T, G and chol(G) (3 s×s)": 3 * square,
            "its smallest chunk of feature rows": rows * 3 * s * 8,
        }
    if name in ("falkon", "paper", "paper5", "paper6"):
        # T (or P), G and chol(G), the L_ss products' temporaries and K_ms with its features.
        what = "falkon" if name == "falkon" else "paper"
        return {
            f"the {what} preconditioner's s×s factors and products (6 s×s)": 6 * square,
            "its labeled kernel rows and features (2 m×s)": 2 * m * s * 8,
        }
    if name == "jacobi":
        return {"the Jacobi preconditioner's labeled kernel rows (m×s)": m * s * 8}
    return {}


def jacobi_preconditioner(system):
    """``P = diag(H)`` from the system's :meth:`~semiscale.linalg.system.NystromSystem.diagonal`."""
    return JacobiPreconditioner(system.diagonal())


#: Lookup table ``name -> builder(system, **options)``; ``None`` means no preconditioner.
#: A builder reads only the :class:`~semiscale.linalg.system.NystromSystem` protocol.
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


def make_preconditioner(name, system, **options):
    """Build the preconditioner ``name`` (a key of :data:`PRECONDITIONERS`) for ``system``.

    ``system`` implements :class:`semiscale.linalg.system.NystromSystem` (the Nyström and full
    LapRLS Hessians of :mod:`semiscale.linalg.operators` do).

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
    return builder(system, **options)
