"""The machine a benchmark ran on, and a process's own peak memory: what records keep.

The library measures a block (:func:`semiscale._measure.measure`); what only benchmarks record
(the BLAS in use, ``VmHWM``) lives here, outside the library.
"""

from __future__ import annotations

import os
import platform

from semiscale._measure import ru_maxrss_bytes

__all__ = ["machine_info", "peak_rss_bytes", "ru_maxrss_bytes"]


def peak_rss_bytes() -> int:
    """Peak RSS of this process: ``VmHWM`` on Linux, else ``ru_maxrss``.

    On Linux ``ru_maxrss`` is the larger of the process's own high-water mark and the one
    saved when it was exec'd, which is its *parent's* (the pre-exec memory map is the
    parent's): a child of a 1 GB parent reports at least 1 GB, and ``clear_refs`` does not
    reset that part, so a case's growth could hide below it (measured: 5 MiB instead of
    33 MiB after the parent had built a graph).  ``VmHWM`` is this process's alone.
    """
    from semiscale._memory import proc_field_bytes

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
