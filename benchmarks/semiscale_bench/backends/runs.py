"""One backend's session (a Dask cluster, a torch device, or plain NumPy) and one measured fit.

A :class:`Session` holds what a backend needs across its repeats (the ``LocalCluster`` and its
client), makes a fresh ops object per fit (so that a repeat resends what the first one sent),
and measures a fit: its seconds, the client's peak resident memory (``VmHWM`` after resetting
it with ``/proc/self/clear_refs``), each Dask worker's (the same, run on the worker with
``client.run``), the bytes the Dask backend moved, and the seconds and bytes of every pass of a
kernel product over all of ``X`` (:func:`pass_logging_dask_ops`).
"""

from __future__ import annotations

import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from semiscale._memory import proc_field_bytes
from semiscale._progress import silenced
from semiscale.kernels import RBF
from semiscale.models import NystromLapRLSRegressor

__all__ = ["DaskPool", "Session", "Unavailable", "open_session", "peak_rss", "reset_peak_rss"]


class Unavailable(Exception):
    """A backend this machine cannot run (no GPU, torch missing); its message says why."""


def reset_peak_rss() -> int | None:
    """Reset this process's ``VmHWM`` to its RSS; that RSS, or None where Linux refuses.

    Runs in the client and, through ``client.run``, in every Dask worker process.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return proc_field_bytes("/proc/self/status", "VmRSS")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds() -> float | None:
    """CPU seconds every process of the machine has used since boot (``/proc/stat``)."""
    import os

    try:
        with open("/proc/stat") as fh:
            fields = [int(v) for v in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def peak_rss() -> int | None:
    """This process's ``VmHWM``: its peak RSS since the last :func:`reset_peak_rss`."""
    return proc_field_bytes("/proc/self/status", "VmHWM")


def _blas_threads() -> int:
    """The BLAS threads of this process (a Dask worker: distributed sets 1)."""
    from threadpoolctl import threadpool_info

    return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default=0)


def pass_logging_dask_ops(client, chunk_rows):
    """A ``DaskOps`` that also logs each kernel pass over a distributed ``X``.

    One log entry per ``kernel_matmul`` / ``kernel_rmatmul`` whose ``A`` stays on the workers
    (a dask array larger than the backend gathers): its name, rows, seconds and the bytes it
    sent and received.  A PCG iteration's Hessian product ``H V`` is one pass of each.
    """
    from semiscale._arrays import is_dask_array
    from semiscale.backends import DaskOps

    class PassLoggingDaskOps(DaskOps):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.passes = []

        def _logged(self, name, A, run):
            if not (is_dask_array(A) and A.nbytes > self.gather_bytes):
                return run()
            sent, received = self.bytes_moved["sent"], self.bytes_moved["received"]
            tic = time.perf_counter()
            out = run()
            self.passes.append(
                {
                    "name": name,
                    "rows": int(A.shape[0]),
                    "start": tic,
                    "seconds": time.perf_counter() - tic,
                    "sent": self.bytes_moved["sent"] - sent,
                    "received": self.bytes_moved["received"] - received,
                }
            )
            return out

        def kernel_matmul(self, kernel, A, B, V, memory_budget=None, n_jobs=1):
            parent = super().kernel_matmul
            return self._logged("matmul", A, lambda: parent(kernel, A, B, V, memory_budget, n_jobs))

        def kernel_rmatmul(self, kernel, A, B, U, memory_budget=None, n_jobs=1):
            parent = super().kernel_rmatmul
            return self._logged(
                "rmatmul", A, lambda: parent(kernel, A, B, U, memory_budget, n_jobs)
            )

    return PassLoggingDaskOps(client, chunk_rows=chunk_rows)


@dataclass
class Session:
    """A backend ready to fit: ``kind`` is numpy, dask or torch; ``facts`` go in each record."""

    name: str
    kind: str
    workers: int = 0
    device: str | None = None
    client: object = None
    facts: dict = field(default_factory=dict)
    gather_bytes: int | None = None
    n_jobs: int | None = None  # the estimator's (numpy-2jobs)

    def new_ops(self, problem):
        """A fresh ops object for one fit (no literal or device copy kept from the last)."""
        if self.kind == "dask":
            ops = pass_logging_dask_ops(self.client, problem.chunk_rows)
            if self.gather_bytes is not None:
                ops.gather_bytes = self.gather_bytes
            return ops
        if self.kind == "torch":
            from semiscale.backends import TorchOps

            return TorchOps(device=self.device)
        from semiscale.backends import ArrayOps

        return ArrayOps()

    def X(self, problem):
        """The fit's input: the synthetic dask chunks for Dask, else ``X`` on the client."""
        if self.kind == "dask":
            X = problem.dask_X()
            return problem.numpy_X() if X is None else X
        return problem.numpy_X()

    def _workers(self, function):
        if self.client is None:
            return None
        answers = self.client.run(function)
        return [answers[address] for address in sorted(answers)]


class DaskPool:
    """``LocalCluster``s of worker processes (one thread each), one per size, kept for reuse.

    Each size is started at its first request and kept until :meth:`close`, so that the runs
    can alternate between backends repeat by repeat (an idle cluster costs memory, not time).
    """

    def __init__(self, memory_limit):
        self.memory_limit = memory_limit
        self.clusters = {}

    def client_with(self, workers: int):
        """The client of the pool's cluster of ``workers`` workers."""
        from distributed import Client, LocalCluster

        if workers not in self.clusters:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                memory_limit=self.memory_limit,
            )
            self.clusters[workers] = (cluster, Client(cluster, set_as_default=False))
        client = self.clusters[workers][1]
        client.wait_for_workers(workers)
        return client

    def close(self):
        for cluster, client in self.clusters.values():
            client.close()
            cluster.close()
        self.clusters = {}


def open_session(name: str, protocol, pool: DaskPool | None = None) -> Session:
    """The session of backend ``name`` (raises :class:`Unavailable` with the reason).

    A Dask backend takes its client from ``pool`` (its cluster resized to the backend's
    workers).
    """
    if name == "numpy":
        return Session(name, "numpy")
    if name == "numpy-2jobs":
        jobs = protocol.floor_n_jobs
        return Session(name, "numpy", facts={"n_jobs": jobs}, n_jobs=jobs)
    if name.startswith("dask-"):
        workers = int(name.split("-")[1])
        client = pool.client_with(workers)
        blas = sorted(set(client.run(_blas_threads).values()))
        facts = {
            "worker_memory_limit": protocol.worker_memory,
            "threads_per_worker": 1,
            "worker_blas_threads": blas,
        }
        return Session(name, "dask", workers, None, client, facts, protocol.gather_bytes)
    try:
        import torch
    except ImportError as exc:
        raise Unavailable(f"torch cannot be imported ({exc})") from None
    device = name.split("-")[1]
    if device == "cuda" and not torch.cuda.is_available():
        raise Unavailable(f"torch {torch.__version__} sees no CUDA device on this machine")
    facts = {"torch": torch.__version__, "torch_threads": torch.get_num_threads()}
    return Session(name, "torch", device=device, facts=facts)


def _estimator(protocol, name, n_jobs=None):
    return NystromLapRLSRegressor(
        kernel=RBF(gamma=protocol.gamma[name]),
        n_centers=protocol.n_centers[name],
        ambient_reg=protocol.ambient_reg,
        intrinsic_reg=protocol.intrinsic_reg[name],
        max_iter=protocol.max_iter,
        tol=protocol.tol,
        memory_budget=protocol.memory_budget,
        n_jobs=n_jobs,
        random_state=0,
    )


def _passes(log: list, n: int) -> dict:
    """Passes over all of ``X`` of a fit, and the bytes and seconds of one Hessian product.

    A product ``H V`` is one ``matmul`` pass and one ``rmatmul`` pass (the fit makes one more
    ``matmul``: the training points' predictions), so its bytes are the two kinds' means
    summed.  Passes over fewer rows (the labeled rows of the right-hand side, a
    preconditioner's row sample, when the backend maps those too) are left out.
    """
    log = [p for p in log if p["rows"] == n]
    kinds = {k: [p for p in log if p["name"] == k] for k in ("matmul", "rmatmul")}
    if not (kinds["matmul"] and kinds["rmatmul"]):
        return {}
    moved = {k: [p["sent"] + p["received"] for p in passes] for k, passes in kinds.items()}
    # the client's work between two passes: after a matmul (v = λ_I L u + J u), after an
    # rmatmul (PCG's vectors, the preconditioner, the next V)
    gaps = {"matmul": [], "rmatmul": []}
    for one, following in zip(log, log[1:], strict=False):
        gaps[one["name"]].append(following["start"] - one["start"] - one["seconds"])
    return {
        "matmul": len(kinds["matmul"]),
        "rmatmul": len(kinds["rmatmul"]),
        "bytes": sum(map(sum, moved.values())),
        "bytes_per_product": float(np.mean(moved["matmul"]) + np.mean(moved["rmatmul"])),
        "matmul_seconds": [p["seconds"] for p in kinds["matmul"]],
        "rmatmul_seconds": [p["seconds"] for p in kinds["rmatmul"]],
        "after_matmul_seconds": gaps["matmul"],
        "after_rmatmul_seconds": gaps["rmatmul"],
    }


def measured_fit(session: Session, problem, protocol):
    """Fit once on ``session``: ``(predictions on all points, record fields)``."""
    from semiscale.backends import use_ops

    est = _estimator(protocol, problem.name, session.n_jobs)
    ops, X = session.new_ops(problem), session.X(problem)
    workers_before = session._workers(reset_peak_rss)
    client_before = reset_peak_rss()
    cpu_before, workers_cpu_before = cpu_seconds(), session._workers(cpu_seconds)
    busy_before = machine_busy_seconds()
    # the session's client is the current one: dask's own computes inside the fit use it
    current = session.client.as_current() if session.client is not None else nullcontext()
    with warnings.catch_warnings(record=True) as caught, silenced(), use_ops(ops), current:
        warnings.simplefilter("always")
        tic = time.perf_counter()
        est.fit(X, problem.y_observed, laplacian=problem.laplacian)
        seconds = time.perf_counter() - tic
        busy_after, cpu = machine_busy_seconds(), cpu_seconds() - cpu_before
        client_peak, workers_peak = peak_rss(), session._workers(peak_rss)
        workers_cpu = session._workers(cpu_seconds)
        moved = dict(getattr(ops, "bytes_moved", {}))
        passes = _passes(getattr(ops, "passes", []), problem.n)
        tic = time.perf_counter()
        prediction = np.asarray(est.predict(X), dtype=np.float64)
        predict_seconds = time.perf_counter() - tic
    info = est.solver_info_
    record = {
        "fit_seconds": seconds,
        "predict_seconds": predict_seconds,
        "iterations": int(est.n_iter_),
        "converged": bool(info.get("converged", True)),
        "phase_seconds": {
            k[: -len("_seconds")]: v for k, v in info.items() if k.endswith("_seconds")
        },
        "kns_cached": info.get("cached"),
        "client_cpu_seconds": cpu,
        "worker_cpu_seconds": None
        if workers_cpu is None
        else [a - b for a, b in zip(workers_cpu, workers_cpu_before, strict=True)],
        # the machine's CPU seconds during the fit that this fit's processes did not use:
        # other jobs competing for the cores (the timing lock does not stop untimed ones)
        "others_cpu_seconds": None
        if None in (busy_before, busy_after)
        else max(
            0.0,
            busy_after
            - busy_before
            - cpu
            - sum(a - b for a, b in zip(workers_cpu or [], workers_cpu_before or [], strict=True)),
        ),
        "client_rss_before": client_before,
        "client_peak_rss": client_peak,
        "worker_rss_before": workers_before,
        "worker_peak_rss": workers_peak,
        "bytes_moved": moved,
        "passes": passes,
        "n_chunks": len(range(0, problem.n, problem.chunk_rows)) if session.workers else None,
        "workers": session.workers,
        "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught}),
        **session.facts,
        **problem.scores(prediction),
    }
    if session.kind == "dask" and not moved.get("received"):
        record["error"] = "the Dask backend moved no bytes: the fit ran on the client"
    return prediction, record
