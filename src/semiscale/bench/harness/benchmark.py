"""A benchmark (a paper's reproduction or a study) and the driver that runs and renders it.

A benchmark is data plus hooks: its full and quick :class:`Protocol`, its
:class:`MethodRegistry`, its experiments (functions that fill the record store) and a renderer
(records + protocol -> report files).  :func:`run_benchmark` opens the records, runs the
experiments, which skip what is recorded, and renders the reports from the records alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from .._measure import machine_info
from .protocol import Protocol
from .records import RecordStore
from .registry import MethodRegistry

__all__ = ["CATALOG", "Benchmark", "RunContext", "load_benchmark", "run_benchmark"]

#: Every benchmark: name -> (module defining ``BENCHMARK``, one line for ``semiscale bench list``).
CATALOG = {
    "paper000": (
        "semiscale.bench.paper000",
        "paper 000 (Nyström-PCG LapRLS): Tables 2-3, speed-up at n = 20,000, Figures 1-2",
    ),
    "fit_breakdown": (
        "semiscale.bench.studies.fit_breakdown",
        "study: a Nyström-PCG fit's time phase by phase (paper 000's protocol, its run's CV)",
    ),
}

#: Environment variables that change a run, recorded in its command line.
_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "SEMISCALE_DATA")


@dataclass(frozen=True)
class Benchmark:
    """One reproduction or study.

    Parameters
    ----------
    name : str
        Its name in :data:`CATALOG` and on the command line.
    protocol, quick_protocol : Protocol
        The documented full run, and tiny sizes for a smoke test.
    methods : MethodRegistry
        The methods the protocols name.
    experiments : tuple of (str, callable)
        ``run(benchmark, protocol, store, ctx)`` in order; each skips what is recorded.
    render : callable
        ``render(benchmark, protocol, store, out) -> list of paths``: the reports, from the
        records and the protocol only.
    table : object, optional
        The :class:`~semiscale.bench.harness.runner.TableSpec` when an experiment is
        :func:`~semiscale.bench.harness.runner.run_table`.
    """

    name: str
    protocol: Protocol
    quick_protocol: Protocol
    methods: MethodRegistry
    experiments: tuple
    render: Callable
    table: object = None
    default_out: str = field(default="")


@dataclass
class RunContext:
    """What one invocation asked for: datasets, data folder, progress log."""

    datasets: list
    data_home: object
    log: Callable


def load_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (see :data:`CATALOG`)."""
    if name not in CATALOG:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(CATALOG)}")
    return import_module(CATALOG[name][0]).BENCHMARK


def _code_version() -> str | None:
    """``git describe --always --dirty`` of the code that runs, or None outside a checkout."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _logger(name):
    def log(message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"[bench {name} {stamp}] {message}", file=sys.stderr, flush=True)

    return log


def run_benchmark(
    bench: Benchmark,
    *,
    datasets=None,
    quick: bool = False,
    out=None,
    force: bool = False,
    skip=(),
    render_only: bool = False,
    data_home=None,
    command: str | None = None,
):
    """Run ``bench``'s experiments (skipping recorded work) and render its reports.

    Parameters
    ----------
    datasets : list of str, optional
        Paper dataset names (default: all of the protocol's).
    quick : bool
        Use the quick protocol (a smoke test; its records never mix with the full run's).
    out : path-like, optional
        Folder of the records and reports (default ``bench.default_out``).
    force : bool
        Recompute work that is already recorded.
    skip : iterable of str
        Experiment names not to run this time.
    render_only : bool
        Only render the reports from the records.
    command : str, optional
        The command line to record (environment variables that change a run are prepended).

    Returns
    -------
    list of str
        The report files written.
    """
    protocol = bench.quick_protocol if quick else bench.protocol
    unknown = set(protocol.methods) - set(bench.methods)
    if unknown:
        raise ValueError(f"protocol names methods missing from the registry: {sorted(unknown)}")
    names = list(datasets) if datasets else [d.name for d in protocol.datasets]
    for name in names:
        protocol.dataset(name)  # a clear error for an unknown name
    experiments = dict(bench.experiments)
    unknown = set(skip) - set(experiments)
    if unknown:
        raise ValueError(f"cannot skip {sorted(unknown)}: experiments are {list(experiments)}")
    out = out or bench.default_out
    store = RecordStore(out, protocol.paper, protocol.digest(), force=force)
    log = _logger(bench.name)
    if not render_only:
        env = [f"{k}={os.environ[k]}" for k in _ENV_VARS if k in os.environ]
        start = time.perf_counter()
        store.start_run(
            command=" ".join(env + [command or f"semiscale bench {bench.name}"]),
            machine=machine_info(),
            code=_code_version(),
            datasets=names,
        )
        ctx = RunContext(names, data_home, log)
        seconds = {}
        for exp, run in experiments.items():
            if exp not in skip:
                t0 = time.perf_counter()
                run(bench, protocol, store, ctx)
                seconds[exp] = time.perf_counter() - t0
                log(f"{exp}: {seconds[exp]:.0f} s")
        store.end_run(wall_seconds=time.perf_counter() - start, experiment_seconds=seconds)
    paths = bench.render(bench, protocol, store, out)
    log(f"wrote {len(paths)} files in {out}")
    return paths
