"""The kNN search of a ``dask.array`` ``X`` across Dask workers, no worker holding all of ``X``.

``X`` is chunked by rows into ``C`` chunks ``X_1, …, X_C`` (offsets ``o_1, …, o_C``).  The
``k`` nearest other points of a row are the ``k`` nearest of the union of its ``k`` nearest
*within each chunk*, so the search is a map over chunk pairs and a reduction per query chunk:

- a **pair task** ``(i, j)`` holds ``X_i`` and ``X_j`` (never more) and returns, for every row of
  ``X_i``, its ``k`` nearest rows of ``X_j`` (the row itself excluded by its global index) as an
  ``n_i × k`` table of distances and global indices, padded with ``(+∞, −1)`` where ``X_j`` has
  fewer than ``k`` candidates;
- a **merge task** keeps the ``k`` smallest of ``C`` such tables (a tree of fan-in
  :data:`MERGE_FAN_IN` for many chunks);
- the client receives only the merged ``n × k`` distances and indices, ``16 n k`` bytes.

With ``C`` chunks there are ``C²`` pair tasks: the exact search does the ``n² d`` multiply-adds
of the single-machine brute force (or ``C`` k-d-tree queries per point, each in a tree of
``n / C`` points) spread over the workers.  A pair task searches as the single-machine
:func:`semiscale.graph.knn.search` would for the whole of ``X`` (``"kdtree"``, ``"brute"`` or
``"hnsw"``, resolved by the caller): the diagonal task ``(i, i)`` runs the library's own search
of ``X_i`` (:func:`semiscale.graph._brute._kneighbors_brute`, or the k-d tree queried in its
leaf order), an off-diagonal brute-force task one blocked GEMM ``‖x‖² − 2 X_i X_jᵀ`` through
the ops layer with the same selection; every distance that leaves a task is recomputed as
:func:`semiscale.graph._brute._exact_sq_distances` computes it (explicit float64 differences),
or is the k-d tree's, so the merged table equals the single-machine one (same distances, same
indices where there are no ties).

Approximate search (``"hnsw"``) builds one HNSW index per chunk (a task, serialized to bytes:
voyager's indexes do not pickle; voyager only), queries every chunk's rows against every index
(a task holds ``X_i``, ``X_j`` and the index of ``X_j``; the distances of the pairs found are
recomputed exactly), and merges the top ``k`` as above.

Measured on the 2-core development machine (2 worker processes of one thread, X persisted on
them, one BLAS thread, under a load of 4–6 from other jobs, so the times are noisy; medians of
3): 50,000 × 20 Gaussian points, k = 10, exact (brute force): NumPy 12.9 s (``n_jobs=None``),
8.1 s (``n_jobs=2``); Dask 9.0 s in 2 chunks, 12.5 s in 4, the same table (indices equal,
distances equal).  50,000 × 10 (k-d tree): NumPy 39.7 s / 34.4 s, Dask 67.3 s in 2 chunks
(runs of 38.5–97.9 s), 28.1 s in 4.  Approximate, 500,000 × 3, one run: NumPy 29.0 s, Dask
46.7 s in 2 chunks, 100.7 s in 4, estimated recall 1.0: every row queries every chunk's
index, so the query work grows with the number of chunks (``C·n`` queries).

The chunks are the user's dask array, created by tasks: the scheduler recomputes a chunk lost
with a worker and retries the tasks that needed it.  When it gives up (``KilledWorker``) the
search raises the :class:`RuntimeError` of
:func:`~semiscale.backends._dask_errors.lost_worker_error`; it never returns a partial table.
"""

from __future__ import annotations

import io
import uuid

import numpy as np
from scipy.spatial import cKDTree

from .._arrays import check_dask_array, is_dask_array
from .._pairs import _check_magnitude
from .._random import check_random_state
from ..graph._brute import (
    _GROUP,
    _float32_error_bound,
    _kneighbors_brute,
    _row_sq_norms,
    _select_k_smallest,
)
from ..graph._hnsw import (
    HNSW_EF_SEARCH,
    PILOT_SIZE,
    RECALL_SAMPLE,
    _hnsw_seed,
    build_threads,
    check_ann_library,
    voyager_index,
)
from ..linalg.ops import get_ops
from ..linalg.streaming import DISTANCE_BLOCK_MULTIPLY_ADDS, DISTANCE_BLOCK_ROWS
from ._dask_errors import LOST, lost_worker_error

__all__ = [
    "MERGE_FAN_IN",
    "check_distributed_ann_library",
    "search_plan",
    "check_dask_X",
    "dask_estimate_recall",
    "dask_gather_rows",
    "dask_kneighbors",
    "dask_pilot_rows",
    "new_points_plan",
]

#: Candidate tables merged by one merge task: ``C`` tables of a query chunk go through a tree
#: of merges of at most this many, so that no task holds more than 8 ``n_i × k`` tables.
MERGE_FAN_IN = 8


def check_dask_X(X, *, name: str = "X"):
    """A dask array ``X`` ready for the distributed search: 2-D, float, chunked by rows only.

    Lazy: nothing is computed.  The checks of every dask ``X``
    (:func:`semiscale._arrays.check_dask_array`: 2-D, known chunk sizes, dense NumPy chunks,
    numeric with integers and booleans to float64, one chunk along the columns), and at least
    one row; finiteness and magnitude are checked in the tasks that read each chunk
    (:func:`_check_chunk`).

    Raises
    ------
    TypeError
        For an ``X`` that is not a dask array, or a dask array of sparse chunks.
    ValueError
        For a dask array that is not 2-D, whose chunk sizes are unknown, whose dtype is not
        numeric, or that has no rows.
    """
    if not is_dask_array(X):
        raise TypeError(f"{name} must be a dask array here, got {type(X).__name__}")
    X = check_dask_array(X, name=name)
    if X.shape[0] < 1:
        raise ValueError(f"{name} has no rows")
    return X


def _check_chunk(block, start: int, n_features: int, name: str = "X") -> float:
    """Refuse NaN, inf or overflowing values in one chunk; return its largest ``|x|``."""
    if not np.isfinite(block).all():
        bad = start + int(np.flatnonzero(~np.isfinite(block).all(axis=1))[0])
        raise ValueError(
            f"{name} contains NaN or infinity (first in row {bad}); the kNN graph needs finite "
            "points: remove or impute those rows (e.g. sklearn.impute.SimpleImputer)"
        )
    _check_magnitude(block, n_features, name, underflow=False)
    return float(np.abs(block).max(initial=0.0))


def check_distributed_ann_library(ann_library) -> str:
    """The HNSW library of a distributed approximate search: voyager only.

    The per-chunk indexes travel between tasks as voyager's serialized bytes; hnswlib (source
    only, not installed where this was written and tested) is refused rather than run
    untested.
    """
    library = check_ann_library(ann_library)
    if library != "voyager":
        raise ValueError(
            f"ann_library={ann_library!r}: the approximate search of a dask array builds voyager "
            "indexes on the workers; use ann_library=None or 'voyager', method='exact', or "
            "X.compute() for the single-machine search"
        )
    return library


def _pad(dist, ind, k: int):
    """An ``(m, k)`` table from ``(m, c)`` candidates, ``c <= k``: padded with ``(+∞, −1)``."""
    m, c = dist.shape
    if c == k:
        return dist, ind
    full_d = np.full((m, k), np.inf)
    full_i = np.full((m, k), -1, dtype=np.intp)
    full_d[:, :c], full_i[:, :c] = dist, ind
    return full_d, full_i


def _sorted(d2, ind, k: int):
    """Sort candidate rows by ``d2`` (stable), keep ``k`` columns, square roots; −1 for +∞."""
    order = np.argsort(d2, axis=1, kind="stable")[:, :k]
    d2 = np.take_along_axis(d2, order, axis=1)
    ind = np.take_along_axis(ind, order, axis=1)
    ind[np.isinf(d2)] = -1
    return _pad(np.sqrt(d2), ind, k)


def _query_ids(queries, m: int):
    """Global row ids of a query block: ``queries`` is an int start or an array of ids."""
    if isinstance(queries, (int, np.integer)):
        return np.arange(queries, queries + m, dtype=np.intp)
    return np.asarray(queries, dtype=np.intp)


def _pair_kdtree(Q, queries, Xj, offset: int, k: int, diagonal: bool):
    """``k`` nearest rows of ``Xj`` to each row of ``Q`` by scipy's k-d tree (float64)."""
    Xj = np.asarray(Xj, dtype=np.float64)
    nj = Xj.shape[0]
    q_ids = _query_ids(queries, Q.shape[0])
    tree = cKDTree(Xj, balanced_tree=False, compact_nodes=False)
    kk = min(k + 1, nj)
    if diagonal:
        # the chunk queried in its own leaf order (consecutive queries visit the same nodes),
        # as the single-machine search does
        order = tree.indices
        dist = np.empty((nj, kk))
        ind = np.empty((nj, kk), dtype=np.intp)
        d, i = tree.query(Xj[order], kk, workers=1)
        dist[order], ind[order] = d.reshape(nj, kk), i.reshape(nj, kk)
    else:
        dist, ind = tree.query(np.asarray(Q, dtype=np.float64), kk, workers=1)
        dist, ind = dist.reshape(-1, kk), ind.reshape(-1, kk)
    ind = ind + offset
    dist = np.where(ind == q_ids[:, None], np.inf, dist)
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(dist, order, axis=1)
    ind = np.take_along_axis(ind, order, axis=1)
    ind[np.isinf(dist)] = -1
    return _pad(dist, ind, k)


def _exact_pair_sq_distances(Q, Xj, cols):
    """``‖q_i − x_{cols[i, j]}‖²`` in float64 from explicit differences.

    The formula of :func:`semiscale.graph._brute._exact_sq_distances` (dense input), so that a
    distance found across chunks equals the one found on the whole of ``X``.
    """
    diff = Xj[cols].astype(np.float64, copy=False) - Q[:, None, :]
    return np.einsum("ijk,ijk->ij", diff, diff)


def _pair_brute(
    Q, queries, Xj, offset: int, k: int, diagonal: bool, memory_budget=None, precise=False
):
    """``k`` nearest rows of ``Xj`` to each row of ``Q`` by blocked brute force.

    The diagonal ``(Q is Xj)`` is the single-machine search of the chunk itself
    (:func:`~semiscale.graph._brute._kneighbors_brute`, float32 products verified).  Off the
    diagonal, blocks of query rows give ``G = ‖x_j‖² − 2 Q_b X_jᵀ`` (the ops layer's GEMM,
    blocks of at most ``DISTANCE_BLOCK_MULTIPLY_ADDS``), reduced by
    :func:`~semiscale.graph._brute._select_k_smallest`; the selected pairs' distances are then
    recomputed exactly (:func:`_exact_pair_sq_distances`).

    As on the diagonal, float64 data are searched in float32 (GEMM and selection 2.5 times
    faster: 1.5 s against 3.8 s for 25,000 × 25,000 pairs in 20-D, one thread): both chunks
    are centred on ``X_j``'s mean, ``k + 1`` candidates selected, and a row is accepted when
    its float32 ``(k+1)``-th value exceeds its ``k``-th by more than twice
    :func:`~semiscale.graph._brute._float32_error_bound` (computed with the largest norm of
    both chunks, an upper bound); the other rows are searched again in float64
    (``precise=True``).
    """
    nj, d = Xj.shape
    m = Q.shape[0]
    if diagonal:
        if nj < 2:
            return _pad(np.empty((m, 0)), np.empty((m, 0), dtype=np.intp), k)
        dist, ind = _kneighbors_brute(Xj, min(k, nj - 1), memory_budget=memory_budget, n_jobs=1)
        return _pad(dist, ind + offset, k)
    q_ids = _query_ids(queries, m)
    local = q_ids - offset
    inside = (local >= 0) & (local < nj)  # sampled queries may lie in this chunk
    bound = None
    if not precise and Xj.dtype == np.float64 and k < nj:
        mean = Xj.mean(axis=0)
        Xc, Qc = Xj - mean, Q - mean
        sq_c = _row_sq_norms(Xc)
        bound = _float32_error_bound(np.concatenate([_row_sq_norms(Qc), sq_c]), d)[:m]
        Xw, Qw, sq = Xc.astype(np.float32), Qc.astype(np.float32), sq_c.astype(np.float32)
        del Xc, Qc
        kc = k + 1
    else:
        Xw, Qw, sq = Xj, Q, _row_sq_norms(Xj).astype(Xj.dtype)
        kc = min(k, nj)
    groups = _GROUP if nj >= 8 * _GROUP * kc else 1
    right = Xw.T
    ops = get_ops()
    rows = max(1, min(DISTANCE_BLOCK_ROWS, DISTANCE_BLOCK_MULTIPLY_ADDS // max(nj * d, 1)))
    dist = np.empty((m, k))
    ind = np.empty((m, k), dtype=np.intp)
    failed = []
    for start in range(0, m, rows):
        s = slice(start, min(start + rows, m))
        # −2 is a power of two: (−2b)·x rounds exactly like −2(b·x)
        G = ops.matmul(Qw[s] * Xw.dtype.type(-2.0), right)
        G += sq
        own = np.flatnonzero(inside[s])
        G[own, local[s][own]] = np.inf
        cols, vals = _select_k_smallest(G, kc, groups)
        if bound is not None:
            order = np.argsort(vals, axis=1)
            cols = np.take_along_axis(cols, order, axis=1)
            vals = np.take_along_axis(vals, order, axis=1)
            ok = vals[:, k] - vals[:, k - 1] > 2.0 * bound[s]
            failed.append(start + np.flatnonzero(~ok))
            cols = cols[:, :k]
        d2 = _exact_pair_sq_distances(Q[s], Xj, cols)
        d2[cols == local[s][:, None]] = np.inf
        dist[s], ind[s] = _sorted(d2, cols + offset, k)
    failed = np.concatenate(failed) if failed else np.empty(0, dtype=np.intp)
    if failed.size:  # near-ties at the k-th candidate: float64 products for those rows
        dist[failed], ind[failed] = _pair_brute(
            Q[failed], q_ids[failed], Xj, offset, k, False, precise=True
        )
    return dist, ind


def _hnsw_index(Xj, seed: int, threads: int) -> bytes:
    """A voyager HNSW index of the chunk ``Xj`` (ids ``0..n_j−1``), serialized to bytes.

    The index of the single-machine search (:func:`semiscale.graph._hnsw.voyager_index`).
    """
    Xf = np.ascontiguousarray(Xj, dtype=np.float32)
    n = Xf.shape[0]
    index = voyager_index(*Xf.shape, seed)
    index.add_items(Xf, np.arange(n), num_threads=threads)
    buffer = io.BytesIO()
    index.save(buffer)
    return buffer.getvalue()


def _hnsw_query(index: bytes, Q, kk: int, ef: int):
    """Local ids of the ``kk`` approximate nearest rows of the indexed chunk to each row of Q."""
    from voyager import Index

    Qf = np.ascontiguousarray(Q, dtype=np.float32)
    return Index.load(io.BytesIO(index)).query(Qf, k=kk, num_threads=1, query_ef=ef)[0]


def _pair_hnsw(Q, queries, Xj, offset: int, k: int, index: bytes):
    """``k`` approximate nearest rows of ``Xj`` to each row of ``Q``, distances exact."""
    nj = Xj.shape[0]
    q_ids = _query_ids(queries, Q.shape[0])
    kk = min(k + 1, nj)
    cols = None
    # as the single-machine search: a second, wider beam when the library returns fewer than
    # kk results for some query; exact search of the pair when even that fails
    for ef in (max(HNSW_EF_SEARCH, 2 * (k + 1)), max(256, 8 * (k + 1))):
        try:
            cols = np.asarray(_hnsw_query(index, Q, kk, min(ef, nj)), dtype=np.intp)
            break
        except RuntimeError:
            continue
    if cols is None:  # pragma: no cover - degenerate inputs only
        return _pair_brute(Q, queries, Xj, offset, k, False)
    cols = cols.reshape(-1, kk)
    d2 = _exact_pair_sq_distances(Q, Xj, cols)
    d2[cols + offset == q_ids[:, None]] = np.inf
    return _sorted(d2, cols + offset, k)


def _pair_task(Q, queries, Xj, offset, k, backend, diagonal, options, index=None):
    """One chunk pair's candidate table (runs on a worker).

    Both operands are checked first (O(n d), against the search's O(n² d)): whichever task
    meets a NaN first must raise the error that names it, not scipy's or BLAS's.
    """
    _check_chunk(Xj, offset, Xj.shape[1])
    if not diagonal and isinstance(queries, (int, np.integer)):
        _check_chunk(Q, int(queries), Q.shape[1])
    if backend == "kdtree":
        return _pair_kdtree(Q, queries, Xj, offset, k, diagonal)
    if backend == "hnsw":
        return _pair_hnsw(Q, queries, Xj, offset, k, index)
    return _pair_brute(Q, queries, Xj, offset, k, diagonal, options["memory_budget"])


def _merge(*tables):
    """The ``k`` smallest of several ``(dist, ind)`` candidate tables of the same rows.

    Ties keep the order of ``tables`` (chunk order), then each table's own order.
    """
    k = tables[0][0].shape[1]
    dist = np.concatenate([t[0] for t in tables], axis=1)
    ind = np.concatenate([t[1] for t in tables], axis=1)
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(dist, order, axis=1), np.take_along_axis(ind, order, axis=1)


def _tree_merge(delayed, tables):
    """Merge a list of delayed tables in a tree of fan-in :data:`MERGE_FAN_IN`."""
    while len(tables) > 1:
        tables = [
            delayed(_merge, pure=True)(*tables[s : s + MERGE_FAN_IN])
            for s in range(0, len(tables), MERGE_FAN_IN)
        ]
    return tables[0]


def _compute(*objects):
    """Compute on the current DaskOps' client, else dask's default scheduler (the default
    client when there is one).  A scheduler that gave up on a task (a worker lost more often
    than it retries, a cancelled result) raises the RuntimeError of
    :func:`~semiscale.backends._dask_errors.lost_worker_error`: no partial table ever reaches
    the caller."""
    import dask

    ops = get_ops()
    client = getattr(ops, "client", None) if getattr(ops, "name", None) == "dask" else None
    try:
        return dask.compute(*objects, **({"scheduler": client} if client is not None else {}))
    except LOST as exc:
        raise lost_worker_error("the distributed kNN search", exc) from exc


def dask_gather_rows(X, rows) -> np.ndarray:
    """The rows ``rows`` (sorted ints) of a dask array ``X`` as a NumPy array on the client."""
    return np.asarray(_compute(X[np.asarray(rows, dtype=np.intp)])[0])


def search_plan(X, k: int, backend: str, *, queries=None, Q=None, **options):
    """The delayed candidate tables of :func:`dask_kneighbors`, one per query chunk (or one
    for ``queries``), and the delayed per-chunk checks (:func:`_check_chunk`); nothing runs.

    Every pair task reads two chunks of ``X`` (or the gathered queries ``Q`` and one chunk),
    plus the HNSW index of the second for ``backend="hnsw"``; every merge task at most
    :data:`MERGE_FAN_IN` tables.
    """
    import dask

    delayed = dask.delayed
    d = X.shape[1]
    blocks = list(X.to_delayed()[:, 0])
    offsets = [int(o) for o in np.concatenate([[0], np.cumsum(X.chunks[0])])]
    random_state = options.pop("random_state", None)
    n_jobs = options.pop("n_jobs", None)
    ann_library = options.pop("ann_library", None)
    options = {"memory_budget": options.get("memory_budget")}
    indexes = [None] * len(blocks)
    if backend == "hnsw":
        check_distributed_ann_library(ann_library)
        seed = _hnsw_seed(random_state)
        threads = build_threads(max(1, n_jobs or 1), random_state)
        build = delayed(_hnsw_index, pure=random_state is not None)
        indexes = [build(block, (seed + j) % 2**31, threads) for j, block in enumerate(blocks)]
    pair = delayed(_pair_task, pure=True)

    def candidates(Qi, q, i=None):
        return _tree_merge(
            delayed,
            [
                pair(Qi, q, block, offsets[j], k, backend, i == j, options, indexes[j])
                for j, block in enumerate(blocks)
            ],
        )

    if queries is not None:
        return [candidates(Q, np.asarray(queries, dtype=np.intp))], []
    tables = [candidates(block, offsets[i], i) for i, block in enumerate(blocks)]
    checks = [
        delayed(_check_chunk, pure=True)(block, offsets[i], d) for i, block in enumerate(blocks)
    ]
    return tables, checks


def new_points_plan(X, Q, k: int, backend: str, *, memory_budget=None):
    """The delayed ``k``-nearest table of new points ``Q`` among the rows of the dask ``X``.

    The exact search of :func:`dask_kneighbors` with ``Q`` as the queries (rows that are not
    rows of ``X``: the graph extension's search of points to predict): one pair task per chunk
    ``X_c`` (``backend``; distances from explicit float64 differences), the ``p`` candidate
    tables merged top-``k`` on the workers in a tree of fan-in :data:`MERGE_FAN_IN`.  Nothing
    runs: the caller computes the result.

    Parameters
    ----------
    X : dask.array of shape (n, d)
        Chunked by rows, one chunk along the columns (:func:`check_dask_X`).
    Q : ndarray of shape (m, d) or dask.delayed of one
        The new points.  An array is made one graph literal, so that every pair task reads
        that one copy instead of carrying ``Q`` in its arguments.
    k : int
        ``1 <= k <= n``.
    backend : {"kdtree", "brute"}
        The exact search of each chunk, as :func:`semiscale.graph.knn.resolve_method` chose
        it for the whole of ``X`` (``resolve_method("exact", n, d)``: the k-d tree for
        ``d <= KDTREE_MAX_DIM``).
    memory_budget : int, str or None
        Bytes for the blocks of a brute-force pair task, on its worker.

    Returns
    -------
    dask.delayed
        Of ``(distances, indices)``: ndarrays of shape (m, k), distances increasing along each
        row, indices the global rows of ``X``.  Only this table comes back to the client
        (``16 m k`` bytes) whatever ``p``.
    """
    import dask
    from dask.delayed import Delayed

    n = X.shape[0]
    if not isinstance(Q, Delayed):
        Q = dask.delayed(np.ascontiguousarray(Q), name=f"semiscale-queries-{uuid.uuid4().hex}")
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
    pair = dask.delayed(_pair_task, pure=False)
    options = {"memory_budget": memory_budget}
    # query ids n .. n + m - 1: no row of X, so no candidate is excluded as the query itself
    tables = [
        pair(Q, n, X_c, int(o), k, backend, False, options)
        for X_c, o in zip(X.to_delayed()[:, 0], offsets, strict=True)
    ]
    return _tree_merge(dask.delayed, tables)


def dask_kneighbors(
    X,
    k: int,
    backend: str,
    *,
    queries=None,
    memory_budget=None,
    random_state=None,
    n_jobs=None,
    ann_library=None,
):
    """The ``k`` nearest other rows of every row of the dask array ``X`` (or of ``queries``).

    Parameters
    ----------
    X : dask.array of shape (n, d)
        As returned by :func:`check_dask_X`.
    k : int
        ``1 <= k < n`` (checked by the caller).
    backend : {"kdtree", "brute", "hnsw"}
        The search of each chunk pair, as :func:`semiscale.graph.knn.resolve_method` chose it
        for the whole of ``X``.
    queries : ndarray of int or None
        Sorted global rows to search for (the recall spot check); None = every row.  The rows
        are gathered to the client (a few hundred) and sent to every chunk's task.
    memory_budget : int, str or None
        Bytes for the blocks of a brute-force pair task, on its worker.
    random_state, n_jobs, ann_library
        As :func:`semiscale.graph.knn.search`: the HNSW seed (the index of chunk ``j`` gets
        the seed plus ``j``), the threads inserting into an index (1 with a seed), the library.

    Returns
    -------
    distances : ndarray of float64, shape (m, k)
    indices : ndarray of intp, shape (m, k)
        As :func:`semiscale.graph.knn.kneighbors`; ``m = n`` or ``len(queries)``.
    largest : float
        The largest ``|x|`` of ``X`` (for the caller's underflow check); NaN for a query search.
    """
    options = {
        "memory_budget": memory_budget,
        "random_state": random_state,
        "n_jobs": n_jobs,
        "ann_library": ann_library,
    }
    Q = None if queries is None else dask_gather_rows(X, queries)
    tables, checks = search_plan(X, k, backend, queries=queries, Q=Q, **options)
    tables, largest = _compute(tables, checks)
    distances = np.concatenate([t[0] for t in tables])
    indices = np.concatenate([t[1] for t in tables])
    return distances, indices, max(largest, default=float("nan"))


def dask_estimate_recall(X, distances, *, random_state=None, memory_budget=None) -> float:
    """:func:`semiscale.graph._hnsw.estimate_recall` of a table of the dask array ``X``.

    The same ``RECALL_SAMPLE`` rows, searched exactly across the chunks (a brute-force pair
    task per chunk, the sample sent to each): recall@k counts a returned neighbour whose
    distance is at most the exact ``k``-th distance.
    """
    n, k = distances.shape
    rng = check_random_state(0 if random_state is None else random_state)
    rows = np.sort(rng.choice(n, size=min(n, RECALL_SAMPLE), replace=False))
    exact, _, _ = dask_kneighbors(X, k, "brute", queries=rows, memory_budget=memory_budget)
    kth = exact[:, -1:]
    return float((distances[rows] <= kth * (1 + 1e-9) + 1e-12).mean())


def dask_pilot_rows(X, random_state=None) -> np.ndarray:
    """``PILOT_SIZE`` random rows of the dask array ``X`` on the client, for the pilot search
    of :func:`semiscale.graph._hnsw.pilot_recall` (which then takes all of them)."""
    rng = check_random_state(0 if random_state is None else random_state)
    rows = np.sort(rng.choice(X.shape[0], size=min(X.shape[0], PILOT_SIZE), replace=False))
    return dask_gather_rows(X, rows)
