"""Timing and peak-memory measurement shared by the CLI reports and benchmarks."""

from __future__ import annotations

import os
import platform
import sys
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Measurement", "machine_info", "measure", "peak_rss_bytes", "ru_maxrss_bytes"]


@dataclass
class Measurement:
    seconds: float = 0.0
    peak_traced_bytes: int = 0  # numpy/Python allocations seen by tracemalloc during the block
    max_rss_bytes: int = 0  # the process's lifetime peak resident set size afterwards


@contextmanager
def measure(trace_memory: bool = True):
    """Time a block and record its peak traced allocation (numpy arrays are traced).

    tracemalloc slows allocation-heavy Python code slightly; the BLAS/C work it wraps is unaffected.
    """
    result = Measurement()
    started_tracing = trace_memory and not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    if trace_memory:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - start
        if trace_memory:
            result.peak_traced_bytes = max(0, tracemalloc.get_traced_memory()[1] - base)
        if started_tracing:
            tracemalloc.stop()
        result.max_rss_bytes = ru_maxrss_bytes()


def ru_maxrss_bytes() -> int:
    """``ru_maxrss`` in bytes (KiB on Linux, bytes on macOS); 0 where it is unknown."""
    try:
        import resource  # POSIX only: imported here so that Windows can import this module
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # Linux: KiB


def peak_rss_bytes() -> int:
    """Peak RSS of this process: ``VmHWM`` on Linux, else ``ru_maxrss``.

    On Linux ``ru_maxrss`` is the larger of the process's own high-water mark and the one
    saved when it was exec'd, which is its *parent's* (the pre-exec memory map is the
    parent's): a child of a 1 GB parent reports at least 1 GB, and ``clear_refs`` does not
    reset that part, so a case's growth could hide below it (measured: 5 MiB instead of
    33 MiB after the parent had built a graph).  ``VmHWM`` is this process's alone.
    """
    from ._memory import proc_field_bytes

    peak = proc_field_bytes("/proc/self/status", "VmHWM")
    return ru_maxrss_bytes() if peak is None else peak


def machine_info() -> dict:
    """Cores, Python, numpy and the BLAS in use, for benchmark records."""
    import numpy as np

    info = {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: p.get(k) for k in ("internal_api", "version", "num_threads")}
            for p in threadpool_info()
            if p.get("user_api") == "blas"
        ]
    except Exception:  # pragma: no cover - threadpoolctl is a dependency, but be robust
        info["blas"] = []
    return info
