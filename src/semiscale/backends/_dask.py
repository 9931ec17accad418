r"""The Dask distributed implementation of the array-operations layer (:class:`DaskOps`).

The n-side operand ``X`` of the kernel products is a ``dask.array`` chunked by rows and kept on
the workers; everything s-sized (centers, ``V``, ``K_ss`` and its factorizations) stays on the
client, as NumPy.  A product ``K(X, C) V`` is one task per row chunk ``X_c`` computing
``K(X_c, C) V`` with the NumPy layer (:mod:`semiscale.linalg.streaming`) on its worker; only
``C`` and ``V`` go out and the ``n_c × r`` blocks come back, concatenated on the client in chunk
order.  ``K(X, C)ᵀ U`` sends each chunk its rows ``U_c`` and sums the ``s × r`` answers on the
client in chunk order, so the result does not depend on which worker finished first.

Chunks are created by tasks, never ``scatter``-ed: a NumPy ``X`` becomes one graph literal per
chunk (:meth:`DaskOps.distribute`), which the scheduler can run again on another worker when the
one holding the chunk dies; a worker lost during a product is then a retried task, and a
scheduler that gives up (``KilledWorker``, a cancelled future) is a :class:`RuntimeError`.

Imported lazily (``semiscale.backends.DaskOps``): dask and distributed are optional
(``pip install "semiscale[distributed]"``).
"""

from __future__ import annotations

import math
import numbers
import uuid
from collections import OrderedDict

import numpy as np

from .._arrays import is_dask_array
from .._memory import MemoryBudgetError, block_rows, format_bytes, parse_memory_budget
from .._pairs import result_dtype
from ..graph.knn import resolve_method
from ..linalg import streaming
from ..linalg.ops import ArrayOps
from ._dask_errors import LOST, lost_worker_error
from ._dask_knn import new_points_plan
from ._dask_tasks import chunk_matmul, chunk_matrix, chunk_rmatmul

try:
    import dask
    import dask.array as da
    import distributed
except ImportError as error:  # pragma: no cover - the optional extra is missing
    raise ImportError(
        'DaskOps needs dask and distributed: pip install "semiscale[distributed]"'
    ) from error

__all__ = ["DaskOps", "GATHER_BYTES", "TARGET_CHUNK_BYTES"]

#: A dask operand this small (a few labeled rows, centers, a preconditioner's row sample) is
#: computed on the client and multiplied there: a round of tasks costs more than the product.
GATHER_BYTES = 4 << 20

#: Largest chunk of a NumPy ``X`` :meth:`DaskOps.distribute` makes when ``chunk_rows`` is None
#: (and at least two chunks per worker), so a lost chunk is cheap to recompute.
TARGET_CHUNK_BYTES = 64 << 20

#: s-side literals kept on the cluster between products (centers of the current fits).
_KEPT_LITERALS = 4


def _nbytes(result):
    """Bytes of a task's result: an array or a tuple of arrays."""
    if isinstance(result, tuple):
        return sum(_nbytes(part) for part in result)
    return np.asarray(result).nbytes


class DaskOps(ArrayOps):
    r"""Kernel products over a row-chunked ``dask.array`` on a ``distributed`` cluster.

    The kernel methods (:meth:`kernel_matmul`, :meth:`kernel_rmatmul`, :meth:`kernel_matrix`,
    :meth:`kernel_block_rows`) accept a dask ``A`` chunked by rows (one chunk along the
    columns); every other argument and every result is NumPy/SciPy, as for
    :class:`~semiscale.linalg.ops.ArrayOps`, whose implementation runs for NumPy operands and
    for every other method (the ``s × s`` factorizations and solves stay on the client).

    Bytes moved per PCG iteration.  A product ``H V`` of the Nyström LapRLS operator
    (:class:`~semiscale.linalg.operators.NystromLapRLSHessian`, ``V`` of shape ``(s, r)``, X in
    ``p`` chunks on ``w`` workers, 8-byte floats) makes two passes:

    .. math::

        u_c = K(X_c, C)\,V \;(\text{back: } 8 n r), \qquad
        v = λ_I L u + J u \;(\text{client, SciPy}), \qquad
        K(X_c, C)^\top v_c \;(\text{out: } 8 n r,\ \text{back: } 8 s r p),

    with ``V`` sent once (``8 s r``; dask forwards it to each of the ``w`` workers that runs a
    chunk), so one iteration moves

    .. math::

        B_{\text{iter}} = 16\,n r + 8\,s r\,(1 + p)
        \quad (+\,8 s r\,w \text{ between workers}),

    i.e. O(n + s·workers) with ``p`` a small multiple of ``w``.  The centers (``8 s d``) move
    once per fit.  On N machines each pass costs ``n s d / (N · flops)`` of kernel work against
    ``8 n r / bandwidth`` of transfer, so the kernel work dominates while ``s d · bandwidth >
    N · flops`` per byte; the client's SciPy product ``L u`` (``O(nnz(L) r)``) and the
    ``O(n r)`` transfers are the serial part.  :attr:`bytes_moved` counts what this object
    sends (``sent``: the literals ``V``, ``U_c``, the centers and a NumPy ``X``'s chunks) and
    receives (``received``: the gathered results) as the client sees them.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        None: ``distributed.get_client()`` at the first product (a clear error when no client
        is running).
    chunk_rows : int or None, default=None
        Rows per chunk when :meth:`distribute` chunks a NumPy ``X`` (None: at least two chunks
        per worker, each at most :data:`TARGET_CHUNK_BYTES`).

    Attributes
    ----------
    bytes_moved : dict
        ``{"sent": int, "received": int, "calls": int}`` since the last :meth:`reset_counters`.
    """

    name = "dask"
    #: Dask operands of at most this many bytes are computed on the client (:data:`GATHER_BYTES`).
    gather_bytes = GATHER_BYTES

    def __init__(self, client=None, chunk_rows=None):
        whole = isinstance(chunk_rows, numbers.Real) and float(chunk_rows).is_integer()
        if chunk_rows is not None and (isinstance(chunk_rows, bool) or not whole or chunk_rows < 1):
            raise ValueError(
                f"chunk_rows must be a positive integer (rows per chunk of a NumPy X) or None "
                f"(chosen from the workers), got {chunk_rows!r}"
            )
        self.client = client
        self.chunk_rows = None if chunk_rows is None else int(chunk_rows)
        self._literals = OrderedDict()
        self.reset_counters()

    def __repr__(self):
        return f"DaskOps(client={self.client!r}, chunk_rows={self.chunk_rows!r})"

    # ------------------------------------------------------------------ bookkeeping
    def reset_counters(self):
        """Set :attr:`bytes_moved` to zero."""
        self.bytes_moved = {"sent": 0, "received": 0, "calls": 0}

    def _client(self):
        if self.client is None:
            try:
                self.client = distributed.get_client()
            except ValueError:
                raise ValueError(
                    "DaskOps(client=None) found no running distributed.Client: start one "
                    "(distributed.Client(...)) before the fit or predict (a model fitted on a "
                    "dask X predicts with the graph rule from the X on its cluster), or pass "
                    "DaskOps(client=...)"
                ) from None
        return self.client

    def _n_workers(self):
        return max(1, len(self._client().scheduler_info(n_workers=-1)["workers"]))

    def _literal(self, M, *, keep=False):
        """``M`` as a graph literal (a task whose result is ``M``, recomputable by the scheduler).

        ``keep``: held on the cluster between products (the centers), sent once.
        """
        self.bytes_moved["sent"] += M.nbytes
        if not keep:
            return dask.delayed(M, name=f"semiscale-literal-{uuid.uuid4().hex}")
        token = dask.base.tokenize(M)
        if token in self._literals:
            self.bytes_moved["sent"] -= M.nbytes
            self._literals.move_to_end(token)
            return self._literals[token]
        future = self._client().compute(dask.delayed(M, name=f"semiscale-kept-{token}"))
        self._literals[token] = future
        while len(self._literals) > _KEPT_LITERALS:
            self._literals.popitem(last=False)
        return future

    def _gather(self, tasks, what):
        """Run ``tasks`` on the cluster; results in order.  Lost workers: a clear error."""
        client = self._client()
        self.bytes_moved["calls"] += 1
        try:
            futures = client.compute(tasks)
            results = client.gather(futures)
        except LOST as error:
            raise lost_worker_error(what, error) from error
        self.bytes_moved["received"] += sum(_nbytes(part) for part in results)
        return results

    # ------------------------------------------------------------------ where X lives
    def distribute(self, X):
        """``X`` as a row-chunked dask array on this object's cluster.

        A NumPy ``X`` becomes chunks created by tasks (one graph literal per chunk, never
        ``client.scatter``: scattered data cannot be recomputed after a worker dies), then
        persisted.  A dask ``X`` is rechunked to one chunk along the columns if needed and
        persisted when it fits in half of the workers' memory limits together; otherwise it
        stays lazy and each product recomputes its chunks (a ``memory_limit`` below ``X``'s
        size is honoured).

        Parameters
        ----------
        X : ndarray or dask array of shape (n, d)

        Returns
        -------
        dask array of shape (n, d)
        """
        client = self._client()
        if not is_dask_array(X):
            X = np.asarray(X)
            rows = self.chunk_rows or self._default_chunk_rows(X)
            parts = []
            for start in range(0, X.shape[0], rows):
                block = np.ascontiguousarray(X[start : start + rows])
                literal = self._literal(block)
                parts.append(da.from_delayed(literal, shape=block.shape, dtype=X.dtype))
            return client.persist(da.concatenate(parts, axis=0))
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        limits = [
            w.get("memory_limit") or 0
            for w in client.scheduler_info(n_workers=-1)["workers"].values()
        ]
        if limits and all(limits) and X.nbytes <= sum(limits) // 2:
            X = client.persist(X)
        return X

    def _default_chunk_rows(self, X):
        n, per_row = X.shape[0], max(X[:1].nbytes, 1)
        by_workers = math.ceil(n / (2 * self._n_workers()))
        return max(1, min(by_workers, TARGET_CHUNK_BYTES // per_row))

    def _local(self, M, name):
        """A small dask operand computed on the client; a large one refused."""
        if not is_dask_array(M):
            return M
        if M.nbytes > max(self.gather_bytes, GATHER_BYTES):
            raise TypeError(
                f"DaskOps keeps only the n-side operand A on the workers; {name} is a dask array "
                f"of {format_bytes(M.nbytes)}: pass it as a NumPy array ({name}.compute())"
            )
        self.bytes_moved["received"] += M.nbytes
        return M.compute()

    def _chunks_of(self, A):
        if len(A.chunks[1]) > 1:
            A = A.rechunk({1: -1})
        return A, list(A.to_delayed()[:, 0])

    def _check_chunk(self, kernel, A, B, r, budget, what):
        """Refuse a budget that cannot hold one chunk of ``A`` on its worker, before any task.

        A task holds its chunk ``X_c`` (``n_c × d``), its ``n_c × r`` operand and result, and
        streams kernel blocks of at least one row (the kernel's memory model) in the rest.
        """
        n_c = max(A.chunks[0])
        itemsize = result_dtype(A, B).itemsize
        probe = np.zeros((1, A.shape[1]), dtype=A.dtype)
        _, per_row, fixed = kernel._block_plan(probe, B)
        resident = n_c * A.shape[1] * A.dtype.itemsize + 2 * n_c * r * itemsize
        needed = resident + per_row + fixed
        if needed > budget:
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(budget)} (left for {what}) is smaller than one "
                f"chunk of X on its worker: the largest chunk has {n_c} rows "
                f"({format_bytes(resident)} with its {n_c}x{r} products) plus a kernel block row "
                f"({format_bytes(per_row + fixed)}) = {format_bytes(needed)}; use smaller "
                f"chunks (X.rechunk({{0: rows}}), or DaskOps(chunk_rows=...) for a NumPy X) or "
                f"a larger memory_budget"
            )

    # ------------------------------------------------------------------ kernel products
    def kernel_block_rows(self, kernel, A, B=None, memory_budget=None, *, max_rows=None):
        """Rows per block of ``K(A, B)`` (a dask ``A`` is sized from one row, nothing computed)."""
        if not is_dask_array(A):
            return super().kernel_block_rows(
                kernel, A, self._local(B, "B"), memory_budget, max_rows=max_rows
            )
        B = A[:0].compute() if B is None else self._local(B, "B")
        probe = np.zeros((1, A.shape[1]), dtype=A.dtype)
        # the NumPy layer's plan and check of one row, then the rows of all of A in the budget
        (_, per_row, fixed), _ = streaming.kernel_block_rows(kernel, probe, B, memory_budget)
        budget = parse_memory_budget(memory_budget)
        rows = block_rows(A.shape[0], per_row, budget - fixed, what="kernel block")
        return rows if max_rows is None else max(1, min(rows, int(max_rows)))

    def _dask_operands(self, A, B):
        """``A`` to map over (None when it is local or small enough to gather) and a local ``B``."""
        if B is None and is_dask_array(A):
            raise TypeError(
                "DaskOps multiplies a distributed A by a local B; K(A, A) of a dask A is not "
                "supported: pass B (the centers) as a NumPy array"
            )
        B = self._local(B, "B")
        if is_dask_array(A) and A.nbytes <= self.gather_bytes:
            return None, self._local(A, "A"), B
        return (A if is_dask_array(A) else None), A, B

    def kernel_matmul(self, kernel, A, B, V, memory_budget=None, n_jobs=1):
        r""":math:`K(A, B)\,V`: one task per row chunk of a dask ``A`` (see the class docstring).

        Parameters and result as :meth:`ArrayOps.kernel_matmul`; the budget also bounds each
        task's chunk on its worker (:class:`MemoryBudgetError` before any task when one chunk
        does not fit).
        """
        Ad, A, B = self._dask_operands(A, B)
        if Ad is None:
            return super().kernel_matmul(kernel, A, B, V, memory_budget, n_jobs)
        V = np.asarray(V)
        V2 = V.reshape(V.shape[0], -1)
        budget = parse_memory_budget(memory_budget)
        Ad, chunks = self._chunks_of(Ad)
        self._check_chunk(kernel, Ad, B, V2.shape[1], budget, "K(X, C) V")
        C, Vd = self._literal(B, keep=True), self._literal(V2)
        call = dask.delayed(chunk_matmul, pure=False)
        parts = self._gather([call(kernel, X_c, C, Vd, budget) for X_c in chunks], "K(X, C) V")
        out = np.concatenate(parts, axis=0)
        return out[:, 0] if V.ndim == 1 else out

    def kernel_rmatmul(self, kernel, A, B, U, memory_budget=None, n_jobs=1):
        r""":math:`K(A, B)^\top U`: each chunk's ``s × r`` answer, summed on the client in order.

        Parameters and result as :meth:`ArrayOps.kernel_rmatmul`.
        """
        Ad, A, B = self._dask_operands(A, B)
        if Ad is None:
            return super().kernel_rmatmul(kernel, A, B, U, memory_budget, n_jobs)
        U = np.asarray(U)
        if U.shape[0] != Ad.shape[0]:
            raise ValueError(
                f"U must have shape ({Ad.shape[0]},) or ({Ad.shape[0]}, r) to match len(A) = "
                f"{Ad.shape[0]}, got {U.shape}"
            )
        U2 = U.reshape(U.shape[0], -1)
        budget = parse_memory_budget(memory_budget)
        Ad, chunks = self._chunks_of(Ad)
        self._check_chunk(kernel, Ad, B, U2.shape[1], budget, "K(X, C)^T U")
        C = self._literal(B, keep=True)
        call = dask.delayed(chunk_rmatmul, pure=False)
        tasks, start = [], 0
        for X_c, rows in zip(chunks, Ad.chunks[0], strict=True):
            U_c = self._literal(np.ascontiguousarray(U2[start : start + rows]))
            tasks.append(call(kernel, X_c, C, U_c, budget))
            start += rows
        parts = self._gather(tasks, "K(X, C)^T U")
        out = parts[0].copy()
        for part in parts[1:]:  # in chunk order: the same sum whichever worker ends first
            out += part
        return out[:, 0] if U.ndim == 1 else out

    def kernel_matrix(self, kernel, A, B=None, memory_budget=None, n_jobs=1):
        """The dense ``K(A, B)`` on the client, its row chunks computed on the workers.

        The result must fit in ``memory_budget`` (:meth:`ArrayOps.kernel_matrix`'s rule); a
        worker computes its chunk's rows with the same budget.
        """
        Ad, A, B = self._dask_operands(A, B)
        if Ad is None:
            return super().kernel_matrix(kernel, A, B, memory_budget, n_jobs)
        dtype = result_dtype(Ad, B)
        needed = Ad.shape[0] * B.shape[0] * dtype.itemsize
        budget = parse_memory_budget(memory_budget)
        if needed >= budget:
            raise MemoryBudgetError(
                f"the {Ad.shape[0]}x{B.shape[0]} kernel matrix needs {format_bytes(needed)} but "
                f"memory_budget is {format_bytes(budget)}; raise memory_budget or use an "
                "iterative/Nyström solver"
            )
        Ad, chunks = self._chunks_of(Ad)
        self._check_chunk(kernel, Ad, B, B.shape[0], budget - needed, "K(X, C)")
        C = self._literal(B, keep=True)
        call = dask.delayed(chunk_matrix, pure=False)
        parts = self._gather([call(kernel, X_c, C, budget - needed) for X_c in chunks], "K(X, C)")
        return np.concatenate(parts, axis=0)

    def kernel_row_sums(self, kernel, X, memory_budget=None, n_jobs=1):
        """Row sums of ``K(X, X)``: local ``X`` only (a dask ``X`` is refused, not gathered)."""
        if is_dask_array(X):
            raise TypeError(
                "DaskOps.kernel_row_sums does not take a dask X (every pair of chunks would "
                "meet on one worker); use X.compute() or the NumPy backend"
            )
        return super().kernel_row_sums(kernel, X, memory_budget, n_jobs)

    def sq_distance_scan(
        self, X, sq, queries, reduce, *, row_bytes=0, memory_budget=None, n_jobs=1
    ):
        """The brute-force scan of a local ``X``; a dask ``X`` is refused, not gathered.

        The kNN graph of a dask ``X`` is searched chunk pair by chunk pair on the workers
        (:mod:`semiscale.backends._dask_knn`), not through this scan.
        """
        if is_dask_array(X):
            raise TypeError(
                "DaskOps.sq_distance_scan does not take a dask X; KNNGraph().fit(X) searches a "
                "dask X on the workers, or pass X.compute()"
            )
        super().sq_distance_scan(
            X, sq, queries, reduce, row_bytes=row_bytes, memory_budget=memory_budget, n_jobs=n_jobs
        )

    def kernel_blocks(self, kernel, A, B=None, memory_budget=None, *, out=None, max_rows=None):
        """Blocks of ``K(A, B)`` on the client (a small dask ``A`` is gathered first)."""
        return super().kernel_blocks(
            kernel,
            self._local(A, "A"),
            self._local(B, "B"),
            memory_budget,
            out=out,
            max_rows=max_rows,
        )

    # ------------------------------------------------------------------ neighbours of new points
    def kneighbors(self, X, Q, k):
        """The ``k`` nearest rows of the dask ``X`` to each row of a local ``Q`` (new points).

        The exact search of :func:`KNNGraph().fit(X) <semiscale.graph.knn.search>` on a dask
        ``X`` (:func:`~semiscale.backends._dask_knn.new_points_plan`), with ``Q`` as the
        queries (sent as one graph literal, counted in :attr:`bytes_moved`): one task per
        chunk ``X_c`` (the k-d tree for ``d <= KDTREE_MAX_DIM``, else blocked brute force;
        distances from explicit float64 differences), the ``p`` candidate tables merged top-k
        on the workers in a tree of fan-in ``MERGE_FAN_IN``.  ``Q`` goes out once (``8 m d``
        bytes) and only the merged table comes back (``16 m k``), whatever ``p``.

        Returns
        -------
        distances : ndarray of shape (m, k), increasing along each row
        indices : ndarray of int, shape (m, k)
        """
        Q = np.ascontiguousarray(self._local(Q, "Q"))
        X, _ = self._chunks_of(X)
        backend = resolve_method("exact", X.shape[0], X.shape[1])
        merged = new_points_plan(X, self._literal(Q), k, backend)
        return self._gather([merged], "the neighbour search of new points")[0]
