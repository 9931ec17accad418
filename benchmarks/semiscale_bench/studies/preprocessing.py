"""Which estimator, which preprocessing: every classifier at its defaults, unscaled and scaled.

Protocol.  The seven semiscale classifiers at their defaults (``HarmonicClassifier()``,
``PoissonClassifier()``, ``LapRLSClassifier()``, ``NystromLapRLSClassifier()``, ``LapSVC()``,
``NystromLapSVC()``, ``SparseLapCVMClassifier()``; ``random_state`` = the draw where the
estimator takes one) beside two scikit-learn peers at theirs: ``LabelSpreading()`` on every
point and ``SVC()`` on the labeled points alone.  Data: scikit-learn's wine (178 points, 13
features) and breast_cancer (569, 30), and the shipped australian (690, 14) and usps (a fixed
random 2,000 of its 7,291 training images, seed 12345, 256 features).  Each set as given
(``"none"``) and standardized (``"standard"``: ``StandardScaler`` fitted on every point,
labeled or not; it reads no label).  1 and 5 labels per class, drawn by
:func:`~semiscale_bench.few_labels.draw_labels` with trials 0, 1, 2.  Accuracy on the
unlabeled points (``transduction_``; ``SVC().predict`` for the supervised peer) and the seconds
of the fit (``SVC``: fit and predict), medians over the three draws.

Run under the timing lock (writes ``results.json``, ``table.md``, ``table.csv`` and
``README.md`` to ``--out``)::

    SEMISCALE_DATA=/work/shared/datasets flock /tmp/w/timing.lock \\
        semiscale-bench preprocessing --out benchmarks/results/preprocessing

``docs/preprocessing.md`` includes ``table.md`` as written, so the guide's table is this run's.
"""

from __future__ import annotations

import csv
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale_bench.harness.study import SHARED_MACHINE, Study, produced_by, recorded, write_readme

#: (name, source, points kept): ``sklearn:NAME`` is ``sklearn.datasets.load_NAME``.
DATASETS = (
    ("wine", "sklearn:wine", None),
    ("breast_cancer", "sklearn:breast_cancer", None),
    ("australian", "australian", None),
    ("usps", "usps", 2000),
)
SCALINGS = ("none", "standard")
PER_CLASS = (1, 5)
TRIALS = (0, 1, 2)

#: The semiscale classifiers, in the table's order (class names in ``semiscale.models``).
CLASSIFIERS = (
    "HarmonicClassifier",
    "PoissonClassifier",
    "LapRLSClassifier",
    "NystromLapRLSClassifier",
    "LapSVC",
    "NystromLapSVC",
    "SparseLapCVMClassifier",
)
#: scikit-learn's peers: label spreading on every point, an SVC on the labeled points.
PEERS = ("LabelSpreading", "SVC (labeled only)")
METHODS = CLASSIFIERS + PEERS

KEY = ("dataset", "scaling", "per_class", "trial", "method")


def load(source, keep=None):
    """Dense float64 points and labels coded 0..k-1 of one dataset (never downloads)."""
    from semiscale.datasets import encode_labels
    from semiscale_bench.harness.data import load_dense

    if source.startswith("sklearn:"):
        import sklearn.datasets

        X, y = getattr(sklearn.datasets, f"load_{source[8:]}")(return_X_y=True)
    else:
        X, y = load_dense(source, max_samples=keep)
    return np.asarray(X, dtype=np.float64), encode_labels(y)[0].astype(np.int64)


def prepare(X, scaling):
    """``X`` as given (``"none"``) or standardized on every point (``"standard"``)."""
    if scaling == "none":
        return X
    from sklearn.preprocessing import StandardScaler

    return StandardScaler().fit_transform(X)


def labels_of(method, X, observed, trial):
    """The labels ``method`` at its defaults gives every point, fitted on ``(X, observed)``."""
    if method == "SVC (labeled only)":
        from sklearn.svm import SVC

        labeled = observed != -1
        return SVC().fit(X[labeled], observed[labeled]).predict(X)
    if method == "LabelSpreading":
        from sklearn.semi_supervised import LabelSpreading

        return LabelSpreading().fit(X, observed).transduction_
    import semiscale.models

    cls = getattr(semiscale.models, method)
    seeded = {"random_state": trial} if "random_state" in cls().get_params() else {}
    return cls(**seeded).fit(X, observed).transduction_


def fit_all(records, save, *, datasets=DATASETS, per_class=PER_CLASS, trials=TRIALS):
    """Append one record per (dataset, scaling, labels per class, trial, method) not recorded."""
    from semiscale_bench.few_labels import draw_labels

    done = recorded(records, KEY)
    for name, source, keep in datasets:
        keys = [
            (name, s, k, t, m) for s in SCALINGS for k in per_class for t in trials for m in METHODS
        ]
        if all(key in done for key in keys):
            continue
        X_raw, y = load(source, keep)
        for scaling in SCALINGS:
            X = prepare(X_raw, scaling)
            for k in per_class:
                for trial in trials:
                    observed = draw_labels(y, k, trial)
                    free = observed == -1
                    for method in METHODS:
                        if (name, scaling, k, trial, method) in done:
                            continue
                        record = dict(zip(KEY, (name, scaling, k, trial, method)))
                        start = time.perf_counter()
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            labels = labels_of(method, X, observed, trial)
                        record["seconds"] = time.perf_counter() - start
                        record["accuracy"] = float(np.mean(labels[free] == y[free]))
                        record["warnings"] = sorted({w.category.__name__ for w in caught})
                        records.append(record)
                    save()


def fits(records, save):
    fit_all(records, save)


def summarize(records):
    """Median accuracy and seconds over the trials of each (dataset, scaling, k, method)."""
    groups = {}
    for r in records:
        groups.setdefault(tuple(r[f] for f in KEY if f != "trial"), []).append(r)
    return [
        {
            **dict(zip(("dataset", "scaling", "per_class", "method"), key)),
            "trials": len(group),
            "accuracy": float(np.median([r["accuracy"] for r in group])),
            "seconds": float(np.median([r["seconds"] for r in group])),
            "warnings": sorted({w for r in group for w in r["warnings"]}),
        }
        for key, group in groups.items()
    ]


def _span(rows):
    accuracies = [100 * r["accuracy"] for r in rows]
    return f"{min(accuracies):.1f}–{max(accuracies):.1f} %"


def table_lines(summary):
    """The Markdown table (one row per dataset and method) and one reading line per setting."""
    cells = {(r["dataset"], r["scaling"], r["per_class"], r["method"]): r for r in summary}
    names = list(dict.fromkeys(r["dataset"] for r in summary))
    ks = sorted({r["per_class"] for r in summary})
    settings = [(k, s) for k in ks for s in SCALINGS]
    heads = [f"{k}/class, {'scaled' if s == 'standard' else 'unscaled'}" for k, s in settings]
    lines = [
        "| data | method | " + " | ".join(heads) + " |",
        "|---|---" + "|---" * len(heads) + "|",
    ]
    for name in names:
        for method in METHODS:
            entries = []
            for k, s in settings:
                r = cells.get((name, s, k, method))
                entries.append(
                    "—" if r is None else f"{100 * r['accuracy']:.1f} ({r['seconds']:.2f} s)"
                )
            lines.append(f"| {name} | {method} | " + " | ".join(entries) + " |")
    lines += [
        "",
        "Median accuracy on the unlabeled points in % (median seconds of the fit) over "
        f"{max(r['trials'] for r in summary)} draws of the labeled points.",
        "",
        "Range of the seven semiscale classifiers, unscaled → scaled, and the best method of "
        "each setting:",
        "",
    ]
    for name in names:
        for k in ks:
            ours = {
                s: [cells[(name, s, k, m)] for m in CLASSIFIERS if (name, s, k, m) in cells]
                for s in SCALINGS
            }
            if not all(ours.values()):
                continue
            every = [r for r in summary if r["dataset"] == name and r["per_class"] == k]
            best = max(every, key=lambda r: r["accuracy"])
            scaled = "scaled" if best["scaling"] == "standard" else "unscaled"
            lines.append(
                f"- {name}, {k}/class: {_span(ours['none'])} → {_span(ours['standard'])}; "
                f"best {best['method']} {scaled}, {100 * best['accuracy']:.1f} %."
            )
    warned = sorted(
        {(r["dataset"], r["method"], w) for r in summary for w in r["warnings"]},
    )
    if warned:
        lines += ["", "Warnings raised during the fits (the fits completed):", ""]
        lines += [f"- {name}, {method}: {w}" for name, method, w in warned]
    return lines


def write_report(results, out):
    out = Path(out)
    table = table_lines(results["summary"])
    (out / "table.md").write_text("\n".join(table) + "\n")
    with open(out / "table.csv", "w", newline="") as f:
        fields = ("dataset", "scaling", "per_class", "method", "trials", "accuracy", "seconds")
        writer = csv.DictWriter(f, fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(results["summary"])
    lines = [
        "# Which estimator, which preprocessing (issue 28)",
        "",
        produced_by(results, results["command"], SHARED_MACHINE),
        "",
        "Every classifier at its defaults on each set as given and standardized "
        "(`StandardScaler` on every point); usps is a fixed random 2,000 of its 7,291 training "
        "images. `table.md` (the table below, included by `docs/preprocessing.md`) and "
        "`table.csv` hold the medians, `results.json` every fit.",
        "",
        *table,
    ]
    write_readme(out, lines)


BENCHMARK = Study("preprocessing", (fits,), summarize, write_report)
