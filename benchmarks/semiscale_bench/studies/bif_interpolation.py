"""How approximate CV (paper 004's t-BIF) fares on fits that interpolate their labels (issue 14).

Leaving a labeled point out of a fit that reproduces it changes its prediction by a factor
``1 / (1 − S_jj)`` of its own influence ``S_jj`` (the leave-one-out formula), which the paper's
first-order step cannot see.  This study compares, on single grid points, the held-out accuracy
of exact t-fold CV with the approximations of
:func:`~semiscale.model_selection.bif_cross_val_score`: ``step="bif"`` (the paper's) and
``step="newton"`` (each fold's own Hessian), with the exact Hessian and with Nyström Hessians on
the labeled points plus c sampled columns.

Protocol: a1a, repeat 0 of paper 004's split (``make_split(..., seed=0, 0.7, 0.1,
scaler=standard_scaler)``: 1,124 training points, 112 labeled), classes coded 0/1, one kNN
graph (``KNNGraph(n_neighbors=8)``) on the training points whose induced subgraphs serve every
inductive fold (``SSLKFold(10, transductive=False, random_state=0)``) of the exact CV and of the
approximations; ``RBF(gamma=0.01)``.  Models: ``LapRLSClassifier(ambient_reg=1e-4,
intrinsic_reg=10)`` and ``LapSVC(formulation="primal", loss="huber_hinge", ambient_reg=1e-4,
intrinsic_reg=0.1)``.  Recorded: mean held-out accuracy and seconds.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench bif_interpolation \\
        --out benchmarks/results/bif_interpolation
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness.study import (
    SHARED_MACHINE,
    Study,
    legacy_command,
    produced_by,
    write_readme,
)

N_FOLDS = 10
COLUMNS = (34, 200, 500, "all")


def _problem():
    from semiscale.graph import KNNGraph
    from semiscale_bench.harness import load_dense, make_split
    from semiscale_bench.harness.data import standard_scaler

    X, y = load_dense("a1a")
    y = (y > 0).astype(np.float64)
    split = make_split(X, y, 0, 0.7, 0.1, scaler=standard_scaler)
    observed = np.where(np.isnan(split.y_observed), -1, split.y_observed).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L = KNNGraph(n_neighbors=8).fit(split.X_train).laplacian_
    return split.X_train, observed, L


def _models():
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSClassifier, LapSVC

    return {
        "LapRLS, ambient 1e-4, intrinsic 10": LapRLSClassifier(
            kernel=RBF(gamma=0.01), ambient_reg=1e-4, intrinsic_reg=10.0
        ),
        "LapSVM (Huber), ambient 1e-4, intrinsic 0.1": LapSVC(
            formulation="primal",
            loss="huber_hinge",
            kernel=RBF(gamma=0.01),
            ambient_reg=1e-4,
            intrinsic_reg=0.1,
        ),
    }


def run(records, save):
    from semiscale.model_selection import SSLKFold, bif_cross_val_score, ssl_cross_val_score

    X, y, L = _problem()
    cv = SSLKFold(N_FOLDS, transductive=False, random_state=0)
    done = {(r["model"], r["criterion"]) for r in records}
    for name, model in _models().items():
        criteria = [("exact CV", None)]
        criteria += [
            (f"{step}, {'exact' if c == 'all' else f'Nyström c = {c}'}", (step, c))
            for step in ("bif", "newton")
            for c in COLUMNS
        ]
        for criterion, option in criteria:
            if (name, criterion) in done:
                continue
            tic = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if option is None:
                    scores = ssl_cross_val_score(model, X, y, cv=cv, laplacian=L)
                else:
                    step, c = option
                    hessian = "exact" if c == "all" else "nystrom"
                    scores = bif_cross_val_score(
                        model,
                        X,
                        y,
                        cv=cv,
                        laplacian=L,
                        step=step,
                        hessian=hessian,
                        n_columns=0 if c == "all" else c,
                        random_state=0,
                    )
            records.append(
                {
                    "model": name,
                    "criterion": criterion,
                    "accuracy": float(np.mean(scores)),
                    "seconds": time.perf_counter() - tic,
                }
            )
            save()


def summarize(records):
    return records


def write_report(results, out):
    lines = [
        "# Approximate CV on fits that interpolate their labels (issue 14)",
        "",
        produced_by(results, legacy_command("bif_interpolation"), SHARED_MACHINE),
        "",
        f"a1a, 1,124 training points (112 labeled), {N_FOLDS} inductive folds; mean held-out "
        "accuracy of each criterion.",
        "",
        "| model | criterion | held-out accuracy | seconds |",
        "|---|---|---|---|",
    ]
    for r in results["summary"]:
        lines.append(
            f"| {r['model']} | {r['criterion']} | {r['accuracy']:.4f} | {r['seconds']:.1f} |"
        )
    write_readme(out, lines)


BENCHMARK = Study("bif_interpolation", (run,), summarize, write_report)
