"""Targets judged from the records: PASS, FAIL, or "not measured" with the reason, never PASS.

A :class:`Verdict` is one target's outcome for one method of a benchmark's size curves.
:func:`size_cells` gathers a method's records of one dataset size by size (an error on any
planned repeat fails the size; planned repeats not all recorded leave it not measured);
:func:`combine` turns per-size outcomes into a verdict: a measured miss is a FAIL, a target
with unmeasured points and no miss is "not measured".  The common targets: a value at every
size (:func:`every_size`), at one size (:func:`at_size`), against a reference method wherever
both ran (:func:`versus`), each reading one value of a size's records (:func:`mean_of`,
:func:`min_of`, :func:`median_of`).  A paper's targets are a table of ``(key, summary,
check)``; :func:`judge` checks each for each method and :func:`verdict_lines` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Verdict",
    "at_size",
    "combine",
    "every_size",
    "judge",
    "mean_of",
    "median_of",
    "min_of",
    "percent",
    "size_cells",
    "verdict_lines",
    "versus",
]


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``"PASS"``, ``"FAIL"`` or ``"not measured"``; ``detail`` says why."""

    status: str
    detail: str

    def text(self) -> str:
        return f"**{self.status}**" + (f": {self.detail}" if self.detail else "")


def size_cells(spec, protocol, store, name: str, method: str) -> dict:
    """u -> (records of every planned repeat, None) or (None, why not measured, or the error).

    ``spec`` is the benchmark's :class:`~semiscale_bench.harness.curves.CurveSpec`.
    """
    experiment = spec.experiment(protocol, name)
    out = {}
    for u in spec.sizes(protocol, name):
        repeats, reason = protocol.plan(method, name, spec.plan_sizes(protocol, name, u))
        recs = [
            r
            for r in store.select(experiment, name, method)
            if r["setting"] == f"u={u}" and r["repeat"] in repeats
        ]
        errors = [r for r in recs if "error" in r]
        ok = [r for r in recs if "error" not in r]
        if not repeats:
            out[u] = (None, reason)
        elif errors:
            out[u] = (None, f"ERROR {errors[0]['error']}")
        elif len(ok) < len(repeats):
            out[u] = (None, f"not run yet ({len(ok)} of {len(repeats)} repeats)")
        else:
            out[u] = (ok, None)
    return out


def combine(fails: list[str], missing: list[str], passes: list[str]) -> Verdict:
    """FAIL if anything failed (the unmeasured listed too), else not measured, else PASS."""
    if fails:
        extra = f"; not measured: {'; '.join(missing)}" if missing else ""
        return Verdict("FAIL", "; ".join(fails) + extra)
    if missing:
        return Verdict("not measured", "; ".join(missing))
    return Verdict("PASS", "; ".join(passes))


def every_size(spec, protocol, store, dataset, method, value, passes, unit) -> Verdict:
    """Every size of ``dataset``: ``passes(value(records))``; an error or a fit that did not
    converge fails its size.  ``unit(value)`` is the value as the verdict shows it."""
    fails, unmeasured, ok = [], {}, []
    for u, (recs, why) in size_cells(spec, protocol, store, dataset, method).items():
        if recs is None and why.startswith("ERROR"):
            fails.append(f"u = {u:,}: {why}")
        elif recs is None:
            unmeasured.setdefault(why, []).append(f"{u:,}")
        else:
            v = value(recs)
            stopped = sum(not r.get("converged", True) for r in recs)
            note = f" ({stopped} fit(s) NOT converged)" if stopped else ""
            (ok if passes(v) and not stopped else fails).append(f"u = {u:,}: {unit(v)}{note}")
    missing = [f"u = {', '.join(us)}: {why}" for why, us in unmeasured.items()]
    return combine(fails, missing, ok)


def at_size(spec, protocol, store, dataset, u, method, value, passes, unit, isolated=False):
    """At size ``u`` of ``dataset``: ``passes(value(records))``; with ``isolated``, only fits
    that ran in their own processes are measured (a peak memory)."""
    sizes = spec.sizes(protocol, dataset)
    if u not in sizes:
        return Verdict(
            "not measured", f"u = {u:,} is not in this protocol (largest u = {max(sizes):,})"
        )
    recs, why = size_cells(spec, protocol, store, dataset, method)[u]
    if recs is None:
        return Verdict("FAIL" if why.startswith("ERROR") else "not measured", why)
    if isolated and not all(r.get("isolated") for r in recs):
        return Verdict("not measured", "the fits were not isolated in their own processes")
    v = value(recs)
    return Verdict("PASS" if passes(v) else "FAIL", unit(v))


def versus(spec, protocol, store, datasets, method, reference, metric, better, unit) -> Verdict:
    """Wherever ``method`` and ``reference`` both ran (on their common repeats):
    ``better(metric(ours), metric(theirs))``; ``unit(ours, theirs)`` shows the two."""
    fails, ok = [], []
    for name in datasets:
        ours, theirs = (size_cells(spec, protocol, store, name, m) for m in (method, reference))
        for u in spec.sizes(protocol, name):
            a, b = ours[u][0], theirs[u][0]
            if a is None or b is None:
                continue
            common = sorted({r["repeat"] for r in a} & {r["repeat"] for r in b})
            if not common:
                continue
            va = metric([r for r in a if r["repeat"] in common])
            vb = metric([r for r in b if r["repeat"] in common])
            (ok if better(va, vb) else fails).append(f"{name} u = {u:,}: {unit(va, vb)}")
    if not fails and not ok:
        return Verdict("not measured", f"{method} and {reference} never ran at the same size")
    return combine(fails, [], ok)


def mean_of(key: str):
    """``records -> float``: the mean of field ``key`` over a size's records."""
    return lambda recs: float(np.mean([r[key] for r in recs]))


def min_of(key: str):
    """``records -> float``: the smallest ``key`` over a size's records (the worst repeat)."""
    return lambda recs: float(np.min([r[key] for r in recs]))


def median_of(key: str):
    """``records -> float``: the median of field ``key`` over a size's records."""
    return lambda recs: float(np.median([r[key] for r in recs]))


def percent(v) -> str:
    """A share as a verdict shows it: ``"99.50 %"``."""
    return f"{100 * v:.2f} %"


def judge(targets, methods, protocol, store) -> dict:
    """``{(key, method): Verdict}`` for every target and every method the protocol runs.

    ``targets`` holds ``(key, summary, check)`` with ``check(protocol, store, method)``
    returning a :class:`Verdict`.
    """
    return {
        (key, method): check(protocol, store, method)
        for key, _, check in targets
        for method in methods
        if method in protocol.methods
    }


def verdict_lines(targets, methods, verdicts) -> list[str]:
    """A line per target (its summary), under it a line per method judged with its verdict."""
    lines = []
    for key, summary, _ in targets:
        lines.append(f"- {summary}:")
        lines += [f"  - {m}: {verdicts[key, m].text()}" for m in methods if (key, m) in verdicts]
    return lines
