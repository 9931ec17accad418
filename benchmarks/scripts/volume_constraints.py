"""Volume constraints as a post-processing of Laplace learning and LapRLS (issue 32, item 2).

Does the volume-threshold step of Poisson-MBO lift the other graph estimators when labels are
very few?  Each estimator is fitted on the few-labels benchmark's data and draws
(:func:`semiscale_bench.few_labels.data.load`, :func:`~semiscale_bench.few_labels.data.draw_labels`:
trial ``t`` with ``k`` labels per class draws with ``default_rng([t, k])``), with the shared
default graph ``KNNGraph(random_state=0)`` passed as ``laplacian=``.  Its training scores ``S``
(``scores_`` for Laplace and Poisson learning; for LapRLS the fitted decision values of the
training points, ``extension_["scores"]``, a binary problem's one column ``s`` read as the two
columns ``(0, s)``) are then relabeled on the unlabeled points ``u`` by

.. math::  \\hat y_i = \\arg\\max_c\\, (S_{ic} + \\lambda_c), \\qquad i \\in u,

the offsets ``λ`` chosen by :func:`semiscale.solvers.mbo.volume_threshold` so that every
class's count over all ``n`` points (the labeled points keep their labels) lies within
:func:`semiscale.solvers.mbo.volume_bounds` ``(b, n, tol)``: ``⌊n b_c / (1 + tol)⌋ ..
⌈n b_c (1 + tol)⌉``, exact counts at ``tol = 0``.  Rules, each against the estimator's own
labels (``transduction_``):

- ``est, tol 0`` / ``est, tol 0.5``: ``b`` the labeled points' class proportions (uniform
  here: every class gets the same number of labels), the realistic setting;
- ``true, tol 0``: ``b`` the true class proportions of all ``n`` points (the oracle).

Estimators: Laplace learning plain (``HarmonicClassifier(class_mass_normalization=False)``) and
with CMN (``HarmonicClassifier()``, CMN being its default: the crude volume correction) and
with CMN given the true class proportions (``class_prior=``: the crude form's oracle),
``LapRLSClassifier()`` (exact: usps only, the few-labels benchmark's cap at 8,000 points),
``NystromLapRLSClassifier()``, and ``PoissonClassifier()`` as the reference.  Accuracy is on the
unlabeled points, the mean over the draws; ``thr s`` is the median / largest seconds of one
threshold step (over every draw and rule) and ``sweeps`` its median / largest number of sweeps
over the classes, ``fit s`` the median fit (graph excluded).

Run (under the timing lock on a shared machine)::

    flock /tmp/w/timing.lock env SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/scripts/volume_constraints.py --out benchmarks/results/volume_constraints

It writes ``results.json`` (one record per fit; a run with ``--datasets`` / ``--per-class``
replaces those records and keeps the others) and ``tables.md`` to ``--out``; ``--render``
rewrites ``tables.md`` from ``results.json`` without fitting.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale.graph import KNNGraph
from semiscale.models import HarmonicClassifier
from semiscale.solvers.mbo import volume_bounds, volume_threshold
from semiscale_bench.few_labels.data import draw_labels, load
from semiscale_bench.few_labels.methods import METHODS
from semiscale_bench.few_labels.protocol import PROTOCOL
from semiscale_bench.harness import Sizes
from semiscale_bench.harness.machine import machine_info

DATASETS = ("usps", "mnist", "two moons")
PER_CLASS = (1, 3, 10)
#: (prior, volume tolerance) of each rule: "est" from the labels, "true" the oracle's.
RULES = {"est, tol 0": ("est", 0.0), "est, tol 0.5": ("est", 0.5), "true, tol 0": ("true", 0.0)}
#: name -> the few-labels registry's method (its defaults, its caps), or None: built here.
ESTIMATORS = {
    "Laplace": None,
    "Laplace + CMN": "Harmonic + CMN",
    "Laplace + CMN (true prior)": None,
    "LapRLS (exact)": "LapRLS (exact)",
    "Nyström LapRLS": "Nyström LapRLS",
    "Poisson": "Poisson",
}


def build(name, dataset, sizes, seed, true_prior):
    """The estimator ``name`` for trial ``seed``, or None where the benchmark caps it."""
    registered = ESTIMATORS[name]
    if registered is None:  # not among the benchmark's methods: built here
        cmn = name != "Laplace"
        prior = true_prior if name.endswith("(true prior)") else None
        return HarmonicClassifier(
            class_mass_normalization=cmn, class_prior=prior, random_state=seed
        )
    if seed not in PROTOCOL.plan(registered, dataset, sizes)[0]:
        return None
    return METHODS.build(
        registered, {"defaults": {}}, sizes, protocol=PROTOCOL, dataset=dataset, seed=seed
    )


def training_scores(est) -> np.ndarray:
    """The fitted scores of the training points, one column per class (module docstring)."""
    if hasattr(est, "scores_"):
        return np.asarray(est.scores_, dtype=np.float64)
    decision = np.asarray(est.extension_["scores"], dtype=np.float64)
    if decision.shape[1] == 1:  # binary: positive means classes_[1]
        return np.hstack([np.zeros_like(decision), decision])
    return decision


def thresholded(scores, observed, prior, tolerance):
    """Labels of every point after the volume threshold of the unlabeled rows, seconds, result."""
    n_classes = prior.size
    free = observed == -1
    labeled_counts = np.bincount(observed[~free], minlength=n_classes)
    tic = time.perf_counter()
    lower, upper = volume_bounds(prior, observed.size, tolerance)
    # the labeled points count towards their class's volume and keep their label
    lower = np.maximum(np.asarray(lower) - labeled_counts, 0)
    upper = np.maximum(np.asarray(upper) - labeled_counts, 0)
    result = volume_threshold(scores[free], lower, upper)
    seconds = time.perf_counter() - tic
    labels = observed.copy()
    labels[free] = result.labels
    return labels, seconds, result


def run(datasets, per_class, repeats, log):
    records = []
    for dataset in datasets:
        X, y = load(PROTOCOL, dataset)
        n_classes = int(y.max()) + 1
        true_prior = np.bincount(y, minlength=n_classes) / y.size
        sizes = Sizes(X.shape[0], X.shape[1], X.shape[0], n_classes)
        L = KNNGraph(random_state=PROTOCOL.graph_seed).fit(X).laplacian_
        for k in per_class:
            for trial in range(repeats):
                observed = draw_labels(y, k, trial)
                free = observed == -1
                est_prior = np.bincount(observed[~free], minlength=n_classes) / (~free).sum()
                priors = {"est": est_prior, "true": true_prior}
                for name in ESTIMATORS:
                    est = build(name, dataset, sizes, trial, true_prior)
                    if est is None:
                        continue
                    tic = time.perf_counter()
                    est.fit(X, observed, laplacian=L)
                    rec = {
                        "dataset": dataset,
                        "per_class": k,
                        "trial": trial,
                        "estimator": name,
                        "fit_seconds": time.perf_counter() - tic,
                        "accuracy": {"own": float(np.mean(est.transduction_[free] == y[free]))},
                        "threshold_seconds": {},
                        "satisfied": {},
                        "sweeps": {},
                    }
                    scores = training_scores(est)
                    for rule, (prior, tolerance) in RULES.items():
                        labels, seconds, result = thresholded(
                            scores, observed, priors[prior], tolerance
                        )
                        rec["accuracy"][rule] = float(np.mean(labels[free] == y[free]))
                        rec["threshold_seconds"][rule] = seconds
                        rec["satisfied"][rule] = bool(result.satisfied)
                        rec["sweeps"][rule] = int(result.n_sweeps)
                    records.append(rec)
                    accs = ", ".join(f"{r} {100 * a:.1f}" for r, a in rec["accuracy"].items())
                    log(f"{dataset} {k}/class trial {trial} {name}: {accs}")
    return records


def tables(records) -> str:
    """One markdown table per dataset: mean accuracy (%) per rule, seconds and sweeps."""
    lines = []
    columns = ["own", *RULES]
    for dataset in dict.fromkeys(r["dataset"] for r in records):
        lines += [
            f"### {dataset}",
            "",
            "| estimator | labels/class | draws | "
            + " | ".join(columns)
            + " | fit s | thr s | sweeps |",
            "|---|---|---|" + "---|" * (len(columns) + 3),
        ]
        mine = [r for r in records if r["dataset"] == dataset]
        for name in ESTIMATORS:
            for k in dict.fromkeys(r["per_class"] for r in mine):
                group = [r for r in mine if r["estimator"] == name and r["per_class"] == k]
                if not group:
                    continue
                accs = [100 * np.mean([r["accuracy"][c] for r in group]) for c in columns]
                fit = np.median([r["fit_seconds"] for r in group])
                thr = [s for r in group for s in r["threshold_seconds"].values()]
                sweeps = [s for r in group for s in r["sweeps"].values()]
                unmet = sum(not ok for r in group for ok in r["satisfied"].values())
                cells = " | ".join(f"{a:.1f}" for a in accs)
                note = f" ({unmet} unmet)" if unmet else ""
                timing = f"{fit:.2f} | {np.median(thr):.3f} / {max(thr):.3f}{note}"
                timing += f" | {np.median(sweeps):g} / {max(sweeps)}"
                lines.append(f"| {name} | {k} | {len(group)} | {cells} | {timing} |")
        lines.append("")
    return "\n".join(lines)


def write_tables(out: Path, results: dict) -> str:
    text = tables(results["records"])
    runs = "".join(
        f"- `{r['command']}` ({r['seconds']:.0f} s, code {r['code']})\n" for r in results["runs"]
    )
    machine = f"Machine (last run): {json.dumps(results['runs'][-1]['machine'])}\n\n"
    (out / "tables.md").write_text(f"Runs:\n\n{runs}\n{machine}{text}")
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--per-class", nargs="+", type=int, default=list(PER_CLASS))
    parser.add_argument("--repeats", type=int, default=PROTOCOL.repeats)
    parser.add_argument("--render", action="store_true", help="rewrite tables.md only, no fit")
    args = parser.parse_args(argv)
    path = args.out / "results.json"
    if args.render:
        print(write_tables(args.out, json.loads(path.read_text())))
        return
    warnings.simplefilter("ignore")  # disconnected-graph warnings: the unreached keep the prior
    start = time.perf_counter()
    records = run(args.datasets, args.per_class, args.repeats, lambda s: print(s, flush=True))
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/scripts/volume_constraints.py " + shlex.join(sys.argv[1:])
    run_info = {"command": command, "seconds": round(time.perf_counter() - start, 1)}
    code = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    ).stdout.strip()
    run_info.update(datasets=args.datasets, per_class=args.per_class, code=code)
    run_info["machine"] = machine_info()
    # a run per dataset (or label count) keeps each timed run short: the others' records stay
    old = json.loads(path.read_text()) if path.exists() else {"runs": [], "records": []}
    redone = {(d, k) for d in args.datasets for k in args.per_class}
    kept = [r for r in old["records"] if (r["dataset"], r["per_class"]) not in redone]
    results = {"runs": [*old["runs"], run_info], "records": kept + records}
    path.write_text(json.dumps(results, indent=1))
    write_tables(args.out, results)
    print(tables(records))


if __name__ == "__main__":
    main()
