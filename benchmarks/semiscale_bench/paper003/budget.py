"""Paper 003, Figure 1 / Table 2: the budgeted methods on adult-a (a9a) and w8a, peak memory.

Each fit runs in a fresh Python process (:func:`child`) that imports what the fit needs, loads
the set (sparse CSR, as LIBSVM gives it), draws the labels, and only then resets the kernel's
high-water mark of its resident memory (``/proc/self/clear_refs``, ``5``): the peak the record
keeps is ``VmHWM`` after the fit minus ``VmRSS`` just before it (native allocations included:
BLAS buffers, libsvm's cache), the growth the fit itself caused over the loaded data.  Where the
reset is refused, the peak is measured from the process's start (larger, still an upper bound
of the fit's growth: the record says which).  The fit is the whole classifier's: the transformer
(or the TSVM's subsample) and the linear SVM on the labeled rows, then the scores of every
unlabeled row.  A second, identical fit runs under ``tracemalloc`` for its traced peak (Python
and numpy allocations only), unless the first took longer than the protocol's
``trace_below_seconds``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from semiscale_bench.harness.records import jsonable
from semiscale_bench.paper003.data import load_budget_set
from semiscale_bench.paper003.facts import fitted_sizes, load_average

__all__ = [
    "child",
    "fit_once",
    "measure_in_child",
    "measured",
    "run_budget",
    "setting",
    "traced",
]

_CHILD = "from semiscale_bench.paper003.budget import child; child()"


def setting(labels: int, budget: str, width: str) -> str:
    """The record's setting of one Figure 1 cell."""
    return f"l={labels},budget={budget},width={width}"


def _status(field: str) -> int | None:
    from semiscale._memory import proc_field_bytes

    return proc_field_bytes("/proc/self/status", field)


def _reset_peak() -> bool:
    """Reset this process's ``VmHWM`` to its RSS (Linux ``clear_refs``); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    hwm, rss = _status("VmHWM"), _status("VmRSS")
    return hwm is not None and rss is not None and hwm <= rss + 2**20


def measured(work):
    """``work()`` with the growth of this process's resident memory it caused.

    Returns ``(result, seconds, facts)``: ``facts`` holds ``rss_before_bytes`` (VmRSS before),
    ``peak_rss_bytes`` (VmHWM after), ``peak_growth_bytes`` (their difference when the
    high-water mark could be reset first, else VmHWM itself: an upper bound) and ``hwm_reset``.
    """
    isolated = _reset_peak()
    before = _status("VmRSS") or 0
    tic = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - tic
    hwm = _status("VmHWM") or 0
    facts = {
        "rss_before_bytes": before,
        "peak_rss_bytes": hwm,
        "peak_growth_bytes": max(0, hwm - before) if isolated else hwm,
        "hwm_reset": isolated,
    }
    return result, seconds, facts


def traced(work) -> int:
    """tracemalloc's peak of the allocations ``work()`` makes (Python and numpy memory)."""
    import tracemalloc

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        work()
        return max(0, tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()


def fit_once(spec: dict, X, y) -> dict:
    """One budgeted fit as the child makes it: AUC, seconds, peak memory, chosen sizes."""
    from sklearn.metrics import roc_auc_score

    from semiscale_bench.paper003.data import draw_labeled, observed, scores
    from semiscale_bench.paper003.methods import budget_estimator

    labeled = draw_labeled(y, spec["labels"], spec["seed"], stratify=False)
    y_obs = observed(y, labeled)
    unlabeled = np.setdiff1d(np.arange(y.size), labeled)
    timing = {}

    def work():
        est = budget_estimator(
            spec["method"], spec["budget"], spec["gamma"], spec["seed"], spec["sock_n_iter"]
        )
        tic = time.perf_counter()
        est.fit(X, y_obs)
        timing["fit_seconds"] = time.perf_counter() - tic
        return est, float(roc_auc_score(y[unlabeled], scores(est, X, unlabeled)))

    (est, auc), seconds, facts = measured(work)
    rec = {
        "auc": auc,
        "fit_seconds": timing["fit_seconds"],
        "seconds_with_scoring": seconds,
        **facts,
        "sizes": fitted_sizes(est),
        "n": int(y.size),
        "d": int(X.shape[1]),
        "n_labeled": int(labeled.size),
        "n_unlabeled": int(unlabeled.size),
    }
    del est
    if rec["fit_seconds"] <= spec["trace_below_seconds"]:
        rec["peak_traced_bytes"] = traced(work)
    return rec


def save_npz(path, X, y) -> None:
    """The set as the children read it: CSR arrays and the 0/1 targets in one ``.npz``."""
    X = X.tocsr()
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y)


def load_npz(path):
    """``(X, y)`` written by :func:`save_npz` (a child loads the set in a blink)."""
    import scipy.sparse as sp

    with np.load(path) as f:
        X = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
        return X, f["y"].copy()


def child() -> None:
    """A child process: the cell's spec (JSON) on stdin, its record (JSON) last on stdout."""
    # everything the fit imports comes in before the baseline is taken
    import warnings

    import sklearn.metrics  # noqa: F401
    import sklearn.svm  # noqa: F401

    import semiscale.cluster_kernels  # noqa: F401
    import semiscale.models  # noqa: F401
    from semiscale._progress import silenced
    from semiscale_bench.harness.machine import machine_info

    spec = json.loads(sys.stdin.read())
    X, y = load_npz(spec["data_file"])
    with silenced(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = fit_once(spec, X, y)
    rec["warnings"] = sorted({str(w.message)[:160] for w in caught})
    rec["blas"] = machine_info()["blas"]
    print(json.dumps(jsonable(rec)))


def measure_in_child(spec: dict, timeout: float) -> dict:
    """:func:`child` of ``spec`` in a fresh process; a record with ``error`` if it failed."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:g} s", "timeout": True}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = " ".join(proc.stderr.split())[-400:]
        return {"error": f"subprocess exited with {proc.returncode}: {tail}"}
    return json.loads(lines[-1])


def cells(protocol):
    """(dataset, labels, budget, width, method, repeat) of every planned Figure 1 fit.

    The smallest budget first (both sets, both label counts), so that a run cut short has
    the 200 MB cells the targets name.
    """
    out = []
    for budget in protocol.budgets:
        for labels in protocol.budget_labels:
            for name in protocol.budget_sets:
                widths = ["paper"]
                if budget in protocol.default_width_budgets:
                    widths.append("default")
                for width in widths:
                    for method in protocol.budget_methods:
                        if width == "default" and method not in ("SoCK", "NysCK"):
                            continue
                        for r in range(protocol.budget_repeats):
                            out.append((name, labels, budget, width, method, r))
    return out


def run_budget(bench, protocol, store, ctx) -> None:
    """Every Figure 1 fit not recorded yet, each in its own process, recorded."""
    todo = [
        c
        for c in cells(protocol)
        if c[0] in ctx.datasets and not store.done("budget", c[0], c[4], c[5], setting(*c[1:4]))
    ]
    with ctx.fits(total=len(todo)) as bar, tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, labels, budget, width, method, r in todo:
            if name not in files:  # loaded (and subsampled) once; each child reads the .npz
                files[name] = str(Path(tmp) / f"{name}.npz")
                save_npz(files[name], *load_budget_set(protocol, name, ctx.data_home))
            bar.set_postfix_str(f"{name}: {method}, l = {labels}, {budget}, {width}", refresh=False)
            gamma = protocol.gamma_of_sigma(protocol.budget_sigma) if width == "paper" else None
            spec = {
                "data_file": files[name],
                "method": method,
                "labels": labels,
                "budget": budget,
                "gamma": gamma,
                "seed": r,
                "trace_below_seconds": protocol.trace_below_seconds,
                "sock_n_iter": protocol.sock_n_iter,
            }
            load = load_average()
            rec = measure_in_child(spec, protocol.child_timeout)
            rec.update(labels=labels, budget=budget, width=width, gamma=gamma)
            rec["load_before"], rec["load_after"] = load, load_average()
            store.put("budget", name, method, r, setting(labels, budget, width), **rec)
            if "error" in rec:
                ctx.log(
                    f"budget {name} {method} l={labels} {budget} {width}: FAILED {rec['error']}"
                )
            else:
                ctx.log(
                    f"budget {name} {method} l={labels} {budget} {width}: AUC {rec['auc']:.3f}, "
                    f"fit {rec['fit_seconds']:.1f} s, peak +{rec['peak_growth_bytes'] / 2**20:.0f} "
                    f"MiB, {rec['sizes']}"
                )
            bar.update()
