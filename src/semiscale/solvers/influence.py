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

import hashlib
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..linalg import kernel_matrix
from ..linalg.ops import get_ops
from ..losses import get_loss
from .dense import solve_or_lstsq
from .exact import check_dense_fits
from .problem import ManifoldProblem

__all__ = [
    "HessianSpec",
    "reusing_step_blocks",
    "shared_fold_laplacian",
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


#: Nyström Hessians up to this order are formed and solved with one BLAS thread.
SMALL_HESSIAN = 512


def _blas_limit(m):
    """One BLAS thread for the products and factorizations of an ``m × m`` Hessian when small.

    Threads gain nothing at that size, and on a loaded machine they lose.  Chosen by
    measurement (ad hoc, commit e03fafd; the search timings with one thread are in
    ``benchmarks/results/bif_newton/``): on the loaded 2-core machine a 134 × 134 Cholesky
    takes 146 ms with OpenBLAS's two threads and well under a millisecond with one, enough to
    make the influence step cost more than the fit it expands.
    """
    return 1 if m <= SMALL_HESSIAN else None


def _weighted_gram(C, h):
    """``Cᵀ diag(h) C`` over the rows where ``h ≠ 0`` only: the loss's curvature lives on the
    labeled rows (10 % of paper 004's points), so this is l·m² work, not n·m²."""
    rows = np.flatnonzero(h)
    Cr = C[rows]
    return get_ops().matmul(Cr.T, h[rows, None] * Cr)


def _spd_solve(H, rhs, what):
    """``H⁻¹ rhs`` for a symmetric positive definite ``H``: Cholesky, else LU / least squares.

    The ops layer's Cholesky factor and triangular solves; a factor whose smallest pivot is
    lost in round-off goes to the LU with its condition test (and least squares when
    singular), as ``solve_or_lstsq`` does.
    """
    ops = get_ops()
    try:
        factor, _ = ops.jittered_cholesky(H, max_tries=0)
    except np.linalg.LinAlgError:
        return solve_or_lstsq(H, rhs, what=what)
    return ops.cho_solve(factor, rhs)


def _solves(specs, spec_of_fold, delta_u):
    """(spec, column group, folds) triples: each one Hessian and its right-hand sides."""
    spec_of_fold = np.asarray(spec_of_fold)
    for index, spec in enumerate(specs):
        folds = np.flatnonzero(spec_of_fold == index)
        if folds.size:
            for group in _column_groups(spec.weights):
                yield spec, group, folds


class _SharedFactor:
    r"""The fit's kept LU (:class:`~semiscale.solvers.exact.KeptFactor`) applied to a BIF
    Hessian system by Woodbury's identity.

    The fit factored ``F = diag(a) K + λ_I^F L K + λ_A^F I``.  A Hessian ``D = diag(h) + 2λ_I L``
    on the same Laplacian, with the problem's λ's equal to ``s`` times the factor's, gives

    .. math::

        M = D K + 2λ_A I = 2s\,(F + E_S\, \operatorname{diag}(δ_S)\, K_{S\cdot}),\qquad
        δ = h / (2s) − a ,

    with ``S`` the rows where ``δ ≠ 0``: the labeled rows whose curvature a fold changes (its
    own rows lose the loss term, the others take the weight ``l / l_i``).  With
    ``G = F^{-1} E_S`` and ``C = K_{S\cdot} G``, computed once for all folds,

    .. math::  (F + E_S δ K_{S\cdot})^{-1} r = w − G (I + δ C)^{-1} δ K_{S\cdot} w,
               \qquad w = F^{-1} r ,

    followed by one step of iterative refinement with the same factors.  O(n² |S|) once and
    O(n² + |S|³) per right-hand side and fold, instead of an O(n³) LU per Hessian.  A Hessian
    on another Laplacian or ``λ_I`` (inductive folds, ``intrinsic_reg="auto"``) is not covered.
    """

    def __init__(self, factor, problem: ManifoldProblem):
        self.factor = factor
        self.K = factor.K
        f_amb, f_int = factor.lambda_ambient, factor.lambda_intrinsic
        self.scale = problem.lambda_ambient / f_amb if f_amb > 0 else None
        if self.scale is None and f_int > 0:
            self.scale = problem.lambda_intrinsic / f_int
        self.lambda_ambient = problem.lambda_ambient
        self._rows = np.zeros(0, dtype=np.intp)
        self._G = np.zeros((self.K.shape[0], 0))

    def delta(self, spec: HessianSpec, h) -> np.ndarray | None:
        """``δ`` of this Hessian, or None when the factor does not cover it."""
        s, f = self.scale, self.factor
        if s is None or not s > 0:
            return None
        same = np.isclose(self.lambda_ambient, s * f.lambda_ambient, rtol=1e-12, atol=0.0)
        graph = spec.laplacian is not None and spec.lambda_intrinsic > 0
        if graph:
            same &= spec.laplacian is f.laplacian and np.isclose(
                spec.lambda_intrinsic, s * f.lambda_intrinsic, rtol=1e-12, atol=0.0
            )
        else:
            same &= f.lambda_intrinsic == 0 or f.laplacian is None
        return h / (2.0 * s) - f.row_weights if same else None

    def prepare(self, rows) -> None:
        """``G`` and ``C`` for the rows ``rows`` (sorted): the union of every covered ``S``."""
        ops = get_ops()
        n = self.K.shape[0]
        selector = np.zeros((n, rows.size))
        selector[rows, np.arange(rows.size)] = 1.0
        self._rows = rows
        self._G = ops.lu_solve(self.factor.lu, selector)
        self._C = ops.matmul(self.K[rows], self._G)

    def _apply(self, R, items):
        """``(F + E_S δ K_S·)⁻¹`` applied to the columns of ``R`` of every item, one batch.

        ``items`` holds ``(δ, positions of its S among the prepared rows, its columns)``.
        """
        ops = get_ops()
        W = ops.lu_solve(self.factor.lu, R)
        if self._rows.size == 0:
            return W
        KW = ops.matmul(self.K[self._rows], W)
        Y = np.zeros_like(KW)
        with ops.blas_threads(1):  # |S| × |S| capacitance systems, one per fold
            for k, (delta, where, cols) in enumerate(items):
                if where.size:
                    d = delta[self._rows[where]][:, None]
                    Y[where[:, None], cols] = self._capacitance(k, delta, where)(
                        d * KW[where][:, cols]
                    )
        return W - ops.matmul(self._G, Y)

    def _capacitance(self, k, delta, where):
        """``t ↦ (I + δ C_SS)⁻¹ t`` of item ``k``: one LU per item, kept for the refinement
        pass (the LU with its condition test, and least squares when singular, as
        ``solve_or_lstsq``)."""
        cached = self._factors.get(k)
        if cached is not None:
            return cached
        ops = get_ops()
        M = delta[self._rows[where]][:, None] * self._C[np.ix_(where, where)]
        M.flat[:: where.size + 1] += 1.0
        try:
            factor = ops.lu_factor_checked(M)
            solve = lambda t: ops.lu_solve(factor, t)  # noqa: E731
        except (np.linalg.LinAlgError, ValueError):
            solve = lambda t: solve_or_lstsq(  # noqa: E731
                M, t, what="Woodbury capacitance of the BIF Hessian"
            )
        self._factors[k] = solve
        return solve

    def _times(self, X, items):
        """``(F + E_S δ K_S·) X`` per item's columns."""
        ops = get_ops()
        f = self.factor
        KX = ops.matmul(self.K, X)
        out = f.row_weights[:, None] * KX + f.lambda_ambient * X
        if f.laplacian is not None and f.lambda_intrinsic > 0:
            out += f.lambda_intrinsic * np.asarray(ops.sparse_matmul(f.laplacian, KX))
        for delta, where, cols in items:
            rows = self._rows[where]
            out[rows[:, None], cols] += delta[rows][:, None] * KX[rows][:, cols]
        return out

    def solve(self, problems) -> list:
        """``M⁻¹ rhs`` for every ``(δ, rhs)`` of ``problems`` (``δ`` from :meth:`delta`), with
        one LU solve, one product with ``K`` and one with ``G`` for all of them per pass."""
        items, blocks, start = [], [], 0
        for delta, rhs in problems:
            rows = np.flatnonzero(delta)
            cols = np.arange(start, start + rhs.shape[1])
            items.append((delta, np.searchsorted(self._rows, rows), cols))
            blocks.append(rhs)
            start += rhs.shape[1]
        R = np.hstack(blocks)
        self._factors = {}
        X = self._apply(R, items)
        X += self._apply(R - self._times(X, items), items)  # one step of refinement
        X /= 2.0 * self.scale
        return [X[:, cols] for _, _, cols in items]


def _shared_factor(problem, factor, specs, spec_of_fold, n):
    """A :class:`_SharedFactor` and, per spec index, its ``δ`` (None: a dense LU of its own);
    None when the kept factor covers no spec, or when its Woodbury rows would cost more than
    the LUs they replace (``2n²|S|`` against ``⅔n³`` per covered Hessian)."""
    if factor is None or factor.K.shape[0] != n:
        return None, {}
    shared = _SharedFactor(factor, problem)
    deltas, rows = {}, np.zeros(n, dtype=bool)
    for index in sorted(set(np.asarray(spec_of_fold).tolist())):
        spec = specs[index]
        groups = _column_groups(spec.weights)
        if len(groups) != 1:
            continue
        delta = shared.delta(spec, spec.weights[:, 0])
        if delta is not None:
            deltas[index] = delta
            rows |= delta != 0
    if not deltas or 3 * rows.sum() > n * len(deltas):
        return None, {}
    shared.prepare(np.flatnonzero(rows))
    return shared, deltas


def _shared_fold_out(shared, deltas, index_of, triples, delta_u, K, intercept, out):
    """``δg`` of the ``triples`` the kept factor covers, written into ``out``; with a bias, the
    bordered system by its Schur complement on the bias (one more right-hand side, ``D 1``)."""
    ops = get_ops()
    n = delta_u.shape[0]
    problems, d1s = [], []
    for spec, group, folds in triples:
        rhs = delta_u[:, group][:, :, folds].reshape(n, -1)
        if intercept:
            d1 = spec.weights[:, group[0]][:, None] + _graph_times(spec, np.ones((n, 1)))
            rhs = np.hstack([rhs, d1])
            d1s.append(d1)
        problems.append((deltas[index_of[id(spec)]], rhs))
    solutions = shared.solve(problems)
    zs = []
    for k, z in enumerate(solutions):
        if intercept:
            rhs, d1 = problems[k][1][:, :-1], d1s[k]
            z, m_d1 = z[:, :-1], z[:, -1:]
            row = ops.matmul(d1.T, K)  # 1ᵀ D K
            bias = (rhs.sum(axis=0) - ops.matmul(row, z)) / (
                float(d1.sum()) - float(ops.matmul(row, m_d1)[0, 0])
            )
            z = z - m_d1 * bias
            zs.append((z, bias))
        else:
            zs.append((z, None))
    dg_all = -ops.matmul(K, np.hstack([z for z, _ in zs]))
    start = 0
    for (_spec, group, folds), (z, bias) in zip(triples, zs):
        dg = dg_all[:, start : start + z.shape[1]]
        start += z.shape[1]
        if bias is not None:
            dg = dg - bias
        out[:, np.asarray(group)[:, None], folds[None, :]] = dg.reshape(n, len(group), -1)


def exact_fold_out(
    problem: ManifoldProblem, delta_u, specs, spec_of_fold, factor=None
) -> np.ndarray:
    """First-order fold-out changes ``δg`` (module docstring) by dense LU solves.

    Hessians that the fit's own LU covers (``factor``; :class:`_SharedFactor`) reuse it by
    Woodbury's identity instead of an LU each: paper 004's step (the fit's Hessian), and the
    Newton step of the squared loss on transductive folds.

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
    factor : KeptFactor or None
        The fit's LU (:func:`semiscale.solvers.exact.keeping_factor`), reused where it covers
        a Hessian.

    Returns
    -------
    ndarray of shape (n, r, t)
        ``δg_i`` per column and fold.
    """
    ops = get_ops()
    n = delta_u.shape[0]
    shared, deltas = _shared_factor(problem, factor, specs, spec_of_fold, n)
    if shared is not None and len(deltas) == len(specs):
        K = shared.K  # every Hessian by the kept factor: no n × n array besides the fit's
    else:
        # K, 2λ_I L K (one per Laplacian), the system M and a temporary of the sparse product
        check_dense_fits(n + 1, problem.memory_budget, 4, "the exact BIF Hessian")
        K = shared.K if shared is not None else None
        if K is None:
            K = np.asarray(
                kernel_matrix(problem.kernel, problem.X, memory_budget=problem.memory_budget)
            )
    intercept = bool(problem.fit_intercept)
    out = np.empty_like(delta_u)
    graph_parts = {}  # 2λ_I L K per (Laplacian, λ_I)
    index_of = {id(spec): index for index, spec in enumerate(specs)}
    triples = list(_solves(specs, spec_of_fold, delta_u))
    covered = [tr for tr in triples if index_of[id(tr[0])] in deltas]
    if covered:
        _shared_fold_out(shared, deltas, index_of, covered, delta_u, K, intercept, out)
    for spec, group, folds in triples:
        if index_of[id(spec)] in deltas:
            continue
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


_BLOCKS: ContextVar[dict | None] = ContextVar("semiscale_bif_blocks", default=None)


@contextmanager
def reusing_step_blocks():
    """Inside this context the Nyström influence steps of successive grid points share what
    does not depend on their regularization: the column blocks ``C``, ``P`` of the last kernel
    and columns, and ``CᵀL_iC`` of each fold's Laplacian for them (a search fits its points
    kernel by kernel, :class:`~semiscale.model_selection.BIFSearchCV`); and the folds'
    subgraph Laplacians (:func:`shared_fold_laplacian`)."""
    token = _BLOCKS.set({"columns": {}, "laplacians": {}})
    try:
        yield
    finally:
        _BLOCKS.reset(token)


def shared_fold_laplacian(source, fit_rows, build):
    """``build()``, the Laplacian of a fold's subgraph of the graph object ``source``, built once
    per ``(source, rows)`` inside :func:`reusing_step_blocks` (then not to be written)."""
    store = _BLOCKS.get()
    if store is None:
        return build()
    rows = np.ascontiguousarray(fit_rows, dtype=np.intp)
    key = (id(source), rows.size, hashlib.sha1(rows.view(np.uint8)).hexdigest())
    cached = store["laplacians"].get(key)
    if cached is not None and cached[0] is source:
        return cached[1]
    laplacian = build()
    store["laplacians"][key] = (source, laplacian)  # the source held: its id is kept
    return laplacian


def _blocks_key(problem: ManifoldProblem, columns):
    """A key of ``(X, kernel, columns, bias)`` for :func:`reusing_step_blocks`, or None."""
    from .exact import _kernel_key

    if _BLOCKS.get() is None or sp.issparse(columns) or sp.issparse(problem.X):
        return None
    if columns is problem.X:
        return None  # every point a column (the exact span): n × n blocks, not kept
    kernel = _kernel_key(problem.kernel)
    if kernel is None:
        return None
    cols = np.ascontiguousarray(columns)
    digest = hashlib.sha1(cols.view(np.uint8)).hexdigest()
    return id(problem.X), kernel, cols.shape, digest, bool(problem.fit_intercept)


def _column_blocks(problem: ManifoldProblem, columns):
    """``C = K(X, columns)`` and ``P = K(columns, columns)``, with a bias column of ones in C
    (and a zero row and column in P: the bias is not penalised) when ``fit_intercept``; and the
    number c of kernel columns.  Shared between grid points inside :func:`reusing_step_blocks`
    (then not to be written)."""
    key = _blocks_key(problem, columns)
    store = _BLOCKS.get()["columns"] if key is not None else None
    if key is not None and store.get("key") == key and store.get("X") is problem.X:
        return store["blocks"]
    blocks = _compute_column_blocks(problem, columns)
    if key is not None:
        store.clear()  # the blocks of one kernel and its Laplacian products at a time
        store.update(key=key, X=problem.X, blocks=blocks, graph={})
    return blocks


def _graph_gram(problem, columns, C, laplacian, local):
    """``CᵀLC`` for the blocks of ``columns``, shared like :func:`_column_blocks`'.

    A fold's Laplacian differs from the full one only in the rows of its points and of their
    neighbours (the edges it loses): with ``E = L − L_i`` nonzero in the rows ``R``,
    ``CᵀL_iC = CᵀLC − C_Rᵀ (E_R C)``, |R|·m² work instead of n·m² when ``R`` is less than half
    the rows (``local`` keeps ``CᵀLC`` for the call without a search's store).
    """
    key = _blocks_key(problem, columns)
    store = _BLOCKS.get()["columns"] if key is not None else None
    if key is not None and store.get("key") == key:
        cached = store["graph"].get(id(laplacian))
        if cached is not None and cached[0] is laplacian:
            return cached[1]
    ops = get_ops()
    full = problem.laplacian
    CLC = None
    if full is not None and laplacian is not full and laplacian.shape == full.shape:
        E = sp.csr_matrix(full - laplacian)
        E.eliminate_zeros()
        rows = np.flatnonzero(np.diff(E.indptr))
        if 2 * rows.size < E.shape[0]:
            if "full" not in local:
                local["full"] = _graph_gram(problem, columns, C, full, local)
            Cr = C[rows]
            CLC = local["full"] - ops.matmul(Cr.T, ops.sparse_matmul(E[rows], C))
    if CLC is None:
        CLC = ops.matmul(C.T, ops.sparse_matmul(laplacian, C))
    if key is not None and store.get("key") == key:
        store["graph"][id(laplacian)] = (laplacian, CLC)  # the Laplacian held: its id is kept
    return CLC


def _compute_column_blocks(problem: ManifoldProblem, columns):
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
    local = {}  # CᵀLC of the full graph, for the folds' (_graph_gram)
    out = np.empty_like(delta_u)
    with ops.blas_threads(_blas_limit(m)):
        for spec, group, folds in _solves(specs, spec_of_fold, delta_u):
            H = 2.0 * problem.lambda_ambient * P
            if spec.laplacian is not None and spec.lambda_intrinsic > 0:
                key = id(spec.laplacian)
                if key not in graph_parts:
                    graph_parts[key] = _graph_gram(problem, columns, C, spec.laplacian, local)
                H += 2.0 * spec.lambda_intrinsic * graph_parts[key]
            H += _weighted_gram(C, spec.weights[:, group[0]])
            # symmetric by construction; average away the round-off of the products
            H = 0.5 * (H + H.T)
            scale = max(float(np.abs(np.diag(H)).max()), 1e-300)
            H.flat[: c * (m + 1) : m + 1] += 1e-12 * scale  # P's round-off
            rhs = ops.matmul(C.T, delta_u[:, group][:, :, folds].reshape(n, -1))
            z = _spd_solve(H, rhs, "Nyström BIF Hessian")
            dg = -ops.matmul(C, z)
            out[:, np.asarray(group)[:, None], folds[None, :]] = dg.reshape(n, len(group), -1)
    return out


#: Armijo's sufficient-decrease fraction and the smallest step of the line search.
_ARMIJO, _MIN_STEP = 1e-4, 1e-10


def nystrom_newton_fold_out(
    problem, decision, full_gradient, folds, columns, *, max_steps, tol=1e-8
):
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
    local = {}  # CᵀLC of the full graph, for the folds' (_graph_gram)
    with ops.blas_threads(_blas_limit(C.shape[1])):
        for i, fold in enumerate(folds):
            graph = fold.laplacian is not None and fold.lambda_intrinsic > 0
            CLC = _graph_gram(problem, columns, C, fold.laplacian, local) if graph else None
            span = _Span(C, P, c, CLC, problem.lambda_ambient)
            for j in range(r):
                objective = _FoldObjective(
                    loss,
                    fold.targets[:, j],
                    np.asarray(fold.labeled, dtype=bool),
                    fold.weight,
                    fold.laplacian if graph else None,
                    fold.lambda_intrinsic,
                    Cu_full[:, j],
                )
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
        H = 2.0 * span.lambda_ambient * P + _weighted_gram(C, curvature)
        if span.CLC is not None:
            H += 2.0 * objective.lambda_intrinsic * span.CLC
        H = 0.5 * (H + H.T)
        scale = max(float(np.abs(np.diag(H)).max()), 1e-300)
        H.flat[: c * (m + 1) : m + 1] += 1e-12 * scale  # P's round-off
        direction = -_spd_solve(H, grad, "Nyström BIF Hessian")
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
