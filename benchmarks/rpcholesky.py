"""Randomly pivoted Cholesky: the accelerated (rejection-sampling) version against sequential.

Usage (both cores; nothing else running):

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/rpcholesky.py [dataset ...]   # default: phishing ijcnn1 a8a a9a

``semiscale.linalg.nystrom`` draws ``"rpcholesky"`` centers by accelerated RPCholesky (rounds
of proposals accepted by rejection sampling, one BLAS-3 update per round).  Until commit
bc5e6dc it ran the sequential algorithm, one pivot and one matrix-vector pass over the
``n × s`` factor at a time; :func:`sequential_rpcholesky` below is that algorithm, kept here
as the baseline.  Both draw pivots from the same law (``tests/test_nystrom.py`` checks the
accelerated one against the exact law).  Setting: the training split of repeat 0 of
``semiscale bench nystrom``'s protocol, ``s = round(0.1 n)`` centers, the RBF width of
``benchmarks/center_selection.py``'s ``PARAMS``.  Seconds: median of 3 draws (seeds 0–2),
the two versions alternating in one process; the relative trace-norm Nyström error of each
draw on 2000 training points is averaged.  Writes ``benchmarks/results/rpcholesky.{jsonl,md}``.
"""

import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from center_selection import PARAMS, nystrom_trace_error

from semiscale.bench import paper000
from semiscale.bench._nystrom_protocol import Protocol, load_data, prepare_split, write_jsonl
from semiscale.kernels import RBF
from semiscale.linalg.nystrom import select_centers

RESULTS = Path(__file__).parent / "results"


def sequential_rpcholesky(X, n_centers, rng, kernel):
    """Sequential RPCholesky (Chen, Epperly, Tropp & Webber 2023): pivot indices of ``X``."""
    n = X.shape[0]
    residual = np.asarray(kernel.diag(X), dtype=np.float64).copy()
    floor = 1e-14 * residual.max()
    F = np.zeros((n, n_centers))
    chosen = []
    for k in range(n_centers):
        weights = np.where(residual > floor, residual, 0)
        i = int(np.searchsorted(np.cumsum(weights), rng.random() * weights.sum(), side="right"))
        i = min(i, n - 1)
        g = np.asarray(kernel(X, X[i : i + 1]), dtype=np.float64)[:, 0] - F[:, :k] @ F[i, :k]
        chosen.append(i)
        if g[i] > floor:
            F[:, k] = g / math.sqrt(g[i])
            residual = np.maximum(residual - F[:, k] ** 2, 0)
        residual[chosen] = 0
    return np.asarray(chosen)


def run(name, protocol):
    X, y = load_data(paper000.DATASET_NAMES.get(name) or name, protocol)
    X = prepare_split(X, y, 0, protocol).X_train
    n = X.shape[0]
    s = round(0.1 * n)
    kernel = RBF(gamma=PARAMS[name]["gamma"])
    sample = np.random.default_rng(0).choice(n, min(2000, n), replace=False)
    seconds = {"sequential": [], "accelerated": []}
    errors = {"sequential": [], "accelerated": []}
    for seed in range(3):
        for version in seconds:
            start = time.perf_counter()
            if version == "sequential":
                centers = sequential_rpcholesky(X, s, np.random.default_rng(seed), kernel)
            else:
                centers = select_centers(X, s, "rpcholesky", random_state=seed, kernel=kernel)
            seconds[version].append(time.perf_counter() - start)
            errors[version].append(nystrom_trace_error(kernel, X, centers, sample))
    row = dict(
        dataset=name,
        n=n,
        s=s,
        **{f"{v}_seconds": statistics.median(t) for v, t in seconds.items()},
        **{f"{v}_trace_error": statistics.fmean(e) for v, e in errors.items()},
    )
    print(json.dumps(row), flush=True)
    return row


def main(names):
    protocol = Protocol()
    rows = [run(name, protocol) for name in names]
    write_jsonl(RESULTS / "rpcholesky.jsonl", rows)
    lines = [
        "# Randomly pivoted Cholesky: accelerated vs sequential",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/rpcholesky.py {' '.join(names)}`",
        "",
        "Training split of repeat 0 of the `semiscale bench nystrom` protocol, s = round(0.1 n). "
        "Seconds: median of 3 draws, versions alternating in one process. Trace error: mean "
        "relative trace-norm Nyström error on 2000 training points.",
        "",
        "| dataset | n | s | sequential s | accelerated s | speed-up | sequential error | "
        "accelerated error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r["sequential_seconds"] / r["accelerated_seconds"]
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['s']} | {r['sequential_seconds']:.2f} | "
            f"{r['accelerated_seconds']:.2f} | {ratio:.1f}× | {r['sequential_trace_error']:.3g} | "
            f"{r['accelerated_trace_error']:.3g} |"
        )
    (RESULTS / "rpcholesky.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:] or ["phishing", "ijcnn1", "a8a", "a9a"])
