"""Thread parallelism over row chunks, with BLAS kept to one thread per worker.

NumPy's elementwise passes (the RBF block's norms and ``exp``) run on one core; BLAS runs on
all of them.  Splitting a product's rows into one contiguous chunk per core, each worker
computing its chunk with single-threaded BLAS, keeps every core busy in both (ufuncs and BLAS
release the GIL on large arrays).  Used by :mod:`semiscale.linalg.blocked`, the Nyström
estimators and the brute-force kNN search.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import joblib
import numpy as np

__all__ = ["blas_threads", "resolve_n_jobs", "row_chunks", "run_chunks"]

_controller = None


def resolve_n_jobs(n_jobs: int | None) -> int:
    """Number of threads for ``n_jobs``, read as scikit-learn reads it.

    ``None`` means 1, unless a joblib context sets a number
    (``with joblib.parallel_config(n_jobs=4):`` or ``joblib.parallel_backend(..., n_jobs=4)``);
    ``-1`` means all cores, ``-m`` all but ``m - 1`` (at least one); a positive int is taken as
    it is.  This is :func:`joblib.effective_n_jobs`, which counts the cores this process may use
    (CPU affinity and container quotas).

    Raises
    ------
    ValueError
        For 0, a bool or a non-integer.
    """
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0
    ):
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return max(1, int(joblib.effective_n_jobs(None if n_jobs is None else int(n_jobs))))


def row_chunks(n_rows: int, n_chunks: int) -> list[slice]:
    """``n_chunks`` contiguous slices of ``range(n_rows)``, sizes differing by at most one."""
    n_chunks = max(1, min(int(n_chunks), n_rows))
    bounds = np.linspace(0, n_rows, n_chunks + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def run_chunks(work, chunks) -> list:
    """``[work(c) for c in chunks]``, one thread per chunk with single-threaded BLAS.

    A single chunk runs in the calling thread with BLAS untouched.  The first exception raised
    by a worker is re-raised here (after every worker has finished).
    """
    chunks = list(chunks)
    if len(chunks) <= 1:
        return [work(c) for c in chunks]
    with blas_threads(1), ThreadPoolExecutor(len(chunks)) as pool:
        futures = [pool.submit(work, c) for c in chunks]
        return [f.result() for f in futures]


def blas_threads(limit: int | None):
    """Context manager: BLAS limited to ``limit`` threads inside (None: left as it is).

    Uses one cached ``threadpoolctl.ThreadpoolController`` (building one inspects every loaded
    library, ~0.3 ms; entering its limit then costs ~0.02 ms).
    """
    global _controller
    if limit is None:
        return contextlib.nullcontext()
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller.limit(limits=int(limit), user_api="blas")
