"""Nyström-PCG with float64 against float32 kernel blocks (``kernel_dtype``).

Usage (both cores; nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/kernel_dtype.py [dataset ...]   # default: all but skin_nonskin

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol with the LapRLS parameters of
``benchmarks/center_selection.py``'s ``PARAMS`` (the 06:01 run's CV choice), Nyström-PCG with
its cap of 50 iterations.  Per ``kernel_dtype``: fit seconds (median of 3 after a warm-up fit,
the two settings alternating), PCG iterations, convergence and test RMSE.  Writes
``benchmarks/results/kernel_dtype.{jsonl,md}``.
"""

import json
import statistics
import sys
from pathlib import Path

from center_selection import PARAMS

from semiscale.bench._nystrom_protocol import (
    Protocol,
    fit_nystrom_pcg,
    repeat_problem,
    rmse,
    write_jsonl,
)

RESULTS = Path(__file__).parent / "results"
DTYPES = ("float64", "float32")


def run(name, protocol):
    problem = repeat_problem(name, protocol)
    seconds = {dtype: [] for dtype in DTYPES}
    fitted = {}
    for repeat in range(4):
        for dtype in DTYPES:
            est, fit_seconds = fit_nystrom_pcg(problem, PARAMS[name], protocol, kernel_dtype=dtype)
            if repeat:  # the first round warms up
                seconds[dtype].append(fit_seconds)
            fitted[dtype] = est
    row = dict(dataset=name, n=problem.split.n_train, s=problem.n_centers)
    for dtype, est in fitted.items():
        row[dtype] = dict(
            fit_seconds=statistics.median(seconds[dtype]),
            iterations=int(est.n_iter_),
            converged=bool(est.solver_info_["converged"]),
            rmse=rmse(est.predict(problem.split.X_test), problem.split.y_test),
        )
    print(json.dumps(row), flush=True)
    return row


def _cell(r):
    star = "" if r["converged"] else "*"
    return f"{r['fit_seconds']:.3g} | {r['iterations']}{star} | {r['rmse']:.4g}"


def main(names):
    protocol = Protocol()
    rows = [run(name, protocol) for name in names]
    write_jsonl(RESULTS / "kernel_dtype.jsonl", rows)
    lines = [
        "# Nyström-PCG: float64 against float32 kernel blocks",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/kernel_dtype.py {' '.join(names)}`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol at the 06:01 run's CV-chosen "
        "parameters; PCG to 1e-6, cap 50 (`*`: not reached). Fit seconds: median of 3 after a "
        "warm-up, the two settings alternating.",
        "",
        "| dataset | n | s | float64 s | it. | test RMSE | float32 s | it. | test RMSE |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['s']} | {_cell(r['float64'])} | "
            f"{_cell(r['float32'])} |"
        )
    (RESULTS / "kernel_dtype.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PARAMS))
