"""Paper 004's reports from the records: Table 1 (test errors), Table 2 (times), the targets.

``table1.md``: per dataset and t, the chosen models' test error (mean ± std over repeats) under
exact t-CV and t-BIF, the paired t-test between them (two-sided, 95 %; the paper's one-sided
t > 1.699 is for 30 repeats) and the paper's numbers.  ``table2.md``: median search seconds and
the speed-up CV / BIF, the paper's beside.  ``summary.md``: issue 14's targets as PASS/FAIL.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from semiscale_bench.harness.report import (
    Target,
    fmt,
    header,
    md_table,
    protocol_section,
    targets_section,
    write_text,
)
from semiscale_bench.paper004.paper import TABLE1, TABLE2

__all__ = ["LARGER_N_TRAIN", "compare", "render"]

#: "The larger datasets" of the 20x target: at least this many training points.
LARGER_N_TRAIN = 1000
#: Significance level of the paired test.
ALPHA = 0.05


def _records(store, name, method, t):
    return {
        r["repeat"]: r
        for r in store.select("select", name, method)
        if r.get("setting") == f"t={t}" and "error" not in r
    }


def compare(cv: dict, bif: dict) -> dict:
    """Paired comparison of two criteria's records (repeat -> record), or {} without pairs."""
    repeats = sorted(set(cv) & set(bif))
    if not repeats:
        return {}
    a = np.array([cv[r]["test_error"] for r in repeats])
    b = np.array([bif[r]["test_error"] for r in repeats])
    p = None
    if len(repeats) >= 2:
        d = b - a
        p = 1.0 if np.allclose(d, d[0]) and d[0] == 0 else float(stats.ttest_rel(b, a).pvalue)
        p = 1.0 if np.isnan(p) else p  # constant non-zero differences: no variance to test
    return {
        "n": len(repeats),
        "cv": (float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0),
        "bif": (float(b.mean()), float(b.std(ddof=1)) if b.size > 1 else 0.0),
        "p": p,
        "cv_seconds": float(np.median([cv[r]["seconds"] for r in repeats])),
        "bif_seconds": float(np.median([bif[r]["seconds"] for r in repeats])),
        "same_choice": sum(cv[r]["best_params"] == bif[r]["best_params"] for r in repeats),
    }


def _pm(pair, scale=1.0):
    return "/" if pair is None else f"{fmt(pair[0] * scale)} ± {fmt(pair[1] * scale, 2)}"


def _results(protocol, store, datasets):
    return {
        (name, t): compare(_records(store, name, "CV", t), _records(store, name, "BIF", t))
        for name in datasets
        for t in protocol.folds
    }


def _table1(protocol, results, datasets):
    rows = []
    for name in datasets:
        for t in protocol.folds:
            c = results[(name, t)]
            paper = TABLE1.get(name, {})
            verdict = (
                "/"
                if not c or c["p"] is None
                else ("same" if c["p"] >= ALPHA else f"differ (p={fmt(c['p'], 2)})")
            )
            rows.append(
                [
                    name,
                    t,
                    c.get("n", 0),
                    _pm(c.get("cv")),
                    _pm(c.get("bif")),
                    verdict,
                    f"{c['same_choice']}/{c['n']}" if c else "/",
                    _pm(paper.get(f"{t}-CV")),
                    _pm(paper.get(f"{t}-BIF")),
                ]
            )
    cols = ["dataset", "t", "repeats", "t-CV (ours)", "t-BIF (ours)", "paired test (95 %)"]
    cols += ["same point chosen", "t-CV (paper)", "t-BIF (paper)"]
    return md_table(cols, rows)


def _table2(protocol, results, datasets):
    rows = []
    for name in datasets:
        for t in protocol.folds:
            c = results[(name, t)]
            paper = TABLE2.get(name, {})
            pc, pb = paper.get(f"{t}-CV"), paper.get(f"{t}-BIF")
            rows.append(
                [
                    name,
                    t,
                    fmt(c.get("cv_seconds")),
                    fmt(c.get("bif_seconds")),
                    fmt(c["cv_seconds"] / c["bif_seconds"]) if c else "/",
                    fmt(pc),
                    fmt(pb),
                    fmt(pc / pb) if pc and pb else "/",
                ]
            )
    cols = ["dataset", "t", "t-CV s (ours)", "t-BIF s (ours)", "speed-up (ours)"]
    cols += ["t-CV s (paper)", "t-BIF s (paper)", "speed-up (paper)"]
    return md_table(cols, rows)


def _targets(protocol, results, sizes):
    def faster_20x(name):
        c = results.get((name, 20), {})
        if not c or sizes.get(name, 0) < LARGER_N_TRAIN:
            return None
        ratio = c["cv_seconds"] / c["bif_seconds"]
        return f"{fmt(ratio)}x", ratio >= 20.0

    def faster_every_t(name):
        cs = [results[(name, t)] for t in protocol.folds]
        if not all(cs):
            return None
        ratios = [c["cv_seconds"] / c["bif_seconds"] for c in cs]
        return ", ".join(f"{fmt(r)}x" for r in ratios), all(r > 1.0 for r in ratios)

    def no_difference(name):
        cs = [results[(name, t)] for t in protocol.folds]
        if not all(cs) or any(c["p"] is None for c in cs):
            return None
        return ", ".join(fmt(c["p"], 2) for c in cs), all(c["p"] >= ALPHA for c in cs)

    return [
        Target(
            "20-BIF ≥ 20x faster (n_train ≥ 1000)",
            "20-BIF at least 20x faster than 20-CV on the larger datasets",
            faster_20x,
        ),
        Target(
            "t-BIF faster (t = 5, 10, 20)",
            "t-BIF faster than t-CV for every t and dataset",
            faster_every_t,
        ),
        Target(
            "paired p (t = 5, 10, 20)",
            "no significant difference in test error between "
            "the points t-BIF and t-CV choose (paired t-test, 95 %)",
            no_difference,
        ),
    ]


def render(bench, protocol, store, out) -> list[str]:
    """table1.md, table2.md and summary.md from the records that exist."""
    datasets = [d.name for d in protocol.datasets if d.source is not None]
    datasets = [n for n in datasets if store.get("select", n, "sizes") is not None]
    sizes = {n: store.get("select", n, "sizes")["n_train"] for n in datasets}
    results = _results(protocol, store, datasets)
    head = header("Paper 004: approximate CV (t-BIF) against exact t-CV", protocol, store.runs())
    absent = [d.name for d in protocol.datasets if d.source is None]
    note = (
        [f"Not shared here (the paper's numbers only): {', '.join(absent)}.", ""] if absent else []
    )
    errors = "Classification: test error in %. Regression: test MSE on targets standardized by "
    errors += "the labeled training points (the paper's scaling is not stated: its MSEs are "
    errors += "not comparable in absolute terms)."
    t1 = head + ["## Table 1: test error of the chosen point", "", errors, ""]
    t1 += _table1(protocol, results, datasets) + [""] + note
    t2 = head + ["## Table 2: seconds of the whole search (median over repeats)", ""]
    t2 += _table2(protocol, results, datasets) + [""] + note
    measured = [n for n in datasets if any(results[(n, t)] for t in protocol.folds)]
    unmeasured = [
        d.name for d in protocol.datasets if d.source is not None and d.name not in measured
    ]
    summary = head + targets_section(_targets(protocol, results, sizes), measured) + [""]
    if unmeasured:
        summary += [
            f"Not measured (no paired records yet; the summary lines judge the datasets above "
            f"only): {', '.join(unmeasured)}.",
            "",
        ]
    failed = [r for r in store.select("select") if "error" in r]
    if failed:
        summary += ["Searches that failed (missing from the tables):", ""]
        summary += [
            f"- {r['dataset']} {r['setting']} {r['method']} repeat {r['repeat']}: {r['error']}"
            for r in failed
        ] + [""]
    summary += protocol_section(protocol, bench.methods)
    return [
        write_text(out, "table1.md", t1),
        write_text(out, "table2.md", t2),
        write_text(out, "summary.md", summary),
    ]
