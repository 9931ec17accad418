"""The shared part of the graph studies: fit each estimator on each graph of the digit sets.

``graph_kth_gaussian`` and ``graph_bandwidth`` compare kNN graphs the same way: every graph of
a dataset built once, each estimator given its Laplacian on the few-labels benchmark's draws
(:func:`~semiscale_bench.few_labels.draw_labels`), transductive accuracy on the unlabeled
points, then mean ± std per (dataset, labels per class, graph, estimator).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np


def fit_digit_graphs(
    records,
    save,
    *,
    datasets,
    per_class,
    trials,
    graphs,
    estimators,
    make_estimator,
    extra=None,
    on_load=None,
):
    """Append one accuracy record per (dataset, labels per class, trial, graph, estimator).

    ``make_estimator(name, trial)`` returns an unfitted estimator; ``extra`` is merged into
    every record; ``on_load(name, X)`` runs once per dataset that still has fits to do.
    Recorded keys are skipped, so a rerun resumes.
    """
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels, load
    from semiscale_bench.few_labels.protocol import PROTOCOL

    extra = extra or {}
    done = {
        (r["dataset"], r["per_class"], r["trial"], r["graph"], r["estimator"])
        for r in records
        if "trial" in r and all(r.get(k) == v for k, v in extra.items())
    }
    for name in datasets:
        keys = list(itertools.product(per_class, range(trials), graphs, estimators))
        if all((name, *key) in done for key in keys):
            continue
        X, y = load(PROTOCOL, name)
        if on_load is not None:
            on_load(name, X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            laplacians = {g: KNNGraph(**kw).fit(X).laplacian_ for g, kw in graphs.items()}
        for labels, trial, graph, estimator in keys:
            if (name, labels, trial, graph, estimator) in done:
                continue
            observed = draw_labels(y, labels, trial)
            model = make_estimator(estimator, trial)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, observed, laplacian=laplacians[graph])
            free = observed == -1
            records.append(
                {
                    **extra,
                    "dataset": name,
                    "per_class": labels,
                    "trial": trial,
                    "graph": graph,
                    "estimator": estimator,
                    "accuracy": float(np.mean(model.transduction_[free] == y[free])),
                }
            )
            save()


def summarize_accuracy(records):
    """Mean and std of the accuracy over the trials of every record that has a ``trial``."""
    groups = {}
    for r in records:
        if "trial" in r:
            key = (r["dataset"], r["per_class"], r["graph"], r["estimator"])
            groups.setdefault(key, []).append(r["accuracy"])
    return [
        {
            "dataset": d,
            "per_class": k,
            "graph": g,
            "estimator": e,
            "trials": len(v),
            "mean": float(np.mean(v)),
            "std": float(np.std(v)),
        }
        for (d, k, g, e), v in groups.items()
    ]


def accuracy_tables(summary, *, datasets, per_class, estimators, graphs, graph_label=str):
    """Markdown lines: one table per dataset, a row per (estimator, graph), % ± std."""
    cells = {(s["dataset"], s["per_class"], s["graph"], s["estimator"]): s for s in summary}
    lines = []
    for name in datasets:
        lines += ["", f"{name}:", ""]
        lines += ["| estimator | graph | " + " | ".join(f"{k}/class" for k in per_class) + " |"]
        lines += ["|---" * (2 + len(per_class)) + "|"]
        for estimator, graph in itertools.product(estimators, graphs):
            entries = []
            for k in per_class:
                s = cells.get((name, k, graph, estimator))
                entries.append(
                    "—" if s is None else f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f}"
                )
            lines.append(f"| {estimator} | {graph_label(graph)} | " + " | ".join(entries) + " |")
    return lines
