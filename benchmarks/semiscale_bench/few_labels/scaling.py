"""The scaling experiment: two moons of growing size, end to end, one fit per subprocess.

For each size n of :attr:`scaling_n` and each method of :attr:`scaling_methods` (up to its
:attr:`scaling_max_n`), a fresh Python process draws ``make_two_moons(n, noise, random_state=0)``
and one label per class (the draw of trial 0), builds the method at its defaults (plus
:attr:`scaling_params`), fits it on the raw points, so that the estimator builds its own
default graph and the time includes it, and reports the fit's seconds, the graph's
(``timings_["graph"]``), the solver's iterations (``n_iter_``), the transductive accuracy on
the unlabeled points and the process's peak resident memory (:func:`peak_rss_bytes`: native
allocations included, which tracemalloc misses).  A fresh process per fit keeps the peak its
own: no earlier, larger fit is carried over (Linux's ``VmHWM``, not ``ru_maxrss``, which
``execve`` carries over from the parent).
"""

from __future__ import annotations

import json
import sys
from functools import partial

import numpy as np

from semiscale_bench.few_labels.data import draw_labels
from semiscale_bench.harness.child import run_child

__all__ = [
    "child",
    "fit_moons",
    "fit_in_subprocess",
    "run_scaling",
    "scaling_spec",
]

#: What the subprocess runs: it reads the spec on stdin, writes the record on its last line.
_CHILD = "from semiscale_bench.few_labels.scaling import child; child()"


def setting_of(n: int) -> str:
    return f"n={n}"


def scaling_spec(protocol, method: str) -> dict:
    """What a scaling record was made with, beside its size (compared on a rerun)."""
    params = json.loads(json.dumps(protocol.scaling_params_of(method)))
    return {"noise": float(protocol.scaling_noise), "params": params}


def current(store, protocol, dataset, method, n):
    """The scaling record of ``(method, n)`` if it was made with the current knobs, else None."""
    rec = store.get("scaling", dataset, method, 0, setting_of(n))
    if rec is None or store.force:
        return None
    spec = scaling_spec(protocol, method)
    return rec if all(rec.get(k) == v for k, v in spec.items()) else None


def fit_moons(method: str, n: int, noise: float, params: dict) -> dict:
    """Fit ``method`` on two moons of ``n`` points with one label per class; its record."""
    from semiscale.datasets import make_two_moons
    from semiscale_bench.few_labels.methods import METHODS
    from semiscale_bench.harness import Sizes, measured_fit
    from semiscale_bench.harness.runner import estimator_facts

    X, y = make_two_moons(n, noise=noise, random_state=0)
    y = np.asarray(y, dtype=np.int64)
    observed = draw_labels(y, 1, 0)
    est = METHODS.build(
        method, {"defaults": {}}, Sizes(n, X.shape[1], n, 2), protocol=None, dataset="", seed=0
    )
    est.set_params(**params)
    from semiscale_bench.harness.machine import peak_rss_bytes

    before = peak_rss_bytes()
    rec = measured_fit(partial(est.fit, X, observed), trace_memory=False)
    rec["max_rss_before_fit_bytes"] = before
    rec["max_rss_bytes"] = peak_rss_bytes()
    if "error" in rec:
        return rec
    free = observed == -1
    rec["accuracy"] = float(np.mean(est.transduction_[free] == y[free]))
    rec["graph_seconds"] = getattr(est, "timings_", {}).get("graph")
    facts = estimator_facts(est)
    facts.pop("residuals")
    return {**rec, **facts}


def child() -> None:
    """The subprocess's entry point: a spec (JSON) on stdin, its record (JSON) on stdout."""
    from semiscale_bench.harness.records import jsonable

    spec = json.loads(sys.stdin.read())
    print(json.dumps(jsonable(fit_moons(**spec))))


def fit_in_subprocess(spec: dict) -> dict:
    """:func:`fit_moons` of ``spec`` in a fresh Python process; a record with ``error`` if it
    died (e.g. out of memory)."""
    return run_child(_CHILD, spec)


def run_scaling(bench, protocol, store, ctx) -> None:
    """Every (size, method) of the scaling experiment without a current record, recorded.

    Runs when the two-moons dataset is selected (``--datasets``); its records are
    ``("scaling", <two moons>, method, setting "n=<n>")``.
    """
    from semiscale_bench.few_labels.protocol import MOONS

    names = [d.name for d in protocol.datasets if d.source == MOONS and d.name in ctx.datasets]
    if not names:
        return
    name = names[0]
    todo = [
        (n, meth)
        for n in protocol.scaling_n
        for meth in protocol.scaling_methods
        if protocol.scaling_runs(meth, n) and current(store, protocol, name, meth, n) is None
    ]
    with ctx.fits(total=len(todo)) as bar:
        for n, meth in todo:
            bar.set_postfix_str(f"{meth}, n = {n}", refresh=False)
            spec = {"n": n, **scaling_spec(protocol, meth)}
            rec = fit_in_subprocess({"method": meth, **spec})
            store.put("scaling", name, meth, 0, setting_of(n), **spec, **rec)
            bar.update()
            ctx.log(
                f"scaling: {meth} n = {n}: "
                + (
                    f"{100 * rec['accuracy']:.2f} %, {rec['fit_seconds']:.2f} s, peak RSS "
                    f"{rec['max_rss_bytes'] / 2**20:.0f} MiB"
                    if "error" not in rec
                    else f"FAILED {rec['error']}"
                )
            )
