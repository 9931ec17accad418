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

from semiscale_bench.harness.report import md_table
from semiscale_bench.harness.study import (
    DATA,
    SHARED_MACHINE,
    Study,
    group_stats,
    legacy_command,
    mean_std,
    produced_by,
    write_readme,
)
from semiscale_bench.studies._common import (
    LABEL_SPREADING,
    all_converged,
    fit_pool_variants,
    label_spreading,
)

DATASETS = ("usps", "mnist")
PER_CLASS = (1, 3)
TRIALS = 3
VARIANTS = {
    "defaults (s = 1,000, gamma = median)": {},
    "n_centers=2000": {"n_centers": 2000},
    "n_centers=4000": {"n_centers": 4000},
    'gamma="mean"': {"gamma": "mean"},
    'gamma="mean", n_centers=2000': {"gamma": "mean", "n_centers": 2000},
}


def _estimator(variant, trial):
    from semiscale.kernels import RBF
    from semiscale.models import NystromLapRLSClassifier

    if variant == LABEL_SPREADING:
        return label_spreading()
    params = dict(VARIANTS[variant])
    if "gamma" in params:
        params["kernel"] = RBF(gamma=params.pop("gamma"))
    return NystromLapRLSClassifier(random_state=trial, **params)


def _facts(model):
    return {
        "converged": getattr(model, "solver_info_", {}).get("converged"),
        "gamma": getattr(getattr(model, "kernel_", None), "gamma", None),
    }


def run(records, save):
    fit_pool_variants(
        records,
        save,
        datasets=DATASETS,
        per_class=PER_CLASS,
        trials=TRIALS,
        variants=[*VARIANTS, LABEL_SPREADING],
        make_estimator=_estimator,
        facts=_facts,
    )


def summarize(records):
    """Mean and std of the held-out accuracy and seconds per (dataset, k, variant)."""
    keys = ("dataset", "per_class", "variant")
    return group_stats(records, keys, medians=("seconds",), more=all_converged)


def write_report(results, out):
    cells = {(s["dataset"], s["per_class"], s["variant"]): s for s in results["summary"]}
    variants = [*VARIANTS, LABEL_SPREADING]
    lines = [
        "# Nyström LapRLS inductively: the span of the centers (issue 12, target (b))",
        "",
        produced_by(results, legacy_command("nystrom_span", DATA), SHARED_MACHINE),
        "",
        f"Held-out accuracy (%), mean ± std over {TRIALS} trials, fitted on the 80 % pool "
        "(graph built inside `fit`); median seconds per fit (graph included) in brackets.",
        "",
    ]
    rows = []
    for variant in variants:
        entries = []
        for d, k in itertools.product(DATASETS, PER_CLASS):
            s = cells.get((d, k, variant))
            if s is None:
                entries.append("—")
                continue
            flag = "" if s["all_converged"] else " (not converged)"
            entries.append(f"{mean_std(s)} [{s['seconds']:.1f} s]{flag}")
        rows.append([variant, *entries])
    columns = ["variant", *(f"{d} {k}/class" for d in DATASETS for k in PER_CLASS)]
    write_readme(out, lines + md_table(columns, rows))


BENCHMARK = Study("nystrom_span", (run,), summarize, write_report)
