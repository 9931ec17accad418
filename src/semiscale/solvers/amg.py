r"""Algebraic multigrid (AMG) preconditioner for sparse graph-Laplacian systems.

Laplace and Poisson learning (:mod:`semiscale.solvers.graph_learning`) solve ``A X = B`` with
``A`` a graph Laplacian ``L = D − W`` (singular, one zero eigenvalue per connected component) or
a principal sub-matrix ``L_uu`` of it.  Jacobi-preconditioned CG needs a number of iterations
that grows with the graph's diameter: 15,836 for Poisson learning on the 100,000-point
two-moons graph (``benchmarks/results/graph_solvers/``).  One V-cycle of smoothed-aggregation
AMG (pyamg's ``smoothed_aggregation_solver``) with the evolution strength of connection
(Olson, Schroder & Tuminaro 2010) brings that to a few tens.

Why smoothed aggregation with evolution strength: heat weights ``exp(−d²/2σ²)`` of one global
bandwidth span many orders of magnitude between dense and sparse regions, and a classical
(Ruge–Stüben) V-cycle degrades with size on such graphs.  Chosen by measurement: Poisson
learning on 1,000,000 two-moons points, 37 CG iterations and 35.5 s end to end against the
classical hierarchy's 188 and 104 s, same predictions (``benchmarks/results/graph_solvers/``).
Evolution strength measures how strongly two
unknowns are coupled by a few steps of the smoother rather than by the size of one entry, so a
weak edge inside a dense region and a strong edge between outliers are judged alike.

The hierarchy is built on ``P``, a slightly modified copy of ``A``:

.. math::  P = A_{\text{kept}} + \text{SHIFT} \cdot \operatorname{diag}(A),

where ``A_kept`` leaves out the off-diagonal entries below ``DROP_TOL`` times the largest one.
Why: on two moons with 1,000,000 points and noise 0.1 some heat-weight degrees are below
``10⁻³⁰⁰``, and products of such entries made coarse operators NaN; the relative shift makes
``P`` positive definite (a Laplacian is only semi-definite), which the aggregation's smoothed
prolongation and the coarsest level's solve need.  CG still multiplies by the exact ``A``:
``P`` only shapes the preconditioner, which stays symmetric positive definite (the V-cycle's
Gauss–Seidel smoothing is symmetric).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..linalg.ops import get_ops

__all__ = [
    "AMG_MAX_COARSE",
    "AMG_OPTIONS",
    "AMG_SEED",
    "CYCLES",
    "DROP_TOL",
    "MAX_INVERSE",
    "SHIFT",
    "AMGPreconditioner",
]

#: Off-diagonal entries below ``DROP_TOL`` times the largest one are left out of the hierarchy.
DROP_TOL = 1e-12
#: Relative diagonal shift of ``P``: every row sum positive.
SHIFT = 1e-8
#: Seed of NumPy's global generator while pyamg builds the hierarchy (restored afterwards).
AMG_SEED = 0
#: Cap of ``1/P_ii`` on the rows that keep no edge in ``P`` (a finite Jacobi step).
MAX_INVERSE = 1e300
#: Size of the coarsest level, solved by a dense pseudo-inverse (pyamg's default is 10; a larger
#: coarsest level means fewer levels, each V-cycle sweep being sequential C++).
AMG_MAX_COARSE = 500
#: ``AMGPreconditioner(cycle=...)``: pyamg's own V-cycle one column at a time, or the blocked one.
CYCLES = ("pyamg", "blocked")
#: Degree of the blocked cycle's Chebyshev smoother (matrix products per pre- or post-smoothing).
CHEBYSHEV_DEGREE = 2
#: The Chebyshev smoother's interval ``[ρ/30, 1.1ρ]`` of ``D⁻¹A``'s spectrum (pyamg's defaults):
#: the upper end above the estimated ``ρ`` keeps the smoother, and so the cycle, positive definite.
CHEBYSHEV_INTERVAL = (1.0 / 30.0, 1.1)

#: Options of pyamg's ``smoothed_aggregation_solver`` (its defaults otherwise: symmetric
#: aggregation, Jacobi-smoothed prolongation, symmetric block Gauss–Seidel smoothing).
AMG_OPTIONS = {
    "strength": "evolution",
    "max_coarse": AMG_MAX_COARSE,
    "keep": False,
}


class AMGPreconditioner:
    """One smoothed-aggregation AMG V-cycle of ``P ≈ A``, as ``M⁻¹`` for CG.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        Symmetric, positive diagonal, positive semi-definite (a graph Laplacian or a principal
        sub-matrix of one).
    near_nullspace : array_like of shape (n,) or (n, k), optional
        Vectors that ``A`` nearly annihilates, interpolated exactly by the hierarchy's
        prolongations (pyamg's ``B``).  None: the constant vector, the null space of ``D − W``;
        for a normalized Laplacian ``I − D^{-1/2} W D^{-1/2}`` it is ``sqrt(degree)``.

    Attributes
    ----------
    hierarchy : pyamg.multilevel.MultilevelSolver
        The smoothed-aggregation hierarchy of ``P`` (``AMG_OPTIONS``).
    n_dropped : int
        Off-diagonal entries of ``A`` left out of ``P``.

    cycle : {"pyamg", "blocked"}, default="pyamg"
        ``"pyamg"``: pyamg's V-cycle (symmetric Gauss–Seidel smoothing, pseudo-inverse on the
        coarsest level), one column at a time.  ``"blocked"``: the same hierarchy's operators
        applied to all columns at once (:class:`BlockedVCycle`).
    cycle_dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the blocked cycle's operators and work blocks (``cycle="blocked"`` only):
        ``apply`` still takes and returns float64 (:class:`BlockedVCycle`).
    strength : str or tuple, optional
        pyamg's strength of connection for this hierarchy; None: ``AMG_OPTIONS["strength"]``
        (evolution).  :class:`~semiscale.solvers.sdd.SDDSolver` passes ``"symmetric"``
        (``SDD_STRENGTH``) with the blocked cycle.

    Notes
    -----
    Both cycles are symmetric positive definite operators (the condition of preconditioned CG):
    the pre- and post-smoothing are adjoint and the coarsest solve is exact.
    """

    def __init__(
        self, A, *, near_nullspace=None, cycle="pyamg", cycle_dtype=np.float64, strength=None
    ):
        import pyamg

        if cycle not in CYCLES:
            raise ValueError(f"cycle must be one of {CYCLES}, got {cycle!r}")
        self.cycle = cycle
        if np.dtype(cycle_dtype) not in (np.float32, np.float64):
            raise ValueError(
                f"cycle_dtype must be float32 or float64 (the blocked V-cycle's precision), "
                f"got {cycle_dtype!r}"
            )

        A = sp.csr_matrix(A, dtype=np.float64)
        diagonal = A.diagonal()
        if A.shape[0] and not np.all(diagonal > 0):
            raise ValueError(
                "the AMG preconditioner needs a positive diagonal (every point with an edge of "
                f"positive weight); {int(np.count_nonzero(~(diagonal > 0)))} row(s) have "
                "diagonal <= 0. Solve the connected components with edges only, or use "
                "solver='cg'"
            )
        self.shape = A.shape
        self.dtype = np.dtype(np.float64)
        P = A.copy()
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        off = rows != P.indices
        largest = float(np.abs(P.data[off]).max(initial=0.0))
        drop = off & (np.abs(P.data) < DROP_TOL * largest)
        self.n_dropped = int(np.count_nonzero(drop))
        P.data[drop] = 0.0
        P = P + sp.diags(SHIFT * diagonal, format="csr")
        P.eliminate_zeros()
        # A row left with its diagonal only is its own block of P: V-cycles of it are 1/P_ii,
        # which the hierarchy's Jacobi-type steps (evolution strength's D⁻¹) would overflow
        # to inf for a degree below 1/DBL_MAX (1e-315 happens on a million two-moons points).
        kept = np.bincount(rows[off & ~drop], minlength=A.shape[0])
        self.isolated = np.flatnonzero(kept == 0)
        self.coupled = np.flatnonzero(kept > 0)
        with np.errstate(over="ignore"):
            self.isolated_inverse = np.minimum(1.0 / P.diagonal()[self.isolated], MAX_INVERSE)
        P_coupled = P[self.coupled][:, self.coupled] if self.isolated.size else P
        options = dict(AMG_OPTIONS)
        if strength is not None:
            options["strength"] = strength
        if near_nullspace is not None:
            candidates = np.asarray(near_nullspace, dtype=np.float64).reshape(A.shape[0], -1)
            options["B"] = np.ascontiguousarray(candidates[self.coupled])
        # pyamg draws the start vectors of its spectral-radius estimates from NumPy's global
        # generator: a fixed seed makes the hierarchy, and so CG's iterations, reproducible
        # (37-52 iterations on one million-point Laplacian otherwise); the caller's state is
        # restored
        state = np.random.get_state()  # noqa: NPY002 - pyamg reads the legacy generator
        np.random.seed(AMG_SEED)  # noqa: NPY002
        # The blocked (SDDSolver's) path builds in one BLAS thread: the spectral-radius
        # estimates' Arnoldi steps are level-1 BLAS on n-vectors, which OpenBLAS's threads made
        # 2.7 of the 3.9 s of a 64,000-point build on a loaded 2-core machine.  pyamg's path (the
        # graph estimators') is left as it was, so its hierarchies are unchanged bit for bit.
        threads = 1 if cycle == "blocked" else None
        try:
            with get_ops().blas_threads(threads):
                self.hierarchy = (
                    pyamg.smoothed_aggregation_solver(P_coupled.tocsr(), **options)
                    if self.coupled.size
                    else None
                )
                self.blocked = (
                    BlockedVCycle(self.hierarchy, dtype=cycle_dtype)
                    if cycle == "blocked" and self.hierarchy is not None
                    else None
                )
        finally:
            np.random.set_state(state)  # noqa: NPY002

    def apply(self, V):
        """``M⁻¹ V`` for an ``(n,)`` vector or an ``(n, r)`` block."""
        V = np.asarray(V, dtype=np.float64)
        block = V.reshape(V.shape[0], -1)
        if self.blocked is not None and not self.isolated.size:
            # every row coupled (the usual case): no gather/scatter copies of the block
            return np.asarray(self.blocked.apply(block), dtype=np.float64).reshape(V.shape)
        out = np.empty_like(block)
        out[self.isolated] = block[self.isolated] * self.isolated_inverse[:, None]
        if self.blocked is not None:
            out[self.coupled] = self.blocked.apply(block[self.coupled])
            return out.reshape(V.shape)
        for j in range(block.shape[1] if self.hierarchy is not None else 0):
            rhs = block[self.coupled, j]
            out[self.coupled, j] = self.hierarchy.solve(
                rhs, x0=np.zeros_like(rhs), tol=1e-300, maxiter=1, cycle="V", accel=None
            )
        return out.reshape(V.shape)

    __call__ = apply

    def aslinearoperator(self):
        """``apply`` as a :class:`scipy.sparse.linalg.LinearOperator`."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.apply, matmat=self.apply, dtype=self.dtype)


class BlockedVCycle:
    r"""One V-cycle of a smoothed-aggregation hierarchy on a block of columns at once.

    With ``A_0`` the finest operator, ``P_l`` the prolongations, ``A_{l+1} = P_lᵀ A_l P_l`` and
    ``D_l = diag(A_l)``, the cycle on level ``l`` is

    .. math::

        x \leftarrow G_l b, \quad
        x \leftarrow x + P_l\, V_{l+1}\big(P_l^\top (b - A_l x)\big), \quad
        x \leftarrow x + G_l (b - A_l x),

    and on the coarsest level ``x = A_L⁻¹ b`` (a dense Cholesky factor).  ``G_l = q(D_l⁻¹ A_l)
    D_l⁻¹`` is the Chebyshev polynomial of degree ``CHEBYSHEV_DEGREE`` of the interval
    ``CHEBYSHEV_INTERVAL · ρ(D_l⁻¹ A_l)``: symmetric, so the pre- and post-smoothing are adjoint
    and the cycle is a symmetric operator; positive definite because the interval's upper end
    exceeds ``ρ``, so ``‖I − G_l A_l‖_{A_l} < 1``.

    Every product is one sparse × dense-block product for all columns (the array-operations
    layer's ``sparse_matmul``) instead of one pyamg call per column and level.

    Parameters
    ----------
    hierarchy : pyamg.multilevel.MultilevelSolver
        The smoothed-aggregation hierarchy (its operators ``A_l``, ``P_l``, ``R_l = P_lᵀ``).
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Precision of the stored operators and of every work block.  The products are bound by
        memory traffic, so float32 halves the cycle's time; ``apply`` returns this dtype (the
        caller's CG stays in float64).  The coarsest solve is in float64 either way.  In float32
        the cycle is symmetric positive definite up to rounding (relative ``~10⁻⁷``), which CG
        tolerates: the same iterations to ``tol = 10⁻⁸`` (``SDDSolver``'s module docstring).
    """

    def __init__(self, hierarchy, *, dtype=np.float64):
        from pyamg.util.linalg import approximate_spectral_radius

        ops = get_ops()
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
        self.levels = []
        for level in hierarchy.levels[:-1]:
            A = sp.csr_matrix(level.A)
            inverse = 1.0 / A.diagonal()
            # a Python float: a NumPy float64 scalar would promote float32 blocks to float64
            rho = float(approximate_spectral_radius(sp.csr_matrix(A.multiply(inverse[:, None]))))
            low, high = CHEBYSHEV_INTERVAL
            self.levels.append(
                (
                    A.astype(self.dtype),
                    inverse.astype(self.dtype),
                    sp.csr_matrix(level.P, dtype=self.dtype),
                    sp.csr_matrix(level.R, dtype=self.dtype),
                    (low * rho, high * rho),
                )
            )
        coarse = np.asarray(sp.csr_matrix(hierarchy.levels[-1].A).toarray())
        # one thread: a multi-threaded potrf of a few hundred rows took 0.6 s on a loaded 2-core
        # machine (1 ms in one thread)
        with ops.blas_threads(1):
            self.coarse_factor = ops.jittered_cholesky(coarse)[0] if coarse.size else None

    def _smooth(self, l, b, x):
        """``x + G_l (b − A_l x)`` (``x = None``: ``G_l b``), the Chebyshev recurrence."""
        ops = get_ops()
        A, inverse, _, _, (a, c) = self.levels[l]
        theta, delta = (c + a) / 2.0, (c - a) / 2.0
        sigma = theta / delta
        rho_old = 1.0 / sigma
        column = inverse[:, None]
        # in place where possible: on a block of 250 columns the element-wise passes cost as
        # much as the sparse products
        r = b if x is None else b - ops.sparse_matmul(A, x)
        d = r * (column / theta)
        if x is None:
            x = d.copy()
        else:
            x += d
        for step in range(CHEBYSHEV_DEGREE - 1):
            product = ops.sparse_matmul(A, d)
            if step == 0 and r is b:
                r = b - product
            else:
                r -= product
            rho = 1.0 / (2.0 * sigma - rho_old)
            d *= rho * rho_old
            d += r * (column * (2.0 * rho / delta))
            rho_old = rho
            x += d
        return x

    def _cycle(self, l, b):
        ops = get_ops()
        if l == len(self.levels):
            return ops.cho_solve(self.coarse_factor, b.astype(np.float64)).astype(self.dtype)
        A, _, P, R, _ = self.levels[l]
        x = self._smooth(l, b, None)
        x += ops.sparse_matmul(
            P, self._cycle(l + 1, ops.sparse_matmul(R, b - ops.sparse_matmul(A, x)))
        )
        return self._smooth(l, b, x)

    def apply(self, B):
        """The cycle on an ``(m, r)`` block (returned in ``dtype``).

        BLAS in one thread: its only call is the coarsest level's small triangular solves,
        which OpenBLAS's threads made 50 ms each on a loaded 2-core machine; the sparse products
        are single-threaded anyway.
        """
        with get_ops().blas_threads(1):
            return self._cycle(0, np.ascontiguousarray(B, dtype=self.dtype))
