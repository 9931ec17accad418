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
    "numpy-blocks": "NumPy with a smaller memory_budget (other kernel blocks, so other "
    "rounding): how far two correct runs' predictions drift apart (the floor)",
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

#: Order of the runs: NumPy first (the reference predictions), Dask last (the client's copy of
#: a synthetic ``X`` is dropped before them), its 2 workers before 1 (retiring one is quick).
_ORDER = ("numpy", "numpy-blocks", "torch-cpu", "torch-cuda", "dask-2", "dask-1")


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
    """NumPy's predictions, from an unrecorded fit (its records exist, another backend's not)."""
    return measured_fit(run.session("numpy", problem.name), problem, run.protocol)[0]


def _backend_runs(run, problem, backend, repeats, reference, bar):
    """Every repeat of ``backend`` on ``problem``, recorded; returns the first predictions."""
    store, log = run.store, run.ctx.log
    try:
        session = run.session(backend, problem.name)
    except Unavailable as exc:
        for r in repeats:
            store.put("fits", problem.name, backend, r, skipped=str(exc))
            bar.update()
        log(f"{problem.name}: {backend} not run: {exc}")
        return None
    first = None
    for r in repeats:
        bar.set_postfix_str(f"{problem.name}: {backend}, repeat {r}", refresh=False)
        try:
            prediction, record = measured_fit(session, problem, run.protocol)
        except Exception as exc:  # recorded, the run goes on
            store.put("fits", problem.name, backend, r, error=f"{type(exc).__name__}: {exc}")
            log(f"{problem.name}: {backend} repeat {r} failed: {exc}")
            bar.update()
            continue
        # NumPy's repeats against its first; no reference (NumPy failed): no difference
        base = (first if first is not None else prediction) if backend == "numpy" else reference
        diff = None if base is None else float(np.max(np.abs(prediction - base)))
        record["max_abs_diff_vs_numpy"] = diff
        store.put("fits", problem.name, backend, r, **record)
        log(
            f"{problem.name}: {backend} repeat {r}: {record['fit_seconds']:.2f} s, "
            f"{record['iterations']} it, rmse {record['rmse']:.4g}, |diff| {diff}"
        )
        first = prediction if first is None else first
        bar.update()
    return first


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
    with run.ctx.fits(total=sum(map(len, todo.values()))) as bar:
        # the reference: NumPy's predictions in this process
        if todo["numpy"]:
            reference = _backend_runs(run, problem, "numpy", todo["numpy"], None, bar)
        else:
            reference = _reference(run, problem)
        for backend in _ORDER[1:]:
            if backend.startswith("dask") and problem.synthetic:
                problem.X = None  # the Dask runs' client holds no copy of X
            if todo[backend]:
                _backend_runs(run, problem, backend, todo[backend], reference, bar)


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
