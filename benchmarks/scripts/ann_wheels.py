"""Which approximate-nearest-neighbour library installs from wheels and searches best.

Issue 11 (wheels-only install): hnswlib publishes no wheels, so installing ``semiscale[ann]``
needs a C++ compiler.  This study measures the libraries that install from wheels (faiss-cpu,
usearch, voyager, pynndescent) against hnswlib on the kNN graph of a data set (every point
queries its ``k + 1`` nearest, itself dropped by index): recall@k against exact search
(distance based, ties at the k-th distance count as found) and build + query seconds.

The HNSW libraries run with semiscale's parameters (``M = 16``, ``ef_construction = 40``,
query ``ef = max(32, 2(k+1))``), float32, squared L2, ``n_jobs`` threads.  pynndescent's first
call in a process compiles its numba code: its time is reported without that compilation and
the compilation (a 2,000-point warm-up) separately.

A plain script (not a ``semiscale-bench`` study): a one-off choice of library, made.  Run
(results written to ``--out``, JSON + Markdown; it needs the libraries installed)::

    python benchmarks/scripts/ann_wheels.py --out benchmarks/results/ann_wheels
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from semiscale_bench.harness.study import commit_hash

LIBRARIES = ("hnswlib", "faiss", "usearch", "voyager", "pynndescent")
DATASETS = ("usps", "mnist_test", "a9a", "moons_1m")
M, EF_CONSTRUCTION, EF_SEARCH = 16, 40, 32
LEGACY_COMMAND = "python -m semiscale_bench.studies.ann_wheels --out benchmarks/results/ann_wheels"


def load(name: str) -> np.ndarray:
    from semiscale.datasets import load_dataset, make_two_moons

    if name == "usps":
        X, _ = load_dataset("usps")
    elif name == "mnist_test":
        X, _ = load_dataset("mnist", split="test")
    elif name == "a9a":
        X, _ = load_dataset("a9a")
    elif name == "moons_1m":
        X = make_two_moons(1_000_000, noise=0.1, random_state=0)[0]
    else:
        raise ValueError(name)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    return np.ascontiguousarray(X, dtype=np.float32)


def _search_hnswlib(X, k, n_jobs, seed):
    import hnswlib

    n, d = X.shape
    index = hnswlib.Index(space="l2", dim=d)
    index.init_index(max_elements=n, M=M, ef_construction=EF_CONSTRUCTION, random_seed=seed)
    index.add_items(X, np.arange(n), num_threads=n_jobs)
    index.set_ef(max(EF_SEARCH, 2 * (k + 1)))
    ind, _ = index.knn_query(X, k=k + 1, num_threads=n_jobs)
    return ind


def _search_faiss(X, k, n_jobs, seed):
    import faiss

    faiss.omp_set_num_threads(n_jobs)
    index = faiss.IndexHNSWFlat(X.shape[1], M)
    index.hnsw.efConstruction = EF_CONSTRUCTION
    index.add(X)
    index.hnsw.efSearch = max(EF_SEARCH, 2 * (k + 1))
    _, ind = index.search(X, k + 1)
    return ind


def _search_usearch(X, k, n_jobs, seed):
    from usearch.index import Index

    n, d = X.shape
    index = Index(
        ndim=d,
        metric="l2sq",
        dtype="f32",
        connectivity=M,
        expansion_add=EF_CONSTRUCTION,
        expansion_search=max(EF_SEARCH, 2 * (k + 1)),
    )
    index.add(np.arange(n, dtype=np.uint64), X, threads=n_jobs)
    matches = index.search(X, k + 1, threads=n_jobs)
    return np.asarray(matches.keys).astype(np.int64)


def _search_voyager(X, k, n_jobs, seed):
    from voyager import Index, Space, StorageDataType

    n, d = X.shape
    index = Index(
        Space.Euclidean,
        num_dimensions=d,
        M=M,
        ef_construction=EF_CONSTRUCTION,
        random_seed=seed,
        max_elements=n,
        storage_data_type=StorageDataType.Float32,
    )
    index.add_items(X, np.arange(n), num_threads=n_jobs)
    ind, _ = index.query(X, k=k + 1, num_threads=n_jobs, query_ef=max(EF_SEARCH, 2 * (k + 1)))
    return ind


def _search_pynndescent(X, k, n_jobs, seed):
    from pynndescent import NNDescent

    index = NNDescent(X, n_neighbors=k + 1, random_state=seed, n_jobs=n_jobs, compressed=True)
    ind, _ = index.neighbor_graph
    return ind


SEARCHES = {
    "hnswlib": _search_hnswlib,
    "faiss": _search_faiss,
    "usearch": _search_usearch,
    "voyager": _search_voyager,
    "pynndescent": _search_pynndescent,
}


def exact_kth(X, k, n_jobs):
    """Exact k-th neighbour distance of every point (k-d tree in 2-D, brute force beyond)."""
    from semiscale.graph.knn import kneighbors

    dist, _ = kneighbors(X.astype(np.float64), k, method="exact", n_jobs=n_jobs)
    return dist[:, -1]


def recall(X, ind, kth):
    """Distance-based recall@k of an (n, k+1) result (self dropped by index)."""
    from semiscale.graph._brute import _drop_self, _exact_sq_distances

    n = len(X)
    ind = np.where((ind < 0) | (ind >= n), 0, ind).astype(np.intp)  # missing results
    _, ind = _drop_self(np.zeros(ind.shape), ind)
    dist = np.sqrt(_exact_sq_distances(X.astype(np.float64), ind))
    return float((dist <= kth[:, None] * (1 + 1e-6) + 1e-9).mean())


def version(lib):
    from importlib.metadata import version as v

    return v({"faiss": "faiss-cpu"}.get(lib, lib))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/semiscale-ann-wheels"))
    args = parser.parse_args(argv)
    libs = args.libraries.split(",")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {"records": []}
    results["machine"] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "n_jobs": args.n_jobs,
        "note": "machine shared with other jobs, timings noisy",
    }
    results["versions"] = {lib: version(lib) for lib in libs}
    results["command"] = "python benchmarks/scripts/ann_wheels.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    results["commit"] = commit_hash()
    results["params"] = {
        "k": args.k,
        "M": M,
        "ef_construction": EF_CONSTRUCTION,
        "ef_search": max(EF_SEARCH, 2 * (args.k + 1)),
    }
    if "pynndescent" in libs:  # numba compilation, once per process
        t0 = time.perf_counter()
        _search_pynndescent(np.random.default_rng(0).random((2000, 8), np.float32), 5, 1, 0)
        results["pynndescent_compile_seconds"] = time.perf_counter() - t0
        print(f"pynndescent numba compilation: {results['pynndescent_compile_seconds']:.1f} s")
    for name in args.datasets.split(","):
        X = load(name)
        t0 = time.perf_counter()
        kth = exact_kth(X, args.k, args.n_jobs)
        exact_s = time.perf_counter() - t0
        print(f"{name}: {X.shape}, exact {exact_s:.2f} s", flush=True)
        for rep in range(args.repeats):  # libraries interleaved: load drift hits all alike
            for lib in libs:
                c0, t0 = time.process_time(), time.perf_counter()
                ind = SEARCHES[lib](X, args.k, args.n_jobs, rep)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
                rec = {
                    "dataset": name,
                    "n": X.shape[0],
                    "d": X.shape[1],
                    "library": lib,
                    "repeat": rep,
                    "seconds": seconds,
                    "cpu_seconds": cpu,
                    "recall": recall(X, ind, kth),
                    "exact_seconds": exact_s,
                }
                results["records"] = [
                    r
                    for r in results["records"]
                    if (r["dataset"], r["library"], r["repeat"]) != (name, lib, rep)
                ] + [rec]
                print(
                    f"  {lib:12s} recall {rec['recall']:.4f}  {seconds:7.2f} s  cpu {cpu:7.2f} s",
                    flush=True,
                )
                path.write_text(json.dumps(results, indent=1))
    write_report(results, args.out)


def write_report(results, out):
    recs = results["records"]
    names = [d for d in DATASETS if any(r["dataset"] == d for r in recs)]
    libs = [lb for lb in LIBRARIES if any(r["library"] == lb for r in recs)]
    lines = [
        "# Approximate kNN libraries installable from wheels (issue 11)",
        "",
        # the first run recorded neither its command nor its commit: its README names them
        f"Command: `{results.get('command', LEGACY_COMMAND)}` (see the script's docstring)"
        + (f", commit {results['commit']}." if "commit" in results else "."),
        "",
        f"Machine: {results['machine']['platform']}, Python {results['machine']['python']}, "
        f"{results['machine']['cpus']} cores, n_jobs = {results['machine']['n_jobs']}. "
        "**Machine shared with other jobs, timings noisy.**",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + ".  "
        f"Parameters: {results['params']}.",
        "",
        "kNN graph of each set (k = 10, every point a query, itself dropped): recall@10 against "
        "exact search / build + query wall seconds / CPU seconds of the process (medians over "
        "repeats; the libraries run interleaved, repeat by repeat).  CPU seconds are less "
        "sensitive to the other jobs on the machine; OpenMP threads that spin count in them.",
        "",
        "| data set | n × d | exact s | " + " | ".join(libs) + " |",
        "|---|---|---|" + "---|" * len(libs),
    ]
    for name in names:
        rs = [r for r in recs if r["dataset"] == name]
        cells = []
        for lib in libs:
            mine = [r for r in rs if r["library"] == lib]
            if not mine:
                cells.append("/")
                continue
            rec = np.median([r["recall"] for r in mine])
            sec = np.median([r["seconds"] for r in mine])
            cpu = np.median([r["cpu_seconds"] for r in mine])
            cells.append(f"{rec:.3f} / {sec:.2f} s / {cpu:.2f} s")
        lines.append(
            f"| {name} | {rs[0]['n']:,} × {rs[0]['d']} | {rs[0]['exact_seconds']:.2f} | "
            + " | ".join(cells)
            + " |"
        )
    if "pynndescent_compile_seconds" in results:
        lines += [
            "",
            f"pynndescent's numba compilation (first call in a process, not in the "
            f"table): {results['pynndescent_compile_seconds']:.1f} s.",
        ]
    (out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
