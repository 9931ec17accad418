"""GraphLearning's graph (``weights="kth-gaussian"``) against the default heat graph (issue 12).

Issue 12 asks for graphs "that carry labels far", chosen by measurement.  Calder's
GraphLearning weighs each directed kNN edge ``exp(−4 d_ij² / σ_i²)`` (``σ_i`` the distance to
the k-th neighbour) and averages the two directions; semiscale's ``KNNGraph(weights=
"kth-gaussian", symmetrize="average")`` builds the same graph.  This study measures it beside
the then default ``KNNGraph()`` (heat weights of one global width, the mean edge length, union;
``KNNGraph(bandwidth="mean", symmetrize="union")`` since the default became the ``"contrast"``
width, averaged: ``graph_bandwidth``):

* transductive accuracy on the unlabeled points of the full usps (7,291) and mnist test
  (10,000) sets with 1 / 3 / 10 labels per class, 5 trials (the few-labels benchmark's draws,
  :func:`~semiscale_bench.few_labels.draw_labels`), for ``PoissonClassifier()``,
  ``HarmonicClassifier(class_mass_normalization=True)`` and ``NystromLapRLSClassifier()`` at
  their defaults, each given the graph's Laplacian;
* two moons (noise 0.1, random_state 0) of 2,000, 10,000 and 100,000 points with one label
  per class (3 draws), ``PoissonClassifier()`` with each graph built inside ``fit``.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench graph_kth_gaussian \\
        --out benchmarks/results/graph_kth_gaussian
"""

from __future__ import annotations

import itertools

import numpy as np

from semiscale_bench.harness.study import (
    DATA,
    Study,
    legacy_command,
    mean_std,
    produced_by,
    write_readme,
)
from semiscale_bench.studies._common import (
    accuracy_tables,
    fit_digit_graphs,
    fit_moons,
    summarize_accuracy,
)

DATASETS = ("usps", "mnist")
PER_CLASS = (1, 3, 10)
TRIALS = 5
MOONS_N = (2_000, 10_000, 100_000)
MOONS_TRIALS = 3
GRAPHS = {
    # the default KNNGraph() when this study ran (before commit 3356151), named explicitly
    "KNNGraph() (heat, union)": {"bandwidth": "mean", "symmetrize": "union"},
    'KNNGraph(weights="kth-gaussian", symmetrize="average")': {
        "weights": "kth-gaussian",
        "symmetrize": "average",
    },
}
ESTIMATORS = ("Poisson", "Harmonic + CMN", "Nyström LapRLS")


def _estimator(name, trial, graph=None):
    from semiscale.models import HarmonicClassifier, NystromLapRLSClassifier, PoissonClassifier

    if name == "Poisson":
        return PoissonClassifier(graph=graph)
    if name == "Harmonic + CMN":
        return HarmonicClassifier(class_mass_normalization=True, graph=graph)
    return NystromLapRLSClassifier(random_state=trial, graph=graph)


def run_digits(records, save):
    fit_digit_graphs(
        records,
        save,
        datasets=DATASETS,
        per_class=PER_CLASS,
        trials=TRIALS,
        graphs=GRAPHS,
        estimators=ESTIMATORS,
        make_estimator=_estimator,
    )


def run_moons(records, save):
    from semiscale.graph import KNNGraph

    done = {(r["dataset"], r["trial"], r["graph"]) for r in records}
    for n, trial, graph in itertools.product(MOONS_N, range(MOONS_TRIALS), GRAPHS):
        name = f"two moons n={n}"
        if (name, trial, graph) in done:
            continue
        model = _estimator("Poisson", trial, graph=KNNGraph(**GRAPHS[graph]))
        _, y, observed, _ = fit_moons(n, trial, model)
        free = observed == -1
        records.append(
            {
                "dataset": name,
                "per_class": 1,
                "trial": trial,
                "graph": graph,
                "estimator": "Poisson",
                "accuracy": float(np.mean(model.transduction_[free] == y[free])),
            }
        )
        save()


summarize = summarize_accuracy


def write_report(results, out):
    cells = {
        (s["dataset"], s["per_class"], s["graph"], s["estimator"]): s for s in results["summary"]
    }
    lines = [
        '# GraphLearning\'s graph (`weights="kth-gaussian"`) against the default heat graph',
        "",
        produced_by(results, legacy_command("graph_kth_gaussian", DATA)),
        "",
        f"Transductive accuracy (%) on the unlabeled points, mean ± std over {TRIALS} trials "
        f"(two moons: {MOONS_TRIALS} draws of one label per class).",
    ]
    lines += accuracy_tables(
        results["summary"],
        datasets=DATASETS,
        per_class=PER_CLASS,
        estimators=ESTIMATORS,
        graphs=GRAPHS,
        graph_label=lambda graph: f"`{graph}`",
    )
    lines += ["", "Two moons, one label per class, `PoissonClassifier(graph=...)`:", ""]
    lines += ["| graph | " + " | ".join(f"n = {n:,}" for n in MOONS_N) + " |"]
    lines += ["|---" * (1 + len(MOONS_N)) + "|"]
    for graph in GRAPHS:
        entries = []
        for n in MOONS_N:
            s = cells.get((f"two moons n={n}", 1, graph, "Poisson"))
            entries.append("—" if s is None else mean_std(s, 2))
        lines.append(f"| `{graph}` | " + " | ".join(entries) + " |")
    write_readme(out, lines)


BENCHMARK = Study("graph_kth_gaussian", (run_digits, run_moons), summarize, write_report)
