"""Streamed kernel product K(X, C)·v against the kernel block size.

Usage (one BLAS thread, nothing else running):

    OPENBLAS_NUM_THREADS=1 python benchmarks/block_size.py

Two shapes of paper 000's protocol on uniform random data: skin_nonskin's (171,540 × 3000,
d = 3, uncached K_ns) and a9a's (22,793 × 2280, d = 123).  For each block cap it times
``kernel_matmul`` (median of 3) with ``STREAM_BLOCK_BYTES`` set to the cap and a budget that
allows it.  Writes ``benchmarks/results/block_size.{json,md}``.
"""

import json
import time
from pathlib import Path

import numpy as np

import semiscale.linalg.blocked as blocked
from semiscale.bench._measure import machine_info
from semiscale.kernels import RBF

RESULTS = Path(__file__).parent / "results"
SHAPES = [("skin_nonskin-like", 171540, 3000, 3, 1.9), ("a9a-like", 22793, 2280, 123, 0.002)]
CAPS_MIB = [1024, 128, 32, 8, 4]


def main():
    rng = np.random.default_rng(0)
    rows = []
    for label, n, s, d, gamma in SHAPES:
        X = rng.uniform(-1, 1, (n, d))
        C, v = X[:s].copy(), rng.standard_normal((s, 1))
        kernel = RBF(gamma=gamma)
        for cap in CAPS_MIB:
            blocked.STREAM_BLOCK_BYTES = cap << 20
            times = []
            for _ in range(3):
                start = time.perf_counter()
                blocked.kernel_matmul(kernel, X, C, v, memory_budget=2 << 30)
                times.append(time.perf_counter() - start)
            row = dict(shape=label, n=n, s=s, d=d, block_mib=cap, seconds=float(np.median(times)))
            print(json.dumps(row), flush=True)
            rows.append(row)
    (RESULTS / "block_size.json").write_text(
        json.dumps({"machine": machine_info(), "rows": rows}, indent=1) + "\n"
    )
    lines = [
        "# Streamed K(X, C)·v against the kernel block cap (`STREAM_BLOCK_BYTES`)",
        "",
        "Command: `OPENBLAS_NUM_THREADS=1 python benchmarks/block_size.py` (median of 3, seconds;",
        "the ratio is against the 1024 MiB row of the same shape, same process).",
        "",
        "| shape | n × s, d | block cap MiB | seconds | vs 1024 MiB |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        base = next(b for b in rows if b["shape"] == r["shape"] and b["block_mib"] == 1024)
        lines.append(
            f"| {r['shape']} | {r['n']} × {r['s']}, {r['d']} | {r['block_mib']} | "
            f"{r['seconds']:.3f} | {base['seconds'] / r['seconds']:.2f}× |"
        )
    (RESULTS / "block_size.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
