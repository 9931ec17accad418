"""Cost of the sampled-Hessian preconditioner's row sample t against PCG iterations.

Usage (single-threaded BLAS so that CPU seconds are comparable on a busy machine):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/preconditioner_sample.py a9a 8000

Setting: ``n`` random rows scaled by max |x|, 10 % labeled, s = 0.1 n uniform centers,
8-NN heat graph exp(-d²/4), RBF kernel with the median heuristic, tol 1e-6.  Prints, for
t ∈ {s/8, s/4, s/2, s, 2s}, the PCG iterations and the CPU seconds spent building the
preconditioner and iterating; appends a row per setting to
``benchmarks/results/preconditioner_sample.jsonl``.

The rows already in that file were measured when the builder subsampled the labeled term to the
same t rows; it now keeps every labeled row by default (``benchmarks/preconditioner_labeled.py``
compares the two), so new rows are not comparable with the old ones.
"""

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale.datasets import load_dataset
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.linalg import NystromLapRLSHessian, select_centers
from semiscale.scaling import solver_lambdas
from semiscale.solvers import cg, make_preconditioner


def main(name, n):
    warnings.simplefilter("ignore")
    X, y = load_dataset(name)
    rng = np.random.default_rng(0)
    index = rng.choice(len(y), min(n, len(y)), replace=False)
    X, y = X[index], y[index]
    n = len(y)
    X = X / np.abs(X).max(0).clip(1e-12)
    labeled = np.flatnonzero(rng.random(n) < 0.1)
    graph = KNNGraph(n_neighbors=8, bandwidth=np.sqrt(2)).fit(X)
    gamma = RBF(gamma="median").resolve(X, random_state=0).gamma
    s = n // 10
    centers = select_centers(X, s, random_state=0)
    out = Path(__file__).parent / "results" / "preconditioner_sample.jsonl"
    for ambient_reg, intrinsic_reg in [(1e-4, 1.0), (1e-6, 10.0)]:
        lam_a, lam_i = solver_lambdas(ambient_reg, intrinsic_reg, len(labeled), graph.trace_)
        for t in [s // 8, s // 4, s // 2, s, 2 * s]:
            H = NystromLapRLSHessian(
                RBF(gamma=gamma), X, centers, labeled, graph.laplacian_, lam_a, lam_i
            )
            z = H.rhs(y[labeled])
            t0 = time.process_time()
            P = make_preconditioner("sampled-hessian", H, n_rows=t, random_state=0)
            t_pre = time.process_time() - t0
            t0 = time.process_time()
            result = cg(H, z, preconditioner=P, tol=1e-6)
            t_cg = time.process_time() - t0
            row = dict(
                dataset=name,
                n=n,
                s=s,
                ambient_reg=ambient_reg,
                intrinsic_reg=intrinsic_reg,
                n_rows=t,
                iterations=int(result.n_iter),
                preconditioner_cpu_s=round(t_pre, 3),
                cg_cpu_s=round(t_cg, 3),
            )
            print(row, flush=True)
            with out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
