"""Paper 002, Figure 5: the time to build the data-dependent kernel against the number of points.

The paper (§5.3) times "the computation of the matrix Q̂ from Q" and of the n̂ × n̂ inverse
``(I + ηQ̂K̂)⁻¹``, the graph excluded, on MNIST with a non-normalized Laplacian, p = 1, γ = 1,
η = 1 and n̂ = 250, for preconditioned CG, Matlab's backslash and the cubic construction
``(I_n + ηQK)⁻¹``.  Here :class:`~semiscale.kernels.DataDependentKernel` is fitted with the
graph's Laplacian given (``graph="estimator"``: the graph is built once per size, timed on its
own and passed to every method), so a fit is the kernel's own work: Z (n̂ SDD solves), A = ZᵀQZ,
its small factorization, and the ``(I + ηQ̂K̂)⁻¹`` factor.  Methods (the kernel's ``solver`` or
``construction``): ``amg`` (CG preconditioned by smoothed-aggregation AMG), ``cg`` (Jacobi CG),
``direct`` (a sparse LU) and ``exact`` (eq. 4 on all n points, O(n³)).

Data (constants below): *digits*, the first n rows of one seeded permutation of an extended USPS
of the ten digits (:func:`~semiscale.datasets.make_extended_usps`, ``train_copies=5``: USPS's
7,291 training digits and 80 % of MNIST's test digits resized to 16 × 16, each with four random
affine copies, 76,455 rows of 256 pixels), n = 1,000 … 64,000; *moons*, two moons in 2-D
(:func:`~semiscale.datasets.make_two_moons`, noise 0.1, seed 0), n = 15,625, 125,000 …
1,000,000.  The graph is the paper's: 5 nearest neighbours, binary weights, ``max(A, Aᵀ)``, the
unnormalized Laplacian (:class:`~semiscale.graph.KNNGraph`, ``method="auto"``: blocked brute
force or HNSW on digits, a k-d tree on moons).

Every fit runs in a fresh Python process that loads X and the Laplacian from files, so its peak
resident memory (Linux ``VmHWM``: native allocations included, which tracemalloc misses) is the
kernel's own plus the loaded data (recorded separately as ``rss_before_fit_bytes``).  A fit under
:data:`REPEAT_BELOW_SECONDS` is repeated (:data:`REPEATS` in all, the median recorded); a slower
one runs once.  A method other than AMG-CG stops at the first size whose predicted time (its
last time scaled by the size ratio to the power :data:`GROWTH`) exceeds :data:`CAP_SECONDS`; that
size is recorded as capped, with the prediction; ``exact`` stops above the kernel's
``EXACT_MAX_SAMPLES``.  A fit that outlives :data:`TIMEOUT_SECONDS` is killed and recorded.  A
quick run (``protocol.quick``) fits tiny problems once each, in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from semiscale_bench.paper002.timing_settings import (
    _EXTENDED,
    _FULL,
    _MOONS_NOISE,
    CAP_SECONDS,
    GRAPH,
    GROWTH,
    MEMORY_BUDGET_BYTES,
    METHODS,
    PAPER,
    REPEAT_BELOW_SECONDS,
    REPEATS,
    TIMEOUT_SECONDS,
    _current,
    _setting,
    _spec,
    experiment_store,
    families,
    kernel_settings,
)

__all__ = [
    "CAP_SECONDS",
    "GROWTH",
    "MEMORY_BUDGET_BYTES",
    "REPEATS",
    "REPEAT_BELOW_SECONDS",
    "TIMEOUT_SECONDS",
    "child",
    "families",
    "render_timing",
    "run_timing",
]


def main(argv=None) -> None:
    """``python -m semiscale_bench.paper002.timing --out DIR [--quick] [--only NAME]``.

    Runs the timing and clustering experiments without the learning curves, into the folder
    ``semiscale-bench paper002 --out DIR`` uses (their records are its records), and renders
    their reports there.
    """
    import argparse
    import os
    import types

    from semiscale_bench.harness import RunContext
    from semiscale_bench.harness.benchmark import _logger
    from semiscale_bench.paper002 import clustering

    parser = argparse.ArgumentParser(prog="python -m semiscale_bench.paper002.timing")
    parser.add_argument("--out", required=True, help="the benchmark's output folder")
    parser.add_argument("--quick", action="store_true", help="the tiny smoke-test variant")
    parser.add_argument("--only", choices=("timing", "clustering"), help="one experiment")
    parser.add_argument("--force", action="store_true", help="redo recorded work")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--family", choices=tuple(_FULL), help="timing: one family of data")
    parser.add_argument("--max-n", type=int, help="timing: the sizes up to this one")
    parser.add_argument("--sizes", type=int, nargs="+", help="timing: only these sizes")
    parser.add_argument("--methods", nargs="+", choices=tuple(METHODS), help="timing: only these")
    args = parser.parse_args(argv)
    protocol = types.SimpleNamespace(quick=args.quick)
    command = "python -m semiscale_bench.paper002.timing " + " ".join(argv or sys.argv[1:])
    parent = types.SimpleNamespace(
        folder=args.out, force=args.force, run_id=None, command=command.strip()
    )
    ctx = RunContext([], os.environ.get("SEMISCALE_DATA"), _logger(PAPER, 1), verbose=1)
    for name, module in (("timing", sys.modules[__name__]), ("clustering", clustering)):
        if args.only in (None, name):
            if not args.render_only:
                ctx.experiment = name
                extra = {"family": args.family, "max_n": args.max_n, "sizes": args.sizes}
                extra["methods"] = args.methods
                extra = extra if name == "timing" else {}
                getattr(module, f"run_{name}")(None, protocol, parent, ctx, **extra)
            for line in getattr(module, f"render_{name}")(parent, protocol, args.out):
                print(line)


def _measured(store, protocol, family, method, n):
    """The record a cap decision reads: the current one, or (forced) one of this very run."""
    rec = _current(store, protocol, family, method, n)
    if rec is None:  # a forced run: what it has measured itself
        rec = store.get("timing", family, method, 0, _setting(n))
        if (
            rec is None
            or rec.get("run") != store.run_id
            or rec.get("spec") != _spec(protocol, family)
        ):
            return None
    return rec


def _done(store, protocol, family, method, n):
    """The current record of a fit that ran (or failed); a cap is decided again on every run."""
    rec = _current(store, protocol, family, method, n)
    return None if rec is None or "capped" in rec else rec


# --------------------------------------------------------------------------------- data
def _digits(source: str, n_max: int, data_home) -> np.ndarray:
    """The first ``n_max`` rows of one seeded permutation of the digit set."""
    from semiscale.datasets import load_dataset, make_extended_usps

    if source == "extended_usps":
        X = make_extended_usps(**_EXTENDED, data_home=data_home)[0]
    else:  # quick runs: USPS's training digits as they are
        X = np.asarray(load_dataset("usps", "train", data_home=data_home, dense=True)[0])
    if n_max > len(X):
        raise ValueError(f"the digit set has {len(X)} rows, fewer than n = {n_max}")
    order = np.random.default_rng(0).permutation(len(X))[:n_max]
    return np.ascontiguousarray(X[order], dtype=np.float64)


def _points(family_spec, n: int, digits) -> np.ndarray:
    if family_spec["source"] == "moons":
        from semiscale.datasets import make_two_moons

        return make_two_moons(n, noise=_MOONS_NOISE, random_state=0)[0]
    return digits[:n]


# --------------------------------------------------------------------------------- child
_CHILD = "from semiscale_bench.paper002.timing import child; child()"


def _rss(field: str) -> int | None:
    from semiscale._memory import proc_field_bytes

    return proc_field_bytes("/proc/self/status", field)


def _kernel(method: str, settings: dict):
    from semiscale.kernels import RBF, DataDependentKernel

    exact = method == "exact"
    return DataDependentKernel(
        base_kernel=RBF(gamma=settings["gamma"]),
        graph="estimator",
        power=settings["power"],
        ridge=settings["ridge"],
        n_landmarks=settings["n_landmarks"],
        eta=settings["eta"],
        landmark_selection="random",
        construction="exact" if exact else "landmarks",
        solver="direct" if exact else method,
        random_state=0,
    )


def _facts(fitted) -> dict:
    """Iterations, ε reached, residual and the phase times a fitted kernel reports."""
    out = {}
    for name in ("iterations_", "epsilon_", "residual_"):
        value = getattr(fitted, name, None)
        if value is not None:
            value = np.asarray(value, dtype=np.float64)
            out[name.rstrip("_")] = float(np.max(value)) if value.size else None
    out["phases"] = {k: float(v) for k, v in (getattr(fitted, "timings_", None) or {}).items()}
    return out


def build(
    x_path: str, laplacian_path: str, method: str, settings: dict, repeats: int = REPEATS
) -> dict:
    """Fit the kernel on the stored problem, ``repeats`` times when fast; its record."""
    import scipy.sparse as sp

    X = np.load(x_path)
    L = sp.load_npz(laplacian_path).tocsr()
    before = _rss("VmHWM")
    load = os.getloadavg()[0]  # other jobs on the machine slow every fit: recorded
    seconds, fitted = [], None
    while len(seconds) < repeats:
        kernel = _kernel(method, settings)
        start = time.perf_counter()
        fitted = kernel.fit(X, laplacian=L)
        seconds.append(time.perf_counter() - start)
        if seconds[0] >= REPEAT_BELOW_SECONDS:
            break
    return {
        "isolated": True,
        "seconds": float(np.median(seconds)),
        "runs": seconds,
        **_facts(fitted),
        "rss_before_fit_bytes": before,
        "peak_rss_bytes": _rss("VmHWM"),
        "load_average": [load, os.getloadavg()[0]],
    }


def child() -> None:
    """The subprocess's entry point: a spec (JSON) on stdin, its record (JSON) last on stdout."""
    from semiscale_bench.harness.records import jsonable

    spec = json.loads(sys.stdin.read())
    print(json.dumps(jsonable(build(**spec))))


def _in_child(spec: dict, timeout: float) -> dict:
    """:func:`build` in a fresh process; a record with ``error`` if it died or timed out.

    A child killed at ``timeout`` records its peak resident memory so far (``VmHWM`` read just
    before the kill: a lower bound of the fit's).
    """
    from semiscale._memory import proc_field_bytes

    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(json.dumps(spec), timeout=timeout)
    except subprocess.TimeoutExpired:
        peak = proc_field_bytes(f"/proc/{proc.pid}/status", "VmHWM")
        proc.kill()
        proc.communicate()
        return {
            "error": f"killed after {timeout:.0f} s (TIMEOUT_SECONDS)",
            "timed_out": True,
            "peak_rss_at_kill_bytes": peak,
        }
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = " ".join(err.split())[-400:]
        return {"error": f"subprocess exited with {proc.returncode}: {tail}"}
    return json.loads(lines[-1])


# --------------------------------------------------------------------------------- run
def _graph(X, folder: Path, n: int) -> tuple[str, dict]:
    """The paper's graph of X, timed; its Laplacian saved for the children."""
    import scipy.sparse as sp

    from semiscale.graph import KNNGraph

    start = time.perf_counter()
    graph = KNNGraph(**GRAPH, random_state=0).fit(X)
    seconds = time.perf_counter() - start
    path = folder / f"laplacian_{n}.npz"
    sp.save_npz(path, graph.laplacian_, compressed=False)
    facts = {
        "graph_seconds": seconds,
        "graph_search": graph.search_method_,
        "graph_edges": int(graph.adjacency_.nnz // 2),
        "graph_components": int(graph.n_components_),
    }
    return str(path), facts


def _cap_reason(method: str, last: dict | None, n: int, prev: dict | None = None) -> str | None:
    """Why ``n`` is not run, from the method's last records at smaller sizes (None: run it).

    The predicted time is ``last``'s scaled by the size ratio to the larger of
    :data:`GROWTH` and the exponent measured between ``prev`` and ``last``.
    """
    from semiscale.kernels._data_dependent_fit import EXACT_MAX_SAMPLES

    if method == "exact" and n > EXACT_MAX_SAMPLES:
        return (
            f"capped: construction='exact' is refused above {EXACT_MAX_SAMPLES:,} points "
            "(n × n dense matrices)"
        )
    if last is None or method == "amg":
        return None
    if "error" in last or "capped" in last:
        return f"not run: the method stopped at n = {last['n']} ({last.get('error', 'capped')})"
    exponent = GROWTH[method]
    if prev is not None and prev.get("seconds") and prev["n"] < last["n"]:
        measured = np.log(last["seconds"] / prev["seconds"]) / np.log(last["n"] / prev["n"])
        exponent = max(exponent, float(measured))
    predicted = last["seconds"] * (n / last["n"]) ** exponent
    if predicted > CAP_SECONDS:
        return (
            f"capped: predicted {predicted:.0f} s (the {last['seconds']:.1f} s at n = "
            f"{last['n']} × (n ratio)^{exponent:.2f}) > CAP_SECONDS = {CAP_SECONDS:g}"
        )
    return None


def run_timing(
    bench, protocol, store, ctx, *, family=None, max_n=None, sizes=None, methods=None
) -> None:
    """Every (family, n, method) without a current record, recorded (see the module doc).

    ``family``, ``max_n``, ``sizes`` and ``methods`` restrict this call to one family, the
    sizes up to ``max_n``, the given sizes or methods (a long run in pieces; the records
    resume; with the store's ``force``, a remeasurement of those only).
    """

    def keep(n):
        return (max_n is None or n <= max_n) and (sizes is None or n in sizes)

    fams = {
        fam: {
            **spec,
            "sizes": tuple(n for n in spec["sizes"] if keep(n)),
            "methods": tuple(m for m in spec["methods"] if methods is None or m in methods),
        }
        for fam, spec in families(protocol).items()
        if family in (None, fam)
    }
    parent, store = store, experiment_store(store, protocol, "timing")
    todo = [
        (fam, n, meth)
        for fam, spec in fams.items()
        for n in spec["sizes"]
        for meth in spec["methods"]
        if _done(store, protocol, fam, meth, n) is None
    ]
    if not todo:
        return
    start = time.perf_counter()
    store = experiment_store(parent, protocol, "timing", start=True)
    with ctx.fits(total=len(todo)) as bar, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for fam, spec in fams.items():
            mine = [t for t in todo if t[0] == fam]
            if not mine:
                continue
            digits = None
            if spec["source"] != "moons":
                bar.set_postfix_str(f"{fam}: data", refresh=False)
                digits = _digits(spec["source"], max(spec["sizes"]), ctx.data_home)
            for n in spec["sizes"]:
                methods = [m for f, size, m in mine if size == n]
                if methods:
                    _run_size(store, protocol, ctx, bar, folder, fam, spec, n, methods, digits)
                    bar.update(len(methods))
            del digits
    store.end_run(wall_seconds=time.perf_counter() - start)


def _run_size(store, protocol, ctx, bar, folder, fam, spec, n, methods, digits) -> None:
    key = {"spec": _spec(protocol, fam), "n": n}
    smaller = [None, None] + [m for m in spec["sizes"] if m < n]
    reasons = {}
    for meth in methods:
        prev, last = (
            None if size is None else _measured(store, protocol, fam, meth, size)
            for size in smaller[-2:]
        )
        reasons[meth] = _cap_reason(meth, last, n, prev)
    runnable = [m for m in methods if reasons[m] is None]
    for meth in methods:
        if reasons[meth] is not None:
            store.put("timing", fam, meth, 0, _setting(n), **key, capped=reasons[meth])
            ctx.log(f"timing {fam} n = {n} {meth}: {reasons[meth]}")
    if not runnable:
        return
    bar.set_postfix_str(f"{fam} n = {n}: graph", refresh=False)
    X = _points(spec, n, digits)
    x_path = folder / f"x_{fam}_{n}.npy"
    np.save(x_path, X)
    l_path, graph = _graph(X, folder, n)
    del X
    ctx.log(f"timing {fam} n = {n}: graph {graph['graph_seconds']:.1f} s ({graph['graph_search']})")
    for meth in runnable:
        bar.set_postfix_str(f"{fam} n = {n}: {meth}", refresh=False)
        child_spec = {
            "x_path": str(x_path),
            "laplacian_path": l_path,
            "method": meth,
            "settings": kernel_settings(protocol),
        }
        if protocol.quick:  # a smoke test: no child process (its start costs seconds)
            rec = build(**child_spec, repeats=1)
            rec["isolated"] = False
        else:
            rec = _in_child(child_spec, TIMEOUT_SECONDS)
        store.put("timing", fam, meth, 0, _setting(n), **key, **graph, **rec)
        ctx.log(
            f"timing {fam} n = {n} {meth}: "
            + (
                f"{rec['seconds']:.2f} s (runs {', '.join(f'{s:.2f}' for s in rec['runs'])}), "
                f"peak RSS {rec['peak_rss_bytes'] / 2**20:.0f} MiB"
                if "error" not in rec
                else f"FAILED {rec['error']}"
            )
        )
    for path in (x_path, Path(l_path)):
        os.remove(path)


def render_timing(store, protocol, out_dir) -> list[str]:
    """timing.md, timing.png and timing.json from the records; returns the summary lines.

    The report is :mod:`.timing_report` (imported here, as it reads this module's settings).
    """
    from semiscale_bench.paper002.timing_report import render

    return render(store, protocol, out_dir)


if __name__ == "__main__":
    main()
