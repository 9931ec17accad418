"""The backends benchmark: one Nyström-PCG LapRLS fit on NumPy, Dask and torch (issue 31).

``semiscale-bench backends`` runs one experiment, ``fits``, into ``./semiscale-bench/backends/``
(the committed run: ``--out benchmarks/results/backends``): per dataset (skin_nonskin, and
synthetic sets of 2M and 10M points generated per chunk, :mod:`.data`) the same
:class:`~semiscale.models.NystromLapRLSRegressor` fit -- same labels, centers, graph (built
once) and hyper-parameters (:mod:`.protocol`) -- on every backend: NumPy (the reference), Dask
on a ``LocalCluster`` of 1 and of 2 worker processes with one thread each, torch on the CPU,
and torch on CUDA where a GPU is present.  Each fit records its seconds, PCG iterations, RMSE
(and accuracy), the largest difference of its predictions from NumPy's, the peak resident
memory of the client and of each worker, and the bytes the Dask backend moved, in total and per
pass of a kernel product over ``X`` (:mod:`.runs`).  :mod:`.report` writes ``results.json`` and
``summary.md``: the targets as PASS/FAIL and the cost model for N machines beside the
measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from semiscale_bench.backends.data import load_problem
from semiscale_bench.backends.protocol import BACKENDS, PROTOCOL, QUICK
from semiscale_bench.backends.report import render
from semiscale_bench.backends.runs import DaskPool, Unavailable, measured_fit, open_session
from semiscale_bench.harness import Benchmark, MethodRegistry, Sizes

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK", "run_fits"]

METHODS = MethodRegistry()

_DESCRIPTIONS = {
    "numpy": "the NumPy/SciPy ops layer (the reference and the default), BLAS threads as set",
    "numpy-2jobs": "NumPy with n_jobs=2: its kernel products split in two row chunks summed in "
    "order, so other rounding: how far two correct runs' predictions drift apart (the floor)",
    "dask-1": "DaskOps on a LocalCluster of 1 worker process, 1 thread",
    "dask-2": "DaskOps on a LocalCluster of 2 worker processes, 1 thread each",
    "torch-cpu": "TorchOps(device='cpu')",
    "torch-cuda": "TorchOps(device='cuda'), where torch sees a GPU",
}


def _session(params, sizes, *, protocol, dataset, seed, backend):
    return open_session(backend, protocol, params.get("pool"))


for _name in BACKENDS:
    METHODS.register(_name, params="backend", description=_DESCRIPTIONS[_name])(
        partial(_session, backend=_name)
    )

#: Order of the runs in a round: NumPy first (the reference predictions), Dask last (the
#: client's copy of a synthetic ``X`` is dropped before them).
_ORDER = ("numpy", "numpy-2jobs", "torch-cpu", "torch-cuda", "dask-2", "dask-1")


def _plan(protocol, name):
    sizes = Sizes(n=0, d=0, n_train=0, m=0)  # the caps name datasets only
    return {m: protocol.plan(m, name, sizes)[0] for m in protocol.methods}


@dataclass
class _Run:
    """What every fit of one invocation shares: the benchmark, protocol, records, log, cluster."""

    bench: Benchmark
    protocol: object
    store: object
    ctx: object
    pool: DaskPool

    def session(self, backend, dataset):
        return self.bench.methods.build(
            backend,
            {"backend": {"pool": self.pool}},
            None,
            protocol=self.protocol,
            dataset=dataset,
            seed=0,
        )


def _reference(run, problem):
    """NumPy's predictions from an unrecorded fit."""
    return measured_fit(run.session("numpy", problem.name), problem, run.protocol)[0]


class _Backend:
    """One backend's session on one problem, opened at its first fit (or why it cannot run)."""

    def __init__(self, run, problem, name):
        self.run, self.problem, self.name = run, problem, name
        self.session = self.unavailable = None

    def fit(self, repeat, reference, bar):
        """Fit ``repeat`` and record it; returns the predictions (None when not fitted)."""
        store, log, name, problem = self.run.store, self.run.ctx.log, self.name, self.problem
        if self.session is None and self.unavailable is None:
            try:
                self.session = self.run.session(name, problem.name)
            except Unavailable as exc:
                self.unavailable = str(exc)
                log(f"{problem.name}: {name} not run: {exc}")
        bar.update()
        if self.unavailable is not None:
            store.put("fits", problem.name, name, repeat, skipped=self.unavailable)
            return None
        bar.set_postfix_str(f"{problem.name}: {name}, repeat {repeat}", refresh=False)
        try:
            prediction, record = measured_fit(self.session, problem, self.run.protocol)
        except Exception as exc:  # recorded, the run goes on
            store.put("fits", problem.name, name, repeat, error=f"{type(exc).__name__}: {exc}")
            log(f"{problem.name}: {name} repeat {repeat} failed: {exc}")
            return None
        # NumPy against its first fit; no reference (NumPy failed): no difference
        base = prediction if reference is None and name == "numpy" else reference
        diff = None if base is None else float(np.max(np.abs(prediction - base)))
        record["max_abs_diff_vs_numpy"] = diff
        store.put("fits", problem.name, name, repeat, **record)
        log(
            f"{problem.name}: {name} repeat {repeat}: {record['fit_seconds']:.2f} s, "
            f"{record['iterations']} it, rmse {record['rmse']:.4g}, |diff| {diff}"
        )
        return prediction


def _dataset(run, name):
    plans = _plan(run.protocol, name)
    todo = {m: [r for r in plans[m] if not run.store.done("fits", name, m, r)] for m in _ORDER}
    if not any(todo.values()):
        return
    problem = load_problem(run.protocol, name, run.ctx.data_home)
    run.store.put(
        "fits",
        name,
        "problem",
        n=problem.n,
        d=problem.d,
        n_labeled=int(np.sum(~np.isnan(problem.y_observed))),
        chunk_rows=problem.chunk_rows,
        graph=problem.graph,
    )
    run.ctx.log(f"{name}: {problem.n} x {problem.d}, graph {problem.graph}")
    backends = {b: _Backend(run, problem, b) for b in _ORDER}
    # the reference: NumPy's first predictions in this process (an unrecorded fit when its
    # records exist but another backend's do not)
    reference = None if todo["numpy"] else _reference(run, problem)
    with run.ctx.fits(total=sum(map(len, todo.values()))) as bar:
        # round by round, every backend once per round: a change of the machine's load hits
        # all backends alike instead of one backend's block of repeats
        for r in sorted({r for repeats in todo.values() for r in repeats}):
            for backend in _ORDER:
                if r not in todo[backend]:
                    continue
                if backend.startswith("dask") and problem.synthetic:
                    problem.X = None  # the Dask runs' client holds no copy of X
                prediction = backends[backend].fit(r, reference, bar)
                if backend == "numpy" and reference is None:
                    reference = prediction


def run_fits(bench, protocol, store, ctx) -> None:
    """Every (dataset, backend, repeat) not yet recorded, recorded."""
    run = _Run(bench, protocol, store, ctx, DaskPool(protocol.worker_memory))
    try:
        for name in ctx.datasets:
            _dataset(run, name)
    finally:
        run.pool.close()


BENCHMARK = Benchmark(
    name="backends",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(("fits", run_fits),),
    render=render,
    results="benchmarks/results/backends",
)
