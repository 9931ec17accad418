"""Which heat-kernel width should the default kNN graph have? (issue 12, part 1)

The heat weights ``exp(−d²/2σ²)`` of ``KNNGraph`` used one global width, ``σ`` the mean kNN edge
length (``bandwidth="mean"``).  Where the distances concentrate — high intrinsic dimension, as
on digit images — every edge is then about as long as ``σ`` and the weights are nearly equal
(usps: the mean nearest-neighbour distance ``d̄_1`` is 0.80 of the mean 8th-neighbour distance
``d̄_k``, and an edge of length ``d̄_1`` weighs only 1.2 times one of length ``d̄_k``), while on
two moons (``d̄_1 / d̄_k`` = 0.32) the same rule gives a contrast of 2.4.
``bandwidth="contrast"`` fixes that contrast at ``e`` whatever the dimension
(``2σ² = d̄_k² − d̄_1²``).  This study measures it, as the new default with
``symmetrize="average"``, beside

* the former default (``bandwidth="mean"``, ``symmetrize="union"``);
* ``bandwidth="kth"`` (``exp(−4 d²/d̄_k²)``, GraphLearning's width with one scale for all
  points) with ``symmetrize="average"``;
* GraphLearning's own graph, ``weights="kth-gaussian"`` (a scale per point) averaged.

Protocol.

* Digits: the full usps (7,291) and mnist test (10,000) sets of the few-labels benchmark, its
  label draws (:func:`~semiscale_bench.few_labels.draw_labels`, 1 / 3 / 5 / 10 per class, 5
  trials), ``PoissonClassifier()`` and ``HarmonicClassifier(class_mass_normalization=True)`` at
  their defaults given each graph's Laplacian; transductive accuracy on the unlabeled points.
  The graph statistics ``d̄_1 / d̄_k`` and the contrast of each width are recorded per dataset.
* Two moons (noise 0.1, random_state 0) of 10,000, 100,000 and 1,000,000 points, one label per
  class (draw ``default_rng([0, 1])``), ``PoissonClassifier(graph=KNNGraph(...))`` at its
  defaults on the raw points: accuracy on 5,000 test points (random_state 1), seconds end to end
  (graph included, single runs, in this process, one after the other) and CG iterations.  The
  two widths made for digits (``"kth"``, ``"kth-gaussian"``) are not run at 1,000,000 points:
  ``"kth"`` stopped unconverged at the 1,000-iteration cap at 100,000 points in a trial run.

Nyström LapRLS with the new default is measured by the few-labels benchmark itself.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench graph_bandwidth \\
        --out benchmarks/results/graph_bandwidth
"""

from __future__ import annotations

import itertools

import numpy as np

from semiscale_bench.harness.report import md_table
from semiscale_bench.harness.study import DATA, Study, legacy_command, produced_by, write_readme
from semiscale_bench.studies._common import (
    accuracy_tables,
    fit_digit_graphs,
    fit_moons,
    summarize_accuracy,
)

DATASETS = ("usps", "mnist")
PER_CLASS = (1, 3, 5, 10)
TRIALS = 5
MOONS_N = (10_000, 100_000, 1_000_000)
#: Graphs not run on the largest two-moons set (ill-conditioned there, see the docstring).
MOONS_MAX_N = {"kth": 100_000, "kth-gaussian (GraphLearning's)": 100_000}
GRAPHS = {
    "mean, union (default before)": {"bandwidth": "mean", "symmetrize": "union"},
    "contrast, average (default)": {},
    "kth": {"bandwidth": "kth", "symmetrize": "average"},
    "kth-gaussian (GraphLearning's)": {"weights": "kth-gaussian", "symmetrize": "average"},
}
ESTIMATORS = ("Poisson", "Harmonic + CMN")


def _estimator(name, trial=None, graph=None):
    from semiscale.models import HarmonicClassifier, PoissonClassifier

    if name == "Poisson":
        return PoissonClassifier(graph=graph)
    return HarmonicClassifier(class_mass_normalization=True, graph=graph)


def _contrast_record(name, X):
    """``d̄_1 / d̄_k`` of the default graph's neighbours and each width's contrast."""
    from semiscale.graph import KNNGraph
    from semiscale.graph.knn import kneighbors
    from semiscale.graph.weights import resolve_bandwidth

    distances, _ = kneighbors(X, KNNGraph().n_neighbors, method="exact")
    near, far = distances.min(axis=1).mean(), distances.max(axis=1).mean()
    record = {"dataset": name, "kind": "stats", "nearest_over_kth": float(near / far)}
    for rule in ("mean", "contrast", "kth"):
        sigma = resolve_bandwidth(distances, rule)
        record[f"contrast_{rule}"] = float(np.exp((far**2 - near**2) / (2 * sigma**2)))
    return record


def run_digits(records, save):
    def add_statistics(name, X):
        if not any(r.get("kind") == "stats" and r["dataset"] == name for r in records):
            records.append(_contrast_record(name, X))

    fit_digit_graphs(
        records,
        save,
        datasets=DATASETS,
        per_class=PER_CLASS,
        trials=TRIALS,
        graphs=GRAPHS,
        estimators=ESTIMATORS,
        make_estimator=_estimator,
        extra={"kind": "fit"},
        on_load=add_statistics,
    )


def run_moons(records, save):
    from semiscale.datasets import make_two_moons
    from semiscale.graph import KNNGraph

    done = {(r["dataset"], r["graph"]) for r in records if r.get("kind") == "moons"}
    X_test, y_test = make_two_moons(5_000, noise=0.1, random_state=1)
    for n, graph in itertools.product(MOONS_N, GRAPHS):
        name = f"two moons n={n}"
        if (name, graph) in done or n > MOONS_MAX_N.get(graph, n):
            continue
        model = _estimator("Poisson", graph=KNNGraph(**GRAPHS[graph]))
        X, _, _, seconds = fit_moons(n, 0, model)
        if not any(r.get("kind") == "stats" and r["dataset"] == name for r in records):
            records.append(_contrast_record(name, X))
        records.append(
            {
                "kind": "moons",
                "dataset": name,
                "per_class": 1,
                "graph": graph,
                "estimator": "Poisson",
                "seconds": seconds,
                "n_iter": int(model.n_iter_),
                "accuracy": float(np.mean(model.predict(X_test) == y_test)),
            }
        )
        save()


summarize = summarize_accuracy


def write_report(results, out):
    records = results["records"]
    lines = [
        "# The default kNN graph's heat-kernel width",
        "",
        produced_by(
            results,
            legacy_command("graph_bandwidth", DATA),
            ", 2 cores (shared; seconds are single runs).",
        ),
        "",
        "Graph statistics (8 nearest neighbours): `d̄_1 / d̄_k` and the weight contrast "
        "`w(d̄_1) / w(d̄_k)` each width gives.",
        "",
    ]
    stats = [r for r in records if r.get("kind") == "stats"]
    rules = ("mean", "contrast", "kth")
    lines += md_table(
        ["data", "d̄_1 / d̄_k", *(f"contrast, {rule}" for rule in rules)],
        [
            [r["dataset"], f"{r['nearest_over_kth']:.3f}"]
            + [f"{r[f'contrast_{rule}']:.2f}" for rule in rules]
            for r in stats
        ],
    )
    lines += [
        "",
        f"Transductive accuracy (%) on the unlabeled points, mean ± std over {TRIALS} trials.",
    ]
    lines += accuracy_tables(
        results["summary"],
        datasets=DATASETS,
        per_class=PER_CLASS,
        estimators=ESTIMATORS,
        graphs=GRAPHS,
    )
    lines += [
        "",
        "Two moons, one label per class, `PoissonClassifier(graph=KNNGraph(...))` at its "
        "defaults: test accuracy (%), seconds end to end (graph included), CG iterations.",
        "",
        "| graph | " + " | ".join(f"n = {n:,}" for n in MOONS_N) + " |",
        "|---" * (1 + len(MOONS_N)) + "|",
    ]
    moons = {(r["dataset"], r["graph"]): r for r in records if r.get("kind") == "moons"}
    for graph in GRAPHS:
        entries = []
        for n in MOONS_N:
            r = moons.get((f"two moons n={n}", graph))
            entries.append(
                "not run"
                if r is None
                else f"{100 * r['accuracy']:.2f} %, {r['seconds']:.1f} s, {r['n_iter']} it."
            )
        lines.append(f"| {graph} | " + " | ".join(entries) + " |")
    write_readme(out, lines)


BENCHMARK = Study("graph_bandwidth", (run_digits, run_moons), summarize, write_report)
