"""Which edge weights carry few labels furthest: heat or self-tuning, plain or normalized?

Issue 12, part 1 (graphs that carry labels far).  ``KNNGraph(weights=...)`` with
``weights`` ∈ {"heat", "self-tuning"} × ``normalized`` ∈ {False, True}, everything else at its
defaults (``n_neighbors=8``, ``symmetrize="union"``, heat ``bandwidth="mean"``), each graph built
once per draw and passed as ``fit(X, y, laplacian=L)`` to every fit on that draw.

Protocol.

* Real sets (usps, letter; mnist is not stored here): seed s = 0..2 draws 2,000 points without
  replacement (``numpy.random.default_rng(s)``, as the defaults study); on the same points,
  1 and 10 labels per class are drawn with ``numpy.random.default_rng([s, labels per class])``.
  Transductive accuracy on the unlabeled points.
* Two moons: seed s = 0..9 draws ``make_two_moons(2000, noise=0.1, random_state=s)`` and one
  label per class (``numpy.random.default_rng(s)``, as the defaults study).
* Estimators at their defaults: ``LapRLSClassifier(random_state=s)`` (exact), and
  ``PoissonClassifier()`` when :mod:`semiscale.models` has it (on the unnormalized graphs only:
  it refuses a normalized Laplacian, whose null space is not the constants).

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    semiscale-bench graph_weights --out benchmarks/results/graph_weights
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np

from semiscale_bench.harness.report import md_table
from semiscale_bench.harness.study import (
    Study,
    group_stats,
    legacy_command,
    mean_std,
    produced_by,
    recorded,
    write_readme,
)
from semiscale_bench.studies.defaults import UNLABELED, _accuracy, _labels

REAL_DATASETS = ("usps", "letter")
REAL_N = 2000
REAL_SEEDS = 3
PER_CLASS = (1, 10)
MOONS_N = 2000
MOONS_SEEDS = 10
WEIGHTS = ("heat", "self-tuning")
NORMALIZED = (False, True)


def _graphs(X, seed):
    """One graph per (weights, normalized), built on all of ``X``."""
    from semiscale.graph import DisconnectedGraphWarning, KNNGraph

    graphs = {}
    for weights, normalized in itertools.product(WEIGHTS, NORMALIZED):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DisconnectedGraphWarning)
            graph = KNNGraph(weights=weights, normalized=normalized, random_state=seed).fit(X)
        graphs[_graph_name(weights, normalized)] = (graph, time.perf_counter() - start)
    return graphs


def _graph_name(weights, normalized):
    return f"weights={weights!r} normalized={normalized}"


def _estimators(seed):
    from semiscale import models
    from semiscale.models import LapRLSClassifier

    out = {"LapRLSClassifier()": LapRLSClassifier(random_state=seed, unlabeled=UNLABELED)}
    if hasattr(models, "PoissonClassifier"):
        out["PoissonClassifier()"] = models.PoissonClassifier(unlabeled=UNLABELED)
    return out


def _real_points(name, seed):
    from semiscale.datasets import encode_labels, load_dataset

    X, y = load_dataset(name)
    y = encode_labels(y)[0]
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], REAL_N, replace=False))
    X = X[rows]
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return X, np.asarray(y)[rows].astype(np.int64)


def _draws():
    """(dataset, seed, points loader, [(labels per class, label rng)])."""
    from semiscale.datasets import make_two_moons

    for name, seed in itertools.product(REAL_DATASETS, range(REAL_SEEDS)):
        yield (
            name,
            seed,
            lambda name=name, seed=seed: _real_points(name, seed),
            [(m, np.random.default_rng([seed, m])) for m in PER_CLASS],
        )
    for seed in range(MOONS_SEEDS):
        yield (
            "two moons",
            seed,
            lambda seed=seed: make_two_moons(MOONS_N, noise=0.1, random_state=seed),
            [(1, np.random.default_rng(seed))],
        )


def run(records, save):
    done = recorded(records, ("dataset", "seed", "per_class", "graph", "estimator"))
    for name, seed, load, label_draws in _draws():
        estimators = list(_estimators(seed))
        keys = [
            (name, seed, m, _graph_name(w, z), e)
            for (m, _), (w, z), e in itertools.product(
                label_draws, itertools.product(WEIGHTS, NORMALIZED), estimators
            )
            if not (z and e.startswith("Poisson"))
        ]
        if all(key in done for key in keys):
            continue
        X, y = load()
        graphs = _graphs(X, seed)
        for per_class, rng in label_draws:
            y_ssl = _labels(y, per_class, rng)
            for graph_name, (graph, graph_seconds) in graphs.items():
                for est_name, model in _estimators(seed).items():
                    if (name, seed, per_class, graph_name, est_name) in done or (
                        est_name.startswith("Poisson") and graph.normalized
                    ):
                        continue
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(X, y_ssl, laplacian=graph.laplacian_)
                    records.append(
                        {
                            "dataset": name,
                            "seed": seed,
                            "per_class": per_class,
                            "graph": graph_name,
                            "estimator": est_name,
                            "accuracy": _accuracy(model, y, y_ssl),
                            "seconds": round(time.perf_counter() - start, 3),
                            "graph_seconds": round(graph_seconds, 3),
                            "n_components": int(graph.n_components_),
                        }
                    )
                    save()


def summarize(records):
    """Mean and std of the accuracy per (dataset, labels per class, estimator, graph)."""
    return group_stats(records, ("dataset", "per_class", "estimator", "graph"), count="draws")


def write_report(results, out):
    summary = results["summary"]
    graphs = [_graph_name(w, z) for w, z in itertools.product(WEIGHTS, NORMALIZED)]
    lines = [
        "# Edge weights for few labels: heat vs self-tuning, plain vs normalized (issue 12)",
        "",
        produced_by(results, legacy_command("graph_weights")),
        "",
        f"Transductive accuracy (%), mean ± std over draws ({REAL_SEEDS} draws of {REAL_N} "
        f"points for the real sets, {MOONS_SEEDS} seeds of two moons, n = {MOONS_N}). Every "
        "graph is `KNNGraph(weights=..., normalized=...)`, other options at their defaults; the "
        "estimators are at their defaults and get the graph's Laplacian.",
        "",
    ]
    cells = {(s["dataset"], s["per_class"], s["estimator"], s["graph"]): s for s in summary}
    rows = sorted(
        {(s["estimator"], s["dataset"], s["per_class"]) for s in summary},
        key=lambda t: (t[0], t[1] == "two moons", t[1], t[2]),
    )
    table = []
    for est, dataset, m in rows:
        entries = []
        best = max(
            cells[(dataset, m, est, g)]["mean"] for g in graphs if (dataset, m, est, g) in cells
        )
        for g in graphs:
            s = cells.get((dataset, m, est, g))
            if s is None:
                entries.append("—")
                continue
            entries.append(f"**{mean_std(s)}**" if s["mean"] == best else mean_std(s))
        table.append([est, dataset, m, *entries])
    lines += md_table(["estimator", "dataset", "labels/class", *graphs], table)
    timing = {}
    for r in results["records"]:
        timing.setdefault((r["dataset"], r["graph"]), []).append(r["graph_seconds"])
    lines += [
        "",
        "Graph build time (s, mean over draws):",
        "",
    ]
    lines += md_table(
        ["dataset", *graphs],
        [
            [dataset]
            + [
                f"{np.mean(timing[(dataset, g)]):.2f}" if (dataset, g) in timing else "—"
                for g in graphs
            ]
            for dataset in dict.fromkeys(d for d, _ in timing)
        ],
    )
    write_readme(out, lines)


BENCHMARK = Study("graph_weights", (run,), summarize, write_report)
