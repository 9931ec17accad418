"""Label diffusion in Nyström LapRLS: how many random-walk steps (issue 12, target (b)).

``NystromLapRLSClassifier`` compares each label with the ``label_diffusion``-step random-walk
average of the predictions around its point (:mod:`semiscale.graph.diffusion` says why: with
few labels the fit is the Galerkin approximation of Poisson learning, whose spikes at the
labeled points a span of kernel functions cannot follow).  This study measures the held-out
accuracy for ``label_diffusion`` in {0, 1, 2, 3, 5, 8} (0 is paper 000's LapRLS) beside
scikit-learn's LabelSpreading, to choose the default.

Protocol (the few-labels benchmark's inductive experiment, :mod:`semiscale_bench.few_labels`):

* usps (7,291 training images), mnist (the 10,000 test images), letter (15,000 training rows)
  and two moons (``make_two_moons(2000, noise=0.1, random_state=0)``), each split once by
  :func:`~semiscale_bench.few_labels.inductive.pool_split` (80 % pool, seed 0);
* k ∈ {1, 3, 10} labels per class drawn in the pool by
  :func:`~semiscale_bench.few_labels.draw_labels` (seed ``[t, k]``), trials t = 0..2;
* every variant is ``NystromLapRLSClassifier(label_diffusion=m, random_state=t)``, otherwise at
  its defaults, fitted on the pool with the Laplacian of ``KNNGraph()`` on the pool (built once
  per dataset and passed as ``laplacian=``, the graph the default ``fit`` builds; its seconds
  are not in the fits'), and scored by ``predict`` on the held-out points;
* LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99) on the same pool and labels.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench label_diffusion \\
        --out benchmarks/results/label_diffusion
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np

from semiscale_bench.harness.study import Study, command_of

#: The command of the records written before the command was recorded with them
#: (:func:`~semiscale_bench.harness.study.command_of`).
LEGACY_COMMAND = (
    "SEMISCALE_DATA=/work/shared/datasets python -m semiscale_bench.studies.label_diffusion"
    " --out benchmarks/results/label_diffusion"
)


DATASETS = ("usps", "mnist", "letter", "two_moons")
PER_CLASS = (1, 3, 10)
TRIALS = 3
STEPS = (0, 1, 2, 3, 5, 8)
LABEL_SPREADING = "LabelSpreading(knn, 10, 0.99)"


def _variants():
    return [f"label_diffusion={m}" for m in STEPS] + [LABEL_SPREADING]


def _estimator(variant, trial):
    from sklearn.semi_supervised import LabelSpreading

    from semiscale.models import NystromLapRLSClassifier

    if variant == LABEL_SPREADING:
        return LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)
    steps = int(variant.split("=")[1])
    return NystromLapRLSClassifier(label_diffusion=steps, random_state=trial)


def _split(name):
    from semiscale.datasets import make_two_moons
    from semiscale_bench.few_labels import load
    from semiscale_bench.few_labels.inductive import pool_split
    from semiscale_bench.few_labels.protocol import PROTOCOL

    if name == "two_moons":
        X, y = make_two_moons(PROTOCOL.moons_n, noise=PROTOCOL.moons_noise, random_state=0)
    else:
        X, y = load(PROTOCOL, name)
    pool, held_out = pool_split(X.shape[0], PROTOCOL.inductive_pool, PROTOCOL.inductive_seed)
    return X[pool], y[pool], X[held_out], y[held_out]


def run(records, save):
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels

    done = {(r["dataset"], r["per_class"], r["trial"], r["variant"]) for r in records}
    for name in DATASETS:
        keys = list(itertools.product(PER_CLASS, range(TRIALS), _variants()))
        if all((name, *key) in done for key in keys):
            continue
        X_pool, y_pool, X_test, y_test = _split(name)
        laplacian = KNNGraph().fit(X_pool).laplacian_
        for per_class, trial, variant in keys:
            if (name, per_class, trial, variant) in done:
                continue
            observed = draw_labels(y_pool, per_class, trial)
            model = _estimator(variant, trial)
            extra = {} if variant == LABEL_SPREADING else {"laplacian": laplacian}
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_pool, observed, **extra)
            seconds = time.perf_counter() - start
            info = getattr(model, "solver_info_", {})
            records.append(
                {
                    "dataset": name,
                    "per_class": per_class,
                    "trial": trial,
                    "variant": variant,
                    "accuracy": float(np.mean(model.predict(X_test) == y_test)),
                    "seconds": round(seconds, 3),
                    "n_iter": int(getattr(model, "n_iter_", 0)),
                    "converged": info.get("converged"),
                }
            )
            save()


def summarize(records):
    """Mean and std of the held-out accuracy, median seconds and iterations per cell."""
    groups = {}
    for r in records:
        groups.setdefault((r["dataset"], r["per_class"], r["variant"]), []).append(r)
    return [
        {
            "dataset": d,
            "per_class": k,
            "variant": v,
            "trials": len(rs),
            "mean": float(np.mean([r["accuracy"] for r in rs])),
            "std": float(np.std([r["accuracy"] for r in rs])),
            "seconds": float(np.median([r["seconds"] for r in rs])),
            "n_iter": float(np.median([r["n_iter"] for r in rs])),
            "all_converged": all(r["converged"] in (True, None) for r in rs),
        }
        for (d, k, v), rs in groups.items()
    ]


def write_report(results, out):
    cells = {(s["dataset"], s["per_class"], s["variant"]): s for s in results["summary"]}
    lines = [
        "# Label diffusion in Nyström LapRLS (issue 12, target (b))",
        "",
        "Produced by "
        f"`{command_of(results, LEGACY_COMMAND)}` "
        f"(commit {results['commit']}); protocol in that module's docstring. Machine: "
        f"{results['machine']['platform']}, Python {results['machine']['python']} (2 cores, "
        "shared: seconds are indicative).",
        "",
        f"Held-out accuracy (%), mean ± std over {TRIALS} trials, fitted on the 80 % pool with "
        "the pool's default graph passed in; median seconds per fit (graph excluded) and PCG "
        "iterations in brackets.",
    ]
    for name in DATASETS:
        lines += [
            "",
            f"{name}:",
            "",
            "| variant | " + " | ".join(f"{k}/class" for k in PER_CLASS) + " |",
            "|---" * (1 + len(PER_CLASS)) + "|",
        ]
        for variant in _variants():
            entries = []
            for k in PER_CLASS:
                s = cells.get((name, k, variant))
                if s is None:
                    entries.append("—")
                    continue
                flag = "" if s["all_converged"] else " (not converged)"
                its = "" if variant == LABEL_SPREADING else f", {s['n_iter']:.0f} it"
                entries.append(
                    f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f} "
                    f"[{s['seconds']:.1f} s{its}]{flag}"
                )
            lines.append(f"| {variant} | " + " | ".join(entries) + " |")
    (out / "README.md").write_text("\n".join(lines) + "\n")


BENCHMARK = Study(
    name="label_diffusion",
    steps=(run,),
    summarize=summarize,
    write_report=write_report,
    results="benchmarks/results/label_diffusion",
)
