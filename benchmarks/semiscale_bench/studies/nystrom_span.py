"""Why Nyström LapRLS trails LabelSpreading inductively on mnist: the span of s centers.

Issue 12, target (b).  ``NystromLapRLSClassifier()`` fits f = Σ_j α_j k(c_j, ·) over s centers
(paper 000, eq. 5), so at one label per class its accuracy is bounded by how well s Gaussian
bumps on raw pixels can follow the graph's classes.  This study varies what sets that span —
the number of centers and the kernel width — and leaves the solve alone (the default fit is
converged: ``solver_info_["converged"]``, and ``solver="direct"`` gives the same predictions).

Protocol (the few-labels benchmark's inductive experiment, :mod:`semiscale_bench.few_labels`):

* usps (7,291 training images) and mnist (the 10,000 test images), split once by
  :func:`~semiscale_bench.few_labels.inductive.pool_split` (80 % pool, seed 0);
* k ∈ {1, 3} labels per class drawn in the pool by
  :func:`~semiscale_bench.few_labels.draw_labels` (seed ``[t, k]``), trials t = 0..2;
* every variant is fitted on the pool alone (its own default graph inside ``fit``) and scored
  by ``predict`` on the held-out points; ``random_state=t``;
* variants: the defaults, ``n_centers`` 2,000 and 4,000, ``kernel=RBF(gamma="mean")`` (paper
  001's width, 2–4× narrower than the default median heuristic on these sets), both together,
  and scikit-learn's ``LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)``.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench nystrom_span \\
        --out benchmarks/results/nystrom_span
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
    "SEMISCALE_DATA=/work/shared/datasets python -m semiscale_bench.studies.nystrom_span"
    " --out benchmarks/results/nystrom_span"
)


DATASETS = ("usps", "mnist")
PER_CLASS = (1, 3)
TRIALS = 3
LABEL_SPREADING = "LabelSpreading(knn, 10, 0.99)"
VARIANTS = {
    "defaults (s = 1,000, gamma = median)": {},
    "n_centers=2000": {"n_centers": 2000},
    "n_centers=4000": {"n_centers": 4000},
    'gamma="mean"': {"gamma": "mean"},
    'gamma="mean", n_centers=2000': {"gamma": "mean", "n_centers": 2000},
}


def _estimator(variant, trial):
    from sklearn.semi_supervised import LabelSpreading

    from semiscale.kernels import RBF
    from semiscale.models import NystromLapRLSClassifier

    if variant == LABEL_SPREADING:
        return LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)
    params = dict(VARIANTS[variant])
    if "gamma" in params:
        params["kernel"] = RBF(gamma=params.pop("gamma"))
    return NystromLapRLSClassifier(random_state=trial, **params)


def _split(name):
    from semiscale_bench.few_labels import load
    from semiscale_bench.few_labels.inductive import pool_split
    from semiscale_bench.few_labels.protocol import PROTOCOL

    X, y = load(PROTOCOL, name)
    pool, held_out = pool_split(X.shape[0], PROTOCOL.inductive_pool, PROTOCOL.inductive_seed)
    return X[pool], y[pool], X[held_out], y[held_out]


def run(records, save):
    from semiscale_bench.few_labels import draw_labels

    done = {(r["dataset"], r["per_class"], r["trial"], r["variant"]) for r in records}
    variants = [*VARIANTS, LABEL_SPREADING]
    for name in DATASETS:
        keys = list(itertools.product(PER_CLASS, range(TRIALS), variants))
        if all((name, *key) in done for key in keys):
            continue
        X_pool, y_pool, X_test, y_test = _split(name)
        for per_class, trial, variant in keys:
            if (name, per_class, trial, variant) in done:
                continue
            observed = draw_labels(y_pool, per_class, trial)
            model = _estimator(variant, trial)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_pool, observed)
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
                    "converged": info.get("converged"),
                    "gamma": getattr(getattr(model, "kernel_", None), "gamma", None),
                }
            )
            save()


def summarize(records):
    """Mean and std of the held-out accuracy and seconds per (dataset, k, variant)."""
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
            "all_converged": all(r["converged"] in (True, None) for r in rs),
        }
        for (d, k, v), rs in groups.items()
    ]


def write_report(results, out):
    cells = {(s["dataset"], s["per_class"], s["variant"]): s for s in results["summary"]}
    variants = [*VARIANTS, LABEL_SPREADING]
    lines = [
        "# Nyström LapRLS inductively: the span of the centers (issue 12, target (b))",
        "",
        "Produced by "
        f"`{command_of(results, LEGACY_COMMAND)}` "
        f"(commit {results['commit']}); protocol in that module's docstring. Machine: "
        f"{results['machine']['platform']}, Python {results['machine']['python']} (2 cores, "
        "shared: seconds are indicative).",
        "",
        f"Held-out accuracy (%), mean ± std over {TRIALS} trials, fitted on the 80 % pool "
        "(graph built inside `fit`); median seconds per fit (graph included) in brackets.",
        "",
        "| variant | " + " | ".join(f"{d} {k}/class" for d in DATASETS for k in PER_CLASS) + " |",
        "|---" * (1 + len(DATASETS) * len(PER_CLASS)) + "|",
    ]
    for variant in variants:
        entries = []
        for d, k in itertools.product(DATASETS, PER_CLASS):
            s = cells.get((d, k, variant))
            if s is None:
                entries.append("—")
                continue
            flag = "" if s["all_converged"] else " (not converged)"
            entries.append(
                f"{100 * s['mean']:.1f} ± {100 * s['std']:.1f} [{s['seconds']:.1f} s]{flag}"
            )
        lines.append(f"| {variant} | " + " | ".join(entries) + " |")
    (out / "README.md").write_text("\n".join(lines) + "\n")


BENCHMARK = Study(
    name="nystrom_span",
    steps=(run,),
    summarize=summarize,
    write_report=write_report,
    results="benchmarks/results/nystrom_span",
)
