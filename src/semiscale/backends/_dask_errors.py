"""A Dask scheduler that gave up on a task: which exceptions say so, and the error raised instead.

Shared by :class:`~semiscale.backends._dask.DaskOps` (the kernel products) and the distributed
kNN search (:mod:`semiscale.backends._dask_knn`), which both run tasks whose chunks are created
by tasks: a worker lost mid-run is a task the scheduler runs again elsewhere; only when it gives
up (a task's workers died ``distributed.scheduler.allowed-failures`` times, a result cancelled, a
connection closed) does the caller see one of :data:`LOST`, and it raises
:func:`lost_worker_error` instead: never a partial result.
"""

from __future__ import annotations

__all__ = ["LOST", "lost_worker_error"]

try:
    import distributed

    #: The exceptions of a scheduler that gave up on a task or lost its results.
    LOST = (
        distributed.scheduler.KilledWorker,
        distributed.client.FutureCancelledError,
        distributed.comm.core.CommClosedError,
    )
except ImportError:  # pragma: no cover - dask without distributed: local schedulers lose nothing
    LOST = ()


def lost_worker_error(what: str, error: BaseException) -> RuntimeError:
    """The :class:`RuntimeError` for a scheduler that gave up on a task during ``what``.

    Raise it ``from error``.  It names the cause and the fixes: run again (the chunks are
    recomputable), check the workers' memory limits and logs, or allow more failures per task.
    """
    return RuntimeError(
        f"a Dask worker was lost during {what} and the scheduler gave up on its task "
        f"({type(error).__name__}: {error}); nothing was returned. Run it again (X is "
        "recomputable: its chunks are created by tasks), check the workers' memory limits and "
        "logs, or raise distributed's allowed-failures (distributed.scheduler.allowed-failures)"
    )
