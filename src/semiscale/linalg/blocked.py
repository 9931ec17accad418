"""Blocked kernel products under a memory budget: the one place heavy kernel work happens.

``K(A, B)`` is never formed: its rows are produced in blocks by :meth:`Kernel.blocks`, each block
multiplied into the result and released before the next one is computed.  A GPU or distributed
backend replaces this module, not the estimators.

Memory: the budget covers the kernel blocks and every temporary of the product (a cast copy of
``V``/``U``, the accumulation buffers of :func:`kernel_rmatmul`); only the result itself, of shape
(len(A), r) or (len(B), r), is outside it.

Threads: with ``n_jobs`` > 1 the rows of ``A`` are split into one contiguous chunk per thread,
each streamed with single-threaded BLAS (:mod:`semiscale._parallel`), so that the kernel
blocks' elementwise passes, which NumPy runs on one core, use every core.  Only products with
``B`` given and at least :data:`PARALLEL_MIN_ENTRIES` kernel entries are split; the budget is
shared between the threads.
"""

from __future__ import annotations

import numpy as np

from semiscale._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from semiscale._pairs import _all_finite, result_dtype
from semiscale._parallel import resolve_n_jobs, row_chunks, run_chunks

__all__ = ["STREAM_BLOCK_BYTES", "kernel_matmul", "kernel_matrix", "kernel_rmatmul"]

#: Target size of one kernel block in the streamed products (``kernel_matmul``/``rmatmul``).
#: The budget only bounds blocks from above: a block this small keeps the RBF block's
#: elementwise passes (scale, add norms, exp) in cache: ``benchmarks/block_size.py`` measures
#: the product against the cap (``benchmarks/results/block_size.md``).
STREAM_BLOCK_BYTES = 8 << 20

#: Smallest kernel (in entries) whose product is split between threads: two stream blocks of
#: float64, below which starting threads costs more than it saves.
PARALLEL_MIN_ENTRIES = 2 * (STREAM_BLOCK_BYTES // 8)


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


def kernel_matmul(kernel, A, B, V, memory_budget=None, n_jobs=1) -> np.ndarray:
    r"""Compute :math:`K(A, B)\,V` without forming :math:`K(A, B)`.

    Rows of the result are computed block by block: ``out[rows] = K(A[rows], B) @ V``, each
    kernel block written straight into the result by BLAS.

    Parameters
    ----------
    kernel : semiscale.kernels.Kernel
        A resolved kernel.
    A : ndarray or sparse matrix of shape (n_a, n_features)
    B : ndarray, sparse matrix of shape (n_b, n_features), or None
        None means ``A`` (exact zero self-distances).
    V : ndarray of shape (n_b,) or (n_b, r)
    memory_budget : int, str or None
        Bytes for the kernel blocks and temporaries (see ``semiscale._memory``).
    n_jobs : int or None, default=1
        Threads (module docstring); None = all cores.

    Returns
    -------
    ndarray of shape (n_a,) or (n_a, r)
        float32 only when A and B are both float32 (the kernel's rule), else float64.

    Raises
    ------
    MemoryBudgetError
        Before allocating a block, when not one row of it fits.
    """
    dtype = result_dtype(A, B)
    V2, ndim, reserved = _operand(V, _n_rows(A if B is None else B), "V", "B", dtype)
    budget = _remaining_budget(memory_budget, reserved)
    chunks = _chunks(A, B, n_jobs, budget)
    budget //= len(chunks)
    out = np.empty((_n_rows(A), V2.shape[1]), dtype=dtype)

    def work(chunk):
        A_c = A if len(chunks) == 1 else A[chunk]
        out_c = out[chunk]
        blocks = kernel.blocks(A_c, B, memory_budget=budget, max_rows=_stream_rows(B, A, dtype))
        for rows, K in blocks:
            np.matmul(K, V2, out=out_c[rows])
            del K  # release before the next block is computed

    run_chunks(work, chunks)
    return out[:, 0] if ndim == 1 else out


def kernel_rmatmul(kernel, A, B, U, memory_budget=None, n_jobs=1) -> np.ndarray:
    r"""Compute :math:`K(A, B)^\top U` without forming :math:`K(A, B)`.

    The result is accumulated over row blocks of ``A``:
    :math:`\sum_{\text{blocks}} K(A_{rows}, B)^\top U_{rows}`.

    Parameters
    ----------
    kernel : semiscale.kernels.Kernel
        A resolved kernel.
    A : ndarray or sparse matrix of shape (n_a, n_features)
    B : ndarray, sparse matrix of shape (n_b, n_features), or None
        None means ``A``.
    U : ndarray of shape (n_a,) or (n_a, r)
    memory_budget : int, str or None
        Bytes for the kernel blocks, (n_b, r) accumulation buffers (two per thread) and
        temporaries.
    n_jobs : int or None, default=1
        Threads (module docstring); each sums its own chunk, the chunks' sums are added in
        order, so the result is reproducible for a given number of threads.

    Returns
    -------
    ndarray of shape (n_b,) or (n_b, r)
        float32 only when A and B are both float32, else float64.
    """
    dtype = result_dtype(A, B)
    n_b = _n_rows(A if B is None else B)
    U2, ndim, copied = _operand(U, _n_rows(A), "U", "A", dtype)
    r = U2.shape[1]
    acc_bytes = 2 * n_b * r * dtype.itemsize  # accumulator and buffer of one chunk
    budget = _remaining_budget(memory_budget, acc_bytes // 2 + copied)
    chunks = _chunks(A, B, n_jobs, budget - resolve_n_jobs(n_jobs) * acc_bytes)
    budget = (budget - (len(chunks) - 1) * acc_bytes) // len(chunks)

    def work(chunk):
        A_c, U_c = (A, U2) if len(chunks) == 1 else (A[chunk], U2[chunk])
        acc = np.zeros((n_b, r), dtype=dtype)
        buf = np.empty_like(acc)
        blocks = kernel.blocks(A_c, B, memory_budget=budget, max_rows=_stream_rows(B, A, dtype))
        for rows, K in blocks:
            np.matmul(K.T, U_c[rows], out=buf)
            del K
            acc += buf
        return acc

    sums = run_chunks(work, chunks)
    out = sums[0]
    for part in sums[1:]:
        out += part
    return out[:, 0] if ndim == 1 else out


def kernel_matrix(kernel, A, B=None, memory_budget=None, n_jobs=1) -> np.ndarray:
    """The dense kernel matrix K(A, B), filled block by block so that temporaries stay bounded.

    Use it where an algorithm genuinely needs the whole matrix (a dense factorization, a cached
    ``K_ns``); the result itself must fit in ``memory_budget``, with room left for one block of
    temporaries (one per thread with ``n_jobs`` > 1, module docstring).  Blocks are written in
    place and capped at ``STREAM_BLOCK_BYTES``.

    Raises
    ------
    MemoryBudgetError
        Before allocating, when the matrix does not fit in the budget.
    """
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

    def work(chunk):
        A_c = A if len(chunks) == 1 else A[chunk]
        blocks = kernel.blocks(
            A_c, B, memory_budget=block_budget, out=out[chunk], max_rows=_stream_rows(B, A, dtype)
        )
        for _, K in blocks:
            del K  # a view of out (kernels that cannot compute in place copy into it)

    run_chunks(work, chunks)
    return out
