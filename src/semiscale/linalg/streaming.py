r"""Row-blocked streams of kernel and distance blocks: the NumPy implementation behind
:class:`semiscale.linalg.ops.ArrayOps`.

Nothing here is called directly by the rest of the library: :class:`~semiscale.linalg.ops.ArrayOps`
is the interface, these functions are how its NumPy implementation streams ``K(A, B)`` (and the
squared distances of a kNN search) in row blocks, so that a block is produced, multiplied into
its result and released before the next one is computed.

Memory: the budget covers the blocks and every temporary of the product (a cast copy of
``V``/``U``, the accumulation buffers of :func:`kernel_rmatmul`); only the result itself, of shape
(len(A), r) or (len(B), r), is outside it.  The budget bounds a block from above; streamed
products also cap blocks at :data:`STREAM_BLOCK_BYTES` so that a block's elementwise passes run
in cache.

Threads: with ``n_jobs`` > 1 the rows of ``A`` are split into one contiguous chunk per thread,
each streamed with single-threaded BLAS (:mod:`semiscale._parallel`), so that the kernel blocks'
elementwise passes, which NumPy runs on one core, use every core.  Only products with ``B`` given
and at least :data:`PARALLEL_MIN_ENTRIES` kernel entries are split; the budget is shared between
the threads.  The distance scan of the kNN search instead hands many small blocks to a pool of
``n_jobs`` threads (its per-block selection work is uneven).

Interruption: the calling thread waits for the workers in slices of :data:`WAIT_SECONDS`, so
Ctrl-C (``KeyboardInterrupt``) reaches it at once; it then tells the workers to stop, cancels
the blocks not started and waits only for the blocks being computed (each is small: kernel
blocks at most :data:`STREAM_BLOCK_BYTES`, distance blocks at most
:data:`DISTANCE_BLOCK_MULTIPLY_ADDS`) before the exception goes on.  Before, a pool's
``shutdown`` waited for every chunk or queued block: 5–6 s after Ctrl-C (issue 11).
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np
import scipy.sparse as sp

from .._memory import MemoryBudgetError, block_rows, format_bytes, parse_memory_budget, row_slices
from .._pairs import _IDX_BYTES, _all_finite, _check_input, result_dtype
from .._parallel import blas_threads, resolve_n_jobs, row_chunks

__all__ = [
    "DISTANCE_BLOCK_ROWS",
    "PARALLEL_MIN_ENTRIES",
    "DENSE_TILE_DENSITY",
    "STREAM_BLOCK_BYTES",
    "kernel_block_rows",
    "kernel_blocks",
    "kernel_matmul",
    "kernel_matrix",
    "kernel_rmatmul",
    "kernel_row_sums",
    "sq_distance_scan",
]

#: Target size of one kernel block in the streamed products (``kernel_matmul``/``rmatmul``).
#: The budget only bounds blocks from above: a block this small keeps the RBF block's
#: elementwise passes (scale, add norms, exp) in cache: the block_size study measures
#: the product against the cap (``benchmarks/results/block_size/``).
STREAM_BLOCK_BYTES = 8 << 20

#: Smallest kernel (in entries) whose product is split between threads: two stream blocks of
#: float64, below which starting threads costs more than it saves.
PARALLEL_MIN_ENTRIES = 2 * (STREAM_BLOCK_BYTES // 8)

#: Row cap of a distance-scan block (keeps blocks cache friendly and threads balanced).
DISTANCE_BLOCK_ROWS = 512

#: Cap on the multiply-adds of one distance-scan block (rows · n · d): about 0.1–0.5 s of one
#: core, so that Ctrl-C waits for no longer than that.  It binds only past
#: ``n · d ≈ 2·10⁶`` (n = 40,000 points of 50 features), beyond "auto"'s brute-force range.
DISTANCE_BLOCK_MULTIPLY_ADDS = 1 << 30

#: Seconds between two checks for Ctrl-C while the calling thread waits for its workers.
WAIT_SECONDS = 0.05


class _Stopped(Exception):
    """Raised in a worker told to stop (the caller was interrupted, or another worker failed)."""


def _run_parallel(work, items, workers: int) -> list:
    """``[work(item, stop) for item in items]`` on ``workers`` threads, interruptible.

    ``stop`` is a :class:`threading.Event` that ``work`` checks between its blocks (raising
    :class:`_Stopped` when set).  The calling thread waits in slices of :data:`WAIT_SECONDS`, so
    a ``KeyboardInterrupt`` is raised here at once; then, and when a worker raises, ``stop`` is
    set, the items not started are cancelled and only the running blocks are waited for.  The
    first worker exception is re-raised (results in ``items``' order otherwise).
    """
    stop = threading.Event()
    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(work, item, stop) for item in items]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=WAIT_SECONDS, return_when=FIRST_EXCEPTION)
            failed = [f for f in done if f.exception() is not None]
            if failed:
                raise failed[0].exception()
        return [f.result() for f in futures]
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _check_stop(stop) -> None:
    if stop is not None and stop.is_set():
        raise _Stopped


def _run_chunks(work, chunks) -> list:
    """``[work(c, stop) for c in chunks]``: one thread per chunk with single-threaded BLAS.

    A single chunk runs in the calling thread (``stop`` None) with BLAS untouched.
    """
    chunks = list(chunks)
    if len(chunks) <= 1:
        return [work(c, None) for c in chunks]
    with blas_threads(1):
        return _run_parallel(work, chunks, len(chunks))


# ------------------------------------------------------------------------------ kernel blocks
def kernel_block_rows(kernel, A, B=None, memory_budget=None, *, max_rows=None):
    """``(plan, rows)``: the kernel's block plan for ``K(A, B)`` and the rows per block.

    ``plan = (pair, row_bytes, fixed_bytes)`` comes from the kernel's memory model
    (:meth:`semiscale.kernels.Kernel._block_plan`); the rows are what fits in ``memory_budget``
    after the fixed (B-side) bytes, capped at ``max_rows``.

    Raises
    ------
    MemoryBudgetError
        When not one row fits, before anything is allocated.
    """
    pair, per_row, fixed = plan = kernel._block_plan(A, B)
    budget = parse_memory_budget(memory_budget)
    if budget - fixed < per_row:
        raise MemoryBudgetError(
            f"memory_budget={format_bytes(budget)} is too small for one kernel block row "
            f"({format_bytes(per_row)} per row plus {format_bytes(fixed)} for B-side "
            f"operands); raise memory_budget to at least {per_row + fixed} bytes"
        )
    rows = block_rows(pair.A.shape[0], per_row, budget - fixed, what="kernel block")
    if max_rows is not None:
        rows = max(1, min(rows, int(max_rows)))
    return plan, rows


def kernel_blocks(kernel, A, B=None, memory_budget=None, *, out=None, max_rows=None):
    """Iterator over ``(rows, K[rows, :])`` (see :meth:`ArrayOps.kernel_blocks`).

    Sizing and the check of ``out`` happen now; the blocks are computed as the iterator runs.
    """
    (pair, _, _), rows = kernel_block_rows(kernel, A, B, memory_budget, max_rows=max_rows)
    if out is not None:
        shape = (pair.A.shape[0], pair.B.shape[0])
        if out.shape != shape or out.dtype != pair.dtype or not out.flags.c_contiguous:
            raise ValueError(
                f"out must be a C-contiguous {pair.dtype} array of shape {shape}, got "
                f"{out.dtype} {out.shape}"
            )
    return kernel._iter_blocks(pair, rows, out)


def _stream_rows(B, A, dtype) -> int:
    n_b = _n_rows(A if B is None else B)
    return max(1, STREAM_BLOCK_BYTES // max(n_b * dtype.itemsize, 1))


def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def _operand(M, n_rows: int, name: str, rows_of: str, dtype):
    """Validate ``M`` as (n_rows,) or (n_rows, r).

    Returns it as 2-D of ``dtype``, its ndim, and the bytes of the cast copy made (0 if none).
    """
    M = np.asarray(M)
    if M.ndim not in (1, 2) or M.shape[0] != n_rows:
        raise ValueError(
            f"{name} must have shape ({n_rows},) or ({n_rows}, r) to match len({rows_of}) = "
            f"{n_rows}, got {M.shape}"
        )
    if M.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {M.dtype}")
    if not _all_finite(M):
        raise ValueError(f"{name} contains NaN or infinite values")
    ndim = M.ndim
    M = M if ndim == 2 else M[:, None]
    if M.dtype == dtype:
        return M, ndim, 0
    M = M.astype(dtype)
    return M, ndim, M.nbytes


def _chunks(A, B, n_jobs, block_budget: int) -> list[slice]:
    """Row chunks of ``A``, one per thread (a single chunk when the product is not split).

    Not split when ``B`` is None (one operand: exact zero self-distances need the whole
    ``A``), when the kernel is small, or when ``block_budget`` cannot give every thread two
    stream blocks (a budget that fits the product sequentially is never an error).
    """
    n_a = _n_rows(A)
    workers = resolve_n_jobs(n_jobs)
    if (
        B is None
        or workers == 1
        or n_a * _n_rows(B) < PARALLEL_MIN_ENTRIES
        or block_budget < 2 * workers * STREAM_BLOCK_BYTES
    ):
        return [slice(0, n_a)]
    return row_chunks(n_a, workers)


def _remaining_budget(memory_budget, reserved: int) -> int:
    budget = parse_memory_budget(memory_budget)
    if budget <= reserved:
        raise MemoryBudgetError(
            f"memory_budget={format_bytes(budget)} is used up by the product's own buffers "
            f"({format_bytes(reserved)}) before any kernel block; raise memory_budget"
        )
    return budget - reserved


def product_order(n_rows: int, n_columns: int) -> str:
    """Memory order of a product's ``n_rows × n_columns`` result: "F" when it is skinny.

    OpenBLAS's GEMM writes a result of a few columns 1.2–2× faster in Fortran order than in C
    order, the operands' own order mattering little (ad hoc, a 200,000 × 2,000 float64 ``K`` by
    2,000 × r, r = 2 … 200: 0.40–1.69 s in C order, 0.19–1.07 s in Fortran order; ``Kᵀ U``
    likewise; ``benchmarks/results/kernel_floor/`` measures the effect on ``H·V``).  One column
    or a wide result keeps C order.
    """
    return "F" if 1 < n_columns <= n_rows else "C"


def kernel_matmul(kernel, A, B, V, memory_budget=None, n_jobs=1) -> np.ndarray:
    """``K(A, B) V`` by row blocks, each written straight into the result by BLAS."""
    dtype = result_dtype(A, B)
    V2, ndim, reserved = _operand(V, _n_rows(A if B is None else B), "V", "B", dtype)
    budget = _remaining_budget(memory_budget, reserved)
    chunks = _chunks(A, B, n_jobs, budget)
    budget //= len(chunks)
    shape = (_n_rows(A), V2.shape[1])
    out = np.empty(shape, dtype=dtype, order=product_order(*shape))

    def work(chunk, stop):
        A_c = A if len(chunks) == 1 else A[chunk]
        out_c = out[chunk]
        blocks = kernel_blocks(kernel, A_c, B, budget, max_rows=_stream_rows(B, A, dtype))
        for rows, K in blocks:
            np.matmul(K, V2, out=out_c[rows])
            del K  # release before the next block is computed
            _check_stop(stop)

    _run_chunks(work, chunks)
    return out[:, 0] if ndim == 1 else out


def kernel_rmatmul(kernel, A, B, U, memory_budget=None, n_jobs=1) -> np.ndarray:
    """``K(A, B)ᵀ U`` summed over row blocks; the threads' sums are added in chunk order."""
    dtype = result_dtype(A, B)
    n_b = _n_rows(A if B is None else B)
    U2, ndim, copied = _operand(U, _n_rows(A), "U", "A", dtype)
    r = U2.shape[1]
    acc_bytes = 2 * n_b * r * dtype.itemsize  # accumulator and buffer of one chunk
    budget = _remaining_budget(memory_budget, acc_bytes // 2 + copied)
    chunks = _chunks(A, B, n_jobs, budget - resolve_n_jobs(n_jobs) * acc_bytes)
    budget = (budget - (len(chunks) - 1) * acc_bytes) // len(chunks)

    def work(chunk, stop):
        A_c, U_c = (A, U2) if len(chunks) == 1 else (A[chunk], U2[chunk])
        acc = np.zeros((n_b, r), dtype=dtype, order=product_order(n_b, r))
        buf = np.empty_like(acc)
        blocks = kernel_blocks(kernel, A_c, B, budget, max_rows=_stream_rows(B, A, dtype))
        for rows, K in blocks:
            np.matmul(K.T, U_c[rows], out=buf)
            del K
            acc += buf
            _check_stop(stop)
        return acc

    sums = _run_chunks(work, chunks)
    out = sums[0]
    for part in sums[1:]:
        out += part
    return out[:, 0] if ndim == 1 else out


def kernel_matrix(kernel, A, B=None, memory_budget=None, n_jobs=1) -> np.ndarray:
    """The dense ``K(A, B)``, its blocks computed in place (capped at ``STREAM_BLOCK_BYTES``)."""
    dtype = result_dtype(A, B)
    n_a, n_b = _n_rows(A), _n_rows(A if B is None else B)
    needed = n_a * n_b * dtype.itemsize
    budget = parse_memory_budget(memory_budget)
    if needed >= budget:
        raise MemoryBudgetError(
            f"the {n_a}x{n_b} kernel matrix needs {format_bytes(needed)} but memory_budget is "
            f"{format_bytes(budget)}; raise memory_budget or use an iterative/Nyström solver"
        )
    out = np.empty((n_a, n_b), dtype=dtype)
    chunks = _chunks(A, B, n_jobs, budget - needed)
    block_budget = (budget - needed) // len(chunks)

    def work(chunk, stop):
        A_c = A if len(chunks) == 1 else A[chunk]
        blocks = kernel_blocks(
            kernel, A_c, B, block_budget, out=out[chunk], max_rows=_stream_rows(B, A, dtype)
        )
        for _, K in blocks:
            del K  # a view of out (kernels that cannot compute in place copy into it)
            _check_stop(stop)

    _run_chunks(work, chunks)
    return out


#: Sparse ``X`` with at least this fraction of non-zeros is densified tile by tile in
#: :func:`kernel_row_sums` (when a dense tile is at most a stream block), so that a tile pair is
#: one dense GEMM instead of a CSR × dense product (``d`` multiply-adds per entry at BLAS speed
#: against the non-zeros of a row at SciPy's loop speed): a 1,024² RBF tile took 7.6–7.8 ms
#: dense and 10.8–11.9 ms sparse on a9a (123 features, 11 % non-zeros), 16.1–16.6 ms dense and
#: 10.0–10.4 ms sparse on w8a (300 features, 3.9 %) (one thread, two runs of 8 tiles, under the
#: timing lock at load 1.3: ``python /tmp/w/HP/tile.py``).
DENSE_TILE_DENSITY = 0.1


def _tile_side(n: int, dtype) -> int:
    """Side of the square tiles of :func:`kernel_row_sums`: one tile is one stream block."""
    return max(1, min(n, math.isqrt(STREAM_BLOCK_BYTES // np.dtype(dtype).itemsize)))


def _dense_tiles(X, side: int) -> bool:
    """Whether :func:`kernel_row_sums` densifies the tiles of sparse ``X``."""
    n, d = X.shape
    dense_bytes = side * d * X.dtype.itemsize
    return X.nnz >= DENSE_TILE_DENSITY * n * d and dense_bytes <= STREAM_BLOCK_BYTES


def _tile_copy_bytes(X, side: int, dense: bool) -> int:
    """Bytes of the largest copy of ``X[i : i + side]`` (dense rows are viewed, not copied)."""
    if not sp.issparse(X):
        return 0
    starts = np.arange(0, X.shape[0], side)
    stops = np.minimum(starts + side, X.shape[0])
    nnz = int((X.indptr[stops] - X.indptr[starts]).max(initial=0))
    size = nnz * (X.dtype.itemsize + _IDX_BYTES) + (side + 1) * _IDX_BYTES
    return size + (side * X.shape[1] * X.dtype.itemsize if dense else 0)


def kernel_row_sums(kernel, X, memory_budget=None, n_jobs=1) -> np.ndarray:
    r"""``K(X, X)·1`` from the tiles on and above the diagonal (:meth:`ArrayOps.kernel_row_sums`).

    The rows of ``X`` are cut into ``m`` tiles of :func:`_tile_side` rows; tile ``(I, J)``,
    ``I < J``, adds its row sums to the sums of ``I`` and its column sums to those of ``J``
    (:math:`K(X_J, X_I) = K(X_I, X_J)^\top`); a diagonal tile ``(J, J)`` is computed with
    ``B = None`` (exact zero self-distances) and adds its row sums only.  The ``m(m + 1)/2``
    tiles are split into one contiguous run per thread, each summed into its own ``n``-vector
    (float64), and the vectors are added in order: reproducible for a given ``n_jobs``.
    Sparse ``X`` of density at least :data:`DENSE_TILE_DENSITY` is densified a tile at a time.
    """
    X = _check_input(X, "X")
    n = X.shape[0]
    dtype = result_dtype(X)
    side = _tile_side(n, dtype)
    starts = range(0, n, side)
    tiles = [(i, j) for j in starts for i in starts if i <= j]
    dense = sp.issparse(X) and _dense_tiles(X, side)
    # per thread: its sums (one of them is the result), the tiles' row and column sums, and the
    # copies of the two sparse tiles it holds (and their dense copies)
    per_worker = 8 * n + 2 * side * dtype.itemsize + 2 * _tile_copy_bytes(X, side, dense)
    budget = _remaining_budget(memory_budget, per_worker - 8 * n)
    workers = resolve_n_jobs(n_jobs)
    if (
        workers == 1
        or len(tiles) < 2
        or n * n < 2 * PARALLEL_MIN_ENTRIES
        or budget - (workers - 1) * per_worker < 2 * workers * STREAM_BLOCK_BYTES
    ):
        workers = 1
    groups = [tiles[g] for g in row_chunks(len(tiles), workers)]
    budget = (budget - (len(groups) - 1) * per_worker) // len(groups)
    max_rows = max(1, STREAM_BLOCK_BYTES // (side * dtype.itemsize))

    def tile(rows):
        return X[rows].toarray() if dense else X[rows]

    def work(group, stop):
        sums = np.zeros(n)
        for i, j in group:
            rows_i, rows_j = slice(i, min(i + side, n)), slice(j, min(j + side, n))
            A, B = tile(rows_i), None if i == j else tile(rows_j)
            for rows, K in kernel_blocks(kernel, A, B, budget, max_rows=max_rows):
                sums[i + rows.start : i + rows.stop] += K.sum(axis=1)
                if B is not None:
                    sums[rows_j] += K.sum(axis=0)
                del K  # release before the next block is computed
                _check_stop(stop)
        return sums

    if len(groups) == 1:
        return work(groups[0], None)
    with blas_threads(1):
        parts = _run_parallel(work, groups, len(groups))
    out = parts[0]
    for part in parts[1:]:
        out += part
    return out


# ------------------------------------------------------------------------------ distance scans
def sq_distance_scan(
    X, sq, queries, reduce, *, row_bytes=0, memory_budget=None, n_jobs=1, max_rows=None
):
    """Hand ``G = ‖x_j‖² − 2 X[q] Xᵀ`` (own column ``+∞``) to ``reduce`` block by block.

    See :meth:`ArrayOps.sq_distance_scan`.  ``X`` is dense or CSR in the product's dtype,
    ``sq`` the squared norms in that dtype.
    """
    n, d = X.shape
    queries = np.asarray(queries, dtype=np.intp)
    m = queries.size
    sparse = sp.issparse(X)
    dtype = X.dtype
    right = X.T.tocsr() if sparse else X.T
    workers = max(1, min(resolve_n_jobs(n_jobs), m))
    per_row = n * dtype.itemsize + int(row_bytes) + (d * dtype.itemsize if sparse else 0)
    budget = parse_memory_budget(memory_budget)
    rows = block_rows(m, per_row * workers, budget, what="brute-force kNN block")
    cap = DISTANCE_BLOCK_ROWS if max_rows is None else int(max_rows)
    cap = min(cap, max(1, DISTANCE_BLOCK_MULTIPLY_ADDS // max(n * d, 1)))
    rows = min(rows, cap, max(1, -(-m // (2 * workers))))

    def block(s, stop=None):
        _check_stop(stop)
        q = queries[s]
        # −2 is a power of two: (−2b)·x rounds exactly like −2(b·x)
        G = ((X[q] * -2.0) @ right).toarray() if sparse else (X[q] * dtype.type(-2.0)) @ right
        G += sq
        G[np.arange(q.size), q] = np.inf
        reduce(s, G)

    slices = list(row_slices(m, rows))
    with blas_threads(1 if workers > 1 else None):
        if workers == 1:
            for s in slices:
                block(s)
        else:
            _run_parallel(block, slices, workers)
