"""Measured fits and the table experiment: every (dataset, method, repeat) fitted once, recorded.

:func:`measured_fit` times one fit, records its peak memory, warnings and errors, and times
fast fits a second time without tracemalloc.  :func:`run_table` is the experiment behind a
paper's results tables: per dataset, per repeat, one split and one graph shared by every
method; on repeat 0, before any fit, the hyper-parameters are chosen (the paper's hook, e.g. a
cross-validated grid search) and recorded; every method then reads them from that record.
Work whose record exists is skipped, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from semiscale._measure import measure
from semiscale._progress import silenced
from semiscale_bench.harness.data import load_dense, make_split
from semiscale_bench.harness.protocol import Sizes

__all__ = [
    "RETIME_BELOW_SECONDS",
    "TableSpec",
    "choices_from",
    "chosen_params",
    "estimator_facts",
    "measured_fit",
    "planned_sizes",
    "run_table",
    "table_plan",
]

#: Fits faster than this (traced) are timed again without tracemalloc; slower ones are dominated
#: by BLAS work that tracemalloc does not slow.  tracemalloc's per-allocation cost doubled
#: sub-second fits (paper 000, madelon: 0.05 s traced, 0.026 s untraced).
RETIME_BELOW_SECONDS = 10.0

_PHASES = ("centers", "rhs", "preconditioner", "iterations")


def _warning_lines(caught) -> list[str]:
    return sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})


def measured_fit(fit: Callable[[], object], *, trace_memory: bool = True, retime: bool = True):
    """Run ``fit()`` under :func:`~semiscale._measure.measure`; returns a record dict.

    Keys: ``fit_seconds`` (of the untraced second fit when the traced one took less than
    :data:`RETIME_BELOW_SECONDS` and ``retime``), ``fit_seconds_timed_on``,
    ``peak_traced_bytes`` (tracemalloc peak of the traced fit: numpy allocations, not BLAS
    workspaces), ``max_rss_bytes`` (the process's lifetime peak: an upper bound carried over
    from earlier, larger fits) and ``warnings``; on an exception only ``error`` and
    ``warnings``.  The fit runs with the ambient verbosity at 0: the library draws no bars (a
    run's own bar, redrawn once a second, allocates a few hundred bytes at a time).
    """
    with warnings.catch_warnings(record=True) as caught, silenced():
        warnings.simplefilter("always")
        try:
            with measure(trace_memory=trace_memory) as m:
                fit()
        except Exception as exc:  # recorded, and the run goes on (e.g. MemoryBudgetError)
            return {"error": f"{type(exc).__name__}: {exc}", "warnings": _warning_lines(caught)}
    seconds, timed = m.seconds, "traced fit" if trace_memory else "fit"
    if trace_memory and retime and m.seconds < RETIME_BELOW_SECONDS:
        with warnings.catch_warnings(), silenced():
            warnings.simplefilter("ignore")
            with measure(trace_memory=False) as untraced:
                fit()
        seconds, timed = untraced.seconds, "second, untraced fit"
    return {
        "fit_seconds": seconds,
        "fit_seconds_timed_on": timed,
        "peak_traced_bytes": int(m.peak_traced_bytes),
        "max_rss_bytes": int(m.max_rss_bytes),
        "warnings": _warning_lines(caught),
    }


def estimator_facts(est) -> dict:
    """Iterations, convergence, fit phases and residual history a fitted estimator reports."""
    info = getattr(est, "solver_info_", None) or {}
    res = getattr(est, "residuals_", None)
    history = [] if res is None else np.max(np.asarray(res).reshape(len(res), -1), axis=1)
    return {
        "iterations": int(getattr(est, "n_iter_", 0)),
        "converged": bool(info.get("converged", True)),
        # Nyström estimators' sampled-Hessian preconditioner: graph sample, graph trace share.
        "laplacian_rows": info.get("laplacian_rows"),
        "graph_trace_share": info.get("graph_trace_share"),
        "phase_seconds": {phase: info.get(f"{phase}_seconds") for phase in _PHASES},
        "final_residual": float(history[-1]) if len(history) else None,
        "residuals": [float(f"{v:.3g}") for v in history],
    }


def graph_facts(graph, seconds, caught) -> dict:
    """What the table reports about a fitted :class:`~semiscale.graph.KNNGraph`."""
    return {
        "seconds": seconds,
        "search_method": getattr(graph, "search_method_", None),
        "search_recall": getattr(graph, "search_recall_", None),
        "n_components": int(graph.n_components_),
        "trace": float(graph.trace_),
        "warnings": sorted({str(w.message)[:120] for w in caught}),
    }


@dataclass(frozen=True)
class TableSpec:
    """A paper's hooks into :func:`run_table`.

    Parameters
    ----------
    graph : callable
        ``graph(protocol, seed)``: an unfitted graph, fitted on each repeat's training split
        and passed to every method as ``laplacian=``.
    choose : callable
        ``choose(protocol, dataset, split, sizes, store) -> dict`` run on repeat 0's split
        (``store``: this run's records): the hyper-parameter search; its ``"params"`` maps each
        parameter group to a dict (see also :func:`choices_from`).
    score : callable
        ``score(estimator, split) -> dict`` of test errors (e.g. ``{"rmse": ...}``).
    metric : str
        The key of ``score``'s dict that the tables report.
    """

    graph: Callable
    choose: Callable
    score: Callable
    metric: str


def planned_sizes(protocol, name: str, store=None) -> Sizes | None:
    """``name``'s problem sizes before its data are loaded, for counting the planned fits.

    The sizes its table recorded (this protocol's), else the dataset registry's row and column
    counts; None when neither is known.  The run corrects its count once the data are loaded.
    """
    recorded = store.get("table", name, "sizes") if store is not None else None
    if recorded is not None:
        return Sizes(**{f.name: recorded[f.name] for f in dataclasses.fields(Sizes)})
    from semiscale.datasets import dataset_info

    source = protocol.dataset(name).source
    try:
        info = dataset_info(source)
        n = info.split("train").n_samples
    except ValueError:  # not registered (e.g. a test's data): counted once loaded
        return None
    if protocol.max_samples:
        n = min(n, protocol.max_samples)
    return protocol.sizes(name, n, info.n_features)


def table_plan(protocol, name: str, sizes: Sizes) -> list[tuple[str, int]]:
    """The (method, repeat) fits of ``name``'s table, repeat by repeat."""
    plans = {meth: protocol.plan(meth, name, sizes)[0] for meth in protocol.methods}
    repeats = protocol.repeats_for(name)[0]
    return [(m, r) for r in range(repeats) for m in protocol.methods if r in plans[m]]


def _count(store, name, fits) -> tuple[int, int]:
    return len(fits), sum(store.done("table", name, m, r) for m, r in fits)


def run_table(bench, protocol, store, ctx) -> None:
    """Fit every planned (dataset, method, repeat) not yet recorded; record each.

    Progress: one bar over the planned fits of the selected datasets (recorded ones counted as
    done), its postfix naming the step in progress (CV search, graph, fit).
    """
    names = [n for n in ctx.datasets if protocol.dataset(n).source is not None]
    counts = {}
    for name in names:
        sizes = planned_sizes(protocol, name, store)
        counts[name] = (
            (0, 0) if sizes is None else _count(store, name, table_plan(protocol, name, sizes))
        )
    total, done = map(sum, zip(*counts.values())) if counts else (0, 0)
    with ctx.fits(total, done) as bar:
        for name in names:
            _table_dataset(bench, protocol, store, ctx, name, bar, counts[name])


def _table_dataset(bench, protocol, store, ctx, name, bar, counted) -> None:
    spec: TableSpec = bench.table
    source = protocol.dataset(name).source
    bar.set_postfix_str(f"{name}: loading", refresh=False)
    X, y = load_dense(source, protocol.max_samples, ctx.data_home)
    sizes = protocol.sizes(name, *X.shape)
    recorded = store.get("table", name, "sizes")
    if store.force or recorded is None or recorded["n"] != sizes.n:
        store.put("table", name, "sizes", **dataclasses.asdict(sizes))
    fits = table_plan(protocol, name, sizes)
    total, done = _count(store, name, fits)
    if (total, done) != counted:  # the registry's sizes were not the loaded data's
        bar.total += total - counted[0]
        bar.update(done - counted[1])
    repeats = protocol.repeats_for(name)[0]
    ctx.log(f"{name} ({source}): {sizes}, {repeats} repeats")
    for r in range(repeats):
        todo = [m for m, rep in fits if rep == r and not store.done("table", name, m, r)]
        choose = r == 0 and not store.done("cv", name, "search")
        if not (todo or choose):
            continue
        split = make_split(X, y, r, protocol.train_fraction, protocol.labeled_fraction)
        if choose:
            bar.set_postfix_str(f"{name}: CV search", refresh=False)
            with silenced():
                chosen = spec.choose(protocol, name, split, sizes, store)
            store.put("cv", name, "search", **chosen)
        chosen = chosen_params(store, name, "the table")
        if not todo:
            continue
        bar.set_postfix_str(f"{name}: graph, repeat {r}", refresh=False)
        with warnings.catch_warnings(record=True) as caught, measure(trace_memory=False) as mg:
            warnings.simplefilter("always")
            with silenced():
                graph = spec.graph(protocol, r).fit(split.X_train)
        store.put("table", name, "graph", r, **graph_facts(graph, mg.seconds, caught))
        ctx.log(f"{name}: repeat {r} graph {mg.seconds:.2f} s ({graph.search_method_})")
        for meth in todo:
            bar.set_postfix_str(f"{name}: {meth}, repeat {r}", refresh=False)
            est = bench.methods.build(meth, chosen, sizes, protocol=protocol, dataset=name, seed=r)
            fit = partial(est.fit, split.X_train, split.y_observed, laplacian=graph.laplacian_)
            rec = measured_fit(fit)
            if "error" not in rec:
                rec.update(spec.score(est, split), **estimator_facts(est))
            store.put("table", name, meth, r, **rec)
            bar.update()
            ctx.log(f"{name}: {meth} repeat {r}: {describe(rec, spec.metric)}")
        del graph


def chosen_params(store, dataset: str, who: str) -> dict:
    """The hyper-parameters recorded by ``dataset``'s CV (a clear error when there are none)."""
    record = store.get("cv", dataset, "search")
    if record is None:
        raise ValueError(f"{who} needs the CV record of {dataset}: run its table first")
    return record["params"]


def choices_from(name: str) -> Callable:
    """A :class:`TableSpec` ``choose`` hook reading benchmark ``name``'s CV records.

    For studies on a paper's protocol: the hyper-parameters are those the paper's run chose,
    never copied by hand.  Its records are those of the folder ``name`` beside this run's
    output folder, made with its full protocol (its quick one for a quick run); the record
    names the run they come from.
    """

    def choose(protocol, dataset, split, sizes, store):
        from semiscale_bench.harness.benchmark import load_benchmark
        from semiscale_bench.harness.records import RecordStore

        source = load_benchmark(name)
        theirs = source.quick_protocol if protocol.quick else source.protocol
        folder = store.folder.parent / name
        record = RecordStore(folder, theirs.paper, theirs.digest()).get("cv", dataset, "search")
        if record is None:
            quick = " --quick" if protocol.quick else ""
            raise ValueError(
                f"no CV record of {dataset} in {folder}/records.jsonl: run "
                f"`semiscale-bench {name}{quick} --datasets {dataset} --out {folder}` first"
            )
        return {"params": record["params"], "source": f"{folder}, run {record['run']}"}

    return choose


def describe(rec: dict, metric: str) -> str:
    """One log line for a fit record."""
    if "error" in rec:
        return f"FAILED: {rec['error']}"
    return (
        f"{metric} {rec[metric]:.4f}, {rec['iterations']} it, {rec['fit_seconds']:.2f} s, "
        f"peak {rec['peak_traced_bytes'] / 2**20:.0f} MiB"
        + ("" if rec["converged"] else " (NOT converged)")
    )
