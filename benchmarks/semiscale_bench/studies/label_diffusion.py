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

DATASETS = ("usps", "mnist", "letter", "two_moons")
PER_CLASS = (1, 3, 10)
TRIALS = 3
STEPS = (0, 1, 2, 3, 5, 8)


def _variants():
    return [f"label_diffusion={m}" for m in STEPS] + [LABEL_SPREADING]


def _estimator(variant, trial):
    from semiscale.models import NystromLapRLSClassifier

    if variant == LABEL_SPREADING:
        return label_spreading()
    steps = int(variant.split("=")[1])
    return NystromLapRLSClassifier(label_diffusion=steps, random_state=trial)


def _facts(model):
    info = getattr(model, "solver_info_", {})
    return {"n_iter": int(getattr(model, "n_iter_", 0)), "converged": info.get("converged")}


def run(records, save):
    fit_pool_variants(
        records,
        save,
        datasets=DATASETS,
        per_class=PER_CLASS,
        trials=TRIALS,
        variants=_variants(),
        make_estimator=_estimator,
        facts=_facts,
        graph=lambda variant: variant != LABEL_SPREADING,
    )


def summarize(records):
    """Mean and std of the held-out accuracy, median seconds and iterations per cell."""
    keys = ("dataset", "per_class", "variant")
    return group_stats(records, keys, medians=("seconds", "n_iter"), more=all_converged)


def write_report(results, out):
    cells = {(s["dataset"], s["per_class"], s["variant"]): s for s in results["summary"]}
    lines = [
        "# Label diffusion in Nyström LapRLS (issue 12, target (b))",
        "",
        produced_by(results, legacy_command("label_diffusion", DATA), SHARED_MACHINE),
        "",
        f"Held-out accuracy (%), mean ± std over {TRIALS} trials, fitted on the 80 % pool with "
        "the pool's default graph passed in; median seconds per fit (graph excluded) and PCG "
        "iterations in brackets.",
    ]
    for name in DATASETS:
        rows = []
        for variant in _variants():
            entries = []
            for k in PER_CLASS:
                s = cells.get((name, k, variant))
                if s is None:
                    entries.append("—")
                    continue
                flag = "" if s["all_converged"] else " (not converged)"
                its = "" if variant == LABEL_SPREADING else f", {s['n_iter']:.0f} it"
                entries.append(f"{mean_std(s)} [{s['seconds']:.1f} s{its}]{flag}")
            rows.append([variant, *entries])
        columns = ["variant", *(f"{k}/class" for k in PER_CLASS)]
        lines += ["", f"{name}:", "", *md_table(columns, rows)]
    write_readme(out, lines)


BENCHMARK = Study("label_diffusion", (run,), summarize, write_report)
