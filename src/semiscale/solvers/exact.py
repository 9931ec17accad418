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
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._progress import stage
from ..linalg import FullLapRLSHessian, kernel_matmul, kernel_matrix
from ..linalg.ops import get_ops
from .cg import cg
from .dense import solve_or_lstsq
from .hessian_system import solve_hessian_system
from .nystrom_quadratic import solver_memory
from .problem import QuadraticProblem, Solution

__all__ = [
    "EXACT_SOLVERS",
    "KeptFactor",
    "keeping_factor",
    "reusing_kernel_matrices",
    "solve_exact",
]


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


@dataclasses.dataclass(frozen=True)
class KeptFactor:
    r"""An LU factorization a fit computed, kept for approximate CV's influence step.

    ``lu`` factors the ``n × n`` matrix

    .. math::  F = \operatorname{diag}(a)\, K + λ_I L K + λ_A I

    over all training rows, with ``a = row_weights`` (the direct solve's active rows: 1; the
    shared LU of a Newton fit, ``B₀``: 0), ``L = laplacian`` and the λ's of that system; ``K``
    is the kernel matrix it was built from (kept, not recomputed).
    """

    lu: tuple
    K: np.ndarray
    row_weights: np.ndarray
    laplacian: object
    lambda_ambient: float
    lambda_intrinsic: float


_KEPT: ContextVar[list | None] = ContextVar("semiscale_kept_factor", default=None)


@contextmanager
def keeping_factor():
    """Inside this context the exact solvers keep their last LU factorization (a list that
    holds at most one :class:`KeptFactor`, yielded); outside it nothing is kept.

    The direct solve then holds K, the system and its LU at once (three ``n × n`` arrays, where
    it otherwise holds two) and keeps the factor only when three fit ``memory_budget``.
    """
    holder: list = []
    token = _KEPT.set(holder)
    try:
        yield holder
    finally:
        _KEPT.reset(token)


def _keep(factor: KeptFactor) -> None:
    holder = _KEPT.get()
    if holder is not None:
        holder.clear()
        holder.append(factor)


_REUSED: ContextVar[dict | None] = ContextVar("semiscale_reused_kernel", default=None)


@contextmanager
def reusing_kernel_matrices():
    """Inside this context the exact solvers keep the last ``n × n`` kernel matrix they
    computed and reuse it for the same ``X`` object and kernel parameters: the grid points of a
    search that differ only in their regularization share one ``K(X, X)`` per training set.

    The matrix is kept (one more ``n × n`` array) only when four such arrays fit
    ``memory_budget``, and only for kernels whose parameters are numbers or strings.
    """
    token = _REUSED.set({})
    try:
        yield
    finally:
        _REUSED.reset(token)


def _kernel_key(kernel):
    """The kernel's class and parameters, or None when a parameter is not a plain value or the
    kernel learns more than its parameters from the data (it overrides ``Kernel.fit``: a
    data-dependent kernel reads the labels and the graph, which its parameters do not show)."""
    from ..kernels import Kernel

    if getattr(type(kernel), "fit", None) is not getattr(Kernel, "fit", None):
        return None
    params = kernel.get_params(deep=False)
    plain = (bool, int, float, str, type(None), np.number)
    if not all(isinstance(v, plain) for v in params.values()):
        return None
    return type(kernel).__module__, type(kernel).__qualname__, tuple(sorted(params.items()))


def _kernel_matrix(qp: QuadraticProblem):
    """``(K(X, X) in float64, whether it is kept)``: from :func:`reusing_kernel_matrices`'
    store when it holds it, else computed (and stored); a kept K must not be written."""
    store = _REUSED.get()
    key = _kernel_key(qp.kernel) if store is not None else None
    if key is not None and store.get("X") is qp.X and store.get("key") == key:
        return store["K"], True
    K = kernel_matrix(qp.kernel, qp.X, memory_budget=qp.memory_budget, n_jobs=qp.n_jobs)
    K = np.asarray(K, float)
    n = K.shape[0]
    if key is not None and 4 * n * n * 8 <= parse_memory_budget(qp.memory_budget):
        store.clear()
        # the store holds X itself: its id cannot be taken by another array while kept
        store.update(X=qp.X, key=key, K=K)
        return K, True
    return K, False


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
    K_ll = kernel_matrix(qp.kernel, X_l, memory_budget=qp.memory_budget, n_jobs=qp.n_jobs)
    if active_l.all():
        K_ll.flat[:: K_ll.shape[0] + 1] += qp.lambda_ambient
        alpha = solve_or_lstsq(K_ll, qp.rhs[idx], assume_a="pos", what="RLS system")
    else:
        K_ll[~active_l] = 0.0
        K_ll.flat[:: K_ll.shape[0] + 1] += qp.lambda_ambient
        alpha = solve_or_lstsq(K_ll, qp.rhs[idx], what="RLS system")
    return Solution(X_fit=X_l, dual_coef=alpha, info={"system": "labeled", "n_fit": idx.size})


#: Backward error (per right-hand side, after one refinement step) above which a shared-LU
#: (Woodbury) step is redone by a dense LU; a dense LU leaves about 1e-16.
ACTIVE_SET_RESIDUAL_TOL = 1e-13


def active_set_bytes(n: int, n_labeled: int) -> int:
    """What :class:`_ActiveSetFactor` holds beside the cached K: the LU of B₀, G, K_ℓ· and C."""
    return 8 * (n * n + 2 * n * n_labeled + n_labeled * n_labeled)


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

    with ``w = G (s rhs_ℓ)`` when the right-hand side vanishes off the labeled rows (a Newton
    step's right-hand side; the bias column of the bordered system has round-off off them and
    takes the triangular solves).  One step of iterative refinement with the same factors
    follows, and each column's backward error is returned: B₀ is worse conditioned than the
    whole system (its only ridge is λ_A), and without refinement the bias came out wrong on
    small ``ambient_reg``.  O(n²) per step (triangular solves, K·α) instead of an O(n³) LU;
    holds :func:`active_set_bytes` beside the cached K.
    """

    def __init__(self, K, qp: QuadraticProblem, labeled_index):
        ops = get_ops()
        n, n_labeled = K.shape[0], labeled_index.size
        self.lambda_ambient, self.lambda_intrinsic = qp.lambda_ambient, qp.lambda_intrinsic
        self.labeled_index = labeled_index
        # Fortran order: LAPACK factors B0 in place (a C-ordered array would be copied).
        B0 = np.array(K, order="F")
        ops.laprls_system_inplace(
            B0,
            qp.laplacian,
            labeled_index[:0],
            qp.lambda_intrinsic,
            qp.lambda_ambient,
            qp.memory_budget,
        )
        self.norm_B0 = float(np.linalg.norm(B0, 1))
        self.G = np.empty((n, n_labeled))
        with warnings.catch_warnings():
            # B0 alone may be singular (λ_A = 0): then G is not finite and every step falls
            # back to the dense LU of the whole system, which the labeled rows make regular.
            warnings.simplefilter("ignore")
            self.lu = ops.lu_factor(B0, overwrite_a=True)
            del B0
            step = max(1, min(n_labeled, (32 * 1024**2) // (8 * n)))  # selector blocks
            for start in range(0, n_labeled, step):
                cols = np.arange(start, min(start + step, n_labeled))
                selector = np.zeros((n, cols.size))
                selector[labeled_index[cols], np.arange(cols.size)] = 1.0
                self.G[:, cols] = ops.lu_solve(self.lu, selector)
        self.usable = bool(np.all(np.isfinite(self.G)))
        if self.usable:
            _keep(
                KeptFactor(
                    self.lu, K, np.zeros(n), qp.laplacian, qp.lambda_ambient, qp.lambda_intrinsic
                )
            )
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

    def _apply_inverse(self, rhs, active, s, capacitance):
        """``(B₀ + s E_a K_a·)⁻¹ rhs`` by Woodbury (class docstring)."""
        ops = get_ops()
        lab = self.labeled_index
        off_labeled = np.ones(rhs.shape[0], dtype=bool)
        off_labeled[lab] = False
        only_labeled = not np.any(rhs[off_labeled])
        w = ops.matmul(self.G, rhs[lab]) if only_labeled else ops.lu_solve(self.lu, rhs)
        if active.size == 0:
            return w
        # (K_ℓ· w)[a] and G z with z zero off a: no n × |a| copies of G or K
        t = s * ops.matmul(self.K_labeled, w)[active]
        z = np.zeros((lab.size, rhs.shape[1]))
        z[active] = capacitance(t)
        return w - ops.matmul(self.G, z)

    def _residual(self, K, qp, s, active, rhs, alpha):
        """``(s rhs − A α, K α)`` for the scaled system ``A = B₀ + s E_a K_a·``."""
        ops = get_ops()
        K_alpha = ops.matmul(K, alpha)
        residual = rhs - self.lambda_ambient * alpha
        residual -= self.lambda_intrinsic * ops.sparse_matmul(qp.laplacian, K_alpha)
        rows = self.labeled_index[active]
        residual[rows] -= s * K_alpha[rows]
        return residual, K_alpha

    def solve(self, K, qp: QuadraticProblem, s: float):
        """``(α, Kα, largest backward error over the columns)`` of the step's system."""
        ops = get_ops()
        rhs = s * qp.rhs
        active = np.flatnonzero(qp.active[self.labeled_index])  # among the labeled rows
        M = s * self.C[np.ix_(active, active)]
        M.flat[:: active.size + 1] += 1.0
        M_factor = ops.lu_factor(M) if active.size else None

        def capacitance(t):
            return ops.lu_solve(M_factor, t)

        alpha = self._apply_inverse(rhs, active, s, capacitance)
        residual, _ = self._residual(K, qp, s, active, rhs, alpha)
        alpha = alpha + self._apply_inverse(residual, active, s, capacitance)  # refinement
        residual, K_alpha = self._residual(K, qp, s, active, rhs, alpha)
        norm_A = self.norm_B0 + s * self.norm_K
        error = np.linalg.norm(residual, axis=0) / np.maximum(
            np.linalg.norm(rhs, axis=0) + norm_A * np.linalg.norm(alpha, axis=0), 1e-300
        )
        return alpha, K_alpha, float(np.max(error))


def _solve_active_set(qp: QuadraticProblem, K, cache) -> Solution | None:
    """A Newton step by :class:`_ActiveSetFactor` (built on the first step), or None.

    None sends the step to the dense LU: a problem the factor does not fit (active rows off the
    labeled ones, no labeled rows), a factor over the memory budget, or a step whose backward
    error exceeds :data:`ACTIVE_SET_RESIDUAL_TOL` (then the dense LU serves the rest of the
    fit, and the factor's memory is released for it).
    """
    if qp.labeled is None or cache.get("active_set_failed"):
        return None
    labeled_index = np.flatnonzero(qp.labeled)
    if labeled_index.size == 0 or np.any(qp.active & ~np.asarray(qp.labeled, bool)):
        return None
    n = K.shape[0]
    # beside the cached K: the factor, and at most the dense path's own two n × n arrays
    if active_set_bytes(n, labeled_index.size) > 2 * n * n * 8:
        return None
    factor = cache.get("active_set")
    s = factor.scale(qp) if factor is not None else None
    if s is None or not np.array_equal(factor.labeled_index, labeled_index):
        cache.pop("active_set", None)
        factor = _ActiveSetFactor(K, qp, labeled_index)
        cache["active_set"] = factor
        s = 1.0
    alpha = None
    if factor.usable:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                alpha, K_alpha, error = factor.solve(K, qp, s)
            except (np.linalg.LinAlgError, ValueError):  # a singular capacitance matrix
                alpha = None
    if alpha is None or not (np.all(np.isfinite(alpha)) and error <= ACTIVE_SET_RESIDUAL_TOL):
        del cache["active_set"]
        cache["active_set_failed"] = True
        return None
    info = {"system": "full", "n_fit": n, "active_set": True}
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
    # approximate CV's influence step reuses K and the LU (keeping_factor): a third n × n array
    # (not beside a Newton solve's cached K: its shared LU, B₀, is the one kept)
    keep = cache is None and _KEPT.get() is not None
    keep = keep and 3 * n * n * 8 <= parse_memory_budget(qp.memory_budget)
    K = kernel = None
    if cache is None or "K" not in cache:
        with stage(f"kernel matrix ({n}×{n})", qp.verbose):
            # the direct solve forms its system in K, in place: one copy when K is kept (by
            # the reuse of kernel matrices or for the influence step), none otherwise
            kernel, reused = _kernel_matrix(qp)
            K = kernel.copy() if (reused or keep) and cache is None else kernel
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
            K,
            L,
            np.flatnonzero(qp.active),
            qp.lambda_intrinsic,
            qp.lambda_ambient,
            qp.memory_budget,
        )
        alpha = _solve_keeping(K, qp, kernel) if keep else None
        if alpha is None:
            alpha = solve_or_lstsq(K, qp.rhs, what="LapRLS system")
    return Solution(X_fit=X, dual_coef=alpha, info={"system": "full", "n_fit": n})


def _solve_keeping(A, qp: QuadraticProblem, K) -> np.ndarray | None:
    """``A⁻¹ rhs`` by an LU that is kept (:func:`keeping_factor`) with ``K``; None when ``A`` is
    singular or ill-conditioned (the caller's least-squares fallback then decides, and nothing
    is kept).  The same factorization and condition test as ``solve_or_lstsq``."""
    ops = get_ops()
    try:
        factor = ops.lu_factor_checked(A)
    except (np.linalg.LinAlgError, ValueError):
        return None
    alpha = ops.lu_solve(factor, qp.rhs)
    if not np.all(np.isfinite(alpha)):
        return None
    weights = np.asarray(qp.active, dtype=np.float64)
    _keep(KeptFactor(factor, K, weights, qp.laplacian, qp.lambda_ambient, qp.lambda_intrinsic))
    return alpha


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
        K_ll = kernel_matrix(qp.kernel, X_l, memory_budget=qp.memory_budget, n_jobs=qp.n_jobs)
        K_ll.flat[:: K_ll.shape[0] + 1] += lam
        diagonal = np.diag(K_ll).copy()
        operator = K_ll
    else:
        diagonal = qp.kernel.diag(X_l) + lam

        def operator(V):
            return kernel_matmul(qp.kernel, X_l, None, V, qp.memory_budget, qp.n_jobs) + lam * V

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
    solution of eq. (3).  K (n×n) is held: it is both ``K_ss`` and the ``K_ns`` cache, and a
    budget that cannot hold it is refused (only RLS without a graph term, :func:`_solve_rls_cg`,
    recomputes its kernel blocks at each iteration).
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
        n_jobs=qp.n_jobs,
        reserved=reserved,
        n_columns=qp.rhs.shape[1],
    )
    if qp.rhs_on_active_only:
        z = hessian.rhs(qp.rhs[active_index])
    else:
        z = kernel_matmul(qp.kernel, qp.X, None, qp.rhs, qp.memory_budget, qp.n_jobs)
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
