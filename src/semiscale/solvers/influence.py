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
    budget = problem.memory_budget
    C = np.asarray(kernel_matrix(problem.kernel, problem.X, columns, memory_budget=budget))
    P = np.asarray(kernel_matrix(problem.kernel, columns, memory_budget=budget))
    c = C.shape[1]
    if problem.fit_intercept:
        C = np.hstack([C, np.ones((n, 1))])
        P = np.pad(P, ((0, 1), (0, 1)))
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
