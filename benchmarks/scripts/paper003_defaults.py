"""Do StorageFitClassifier's and TSVMClassifier's defaults beat the supervised baseline?

The project's rule: every estimator at its defaults is at least as good as the obvious supervised
baseline.  Protocol: australian, german.numer, splice, svmguide3, fourclass and phishing (its
first 3,000 rows of a fixed permutation, seed 0), binary labels (the larger label is class 1),
dense features as stored; 10 % labeled (``ssl_split(label_rate=0.1, random_state=r)``, stratified)
for ``--splits`` splits r = 0, 1, ...; AUC on the unlabeled rows (decision values).

Baselines, fitted on the labeled rows only: scikit-learn's ``SVC()`` at its defaults (RBF,
``gamma="scale"``, C = 1), ``SVC`` at the median-heuristic width (``RBF(gamma="median")``
resolved on all rows, as the semi-supervised estimators resolve it), both also at C = 10 (the
TSVM's candidate ``C``), and ``LogisticRegression()``.

StorageFitClassifier candidates (``NystromClusterKernel`` at its defaults but for the named
parameter): the width — ``"median"``, ``"scale"`` (scikit-learn's ``1/(d Var X)``, passed as a
number), ``"local"`` and the median heuristic's γ times 1/4, 1/2, 2, 4 — with the poly-step
transfer; the transfers linear, step, linear-step, polynomial at the median and ``"scale"``
widths; on each of these feature maps, the linear SVM's loss (hinge, squared hinge) and
``C`` ∈ {0.1, 1, 10} (the feature map does not depend on the classifier, so it is fitted once).
TSVMClassifier candidates: the width (median, scale, local) × C ∈ {1, 10} × C_unlabeled ∈
{0.1, 1}.  Every candidate's per-set mean AUC and the mean over the sets are in ``README.md``;
every (set, split, candidate) in ``results.csv``.  Run::

    OPENBLAS_NUM_THREADS=1 SEMISCALE_DATA=/work/shared/datasets .venv/bin/python \\
        benchmarks/scripts/paper003_defaults.py --out benchmarks/results/paper003_defaults

(``--part baselines,storage_fit,tsvm`` runs a part; ``--report`` only rewrites README.md from
the CSVs already in ``--out``.)
"""

from __future__ import annotations

import argparse
import csv
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.svm import SVC, LinearSVC

from semiscale.cluster_kernels import NystromClusterKernel
from semiscale.datasets import load_dataset, ssl_split
from semiscale.kernels import RBF
from semiscale.models import TSVMClassifier

SETS = ("australian", "german.numer", "splice", "svmguide3", "fourclass", "phishing")
#: Rows kept of the larger sets (a fixed permutation, seed 0).
MAX_ROWS = 3000
WIDTHS = ("median", "scale", "local", "median/4", "median/2", "median*2", "median*4")
TRANSFER_WIDTHS = ("median", "scale")
TRANSFERS = ("poly-step", "linear", "step", "linear-step", "polynomial")
CLASSIFIERS = tuple((loss, C) for loss in ("hinge", "squared_hinge") for C in (0.1, 1.0, 10.0))
TSVM_WIDTHS = ("median", "scale", "local")
TSVM_C = (1.0, 10.0)
TSVM_C_UNLABELED = (0.1, 1.0)
FIELDS = ("set", "split", "estimator", "variant", "auc", "seconds")


def load(name):
    X, y = load_dataset(name, dense=True)
    X = np.asarray(X, dtype=np.float64)
    y = (np.asarray(y) == np.unique(y)[-1]).astype(int)
    if X.shape[0] > MAX_ROWS:
        keep = np.random.default_rng(0).permutation(X.shape[0])[:MAX_ROWS]
        X, y = X[keep], y[keep]
    return X, y


def gamma_of(width, X):
    """A width name of the study as a number (the heuristics resolved on all rows, seed 0)."""
    if "/" in width or "*" in width:
        base, op, factor = width.partition("/") if "/" in width else width.partition("*")
        g = RBF(gamma=base).resolve(X, random_state=0).gamma
        return g / float(factor) if op == "/" else g * float(factor)
    return RBF(gamma=width).resolve(X, random_state=0).gamma


def auc(y, decision):
    return float(roc_auc_score(y, np.ravel(decision)))


def baselines(X, y, lab, gammas):
    u = ~lab
    models = {
        "SVC() (gamma='scale')": SVC(),
        "SVC(gamma=median)": SVC(gamma=gammas["median"]),
        "SVC(C=10) (gamma='scale')": SVC(C=10.0),
        "SVC(gamma=median, C=10)": SVC(gamma=gammas["median"], C=10.0),
        "LogisticRegression()": LogisticRegression(),
    }
    for name, model in models.items():
        tic = time.perf_counter()
        model.fit(X[lab], y[lab])
        yield name, auc(y[u], model.decision_function(X[u])), time.perf_counter() - tic


def storage_fit(X, y, lab, gammas, split):
    ys = np.where(lab, y, -1)
    u = ~lab
    maps = [(w, "poly-step") for w in WIDTHS]
    maps += [(w, t) for w in TRANSFER_WIDTHS for t in TRANSFERS if t != "poly-step"]
    for width, transfer in maps:
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # CutWarning: reported by the transformer's cut_
            F = NystromClusterKernel(
                gamma=gammas[width], transfer=transfer, random_state=split
            ).fit_transform(X, ys)
        seconds = time.perf_counter() - tic
        for loss, C in CLASSIFIERS:
            svm = LinearSVC(C=C, loss=loss, dual=True, max_iter=10_000, random_state=split)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                svm.fit(F[lab], y[lab])
            name = f"width={width} transfer={transfer} loss={loss} C={C:g}"
            yield name, auc(y[u], svm.decision_function(F[u])), seconds


def tsvm(X, y, lab, gammas, split):
    ys = np.where(lab, y, -1)
    u = ~lab
    for width in TSVM_WIDTHS:
        for C in TSVM_C:
            for C_u in TSVM_C_UNLABELED:
                tic = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = TSVMClassifier(
                        kernel=RBF(gamma=gammas[width]), C=C, C_unlabeled=C_u, random_state=split
                    ).fit(X, ys)
                seconds = time.perf_counter() - tic
                name = f"width={width} C={C:g} C_unlabeled={C_u:g}"
                yield name, auc(y[u], model.decision_function(X[u])), seconds


PARTS = {"baselines": baselines, "storage_fit": storage_fit, "tsvm": tsvm}


def run(part, sets, splits, out):
    path = out / f"{part}.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(FIELDS)
        for name in sets:
            X, y = load(name)
            gammas = {w: gamma_of(w, X) for w in set(WIDTHS) | set(TSVM_WIDTHS)}
            for split in range(splits):
                lab, _ = ssl_split(y, label_rate=0.1, random_state=split)
                args = (X, y, lab, gammas) if part == "baselines" else (X, y, lab, gammas, split)
                for variant, value, seconds in PARTS[part](*args):
                    writer.writerow((name, split, part, variant, f"{value:.6f}", f"{seconds:.4f}"))
                handle.flush()
                print(f"{part} {name} split {split} done", flush=True)


def read(out):
    rows = []
    for part in PARTS:
        path = out / f"{part}.csv"
        if path.exists():
            with path.open() as handle:
                rows += list(csv.DictReader(handle))
    return rows


def table(rows, estimator, sets, top=None):
    """Markdown rows: candidate, mean over sets, per-set means (sorted by the mean)."""
    per = {}
    for row in rows:
        if row["estimator"] == estimator:
            per.setdefault(row["variant"], {}).setdefault(row["set"], []).append(float(row["auc"]))
    lines = []
    for variant, by_set in per.items():
        means = [np.mean(by_set[s]) if s in by_set else np.nan for s in sets]
        lines.append((float(np.mean(means)), variant, means))
    lines.sort(key=lambda item: -item[0])
    head = "| candidate | mean | " + " | ".join(sets) + " |\n|---|---|" + "---|" * len(sets)
    body = [
        f"| {variant} | {mean:.4f} | " + " | ".join(f"{m:.4f}" for m in means) + " |"
        for mean, variant, means in lines[:top]
    ]
    return "\n".join([head, *body])


#: The defaults before and after this study, as candidates of the tables.
DEFAULTS = {
    "StorageFitClassifier(), before (hinge)": (
        "storage_fit",
        "width=median transfer=poly-step loss=hinge C=1",
    ),
    "StorageFitClassifier(), after (squared hinge)": (
        "storage_fit",
        "width=median transfer=poly-step loss=squared_hinge C=1",
    ),
    "TSVMClassifier(), before (C_unlabeled=1)": ("tsvm", "width=median C=1 C_unlabeled=1"),
    "TSVMClassifier(), after (C_unlabeled=0.1)": ("tsvm", "width=median C=1 C_unlabeled=0.1"),
}
BASELINES = ("SVC() (gamma='scale')", "SVC(gamma=median)")


def set_means(rows, estimator, variant, sets):
    by_set = {}
    for row in rows:
        if row["estimator"] == estimator and row["variant"] == variant:
            by_set.setdefault(row["set"], []).append(float(row["auc"]))
    return [float(np.mean(by_set[s])) if s in by_set else np.nan for s in sets]


def verdicts(rows, sets):
    """The defaults against each baseline: means, and the sets where the default is lower."""
    lines = [
        "| default | vs | mean | baseline mean | sets below the baseline |",
        "|---|---|---|---|---|",
    ]
    for name, (estimator, variant) in DEFAULTS.items():
        mine = set_means(rows, estimator, variant, sets)
        for base in BASELINES:
            theirs = set_means(rows, "baselines", base, sets)
            below = [f"{s} {a:.4f} < {b:.4f}" for s, a, b in zip(sets, mine, theirs) if a < b]
            lines.append(
                f"| {name} | {base} | {np.mean(mine):.4f} | {np.mean(theirs):.4f} | "
                + ("; ".join(below) or "none")
                + " |"
            )
    return "\n".join(lines)


def report(out, sets, splits):
    rows = read(out)
    text = [
        "# StorageFitClassifier's and TSVMClassifier's defaults against the supervised baseline",
        "",
        "Produced by `OPENBLAS_NUM_THREADS=1 SEMISCALE_DATA=/work/shared/datasets .venv/bin/python "
        "benchmarks/scripts/paper003_defaults.py --out benchmarks/results/paper003_defaults`; "
        "protocol in the script's docstring. "
        f"Machine: {platform.platform()}, Python {platform.python_version()}.",
        "",
        f"AUC on the unlabeled rows, 10 % labeled, mean over {splits} splits per set; the sets' "
        "mean in the second column.",
        "",
        "## The defaults against the baselines",
        "",
        verdicts(rows, sets),
        "",
        "What changed: StorageFitClassifier's default classifier is LinearSVC at scikit-learn's "
        "defaults (squared hinge, C = 1) instead of the hinge; TSVMClassifier's C_unlabeled is "
        "0.1 instead of 1. The widths stayed the median heuristic's: 'scale' was better on the "
        "mean for some candidates but lower on half the sets or more, and no transfer function "
        "of the cluster kernel (the paper's poly-step kept) beat SVC() on splice. The tables "
        "below have every candidate. The study's candidates resolve the median and local widths "
        "with seed 0 (the estimators with their random_state; the same on the sets of at most "
        "1,000 rows, all but svmguide3 and phishing).",
        "",
        "## Supervised baselines (labeled rows only)",
        "",
        table(rows, "baselines", sets),
        "",
        "## StorageFitClassifier: NystromClusterKernel + LinearSVC (every candidate)",
        "",
        table(rows, "storage_fit", sets),
        "",
        "## TSVMClassifier (every candidate)",
        "",
        table(rows, "tsvm", sets),
        "",
    ]
    (out / "README.md").write_text("\n".join(text))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--part", default=",".join(PARTS))
    parser.add_argument("--report", action="store_true", help="only rewrite README.md")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sets = args.sets.split(",")
    if not args.report:
        for part in args.part.split(","):
            run(part, sets, args.splits, args.out)
    report(args.out, sets, args.splits)


if __name__ == "__main__":
    main()
