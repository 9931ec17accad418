"""A benchmark (a paper's reproduction or a study) and the driver that runs and renders it.

A benchmark is data plus hooks: its full and quick :class:`Protocol`, its
:class:`MethodRegistry`, its experiments (functions that fill the record store) and a renderer
(records + protocol -> report files).  :func:`run_benchmark` opens the records, runs the
experiments, which skip what is recorded, and renders the reports from the records alone.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from semiscale._progress import log as progress_log
from semiscale._progress import progress, ticking
from semiscale_bench.harness.data import MissingDataError, downloads, fetch_missing, missing_sources
from semiscale_bench.harness.machine import machine_info
from semiscale_bench.harness.protocol import Protocol
from semiscale_bench.harness.records import RecordStore
from semiscale_bench.harness.registry import MethodRegistry
from semiscale_bench.harness.study import Study, git_output, run_study

__all__ = [
    "CATALOG",
    "DEFAULT_OUT",
    "Benchmark",
    "RunContext",
    "default_out",
    "load_benchmark",
    "run_benchmark",
]

#: The studies of the library's own choices (modules ``semiscale_bench.studies.NAME``).
_STUDIES = {
    "auto_intrinsic_reg": "does intrinsic_reg='auto' still fit the default graph?",
    "bif_interpolation": "approximate CV (t-BIF) on fits that interpolate their labels",
    "bif_newton": "does the Newton step fix t-BIF's choices? (paper 004's protocol)",
    "defaults": "do the estimators' defaults work with only labels given?",
    "few_label_laprls": "why LapRLS collapses at one label per class; what scaling fixes it",
    "graph_bandwidth": "which heat-kernel width the default kNN graph should have",
    "graph_kth_gaussian": "GraphLearning's kth-gaussian weights against the default heat graph",
    "graph_solvers": "Jacobi- against AMG-preconditioned CG for Laplace and Poisson learning",
    "graph_weights": "which edge weights carry few labels furthest",
    "kernel_floor": "one Nyström LapRLS Hessian product against this machine's floor",
    "label_diffusion": "label diffusion in Nyström LapRLS: how many random-walk steps",
    "lapsvm_newton": "the primal LapSVM's Newton solve before and after its two speed-ups",
    "lapsvm_scale": "the primal LapSVM on a9a-sized data",
    "million_moons": "Laplace and Poisson learning at their defaults on million-point two moons",
    "nystrom_span": "why Nyström LapRLS trails LabelSpreading inductively on mnist",
    "out_of_sample": "do the inductive classifiers predict new points as well as unlabeled ones?",
    "preprocessing": "every classifier at its defaults, unscaled and standardized, few labels",
    "slapcvm_defaults": "SLapCVM at its defaults, and its solve time against the data's size",
    "slapcvm_exact_qp": "is SLapCVM's shortfall on two moons the CVM's or the formulation's?",
    "slapcvm_tube": "how SLapCVM's tube width trades sparsity for how far two labels travel",
}

#: Every benchmark: name -> (module defining ``BENCHMARK``, one line for ``semiscale-bench list``).
#: ``BENCHMARK`` is a :class:`Benchmark` (a paper's protocol of datasets, methods and repeats)
#: or, for a study of the library's own choices, a :class:`~semiscale_bench.harness.study.Study`.
CATALOG = {
    "paper000": (
        "semiscale_bench.paper000",
        "paper 000 (Nyström-PCG LapRLS): Tables 2-3, speed-up at n = 20,000, Figures 1-2",
    ),
    "fit_breakdown": (
        "semiscale_bench.studies.fit_breakdown",
        "study: a Nyström-PCG fit's time phase by phase (paper 000's protocol, its run's CV)",
    ),
    "few_labels": (
        "semiscale_bench.few_labels",
        "1-10 labels per class: semiscale's defaults vs LabelSpreading and GraphLearning "
        "(usps, mnist, letter, moons)",
    ),
    "paper001": (
        "semiscale_bench.paper001",
        "paper 001 (SLapCVM): Figure 1 (two moons to 10⁶ points), Figure 2 (USPS, extended USPS)",
    ),
    "paper002": (
        "semiscale_bench.paper002",
        "paper 002 (data-dependent kernels): Figures 2-3 learning curves, Figure 4 kernel "
        "k-means, Figure 5 kernel build time to 10⁶ points",
    ),
    "paper003": (
        "semiscale_bench.paper003",
        "paper 003 (storage fit learning): Table 3 AUCs, Figure 1 / Table 2 budgeted fits with "
        "measured peak memory, Figure 2 SoCK against time",
    ),
    "paper004": (
        "semiscale_bench.paper004",
        "paper 004 (approximate CV, t-BIF): Tables 1-2, t-BIF against exact t-CV, t = 5, 10, 20",
    ),
    "backends": (
        "semiscale_bench.backends",
        "one Nyström-PCG LapRLS fit on NumPy, Dask (1 and 2 local workers) and torch: time, "
        "memory per worker, bytes moved, prediction difference from NumPy; skin_nonskin, 2M-10M "
        "points",
    ),
    **{
        name: (f"semiscale_bench.studies.{name}", f"study: {text}")
        for name, text in _STUDIES.items()
    },
}

#: Where a run writes when no folder is given: ``./semiscale-bench/<name>`` in the current
#: directory (``./semiscale-bench/quick/<name>`` for a quick run, whose records never mix with a
#: full run's).  Never the repository's committed results (``Benchmark.results``): a maintainer
#: updates those with an explicit ``--out benchmarks/results/<name>``.
DEFAULT_OUT = "semiscale-bench"

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
        The :class:`~semiscale_bench.harness.runner.TableSpec` when an experiment is
        :func:`~semiscale_bench.harness.runner.run_table`.
    curves : object, optional
        The :class:`~semiscale_bench.harness.curves.CurveSpec` when the experiments are size
        curves (:func:`~semiscale_bench.harness.curves.run_curves`).
    results : str
        The repository folder of its committed results (e.g. ``benchmarks/results/paper000``),
        for the record and the help text; runs write there only when asked with ``out=``.
    """

    name: str
    protocol: Protocol
    quick_protocol: Protocol
    methods: MethodRegistry
    experiments: tuple
    render: Callable
    table: object = None
    curves: object = None
    results: str = field(default="")


@dataclass
class RunContext:
    """What one invocation asked for: datasets, data folder, progress log and bars.

    ``log(message)`` writes a dated line on stderr (above the bars) unless ``verbose`` is 0;
    ``fits(total, done)`` opens the progress bar of the running experiment (``experiment``):
    ``total`` fits planned, ``done`` of them already recorded (a resumed run starts there).
    """

    datasets: list
    data_home: object
    log: Callable
    verbose: int = 1
    experiment: str = ""
    name: str = ""

    @contextmanager
    def fits(self, total: int, done: int = 0):
        """The running experiment's progress bar over its ``total`` fits (``done`` recorded).

        Disabled when ``verbose`` is 0.  Its clock keeps running through long fits
        (:func:`~semiscale._progress.ticking`); the block names the work in
        progress with ``bar.set_postfix_str(...)``, and the postfix is cleared at the end.
        """
        label = f"{self.name} {self.experiment}".strip()
        bar = progress(
            total=total, initial=done, desc=label, verbose=self.verbose, unit="fit", leave=True
        )
        with bar, ticking(bar):
            yield bar
            bar.set_postfix_str("", refresh=False)


def load_benchmark(name: str) -> Benchmark | Study:
    """The benchmark called ``name`` (see :data:`CATALOG`; ``few-labels`` is ``few_labels``)."""
    name = name if name in CATALOG else name.replace("-", "_")
    if name not in CATALOG:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(CATALOG)}")
    return import_module(CATALOG[name][0]).BENCHMARK


def _code_version() -> str | None:
    """``git describe --always --dirty`` of the code that runs, or None outside a checkout."""
    return git_output("describe", "--always", "--dirty")


def _logger(name, verbose):
    def log(message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        progress_log(f"[bench {name} {stamp}] {message}", verbose)

    return log


def _check_data(protocol, names, data_home, download: bool, log, verbose: int) -> None:
    """Make sure every dataset of the run is on disk before any work: fetch or refuse."""
    sources = {name: protocol.dataset(name).source for name in names}
    # the split each dataset loads (few_labels: MNIST's test images; others: the train split)
    split_of = getattr(protocol, "split_of", lambda name: "train")
    splits = {sources[name]: split_of(name) for name in names}
    missing = missing_sources([s for s in sources.values() if s], data_home, splits)
    if not missing:
        return
    if not download:
        others = [name for name, source in sources.items() if source not in missing]
        raise MissingDataError(missing, data_home, others)
    log(f"downloading {', '.join(missing)}")
    fetch_missing(missing, data_home, verbose)


def default_out(bench, quick: bool = False) -> Path:
    """The folder a run writes to when none is given (:data:`DEFAULT_OUT`)."""
    root = Path(DEFAULT_OUT)
    return (root / "quick" if quick else root) / bench.name


def run_benchmark(
    bench: Benchmark | Study,
    *,
    datasets=None,
    quick: bool = False,
    out=None,
    force: bool = False,
    skip=(),
    render_only: bool = False,
    data_home=None,
    download: bool = False,
    command: str | None = None,
    verbose: int = 1,
):
    """Run ``bench``'s experiments (skipping recorded work) and render its reports.

    A :class:`~semiscale_bench.harness.study.Study` runs through
    :func:`~semiscale_bench.harness.study.run_study` (no quick protocol, no datasets to choose).

    Parameters
    ----------
    datasets : list of str, optional
        Paper dataset names (default: all of the protocol's).
    quick : bool
        Use the quick protocol (a smoke test; its records never mix with the full run's).
    out : path-like, optional
        Folder of the records and reports (default :func:`default_out`:
        ``./semiscale-bench/<name>``, ``./semiscale-bench/quick/<name>`` for a quick run).
    force : bool
        Recompute work that is already recorded.
    skip : iterable of str
        Experiment names not to run this time.
    render_only : bool
        Only render the reports from the records.
    download : bool
        Download the datasets the run needs and lacks, before it starts.  When False (the
        default), a run that lacks one stops before any work with a
        :class:`~semiscale_bench.harness.data.MissingDataError` naming them and the fixes.
    command : str, optional
        The command line to record (environment variables that change a run are prepended).
    verbose : int
        1 (the default): a log line per step and a progress bar per experiment on stderr; 0:
        silent.

    Returns
    -------
    list of str
        The report files written.
    """
    if isinstance(bench, Study):
        if quick or datasets:
            raise ValueError(
                f"{bench.name} is a study: it has no quick protocol and no --datasets; run "
                f"`semiscale-bench {bench.name}` with --out, --force, --skip or --render-only"
            )
        with downloads(download):  # a study loads its data as it goes
            return run_study(
                bench,
                out or default_out(bench),
                force=force,
                skip=skip,
                render_only=render_only,
                command=command,
                verbose=verbose,
            )
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
    out = out or default_out(bench, quick)
    store = RecordStore(out, protocol.paper, protocol.digest(), force=force)
    log = _logger(bench.name, verbose)
    if not render_only:
        _check_data(protocol, names, data_home, download, log, verbose)
        env = [f"{k}={os.environ[k]}" for k in _ENV_VARS if k in os.environ]
        start = time.perf_counter()
        store.start_run(
            command=" ".join(env + [command or f"semiscale-bench {bench.name}"]),
            machine=machine_info(),
            code=_code_version(),
            datasets=names,
        )
        ctx = RunContext(names, data_home, log, verbose=verbose, name=bench.name)
        seconds = {}
        for exp, run in experiments.items():
            if exp not in skip:
                ctx.experiment = exp
                t0 = time.perf_counter()
                run(bench, protocol, store, ctx)
                seconds[exp] = time.perf_counter() - t0
                log(f"{exp}: {seconds[exp]:.0f} s")
        store.end_run(wall_seconds=time.perf_counter() - start, experiment_seconds=seconds)
    paths = bench.render(bench, protocol, store, out)
    log(f"wrote {len(paths)} files in {out}")
    return paths
