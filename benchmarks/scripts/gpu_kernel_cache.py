"""Where a 10⁶-point NystromLapRLSClassifier fit under TorchOps spends its time, and K_ns's cache.

Issue 31: the problem of ``gpu_backends.py``'s whole fit (10⁶ points, d = 10, 1,000 labels, a
precomputed chain Laplacian, RBF).  Four fits on the device torch offers (CUDA when present),
after a small warm-up fit: s = 2,000 at ``memory_budget="4GB"`` (that script's setting) and at
the default budget (cProfile's 35 top functions by cumulative time printed), and s = 1,000 with
a host ``K_ns`` cache allowed (``kernel_cache_bytes=None``: 8 GB, filled after the first passes
and kept on the device) and refused (``0``: its blocks recomputed at every product).  Each line:
seconds, whether the cache was filled, PCG iterations, the fit's ``timings_`` and
``solver_info_`` seconds, the bytes :class:`TorchOps` moved each way and its transfer seconds.
Prints every line and writes them to ``--out``/kernel_cache.log.  Run from the repository root
(``--n`` smaller to try it on a CPU)::

    python benchmarks/scripts/gpu_kernel_cache.py --out benchmarks/results/gpu_backends
"""

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_backends import GAMMA, chain_laplacian, points  # noqa: E402

from semiscale.backends._torch import TorchOps  # noqa: E402
from semiscale.kernels import RBF  # noqa: E402
from semiscale.linalg.ops import use_ops  # noqa: E402
from semiscale.models import NystromLapRLSClassifier  # noqa: E402


def problem(n):
    """``gpu_backends.py``'s whole-fit problem: points, 1,000 labels, chain Laplacian."""
    X, y = points(n, 10, seed=2)
    L = chain_laplacian(X, n_neighbors=5)
    rng = np.random.default_rng(3)
    y_ssl = np.full(n, -1)
    labeled = rng.choice(n, 1000, replace=False)
    y_ssl[labeled] = y[labeled]
    return X, y_ssl, L


def fit(data, log, s, cache_bytes="default", budget=None, profile=False):
    """One fit with ``s`` centers; ``cache_bytes`` sets ``TorchOps.kernel_cache_bytes``."""
    ops = TorchOps()
    if cache_bytes != "default":
        ops.kernel_cache_bytes = cache_bytes
    model = NystromLapRLSClassifier(
        kernel=RBF(gamma=GAMMA), n_centers=s, random_state=0, tol=1e-8, memory_budget=budget
    )
    prof = cProfile.Profile() if profile else None
    with use_ops(ops):
        t = time.perf_counter()
        if prof:
            prof.enable()
        model.fit(data[0], data[1], laplacian=data[2])
        if prof:
            prof.disable()
        seconds = time.perf_counter() - t
    info = model.solver_info_
    secs = {k: round(v, 3) for k, v in info.items() if "seconds" in k and isinstance(v, float)}
    timings = {k: round(v, 3) for k, v in model.timings_.items()}
    moved = ops.bytes_moved
    log(
        f"s={s} kernel_cache_bytes={cache_bytes} budget={budget}: {seconds:.2f} s, "
        f"cache_filled {info.get('cache_filled')}, iterations {np.max(model.n_iter_)}, "
        f"timings_ {timings}, {secs}, to_device {moved['to_device']:,} B, "
        f"to_host {moved['to_host']:,} B, transfer {ops.transfer_seconds:.2f} s"
    )
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(35)
        log(out.getvalue())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder of kernel_cache.log")
    parser.add_argument("--n", type=int, default=1_000_000, help="points (default 10^6)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = []

    def log(line):
        print(line, flush=True)
        lines.append(line)

    data = problem(args.n)
    with use_ops(TorchOps()):  # warm-up: CUDA context, cuBLAS handles
        NystromLapRLSClassifier(kernel=RBF(gamma=GAMMA), n_centers=100, random_state=0).fit(
            data[0][:20000], data[1][:20000]
        )
    fit(data, log, 2000, budget="4GB")  # gpu_backends.py's setting
    fit(data, log, 2000, profile=True)  # the default budget: TorchOps.kernel_cache_pays decides
    fit(data, log, 1000, cache_bytes=None)  # K_ns (8 GB) cached on the host, kept on the device
    fit(data, log, 1000, cache_bytes=0)  # the same fit recomputing K_ns's blocks per product
    (args.out / "kernel_cache.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
