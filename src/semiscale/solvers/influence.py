r"""First-order fold-out predictions of a manifold-regularization fit (paper 004, Theorem 1).

The fitted problem (:class:`~semiscale.solvers.problem.ManifoldProblem`, per target column)

.. math::

    \min_{α, b}\ \sum_{i \le n} w_i\, \ell(y_i, g_i) + λ_A α^\top K α + λ_I\, g^\top L g ,
    \qquad g = K α + b \mathbf 1 ,

(``w`` = 1 on the labeled rows, 0 elsewhere) is stationary at the fitted ``g``: with the
value-space gradient ``u(g) = w ∘ ℓ'(y, g) + 2 λ_I L g`` the normal equations read
``Φᵀ u + 2 λ_A R θ = 0`` for the parameters ``θ = (α, b)``, ``Φ = [K, 1]`` and
``R = diag(K, 0)``.  Leaving fold ``i`` out changes the weights, the targets and the graph term,
so the gradient at the same ``g`` becomes ``u_i(g)``.  Paper 004 expands the fold-out solution
to first order in the removed share (its eq. 4, the Bouligand influence function): one Newton
step from the full fit with the full fit's Hessian,

.. math::

    g_{-i} ≈ g + δg_i, \qquad
    δg_i = -Φ\, H^{-1} Φ^\top Δu_i, \qquad
    H = Φ^\top D Φ + 2 λ_A R, \quad D = \operatorname{diag}(w ∘ \ell'') + 2 λ_I L ,

with ``Δu_i = u_i(g) − u(g)``; ``δg_i`` is paper 004's ``B_{·i} / (1 − t)``, which Theorem 1
writes with the ``ε``-derivative of the graph term (equal to first order).  Two ways to apply
``H⁻¹``:

* :func:`exact_fold_out` (paper 004 §3.2): cancelling ``K`` from the first block row gives the
  dense ``(n + 1)``-system ``[D K + 2λ_A I, D 1; 1ᵀ D K, 1ᵀ D 1] z = [Δu; 1ᵀ Δu]`` and
  ``δg = −[K, 1] z``: one LU factorization, O(n³) time and two ``n × n`` arrays;
* :func:`nystrom_fold_out` (paper 004 §4): ``K ≈ C P⁺ Cᵀ`` on ``c`` columns.  The Woodbury
  identity turns ``(D K̃ + 2λ_A I)⁻¹`` into a ``c × c`` solve, and ``K̃ (D K̃ + 2λ_A I)⁻¹ =
  C (Cᵀ D C + 2 λ_A P)⁻¹ Cᵀ``: ``H`` is replaced by the Nyström Hessian of paper 000 eq. (4),
  ``H̃ = Φ̃ᵀ D Φ̃ + 2 λ_A R̃`` with ``Φ̃ = [C, 1]`` and ``R̃ = diag(P, 0)``.  O(n c² + c³ + n c t)
  time, O(n c) memory.  With every point a column (``c = n``) it equals the exact step; for a
  model fitted on Nyström centers the centers' columns give that model's own exact step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..linalg import kernel_matrix
from ..linalg.ops import get_ops
from ..losses import get_loss
from .dense import solve_or_lstsq
from .exact import check_dense_fits
from .problem import ManifoldProblem

__all__ = [
    "HessianSpec",
    "curvature_weights",
    "exact_fold_out",
    "fit_hessian",
    "nystrom_fold_out",
    "nystrom_newton_fold_out",
]


@dataclass(frozen=True)
class HessianSpec:
    """The ``D`` of a Hessian: curvature weights (n, r), ``λ_I`` and the Laplacian (or None)."""

    weights: np.ndarray
    lambda_intrinsic: float
    laplacian: object


def curvature_weights(loss, targets, labeled, decision, weight=1.0) -> np.ndarray:
    """``w ∘ ℓ''(y, g)`` per row and target column, shape (n, r): the diagonal part of ``D``."""
    loss = get_loss(loss)
    curvature = loss.second_derivative(targets, decision)
    return np.where(np.asarray(labeled, dtype=bool)[:, None], weight * curvature, 0.0)


def fit_hessian(problem: ManifoldProblem, decision) -> HessianSpec:
    """The fitted problem's own Hessian (paper 004's BIF step)."""
    weights = curvature_weights(problem.loss, problem.targets, problem.labeled, decision)
    return HessianSpec(weights, problem.lambda_intrinsic, problem.laplacian)


def _graph_times(spec: HessianSpec, V: np.ndarray) -> np.ndarray:
    """``2 λ_I L V`` (zeros without a graph term)."""
    if spec.laplacian is None or spec.lambda_intrinsic == 0:
        return np.zeros_like(V)
    out = np.asarray(get_ops().sparse_matmul(spec.laplacian, V))
    out *= 2.0 * spec.lambda_intrinsic
    return out


def _column_groups(weights: np.ndarray):
    """Target columns sharing one Hessian (equal curvature weights): lists of column indices."""
    groups: list[list[int]] = []
    for j in range(weights.shape[1]):
        for group in groups:
            if np.array_equal(weights[:, group[0]], weights[:, j]):
                group.append(j)
                break
        else:
            groups.append([j])
    return groups


def _solves(specs, spec_of_fold, delta_u):
    """(spec, column group, folds) triples: each one Hessian and its right-hand sides."""
    spec_of_fold = np.asarray(spec_of_fold)
    for index, spec in enumerate(specs):
        folds = np.flatnonzero(spec_of_fold == index)
        if folds.size:
            for group in _column_groups(spec.weights):
                yield spec, group, folds


def exact_fold_out(problem: ManifoldProblem, delta_u, specs, spec_of_fold) -> np.ndarray:
    """First-order fold-out changes ``δg`` (module docstring) by dense LU solves.

    Parameters
    ----------
    problem : ManifoldProblem
        The fitted problem (full span: ``f`` over all ``n`` rows of ``problem.X``).
    delta_u : ndarray of shape (n, r, t)
        Gradient changes ``Δu_i`` of the ``t`` folds.
    specs : list of HessianSpec
        The Hessians used: ``[fit_hessian(...)]`` for paper 004's step, or one per fold.
    spec_of_fold : sequence of int, length t
        Which spec each fold's step uses.

    Returns
    -------
    ndarray of shape (n, r, t)
        ``δg_i`` per column and fold.
    """
    ops = get_ops()
    n = delta_u.shape[0]
    # K, 2λ_I L K (one per Laplacian), the system M and a temporary of the sparse product
    check_dense_fits(n + 1, problem.memory_budget, 4, "the exact BIF Hessian")
    K = np.asarray(kernel_matrix(problem.kernel, problem.X, memory_budget=problem.memory_budget))
    intercept = bool(problem.fit_intercept)
    out = np.empty_like(delta_u)
    graph_parts = {}  # 2λ_I L K per (Laplacian, λ_I)
    for spec, group, folds in _solves(specs, spec_of_fold, delta_u):
        h = spec.weights[:, group[0]]
        size = n + 1 if intercept else n
        M = np.zeros((size, size))
        A = M[:n, :n]
        A[...] = K
        A *= h[:, None]
        if spec.laplacian is not None and spec.lambda_intrinsic > 0:
            key = (id(spec.laplacian), spec.lambda_intrinsic)
            if key not in graph_parts:
                graph_parts.clear()  # keep one: a per-fold Laplacian is used once
                graph_parts[key] = _graph_times(spec, K)
            A += graph_parts[key]
        A.flat[:: n + 1] += 2.0 * problem.lambda_ambient
        if intercept:
            d1 = h[:, None] + _graph_times(spec, np.ones((n, 1)))  # D 1
            M[:n, n] = d1[:, 0]
            M[n, :n] = ops.matmul(d1.T, K)[0]  # 1ᵀ D K = (D 1)ᵀ K (D symmetric)
            M[n, n] = d1.sum()
        rhs = delta_u[:, group][:, :, folds].reshape(n, -1)
        if intercept:
            rhs = np.vstack([rhs, rhs.sum(axis=0, keepdims=True)])
        z = solve_or_lstsq(M, rhs, overwrite_a=True, what="BIF Hessian system")
        dg = -ops.matmul(K, z[:n])
        if intercept:
            dg -= z[n]
        out[:, np.asarray(group)[:, None], folds[None, :]] = dg.reshape(n, len(group), -1)
    return out


def _column_blocks(problem: ManifoldProblem, columns):
    """``C = K(X, columns)`` and ``P = K(columns, columns)``, with a bias column of ones in C
    (and a zero row and column in P: the bias is not penalised) when ``fit_intercept``; and the
    number c of kernel columns."""
    n = problem.X.shape[0]
    budget = problem.memory_budget
    C = np.asarray(kernel_matrix(problem.kernel, problem.X, columns, memory_budget=budget))
    # every training point a column (the exact Hessian): P is C itself, not a second n × n
    same = columns is problem.X
    P = C if same else np.asarray(kernel_matrix(problem.kernel, columns, memory_budget=budget))
    c = C.shape[1]
    if problem.fit_intercept:
        C = np.hstack([C, np.ones((n, 1))])
        P = np.pad(P, ((0, 1), (0, 1)))
    return C, P, c


def nystrom_fold_out(problem: ManifoldProblem, delta_u, specs, spec_of_fold, columns):
    """Fold-out changes ``δg`` with the Nyström Hessian on the points ``columns``.

    Parameters
    ----------
    problem, delta_u, specs, spec_of_fold
        As :func:`exact_fold_out`.
    columns : array-like or sparse matrix of shape (c, n_features)
        The points whose kernel columns ``C = K(X, columns)`` approximate ``K``.

    Returns
    -------
    ndarray of shape (n, r, t)
    """
    ops = get_ops()
    n = delta_u.shape[0]
    C, P, c = _column_blocks(problem, columns)
    m = C.shape[1]
    graph_parts = {}  # Φ̃ᵀ L Φ̃ per Laplacian object
    out = np.empty_like(delta_u)
    for spec, group, folds in _solves(specs, spec_of_fold, delta_u):
        H = 2.0 * problem.lambda_ambient * P
        if spec.laplacian is not None and spec.lambda_intrinsic > 0:
            key = id(spec.laplacian)
            if key not in graph_parts:
                graph_parts[key] = ops.matmul(C.T, ops.sparse_matmul(spec.laplacian, C))
            H += 2.0 * spec.lambda_intrinsic * graph_parts[key]
        h = spec.weights[:, group[0]]
        H += ops.matmul(C.T, h[:, None] * C)
        # symmetric by construction; average away the round-off of the products
        H = 0.5 * (H + H.T)
        scale = max(float(np.abs(np.diag(H)).max()), 1e-300)
        H.flat[: c * (m + 1) : m + 1] += 1e-12 * scale  # P's round-off
        rhs = ops.matmul(C.T, delta_u[:, group][:, :, folds].reshape(n, -1))
        z = solve_or_lstsq(H, rhs, assume_a="pos", overwrite_a=True, what="Nyström BIF Hessian")
        dg = -ops.matmul(C, z)
        out[:, np.asarray(group)[:, None], folds[None, :]] = dg.reshape(n, len(group), -1)
    return out


#: Armijo's sufficient-decrease fraction and the smallest step of the line search.
_ARMIJO, _MIN_STEP = 1e-4, 1e-10


def nystrom_newton_fold_out(problem, decision, full_gradient, folds, columns, *, max_steps,
                            tol=1e-8):  # fmt: skip
    """Fold-out changes ``δg`` by damped Newton iterations on each fold-out objective.

    The first iteration is :func:`nystrom_fold_out`'s step with the fold's own Hessian; the
    next ones continue Newton's method on the fold-out objective restricted to the span of the
    columns, ``g_i = g + C β`` (β also holds the bias when ``fit_intercept``):

    .. math::

        F_i(β) = \\sum_j w^{(i)}_j \\ell(y^{(i)}_j, g_{i,j}) + λ^{(i)}_I g_i^\\top L_i g_i
        - β^\\top C^\\top u(g) + λ_A β^\\top P β ,

    where ``−βᵀCᵀu(g)`` is the change of the ambient term ``λ_A αᵀKα`` read from the full fit's
    stationarity (``2λ_A (Kα)_C = −Cᵀu(g)``).  Its gradient ``Cᵀ(u_i(g_i) − u(g)) + 2λ_A P β``
    is ``CᵀΔu_i`` at β = 0.  Each iteration solves with the Hessian at the current point,
    halves the step until Armijo's condition holds, and stops when the curvature weights (the
    losses' zones) repeat with a full step — the piecewise-quadratic objective's minimiser in
    the span — or when the step moves g by at most ``tol`` relative, or after ``max_steps``.
    For the squared loss one iteration is exact.

    Parameters
    ----------
    problem : ManifoldProblem
        The fitted problem.
    decision : ndarray of shape (n, r)
        The full fit's decision g.
    full_gradient : ndarray of shape (n, r)
        ``u(g)`` of the full objective.
    folds : sequence
        Per fold: ``targets`` (n, r), ``labeled`` (n,) bool, ``weight``, ``laplacian`` and
        ``lambda_intrinsic`` of its objective.
    columns : array-like or sparse matrix of shape (c, n_features)
        As :func:`nystrom_fold_out`.
    max_steps : int
        Newton iterations per fold and target column at most.
    tol : float, default=1e-8

    Returns
    -------
    delta_g : ndarray of shape (n, r, t)
    n_steps : ndarray of int, shape (r, t)
        Iterations taken per column and fold.
    """
    ops = get_ops()
    loss = get_loss(problem.loss)
    g = np.asarray(decision, dtype=float)
    n, r = g.shape
    C, P, c = _column_blocks(problem, columns)
    out = np.empty((n, r, len(folds)))
    n_steps = np.zeros((r, len(folds)), dtype=np.intp)
    Cu_full = ops.matmul(C.T, full_gradient)  # Cᵀu(g): the same for every fold
    for i, fold in enumerate(folds):
        graph = fold.laplacian is not None and fold.lambda_intrinsic > 0
        CLC = ops.matmul(C.T, ops.sparse_matmul(fold.laplacian, C)) if graph else None
        span = _Span(C, P, c, CLC, problem.lambda_ambient)
        for j in range(r):
            objective = _FoldObjective(
                loss, fold.targets[:, j], np.asarray(fold.labeled, dtype=bool), fold.weight,
                fold.laplacian if graph else None, fold.lambda_intrinsic,
                Cu_full[:, j],
            )  # fmt: skip
            g_i, n_steps[j, i] = _newton_in_span(objective, span, g[:, j], max_steps, tol)
            out[:, j, i] = g_i - g[:, j]
    return out, n_steps


@dataclass(frozen=True)
class _Span:
    """The columns' kernel blocks ``C`` (n, m) and ``P`` (m, m), ``c`` kernel columns among the
    m (the bias last), ``CᵀLC`` of the fold's graph (or None) and ``λ_A``."""

    C: np.ndarray
    P: np.ndarray
    c: int
    CLC: np.ndarray | None
    lambda_ambient: float


@dataclass(frozen=True)
class _FoldObjective:
    """One target column of a fold-out objective, as a function of ``(β, g_i)``."""

    loss: object
    targets: np.ndarray
    rows: np.ndarray  # labeled rows the fold keeps
    weight: float
    laplacian: object  # None without a graph term
    lambda_intrinsic: float
    Cu0: np.ndarray  # Cᵀ u(g) of the full fit

    def value(self, span, beta, g_i):
        rows = self.rows
        value = self.weight * float(self.loss.value(self.targets[rows], g_i[rows]).sum())
        if self.laplacian is not None:
            Lg = get_ops().sparse_matmul(self.laplacian, g_i)
            value += self.lambda_intrinsic * float((g_i * Lg).sum())
        ambient = float((beta * get_ops().matmul(span.P, beta)).sum())
        return value - float((beta * self.Cu0).sum()) + span.lambda_ambient * ambient

    def gradient_and_curvature(self, g_i):
        """``u_i(g_i)`` and the curvature weights ``w ∘ ℓ''`` at ``g_i``."""
        u = np.where(self.rows, self.weight * self.loss.derivative(self.targets, g_i), 0.0)
        curvature = np.where(
            self.rows, self.weight * self.loss.second_derivative(self.targets, g_i), 0.0
        )
        if self.laplacian is not None:
            u = u + 2.0 * self.lambda_intrinsic * get_ops().sparse_matmul(self.laplacian, g_i)
        return u, curvature


def _newton_in_span(objective, span, g, max_steps, tol):
    """Damped Newton on ``objective`` over ``g + Cβ`` from β = 0 (nystrom_newton_fold_out)."""
    ops = get_ops()
    C, P, c = span.C, span.P, span.c
    m = C.shape[1]
    beta, g_i = np.zeros(m), g.copy()
    value, zones, n_steps = objective.value(span, beta, g_i), None, 0
    while n_steps < max_steps:
        n_steps += 1
        u_i, curvature = objective.gradient_and_curvature(g_i)
        grad = ops.matmul(C.T, u_i) - objective.Cu0
        grad += 2.0 * span.lambda_ambient * ops.matmul(P, beta)
        H = 2.0 * span.lambda_ambient * P + ops.matmul(C.T, curvature[:, None] * C)
        if span.CLC is not None:
            H += 2.0 * objective.lambda_intrinsic * span.CLC
        H = 0.5 * (H + H.T)
        scale = max(float(np.abs(np.diag(H)).max()), 1e-300)
        H.flat[: c * (m + 1) : m + 1] += 1e-12 * scale  # P's round-off
        direction = -solve_or_lstsq(H, grad, assume_a="pos", what="Nyström BIF Hessian")
        move = ops.matmul(C, direction)
        slope, size = float((grad * direction).sum()), 1.0
        while True:
            trial_beta, trial_g = beta + size * direction, g_i + size * move
            trial = objective.value(span, trial_beta, trial_g)
            if trial <= value + _ARMIJO * size * slope or size < _MIN_STEP:
                break
            size *= 0.5
        beta, g_i, value = trial_beta, trial_g, trial
        new_zones = curvature > 0
        if objective.loss.quadratic or (
            size == 1.0 and zones is not None and np.array_equal(zones, new_zones)
        ):
            break
        zones = new_zones
        if size * np.abs(move).max() <= tol * max(1.0, np.abs(g_i).max()):
            break
    return g_i, n_steps
