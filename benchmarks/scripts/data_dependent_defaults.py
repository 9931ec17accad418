"""Defaults of ``DataDependentKernel``: graph, power, ridge, eta and the base width, by measurement.

Two small tasks: letter D vs O (the training split's 1,558 D and O rows) and usps 3 vs 8 (the
training split's 1,200 rows of 3 and 8).  For 2 and 10 labels per class and 2 label draws
(seeds 0, 1) the kernel is fitted on all the task's points (n̂ = 250 landmarks, labeled points
first; the sparse direct solver at tol 1e-6) for three graphs — ``paper`` (paper 002's 5-NN,
0–1 weights, union, normalized Laplacian), ``binary`` (the same, unnormalized ``D − W``) and
``heat`` (``KNNGraph()``, the library's default: 8-NN heat weights, average) — ``power`` in
{1, 2} and ``ridge`` in {1e-3, 1e-1}; ``eta`` in {1, 1e2, 1e4, 1e6} and the RBF width
``gamma = f · gamma_median`` (``RBF(gamma="median")``'s width, f in {1, 4, 16}) are varied with
``with_ambient`` (same landmarks and solves).  An SVM (``sklearn.svm.SVC(kernel="precomputed")``,
C in {1, 1000}) is trained on the labeled rows and scored on the unlabeled ones (transductive
error).  The RBF SVM with the same widths and C is the baseline.  Writes ``results.csv`` (one row
per task, labels, seed, setting) and ``README.md`` (mean error per setting over tasks, label
counts and seeds at C = 1000; the best settings; the defaults' rank).  Run::

    SEMISCALE_DATA=/work/shared/datasets python benchmarks/scripts/data_dependent_defaults.py \\
        --out benchmarks/results/data_dependent_defaults
"""

from __future__ import annotations

import argparse
import csv
import itertools
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

from semiscale.datasets import load_dataset
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF, DataDependentKernel

GRAPHS = ("paper", "binary", "heat")
POWERS = (1, 2)
RIDGES = (1e-3, 1e-1)
ETAS = (1.0, 1e2, 1e4, 1e6)
WIDTH_FACTORS = (1.0, 4.0, 16.0)
CS = (1.0, 1000.0)
LABELS = (2, 10)
SEEDS = (0, 1)


def make_graph(name):
    if name == "paper":
        return None  # DataDependentKernel's preset: paper_graph()
    if name == "binary":
        return KNNGraph(n_neighbors=5, weights="binary", symmetrize="union")
    return KNNGraph()


def tasks():
    X, y = load_dataset("letter")
    rows = np.isin(y, (4, 15))  # D = 4, O = 15 (letters numbered 1..26)
    yield "letter D vs O", X[rows], (y[rows] == 15).astype(int)
    X, y = load_dataset("usps")
    rows = np.isin(y, (3, 8))
    yield "usps 3 vs 8", X[rows], (y[rows] == 8).astype(int)


def draw_labels(y, per_class, seed):
    rng = np.random.default_rng(seed)
    labeled = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in (0, 1)]
    )
    y_ssl = np.full(y.shape, -1)
    y_ssl[labeled] = y[labeled]
    return y_ssl


def svm_errors(kernel, X, y, y_ssl):
    """Transductive error of the SVM for every C of CS (one kernel evaluation)."""
    lab, unl = y_ssl != -1, y_ssl == -1
    K_ll, K_ul = kernel(X[lab], X[lab]), kernel(X[unl], X[lab])
    errors = []
    for C in CS:
        svm = SVC(kernel="precomputed", C=C).fit(K_ll, y[lab])
        errors.append(float(np.mean(svm.predict(K_ul) != y[unl])))
    return errors


def run(out: Path):
    rows = []
    for task, X, y in tasks():
        gamma_median = RBF(gamma="median").resolve(X, random_state=0).gamma
        for per_class, seed in itertools.product(LABELS, SEEDS):
            y_ssl = draw_labels(y, per_class, seed)
            for f in WIDTH_FACTORS:
                errors = svm_errors(RBF(gamma=f * gamma_median), X, y, y_ssl)
                for C, error in zip(CS, errors):
                    rows.append((task, per_class, seed, "rbf", "", "", "", "", f, C, error))
            for graph, power, ridge in itertools.product(GRAPHS, POWERS, RIDGES):
                tic = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # condition warnings at p = 4, ridge 1e-3
                    fitted = DataDependentKernel(
                        RBF(gamma=gamma_median),
                        make_graph(graph),
                        power=power,
                        ridge=ridge,
                        solver="direct",
                        random_state=seed,
                    ).fit(X, y_ssl)
                for eta, f in itertools.product(ETAS, WIDTH_FACTORS):
                    kernel = fitted.with_ambient(eta=eta, base_kernel=RBF(gamma=f * gamma_median))
                    errors = svm_errors(kernel, X, y, y_ssl)
                    for C, error in zip(CS, errors):
                        rows.append(
                            (task, per_class, seed, "ddk", graph, power, ridge, eta, f, C, error)
                        )
                print(
                    f"{task} l={per_class} seed={seed} {graph} p={power} ridge={ridge}: "
                    f"{time.perf_counter() - tic:.1f}s",
                    flush=True,
                )
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "task",
                "labels_per_class",
                "seed",
                "kernel",
                "graph",
                "power",
                "ridge",
                "eta",
                "width",
                "C",
                "err",
            ]
        )
        writer.writerows(rows)
    write_readme(out, rows)


def _mean_table(rows, key):
    groups = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row[-1])
    return {k: (100 * np.mean(v), len(v)) for k, v in groups.items()}


def write_readme(out: Path, rows):
    C = CS[-1]
    ddk = [r for r in rows if r[3] == "ddk" and r[9] == C]
    rbf = [r for r in rows if r[3] == "rbf"]
    setting = lambda r: r[4:9]  # noqa: E731  graph, power, ridge, eta, width
    by_setting = _mean_table(ddk, setting)
    ranked = sorted(by_setting.items(), key=lambda kv: kv[1][0])
    per_task = {}
    for r in ddk:
        per_task.setdefault((*setting(r), r[0], r[1]), []).append(r[-1])
    tasks_ = sorted({r[0] for r in rows})
    labels = sorted({r[1] for r in rows})
    lines = [
        "# DataDependentKernel's defaults (graph, power, ridge, eta, base width)",
        "",
        "Produced by `SEMISCALE_DATA=/work/shared/datasets python "
        "benchmarks/scripts/data_dependent_defaults.py --out "
        "benchmarks/results/data_dependent_defaults`; protocol in the script's docstring. "
        f"Machine: {platform.platform()}, Python {platform.python_version()}.",
        "",
        f"Transductive SVM error (%, C = {C:g}) on the unlabeled points, mean over "
        f"{len(tasks_)} tasks x {len(labels)} label counts x {len(SEEDS)} seeds "
        "(width: factor of the median-heuristic gamma).",
        "",
        "The 10 best settings:",
        "",
        "| graph | power | ridge | eta | width | mean error | "
        + " | ".join(f"{t} {lab}/class" for t in tasks_ for lab in labels)
        + " |",
        "|---" * (6 + len(tasks_) * len(labels)) + "|",
    ]

    def line(key, mean):
        cells = [f"{100 * np.mean(per_task[(*key, t, lab)]):.1f}" for t in tasks_ for lab in labels]
        return f"| {key[0]} | {key[1]} | {key[2]:g} | {key[3]:g} | {key[4]:g} | {mean:.2f} | " + (
            " | ".join(cells) + " |"
        )

    for key, (mean, _) in ranked[:10]:
        lines.append(line(key, mean))
    lines += ["", "Mean error by single parameter (over all the others):", ""]
    for index, name in ((4, "graph"), (5, "power"), (6, "ridge"), (7, "eta"), (8, "width")):
        table = _mean_table(ddk, lambda r, i=index: r[i])
        cells = ", ".join(f"{name}={k}: {v[0]:.2f}" for k, v in sorted(table.items()))
        lines.append(f"- {cells}")
    lines += ["", "Best setting of each graph:", ""]
    for graph in GRAPHS:
        key, (mean, _) = next(kv for kv in ranked if kv[0][0] == graph)
        lines.append(line(key, mean))
    for c in CS:
        table = _mean_table([r for r in rbf if r[9] == c], lambda r: r[8])
        lines.append(
            f"\nRBF SVM baseline (C = {c:g}): "
            + ", ".join(f"width {k:g}: {v[0]:.2f}" for k, v in sorted(table.items()))
        )
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/data_dependent_defaults")
    )
    run(parser.parse_args().out)


if __name__ == "__main__":
    main()
