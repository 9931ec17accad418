"""Exact kNN by blocked brute force, and exact distances of given pairs.

Private to :mod:`semiscale.graph.knn` (see its docstring for when each search runs).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._memory import parse_memory_budget, row_slices
from .._progress import progress
from ..linalg.ops import get_ops

#: Column-group size of the brute-force selection (see ``_select_k_smallest``).
_GROUP = 16


def _drop_self(dist: np.ndarray, ind: np.ndarray):
    """Remove column ``i`` from row ``i`` of a (n, k+1) result, or the last column if absent."""
    n, kp1 = ind.shape
    is_self = ind == np.arange(n)[:, None]
    is_self[~is_self.any(axis=1), -1] = True
    keep = ~is_self
    return dist[keep].reshape(n, kp1 - 1), ind[keep].reshape(n, kp1 - 1)


def _to_dense(X):
    return X.toarray() if sp.issparse(X) else X


def _exact_sq_distances(X, ind, queries=None, sq=None):
    """‖x_q − x_{ind[i, j]}‖² (q = ``queries[i]``) in float64, in row blocks.

    Dense ``X``: the differences are formed explicitly (no cancellation).  Sparse ``X``:
    ``‖a‖² + ‖b‖² − 2 a·b`` from row-wise sparse products (``sq``: the squared row norms, computed
    when not given), clipped at 0.
    """
    m, k = ind.shape
    queries = np.arange(m) if queries is None else queries
    out = np.empty((m, k), dtype=np.float64)
    rows = max(1, (32 * 1024**2) // max(1, 8 * k * X.shape[1]))
    if sp.issparse(X):
        X = X.astype(np.float64, copy=False)
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sq is None else sq
        rows = max(1, (256 * 1024) // max(1, k))
    for s in row_slices(m, rows):
        q, nb = queries[s], ind[s]
        if sp.issparse(X):
            left = X[np.repeat(q, k)]
            dots = np.asarray(left.multiply(X[nb.ravel()]).sum(axis=1)).reshape(nb.shape)
            out[s] = np.maximum(sq[q, None] + sq[nb] - 2.0 * dots, 0.0)
        else:
            diff = X[nb].astype(np.float64, copy=False) - X[q, None, :]
            out[s] = np.einsum("ijk,ijk->ij", diff, diff)
    return out


def _select_k_smallest(G: np.ndarray, k: int, groups: int):
    """Columns and values of the ``k`` smallest entries of every row of ``G`` (unordered).

    With ``groups = g > 1`` the ``n`` columns are split into ``m = ⌈n/g⌉`` strided groups
    ``{c, c + m, …, c + (g−1)m}`` (the last slab may be short); the ``k`` groups with the
    smallest minima contain a set of ``k`` smallest entries (a group holding one of them has its
    minimum at most the ``k``-th value, any other group at least it), so ``g`` vectorized
    elementwise minima and an ``argpartition`` of ``m`` minima replace an ``argpartition`` of all
    ``n`` entries.
    """
    b, n = G.shape
    if groups == 1:
        cols = np.argpartition(G, k - 1, axis=1)[:, :k]
        return cols, np.take_along_axis(G, cols, axis=1)
    m = -(-n // groups)
    minima = G[:, :m].copy()
    for start in range(m, n, m):
        stop = min(start + m, n)
        np.minimum(minima[:, : stop - start], G[:, start:stop], out=minima[:, : stop - start])
    best = np.argpartition(minima, k - 1, axis=1)[:, :k]
    cols = (best[:, :, None] + m * np.arange(groups)).reshape(b, k * groups)
    outside = cols >= n
    cols[outside] = 0
    vals = np.take_along_axis(G, cols, axis=1)
    vals[outside] = np.inf
    part = np.argpartition(vals, k - 1, axis=1)[:, :k]
    return np.take_along_axis(cols, part, axis=1), np.take_along_axis(vals, part, axis=1)


def _prepare(X, m: int, budget: int, precise: bool):
    """Working copy of ``X`` for the products, its squared norms, and how exact it is.

    Returns ``(Xw, sq, mode)`` with ``mode``:

    - ``"exact"``: ``Xw`` is ``X`` (float64, or float32 input), or float32 for integer-valued
      data with ``max ‖x‖² ≤ 2²²`` (every product and sum an integer below ``2²⁴``);
    - ``"verify"``: ``Xw`` is ``X − mean(X)`` in float32 (dense float64 input, full search):
      products are twice as fast but only accurate to a bound, checked afterwards.

    Float32 copies are made only for a full search (``4m ≥ n`` queries) when they take at most
    a quarter of the budget.
    """
    n, d = X.shape
    sparse = sp.issparse(X)
    if sparse and n * d * X.dtype.itemsize <= budget // 4 and X.nnz >= 0.01 * n * d:
        X, sparse = X.toarray(), False
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sparse else _row_sq_norms(X)
    # a few queries (or a re-search of failed rows): a float32 copy does not pay off; nor
    # does one that takes over a quarter of the budget
    if precise or X.dtype != np.float64 or 4 * m < n or 4 * n * d > budget // 4:
        return X, sq, "exact"
    if sq.max(initial=0.0) <= 2.0**22 and _integer_valued(X):
        return X.astype(np.float32), sq, "exact"
    if sparse:
        return X, sq, "exact"
    mean = X.mean(axis=0)  # distances do not change; norms, hence float32 errors, shrink
    Xw = np.empty(X.shape, dtype=np.float32)
    sq = np.empty(n)
    for s in row_slices(n, max(1, (16 * 1024**2) // max(1, d))):
        centred = X[s] - mean
        sq[s] = np.einsum("ij,ij->i", centred, centred)
        Xw[s] = centred
    return Xw, sq, "verify"


def _float32_error_bound(sq: np.ndarray, d: int) -> np.ndarray:
    """Per query row, a bound on ``|Ĝ_ij − G_ij|`` for ``G_ij = ‖x_j‖² − 2 x_i·x_j`` in float32.

    With ``u = 2⁻²⁴``, ``γ_d = d u / (1 − d u)`` and ``R = max_j ‖x_j‖``: rounding the inputs
    to float32 costs ``≤ 2u ‖x_i‖ R`` per dot product, the dot product ``≤ γ_d ‖x_i‖ R``,
    and the norm and the sum ``≤ 3u (R² + 2‖x_i‖ R)``; the bound is twice their total.
    """
    u = 2.0**-24
    gamma = d * u / (1 - d * u)
    norms = np.sqrt(sq)
    R = norms.max(initial=0.0)
    return 2.0 * ((2 * gamma + 4 * u) * norms * R + 3 * u * (R * R + 2 * norms * R))


def _kneighbors_brute(
    X, k, *, memory_budget=None, n_jobs=1, random_state=None, queries=None, precise=False
):
    """Exact search by blocked brute force.

    For a block ``B`` of query rows, ``G = (−2B) Xᵀ + ‖x_j‖²`` (one BLAS product; ``‖b‖²`` is
    constant along a row and does not change the order), the query's own column set to ``+∞``,
    is reduced to its smallest entries by :func:`_select_k_smallest`.  The distance GEMM, the
    block sizes (``rows × n`` values each, under ``memory_budget``) and the ``n_jobs`` threads
    belong to the array-operations layer
    (:meth:`semiscale.linalg.ops.ArrayOps.sq_distance_scan`); this module only selects.  The
    distances of the selected pairs are recomputed as ``‖x_i − x_j‖²`` directly in float64
    (dense input), free of cancellation error.

    Sparse ``X`` is densified when the dense copy fits in a quarter of the budget and at least
    1 % of its entries are non-zero (BLAS then beats scipy's single-threaded sparse products,
    e.g. on w8a at 3.9 %); otherwise each block is the sparse product ``(−2B) Xᵀ`` made dense.

    Float32 products, twice as fast, keep the result exact (see :func:`_prepare`): integer data
    are exact in float32; other dense float64 data are centred and searched in float32 for
    ``k + 1`` candidates, and a row is accepted only when its float32 ``(k+1)``-th value exceeds
    its ``k``-th by more than twice :func:`_float32_error_bound` ``δ``: every other column is then
    truly farther than the ``k`` kept (``G_j ≥ v_{k+1} − δ > v_k + δ ≥ G_kept``).  The rows that
    fail (near-ties at the ``k``-th neighbour, typically about 1 %) are searched again in
    float64 (``precise=True``).
    """
    n, d = X.shape
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.intp)
    m = queries.size
    budget = parse_memory_budget(memory_budget)
    Xw, sq, mode = _prepare(X, m, budget, precise)
    # exact distances of the chosen pairs: from the working copy unless it is rounded
    X_exact, sq_exact = (X, None) if mode == "verify" else (Xw, sq)
    if sp.issparse(X_exact):
        X_exact = X_exact.astype(np.float64, copy=False)
    kc = k + 1 if mode == "verify" and k + 1 < n - 1 else k
    if kc == k:
        mode = "exact"  # float64 products, or every other point is a candidate
    groups = _GROUP if n >= 8 * _GROUP * kc else 1
    ind = np.empty((m, k), dtype=np.intp)
    dist2 = np.empty((m, k))
    gap = np.empty(m)  # float32 (k+1)-th minus k-th smallest value ("verify" mode)

    def select(s, G):
        q = queries[s]
        cols, vals = _select_k_smallest(G, kc, groups)
        if kc > k:
            order = np.argsort(vals, axis=1)
            cols, vals = np.take_along_axis(cols, order, 1), np.take_along_axis(vals, order, 1)
            gap[s] = vals[:, k] - vals[:, k - 1]
        cols = cols[:, :k]
        d2 = _exact_sq_distances(X_exact, cols, q, sq_exact)  # in the worker threads too
        order = np.argsort(d2, axis=1, kind="stable")
        ind[s] = np.take_along_axis(cols, order, axis=1)
        dist2[s] = np.take_along_axis(d2, order, axis=1)
        bar.update(len(q))  # from the worker threads: tqdm's updates take its lock

    # the selection's temporaries per query row: the group minima and their argpartition
    with progress(total=m, desc="kNN search (exact)", unit="point") as bar:
        get_ops().sq_distance_scan(
            Xw,
            sq.astype(Xw.dtype),
            queries,
            select,
            row_bytes=2 * (n // groups + 1) * 8,
            memory_budget=budget,
            n_jobs=n_jobs,
        )
    if mode == "verify":
        bad = np.flatnonzero(~(gap > 2.0 * _float32_error_bound(sq, d)[queries]))
        if bad.size:
            options = {"memory_budget": memory_budget, "n_jobs": n_jobs, "precise": True}
            d_bad, ind[bad] = _kneighbors_brute(X, k, queries=queries[bad], **options)
            dist2[bad] = d_bad**2
    return np.sqrt(dist2), ind


def _row_sq_norms(X: np.ndarray) -> np.ndarray:
    """``‖x_i‖²`` in float64, in row blocks (no full-size temporary)."""
    out = np.empty(X.shape[0])
    for s in row_slices(X.shape[0], max(1, (16 * 1024**2) // max(1, X.shape[1]))):
        block = X[s].astype(np.float64, copy=False)
        out[s] = np.einsum("ij,ij->i", block, block)
    return out


def _integer_valued(X) -> bool:
    """Whether every stored entry of ``X`` is an integer (checked in chunks)."""
    data = X.data if sp.issparse(X) else X.reshape(-1)
    step = 1 << 22
    return all(
        np.array_equal(data[s : s + step], np.rint(data[s : s + step]))
        for s in range(0, data.size, step)
    )
