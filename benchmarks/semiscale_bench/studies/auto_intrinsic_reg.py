"""Does ``intrinsic_reg="auto"`` still fit the default graph? (issue 12, part 3)

``intrinsic_reg="auto"`` is ``c · (n / l)²`` with ``c = AUTO_INTRINSIC_REG_FACTOR = 0.01``,
chosen by ``few_label_laprls`` on the former default graph (heat weights of the mean edge
length, united).  The default graph now has the ``"contrast"`` width, averaged
(``graph_bandwidth``), and the few-labels benchmark on it found exact ``LapRLSClassifier()`` less
accurate on usps at 1–5 labels per class while ``NystromLapRLSClassifier()`` gained.  This
study measures both against ``c``.

Protocol: the few-labels benchmark's datasets and draws
(:func:`~semiscale_bench.few_labels.draw_labels`), 1 / 3 / 10 labels per class, trials 0–2;
one default ``KNNGraph(random_state=0)`` per dataset, its Laplacian passed to every fit;
``intrinsic_reg = c · (n / l)²`` for ``c`` in ``FACTORS``, every other parameter at its
default (``random_state`` the trial).  Exact ``LapRLSClassifier`` on usps only (n ≤ 8,000, as
the benchmark); ``NystromLapRLSClassifier`` on usps, mnist and letter.  Transductive accuracy
on the unlabeled points.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench auto_intrinsic_reg \\
        --out benchmarks/results/auto_intrinsic_reg
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from semiscale_bench.harness.report import md_table
from semiscale_bench.harness.study import (
    DATA,
    Study,
    group_stats,
    legacy_command,
    mean_std,
    produced_by,
    recorded,
    write_readme,
)

FACTORS = (0.01, 0.1, 1.0, 10.0)
PER_CLASS = (1, 3, 10)
TRIALS = 3
#: (dataset, estimator) pairs measured.
RUNS = (
    ("usps", "LapRLS (exact)"),
    ("usps", "Nyström LapRLS"),
    ("mnist", "Nyström LapRLS"),
    ("letter", "Nyström LapRLS"),
)


def _estimator(name, intrinsic_reg, trial):
    from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier

    if name == "LapRLS (exact)":
        return LapRLSClassifier(intrinsic_reg=intrinsic_reg)
    return NystromLapRLSClassifier(intrinsic_reg=intrinsic_reg, random_state=trial)


def run_fits(records, save):
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels, load
    from semiscale_bench.few_labels.protocol import PROTOCOL

    done = recorded(records, ("dataset", "estimator", "factor", "per_class", "trial"))
    for dataset in dict.fromkeys(d for d, _ in RUNS):
        estimators = [e for d, e in RUNS if d == dataset]
        keys = list(itertools.product(estimators, FACTORS, PER_CLASS, range(TRIALS)))
        if all((dataset, *key) in done for key in keys):
            continue
        X, y = load(PROTOCOL, dataset)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            laplacian = KNNGraph(random_state=0).fit(X).laplacian_
        for estimator, factor, per_class, trial in keys:
            if (dataset, estimator, factor, per_class, trial) in done:
                continue
            observed = draw_labels(y, per_class, trial)
            n_labeled = int(np.count_nonzero(observed != -1))
            model = _estimator(estimator, factor * (len(y) / n_labeled) ** 2, trial)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, observed, laplacian=laplacian)
            free = observed == -1
            records.append(
                {
                    "dataset": dataset,
                    "estimator": estimator,
                    "factor": factor,
                    "per_class": per_class,
                    "trial": trial,
                    "accuracy": float(np.mean(model.transduction_[free] == y[free])),
                }
            )
            save()


def summarize(records):
    return group_stats(records, ("dataset", "estimator", "factor", "per_class"))


def write_report(results, out):
    cells = {
        (s["dataset"], s["estimator"], s["factor"], s["per_class"]): s for s in results["summary"]
    }
    lines = [
        '# `intrinsic_reg="auto"` = c · (n/l)² on the default graph',
        "",
        produced_by(results, legacy_command("auto_intrinsic_reg", DATA)),
        "",
        f"Transductive accuracy (%), mean ± std over {TRIALS} trials; c = 0.01 is the current "
        "rule; the best c of a row is in bold.",
        "",
    ]
    rows = []
    for dataset, estimator in RUNS:
        for k in PER_CLASS:
            row = [cells.get((dataset, estimator, c, k)) for c in FACTORS]
            best = max((s["mean"] for s in row if s is not None), default=None)
            entries = []
            for s in row:
                if s is None:
                    entries.append("—")
                    continue
                entries.append(f"**{mean_std(s)}**" if s["mean"] == best else mean_std(s))
            rows.append([dataset, estimator, k, *entries])
    columns = ["dataset", "estimator", "labels/class", *(f"c = {c:g}" for c in FACTORS)]
    write_readme(out, lines + md_table(columns, rows))


BENCHMARK = Study("auto_intrinsic_reg", (run_fits,), summarize, write_report)
