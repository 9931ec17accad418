"""The Dask test files' cluster and worker-loss harness (tests/test_backend_dask.py,
tests/test_graph_dask.py).

:func:`local_client` starts the ``LocalCluster`` of two worker processes on 127.0.0.1 that each
file holds for its module (CI starts nothing else); :func:`killing_a_worker` SIGKILLs one worker
process from a thread while a fit runs, and waits for its nanny to restart it afterwards.
dask and distributed are imported inside the functions: the test files skip, saying why,
where they are missing, and this module imports without them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

#: Workers of the test clusters: two processes, so that a chunk's task can move to the other
#: one when its worker dies, and memory limits are enforced (only worker processes have them).
N_WORKERS = 2


def local_client(memory_limit=None):
    """Yield a ``distributed.Client`` of a fresh ``LocalCluster``; close both after.

    Two worker processes of one thread each on 127.0.0.1, no dashboard.  With
    ``memory_limit``, each worker's limit, and the workers neither spill nor pause (the
    nannies hand them this configuration): a worker whose memory passes 95 % of its limit is
    terminated, distributed's default.  Without it, distributed's default limit.  Use it as a
    module-scoped fixture's body: ``yield from local_client(...)``.
    """
    import dask
    import distributed

    settings, limit = {}, {}
    if memory_limit is not None:
        settings = {
            "distributed.worker.memory.spill": False,
            "distributed.worker.memory.pause": False,
        }
        limit = {"memory_limit": memory_limit}
    with dask.config.set(settings):
        cluster = distributed.LocalCluster(
            n_workers=N_WORKERS,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            **limit,
        )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def tasks_running(client, name: str) -> bool:
    """Whether a task whose key is named ``name`` (dask's ``key_split``) runs on a worker now."""
    from dask.utils import key_split

    processing = client.processing()
    return any(key_split(key) == name for keys in processing.values() for key in keys)


@contextlib.contextmanager
def killing_a_worker(client, when, timeout: float = 60.0):
    """SIGKILL one worker process of ``client``'s cluster once ``when()`` is true.

    A thread polls ``when`` (every 2 ms, at most ``timeout`` seconds, then kills anyway) while
    the ``with`` block runs; the block gets a ``threading.Event`` set once the worker was
    killed.  On exit the thread is joined and the cluster waits (60 s at most) for the nanny
    to restart the worker, so the next test has :data:`N_WORKERS` workers again.
    """
    client.wait_for_workers(N_WORKERS, timeout=60)
    victim = list(client.run(os.getpid).values())[0]
    killed = threading.Event()

    def kill():
        deadline = time.monotonic() + timeout
        while not when() and time.monotonic() < deadline:
            time.sleep(0.002)
        os.kill(victim, signal.SIGKILL)
        killed.set()

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        yield killed
    finally:
        killer.join()
        client.wait_for_workers(N_WORKERS, timeout=60)
