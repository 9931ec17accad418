"""Nyström center selection: uniform against kmeans++ and rpcholesky on the bench's datasets.

Usage (both cores, as ``semiscale bench nystrom`` runs; nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/center_selection.py [dataset ...]   # default: all but skin_nonskin

Setting: ``semiscale bench nystrom``'s protocol (70/30 split, 10 % labeled, 8-NN heat graph,
svm-scale) with the LapRLS parameters its CV chose in the 2026-11-22 06:01 full run
(``PARAMS``), Nyström-PCG to relative residual 1e-6.  The centers are drawn independently of
the labels (``labeled_centers=False``, the paper's setting; with the estimators' default the
bench's ``m = s`` labeled points *are* the centers and the selection method never runs), at
``s = round(0.1 n)`` (the paper's 10 %; the bench rounds up, so s can differ by one) and
``s = round(0.01 n)`` (where the centers are scarce).  Per method: test RMSE, the relative
trace-norm Nyström error ``tr(K − K_nS K_SS⁺ K_Sn) / tr(K)`` of the fit's centers on 2000
random training points, PCG iterations, and the seconds of ``select_centers`` (a separate
draw, timed alone; median over the repeats).
Repeats 0–2, or repeat 0 only where ``n_train > 20000``.  Writes
``benchmarks/results/center_selection.{jsonl,md}``.
"""

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg as sla

from semiscale.bench._nystrom_protocol import (
    Protocol,
    fit_nystrom_pcg,
    repeat_problem,
    rmse,
    write_jsonl,
)
from semiscale.kernels import RBF
from semiscale.linalg.nystrom import CENTER_METHODS, jittered_cholesky, select_centers

RESULTS = Path(__file__).parent / "results"
#: CV choice of the full ``semiscale bench nystrom`` run started 2026-11-22 06:01
#: (``nystrom_table2.json``, rounded).
PARAMS = {
    "madelon": {"gamma": 0.02301, "ambient_reg": 1e-3, "intrinsic_reg": 0.001},
    "space_ga": {"gamma": 0.1307, "ambient_reg": 1e-6, "intrinsic_reg": 0.3162},
    "abalone": {"gamma": 0.3003, "ambient_reg": 1e-4, "intrinsic_reg": 0.3162},
    "phishing": {"gamma": 0.00625, "ambient_reg": 1e-4, "intrinsic_reg": 3.162},
    "a8a": {"gamma": 0.001953, "ambient_reg": 1e-4, "intrinsic_reg": 1.0},
    "a9a": {"gamma": 0.001953, "ambient_reg": 1e-4, "intrinsic_reg": 1.0},
    "ijcnn1": {"gamma": 0.05143, "ambient_reg": 1e-6, "intrinsic_reg": 0.1},
    "cod-rna": {"gamma": 0.06576, "ambient_reg": 1e-6, "intrinsic_reg": 0.001},
    "connect-4": {"gamma": 0.005208, "ambient_reg": 1e-6, "intrinsic_reg": 1.0},
}
CENTER_FRACTIONS = (0.01, 0.1)
ERROR_SAMPLE = 2000
SINGLE_REPEAT_ABOVE = 20000


def nystrom_trace_error(kernel, X, centers, sample):
    """``tr(K − K_nS K_SS⁺ K_Sn) / tr(K)`` over the rows ``sample`` (jittered ``K_SS``)."""
    L, _ = jittered_cholesky(kernel(X[centers]))
    features = sla.solve_triangular(L, kernel(X[centers], X[sample]), lower=True)
    diagonal = np.ones(sample.size)  # the RBF kernel has a unit diagonal
    return float(1.0 - np.sum(features**2) / diagonal.sum())


def run(name, protocol):
    rows = []
    params = PARAMS[name]
    kernel = RBF(gamma=params["gamma"])
    for seed in range(3):
        problem = repeat_problem(name, protocol, seed)
        X = problem.split.X_train
        n = X.shape[0]
        if seed and n > SINGLE_REPEAT_ABOVE:
            break
        sample = np.random.default_rng(seed).choice(n, min(ERROR_SAMPLE, n), replace=False)
        for fraction in CENTER_FRACTIONS:
            s = max(1, round(fraction * n))
            for method in CENTER_METHODS:
                # Timed alone (the fit includes it); the error is of the fit's own centers.
                start = time.perf_counter()
                select_centers(X, s, method, random_state=seed, kernel=kernel)
                select_seconds = time.perf_counter() - start
                est, fit_seconds = fit_nystrom_pcg(
                    problem,
                    params,
                    protocol,
                    n_centers=s,
                    center_selection=method,
                    labeled_centers=False,
                )
                row = dict(
                    dataset=name,
                    repeat=seed,
                    n_train=n,
                    center_fraction=fraction,
                    s=s,
                    method=method,
                    rmse=rmse(est.predict(problem.split.X_test), problem.split.y_test),
                    trace_error=nystrom_trace_error(kernel, X, est.center_index_, sample),
                    iterations=int(est.n_iter_),
                    converged=bool(est.solver_info_["converged"]),
                    select_seconds=select_seconds,
                    fit_seconds=fit_seconds,
                )
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def _summary(rows):
    """Per (dataset, fraction, method): means over repeats, median seconds."""
    groups = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["center_fraction"], r["method"]), []).append(r)
    out = {}
    for key, rs in groups.items():
        out[key] = dict(
            repeats=len(rs),
            s=rs[0]["s"],
            rmse=statistics.fmean(r["rmse"] for r in rs),
            trace_error=statistics.fmean(r["trace_error"] for r in rs),
            iterations=max(r["iterations"] for r in rs),
            converged=all(r["converged"] for r in rs),
            select_seconds=statistics.median(r["select_seconds"] for r in rs),
            fit_seconds=statistics.median(r["fit_seconds"] for r in rs),
        )
    return out


def main(names):
    protocol = Protocol()
    rows = [row for name in names for row in run(name, protocol)]
    write_jsonl(RESULTS / "center_selection.jsonl", rows)
    summary = _summary(rows)
    methods = list(CENTER_METHODS)
    lines = [
        "# Nyström center selection: uniform, kmeans++, rpcholesky",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/center_selection.py {' '.join(names)}`",
        "",
        "The `semiscale bench nystrom` protocol with the 06:01 run's CV-chosen LapRLS parameters; "
        "centers drawn independently of the labels (`labeled_centers=False`). Per cell: test "
        "RMSE (mean over repeats) / relative trace-norm Nyström error on 2000 training points "
        "(mean) / max PCG iterations / `select_centers` seconds (median). Repeats 0-2, "
        f"repeat 0 only above {SINGLE_REPEAT_ABOVE} training points (column r). "
        "`*` = PCG did not reach 1e-6 on some repeat.",
        "",
    ]
    for fraction in CENTER_FRACTIONS:
        lines += [
            f"## s = {fraction:.0%} of the training points",
            "",
            "| dataset | s | r | " + " | ".join(methods) + " |",
            "|---|---|---|" + "---|" * len(methods),
        ]
        for name in names:
            cells = [summary[(name, fraction, m)] for m in methods]
            first = cells[0]
            text = [
                f"{c['rmse']:.4f} / {c['trace_error']:.3g} / {c['iterations']}"
                f"{'' if c['converged'] else '*'} / {c['select_seconds']:.2f}"
                for c in cells
            ]
            head = f"| {name} | {first['s']} | {first['repeats']} | "
            lines.append(head + " | ".join(text) + " |")
        lines.append("")
    (RESULTS / "center_selection.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PARAMS))
