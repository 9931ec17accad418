"""The transductive experiment: per dataset one default graph, every method on the same draws."""

from __future__ import annotations

from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.few_labels.data import draw_labels, load, log_fit, setting
from semiscale_bench.few_labels.methods import takes_laplacian
from semiscale_bench.harness import Sizes, measured_fit
from semiscale_bench.harness.runner import estimator_facts

__all__ = ["run_fits"]


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
