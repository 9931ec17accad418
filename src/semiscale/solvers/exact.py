r"""Quadratic solvers over the full span: exact LapRLS (paper 000 eq. 3) and supervised RLS.

Each solver maps a :class:`~semiscale.solvers.problem.QuadraticProblem`

.. math::  \min_f\ \sum_{i \in a} f_i^2 - 2\,\mathrm{rhs}^\top f + λ_A \|f\|_K^2 + λ_I f^\top L f

to a :class:`~semiscale.solvers.problem.Solution`, with ``f = Σ_j α_j k(x_j, ·)`` over all ``n``
training points (the representer theorem).  Cancelling K from the normal equations
``K (J_a K + λ_A I + λ_I L K) α = K rhs`` gives paper 000's eq. (3),
``(J_a K + λ_A I + λ_I L K) α = rhs``.  Without a graph term (``λ_I = 0``) only the rows that
carry a loss term (``qp.labeled``) enter the span: ``(J_a K_ll + λ_A I) α_l = rhs_l``, i.e. kernel
ridge regression when every labeled row is active.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._progress import stage
from ..linalg import FullLapRLSHessian, kernel_matmul, kernel_matrix
from ..linalg.ops import get_ops
from .cg import cg
from .dense import solve_or_lstsq
from .hessian_system import solve_hessian_system
from .nystrom import solver_memory
from .problem import QuadraticProblem, Solution

__all__ = ["EXACT_SOLVERS", "solve_exact"]


#: What the dense direct LapRLS solve is called in its budget refusal.
DIRECT_WHAT = "LapRLS with solver='direct'"


def check_dense_fits(n: int, memory_budget, n_arrays: int, what: str) -> None:
    """Refuse ``n_arrays`` dense ``n × n`` float64 arrays that exceed ``memory_budget``.

    Estimators call it before building their graph too, so that an impossible exact fit is
    refused before any work (at a million points the graph alone took 10 s).
    """
    needed = n_arrays * n * n * 8
    budget = parse_memory_budget(memory_budget)
    if needed > budget:
        raise MemoryBudgetError(
            f"{what} needs {format_bytes(needed)} for n={n} points but memory_budget is "
            f"{format_bytes(budget)}; raise memory_budget, or use NystromLapRLS for large n"
        )


def _support(qp: QuadraticProblem) -> np.ndarray:
    """Rows that carry a loss term: the span of f when there is no graph term."""
    return np.flatnonzero(qp.active if qp.labeled is None else qp.labeled)


def _solve_rls(qp: QuadraticProblem) -> Solution:
    """No graph term: ``(J_a K_ll + λ_A I) α_l = rhs_l`` on the labeled rows (O(l³))."""
    idx = _support(qp)
    # K_ll and LAPACK's working copy of it
    check_dense_fits(idx.size, qp.memory_budget, 2, "kernel RLS on the labeled points")
    X_l = qp.X[idx]
    active_l = qp.active[idx]
    K_ll = kernel_matrix(qp.kernel, X_l, memory_budget=qp.memory_budget)
    if active_l.all():
        K_ll.flat[:: K_ll.shape[0] + 1] += qp.lambda_ambient
        alpha = solve_or_lstsq(K_ll, qp.rhs[idx], assume_a="pos", what="RLS system")
    else:
        K_ll[~active_l] = 0.0
        K_ll.flat[:: K_ll.shape[0] + 1] += qp.lambda_ambient
        alpha = solve_or_lstsq(K_ll, qp.rhs[idx], what="RLS system")
    return Solution(X_fit=X_l, dual_coef=alpha, info={"system": "labeled", "n_fit": idx.size})


#: Relative residual above which an active-set (Woodbury) solve is redone by a dense LU.
ACTIVE_SET_RESIDUAL_TOL = 1e-10


class _ActiveSetFactor:
    r"""One LU for every Newton step of a fit: Woodbury on the active labeled rows.

    A Newton step of a piecewise-quadratic loss solves eq. (3) with the active rows ``a`` of the
    labeled rows ``ℓ``, and λ's divided by a scale ``s`` that is fixed within a loss (its
    curvature / 2).  Multiplied by ``s`` the system is

    .. math::  (B_0 + s\,E_a K_{a\cdot})\,α = s\,\mathrm{rhs},\qquad
               B_0 = λ_A^0 I + λ_I^0 L K ,

    with ``B_0`` the same for every step and every scale.  With ``G = B_0^{-1} E_ℓ`` (n × l) and
    ``C = K_{ℓ\cdot} G`` (l × l), computed once, Woodbury's identity gives

    .. math::  α = w − G_{\cdot a} (I + s C_{aa})^{-1} s K_{a\cdot} w ,\qquad
               w = B_0^{-1} s\,\mathrm{rhs} ,

    and ``w = G (s rhs_ℓ)`` when the right-hand side vanishes off the labeled rows (a Newton
    step's, and the bias column for an unnormalized Laplacian): O(n l) per step instead of an
    O(n³) LU.  Holds the LU of ``B_0`` and ``G`` (n × n + n × l) beside the cached K.
    """

    def __init__(self, K, qp: QuadraticProblem, labeled_index):
        ops = get_ops()
        self.lambda_ambient, self.lambda_intrinsic = qp.lambda_ambient, qp.lambda_intrinsic
        self.labeled_index = labeled_index
        B0 = K.copy()
        ops.laprls_system_inplace(
            B0, qp.laplacian, labeled_index[:0], qp.lambda_intrinsic, qp.lambda_ambient,
            qp.memory_budget,
        )  # fmt: skip
        self.norm_B0 = float(np.linalg.norm(B0, 1))
        selector = np.zeros((K.shape[0], labeled_index.size))
        selector[labeled_index, np.arange(labeled_index.size)] = 1.0
        with warnings.catch_warnings():
            # B0 alone may be singular (λ_A = 0): then G is not finite and every step falls
            # back to the dense LU of the whole system, which the labeled rows make regular.
            warnings.simplefilter("ignore")
            self.lu = ops.lu_factor(B0, overwrite_a=True)
            del B0
            self.G = ops.lu_solve(self.lu, selector)
        self.usable = bool(np.all(np.isfinite(self.G)))
        self.K_labeled = K[labeled_index]
        self.C = ops.matmul(self.K_labeled, self.G)
        self.norm_K = float(np.linalg.norm(self.K_labeled, 1))

    def scale(self, qp: QuadraticProblem) -> float | None:
        """``s`` with ``qp``'s λ's = the factored λ's / s, or None when they are not so related."""
        if self.lambda_ambient > 0 and qp.lambda_ambient > 0:
            s = self.lambda_ambient / qp.lambda_ambient
        elif self.lambda_ambient == 0 and qp.lambda_ambient == 0:
            s = self.lambda_intrinsic / qp.lambda_intrinsic
        else:
            return None
        if not np.isclose(self.lambda_intrinsic / s, qp.lambda_intrinsic, rtol=1e-12, atol=0.0):
            return None
        return s

    def solve(self, K, qp: QuadraticProblem, s: float):
        """``(α, Kα, relative residual)`` of the step's system (class docstring)."""
        ops = get_ops()
        rhs = s * qp.rhs
        lab = self.labeled_index
        on_labeled = np.zeros(qp.rhs.shape[0], dtype=bool)
        on_labeled[lab] = True
        off_labeled = bool(np.any(rhs[~on_labeled]))
        w = ops.lu_solve(self.lu, rhs) if off_labeled else ops.matmul(self.G, rhs[lab])
        a = np.flatnonzero(qp.active[lab])  # positions of the active rows among the labeled
        alpha = w
        if a.size:
            t = s * ops.matmul(self.K_labeled[a], w)
            M = s * self.C[np.ix_(a, a)]
            M.flat[:: a.size + 1] += 1.0
            alpha = w - ops.matmul(self.G[:, a], ops.solve(M, t))
        K_alpha = ops.matmul(K, alpha)
        # residual of the scaled system, against what a backward-stable solve leaves
        residual = self.lambda_ambient * alpha - rhs
        residual += self.lambda_intrinsic * ops.sparse_matmul(qp.laplacian, K_alpha)
        residual[lab[a]] += s * K_alpha[lab[a]]
        scale = np.linalg.norm(rhs) + (self.norm_B0 + s * self.norm_K) * np.linalg.norm(alpha)
        return alpha, K_alpha, float(np.linalg.norm(residual) / max(scale, 1e-300))


def _solve_active_set(qp: QuadraticProblem, K, cache) -> Solution | None:
    """A Newton step by :class:`_ActiveSetFactor` (built on the first step), or None."""
    if qp.labeled is None:
        return None
    labeled_index = np.flatnonzero(qp.labeled)
    if labeled_index.size == 0 or np.any(qp.active & ~np.asarray(qp.labeled, bool)):
        return None
    if cache.get("active_set_failed"):
        return None
    factor = cache.get("active_set")
    s = factor.scale(qp) if factor is not None else None
    if s is None or not np.array_equal(factor.labeled_index, labeled_index):
        factor = _ActiveSetFactor(K, qp, labeled_index)
        cache["active_set"] = factor
        s = 1.0
    alpha = None
    if factor.usable:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                alpha, K_alpha, residual = factor.solve(K, qp, s)
            except np.linalg.LinAlgError:  # a singular capacitance matrix
                alpha = None
    if alpha is None or not (np.all(np.isfinite(alpha)) and residual <= ACTIVE_SET_RESIDUAL_TOL):
        # The dense LU decides, for this step and the fit's next ones; its n × n arrays take
        # the factor's place in memory.
        del cache["active_set"]
        cache["active_set_failed"] = True
        return None
    info = {"system": "full", "n_fit": qp.X.shape[0], "active_set": True}
    return Solution(X_fit=qp.X, dual_coef=alpha, train_decision=K_alpha, info=info)


def _solve_direct(qp: QuadraticProblem, options) -> Solution:
    """Dense LU solve of (J_a K + λ_A I + λ_I L K) α = rhs, paper 000 eq. (3).

    O(n³) time; the system matrix overwrites K column block by column block and LAPACK factors
    a copy (so that a singular system can fall back to least squares): two n×n arrays.
    """
    if qp.lambda_intrinsic == 0 or qp.laplacian is None:
        return _solve_rls(qp)
    X, L = qp.X, qp.laplacian
    n = X.shape[0]
    check_dense_fits(n, qp.memory_budget, 2, DIRECT_WHAT)
    # A Newton solve calls this once per step on the same X and kernel: a kernel_cache dict
    # keeps K between steps when a third n × n array fits the budget.
    cache = options.get("kernel_cache")
    if cache is not None and 3 * n * n * 8 > parse_memory_budget(qp.memory_budget):
        cache = None
    K = None
    if cache is None or "K" not in cache:
        with stage(f"kernel matrix ({n}×{n})", qp.verbose):
            K = np.asarray(kernel_matrix(qp.kernel, X, memory_budget=qp.memory_budget), float)
    if cache is not None:
        if "K" not in cache:
            cache["K"] = K
        # Newton steps share one LU when their active rows are labeled rows (Woodbury).
        solution = _solve_active_set(qp, cache["K"], cache)
        if solution is not None:
            return solution
        K = cache["K"].copy()
    with stage(f"LapRLS direct solve ({n}×{n} LU)", qp.verbose):
        # System matrix A = J_a K + λ_I L K + λ_A I, formed in place in K, in column blocks.
        get_ops().laprls_system_inplace(
            K, L, np.flatnonzero(qp.active), qp.lambda_intrinsic, qp.lambda_ambient,
            qp.memory_budget,
        )  # fmt: skip
        alpha = solve_or_lstsq(K, qp.rhs, what="LapRLS system")
    return Solution(X_fit=X, dual_coef=alpha, info={"system": "full", "n_fit": n})


def _solve_rls_cg(qp: QuadraticProblem, options) -> Solution:
    """No graph term, by (P)CG (paper 000's RLS-CG).

    Every labeled row active: the SPD system (K_ll + λ_A I) α_l = rhs_l, K_ll stored when it fits
    in half the memory budget, else recomputed in blocks at each iteration (memory O(l)).
    Otherwise the symmetric form over the labeled rows, as :func:`_solve_iterative` with L = 0.
    """
    idx = _support(qp)
    X_l = qp.X[idx]
    if not qp.active[idx].all():
        sub = dataclasses.replace(
            qp,
            X=X_l,
            rhs=qp.rhs[idx],
            active=qp.active[idx],
            labeled=None,
            laplacian=None,
            lambda_intrinsic=0.0,
        )
        solution = _solve_iterative(sub, options, graph=False)
        solution.train_decision = None  # on the labeled rows only; recomputed on all rows
        return solution
    lam = qp.lambda_ambient
    stored = idx.size**2 * 8 <= parse_memory_budget(qp.memory_budget) // 2
    if stored:
        K_ll = kernel_matrix(qp.kernel, X_l, memory_budget=qp.memory_budget)
        K_ll.flat[:: K_ll.shape[0] + 1] += lam
        diagonal = np.diag(K_ll).copy()
        operator = K_ll
    else:
        diagonal = qp.kernel.diag(X_l) + lam

        def operator(V):
            return kernel_matmul(qp.kernel, X_l, None, V, qp.memory_budget) + lam * V

    precond = None
    if options["solver"] == "pcg":
        precond = lambda V: V / diagonal[:, None]  # noqa: E731 - Jacobi on an SPD system
    result = cg(
        operator,
        qp.rhs[idx],
        preconditioner=precond,
        tol=options["tol"],
        max_iter=options["max_iter"],
    )
    info = {"system": "labeled", "n_fit": idx.size, "converged": bool(result.converged)}
    info["cached"] = stored
    return Solution(
        X_fit=X_l,
        dual_coef=result.x,
        n_iter=int(result.n_iter),
        residuals=result.residuals,
        info=info,
    )


def _solve_iterative(qp: QuadraticProblem, options, graph=True) -> Solution:
    """CG/PCG on the symmetric form H = K(J_a K + λ_A I + λ_I L K), z = K rhs.

    This is the Nyström system with every training point a center (s = n); f = Kα equals the
    solution of eq. (3).  K (n×n) is cached when it fits the memory budget, else recomputed in
    blocks at each iteration (O(n²d) per product).
    """
    if graph and (qp.lambda_intrinsic == 0 or qp.laplacian is None):
        return _solve_rls_cg(qp, options)
    active_index = np.flatnonzero(qp.active)
    n = qp.X.shape[0]
    L = qp.laplacian if qp.lambda_intrinsic > 0 else None
    degree = L.nnz / max(n, 1) if L is not None else 0.0
    # what the solve holds beside K (the preconditioner's n × n factors): checked, with K and
    # the work arrays, before anything is allocated
    reserved = solver_memory(
        options["solver"], options["preconditioner"], n, active_index.size, n, degree=degree
    )
    hessian = FullLapRLSHessian(
        qp.kernel,
        qp.X,
        active_index,
        qp.laplacian,
        qp.lambda_ambient,
        qp.lambda_intrinsic,
        memory_budget=qp.memory_budget,
        reserved=reserved,
        n_columns=qp.rhs.shape[1],
    )
    if qp.rhs_on_active_only:
        z = hessian.rhs(qp.rhs[active_index])
    else:
        z = kernel_matmul(qp.kernel, qp.X, None, qp.rhs, qp.memory_budget)
    preconditioner_options = {}
    if options["preconditioner"] == "sampled-hessian":
        preconditioner_options["random_state"] = qp.random_state
    alpha, n_iter, residuals, info = solve_hessian_system(
        hessian,
        z,
        solver=options["solver"],
        preconditioner=options["preconditioner"],
        preconditioner_options=preconditioner_options,
        tol=options["tol"],
        max_iter=options["max_iter"],
        memory_budget=qp.memory_budget,
        verbose=qp.verbose,
    )
    info.update(system="full", n_fit=qp.X.shape[0], cached=hessian.cached_)
    return Solution(
        X_fit=qp.X,
        dual_coef=alpha,
        train_decision=hessian.kns_matmul(alpha),
        n_iter=n_iter,
        residuals=residuals,
        info=info,
    )


#: Exact solvers by name: each maps a QuadraticProblem (and the options) to a Solution.
EXACT_SOLVERS = {
    "direct": _solve_direct,
    "cg": _solve_iterative,
    "pcg": _solve_iterative,
}


def solve_exact(qp: QuadraticProblem, *, solver="direct", **options) -> Solution:
    """Solve ``qp`` over the full span with ``solver`` (a key of :data:`EXACT_SOLVERS`).

    Parameters
    ----------
    qp : QuadraticProblem
    solver : {"direct", "cg", "pcg"}
    **options
        ``preconditioner`` (for "pcg"), ``tol``, ``max_iter``; ``kernel_cache`` (a dict, for
        "direct"): the kernel matrix kept there by the first call and reused by the next ones
        on the same ``X``, kernel and Laplacian (a Newton solve's steps), when three ``n × n``
        arrays fit ``memory_budget``; with it, steps whose active rows are labeled rows share
        one LU (:class:`_ActiveSetFactor`), checked by their residual (a dense LU per step
        otherwise).

    The exact reference computes in float64 whatever X's dtype: float32 kernel blocks carry
    errors of about κ(H)·6e-8 (see NystromLapRLSRegressor's kernel_dtype).
    """
    try:
        solve = EXACT_SOLVERS[solver]
    except (KeyError, TypeError):
        raise ValueError(f"solver={solver!r} is not one of {sorted(EXACT_SOLVERS)}") from None
    if qp.X.dtype != np.float64:
        qp = dataclasses.replace(qp, X=qp.X.astype(np.float64))
    options = {
        "solver": solver,
        "preconditioner": None,
        "tol": 1e-6,
        "max_iter": None,
        "kernel_cache": None,
        **options,
    }
    return solve(qp, options)
