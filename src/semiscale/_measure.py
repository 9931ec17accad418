"""Timing and peak memory of a block: the command line's reports (and the benchmarks' fits)."""

from __future__ import annotations

import sys
import time
import tracemalloc
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Measurement", "measure", "ru_maxrss_bytes"]


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
