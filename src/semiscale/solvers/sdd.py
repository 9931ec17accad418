r"""Fast solves of sparse symmetric diagonally dominant (SDD) systems, many right-hand sides.

Paper 002 (Lever, Diethe & Shawe-Taylor, §4) builds its data-dependent kernel from ``n̂`` solves
``Q z_i = e_{s_i}`` with ``Q = R^p``, ``R`` a sparse graph Laplacian (normalized or not) plus a
small ridge, and the graph estimators (Laplace and Poisson learning,
:mod:`semiscale.solvers.graph_learning`) solve the same kind of system with one column per class.
:class:`SDDSolver` serves both: it prepares ``R`` once — one smoothed-aggregation AMG hierarchy
(:class:`~semiscale.solvers.amg.AMGPreconditioner`), a Jacobi diagonal, or one sparse LU
factorization — and solves every column and every nested solve of ``R^p`` with it.

Methods
-------
``"amg"``
    Conjugate gradient preconditioned by one AMG V-cycle: a few tens of iterations whatever
    the graph's size (the paper uses Koutis' combinatorial multigrid the same way).
``"cg"``
    Conjugate gradient preconditioned by ``diag(R)⁻¹``: the plain reference, whose iterations
    grow with the graph's diameter and ``1/λ_min(R)``.
``"direct"``
    A sparse LU factorization of ``R`` (:meth:`semiscale.linalg.ops.ArrayOps.sparse_factorized`),
    all columns solved from it; fill-in makes it super-linear on large graphs.  Needs a
    non-singular ``R``.

Powers
------
``Q = R^p`` is never formed (it is much denser than ``R``): ``R y_1 = b``, ``R y_2 = y_1``, …,
``z = y_p``, each nested solve run until its *recomputed* residual ``s_k = y_{k−1} − R y_k``
satisfies ``‖s_k‖₂ ≤ tol ‖y_{k−1}‖₂`` (CG, then up to ``MAX_REFINEMENTS`` rounds of iterative
refinement where CG's recursive residual drifted from the true one).  ``tol`` is not asked of
the outer residual: since

.. math::  b - R^p z = \sum_{k=1}^{p} R^{k-1} s_k ,

that residual is limited to about ``u·κ(R)^{p−1}`` in double precision (``u`` the unit roundoff),
``3·10⁻⁶`` measured for ``p = 2``, a ridge of ``10⁻⁶`` and a sparse LU (4,000 two-moons points,
paper 002's 5-NN graph), whereas the bound on the ``Q``-norm error that Theorem 4.2 needs
(below) stays small: ``epsilon ≤ 7·10⁻⁷`` there at ``tol = 10⁻⁸`` for ``p = 1`` and ``2`` alike.
``SDDSolution.residual`` reports the outer residual all the same; ``converged`` means every
nested solve reached ``tol``.

Error of Theorem 4.2
--------------------
Lemma 4.1 measures a solve by ``ε = ‖z − z*‖_Q / ‖z*‖_Q`` with ``z* = Q⁺ b``.  With a lower bound
``λ ≤ λ_min(R)`` (``eigenvalue_floor``; the ridge for ``R = L + ridge·I`` with ``L`` positive
semi-definite), ``λ_min(Q) ≥ λ^p`` and the residual ``r = b − Q z`` gives

.. math::

    \|z - z^*\|_Q = \|R^{-p/2} r\|_2 \le \delta := \min\Big(\frac{\|r\|_2}{\lambda^{p/2}},\;
    \sum_{k=1}^{p} \big\|R^{k-1-p/2}\big\|_2 \|s_k\|_2\Big), \qquad
    \|z^*\|_Q^2 = b^\top z^* = b^\top z + (z^*)^\top Q (z^* - z) \ge b^\top z - \|z^*\|_Q\,\delta ,

with ``‖R^e‖₂ ≤ λ^e`` for ``e < 0`` and ``≤ ρ̄^e`` for ``e ≥ 0`` (``ρ̄ = max_i Σ_j |R_ij| ≥ ‖R‖₂``,
Gershgorin).  So ``‖z*‖_Q ≥ (−δ + √(δ² + 4 bᵀz))/2``, and also ``‖z*‖_Q ≥ ‖b‖₂ / ρ̄^{p/2}``;
``epsilon`` is ``δ`` over the larger of the two, a rigorous upper bound.  The stage sum is the
sharp one for ``p ≥ 2``: it sees the residuals ``s_k`` the solves reached, where ``r`` carries
the rounding of the products ``R^{k−1} s_k``.  For a singular consistent ``R`` the same holds
on the range of ``R`` with ``λ`` a lower bound of its smallest *non-zero* eigenvalue.

With ``ε_i`` reached for ``z_i`` (``b = e_{s_i}``, so ``‖z_i*‖_Q = √(Q⁺_{s_i s_i})``) the proof of
Theorem 4.2 gives, for ``A = Zᵀ Q Z``,

.. math::

    |A_{ij} - Q^+_{s_i s_j}| \le (\varepsilon_i + \varepsilon_j + \varepsilon_i\varepsilon_j)
    \sqrt{Q^+_{s_i s_i}\, Q^+_{s_j s_j}} ,

(the paper writes ``Q⁺_{s_i s_i} Q⁺_{s_j s_j}`` without the square root: ``‖Q⁺ e_i‖_Q = √(Q⁺_ii)``).

Precision of the V-cycle
------------------------
The blocked V-cycle runs in float32 (``cycle_dtype``) while CG, its residuals and ``Z`` stay in
float64: the preconditioner only needs to be close to ``R⁻¹`` and symmetric positive definite,
and float32 rounding (relative ``~10⁻⁷``) changes neither the iterations nor the ``ε`` reached.
64,000 two-moons points, paper 002's graph, 32 unit columns, ``tol = 10⁻⁸`` (median of 3 in one
process, 2-core machine at load ~2.5): solve 3.71 s (float64 cycle) vs 3.01 s (float32), 17
iterations and ``ε ≤ 2.26·10⁻⁶`` both.

Singular systems
----------------
A singular positive semi-definite ``R`` (a Laplacian without ridge) is solved when every column of
``B`` is orthogonal to its null space (the system is consistent: Poisson learning's sources sum
to zero on each connected component); ``"amg"`` and ``"cg"`` only, ``power=1`` only (the nested
right-hand sides ``y_k`` would carry a null-space component).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from ..linalg.ops import get_ops
from .amg import MAX_INVERSE, AMGPreconditioner
from .cg import SolveResult, cg

__all__ = [
    "MAX_REFINEMENTS",
    "METHODS",
    "SDDSolution",
    "SDDSolver",
    "jacobi",
    "solve_sdd",
]

#: The preparations of ``R``, by ``method``.
METHODS = ("amg", "cg", "direct")
#: Rounds of iterative refinement of one nested solve whose recomputed residual is above tol.
MAX_REFINEMENTS = 3
#: Work vectors of ``n`` floats that one column costs during a CG solve: the right-hand side,
#: solution, residual, direction, preconditioned residual, ``R·p`` and the V-cycle's temporaries.
COLUMN_WORK_VECTORS = 10
#: Columns CG iterates together at most: narrower blocks stay nearer the caches.  Two moons,
#: paper 002's graph, one AMG hierarchy (python /tmp/w/HS/batch.py, a loaded 2-core machine):
#: 8,000 points × 250 columns 7.7–9.0 s in batches of 16–32 against 12.0–23.6 s in one block;
#: 64,000 points × 64 columns 22.5–24.4 s in batches of 8–16 against 29.8–36.4 s.
COLUMN_BATCH = 16
#: Strength of connection of the hierarchy with the blocked cycle (pyamg's cycle, the graph
#: estimators', keeps ``AMG_OPTIONS``'s evolution strength).  Evolution strength grows
#: super-linearly where a coarse level is nearly dense: 10-D Gaussian mixture, 64,000 points,
#: paper 002's graph (coarse level 4,374 rows, 1.96 M non-zeros), build 13.3 s (evolution) vs
#: 0.81 s (symmetric), 14 CG iterations both for 64 unit columns; two moons, 64,000 points:
#: 6.5 s vs 4.1 s, 17 vs 18 iterations (python /tmp/w/HO/str.py gmm|moons 64000 64|32, one
#: process, 2-core machine at load ~2).
SDD_STRENGTH = "symmetric"


def jacobi(A):
    """``V ↦ diag(A)⁻¹ V`` (rows with a non-positive diagonal are left as they are)."""
    diagonal = A.diagonal()
    # capped: a degree below 1/DBL_MAX (1e-315 on a million two-moons points) would give inf
    with np.errstate(over="ignore"):
        inverse = np.where(diagonal > 0, 1.0 / np.where(diagonal > 0, diagonal, 1.0), 1.0)
    np.minimum(inverse, MAX_INVERSE, out=inverse)
    return lambda V: V * inverse[:, None]


@dataclass(frozen=True)
class SDDSolution:
    """The result of :meth:`SDDSolver.solve`.

    Attributes
    ----------
    solution : ndarray of shape (n, r), or (n,) for a vector ``B``
        ``Z ≈ (R^p)⁻¹ B`` (float64).
    iterations : ndarray of int, shape (power,)
        CG iterations of each nested solve (the largest over the columns and batches, summed over
        refinement rounds); 0 for ``"direct"``.
    residual : ndarray of shape (r,)
        ``‖b − R^p z‖₂ / ‖b‖₂`` per column, recomputed with ``p`` sparse products (0 for a zero
        column).
    epsilon : ndarray of shape (r,) or None
        Upper bound of Lemma 4.1's ``‖z − z*‖_Q / ‖z*‖_Q`` (module docstring); None without an
        ``eigenvalue_floor``.
    converged : bool
        Every nested solve of every column reached ``tol`` (module docstring).
    method : str
        ``"amg"``, ``"cg"`` or ``"direct"``.
    time : float
        Seconds of this solve (the preparation of ``R`` is :attr:`SDDSolver.setup_time`).
    """

    solution: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    epsilon: np.ndarray | None
    converged: bool
    method: str
    time: float


def _check_matrix(R):
    if not sp.issparse(R):
        raise TypeError(
            f"R must be a scipy.sparse matrix (a graph Laplacian plus ridge), got "
            f"{type(R).__name__}; wrap a dense array with scipy.sparse.csr_matrix"
        )
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"R must be square, got shape {R.shape}")
    R = sp.csr_matrix(R, dtype=np.float64)
    if not np.all(np.isfinite(R.data)):
        raise ValueError("R has non-finite entries (NaN or inf); check the graph's weights")
    scale = float(np.abs(R.data).max(initial=0.0))
    asym = abs(R - R.T)
    if asym.nnz and float(asym.max()) > 1e-10 * scale:
        raise ValueError(
            f"R must be symmetric; max |R - R.T| = {float(asym.max()):.3g} (largest entry "
            f"{scale:.3g}). Symmetrize the graph (symmetrize='union' or 'mean')"
        )
    return R


def _check_tol(tol):
    if not (isinstance(tol, int | float | np.floating) and np.isfinite(tol) and 0 < tol < 1):
        raise ValueError(
            f"tol must be a float in (0, 1) (the relative residual of each solve), got {tol!r}"
        )
    return float(tol)


class SDDSolver:
    """Solves ``R^p Z = B`` for a sparse SDD matrix ``R`` prepared once.

    Parameters
    ----------
    R : sparse matrix of shape (n, n)
        Symmetric positive definite (a Laplacian or normalized Laplacian plus ``ridge·I``, or a
        principal sub-matrix of one), or a singular positive semi-definite Laplacian with
        consistent right-hand sides (module docstring).
    method : {"amg", "cg", "direct"}, default="amg"
        AMG-preconditioned CG, Jacobi-preconditioned CG, or a sparse LU factorization.
    tol : float, default=1e-8
        Relative residual ``‖y_{k−1} − R y_k‖₂ / ‖y_{k−1}‖₂`` each column of each nested solve
        must reach (for ``power=1``: ``‖b − R z‖₂ / ‖b‖₂``).
    max_iter : int, optional
        Iterations of one nested CG solve; default ``10 n`` (``"cg"``) or 1,000 (``"amg"``).
    near_nullspace : array_like of shape (n,) or (n, k), optional
        Candidate vectors of ``R``'s smallest eigenvalues for the AMG hierarchy (pyamg's ``B``;
        ``"amg"`` only).  The constant vector by default, right for ``D − W``; for a normalized
        Laplacian ``I − D^{-1/2} W D^{-1/2}`` pass ``sqrt(degree)``.
    memory_budget : int, str or None
        Bounds the CG work arrays (``COLUMN_WORK_VECTORS · n`` floats a column): columns are solved
        in batches that fit (and of at most ``COLUMN_BATCH`` columns, which is faster).  None: a
        quarter of the memory available.
    verbose : int, default=0
        CG's progress counter (:func:`semiscale.solvers.cg`).
    cycle : {"blocked", "pyamg"}, default="blocked"
        The AMG V-cycle (:class:`~semiscale.solvers.amg.AMGPreconditioner`): all columns at once
        (:class:`~semiscale.solvers.amg.BlockedVCycle`), or pyamg's, one column at a time (the
        reference).  The blocked cycle's hierarchy uses the symmetric strength of
        connection (``SDD_STRENGTH``), pyamg's the evolution one (``AMG_OPTIONS``).
    cycle_dtype : {numpy.float32, numpy.float64}, default=numpy.float32
        Precision of the blocked V-cycle (:class:`~semiscale.solvers.amg.BlockedVCycle`); CG,
        its residuals and the solution stay float64.  The cycle's sparse products are bound by
        memory traffic and float32 halves it (measurements in the module docstring).

    Attributes
    ----------
    preconditioner : AMGPreconditioner, callable or None
        The V-cycle (``"amg"``), the Jacobi step (``"cg"``), None (``"direct"``).
    setup_time : float
        Seconds spent preparing ``R`` (hierarchy, diagonal or factorization).
    norm_bound : float
        ``ρ̄ = max_i Σ_j |R_ij| ≥ ‖R‖₂``.
    """

    def __init__(
        self,
        R,
        *,
        method="amg",
        tol=1e-8,
        max_iter=None,
        near_nullspace=None,
        memory_budget=None,
        verbose=0,
        cycle="blocked",
        cycle_dtype=np.float32,
    ):
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.tol = _check_tol(tol)
        if max_iter is not None and (isinstance(max_iter, bool) or int(max_iter) < 1):
            raise ValueError(f"max_iter must be a positive int or None, got {max_iter!r}")
        self.R = _check_matrix(R)
        n = self.R.shape[0]
        self.method = method
        self.max_iter = (
            int(max_iter) if max_iter is not None else (1000 if method == "amg" else 10 * n)
        )
        self.memory_budget = parse_memory_budget(memory_budget)
        self.verbose = verbose
        self.norm_bound = float(np.asarray(abs(self.R).sum(axis=1)).max(initial=0.0))
        if near_nullspace is not None:
            if method != "amg":
                raise ValueError(
                    f"near_nullspace shapes the AMG hierarchy only; method={method!r} does not "
                    "use it (use method='amg' or drop near_nullspace)"
                )
            near_nullspace = np.asarray(near_nullspace, dtype=np.float64)
            if near_nullspace.shape[0] != n or near_nullspace.ndim not in (1, 2):
                raise ValueError(
                    f"near_nullspace must have shape ({n},) or ({n}, k), got {near_nullspace.shape}"
                )
            if not np.all(np.isfinite(near_nullspace)):
                raise ValueError("near_nullspace has non-finite entries")
        start = time.perf_counter()
        self._factor = None
        if method == "amg":
            self.preconditioner = AMGPreconditioner(
                self.R,
                near_nullspace=near_nullspace,
                cycle=cycle,
                cycle_dtype=cycle_dtype,
                strength=SDD_STRENGTH if cycle == "blocked" else None,
            )
        elif method == "cg":
            self.preconditioner = jacobi(self.R)
        else:
            self.preconditioner = None
            try:
                self._factor = get_ops().sparse_factorized(self.R)
            except RuntimeError as exc:
                raise ValueError(
                    f"method='direct' needs a non-singular R; the sparse LU failed ({exc}). "
                    "Add a ridge, or use method='amg' for a consistent singular system"
                ) from exc
        self.setup_time = time.perf_counter() - start

    @property
    def shape(self):
        return self.R.shape

    def _batch_columns(self, r):
        n = self.R.shape[0]
        per_column = COLUMN_WORK_VECTORS * n * 8
        columns = self.memory_budget // per_column
        if columns < 1:
            raise MemoryBudgetError(
                f"one right-hand side needs {format_bytes(per_column)} of CG work arrays "
                f"({COLUMN_WORK_VECTORS} vectors of {n} floats) but memory_budget is "
                f"{format_bytes(self.memory_budget)}; raise memory_budget"
            )
        return min(r, int(columns), COLUMN_BATCH)

    def solve_once(self, B, *, tol=None, desc="CG") -> SolveResult:
        """One pass of ``R X = B`` (no power, no refinement), columns in memory-bounded batches.

        ``tol`` (default ``self.tol``) is CG's relative residual per column; ``"direct"`` solves
        from the factorization (``n_iter`` 0, residuals recomputed).  This is the solve of the
        graph estimators (:func:`semiscale.solvers.graph_learning.graph_cg`).
        """
        tol = self.tol if tol is None else tol
        B = np.asarray(B, dtype=np.float64)
        n = self.R.shape[0]
        B2 = B.reshape(n, -1)
        r = B2.shape[1]
        if self._factor is not None:
            X = np.asarray(self._factor(B2)).reshape(n, r)
            norms = np.linalg.norm(B2, axis=0)
            res = np.linalg.norm(B2 - get_ops().sparse_matmul(self.R, X), axis=0)
            rel = res / np.where(norms > 0, norms, 1.0)
            history = np.vstack([np.where(norms > 0, 1.0, 0.0), rel])
            return SolveResult(
                x=X.reshape(B.shape),
                n_iter=0,
                converged=bool(np.all(rel <= tol)),
                residuals=history,
                broken=np.zeros(r, dtype=bool),
            )
        step = self._batch_columns(r)
        if step >= r:
            return cg(
                self.R,
                B,
                preconditioner=self.preconditioner,
                tol=tol,
                max_iter=self.max_iter,
                verbose=self.verbose,
                desc=desc,
            )
        parts = [
            cg(
                self.R,
                B2[:, j : j + step],
                preconditioner=self.preconditioner,
                tol=tol,
                max_iter=self.max_iter,
                verbose=self.verbose,
                desc=desc,
            )
            for j in range(0, r, step)
        ]
        n_iter = max(p.n_iter for p in parts)
        # pad each batch's history with its last row (a finished column repeats its value)
        history = np.hstack(
            [
                np.vstack([p.residuals, np.repeat(p.residuals[-1:], n_iter - p.n_iter, axis=0)])
                for p in parts
            ]
        )
        return SolveResult(
            x=np.hstack([p.x.reshape(n, -1) for p in parts]).reshape(B.shape),
            n_iter=n_iter,
            converged=all(p.converged for p in parts),
            residuals=history,
            broken=np.concatenate([p.broken for p in parts]),
        )

    def apply_power(self, Z, power):
        """``R^power Z`` by ``power`` sparse products."""
        out = Z
        for _ in range(power):
            out = get_ops().sparse_matmul(self.R, out)
        return out

    def _stage(self, Y, desc):
        """``R X = Y`` to ``tol`` on the *recomputed* residual.

        CG, then up to ``MAX_REFINEMENTS`` refinement solves ``R D = Y − R X`` on the columns
        whose true residual (CG's recursive one drifts) is still above ``tol``.  Returns ``X``,
        the true residual norms and the iterations (the largest over the columns of each round,
        summed over the rounds).
        """
        n = self.R.shape[0]
        result = self.solve_once(Y, desc=desc)
        X = np.asarray(result.x).reshape(Y.shape)
        iterations = result.n_iter
        S = Y - get_ops().sparse_matmul(self.R, X)
        limit = self.tol * np.linalg.norm(Y, axis=0)
        stage = np.linalg.norm(S, axis=0)
        for _ in range(MAX_REFINEMENTS):
            bad = np.flatnonzero(stage > limit)
            if not bad.size:
                break
            correction = self.solve_once(S[:, bad], desc=f"{desc}, refinement")
            iterations += correction.n_iter
            X[:, bad] += np.asarray(correction.x).reshape(n, bad.size)
            S[:, bad] = Y[:, bad] - get_ops().sparse_matmul(self.R, X[:, bad])
            stage[bad] = np.linalg.norm(S[:, bad], axis=0)
        return X, stage, iterations

    def solve(self, B, power=1, *, eigenvalue_floor=None) -> SDDSolution:
        """Solve ``R^power Z = B`` by ``power`` nested solves (module docstring).

        Parameters
        ----------
        B : array_like of shape (n,) or (n, r)
            Right-hand sides.
        power : int, default=1
            ``p`` of ``Q = R^p``.
        eigenvalue_floor : float, optional
            A lower bound of ``λ_min(R)`` (of its smallest non-zero eigenvalue for a singular
            ``R``); gives :attr:`SDDSolution.epsilon`.

        Returns
        -------
        SDDSolution
        """
        start = time.perf_counter()
        if isinstance(power, bool) or not isinstance(power, int | np.integer) or power < 1:
            raise ValueError(f"power must be a positive int (Q = R^power), got {power!r}")
        power = int(power)
        if eigenvalue_floor is not None and not (
            isinstance(eigenvalue_floor, int | float | np.floating)
            and np.isfinite(eigenvalue_floor)
            and eigenvalue_floor > 0
        ):
            raise ValueError(
                f"eigenvalue_floor must be a positive lower bound of λ_min(R) (e.g. the ridge), "
                f"or None; got {eigenvalue_floor!r}"
            )
        B = np.asarray(B, dtype=np.float64)
        n = self.R.shape[0]
        if B.ndim not in (1, 2) or B.shape[0] != n:
            raise ValueError(f"B must have shape ({n},) or ({n}, r) to match R, got {B.shape}")
        if not np.all(np.isfinite(B)):
            raise ValueError("B has non-finite entries (NaN or inf)")
        B2 = B.reshape(n, -1)
        norms = np.linalg.norm(B2, axis=0)
        iterations = np.zeros(power, dtype=int)
        stages = np.zeros((power, B2.shape[1]))  # ‖s_k‖ = ‖R y_k − y_{k−1}‖ per column
        reached = np.ones(B2.shape[1], dtype=bool)
        Y = B2
        for k in range(power):
            previous = np.linalg.norm(Y, axis=0)
            Y, stages[k], iterations[k] = self._stage(Y, f"CG ({k + 1}/{power})")
            reached &= stages[k] <= self.tol * previous
        residual = np.linalg.norm(B2 - self.apply_power(Y, power), axis=0)
        epsilon = None
        if eigenvalue_floor is not None:
            epsilon = self._epsilon(B2, Y, residual, stages, norms, float(eigenvalue_floor))
        return SDDSolution(
            solution=Y.reshape(B.shape),
            iterations=iterations,
            residual=residual / np.where(norms > 0, norms, 1.0),
            epsilon=epsilon,
            converged=bool(np.all(reached)),
            method=self.method,
            time=time.perf_counter() - start,
        )

    def _epsilon(self, B, Z, residual, stages, norms, floor):
        """The a-posteriori bound on ``‖z − z*‖_Q / ‖z*‖_Q`` of the module docstring."""
        power = stages.shape[0]
        rho = max(self.norm_bound, floor)
        # ‖R^e‖₂ ≤ floor^e (e < 0) or ρ̄^e (e ≥ 0), for the stage terms R^{k−1−p/2} s_k
        exponents = np.arange(power) - power / 2.0
        factors = np.where(exponents < 0, floor**exponents, rho ** np.maximum(exponents, 0))
        delta = np.minimum(np.einsum("k,kj->j", factors, stages), residual / floor ** (power / 2))
        btz = np.maximum(np.einsum("ij,ij->j", B, Z), 0.0)
        from_solution = (-delta + np.sqrt(delta**2 + 4.0 * btz)) / 2.0
        from_norm = norms / rho ** (power / 2.0)
        lower = np.maximum(from_solution, from_norm)
        eps = delta / np.where(lower > 0, lower, 1.0)
        return np.where(norms > 0, np.where(lower > 0, eps, np.inf), 0.0)


def solve_sdd(
    R,
    B,
    *,
    power=1,
    method="amg",
    tol=1e-8,
    max_iter=None,
    near_nullspace=None,
    memory_budget=None,
    verbose=0,
    eigenvalue_floor=None,
) -> SDDSolution:
    """``SDDSolver(R, ...).solve(B, power, eigenvalue_floor=...)`` in one call.

    See :class:`SDDSolver` for the parameters.
    """
    solver = SDDSolver(
        R,
        method=method,
        tol=tol,
        max_iter=max_iter,
        near_nullspace=near_nullspace,
        memory_budget=memory_budget,
        verbose=verbose,
    )
    return solver.solve(B, power, eigenvalue_floor=eigenvalue_floor)
