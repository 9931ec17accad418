"""Peak memory of budgeted fits against ``memory_budget``, and when the K_ns cache pays (issue 11).

Part ``rss``: every case runs in a fresh Python process.  The process loads the data (made once
by the parent: a Gaussian cloud, n = 50,000, d = 50, with its kNN Laplacian; the kNN adjacency
of 20,000 two-moons points), resets its peak resident set size to the current one (Linux
``/proc/self/clear_refs``), reads the peak as the baseline, runs the case and reads the peak
again.  The peak is ``VmHWM`` of ``/proc/self/status`` (Linux; ``ru_maxrss`` elsewhere): the
``ru_maxrss`` of ``resource.getrusage(RUSAGE_SELF)`` in a child includes its parent's peak (see
:func:`~semiscale._measure.peak_rss_bytes`); its growth is recorded too
(``ru_maxrss_growth``).  The growth is
compared with the budget plus the documented constant overhead
(:func:`semiscale._memory.unbudgeted_bytes`: what ``memory_budget`` does not cover): a fitted
case passes when its growth is at most the sum, a refused one when its growth is at most the
constant (it must refuse before the budgeted allocations).  Cases: ``NystromLapRLSRegressor``
(default kernel and preconditioner, the Laplacian given) under several budgets and center
counts, and the Laplacian power of paper 002 (``laplacian(W, power=p, memory_budget=...)``,
what ``KNNGraph(power=p)`` computes).

Part ``cache``: in one process per dimension, the seconds of one product ``H V`` with and
without the stored ``K_ns``, of filling it, and of touching that much fresh memory (medians of
3); then whole fits under the three cache policies (never, at the first product, the default
rent-or-buy rule of :func:`semiscale.linalg.operators.cache_fill_passes`).

The README's tables are written by :mod:`semiscale_bench.studies.memory_budget_report`.

Run::

    python -m semiscale_bench.studies.memory_budget --out benchmarks/results/memory_budget
    python -m semiscale_bench.studies.memory_budget --part rss --quick   # small, ~1 minute
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from semiscale._measure import peak_rss_bytes, ru_maxrss_bytes
from semiscale_bench.studies.memory_budget_report import NOTES, render  # noqa: F401  (NOTES: re-exported)

MiB = 1024**2
MODULE = "semiscale_bench.studies.memory_budget"


def _child_env() -> dict:
    """The environment of a process started from a shell.

    scikit-learn sets ``KMP_DUPLICATE_LIB_OK`` and ``KMP_INIT_AT_FORK`` in the process that
    imports it; inherited from the start, they change how the OpenMP/BLAS runtime starts, and
    about 35 MiB of its buffers, allocated during a fit otherwise, were then there before the
    baseline.  The children run without them, as a user's script does.
    """
    env = dict(os.environ)
    for key in ("KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK"):
        env.pop(key, None)
    return env


def _run_child(*args) -> str:
    cmd = [sys.executable, "-m", MODULE, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=_child_env())
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def _reset_peak_rss() -> bool:
    """Reset the peak RSS to the current RSS (Linux ``clear_refs``; ``ru_maxrss`` follows).

    Without it the baseline would be the peak of the imports and the data loading, which can
    hide a case's growth below it; freed heap pages are returned to the system first
    (glibc ``malloc_trim``), or reusing them would not count.  False where not available (the
    baseline is then that peak).
    """
    import gc

    gc.collect()
    try:  # glibc: give freed heap pages back first, so that reusing them counts as growth
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ------------------------------------------------------------------------------ data
def make_data(folder: Path, quick: bool) -> dict:
    """Write the cases' inputs to ``folder`` (once); return their sizes."""
    from semiscale.datasets import make_two_moons
    from semiscale.graph import KNNGraph

    n, d = (10_000, 50) if quick else (50_000, 50)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = np.full(n, np.nan)
    labeled = rng.choice(n, n // 100, replace=False)
    y[labeled] = np.sin(X[labeled, 0]) + 0.1 * X[labeled, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L = KNNGraph(n_neighbors=8, random_state=0, n_jobs=1).fit(X).laplacian_
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    sp.save_npz(folder / "L.npz", L)
    n_moons = 5_000 if quick else 20_000
    Xm = make_two_moons(n_moons, noise=0.1, random_state=0)[0]
    W = KNNGraph(n_neighbors=8, random_state=0, n_jobs=1).fit(Xm).adjacency_
    sp.save_npz(folder / "W.npz", W)
    return {"n": n, "d": d, "laplacian_nnz": int(L.nnz), "moons_n": n_moons, "W_nnz": W.nnz}


def rss_cases(quick: bool) -> list[dict]:
    if quick:
        nys = [(500, "8MB"), (500, "20MB"), (1000, "20MB"), (1000, "60MB")]
        powers = [(16, "20MB"), (4, "20MB"), (16, "400MB")]
    else:
        nys = [
            (2000, "50MB"),
            (2000, "100MB"),
            (1000, "50MB"),
            (1000, "100MB"),
            (2000, "400MB"),
            (2000, "1.5GB"),
        ]
        powers = [(16, "100MB"), (4, "100MB"), (16, "1.5GB")]
    cases = [{"kind": "nystrom", "n_centers": s, "budget": b} for s, b in nys]
    cases += [{"kind": "power", "power": p, "budget": b} for p, b in powers]
    return cases


# ------------------------------------------------------------------------------ child
def run_case(folder: Path, case: dict) -> dict:
    """Run one case in this (fresh) process; peak RSS growth over the loaded data."""
    if case["kind"] == "nystrom":
        X = np.load(folder / "X.npy")
        y = np.load(folder / "y.npy")
        L = sp.load_npz(folder / "L.npz").tocsr()
    else:
        W = sp.load_npz(folder / "W.npz").tocsr()
    from semiscale._memory import MemoryBudgetError
    from semiscale.graph.laplacian import laplacian
    from semiscale.models import NystromLapRLSRegressor

    reset = _reset_peak_rss()
    base, base_ru = peak_rss_bytes(), ru_maxrss_bytes()
    tic = time.perf_counter()
    out = {"outcome": "fitted", "peak_reset": reset}
    try:
        if case["kind"] == "nystrom":
            model = NystromLapRLSRegressor(
                n_centers=case["n_centers"],
                memory_budget=case["budget"],
                random_state=0,
                n_jobs=1,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y, laplacian=L)
            info = model.solver_info_
            out.update(
                iterations=int(model.n_iter_),
                cached=bool(info.get("cached")),
                cache_filled=bool(info.get("cache_filled")),
            )
        else:
            Lp = laplacian(W, power=case["power"], memory_budget=case["budget"])
            out.update(outcome="computed", nnz=int(Lp.nnz))
    except MemoryBudgetError as exc:
        out.update(outcome="refused", message=str(exc))
    out["seconds"] = time.perf_counter() - tic
    out["growth"] = peak_rss_bytes() - base
    out["ru_maxrss_growth"] = ru_maxrss_bytes() - base_ru
    return out


# ------------------------------------------------------------------------------ parent
def run_rss(quick: bool) -> dict:
    from semiscale._memory import parse_memory_budget, unbudgeted_bytes

    with tempfile.TemporaryDirectory(prefix="semiscale-memory-") as tmp:
        folder = Path(tmp)
        sizes = make_data(folder, quick)
        rows = []
        for case in rss_cases(quick):
            result = json.loads(_run_child("--child", str(folder), json.dumps(case)))
            budget = parse_memory_budget(case["budget"])
            if case["kind"] == "nystrom":
                constant = unbudgeted_bytes(sizes["n"], sizes["d"], sizes["laplacian_nnz"])
            else:  # W and the unpowered Laplacian: O(nnz(W)), not counted by laplacian()
                constant = unbudgeted_bytes(sizes["moons_n"], 0, sizes["W_nnz"])
            # a refusal must come before the budgeted allocations: within the constant alone
            limit = constant if result["outcome"] == "refused" else budget + constant
            rows.append(
                {
                    **case,
                    **result,
                    "budget_bytes": budget,
                    "constant_bytes": constant,
                    "limit_bytes": limit,
                    "verdict": "PASS" if result["growth"] <= limit else "FAIL",
                }
            )
            print(_rss_line(rows[-1]), flush=True)
    return {"sizes": sizes, "cases": rows}


def _rss_line(r: dict) -> str:
    what = (
        f"Nyström s={r['n_centers']}" if r["kind"] == "nystrom" else f"L^{r['power']}"
    ) + f" budget {r['budget']}"
    return (
        f"{what}: {r['outcome']}, growth {r['growth'] / MiB:.1f} MiB <= limit "
        f"{r['limit_bytes'] / MiB:.1f} MiB (constant {r['constant_bytes'] / MiB:.1f}): "
        f"{r['verdict']} ({r['seconds']:.1f} s)"
    )


# ------------------------------------------------------------------------------ cache part
def _median_seconds(f, repeats=3) -> float:
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        f()
        times.append(time.perf_counter() - tic)
    return float(np.median(times))


def _ring_laplacian(n):
    i = np.arange(n)
    W = sp.csr_matrix(
        (np.ones(2 * n), (np.r_[i, (i + 1) % n], np.r_[(i + 1) % n, i])), shape=(n, n)
    )
    return (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


def cache_products(n: int, d: int, s: int, n_jobs: int) -> dict:
    """One process: product with and without the cache, fill, first touch (medians of 3)."""
    from semiscale.kernels import RBF
    from semiscale.linalg.operators import NystromLapRLSHessian

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    L = _ring_laplacian(n)
    centers = rng.choice(n, s, replace=False)
    labeled = rng.choice(n, 500, replace=False)
    kernel = RBF(gamma=1.0 / d)
    V = rng.standard_normal((s, 1))

    def operator(cache):
        H = NystromLapRLSHessian(
            kernel, X, centers, labeled, L, 1e-4, 1e-2, "32GB", cache=cache, n_jobs=n_jobs
        )
        H.kernel_ss()
        return H

    def product(H):
        return lambda: H.matmat(V)

    uncached = _median_seconds(product(operator(False)))
    fills = []
    for _ in range(3):
        filled = operator(True)
        tic = time.perf_counter()
        filled._cache()
        fills.append(time.perf_counter() - tic)
    cached = _median_seconds(product(filled))
    nbytes = filled._K_rows.nbytes
    del filled

    def touch():
        a = np.empty(nbytes // 8)
        a.fill(1.0)

    first_touch = _median_seconds(touch)
    entries = n * s
    return {
        "n": n,
        "d": d,
        "s": s,
        "n_jobs": n_jobs,
        "cache_bytes": nbytes,
        "uncached_product_s": uncached,
        "cached_product_s": cached,
        "fill_s": float(np.median(fills)),
        "first_touch_s": first_touch,
        "pass_ns_per_entry": 1e9 * uncached / (2 * entries),
        "read_ns_per_byte": 1e9 * cached / (2 * nbytes),
        "touch_ns_per_byte": 1e9 * first_touch / nbytes,
        "break_even_products": float(np.median(fills)) / max(uncached - cached, 1e-9),
    }


def cache_fits(data: str, n: int, n_jobs: int) -> list[dict]:
    """Whole Nyström fits (PCG, sampled-Hessian) under the three cache policies."""
    from semiscale.datasets import make_two_moons
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.linalg import select_centers
    from semiscale.scaling import solver_lambdas
    from semiscale.solvers.manifold import solve_manifold
    from semiscale.solvers.nystrom import NystromSolver
    from semiscale.solvers.problem import ManifoldProblem

    rng = np.random.default_rng(0)
    if data == "moons":
        X, labels = make_two_moons(n, noise=0.1, random_state=0)
        Y = np.where(labels == 1, 1.0, -1.0)[:, None]
        gamma = None
        graph_X = X
    else:  # Gaussian, 50 features, graph on two of them (cheap k-d tree)
        X = rng.standard_normal((n, 50))
        Y = np.sin(X[:, :1]) + 0.1 * X[:, 1:2]
        gamma = 1.0 / 50
        graph_X = X[:, :2]
    labeled = np.zeros(n, dtype=bool)
    labeled[rng.choice(n, 1000, replace=False)] = True
    Y[~labeled] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L = KNNGraph(n_neighbors=8, random_state=0).fit(graph_X).laplacian_
    kernel = RBF(gamma="median" if gamma is None else gamma).fit(X, random_state=0)
    lam_a, lam_i = solver_lambdas(1e-4, 1.0, int(labeled.sum()), float(L.diagonal().sum()))
    centers = select_centers(X, 1000, random_state=0, labeled=np.flatnonzero(labeled))
    problem = ManifoldProblem(
        X=X,
        targets=Y,
        labeled=labeled,
        laplacian=L,
        lambda_ambient=lam_a,
        lambda_intrinsic=lam_i,
        kernel=kernel,
        memory_budget="32GB",
        random_state=0,
    )
    rows = {}
    for _ in range(3):  # rounds over the policies: medians of 3, each policy in every round
        for policy in (False, True, "auto"):
            solver = NystromSolver(centers, memory_budget="32GB", n_jobs=n_jobs, cache=policy)
            tic = time.perf_counter()
            solution = solve_manifold(problem, solver)
            seconds = time.perf_counter() - tic
            row = rows.setdefault(
                str(policy),
                {
                    "data": data,
                    "n": n,
                    "policy": str(policy),
                    "times": [],
                    "iterations": int(solution.n_iter),
                    "cache_filled": bool(solution.info.get("cache_filled")),
                    "uncached_passes": float(solution.info.get("uncached_passes", 0.0)),
                },
            )
            row["times"].append(seconds)
    for row in rows.values():
        row["seconds"] = float(np.median(row["times"]))
    return list(rows.values())


def run_cache(quick: bool) -> dict:
    n_jobs = os.cpu_count() or 1
    n_products = 20_000 if quick else 200_000
    products = []
    for d in (2, 50):
        products.append(json.loads(_run_child("--cache-products", json.dumps([n_products, d]))))
        print(products[-1], flush=True)
    fits = []
    for data, n in (
        ("moons", 20_000 if quick else 500_000),
        ("gauss", 10_000 if quick else 200_000),
    ):
        fits += json.loads(_run_child("--cache-fits", json.dumps([data, n])))
    return {"n_jobs": n_jobs, "products": products, "fits": fits}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results/memory_budget")
    parser.add_argument("--part", choices=("rss", "cache", "all"), default="all")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--cache-products", help=argparse.SUPPRESS)
    parser.add_argument("--cache-fits", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_case(Path(args.child[0]), json.loads(args.child[1]))))
        return
    if args.cache_products:
        n, d = json.loads(args.cache_products)
        print(json.dumps(cache_products(n, d, 1000, os.cpu_count() or 1)))
        return
    if args.cache_fits:
        data, n = json.loads(args.cache_fits)
        print(json.dumps(cache_fits(data, n, os.cpu_count() or 1)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    previous = out / "results.json"
    # one part rerun keeps the other part's results
    results = json.loads(previous.read_text()) if previous.exists() else {}
    results.update(
        argv=" ".join(sys.argv[1:] if argv is None else argv),
        machine=f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        date=time.strftime("%Y-%m-%d"),
    )
    for part, run in (("rss", run_rss), ("cache", run_cache)):
        if args.part in (part, "all"):
            load = os.getloadavg()[0]
            results[part] = run(args.quick)
            results[part]["load_average"] = [load, os.getloadavg()[0]]
            results[part]["command"] = f"python -m {MODULE} {results['argv']}".strip()
            results[part]["date"] = results["date"]
    (out / "results.json").write_text(json.dumps(results, indent=1))
    render(results, out)


if __name__ == "__main__":
    main()
