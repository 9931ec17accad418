"""Nyström-PCG fits with single-threaded BLAS vs every BLAS thread, by number of centers.

Usage (nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets python benchmarks/blas_threads.py

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol with the parameters pinned in
``benchmarks/laplacian_sample.py``.  Each fit runs with
``semiscale.models.nystrom_laprls.SINGLE_THREAD_BLAS_MAX_CENTERS`` patched so that BLAS is
single-threaded, or left with all its threads; the two alternate in one process after a warm-up
fit, median of ``N_FITS`` fits each (kernel blocks use every core either way).  Writes
``benchmarks/results/blas_threads.{jsonl,md}``: the evidence for that constant.
"""

import json
import statistics
import sys
from pathlib import Path

from laplacian_sample import PARAMS

import semiscale.models.nystrom_laprls as nystrom_laprls
from semiscale.bench._nystrom_protocol import Protocol, fit_nystrom_pcg, repeat_problem, write_jsonl

RESULTS = Path(__file__).parent / "results"
N_FITS = {"madelon": 15, "space_ga": 15, "abalone": 15, "phishing": 7, "ijcnn1": 7, "a8a": 5}


def run(name, protocol):
    problem = repeat_problem(name, protocol)

    def fit(single):
        nystrom_laprls.SINGLE_THREAD_BLAS_MAX_CENTERS = 10**9 if single else 0
        return fit_nystrom_pcg(problem, PARAMS[name], protocol)[1]

    fit(True)
    times = {True: [], False: []}
    for _ in range(N_FITS[name]):
        for single in times:
            times[single].append(fit(single))
    row = dict(
        dataset=name,
        n=problem.split.n_train,
        s=problem.n_centers,
        n_fits=N_FITS[name],
        seconds_single=round(statistics.median(times[True]), 4),
        seconds_all=round(statistics.median(times[False]), 4),
    )
    print(json.dumps(row), flush=True)
    return row


def main(names):
    default = nystrom_laprls.SINGLE_THREAD_BLAS_MAX_CENTERS
    protocol = Protocol()
    rows = [run(name, protocol) for name in names]
    nystrom_laprls.SINGLE_THREAD_BLAS_MAX_CENTERS = default
    write_jsonl(RESULTS / "blas_threads.jsonl", rows)
    lines = [
        "# Nyström-PCG fit: single-threaded BLAS vs every BLAS thread",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        "python benchmarks/blas_threads.py`",
        "",
        "Repeat 0 of the `semiscale bench nystrom` protocol, parameters pinned in "
        "`benchmarks/laplacian_sample.py`; median wall seconds of the fits, the two settings "
        f"alternated in one process. The default switches to one thread up to s = {default}.",
        "",
        "| dataset | n | s | fits | 1 BLAS thread | all BLAS threads | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['s']} | {r['n_fits']} | {r['seconds_single']} | "
            f"{r['seconds_all']} | {r['seconds_all'] / r['seconds_single']:.2f} |"
        )
    (RESULTS / "blas_threads.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or list(N_FITS))
