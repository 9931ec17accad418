"""Results tables from the table experiment's records: ours beside the paper's numbers.

:func:`collect` gathers, per dataset run, its sizes, CV record, graph records and per-method
(summary, records); :func:`side_by_side` lays a summary statistic out as datasets x methods,
each of the paper's methods followed by the paper's value; :func:`paired` compares two methods
on the repeats both ran (the fair comparison when caps leave one with fewer repeats).
"""

from __future__ import annotations

import numpy as np

from semiscale_bench.harness.protocol import Sizes
from semiscale_bench.harness.records import KEY
from semiscale_bench.harness.report import fmt, md_table, summarize

__all__ = [
    "at_most",
    "below_paper",
    "cell",
    "collect",
    "paired",
    "side_by_side",
    "versus_method",
]

_META = (*KEY, "protocol", "run")


def collect(protocol, store, metric: str) -> dict:
    """Dataset -> {"sizes", "repeats", "cv", "graphs", "methods": {method: (summary, records)}}."""
    out = {}
    for ds in protocol.datasets:
        size = store.get("table", ds.name, "sizes")
        if ds.source is None or size is None:
            continue
        methods = {}
        for meth in protocol.methods:
            recs = sorted(store.select("table", ds.name, meth), key=lambda r: r["repeat"])
            methods[meth] = (summarize(recs, metric), recs)
        out[ds.name] = {
            "sizes": Sizes(**{k: v for k, v in size.items() if k not in _META}),
            "repeats": protocol.repeats_for(ds.name)[0],
            "cv": store.get("cv", ds.name, "search"),
            "graphs": sorted(store.select("table", ds.name, "graph"), key=lambda r: r["repeat"]),
            "methods": methods,
        }
    return out


def cell(data: dict, meth: str, key: str, scale: float = 1.0, digits: int = 3) -> str:
    """Our value of summary ``key`` ("mean": mean ± std); "/" when not run, "error" when failed.

    ``[r=k]`` marks a value over k repeats only; ``*`` iterations that did not converge.
    """
    summary, recs = data["methods"][meth]
    if not summary:
        return "error" if recs else "/"
    if key == "mean":
        txt = fmt(summary["mean"])
        txt += f" ± {fmt(summary['std'], 2)}" if summary["n_repeats"] > 1 else ""
    elif key.startswith("iter"):
        txt = f"{summary[key]:.0f}" + ("" if summary["converged_all"] else "*")
    else:
        txt = fmt(summary[key] / scale, digits)
    n = summary["n_repeats"]
    return txt + (f" [r={n}]" if n < data["repeats"] else "")


def side_by_side(protocol, data, key, paper_methods, paper_cell, scale=1.0, sizes=()):
    """Datasets x methods: each of ``paper_methods`` with ``paper_cell(dataset, method)`` beside.

    Rows: the datasets run, and those we do not have (the paper's numbers alone); the other
    methods of the protocol follow as extra columns; ``sizes`` names Sizes fields shown first.
    """
    extra = [m for m in protocol.methods if m not in paper_methods]
    cols = ["dataset", *sizes] + [c for m in paper_methods for c in (m, "paper")] + extra
    rows = []
    for ds in protocol.datasets:
        d = data.get(ds.name)
        if d is None and ds.source is not None:
            continue  # not run this time
        row = [ds.name] + [getattr(d["sizes"], k) if d else "" for k in sizes]
        for meth in paper_methods:
            row += [cell(d, meth, key, scale) if d else "not available", paper_cell(ds.name, meth)]
        rows.append(row + [cell(d, meth, key, scale) if d else "" for meth in extra])
    return md_table(cols, rows)


def paired(data: dict, a: str, b: str, metric: str):
    """(mean of a, mean of b, repeats) of ``metric`` over the repeats both ran, or None."""
    va = {r["repeat"]: r[metric] for r in data["methods"][a][1] if metric in r}
    vb = {r["repeat"]: r[metric] for r in data["methods"][b][1] if metric in r}
    common = sorted(set(va) & set(vb))
    if not common:
        return None
    return float(np.mean([va[r] for r in common])), float(np.mean([vb[r] for r in common])), common


# ------------------------------------------------------------------------- target checks
# Each returns ``check(dataset) -> (cell text, passed) or None`` for a report.Target.
def at_most(data, method: str, key: str, limit: float):
    """``method``'s summary ``key`` (e.g. ``"iterations_max"``) is at most ``limit``."""

    def check(name):
        value = data[name]["methods"][method][0].get(key) if name in data else None
        return None if value is None else (f"{value:g}", value <= limit)

    return check


def versus_method(data, method: str, other: str, metric: str, passes):
    """``passes(relative difference)`` of ``method``'s mean ``metric`` against ``other``'s.

    Over the repeats both ran (:func:`paired`); not applicable where either did not run.
    """

    def check(name):
        pair = paired(data[name], method, other, metric) if name in data else None
        if pair is None:
            return None
        rel = (pair[0] - pair[1]) / pair[1]
        return f"{100 * rel:+.2f} % [r={len(pair[2])}]", passes(rel)

    return check


def below_paper(data, method: str, key: str, paper):
    """``method``'s summary ``key`` is below ``paper(dataset)`` (None: not applicable)."""

    def check(name):
        ours = data[name]["methods"][method][0].get(key) if name in data else None
        theirs = paper(name)
        if ours is None or theirs is None:
            return None
        return f"{ours:.3g} vs {theirs:.3g}", ours < theirs

    return check
