"""Sampled-Hessian preconditioner: how many Laplacian rows t, cached and uncached K_ns.

Usage (both cores, as ``semiscale bench nystrom`` runs):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/laplacian_sample.py [dataset ...]

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol (70/30 split, svm-scale, 10 %
labeled, s = 10 % of n_train centers, the labeled points among them, 8-NN heat graph;
skin_nonskin: s = 3000 and a 1 GB budget, so K_ns is recomputed every iteration) with the
parameters in ``PARAMS`` (the CV choice of the 2026-11-22 02:06 full run), Nyström-PCG to
relative residual 1e-6 (cap 50).  For each t in {s/16, s/8, s/4} and the default rule
(``LAPLACIAN_ROWS_*`` in ``semiscale.solvers.preconditioners``) it records PCG iterations and
the fit's wall time: the median of 3 fits (1 on skin_nonskin, whose fits take a minute), each
after one untimed warm-up fit on the small datasets.  Prints a table and writes
``benchmarks/results/laplacian_sample.{jsonl,md}``.
"""

import json
import math
import statistics
import sys
from pathlib import Path

from semiscale.bench._nystrom_protocol import (
    Protocol,
    fit_nystrom_pcg,
    repeat_problem,
    rmse,
    write_jsonl,
)

RESULTS = Path(__file__).parent / "results"
#: CV choice of the full ``semiscale bench nystrom`` run started 2026-11-22 02:06
#: (``benchmarks/results/nystrom_table2.md`` of that run), pinned so reruns measure the same
#: problems.
PARAMS = {
    "madelon": {"gamma": 0.02301, "ambient_reg": 0.01, "intrinsic_reg": 0.001},
    "space_ga": {"gamma": 0.1307, "ambient_reg": 1e-6, "intrinsic_reg": 0.1},
    "abalone": {"gamma": 0.3003, "ambient_reg": 1e-4, "intrinsic_reg": 0.1},
    "phishing": {"gamma": 0.0015625, "ambient_reg": 1e-4, "intrinsic_reg": 1.0},
    "a8a": {"gamma": 0.00048828125, "ambient_reg": 1e-4, "intrinsic_reg": 10.0},
    "a9a": {"gamma": 0.001953125, "ambient_reg": 1e-4, "intrinsic_reg": 10.0},
    "ijcnn1": {"gamma": 0.05176, "ambient_reg": 1e-4, "intrinsic_reg": 0.001},
    "cod-rna": {"gamma": 0.06616, "ambient_reg": 1e-4, "intrinsic_reg": 0.001},
    "connect-4": {"gamma": 0.001302, "ambient_reg": 1e-4, "intrinsic_reg": 10.0},
    "skin_nonskin": {"gamma": 1.889, "ambient_reg": 1e-6, "intrinsic_reg": 10.0},
}
SLOW = {"skin_nonskin"}


def _rows_for(label, s):
    if label == "default":
        return None
    return max(1, math.ceil(s / int(label.split("/")[1])))


def run(name, protocol):
    problem = repeat_problem(name, protocol)
    s = problem.n_centers
    n_fits = 1 if name in SLOW else 3
    warm_up = 0 if name in SLOW else 1
    rows = []
    for label in ("s/16", "s/8", "s/4", "default"):
        t = _rows_for(label, s)
        options = {} if t is None else {"preconditioner_options": {"n_rows": t}}
        fits = [
            fit_nystrom_pcg(problem, PARAMS[name], protocol, **options)
            for _ in range(warm_up + n_fits)
        ]
        est = fits[-1][0]
        times = [seconds for _, seconds in fits[warm_up:]]
        cached = bool(est.solver_info_.get("cached"))
        if t is None:
            t = est.solver_info_["laplacian_rows"]  # the rule's size, after any growth
        row = dict(
            dataset=name,
            n=problem.split.n_train,
            s=s,
            K_ns_cached=cached,
            t_rule=label,
            t=t,
            iterations=int(est.n_iter_),
            converged=bool(est.solver_info_.get("converged")),
            fit_seconds=round(statistics.median(times), 3),
            n_fits=len(times),
            test_rmse=round(rmse(est.predict(problem.split.X_test), problem.split.y_test), 5),
        )
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _cell(row):
    star = "" if row["converged"] else "*"
    return f"{row['iterations']}{star} / {row['fit_seconds']}"


def main(names):
    protocol = Protocol()
    rows = [row for name in names for row in run(name, protocol)]
    write_jsonl(RESULTS / "laplacian_sample.jsonl", rows)
    lines = [
        "# Sampled-Hessian preconditioner: Laplacian sample size t",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        "python benchmarks/laplacian_sample.py`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol (labeled points as centers), "
        "parameters pinned in the script; PCG to 1e-6 (cap 50). Cells: iterations / fit wall "
        "seconds (median of 3 after a warm-up fit; skin_nonskin: 1 fit). 2 shared cores: "
        "times are noisy.",
        "",
        "| dataset | n | s | K_ns cached | t = s/16 | t = s/8 | t = s/4 | default t | default |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i in range(0, len(rows), 4):
        a, b, c, d = rows[i : i + 4]
        lines.append(
            f"| {a['dataset']} | {a['n']} | {a['s']} | {'yes' if a['K_ns_cached'] else 'no'} "
            f"| {_cell(a)} | {_cell(b)} | {_cell(c)} | {d['t']} | {_cell(d)} |"
        )
    lines += ["", "`*` = not converged within 50 iterations."]
    (RESULTS / "laplacian_sample.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PARAMS))
