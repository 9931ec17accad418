"""kNN graph construction: time and peak memory, semiscale versus scikit-learn.

Every (data set, method) pair runs in a fresh subprocess so that its peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) is its own; the time is the median of 3 runs
(1 run when the first takes over 30 s).  Methods:

- ``sklearn``: ``NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)`` (its default
  algorithm and ``n_jobs``);
- ``exact`` / ``approximate``: ``semiscale.graph.kneighbors(X, k, method=...)``;
- ``graph``: the whole ``KNNGraph(n_neighbors=k).fit(X)`` with ``method="auto"`` (search, heat
  weights, union symmetrization, Laplacian, components).

Data are passed as a user holds them: a9a and w8a as CSR (LIBSVM, binary features), usps,
skin_nonskin and two moons as dense float64.  k = 8, except 6 on 1M two-moons points.

Usage::

    python benchmarks/graph.py           # full run, writes benchmarks/results/graph.{json,md}
    python benchmarks/graph.py --quick   # 5,000-row subsets and 50k moons, prints only
    python benchmarks/graph.py --render  # rewrite the .md from the saved .json

Notes: ``KNNGraph`` on w8a runs a 4,000-point HNSW pilot first, finds its recall too low (binary
data with 30 % duplicate rows) and searches exactly; ``approximate`` on 2-D/3-D data is shown for
completeness only (``method="auto"`` uses the k-d tree there).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ann_choice import load_libsvm, machine_info, two_moons  # noqa: E402

RESULTS = HERE / "results"
METHODS = ("sklearn", "exact", "approximate", "graph")
DATASETS = {  # name: (loader, k)
    "a9a": (lambda: load_libsvm("a9a", 123)[0], 8),
    "w8a": (lambda: load_libsvm("w8a", 300)[0], 8),
    "usps": (lambda: load_libsvm("usps", 256)[0].toarray(), 8),
    "skin_nonskin": (lambda: load_libsvm("skin_nonskin", 3)[0].toarray(), 8),
    "moons1M": (lambda: two_moons(1_000_000), 6),
}
QUICK_ROWS = 5000
QUICK_MOONS = 50_000
SLOW_RUN_S = 30.0
TIMEOUT_S = 1800


def load(name: str, quick: bool):
    if quick and name == "moons1M":
        return two_moons(QUICK_MOONS), DATASETS[name][1]
    loader, k = DATASETS[name]
    X = loader()
    return (X[:QUICK_ROWS] if quick else X), k


def run_once(method: str, X, k: int):
    """One timed run; returns (seconds, distances or None, extra info)."""
    from semiscale.graph import KNNGraph
    from semiscale.graph.knn import search

    start = time.perf_counter()
    if method == "sklearn":
        from sklearn.neighbors import NearestNeighbors

        nn = NearestNeighbors(n_neighbors=k + 1).fit(X)
        dist, _ = nn.kneighbors(X)
        return time.perf_counter() - start, None, {"algorithm": nn._fit_method}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "graph":
            g = KNNGraph(n_neighbors=k).fit(X)
            info = {
                "search_method": g.search_method_,
                "search_recall": g.search_recall_,
                "timings": g.timings_,
                "nnz": int(g.adjacency_.nnz),
                "n_components": int(g.n_components_),
            }
            dist = None
        else:
            dist, _, info = search(X, k, method=method)
    seconds = time.perf_counter() - start
    info["warnings"] = sorted({f"{w.category.__name__}: {w.message}"[:160] for w in caught})
    return seconds, dist, info


def worker(name: str, method: str, quick: bool, out: str) -> None:
    """Child process: load, run up to 3 times, write a JSON record (and distances)."""
    X, k = load(name, quick)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times, info, dist = [], {}, None
    for _ in range(3):
        seconds, dist, info = run_once(method, X, k)
        times.append(seconds)
        if seconds > SLOW_RUN_S:
            break
    if dist is not None:
        np.save(out + ".npy", dist)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    record = {
        "dataset": name,
        "method": method,
        "n": X.shape[0],
        "d": X.shape[1],
        "k": k,
        "sparse": hasattr(X, "toarray"),
        "times_s": times,
        "median_s": statistics.median(times),
        "peak_rss_mib": peak,
        "rss_after_load_mib": rss_data,
        **info,
    }
    Path(out).write_text(json.dumps(record))


def spawn(name: str, method: str, quick: bool, tmp: Path) -> dict:
    out = str(tmp / f"{name}-{method}.json")
    cmd = [sys.executable, __file__, "--worker", name, method, out] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode:
        print(proc.stderr[-2000:], file=sys.stderr)
        return {"dataset": name, "method": method, "error": proc.stderr.strip()[-300:]}
    return json.loads(Path(out).read_text())


def recall(approx: np.ndarray, exact: np.ndarray) -> float:
    """Distance-based recall: share of returned neighbours within the exact k-th distance."""
    return float((approx <= exact[:, -1:] * (1 + 1e-6) + 1e-12).mean())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--worker", nargs=3, metavar=("DATASET", "METHOD", "OUT"), help=argparse.SUPPRESS
    )
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--render", action="store_true", help="rewrite the .md from the .json")
    args = parser.parse_args(argv)
    if args.render:
        report = json.loads((RESULTS / "graph.json").read_text())
        (RESULTS / "graph.md").write_text(to_markdown(report))
        return
    if args.worker:
        worker(*args.worker[:2], args.quick, args.worker[2])
        return
    command = "python benchmarks/graph.py" + (" --quick" if args.quick else "")
    info = machine_info()
    print(f"{command}\nmachine: {info}", flush=True)
    wall = time.perf_counter()
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            found = {}
            for method in METHODS:
                rec = spawn(name, method, args.quick, Path(tmp))
                found[method] = rec
                records.append(rec)
                print(
                    f"{name:13s} {method:12s} "
                    + (
                        f"{rec['median_s']:8.2f}s  peak {rec['peak_rss_mib']:7.0f} MiB"
                        if "error" not in rec
                        else "ERROR"
                    ),
                    flush=True,
                )
            exact_file = Path(tmp) / f"{name}-exact.json.npy"
            approx_file = Path(tmp) / f"{name}-approximate.json.npy"
            if exact_file.exists() and approx_file.exists():
                found["approximate"]["recall"] = recall(np.load(approx_file), np.load(exact_file))
    report = {
        "command": command,
        "machine": info,
        "machine_after": machine_info(),
        "wall_s": time.perf_counter() - wall,
        "records": records,
    }
    md = to_markdown(report)
    print(md)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "graph.json").write_text(json.dumps(report, indent=1))
        (RESULTS / "graph.md").write_text(md)


def to_markdown(report) -> str:
    by = {(r["dataset"], r["method"]): r for r in report["records"]}
    names = list(dict.fromkeys(r["dataset"] for r in report["records"]))
    lines = [
        "# kNN graph construction: semiscale vs scikit-learn",
        "",
        f"Command: `{report['command']}` (total wall time {report['wall_s']:.0f} s)",
        "",
        f"Machine: {report['machine']['cores']} cores, {report['machine']['cpu']}, "
        f"Python {report['machine']['python']}, BLAS {report['machine']['blas']}; load average "
        f"{report['machine']['load_avg']} before, {report['machine_after']['load_avg']} after "
        "(the machine is shared: other jobs may add noise).",
        "",
        "Time = median of 3 runs (1 when a run exceeds 30 s), seconds; peak = max RSS of the "
        "fresh subprocess (data included), MiB. `sklearn` = `NearestNeighbors(k+1).fit(X)."
        "kneighbors(X)`; `exact`/`approx` = `semiscale.graph.kneighbors`; `KNNGraph` = the full "
        "`KNNGraph(n_neighbors=k).fit(X)` (method=auto: search + weights + Laplacian).",
        "",
        "| data | n | d | k | sklearn s (algo) | exact s | approx s (recall) | KNNGraph s (search) "
        "| speed-up vs sklearn: exact / KNNGraph | peak MiB sklearn / exact / approx / KNNGraph |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        recs = [by.get((name, m), {}) for m in METHODS]
        if any("median_s" not in r for r in recs):
            lines.append(f"| {name} | error: {[r.get('error', '') for r in recs]} |")
            continue
        sk, ex, ap, gr = recs
        speedup = f"{sk['median_s'] / ex['median_s']:.1f}× / {sk['median_s'] / gr['median_s']:.1f}×"
        lines.append(
            f"| {name} | {sk['n']} | {sk['d']}{' (CSR)' if sk['sparse'] else ''} | {sk['k']} | "
            f"{sk['median_s']:.2f} ({sk['algorithm']}) | {ex['median_s']:.2f} | "
            f"{ap['median_s']:.2f} ({ap.get('recall', float('nan')):.4f}) | "
            f"{gr['median_s']:.2f} ({gr['search_method']}) | {speedup} | "
            f"{sk['peak_rss_mib']:.0f} / {ex['peak_rss_mib']:.0f} / {ap['peak_rss_mib']:.0f} / "
            f"{gr['peak_rss_mib']:.0f} |"
        )
    lines += [
        "",
        "KNNGraph stage timings (s): "
        + "; ".join(
            f"{name}: "
            + ", ".join(f"{k} {v:.2f}" for k, v in by[(name, "graph")]["timings"].items())
            for name in names
            if "timings" in by.get((name, "graph"), {})
        ),
        "",
        "Warnings raised (per data set and method):",
        "",
    ]
    for r in report["records"]:
        for w in r.get("warnings", []):
            lines.append(f"- {r['dataset']} / {r['method']}: {w}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
