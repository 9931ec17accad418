"""Which preconditioner for the graph-Laplacian solves of Laplace and Poisson learning?

Issue 12, part 2 (transductive graph estimators solved by CG or algebraic multigrid).
``PoissonClassifier`` and ``HarmonicClassifier(class_mass_normalization=True)`` with
``solver="cg"`` (Jacobi-preconditioned CG) and ``solver="amg"`` (one smoothed-aggregation AMG
V-cycle, :mod:`semiscale.solvers.amg`), at the relative residuals ``tol=1e-6`` and (AMG only)
``tol=1e-3``, GraphLearning's default for Poisson learning (its ``min_iter=50`` is not imposed
here), on the default ``KNNGraph()`` built
once per dataset and passed as ``fit(X, y, laplacian=L)``.

Protocol.

* Data: two moons ``make_two_moons(n, noise=0.1, random_state=0)`` for n in ``MOONS_N``, one
  label per class; usps (all 7,291 training images), letter (the 15,000-row training split) and
  mnist (the 10,000 test images), 1 and 10 labels per class.  Labels drawn by
  :func:`semiscale_bench.few_labels.draw_labels` (seed ``[0, labels per class]``).
* Recorded per fit: CG iterations, solve seconds (``timings_["solve"]``: components, AMG setup,
  CG), transductive accuracy, and the share of unlabeled points on which the two solvers'
  labels agree.  Jacobi CG on 100,000 two-moons points runs once (about 16,000 iterations).

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/path/to/datasets semiscale-bench graph_solvers \\
        --out benchmarks/results/graph_solvers
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness.study import DATA, Study, command_of, legacy_command

MOONS_N = (10_000, 100_000)
REAL = (("usps", "train"), ("letter", "train"), ("mnist", "test"))
REAL_PER_CLASS = (1, 10)
#: (solver, tol): Jacobi at a tight tolerance is the reference every other run is compared with.
SOLVERS = (("cg", 1e-6), ("amg", 1e-6), ("amg", 1e-3))
ESTIMATORS = ("Poisson", "Harmonic + CMN")


def _estimator(name, solver, tol):
    from semiscale.models import HarmonicClassifier, PoissonClassifier

    if name == "Poisson":
        return PoissonClassifier(solver=solver, tol=tol, max_iter=50_000)
    return HarmonicClassifier(
        class_mass_normalization=True, solver=solver, tol=tol, max_iter=50_000
    )


def _problems():
    """(dataset name, loader of (X, y), labels per class)."""
    from semiscale.datasets import encode_labels, load_dataset, make_two_moons

    for n in MOONS_N:
        yield f"two moons n={n}", lambda n=n: make_two_moons(n, noise=0.1, random_state=0), (1,)
    for name, split in REAL:

        def load(name=name, split=split):
            X, y = load_dataset(name, split, download=False, dense=True)
            return np.asarray(X, dtype=np.float64), encode_labels(y)[0]

        yield name, load, REAL_PER_CLASS


def run(records, save):
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels

    done = {(r["dataset"], r["per_class"], r["estimator"], r["solver"], r["tol"]) for r in records}
    for dataset, load, per_class in _problems():
        keys = [(dataset, m, e, *s) for m in per_class for e in ESTIMATORS for s in SOLVERS]
        if all(key in done for key in keys):
            continue
        X, y = load()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L = KNNGraph(random_state=0).fit(X).laplacian_
        for m in per_class:
            y_ssl = draw_labels(y, m, 0)
            free = y_ssl == -1
            labels = {}
            for est_name in ESTIMATORS:
                for solver, tol in SOLVERS:
                    if (dataset, m, est_name, solver, tol) in done:
                        continue
                    model = _estimator(est_name, solver, tol)
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(X, y_ssl, laplacian=L)
                    labels[est_name, solver, tol] = model.transduction_[free]
                    other = labels.get((est_name, *SOLVERS[0]))
                    agree = (
                        None if solver == "cg" or other is None else labels[est_name, solver, tol]
                    )
                    records.append(
                        {
                            "dataset": dataset,
                            "n": int(X.shape[0]),
                            "per_class": m,
                            "estimator": est_name,
                            "solver": solver,
                            "tol": tol,
                            "n_iter": int(model.n_iter_),
                            "solve_seconds": round(model.timings_["solve"], 3),
                            "fit_seconds": round(time.perf_counter() - start, 3),
                            "converged": bool(
                                model.residuals_ is None or model.residuals_[-1].max() <= model.tol
                            ),
                            "accuracy": float(np.mean(model.transduction_[free] == y[free])),
                            "agreement_with_cg": (
                                None if agree is None else float(np.mean(agree == other))
                            ),
                        }
                    )
                    save()


def summarize(records):
    return sorted(
        records,
        key=lambda r: (
            r["n"],
            r["dataset"],
            r["per_class"],
            r["estimator"],
            r["solver"],
            -r["tol"],
        ),
    )


def write_report(results, out):
    rows = [
        "| dataset | n | labels/class | estimator | solver | tol | CG iterations | solve s | "
        "accuracy | labels equal to Jacobi's |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["summary"]:
        agree = "" if r["agreement_with_cg"] is None else f"{100 * r['agreement_with_cg']:.2f} %"
        iters = f"{r['n_iter']}" + ("" if r["converged"] else " (not converged)")
        rows.append(
            f"| {r['dataset']} | {r['n']} | {r['per_class']} | {r['estimator']} | {r['solver']} "
            f"| {r['tol']:g} | {iters} | {r['solve_seconds']:.2f} | {100 * r['accuracy']:.2f} % "
            f"| {agree} |"
        )
    text = "\n".join(
        [
            "# Graph-Laplacian solves: Jacobi-preconditioned CG against AMG-preconditioned CG",
            "",
            "Command: "
            f"`{command_of(results, legacy_command('graph_solvers', DATA))}`, "
            f"commit {results['commit']}, {results['machine']['platform']}, Python "
            f"{results['machine']['python']}, 2 cores (shared; seconds are single runs).",
            "",
            "Protocol: the module docstring of "
            "`benchmarks/semiscale_bench/studies/graph_solvers.py`: the default `KNNGraph()`, "
            "tol the relative residual at which CG stops.",
            "",
            *rows,
            "",
        ]
    )
    (out / "README.md").write_text(text)


BENCHMARK = Study("graph_solvers", (run,), summarize, write_report)
