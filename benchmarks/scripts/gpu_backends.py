"""TorchOps on a GPU against the NumPy backend on the same machine (issue 31's GPU targets).

Times, on one machine:

1. ``H·α`` — one product of the Nyström LapRLS Hessian
   ``H α = K_nsᵀ (J + λ_I L) K_ns α + λ_A K_ss α`` (:class:`~semiscale.linalg.operators.
   NystromLapRLSHessian`, ``cache=False``: both kernel passes computed, as in every PCG
   iteration of a fit whose ``K_ns`` is not stored) at n = 10⁶, s = 10⁴, d = 10, RBF, a chain
   Laplacian, float32 and float64, under ``TorchOps()`` (CUDA when available) and under NumPy's
   :class:`~semiscale.linalg.ops.ArrayOps` with every core (``n_jobs=None``); NumPy is timed once
   per dtype at this size (a product takes seconds to minutes), torch ``--repeats`` times after
   a first call (the first call uploads ``X`` and starts CUDA: reported separately);
2. a whole ``NystromLapRLSClassifier`` fit on 10⁶ points (two moons in 2 dimensions plus 8 noise
   features, 1,000 labels, 2,000 centers, a precomputed chain Laplacian), under TorchOps with
   ``memory_budget="4GB"`` (``K_ns`` of 16 GB is then recomputed on the device at each product,
   never stored on the host) and under NumPy with its default budget (``K_ns`` cached when it
   fits: NumPy's fastest path), and the largest difference of their ``transduction_``;
3. ``L @ u`` for the chain Laplacian and a 10-nearest-neighbour-like band of 10⁶ rows: SciPy
   against :meth:`TorchOps.sparse_matmul` (device copy kept), to say whether the graph
   learners' sparse CG would pay on the device.

Writes ``results.json`` (every timing, the machine, the versions) and ``summary.md`` to
``--out``.  ``--small`` runs the same code at n = 20,000 (s = 500 for ``H·α``, 300 for the fit)
to check that the script works on any machine (CPU torch included).  Run::

    python benchmarks/scripts/gpu_backends.py --out benchmarks/results/gpu_backends
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from semiscale.backends._torch import TorchOps
from semiscale.kernels import RBF
from semiscale.linalg.operators import NystromLapRLSHessian
from semiscale.linalg.ops import ArrayOps, use_ops
from semiscale.models import NystromLapRLSClassifier

FULL = dict(n=1_000_000, s=10_000, d=10, fit_n=1_000_000, fit_s=2_000, labels=1_000)
SMALL = dict(n=20_000, s=500, d=10, fit_n=20_000, fit_s=300, labels=200)
GAMMA = 0.5


def chain_laplacian(X, width=1.0, n_neighbors=1):
    """``L = D − W`` of the points linked to their ``n_neighbors`` successors along ``X[:, 0]``.

    A cheap stand-in for a kNN graph at 10⁶ points (its build is not what is measured): each
    point is linked to the next ones in the order of its first coordinate, with Gaussian
    weights of their distances.
    """
    n = X.shape[0]
    order = np.argsort(X[:, 0], kind="stable")
    rows, cols, vals = [], [], []
    for step in range(1, n_neighbors + 1):
        a, b = order[:-step], order[step:]
        dist2 = np.square(X[a] - X[b]).sum(axis=1)
        rows.append(a)
        cols.append(b)
        vals.append(np.exp(-dist2 / (2 * width**2)))
    rows, cols, vals = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    W = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    W = W + W.T
    return (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


def points(n, d, seed=0):
    from semiscale.datasets import make_two_moons

    X2, y = make_two_moons(n, noise=0.1, random_state=seed)
    noise = np.random.default_rng(seed).standard_normal((n, d - 2)) * 0.1
    return np.hstack([X2, noise]), y


def timed(call, repeats):
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times, result


def hessian_products(size, repeats, log):
    n, s, d = size["n"], size["s"], size["d"]
    X64, _ = points(n, d)
    L = chain_laplacian(X64)
    labeled = np.arange(0, n, max(1, n // 1000))
    alpha = np.random.default_rng(1).standard_normal(s)
    records = []
    for dtype in (np.float32, np.float64):
        X = X64.astype(dtype)
        H = NystromLapRLSHessian(
            RBF(gamma=GAMMA), X, np.arange(s), labeled, L, 1e-6, 1e-2,
            memory_budget="8GB", cache=False, n_jobs=None,
        )  # fmt: skip
        H.kernel_ss()  # K_ss is made once per fit: not part of a product
        record = {"n": n, "s": s, "d": d, "dtype": np.dtype(dtype).name}
        ops = TorchOps()
        # one residency scope as a fit opens: X and L stay on the device between products
        with use_ops(ops), ops.resident():
            first, _ = timed(lambda H=H: H @ alpha, 1)
            ops.reset_counters()
            torch_times, torch_out = timed(lambda H=H: H @ alpha, repeats)
        record.update(
            device=str(ops.device),
            torch_first_seconds=first[0],
            torch_seconds=torch_times,
            torch_bytes_per_product={k: v / repeats for k, v in ops.bytes_moved.items()},
            torch_transfer_seconds_per_product=ops.transfer_seconds / repeats,
        )
        log(f"H·α {record['dtype']}: torch first {first[0]:.3f} s, then {torch_times}")
        with use_ops(ArrayOps()):
            numpy_times, numpy_out = timed(lambda H=H: H @ alpha, 1)
        record["numpy_seconds"] = numpy_times
        record["numpy_2_threads"] = two_threads(size, dtype, log)
        scale = float(np.abs(numpy_out).max())
        record["max_relative_difference"] = float(np.abs(torch_out - numpy_out).max()) / scale
        record["speedup"] = numpy_times[0] / statistics.median(torch_times)
        log(f"H·α {record['dtype']}: numpy {numpy_times[0]:.3f} s, x{record['speedup']:.1f}")
        records.append(record)
    return records


def two_threads(size, dtype, log):
    """NumPy's ``H·α`` on 2 threads (this project's 2-core reference machine) at n/10, s/10.

    A hundredth of the work (the product's cost is ``n s d``), timed on the GPU's machine so that
    the GPU's time can be set against a 2-core NumPy measured on the same CPU: the full-size
    2-core time is about 100 times this one (kernel products scale as ``n s``).
    """
    from threadpoolctl import threadpool_limits

    n, s, d = size["n"] // 10, size["s"] // 10, size["d"]
    X, _ = points(n, d)
    X = X.astype(dtype)
    H = NystromLapRLSHessian(
        RBF(gamma=GAMMA), X, np.arange(s), np.arange(0, n, max(1, n // 1000)),
        chain_laplacian(X), 1e-6, 1e-2, memory_budget="8GB", cache=False, n_jobs=2,
    )  # fmt: skip
    H.kernel_ss()
    alpha = np.random.default_rng(1).standard_normal(s)
    with threadpool_limits(2), use_ops(ArrayOps()):
        times, _ = timed(lambda: H @ alpha, 3)
    log(f"H·α {np.dtype(dtype).name} numpy 2 threads at n={n}, s={s}: {times}")
    return {"n": n, "s": s, "seconds": times}


def fit_problem(n, d, labels):
    """Points, semi-supervised labels (``labels`` of them) and the chain Laplacian of a fit."""
    X, y = points(n, d, seed=2)
    L = chain_laplacian(X, n_neighbors=5)
    rng = np.random.default_rng(3)
    y_ssl = np.full(n, -1)
    labeled = rng.choice(n, labels, replace=False)
    y_ssl[labeled] = y[labeled]
    return X, y, y_ssl, L


def whole_fit(size, log, backends=("torch", "numpy"), profile_dir=None):
    """The whole fit on each of ``backends``; torch after an untimed warm-up fit at SMALL size.

    The warm-up starts CUDA and loads its kernels, as the H·α part did before the fit when the
    script runs whole.  ``profile_dir``: the torch fit is run a second time under cProfile, its
    35 top functions by cumulative time written to ``profile_dir/fit_profile.txt``.
    """
    n, s, d = size["fit_n"], size["fit_s"], size["d"]
    X, y, y_ssl, L = fit_problem(n, d, size["labels"])
    kw = dict(kernel=RBF(gamma=GAMMA), n_centers=s, random_state=0, tol=1e-8)
    records, unlabeled = {}, y_ssl == -1
    choices = {"torch": (TorchOps, "4GB"), "numpy": (ArrayOps, None)}
    if "torch" in backends:
        Xw, _, yw, Lw = fit_problem(SMALL["fit_n"], d, SMALL["labels"])
        start = time.perf_counter()
        with use_ops(TorchOps()):
            NystromLapRLSClassifier(memory_budget="4GB", **kw).fit(Xw, yw, laplacian=Lw)
        log(f"torch warm-up fit (n = {SMALL['fit_n']:,}): {time.perf_counter() - start:.2f} s")
    for name in backends:
        make_ops, budget = choices[name]
        model = NystromLapRLSClassifier(memory_budget=budget, **kw)
        ops = make_ops()
        with use_ops(ops):
            start = time.perf_counter()
            model.fit(X, y_ssl, laplacian=L)
            seconds = time.perf_counter() - start
        info = model.solver_info_
        records[name] = {
            "seconds": seconds,
            "memory_budget": budget,
            "n_iter": int(np.max(model.n_iter_)),
            "cache_filled": bool(info.get("cache_filled")),
            "accuracy_unlabeled": float(np.mean(model.transduction_[unlabeled] == y[unlabeled])),
            "solver_seconds": {
                k: v for k, v in info.items() if k.endswith("_seconds") and isinstance(v, float)
            },
            "laplacian_rows": info.get("laplacian_rows"),
            "timings": dict(model.timings_),
            "bytes_moved": dict(getattr(ops, "bytes_moved", {})),
            "transduction": model.transduction_,
            "decision": model.decision_function(X[:1000]),
        }
        log(f"fit {name}: {seconds:.2f} s, {records[name]['n_iter']} iterations, "
            f"{records[name]['solver_seconds']}, {records[name]['bytes_moved']}")  # fmt: skip
    if profile_dir is not None and "torch" in backends:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        with use_ops(TorchOps()):
            profiler.enable()
            NystromLapRLSClassifier(memory_budget="4GB", **kw).fit(X, y_ssl, laplacian=L)
            profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(35)
        (profile_dir / "fit_profile.txt").write_text(text.getvalue())
        log("profiled torch fit written to fit_profile.txt")
    result = {
        "n": n, "s": s, "d": d, "labels": size["labels"], "device": str(TorchOps().device),
    }  # fmt: skip
    if "torch" in records and "numpy" in records:
        difference = np.abs(records["torch"]["decision"] - records["numpy"]["decision"]).max()
        same = np.mean(records["torch"]["transduction"] == records["numpy"]["transduction"])
        result["max_decision_difference_first_1000"] = float(difference)
        result["same_transduction_fraction"] = float(same)
    for record in records.values():
        del record["transduction"], record["decision"]
    return {**result, **records}


def sparse_products(size, repeats, log):
    n = size["fit_n"]
    X, _ = points(n, 3, seed=4)
    L = chain_laplacian(X, n_neighbors=5)
    u = np.random.default_rng(5).standard_normal((n, 1))
    scipy_times, expected = timed(lambda: L @ u, repeats)
    ops = TorchOps()
    ops.sparse_on_device = True  # torch's CSR product wherever it runs (off by default on CPUs)
    with ops.resident():  # L's device copy kept between the products, as in a fit
        ops.sparse_matmul(L, u)  # uploads L once
        torch_times, got = timed(lambda: ops.sparse_matmul(L, u), repeats)
    record = {
        "n": n, "nnz": int(L.nnz), "device": str(ops.device),
        "scipy_seconds": scipy_times, "torch_seconds": torch_times,
        "max_difference": float(np.abs(got - expected).max()),
    }  # fmt: skip
    log(f"L @ u: scipy {statistics.median(scipy_times):.4f} s, torch {torch_times}")
    return record


def environment():
    import torch

    import semiscale

    cuda = torch.cuda.is_available()
    return {
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "semiscale": semiscale.__version__,
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
        "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory if cuda else None,
    }


def summary(results):
    lines = [
        "# TorchOps against NumPy on one machine",
        "",
        f"Machine: {results['environment']['gpu'] or 'no GPU (CPU torch)'}, "
        f"{results['environment']['cpu_count']} CPU cores; torch "
        f"{results['environment']['torch']}.  Command: `{results['command']}`.",
        "",
    ]
    if "hessian_products" in results:
        lines += hessian_summary(results)
    lines += fit_summary(results["whole_fit"])
    if "sparse_products" in results:
        r = results["sparse_products"]
        scipy_median = statistics.median(r["scipy_seconds"])
        torch_median = statistics.median(r["torch_seconds"])
        lines += [
            "",
            "## Sparse L @ u",
            "",
            f"n = {r['n']:,}, nnz = {r['nnz']:,}: SciPy {scipy_median:.4f} s, torch "
            f"({r['device']}, L kept on the device) {torch_median:.4f} s (medians of "
            f"{len(r['scipy_seconds'])}).",
        ]
    return "\n".join(lines) + "\n"


def hessian_summary(results):
    lines = [
        "## H·α (one Nyström LapRLS Hessian product, both kernel passes)",
        "",
        "| n | s | d | dtype | device | torch median (s) | torch first call (s) | NumPy (s) "
        "| speed-up | max rel. diff | NumPy, 2 threads, n/10 and s/10 (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["hessian_products"]:
        lines.append(
            f"| {r['n']:,} | {r['s']:,} | {r['d']} | {r['dtype']} | {r['device']} "
            f"| {statistics.median(r['torch_seconds']):.3f} | {r['torch_first_seconds']:.3f} "
            f"| {r['numpy_seconds'][0]:.3f} | {r['speedup']:.1f}x "
            f"| {r['max_relative_difference']:.1e} "
            f"| {statistics.median(r['numpy_2_threads']['seconds']):.3f} |"
        )
    lines += [
        "",
        "NumPy uses every core of this machine (`n_jobs=None`), once per dtype; torch the median "
        "of the calls after the first (which uploads X).  The last column is NumPy on 2 threads "
        "at a hundredth of the work (n/10, s/10): about 1/100 of a 2-core full-size product.",
        "",
    ]
    return lines


def fit_summary(fit):
    lines = [
        f"## Whole NystromLapRLSClassifier fit (n = {fit['n']:,}, s = {fit['s']:,}, "
        f"d = {fit['d']}, {fit['labels']:,} labels, precomputed chain Laplacian)",
        "",
        "| backend | memory_budget | seconds | iterations | K_ns cached | accuracy (unlabeled) "
        "| preconditioner (s) | PCG iterations (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("torch", "numpy"):
        if name not in fit:
            continue
        r = fit[name]
        secs = r.get("solver_seconds", {})
        pre, its = (
            secs.get(k, float("nan")) for k in ("preconditioner_seconds", "iterations_seconds")
        )
        lines.append(
            f"| {name} ({fit['device'] if name == 'torch' else 'CPU'}) | {r['memory_budget']} "
            f"| {r['seconds']:.2f} | {r['n_iter']} | {r['cache_filled']} "
            f"| {r['accuracy_unlabeled']:.4f} | {pre:.2f} | {its:.2f} |"
        )
    if "same_transduction_fraction" in fit:
        lines += [
            "",
            f"Same transduction on {fit['same_transduction_fraction']:.4%} of the points; largest "
            "decision difference on the first 1,000 points "
            f"{fit['max_decision_difference_first_1000']:.1e}.",
        ]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--small", action="store_true", help="n = 20,000: a check that it runs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--only", choices=("all", "fit"), default="all",
        help="fit: the whole fit alone (no H·α, no L @ u)",
    )  # fmt: skip
    parser.add_argument(
        "--backends", default="torch,numpy", help="the whole fit's backends (comma-separated)"
    )
    parser.add_argument("--profile", action="store_true", help="a cProfiled second torch fit")
    args = parser.parse_args(argv)
    backends = tuple(b for b in args.backends.split(",") if b)
    if not backends or set(backends) - {"torch", "numpy"}:
        parser.error(f"--backends must name torch and/or numpy, got {args.backends!r}")
    size = SMALL if args.small else FULL
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def log(message):
        print(f"[{time.perf_counter() - started:7.1f} s] {message}", flush=True)

    command = "python benchmarks/scripts/gpu_backends.py --out " + str(args.out)
    command += " --small" if args.small else ""
    if args.only != "all":
        command += f" --only {args.only} --backends {','.join(backends)}"
    command += " --profile" if args.profile else ""
    results = {"command": command, "environment": environment(), "size": size}
    if args.only == "all":
        results["hessian_products"] = hessian_products(size, args.repeats, log)
    profile_dir = args.out if args.profile else None
    results["whole_fit"] = whole_fit(size, log, backends, profile_dir)
    if args.only == "all":
        results["sparse_products"] = sparse_products(size, args.repeats, log)
    results["total_seconds"] = time.perf_counter() - started
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "summary.md").write_text(summary(results))
    log(f"written {args.out}/results.json and summary.md")


if __name__ == "__main__":
    main()
