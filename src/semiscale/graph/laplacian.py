"""Graph Laplacians of a symmetric non-negative weight matrix ``W`` (sparse in, CSR out).

With degrees ``d_i = Σ_j w_ij`` and ``D = diag(d)``:

- unnormalized: ``L = D − W``, so ``fᵀ L f = ½ Σ_ij w_ij (f_i − f_j)²`` and ``L·1 = 0``;
- symmetric normalized: ``L_sym = I − D^{-1/2} W D^{-1/2}``, eigenvalues in ``[0, 2]``.
  An isolated vertex (``d_i = 0``) gets an all-zero row and column, diagonal included (as in
  ``scipy.sparse.csgraph.laplacian(normed=True)``): its quadratic form is 0 like the unnormalized
  Laplacian's, and ``tr(L_sym) = n − #isolated``;
- iterated: ``L^p`` (``p ≥ 1``, sparse products by repeated squaring), as paper 002's
  ``Q = L_sym^p``;
- ridge: ``+ ridge · I`` (makes ``L`` positive definite for sparse SDD solves).

The diagonal of ``W`` is ignored: a self-loop does not change ``fᵀ L f``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components as _scipy_components

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from ..linalg.ops import get_ops

__all__ = ["check_power_ridge", "connected_components", "degree", "laplacian"]


def _check_weights(W) -> sp.csr_matrix:
    """CSR float64 copy of ``W`` without its diagonal; square, finite, non-negative."""
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square (n, n) weight matrix, got shape {W.shape}")
    W.sum_duplicates()
    if not np.isfinite(W.data).all():
        raise ValueError("W contains NaN or infinite weights")
    if (W.data < 0).any():
        raise ValueError("W has negative weights; graph Laplacians need w_ij >= 0")
    diagonal = W.diagonal()
    if diagonal.any():
        W = (W - sp.diags(diagonal, format="csr")).tocsr()
    W.eliminate_zeros()
    return W


def degree(W) -> np.ndarray:
    """Vertex degrees ``d_i = Σ_j w_ij`` as a float64 vector (diagonal of ``W`` included)."""
    return np.asarray(sp.csr_matrix(W).sum(axis=1), dtype=np.float64).ravel()


def connected_components(W) -> tuple[int, np.ndarray]:
    """Connected components of the undirected graph with an edge where ``w_ij != 0``.

    Returns
    -------
    n_components : int
    labels : ndarray of int, shape (n_samples,)
        Component of each vertex, numbered from 0.
    """
    W = sp.csr_matrix(W)
    n_components, labels = _scipy_components(W, directed=False)
    return int(n_components), labels


#: Rows sampled to estimate the non-zeros of ``L^p`` before computing it.
POWER_SAMPLE_ROWS = 64

#: Cap on the bytes of one row block's temporaries in :func:`_matrix_power` (larger blocks are
#: no faster: each is ``p − 1`` sparse products with the same ``L``).
POWER_BLOCK_BYTES = 64 << 20


def _entry_bytes(nnz: int) -> int:
    """Bytes of one stored CSR entry: a float64 value and a column index (int32 below 2³¹)."""
    return 8 + (4 if nnz < 2**31 else 8)


def _power_memory(n: int, nnz: float) -> int:
    """Peak bytes of :func:`_matrix_power` for a result with ``nnz`` entries.

    Its lower triangle and, while the full matrix is assembled, the transposed strict lower
    triangle and the full result: twice the result, plus its row pointers.
    """
    return int(2 * nnz * _entry_bytes(int(nnz)) + 3 * (n + 1) * 8)


def _estimate_power_nnz(L: sp.csr_matrix, power: int, limit: float):
    """``(nnz, complete)``: non-zeros of ``L^power`` estimated from sampled rows.

    Row ``i`` of ``L^p`` is non-zero on the vertices at most ``p`` edges from ``i`` (``L``'s
    pattern with its diagonal; cancellation aside), so the sampled rows' ``p``-hop neighbourhoods
    are counted by sparse products of their pattern.  The neighbourhoods only grow with ``p``:
    once the estimate passes ``limit`` non-zeros the search stops (``complete`` False, the
    estimate is then a lower bound), so the sample never costs more than a few rows of a result
    that fits.
    """
    n = L.shape[0]
    t = min(n, POWER_SAMPLE_ROWS)
    rows = np.sort(np.random.RandomState(0).choice(n, t, replace=False))
    # L's pattern holds the diagonal of every vertex with an edge (isolated ones: empty rows)
    pattern = sp.csr_matrix((np.ones(L.nnz), L.indices, L.indptr), shape=L.shape)
    ops = get_ops()
    block = pattern[rows]
    for _ in range(power - 1):
        estimate = block.nnz / t * n
        if estimate > limit:
            return estimate, False
        block = ops.sparse_matmul(block, pattern).tocsr()
        block.data[:] = 1.0
    return block.nnz / t * n, True


def _matrix_power(L: sp.csr_matrix, power: int, memory_budget=None) -> sp.csr_matrix:
    """``L^power``, exactly symmetric, computed by row blocks within ``memory_budget``.

    The number of non-zeros of ``L^p`` grows like the ``p``-hop neighbourhoods of the graph
    (``k·p^dim`` per row for a kNN graph on ``dim``-dimensional data, up to ``n``): it is
    estimated first from :data:`POWER_SAMPLE_ROWS` sampled rows (:func:`_estimate_power_nnz`),
    and a power whose result does not fit is refused before it is computed.  Otherwise each block
    of rows is ``L[rows] · L · … · L`` (``p − 1`` sparse products, no power of the whole matrix is
    ever formed: repeated squaring held ``L^{p/2}`` twice besides the result, and took 26 s and
    1 GB for ``p = 16`` on 20,000 two-moons points where this takes less), and only its lower
    triangle is kept; the full matrix is then the lower triangle plus its transpose (exactly
    symmetric).  Peak memory: about twice the result (:func:`_power_memory`) plus one block.

    Raises
    ------
    MemoryBudgetError
        When the estimated (or, while computing, the actual) result does not fit.
    """
    n = L.shape[0]
    budget = parse_memory_budget(memory_budget)
    per_entry = _entry_bytes(L.nnz)
    limit = (budget - 3 * (n + 1) * 8) / (2 * per_entry)
    estimate, complete = _estimate_power_nnz(L, power, limit)
    if not complete or _power_memory(n, estimate) > budget:
        _refuse_power(power, n, estimate, complete, budget)
    # Blocks: the products' rows (the block and its product with L, each up to a result row)
    # and scipy's two length-n accumulators, in what the result leaves of the budget.
    result_bytes = estimate * _entry_bytes(int(estimate))
    per_row = 4 * max(estimate / n, 1.0) * per_entry
    spare = budget - _power_memory(n, estimate) + result_bytes - 2 * n * 12
    block_budget = int(min(max(spare, per_row), POWER_BLOCK_BYTES))
    strict_indptr = np.zeros(n + 1, dtype=np.int64)
    diagonal = np.zeros(n)
    indices, data = [], []
    stored = 0
    for rows in get_ops().row_blocks(n, per_row, block_budget, what="Laplacian power block"):
        block = L[rows]
        for _ in range(power - 1):
            block = (block @ L).tocsr()
        block.sum_duplicates()  # canonical: sorted columns
        # keep the strict lower triangle (column < row) and the diagonal
        row_of = np.repeat(np.arange(rows.start, rows.stop), np.diff(block.indptr))
        diagonal[rows] = block.diagonal(k=rows.start)
        keep = block.indices < row_of
        strict_indptr[rows.start + 1 : rows.stop + 1] = np.bincount(
            row_of[keep] - rows.start, minlength=rows.stop - rows.start
        )
        indices.append(block.indices[keep].astype(np.int32 if n < 2**31 else np.int64))
        data.append(block.data[keep])
        stored += indices[-1].nbytes + data[-1].nbytes
        del block, row_of, keep
        if 4 * stored > budget:  # the sample under-estimated: refuse before exceeding
            nnz = 2 * stored / per_entry * n / rows.stop
            _refuse_power(power, n, nnz, True, budget, rows.stop)
    np.cumsum(strict_indptr, out=strict_indptr)
    indices = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
    data = np.concatenate(data) if data else np.zeros(0)
    strict = sp.csr_matrix((data, indices, strict_indptr), shape=L.shape)
    del indices, data
    upper = strict.T.tocsr()
    lower = (strict + sp.diags(diagonal, format="csr")).tocsr()
    del strict
    return (lower + upper).tocsr()


def _refuse_power(power, n, nnz, complete, budget, rows_done=None):
    needed = _power_memory(n, nnz)
    how = (
        f"after {rows_done} of {n} rows"
        if rows_done is not None
        else f"estimated from {min(n, POWER_SAMPLE_ROWS)} sampled rows"
    )
    amount = "about" if complete else "at least"
    raise MemoryBudgetError(
        f"laplacian(power={power}): L^{power} has {amount} {nnz:.3g} non-zeros "
        f"({nnz / max(n, 1):.0f} per row of {n}; {how}), {format_bytes(needed / 2)} as a sparse "
        f"matrix, and computing it needs {amount} {format_bytes(needed)}, but memory_budget is "
        f"{format_bytes(budget)}: the non-zeros grow like the {power}-hop neighbourhoods of the "
        "graph. Use a smaller power or fewer neighbours, or raise memory_budget"
    )


def check_power_ridge(power, ridge) -> None:
    """Raise ValueError unless ``power`` is an integer ≥ 1 and ``ridge`` a finite number ≥ 0."""
    if isinstance(power, bool) or not isinstance(power, Integral) or power < 1:
        raise ValueError(f"power must be an integer >= 1, got {power!r}")
    if isinstance(ridge, bool) or not isinstance(ridge, Real) or not (0 <= ridge < np.inf):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")


def laplacian(
    W, *, normalized: bool = False, power: int = 1, ridge: float = 0.0, memory_budget=None
) -> sp.csr_matrix:
    """Graph Laplacian ``(D − W)^p + ridge·I`` or ``(I − D^{-1/2} W D^{-1/2})^p + ridge·I``.

    Parameters
    ----------
    W : sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative weights (symmetry is the caller's contract; it is not checked).
    normalized : bool
        Symmetric normalized Laplacian ``I − D^{-1/2} W D^{-1/2}`` instead of ``D − W``;
        isolated vertices get an all-zero row (see the module docstring).
    power : int
        ``p ≥ 1``: the Laplacian is raised to this power (sparse products; the non-zeros of a row
        are its ``p``-hop neighbourhood, up to ``n``).  Estimated before it is computed, and
        refused when it does not fit in ``memory_budget``.
    ridge : float
        ``≥ 0``, added to the diagonal after the power.
    memory_budget : int, str or None
        Bytes for computing ``L^p`` (``power > 1``): about twice the result plus one block of
        rows (:func:`_matrix_power`); None is a quarter of the available memory
        (:func:`semiscale._memory.parse_memory_budget`).  ``W`` and the unpowered ``L``
        (``O(nnz(W))``) are not counted.

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (n, n)
        Symmetric positive semi-definite (definite when ``ridge > 0``), sorted indices.

    Raises
    ------
    ValueError
        Non-square, non-finite or negative ``W``; ``power`` not an integer ≥ 1; ``ridge`` < 0.
    MemoryBudgetError
        When ``L^power`` does not fit in ``memory_budget`` (a ``ValueError``): the message names
        the power, the estimated non-zeros and bytes, and the budget.
    """
    check_power_ridge(power, ridge)
    W = _check_weights(W)
    n = W.shape[0]
    deg = degree(W)
    if normalized:
        connected = deg > 0
        inv_sqrt = np.zeros(n)
        inv_sqrt[connected] = 1.0 / np.sqrt(deg[connected])
        # w_ij (s_i s_j) rounds identically for (i, j) and (j, i): L stays exactly symmetric
        rows = np.repeat(np.arange(n), np.diff(W.indptr))
        S = sp.csr_matrix(
            (W.data * (inv_sqrt[rows] * inv_sqrt[W.indices]), W.indices, W.indptr), shape=W.shape
        )
        L = sp.diags(connected.astype(np.float64), format="csr") - S
    else:
        L = sp.diags(deg, format="csr") - W
    L = L.tocsr()
    if power > 1:
        L = _matrix_power(L, int(power), memory_budget)
    if ridge:
        L = (L + float(ridge) * sp.eye(n, format="csr")).tocsr()
    L.sum_duplicates()
    L.eliminate_zeros()
    L.sort_indices()
    return L
