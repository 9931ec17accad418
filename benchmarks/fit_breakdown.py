"""Where a Nyström-PCG fit's time goes: kernel cache, preconditioner, PCG, the rest.

Usage (nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets python benchmarks/fit_breakdown.py

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol with the parameters pinned in
``benchmarks/laplacian_sample.py``.  After a warm-up fit, ``N_FITS`` fits are timed without a
profiler (median wall seconds) and ``N_FITS`` more under ``cProfile``, whose cumulative times
split the fit into: the right-hand side ``z = K_msᵀy`` (which fills the K_ns cache: the kernel
evaluation), the preconditioner build (with K_ss and its Cholesky factor), the PCG loop, the
training predictions, and the rest (input checks, center selection, Python steps).  cProfile
slows Python-level code, so the shares are of the profiled total.  Writes
``benchmarks/results/fit_breakdown.{jsonl,md}``.
"""

import cProfile
import json
import pstats
import statistics
import sys
from pathlib import Path

from laplacian_sample import PARAMS

from semiscale.bench._nystrom_protocol import Protocol, fit_nystrom_pcg, repeat_problem, write_jsonl

RESULTS = Path(__file__).parent / "results"
N_FITS = {"madelon": 20, "phishing": 10, "a9a": 3, "connect-4": 2}
#: (label, file suffix, function name) whose cumulative time is a component.
PARTS = [
    ("K_ns cache + rhs", "linalg/operators.py", "rhs"),
    ("preconditioner", "solvers/preconditioners.py", "sampled_hessian_preconditioner"),
    ("PCG loop", "solvers/cg.py", "cg"),
    ("training predictions", "linalg/operators.py", "kns_matmul"),
]


def _cumulative(stats, suffix, function):
    return sum(
        row[3]
        for (path, _, name), row in stats.stats.items()
        if name == function and path.endswith(suffix)
    )


def run(name, protocol):
    problem = repeat_problem(name, protocol)
    fit_nystrom_pcg(problem, PARAMS[name], protocol)  # warm-up
    wall = [fit_nystrom_pcg(problem, PARAMS[name], protocol)[1] for _ in range(N_FITS[name])]
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(N_FITS[name]):
        est, _ = fit_nystrom_pcg(problem, PARAMS[name], protocol)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = _cumulative(stats, "models/_base.py", "fit") / N_FITS[name]
    parts = {label: _cumulative(stats, *where) / N_FITS[name] for label, *where in PARTS}
    parts["rest"] = total - sum(parts.values())
    row = dict(
        dataset=name,
        n=problem.split.n_train,
        s=problem.n_centers,
        iterations=int(est.n_iter_),
        fits=N_FITS[name],
        wall_median=round(statistics.median(wall), 4),
        profiled_total=round(total, 4),
        **{label: round(seconds, 4) for label, seconds in parts.items()},
    )
    print(json.dumps(row), flush=True)
    return row


def main(names):
    protocol = Protocol()
    rows = [run(name, protocol) for name in names]
    write_jsonl(RESULTS / "fit_breakdown.jsonl", rows)
    labels = [label for label, *_ in PARTS] + ["rest"]
    lines = [
        "# Nyström-PCG fit time by component",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        "python benchmarks/fit_breakdown.py`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol, parameters pinned in "
        "`benchmarks/laplacian_sample.py`. Wall: median of unprofiled fits. Components: "
        "seconds per fit under cProfile (which slows Python-level code; shares are of the "
        "profiled total). The preconditioner includes K_ss and both Cholesky factorizations.",
        "",
        "| dataset | n | s | PCG it. | wall s | profiled s | " + " | ".join(labels) + " |",
        "|" + "---|" * (6 + len(labels)),
    ]
    for r in rows:
        cells = [
            f"{r[label]:.4f} ({100 * r[label] / r['profiled_total']:.0f} %)" for label in labels
        ]
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['s']} | {r['iterations']} | {r['wall_median']} | "
            f"{r['profiled_total']} | " + " | ".join(cells) + " |"
        )
    (RESULTS / "fit_breakdown.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(N_FITS))
