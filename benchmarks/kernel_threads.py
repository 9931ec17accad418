"""Blocked RBF kernel products with one thread and with every core (``n_jobs``).

Usage (nothing else running):

    OPENBLAS_NUM_THREADS=2 python benchmarks/kernel_threads.py

Three shapes of paper 000's protocol on uniform random data: a9a's n = 20,000 speed-up problem
(20,000 × 2000, d = 123), connect-4's (47,290 × 4729, d = 126) and skin_nonskin's (171,540 ×
3000, d = 3, never cached).  For each it times ``kernel_matrix`` (the K_ns cache fill; not for
skin_nonskin, 4 GB) and ``kernel_matmul`` with one column (one streamed pass of an uncached PCG
iteration) with ``n_jobs=1`` and ``n_jobs=None`` (all cores), median of 3, alternating the two
settings.  Writes ``benchmarks/results/kernel_threads.{json,md}``.
"""

import json
import time
from pathlib import Path

import numpy as np

from semiscale._parallel import resolve_n_jobs
from semiscale.bench._measure import machine_info
from semiscale.kernels import RBF
from semiscale.linalg.blocked import kernel_matmul, kernel_matrix

RESULTS = Path(__file__).parent / "results"
SHAPES = [
    ("a9a 20k-like", 20000, 2000, 123, 0.002),
    ("connect-4-like", 47290, 4729, 126, 0.0013),
    ("skin_nonskin-like", 171540, 3000, 3, 1.9),
]


def _products(kernel, X, C, v):
    """The timed calls, each taking ``n_jobs``; no cache fill when K is over 3 GB."""
    products = {"kernel_matmul": lambda n_jobs: kernel_matmul(kernel, X, C, v, "1GB", n_jobs)}
    if X.shape[0] * C.shape[0] * 8 < 3 << 30:
        products["kernel_matrix"] = lambda n_jobs: kernel_matrix(kernel, X, C, "6GB", n_jobs)
    return products


def main():
    rng = np.random.default_rng(0)
    rows = []
    for label, n, s, d, gamma in SHAPES:
        X = rng.uniform(-1, 1, (n, d))
        C, v = X[:s].copy(), rng.standard_normal((s, 1))
        kernel = RBF(gamma=gamma)
        for product, call in _products(kernel, X, C, v).items():
            times = {1: [], None: []}
            for _ in range(3):
                for n_jobs in times:
                    start = time.perf_counter()
                    call(n_jobs)
                    times[n_jobs].append(time.perf_counter() - start)
            row = dict(
                shape=label,
                n=n,
                s=s,
                d=d,
                product=product,
                threads=resolve_n_jobs(None),
                seconds_1=float(np.median(times[1])),
                seconds_all=float(np.median(times[None])),
            )
            print(json.dumps(row), flush=True)
            rows.append(row)
    (RESULTS / "kernel_threads.json").write_text(
        json.dumps({"machine": machine_info(), "rows": rows}, indent=1) + "\n"
    )
    lines = [
        "# Blocked RBF products: one thread vs every core (`n_jobs`)",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 python benchmarks/kernel_threads.py` (median of 3, "
        "seconds, the two settings alternated in one process).",
        "",
        "| shape | n × s, d | product | n_jobs=1 | n_jobs=all (threads) | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['shape']} | {r['n']} × {r['s']}, {r['d']} | {r['product']} | "
            f"{r['seconds_1']:.3f} | {r['seconds_all']:.3f} ({r['threads']}) | "
            f"{r['seconds_1'] / r['seconds_all']:.2f}× |"
        )
    (RESULTS / "kernel_threads.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
