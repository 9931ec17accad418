r"""The Nyström system protocol that preconditioners consume, and the factor built on it.

A Nyström LapRLS system (paper 000 eq. 4) over ``n`` points, ``m`` of them labeled, and ``s``
centers ``C`` is

.. math::

    H α = z, \qquad
    H = K_{ns}^\top (J + λ_I L) K_{ns} + λ_A K_{ss}
      = K_{ms}^\top K_{ms} + λ_A K_{ss} + λ_I K_{ns}^\top L K_{ns},

with ``K_ns = K(X, C)``, ``K_ss = K(C, C)``, ``J`` the diagonal 0/1 selector of the labeled
rows (``K_ms = J K_ns`` restricted to them) and ``L`` the graph Laplacian (``λ_I L`` absent when
there is no graph term).  :class:`NystromSystem` is everything a preconditioner may read of such
a system; :class:`semiscale.linalg.operators.NystromLapRLSHessian` (blocked, ``s ≪ n``) and
:class:`~semiscale.linalg.full_hessian.FullLapRLSHessian` (every point a center, the exact
problem) implement it, and so can a test double holding dense matrices.

:class:`NystromFactor` is the factored form every Cholesky-based preconditioner starts from:
with ``K_ss + εI = T^\top T`` (``T`` upper; the code keeps its transpose, the lower factor
``T^\top``) and the Nyström feature map ``Φ = K_{ns} T^{-1}`` (so ``ΦΦᵀ = K_ns K_ss⁻¹ K_sn``),

.. math::

    H = T^\top G\, T, \qquad G = Φ^\top (J + λ_I L)\, Φ + λ_A I \quad (ε = 0),

and ``G ⪰ λ_A I`` stays well conditioned when ``K_ss`` is numerically singular.  All its work
(the jittered Cholesky, triangular solves, SYRK/LAUUM Gram updates) goes through the
array-operations layer (:func:`semiscale.linalg.ops.get_ops`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .ops import get_ops

__all__ = ["NystromFactor", "NystromSystem"]


@runtime_checkable
class NystromSystem(Protocol):
    r"""What a preconditioner of ``H α = z`` may read (module docstring for the maths).

    Attributes
    ----------
    n_samples : int
        ``n``, the rows of ``K_ns`` (all training points, in the Laplacian's order).
    n_centers : int
        ``s``, the size of ``H``.
    labeled_index : ndarray of int, shape (m,)
        The labeled rows (``J``), in the order of the labels' rows.
    laplacian : sparse matrix of shape (n, n) or None
        ``L``; None when the system has no graph term (then ``λ_I`` is not used).
    ambient_lambda, intrinsic_lambda : float
        ``λ_A``, ``λ_I`` in paper 000's scaling (:func:`semiscale.scaling.solver_lambdas`).
    memory_budget : int
        The budget of the whole solve.  A preconditioner's own ``s × s`` buffers and blocks
        (kernel rows, features) fit in it after ``memory_held``.
    kernel_cached : bool
        Whether the system's products read a stored ``K_ns`` (``K_ms`` without a graph term)
        instead of recomputing kernel blocks (``n·s·d`` work per pass): a preconditioner that
        samples graph rows takes more of them when every product of ``H`` recomputes them.

    Optional: ``memory_held`` (int), the bytes of ``memory_budget`` the system itself keeps
    (``K_ss``, a cached ``K_ns``); read with ``getattr(system, "memory_held", 0)``, so a test
    double of dense matrices need not define it.
    """

    n_samples: int
    n_centers: int
    labeled_index: np.ndarray
    laplacian: object
    ambient_lambda: float
    intrinsic_lambda: float
    memory_budget: int
    kernel_cached: bool

    def kernel_ss(self) -> np.ndarray:
        """``K_ss = K(C, C)``, shape (s, s), symmetric."""

    def kernel_rows(self, index) -> np.ndarray:
        """``K(X[index], C)``, shape (len(index), s): rows of ``K_ns``."""

    def kernel_ms(self) -> np.ndarray:
        """``K_ms``: the labeled rows of ``K_ns`` in ``labeled_index`` order, shape (m, s)."""

    def center_positions(self, index) -> np.ndarray:
        """For each point ``X[index[i]]``: its position ``j`` among the centers, else −1.

        Such a point's kernel row is row ``j`` of ``K_ss``, so its feature is read from the
        factor instead of computed (:meth:`NystromFactor.features_t`).
        """

    def diagonal(self) -> np.ndarray:
        """``diag(H)``, shape (s,) (the Jacobi preconditioner)."""


class NystromFactor:
    r"""``T = chol(K_ss)`` of a :class:`NystromSystem` and its feature map ``Φ = K_ns T⁻¹``.

    Parameters
    ----------
    system : NystromSystem
    min_pivot : float, optional
        Pivot floor of ``T`` (``min_pivot`` of
        :meth:`~semiscale.linalg.ops.ArrayOps.jittered_cholesky`); None is ``s·u``.

    Attributes
    ----------
    lower : ndarray of shape (s, s)
        The lower factor ``Tᵀ``: ``lower @ lower.T = K_ss + jitter·I``.
    jitter : float
        The jitter ``ε`` added to ``K_ss``'s diagonal.
    """

    def __init__(self, system: NystromSystem, *, min_pivot=None):
        self.system = system
        # K_ss is symmetric, so its transpose (Fortran-ordered: LAPACK's working copy is a plain
        # memory copy instead of a transposing one) is the same matrix.
        K_ss = np.asarray(system.kernel_ss(), dtype=np.float64).T
        self.lower, self.jitter = get_ops().jittered_cholesky(K_ss, min_pivot=min_pivot)

    def features_t(self, index):
        r"""``Φᵀ = T⁻ᵀ K(X[index], C)ᵀ``, shape (s, len(index)), Fortran-ordered.

        A point that is center ``j`` has ``K(x, C) = K_ss[j] = (T^\top T − εI)[j]``, so its
        feature column is ``Tᵀ``'s row ``j`` minus ``ε T⁻ᵀ e_j``: read from the factor without
        a kernel row or a triangular solve (the ``ε`` term, at most the jitter in norm, is
        dropped).
        """
        ops, L = get_ops(), self.lower
        index = np.asarray(index)
        pos = self.system.center_positions(index)
        on_center = pos >= 0
        if not on_center.any():
            # The kernel rows are a fresh copy (cache rows are gathered), so solve in place.
            K_t = np.asarray(self.system.kernel_rows(index), dtype=np.float64).T
            return ops.solve_triangular(L, K_t, lower=True, overwrite_b=True)
        F = np.empty((L.shape[0], index.size), order="F")
        F[:, on_center] = L[pos[on_center]].T
        other = ~on_center
        if other.any():
            K_t = np.asarray(self.system.kernel_rows(index[other]), dtype=np.float64).T
            F[:, other] = ops.solve_triangular(L, K_t, lower=True, overwrite_b=True)
        return F

    def center_gram(self, pos, weight=1.0):
        r"""A new ``G`` (lower triangle) ``= weight · Σ_{j ∈ pos} Φ_jᵀ Φ_j`` for centers ``pos``.

        Center ``j``'s feature is ``Tᵀ``'s row ``j`` (:meth:`features_t`).  When every center is
        in ``pos`` the sum is ``T Tᵀ``, which LAPACK's ``lauum`` forms in ``s³/3`` flops (a
        third of ``syrk``'s).  The upper triangle is unspecified (``lauum`` leaves ``Tᵀ``'s
        there); consumers read the lower one only.
        """
        L = self.lower
        s = L.shape[0]
        pos = np.asarray(pos)
        if pos.size == s and np.array_equal(np.sort(pos), np.arange(s)):
            G = get_ops().lauum(L)
            if weight != 1.0:
                G *= weight
            return G
        G = np.zeros((s, s), order="F")
        if pos.size:
            self.add_gram(G, L[pos].T, weight)
        return G

    @staticmethod
    def add_gram(G, F_t, weight=1.0):
        """``G += weight · F_t F_tᵀ`` on the lower triangle (BLAS ``syrk``); the trace added.

        ``F_t`` has shape (s, r); ``G`` is Fortran-ordered float64 and updated in place.  The
        trace is read from ``G``'s diagonal (``s`` strided reads, where ``weight·‖F_t‖²_F``
        would read all of ``F_t`` again).
        """
        if not F_t.shape[1]:
            return 0.0
        before = np.trace(G)
        get_ops().syrk(G, F_t, weight)
        return float(np.trace(G) - before)
