"""Few labels per class: semiscale's classifiers at their defaults beside LabelSpreading.

``semiscale-bench few-labels`` (issue 12, part 5) runs three experiments into
``./semiscale-bench/few_labels/`` (the committed run: ``--out benchmarks/results/few_labels``):

- ``fits`` (transductive): per dataset, the default ``KNNGraph()`` is built once on all points
  (its seconds recorded as the ``graph`` record) and its Laplacian is given to every semiscale
  fit; per trial and label count one draw of labeled points serves every method;
- ``inductive`` (:mod:`.inductive`): fit on a training pool, ``predict`` held-out points;
- ``scaling`` (:mod:`.scaling`): two moons from 10,000 to 1,000,000 points, end to end, each fit
  in a subprocess for its peak memory.

``--skip`` selects: ``--skip fits,inductive`` runs the scaling experiment alone.  The reports
(:mod:`.report`): a Markdown table per dataset, ``inductive.md``, ``scaling.md``, the plot, and
``summary.md`` with issue 12's targets as PASS/FAIL lines (:mod:`.targets`).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.few_labels.inductive import run_inductive
from semiscale_bench.few_labels.methods import METHODS, takes_laplacian
from semiscale_bench.few_labels.protocol import MOONS, PROTOCOL, QUICK
from semiscale_bench.few_labels.report import render
from semiscale_bench.few_labels.scaling import run_scaling
from semiscale_bench.harness import Benchmark, Sizes, measured_fit
from semiscale_bench.harness.runner import estimator_facts

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]


def load(protocol, name, data_home=None):
    """``(X, y)`` of dataset ``name``: dense float64 points, labels coded 0..k-1."""
    from semiscale.datasets import encode_labels, make_two_moons

    source = protocol.dataset(name).source
    if source == MOONS:
        X, y = make_two_moons(protocol.moons_n, noise=protocol.moons_noise, random_state=0)
    else:
        X, y = load_split(source, protocol.split_of(name), protocol.max_samples, data_home)
    return np.asarray(X, dtype=np.float64), encode_labels(y)[0].astype(np.int64)


def load_split(source, split, max_samples=None, data_home=None):
    """Dense ``(X, y)`` of one split of a registered dataset; never downloads.

    :func:`~semiscale_bench.harness.load_dense` for another split than ``"train"`` (the same
    fixed subsample when ``max_samples`` is given: quick runs only).
    """
    from semiscale.datasets import load_dataset

    X, y = load_dataset(source, split, data_home=data_home, download=False, dense=True)
    if max_samples and X.shape[0] > max_samples:
        keep = np.sort(np.random.default_rng(12345).choice(X.shape[0], max_samples, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def draw_labels(y, per_class: int, trial: int) -> np.ndarray:
    """``y`` with ``per_class`` points of each class kept, -1 elsewhere (seed ``[trial, k]``)."""
    rng = np.random.default_rng([trial, per_class])
    observed = np.full(y.shape, -1, dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        chosen = rng.choice(members, min(per_class, members.size), replace=False)
        observed[chosen] = c
    return observed


def setting(per_class: int) -> str:
    return f"{per_class}/class"


def log_fit(ctx, what: str, rec: dict) -> None:
    """One log line for a fit's record: its accuracy and seconds, or its error."""
    acc = rec.get("accuracy")
    outcome = (
        f"{100 * acc:.1f} %, {rec['fit_seconds']:.2f} s"
        if acc is not None
        else f"FAILED {rec['error']}"
    )
    ctx.log(f"{what}: {outcome}")


def run_fits(bench, protocol, store, ctx) -> None:
    """Every (dataset, labels per class, trial, method) not yet recorded, recorded."""
    from semiscale.graph import KNNGraph

    with ctx.fits(total=0) as bar:
        for name in ctx.datasets:
            X, y = load(protocol, name, ctx.data_home)
            n_classes = int(np.unique(y).size)
            sizes = Sizes(X.shape[0], X.shape[1], X.shape[0], n_classes)
            if store.force or store.get("fits", name, "sizes") is None:
                store.put("fits", name, "sizes", n=sizes.n, d=sizes.d, n_train=sizes.n, m=sizes.m)
            todo = [
                (k, t, meth)
                for t in range(protocol.repeats_for(name)[0])
                for k in protocol.per_class
                for meth in protocol.methods
                if t in protocol.plan(meth, name, sizes)[0]
                and not store.done("fits", name, meth, t, setting(k))
            ]
            bar.total += len(todo)
            bar.refresh()
            if not todo:
                continue
            bar.set_postfix_str(f"{name}: graph", refresh=False)
            graph = KNNGraph(random_state=protocol.graph_seed)
            rec = measured_fit(partial(graph.fit, X), trace_memory=False)
            store.put("fits", name, "graph", **rec, n_components=int(graph.n_components_))
            ctx.log(f"{name}: n = {sizes.n}, {n_classes} classes, graph {rec['fit_seconds']:.2f} s")
            L = graph.laplacian_
            for k, t, meth in todo:
                bar.set_postfix_str(f"{name}: {meth}, {setting(k)}, trial {t}", refresh=False)
                observed = draw_labels(y, k, t)
                est = bench.methods.build(
                    meth, {"defaults": {}}, sizes, protocol=protocol, dataset=name, seed=t
                )
                extra = {"laplacian": L} if takes_laplacian(est) else {}
                with silenced():
                    rec = measured_fit(partial(est.fit, X, observed, **extra), trace_memory=False)
                graph_seconds = getattr(est, "graph_seconds_", None)
                if "error" not in rec and graph_seconds is not None:
                    # a peer that builds its own graph: its time without it, as ours
                    rec["fit_seconds_with_graph"] = rec["fit_seconds"]
                    rec["fit_seconds"] -= graph_seconds
                    rec["graph_seconds"] = graph_seconds
                    rec["fit_seconds_timed_on"] = "fit minus its own kNN graph"
                if "error" not in rec:
                    free = observed == -1
                    rec["accuracy"] = float(np.mean(est.transduction_[free] == y[free]))
                    rec["graph_given"] = bool(extra)
                    rec.update(estimator_facts(est))
                store.put("fits", name, meth, t, setting(k), **rec)
                bar.update()
                log_fit(ctx, f"{name}: {meth} {setting(k)} trial {t}", rec)
            del graph, L


BENCHMARK = Benchmark(
    name="few_labels",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(("fits", run_fits), ("inductive", run_inductive), ("scaling", run_scaling)),
    render=render,
    results="benchmarks/results/few_labels",
)
