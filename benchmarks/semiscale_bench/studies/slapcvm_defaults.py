"""SLapCVM at its defaults and its solve time against the data's size (issue 26).

Protocol.  (1) ``SparseLapCVMClassifier()`` at its defaults beside an RBF ``SVC()`` trained on
the labeled points only and ``LapSVC()``, on ``make_two_moons(2000, noise=0.1,
random_state=0)`` with the first point of each class labeled, and on scikit-learn's
breast_cancer (569 points, ``StandardScaler``, 3 labels per class drawn by
``numpy.random.default_rng(draw)``, draws 0-4); accuracy on the unlabeled points, seconds per
fit.  SLapCVM's random candidates move its accuracy, so it is fitted with ``random_state``
0, 1 and 2 on every set (the table averages them).  (2) The solve time
(``timings_["solve"]``: the graph excluded) of
``SparseLapCVMClassifier(kernel=RBF(gamma=4.0), C=100)`` — the paper 001 benchmark's preset,
θ = 100·|E|/m and mμ = 1 being the defaults — on ``make_two_moons(u + 2, noise=0.1,
random_state=0)`` for u = 10⁵, 3·10⁵, 10⁶, the graph built once per size and passed as
``laplacian=``, three fits per size (``random_state`` 0-2); the log-log slope between the
medians at 10⁵ and 10⁶ (the issue's target: ≤ 0.5).

Run under the timing lock (writes ``results.json`` and ``README.md`` to ``--out``)::

    flock /tmp/w/timing.lock semiscale-bench slapcvm_defaults \\
        --out benchmarks/results/slapcvm_defaults
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness.study import Study, legacy_command, produced_by, write_readme
from semiscale_bench.studies._common import first_of_each_class

SIZES = (100_000, 300_000, 1_000_000)
DRAWS = 5
REPEATS = 3


def _moons(n):
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(n, noise=0.1, random_state=0)
    return X, y, first_of_each_class(y)[1]


def _fit(method, X, y_ssl, seed):
    """Predictions at every training point and seconds."""
    from sklearn.svm import SVC

    from semiscale.models import LapSVC, SparseLapCVMClassifier

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "SVC (labeled only)":
            labeled = y_ssl != -1
            pred = SVC().fit(X[labeled], y_ssl[labeled]).predict(X)
        else:
            model = LapSVC() if method == "LapSVC()" else SparseLapCVMClassifier(random_state=seed)
            pred = model.fit(X, y_ssl).transduction_
    return pred, time.perf_counter() - start


def accuracy(records, save):
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    if any(r["kind"] == "accuracy" for r in records):
        return
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    sets = [("two moons 2,000", 0, *_moons(2000))]
    for draw in range(DRAWS):
        rng = np.random.default_rng(draw)
        labeled = np.concatenate(
            [rng.choice(np.flatnonzero(y == c), 3, replace=False) for c in (0, 1)]
        )
        y_ssl = np.full_like(y, -1)
        y_ssl[labeled] = y[labeled]
        sets.append(("breast_cancer", draw, X, y, y_ssl))
    for data, draw, X_, y_, y_ssl in sets:
        runs = [("SVC (labeled only)", 0), ("LapSVC()", 0)]
        runs += [("SparseLapCVMClassifier()", seed) for seed in range(REPEATS)]
        for method, seed in runs:
            pred, seconds = _fit(method, X_, y_ssl, seed)
            unlabeled = y_ssl == -1
            correct = float(np.mean(pred[unlabeled] == y_[unlabeled]))
            records.append(
                {
                    "kind": "accuracy",
                    "data": data,
                    "draw": draw,
                    "method": method,
                    "seed": seed,
                    "seconds": seconds,
                    "accuracy": correct,
                }
            )
    save()


def scaling(records, save):
    from sklearn.base import clone

    from semiscale.kernels import RBF
    from semiscale.models import SparseLapCVMClassifier
    from semiscale.models.slapcvm import SLAPCVM_GRAPH

    done = {r["u"] for r in records if r["kind"] == "scaling"}
    for u in SIZES:
        if u in done:
            continue
        X, y, y_ssl = _moons(u + 2)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the 6-NN graph leaves a few stray points apart
            L = clone(SLAPCVM_GRAPH).set_params(random_state=0).fit(X).laplacian_
        graph_seconds = time.perf_counter() - start
        for seed in range(REPEATS):
            model = SparseLapCVMClassifier(kernel=RBF(gamma=4.0), C=100.0, random_state=seed)
            model.fit(X, y_ssl, laplacian=L)
            records.append(
                {
                    "kind": "scaling",
                    "u": u,
                    "seed": seed,
                    "solve_seconds": model.timings_["solve"],
                    "graph_seconds": graph_seconds,
                    "core_set": model.core_set_size_[0],
                    "n_support": model.n_support_,
                    "accuracy": float(np.mean(model.transduction_ == y)),
                }
            )
        save()


def summarize(records):
    rows = {}
    for r in (r for r in records if r["kind"] == "accuracy"):
        rows.setdefault((r["data"], r["method"]), []).append(r)
    table = [
        {
            "data": data,
            "method": method,
            "fits": len(rs),
            "accuracy": float(np.mean([r["accuracy"] for r in rs])),
            "median_seconds": float(np.median([r["seconds"] for r in rs])),
            "max_seconds": float(np.max([r["seconds"] for r in rs])),
        }
        for (data, method), rs in rows.items()
    ]
    medians = [
        float(
            np.median(
                [r["solve_seconds"] for r in records if r["kind"] == "scaling" and r["u"] == u]
            )
        )
        for u in SIZES
    ]
    slope = float(np.log(medians[-1] / medians[0]) / np.log(SIZES[-1] / SIZES[0]))
    return {"accuracy": table, "solve_median_seconds": medians, "slope": slope}


def write_report(results, out):
    s = results["summary"]
    lines = [
        "# SLapCVM at its defaults, and its solve time against u (issue 26)",
        "",
        produced_by(
            results,
            legacy_command("slapcvm_defaults", "flock /tmp/w/timing.lock "),
            " (2 cores, shared with other work outside the timing lock: seconds are indicative).",
        ),
        "",
        "| data | method | fits | accuracy on the unlabeled points (%) | median s | max s |",
        "|---|---|---|---|---|---|",
    ]
    for r in s["accuracy"]:
        lines.append(
            f"| {r['data']} | {r['method']} | {r['fits']} | {100 * r['accuracy']:.1f} "
            f"| {r['median_seconds']:.2f} | {r['max_seconds']:.2f} |"
        )
    lines += [
        "",
        "Solve time at the paper's preset (`RBF(gamma=4.0)`, C = 100), graph excluded:",
        "",
        "| u | solve s (median of 3) | core set | accuracy (%) | graph s |",
        "|---|---|---|---|---|",
    ]
    for u, median in zip(SIZES, s["solve_median_seconds"]):
        rs = [r for r in results["records"] if r["kind"] == "scaling" and r["u"] == u]
        cores = ", ".join(str(r["core_set"]) for r in rs)
        accuracies = ", ".join(f"{100 * r['accuracy']:.1f}" for r in rs)
        lines.append(
            f"| {u:,} | {median:.4f} | {cores} | {accuracies} | {rs[0]['graph_seconds']:.1f} |"
        )
    verdict = "PASS" if s["slope"] <= 0.5 else "FAIL"
    lines += [
        "",
        f"Log-log slope of the solve time from u = 10⁵ to 10⁶: {s['slope']:.2f} "
        f"(target ≤ 0.5: {verdict}).",
    ]
    write_readme(out, lines)


BENCHMARK = Study("slapcvm_defaults", (accuracy, scaling), summarize, write_report)
