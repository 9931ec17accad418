"""Peak memory of budgeted fits against ``memory_budget``, and when the K_ns cache pays (issue 11).

Part ``rss``: every case runs in a fresh Python process.  The process loads the data (made once
by the parent: a Gaussian cloud, n = 50,000, d = 50, with its kNN Laplacian; the kNN adjacency
of 20,000 two-moons points), resets its peak resident set size to the current one (Linux
``/proc/self/clear_refs``), reads the peak as the baseline, runs the case and reads the peak
again.  The peak is ``VmHWM`` of ``/proc/self/status`` (Linux; ``ru_maxrss`` elsewhere): the
``ru_maxrss`` of ``resource.getrusage(RUSAGE_SELF)`` in a child includes its parent's peak (see
:func:`~semiscale_bench.harness.machine.peak_rss_bytes`); its growth is recorded too
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

A plain script (not a ``semiscale-bench`` study): its cases run in child processes of their
own, which start this file again.  The README's tables are written by :func:`render`.

Run::

    python benchmarks/scripts/memory_budget.py --out benchmarks/results/memory_budget
    python benchmarks/scripts/memory_budget.py --part rss --quick   # small, ~1 minute
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

from semiscale_bench.harness.machine import peak_rss_bytes, ru_maxrss_bytes
from semiscale_bench.harness.study import commit_hash

MiB = 1024**2
SCRIPT = "benchmarks/scripts/memory_budget.py"


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
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
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
    from semiscale.solvers.newton import solve_manifold
    from semiscale.solvers.nystrom_quadratic import NystromSolver
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


#: One-off measurements the README keeps beside the study's own (commands given in the text).
NOTES = [
    "## Before this change, for comparison",
    "",
    "The same child measurement (fresh process, `clear_refs`, VmHWM growth) run on the source of "
    "commit 9f4cc70 (`git archive 9f4cc70 src | tar -x -C /tmp/old`, then the cases with "
    "`PYTHONPATH=/tmp/old/src`), same data:",
    "",
    "| case | budget | outcome then | growth then MiB | growth now MiB |",
    "|---|---|---|---|---|",
    "| Nyström s=2000 | 50MB | refused by the preconditioner after K_ss, T and G | 123.0 | 24.4 "
    "(refused before) |",
    "| Nyström s=2000 | 100MB | fitted (7 iterations) | 158.4 | 24.6 (refused before: needs "
    "125.3 MiB) |",
    "| Nyström s=1000 | 50MB | fitted | 71.2 | 62.1 |",
    "| Nyström s=1000 | 100MB | fitted | 106.9 | 110.2 |",
    "| L^16 (20,000 two-moons points) | none (no parameter) | computed by repeated squaring, "
    "15.1 s | 1042.6 | 699.0 within 1.5GB, 27.0 s; 7.7 (refused) at 100MB |",
    "| L^4 | none | computed | 76.8 | 63.4 within 100MB |",
    "",
    "Issue 11 reported 290 MB of growth for the s=2000 fit at 100 MB (graph search included) "
    "and 1.1 GB for `KNNGraph(power=16)`.",
    "",
    "First touch of fresh memory (`np.empty(n).fill(1.0)`, one process, this machine, memory "
    "not used recently): 1.6 GB 0.82 s, 4 GB 4.6–8.8 s, 8 GB 18.2 s (0.5–2.3 ns per byte); "
    "writing the same arrays again took 0.09–0.3 ns per byte.  Right after other runs had used "
    "the memory (the table above) it was 0.14–0.17 ns per byte.  Issue 11's 26 s fill of an "
    "8.3 GB cache is this cost.  `cache_fill_passes` takes 2 ns per byte, the high end: a large "
    "cache on a fresh machine is what made the eager rule slow.",
    "",
    "The rule (`semiscale.linalg.operators.cache_fill_passes`): the cache costs one pass plus the "
    "first touch, F = 1 + touch/pass passes, and each later pass reads it, ρ = read/pass; "
    "products run without it until their passes reach F/(1 − ρ), then fill it (rent or buy: at "
    "most about twice the kernel time of the better fixed choice, whatever the iteration "
    "count).  With the constants (pass 2 + 0.045·d ns per entry, read 0.08 and touch 2 ns per "
    "byte, all with two threads: within the ranges measured quiet and busy, and the cold first "
    "touch) it buys after 12.5 passes at d = 2 (the 8th product fills the cache), 5.6 at d = 50 "
    "(the 4th) and 1.7 at d = 500 (the 2nd).  On the quiet machine with warm memory of the "
    "table above, filling cost less than one product, so the eager rule won the Gaussian fit "
    "(4.4 s against 6.6 s): the rule's price for not losing 4× on a cold machine.  A first "
    "run of this study under load (products about twice as slow) gave moons 500,000: never "
    "8.1 s, eager 16.7 s, rent-or-buy 8.7 s; Gaussian "
    "200,000: never 23.9 s, eager 11.4 s, rent-or-buy 12.2 s (filled after 4 passes).",
    "",
]


def render(results: dict, out: Path) -> None:
    """Write ``out / "README.md"`` from ``results`` (the parts it holds), then :data:`NOTES`."""
    from semiscale._memory import UNBUDGETED_BASE_BYTES

    lines = [
        "# memory_budget: peak memory of budgeted fits, and when the K_ns cache pays",
        "",
        f"Script `{SCRIPT}` (its docstring describes the method), on "
        f"{results['machine']}; raw numbers in `results.json`.",
        "",
    ]

    def produced(part):
        r = results[part]
        if r.get("load_average"):
            load = ", ".join(f"{x:.1f}" for x in r["load_average"])
        else:
            load = "not recorded"
        # records before the script recorded its commit: the README names it by hand
        at_commit = f" at commit {r['commit']}" if "commit" in r else ""
        return [
            f"Produced by `{r['command']}`{at_commit} on {r['date']} (load average at start "
            f"and end: {load}; the machine was shared, so seconds are indicative).",
            "",
        ]

    if "rss" in results:
        sizes = results["rss"]["sizes"]
        lines += [
            "## Peak RSS growth against the budget",
            "",
            *produced("rss"),
            "A fresh process per case; growth = peak RSS (`VmHWM`) after the case minus the "
            "RSS after loading the data (the peak reset there with `/proc/self/clear_refs`; "
            "`ru_maxrss` of a child includes its parent's peak, see the module docstring).  "
            "The documented constant "
            "(`semiscale._memory.unbudgeted_bytes`) is "
            f"{UNBUDGETED_BASE_BYTES // MiB} MiB + one copy of X + three copies of the "
            "Laplacian + 8·n·(r + 1) floats; PASS when growth ≤ budget + constant, and for a "
            "refusal when growth ≤ constant (refused before the budgeted allocations).",
            "",
            f"Nyström cases: `NystromLapRLSRegressor(n_centers=s, memory_budget=...)`, default "
            f"kernel and preconditioner, n = {sizes['n']:,}, d = {sizes['d']}, 1 % labeled, the "
            f"kNN Laplacian given ({sizes['laplacian_nnz']:,} non-zeros), `n_jobs=1`.  Power "
            f"cases: `laplacian(W, power=p, memory_budget=...)` on the 8-NN graph of "
            f"{sizes['moons_n']:,} two-moons points (what `KNNGraph(power=p)` computes).",
            "",
            "| case | budget | outcome | growth MiB | constant MiB | limit MiB "
            "| verdict | seconds | notes |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in results["rss"]["cases"]:
            what = f"Nyström s={r['n_centers']}" if r["kind"] == "nystrom" else f"L^{r['power']}"
            note = ""
            if r["outcome"] == "fitted":
                filled = "filled" if r["cache_filled"] else "not filled"
                note = f"{r['iterations']} PCG iterations, cache {filled}"
            elif r["outcome"] == "computed":
                note = f"{r['nnz']:,} non-zeros"
            else:
                note = r["message"].replace("|", "/")
            lines.append(
                f"| {what} | {r['budget']} | {r['outcome']} | {r['growth'] / MiB:.1f} | "
                f"{r['constant_bytes'] / MiB:.1f} | "
                f"{r['limit_bytes'] / MiB:.1f} | {r['verdict']} | "
                f"{r['seconds']:.1f} | {note} |"
            )
        lines.append("")
    if "cache" in results:
        c = results["cache"]
        lines += [
            "## When the K_ns cache pays",
            "",
            *produced("cache"),
            f"One process per row, `n_jobs={c['n_jobs']}`, s = 1,000 centers, medians of 3: "
            "one product `H V` (two kernel passes) without and with the stored K_ns, filling "
            "it (one pass into fresh memory), and touching that much fresh memory alone.",
            "",
            "| n | d | cache | uncached product s | cached product s | fill s | first touch s "
            "| pass ns/entry | read ns/byte | touch ns/byte | break-even products |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for p in c["products"]:
            lines.append(
                f"| {p['n']:,} | {p['d']} | {p['cache_bytes'] / 1024**3:.2f} GiB | "
                f"{p['uncached_product_s']:.3f} | {p['cached_product_s']:.3f} | "
                f"{p['fill_s']:.2f} | {p['first_touch_s']:.2f} | {p['pass_ns_per_entry']:.2f} | "
                f"{p['read_ns_per_byte']:.3f} | {p['touch_ns_per_byte']:.2f} | "
                f"{p['break_even_products']:.1f} |"
            )
        lines += [
            "",
            "Whole fits (PCG with the sampled-Hessian preconditioner, 1,000 labeled points all "
            "among the s = 1,000 centers, budget 32 GB so that the cache always fits) under "
            "the three policies: never (`False`), at the first product (`True`, the rule "
            "before), and the rent-or-buy default (`auto`); medians of 3 rounds over the "
            "policies.  Iterations differ between policies because a cacheable K_ns makes "
            "the sampled-Hessian preconditioner take s/8 graph rows instead of s/4.",
            "",
            "| data | n | policy | seconds | PCG iterations | cache filled | uncached passes |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in c["fits"]:
            lines.append(
                f"| {f['data']} | {f['n']:,} | {f['policy']} | {f['seconds']:.1f} | "
                f"{f['iterations']} | {f['cache_filled']} | {f['uncached_passes']:.2f} |"
            )
        lines.append("")
    lines += NOTES
    (out / "README.md").write_text("\n".join(lines))


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
            results[part]["command"] = f"python {SCRIPT} {results['argv']}".strip()
            results[part]["commit"] = commit_hash()
            results[part]["date"] = results["date"]
    (out / "results.json").write_text(json.dumps(results, indent=1))
    render(results, out)


if __name__ == "__main__":
    main()
