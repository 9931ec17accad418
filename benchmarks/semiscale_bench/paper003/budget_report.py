"""Paper 003's Figure 1 / Table 2 report: the budgeted fits' table and their targets.

``budget.md``: per set, labels and budget the AUC, fit seconds, measured peak memory and chosen
sizes of the four budgeted methods, Table 2's seconds beside.  :func:`budget_targets` gives
``summary.md`` its three budget lines: peak within the budget, all data in under 30 s, AUC above
the two random-subsampling methods.
"""

from __future__ import annotations

import re

from semiscale._memory import parse_memory_budget
from semiscale_bench.harness.report import header, md_table, pass_fail
from semiscale_bench.paper003 import paper
from semiscale_bench.paper003.budget import cells, setting

__all__ = ["budget_md", "budget_results", "budget_targets", "size_text"]

MIB = 2**20
#: The target's seconds for one NysCK or SoCK fit on a9a / w8a.
FIT_SECONDS_TARGET = 30.0
#: The paper's storage-fit methods, whose budgeted fits the targets are about.
STORAGE_FIT = ("SoCK", "NysCK")


def budget_results(protocol, store) -> dict:
    """(set, labels, budget, width, method) -> the first repeat's record (errors included)."""
    out = {}
    for name, labels, budget, width, method, r in cells(protocol):
        rec = store.get("budget", name, method, r, setting(labels, budget, width))
        if rec is not None and r == 0:
            out[(name, labels, budget, width, method)] = rec
    return out


def _error(rec, limit: int = 220) -> str:
    """The failure's last exception line (a child's stderr ends with it), shortened."""
    text = rec["error"]
    found = list(re.finditer(r"\b\w+(Error|Exception): ", text))
    return (text[found[-1].start() :] if found else text)[:limit]


def size_text(rec) -> str:
    s = rec.get("sizes", {})
    parts = []
    for key, label in (
        ("n_components", "k"),
        ("cut", "h"),
        ("n_landmarks", "s"),
        ("max_rank", "b_t"),
        ("n_random_features", "a_t"),
        ("n_fit_samples", "subsample"),
        ("n_unlabeled_fit", "unlabeled used"),
    ):
        if key in s:
            parts.append(f"{label} = {s[key]:g}")
    if "estimated_bytes" in s:
        parts.append(f"est. {s['estimated_bytes'] / MIB:.0f} MiB")
    return ", ".join(parts) or "—"


def budget_md(protocol, store, results, runs):
    lines = header(
        "Paper 003, Figure 1 / Table 2: budgeted fits on adult-a and w8a", protocol, runs
    )
    lines += [
        f"Width sigma = {protocol.budget_sigma} "
        f"(gamma = {protocol.gamma_of_sigma(protocol.budget_sigma):.4g}) "
        "for every method ('paper'); 'default': the estimator's own default width. Each fit in "
        "a fresh process: peak = VmHWM after the fit minus VmRSS just before it (the high-water "
        "mark reset after loading the data, `clear_refs`), so it is the fit's own growth above "
        "the loaded data, native allocations included; traced = tracemalloc's peak of a second, "
        "identical fit (numpy and Python allocations; '/' where the first fit took longer than "
        f"{protocol.trace_below_seconds:g} s). Fit s: the classifier's fit (transformer and "
        "linear SVM, or the TSVM); AUC on every unlabeled row. Paper s: Table 2 (MATLAB, 2.53 "
        f"GHz). One label draw per cell (the paper: 30).",
        "",
    ]
    for name in protocol.budget_sets:
        for labels in protocol.budget_labels:
            lines += [f"## {name}, {labels:,} labels", ""]
            rows = []
            for budget in protocol.budgets:
                mb = int(budget.rstrip("MB"))
                for width in ("paper", "default"):
                    for i, method in enumerate(protocol.budget_methods):
                        rec = results.get((name, labels, budget, width, method))
                        if rec is None:
                            continue
                        ps = paper.TABLE2.get((labels, name, mb))
                        paper_s = "—" if ps is None or width != "paper" else f"{ps[i]:,}"
                        if "error" in rec:
                            rows.append(
                                [
                                    budget,
                                    width,
                                    method,
                                    "ERROR",
                                    "",
                                    "",
                                    "",
                                    _error(rec),
                                    paper_s,
                                ]
                            )
                            continue
                        traced = rec.get("peak_traced_bytes")
                        rows.append(
                            [
                                budget,
                                width,
                                method,
                                f"{rec['auc']:.3f}",
                                f"{rec['fit_seconds']:.1f}",
                                f"{rec['peak_growth_bytes'] / MIB:.0f}"
                                + ("" if rec.get("hwm_reset", True) else " (from start)"),
                                "/" if traced is None else f"{traced / MIB:.0f}",
                                size_text(rec),
                                paper_s,
                            ]
                        )
            lines += md_table(
                [
                    "budget",
                    "width",
                    "method",
                    "AUC",
                    "fit s",
                    "peak MiB",
                    "traced MiB",
                    "chosen sizes",
                    "paper s",
                ],
                rows,
            ) + [""]
    loads = [r.get("load_before") for r in results.values() if r.get("load_before") is not None]
    if loads:
        lines += [
            f"Machine load (1-minute average) before the fits: {min(loads):.2f} to "
            f"{max(loads):.2f}.",
            "",
        ]
    return lines


def budget_targets(protocol, budget):
    """(peak within budget, all data and < 30 s, AUC beats RandSub) verdict lines."""
    over, within = [], []
    for key, rec in budget.items():
        if "error" in rec:
            continue
        limit = parse_memory_budget(key[2])
        (over if rec["peak_growth_bytes"] > limit else within).append(
            f"{key[0]} l={key[1]} {key[2]} {key[3]} {key[4]} "
            f"{rec['peak_growth_bytes'] / MIB:.0f} MiB"
        )
    worst = (
        max(
            (r["peak_growth_bytes"] / parse_memory_budget(k[2]), k, r)
            for k, r in budget.items()
            if "error" not in r
        )
        if within or over
        else None
    )
    peak_line = (
        f"- Measured peak (growth above the loaded data) <= budget in every budgeted run: "
        f"**{pass_fail(not over) if (within or over) else '—'}** ({len(within)} within"
        + (f", over: {'; '.join(over)}" if over else "")
        + (
            f"; closest: {worst[1][0]} l={worst[1][1]} {worst[1][2]} {worst[1][4]} at "
            f"{worst[2]['peak_growth_bytes'] / MIB:.0f} MiB = {100 * worst[0]:.0f} % of "
            f"{parse_memory_budget(worst[1][2]) / MIB:.0f} MiB"
            if worst
            else ""
        )
        + ")"
    )
    fails, cells_seen = [], 0
    for (name, labels, b, width, method), rec in budget.items():
        if method not in STORAGE_FIT or width != "paper":
            continue
        cells_seen += 1
        if "error" in rec:
            fails.append(f"{name} l={labels} {b} {method}: {_error(rec, 160)}")
            continue
        n_fit = rec.get("sizes", {}).get("n_fit_samples", rec["n"])
        if n_fit < rec["n"]:
            fails.append(f"{name} l={labels} {b} {method}: fitted {n_fit} of {rec['n']} rows")
        if rec["fit_seconds"] >= FIT_SECONDS_TARGET:
            fails.append(f"{name} l={labels} {b} {method}: {rec['fit_seconds']:.1f} s")
    times = [
        r["fit_seconds"]
        for k, r in budget.items()
        if k[4] in STORAGE_FIT and k[3] == "paper" and "error" not in r
    ]
    time_line = (
        f"- NysCK and SoCK fit all rows within every budget (200 MB included), each fit < "
        f"{FIT_SECONDS_TARGET:g} s: **{pass_fail(not fails) if cells_seen else '—'}**"
        + (f" (fit s {min(times):.1f} to {max(times):.1f}; paper 700-7,450 s)" if times else "")
        + (f"; failing: {'; '.join(fails)}" if fails else "")
    )
    beats, losses, refused = 0, [], []
    for name in protocol.budget_sets:
        for labels in protocol.budget_labels:
            for b in protocol.budgets:
                recs = {
                    m: budget.get((name, labels, b, "paper", m)) for m in protocol.budget_methods
                }
                others = [
                    recs[m]["auc"]
                    for m in ("ClusK+RandSub", "TSVM+RandSub")
                    if recs.get(m) and "error" not in recs[m]
                ]
                # a competitor that failed (e.g. refused the budget) is beaten by any result
                refused += [
                    f"{m} {name} l={labels} {b}"
                    for m in ("ClusK+RandSub", "TSVM+RandSub")
                    if recs.get(m) and "error" in recs[m]
                ]
                for m in STORAGE_FIT:
                    r = recs.get(m)
                    if r is None:
                        continue
                    if "error" in r or (others and r["auc"] <= max(others)):
                        best = f"{max(others):.3f}" if others else "none"
                        mine = "error" if "error" in r else f"{r['auc']:.3f}"
                        losses.append(f"{name} l={labels} {b} {m} {mine} vs {best}")
                    else:
                        beats += 1
    auc_line = (
        f"- NysCK and SoCK beat ClusK+RandSub and TSVM+RandSub in AUC at every budget: "
        f"**{pass_fail(not losses) if (beats or losses) else '—'}** ({beats} of "
        f"{beats + len(losses)} cells"
        + (f"; not: {'; '.join(losses)}" if losses else "")
        + ")"
        + (f"; competitors that failed, counted as beaten: {', '.join(refused)}" if refused else "")
    )
    return [peak_line, time_line, auc_line]
