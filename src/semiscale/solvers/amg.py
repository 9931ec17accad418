r"""Algebraic multigrid (AMG) preconditioner for sparse graph-Laplacian systems.

Laplace and Poisson learning (:mod:`semiscale.models.graph_learning`) solve ``A X = B`` with
``A`` a graph Laplacian ``L = D − W`` (singular, one zero eigenvalue per connected component) or
a principal sub-matrix ``L_uu`` of it.  Jacobi-preconditioned CG needs a number of iterations
that grows with the graph's diameter: 15,836 for Poisson learning on the 100,000-point
two-moons graph (``benchmarks/results/graph_solvers/``).  One V-cycle of classical
(Ruge–Stüben) AMG (pyamg's ``ruge_stuben_solver``), whose coarsening and interpolation are built
for M-matrices such as ``D − W``, brings that to 42.

The hierarchy is built on ``P``, a slightly modified copy of ``A``:

.. math::  P = A_{\text{kept}} + \text{SHIFT} \cdot \operatorname{diag}(A),

where ``A_kept`` leaves out the off-diagonal entries below ``DROP_TOL`` times the largest one.
Why: heat weights ``exp(−d²/2σ²)`` of a global bandwidth underflow on outliers (on two moons
with 1,000,000 points and noise 0.1, some degrees are below ``10⁻³⁰⁰``), and products of such
entries made the coarse operators NaN; the relative shift gives every row a positive sum, so
that the interpolation's denominators (a row's diagonal plus its weak couplings: 0 for a row of
a Laplacian) are not zero.  CG still multiplies by the exact ``A``: ``P`` only shapes the
preconditioner, which stays symmetric positive definite (``P`` is a diagonally dominant
M-matrix with positive row sums; the V-cycle's Gauss–Seidel smoothing is symmetric).  The
strength threshold ``θ = 0.1`` (pyamg's default 0.25) halved the iterations on the 100,000-point
two-moons graph (42 against 79; ``benchmarks/results/graph_solvers/``).

Where it falls short: the heat weights of a global bandwidth span many orders of magnitude
between dense and sparse regions, and the V-cycle's convergence then degrades with size: on
1,000,000 two-moons points the relative residual is 5·10⁻³ after 100 iterations (the class
labels stop changing after about 20).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["AMG_MAX_COARSE", "AMG_OPTIONS", "DROP_TOL", "SHIFT", "AMGPreconditioner"]

#: Off-diagonal entries below ``DROP_TOL`` times the largest one are left out of the hierarchy.
DROP_TOL = 1e-12
#: Relative diagonal shift of ``P``: every row sum positive.
SHIFT = 1e-8
#: Size of the coarsest level, solved by a dense pseudo-inverse (pyamg's default is 10; a larger
#: coarsest level means fewer levels, each V-cycle sweep being sequential C++).
AMG_MAX_COARSE = 500
#: Options of pyamg's ``ruge_stuben_solver``.
AMG_OPTIONS = {
    "strength": ("classical", {"theta": 0.1}),
    "interpolation": "classical",
    "max_coarse": AMG_MAX_COARSE,
    "keep": False,
}


class AMGPreconditioner:
    """One classical-AMG V-cycle of ``P ≈ A``, as ``M⁻¹`` for CG.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        Symmetric, positive diagonal, positive semi-definite (a graph Laplacian or a principal
        sub-matrix of one).

    Attributes
    ----------
    hierarchy : pyamg.multilevel.MultilevelSolver
        The Ruge–Stüben hierarchy of ``P`` (``AMG_OPTIONS``).
    n_dropped : int
        Off-diagonal entries of ``A`` left out of ``P``.

    Notes
    -----
    ``apply(V)`` runs one V-cycle per column of ``V`` (pyamg's smoothers take one vector).
    """

    def __init__(self, A):
        import pyamg

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
        self.hierarchy = pyamg.ruge_stuben_solver(P.tocsr(), **AMG_OPTIONS)

    def apply(self, V):
        """``M⁻¹ V`` for an ``(n,)`` vector or an ``(n, r)`` block."""
        V = np.asarray(V, dtype=np.float64)
        block = V.reshape(V.shape[0], -1)
        out = np.empty_like(block)
        for j in range(block.shape[1]):
            rhs = block[:, j]
            out[:, j] = self.hierarchy.solve(
                rhs, x0=np.zeros_like(rhs), tol=1e-300, maxiter=1, cycle="V", accel=None
            )
        return out.reshape(V.shape)

    __call__ = apply

    def aslinearoperator(self):
        """``apply`` as a :class:`scipy.sparse.linalg.LinearOperator`."""
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.apply, matmat=self.apply, dtype=self.dtype)
