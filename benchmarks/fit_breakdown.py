"""Where a Nyström-PCG fit's time goes, phase by phase, next to paper 000's Table 3 time.

Usage (nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/fit_breakdown.py [dataset ...]   # default: all but skin_nonskin

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol with the LapRLS parameters of
``benchmarks/center_selection.py``'s ``PARAMS`` (the 06:01 run's CV choice).  After a warm-up
fit, ``n_fits`` fits (``N_FITS``); per phase the median over them of the seconds the estimator
records in ``solver_info_``: center selection, the right-hand side ``z = K_msᵀy`` (which fills
the K_ns cache: the kernel evaluation), the preconditioner (K_ss, its Cholesky factor, the
sampled Hessian and its factor) and the PCG loop; "rest" is the fit's wall time minus the
phases (input checks, λ scaling, training predictions).  The paper does not say what its
Table 3 time covers; its Nyström-CG times (e.g. phishing: 300 iterations in 2.47 s) are
consistent with matrix-vector products alone, so the PCG loop is the closest like-for-like
column.  Writes ``benchmarks/results/fit_breakdown.{jsonl,md}``.
"""

import json
import statistics
import sys
from pathlib import Path

from center_selection import PARAMS

from semiscale.bench import paper000
from semiscale.bench._nystrom_protocol import Protocol, fit_nystrom_pcg, repeat_problem, write_jsonl

RESULTS = Path(__file__).parent / "results"
N_FITS = {"cod-rna": 3, "connect-4": 3, "a9a": 5, "a8a": 5}  # others: 15
PHASES = ["centers_seconds", "rhs_seconds", "preconditioner_seconds", "iterations_seconds"]
LABELS = ["centers", "z = K_msᵀy (K_ns cache)", "preconditioner", "PCG loop", "rest"]


def run(name, protocol):
    problem = repeat_problem(name, protocol)
    fit_nystrom_pcg(problem, PARAMS[name], protocol)  # warm-up
    fits = [fit_nystrom_pcg(problem, PARAMS[name], protocol) for _ in range(N_FITS.get(name, 15))]
    per_fit = []
    for est, wall in fits:
        phases = [est.solver_info_[phase] for phase in PHASES]
        per_fit.append(phases + [wall - sum(phases), wall])
    medians = [statistics.median(column) for column in zip(*per_fit)]
    paper_iterations, paper_seconds = paper000.paper_iter_time(name, "Nyström-PCG")
    row = dict(
        dataset=name,
        n=problem.split.n_train,
        s=problem.n_centers,
        iterations=int(fits[-1][0].n_iter_),
        fits=len(fits),
        wall=medians[-1],
        **dict(zip(LABELS, medians[:-1])),
        paper_iterations=paper_iterations,
        paper_seconds=paper_seconds,
    )
    print(json.dumps(row), flush=True)
    return row


def main(names):
    protocol = Protocol()
    rows = [run(name, protocol) for name in names]
    write_jsonl(RESULTS / "fit_breakdown.jsonl", rows)
    lines = [
        "# Nyström-PCG fit time by phase",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/fit_breakdown.py {' '.join(names)}`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol at the 06:01 run's CV-chosen "
        "parameters. Seconds per fit, medians over the fits (column fits) after a warm-up, of "
        "the phases the estimator records in `solver_info_`; rest = wall − phases. The paper's "
        "columns: its Table 3 Nyström-PCG iterations and time (what that time covers is not "
        "stated).",
        "",
        "| dataset | n | s | fits | PCG it. | wall s | " + " | ".join(LABELS) + " | paper it. | "
        "paper s |",
        "|" + "---|" * (8 + len(LABELS)),
    ]
    for r in rows:
        cells = [f"{r[label]:.4f} ({100 * r[label] / r['wall']:.0f} %)" for label in LABELS]
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['s']} | {r['fits']} | {r['iterations']} | "
            f"{r['wall']:.4f} | " + " | ".join(cells) + f" | {r['paper_iterations']} | "
            f"{r['paper_seconds']} |"
        )
    (RESULTS / "fit_breakdown.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(PARAMS))
