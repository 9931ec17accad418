"""Sampled-Hessian preconditioner: exact vs subsampled labeled term, and the Laplacian sample t.

Usage (single-threaded BLAS; CPU seconds, so a busy machine inflates them only a little):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/preconditioner_labeled.py [dataset ...]

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol (70/30 split, svm-scale, 10 %
labeled, s = 10 % uniform centers, 8-NN heat graph) with the parameters in ``PARAMS`` (the
first full run's CV choice); Nyström-PCG to relative residual 1e-6, at most 100
iterations.  For each Laplacian sample t ∈ {s/16, s/8, s/4} it runs the labeled term
subsampled to t rows (the preconditioner before 2026-11-22) and exact (all m rows, the default
now).  Prints a table and writes ``benchmarks/results/preconditioner_labeled.{jsonl,md}``.
"""

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale.bench._nystrom_protocol import (
    Protocol,
    build_estimator,
    repeat_problem,
    rmse,
    write_jsonl,
)

#: Parameters chosen by the first full ``semiscale bench nystrom`` run's CV (2026-11-21, grid
#: gamma_median × {4, 1, 1/4}, ambient_reg {1e-6, 1e-4, 1e-2}, intrinsic_reg {0.1, ..., 100}),
#: pinned so that reruns measure the same problems.
PARAMS = {
    "madelon": {
        "laprls": {"gamma": 0.023008024706420507, "ambient_reg": 0.01, "intrinsic_reg": 0.1},
        "rls": {"gamma": 0.023008024706420507, "ambient_reg": 0.0001},
    },
    "space_ga": {
        "laprls": {"gamma": 0.13074919132205676, "ambient_reg": 1e-06, "intrinsic_reg": 0.1},
        "rls": {"gamma": 0.522996765288227, "ambient_reg": 0.0001},
    },
    "abalone": {
        "laprls": {"gamma": 0.300334724308029, "ambient_reg": 0.0001, "intrinsic_reg": 0.1},
        "rls": {"gamma": 0.300334724308029, "ambient_reg": 0.0001},
    },
    "phishing": {
        "laprls": {"gamma": 0.0015624999999999997, "ambient_reg": 0.0001, "intrinsic_reg": 1.0},
        "rls": {"gamma": 0.0015624999999999997, "ambient_reg": 0.0001},
    },
    "ijcnn1": {
        "laprls": {"gamma": 0.05175719308784552, "ambient_reg": 0.0001, "intrinsic_reg": 0.1},
        "rls": {"gamma": 0.05175719308784552, "ambient_reg": 0.0001},
    },
    "a8a": {
        "laprls": {"gamma": 0.001953125, "ambient_reg": 0.0001, "intrinsic_reg": 10.0},
        "rls": {"gamma": 0.0078125, "ambient_reg": 0.01},
    },
    "a9a": {
        "laprls": {"gamma": 0.001953125, "ambient_reg": 0.0001, "intrinsic_reg": 10.0},
        "rls": {"gamma": 0.0078125, "ambient_reg": 0.01},
    },
}
RESULTS = Path(__file__).parent / "results"
DEFAULT = ["madelon", "space_ga", "abalone", "phishing", "ijcnn1", "a8a", "a9a"]


def run(name, params, protocol):
    problem = repeat_problem(name, protocol)
    split, laplacian, s = problem.split, problem.laplacian, problem.n_centers
    m = int(np.isfinite(split.y_observed).sum())
    rows = []
    for fraction in (1 / 16, 1 / 8, 1 / 4):
        t = max(1, round(fraction * s))
        for labeled in ("subsampled", "exact"):
            options = {"n_rows": t, "n_labeled_rows": t if labeled == "subsampled" else m}
            est = build_estimator(
                "Nyström-PCG",
                params,
                name=name,
                n_train=split.n_train,
                s=s,
                seed=0,
                protocol=protocol,
            )
            est.set_params(max_iter=100, preconditioner_options=options)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.process_time()
                est.fit(split.X_train, split.y_observed, laplacian=laplacian)
                cpu = time.process_time() - t0
            row = dict(
                dataset=name,
                n=split.n_train,
                s=s,
                m=m,
                t=t,
                t_fraction=f"s/{round(1 / fraction)}",
                labeled_term=labeled,
                iterations=int(est.n_iter_),
                converged=bool(est.solver_info_.get("converged")),
                fit_cpu_seconds=round(cpu, 3),
                test_rmse=round(rmse(est.predict(split.X_test), split.y_test), 5),
            )
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def _cell(row):
    star = "" if row["converged"] else "*"
    return f"{row['iterations']}{star} / {row['fit_cpu_seconds']}"


def main(names):
    protocol = Protocol()
    rows = [row for name in names for row in run(name, PARAMS[name], protocol)]
    write_jsonl(RESULTS / "preconditioner_labeled.jsonl", rows)
    lines = [
        "# Sampled-Hessian preconditioner: labeled term subsampled (t rows) vs exact",
        "",
        "Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
        "SEMISCALE_DATA=/work/shared/datasets python benchmarks/preconditioner_labeled.py`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol, parameters pinned in the script "
        "(the first full run's CV choice); PCG to "
        "1e-6 (cap 100). Cells: iterations / fit CPU seconds.",
        "",
        "| dataset | n | s | m | t | labeled subsampled to t | labeled exact (m rows) |",
        "|---|---|---|---|---|---|---|",
    ]
    for i in range(0, len(rows), 2):
        a, b = rows[i], rows[i + 1]
        lines.append(
            f"| {a['dataset']} | {a['n']} | {a['s']} | {a['m']} | {a['t']} ({a['t_fraction']}) "
            f"| {_cell(a)} | {_cell(b)} |"
        )
    lines += ["", "`*` = not converged within 100 iterations."]
    (RESULTS / "preconditioner_labeled.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
