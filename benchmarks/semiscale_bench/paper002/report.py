"""Paper 002's reports from the records: learning curves (tables, PNG) and ``summary.md``.

``curves.md``: per task, the test error (%, mean ± std over trials, and the trials averaged)
per method and label count, and how often each grid value was chosen; ``curves.png``: the
same as curves (error bars: one standard error); ``summary.md``: the issue's targets as PASS /
FAIL lines (:func:`targets`), the other experiments' lines, the paper's statements
(:mod:`.paper`), the protocol and the notes (caps and errors).

"Within noise" (the efficient against the full LapSVM kernel): over the trials both ran, the
mean paired difference of test errors d̄ = mean(e_efficient − e_full) is at most two standard
errors of it, 2·std(d)/√k (one-sided: an efficient kernel better than the full one passes).
"Beats": a lower mean test error than the other method's at every label count up to 20 per
class (both means over their trials).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from semiscale_bench.harness.curve_report import protocol_lines
from semiscale_bench.harness.report import (
    Target,
    header,
    md_table,
    plan_notes,
    targets_section,
    write_text,
)
from semiscale_bench.paper002.clustering import render_clustering
from semiscale_bench.paper002.learning import EXPERIMENT, setting, sizes_of
from semiscale_bench.paper002.paper import OURS, SETTINGS, TABLE1, TRIALS, claims
from semiscale_bench.paper002.protocol import BUDGET, EFFICIENT, EFFICIENT_500, FULL, RBF_SVM
from semiscale_bench.paper002.search_cost import search_cost_lines
from semiscale_bench.paper002.timing import render_timing

__all__ = ["BEATS_UP_TO", "errors_by_trial", "paired", "render", "targets"]

#: Generic knobs this benchmark does not use (one split per task, no label share, no centers).
_UNUSED = (
    *("paper", "caps", "train_fraction", "labeled_fraction", "center_fraction", "center_cap"),
    *("sweeps", "speedup", "max_samples"),
)

#: The "beats budget and RBF" target holds at every label count up to this many per class.
BEATS_UP_TO = 20


def errors_by_trial(store, name: str, method: str, per_class: int) -> dict:
    """trial -> test error (%) of the records without an error."""
    out = {}
    for r in store.select(EXPERIMENT, name, method):
        if r.get("setting") == setting(per_class) and "error" not in r:
            out[r["repeat"]] = r["test_error"]
    return out


def paired(a: dict, b: dict):
    """``(d̄, se, k)`` of the paired differences a − b over common trials; None without two."""
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return None
    d = np.array([a[t] - b[t] for t in common])
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)), len(common)


def _mean_std(errors: dict):
    if not errors:
        return None
    v = np.array(list(errors.values()))
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, v.size


def _cell(errors: dict) -> str:
    ms = _mean_std(errors)
    return "/" if ms is None else f"{ms[0]:.1f} ± {ms[1]:.1f} ({ms[2]})"


def _tasks(protocol, store) -> list[str]:
    """Tasks with a task record (loaded at least once), in the protocol's order."""
    return [
        d.name
        for d in protocol.datasets
        if d.source is not None and store.get(EXPERIMENT, d.name, "task") is not None
    ]


def _efficient(protocol, store, name) -> list[str]:
    """The efficient methods that ran on ``name``."""
    return [m for m in (EFFICIENT, EFFICIENT_500) if m in protocol.methods and _ran(store, name, m)]


def _ran(store, name, method) -> bool:
    return any("error" not in r for r in store.select(EXPERIMENT, name, method))


def _short(method) -> str:
    """A prefix naming the second efficient kernel in target cells (none for the first)."""
    return "n̂ = 500, " if method == EFFICIENT_500 else ""


def _matches_full(protocol, store, name):
    """Every label count: d̄ ≤ 2·se for each efficient kernel against the full one."""
    if not _ran(store, name, FULL):
        return None
    texts, ok = [], True
    for method in _efficient(protocol, store, name):
        for per_class in protocol.labels_per_class:
            p = paired(
                errors_by_trial(store, name, method, per_class),
                errors_by_trial(store, name, FULL, per_class),
            )
            if p is None:
                texts.append(f"{_short(method)}l={per_class}: fewer than 2 paired trials")
                ok = False
                continue
            d, se, _ = p
            good = d <= 2.0 * se
            ok &= good
            mark = "" if good else " (worse)"
            texts.append(f"{_short(method)}l={per_class}: {d:+.1f} ± {se:.1f}{mark}")
    if not texts:
        return None
    return "; ".join(texts), ok


def _beats(protocol, store, name):
    """Every label count ≤ 20: the efficient kernels' mean error below budget's and RBF's."""
    others = [m for m in (BUDGET, RBF_SVM) if _ran(store, name, m)]
    efficient = _efficient(protocol, store, name)
    if not others or not efficient:
        return None
    losses, ok = [], True
    counts = [per for per in protocol.labels_per_class if per <= BEATS_UP_TO]
    for method in efficient:
        for per_class in counts:
            ours = _mean_std(errors_by_trial(store, name, method, per_class))
            for other in others:
                theirs = _mean_std(errors_by_trial(store, name, other, per_class))
                if ours is None or theirs is None:
                    losses.append(f"{method} l={per_class}: no {other if ours else method} records")
                    ok = False
                elif not ours[0] < theirs[0]:
                    losses.append(
                        f"{method} l={per_class}: {ours[0]:.1f} vs {other} {theirs[0]:.1f}"
                    )
                    ok = False
    text = "every count" if ok else "not at " + "; ".join(losses)
    return text, ok


def targets(protocol, store) -> list[Target]:
    """The issue's two learning-curve targets, judged per task."""
    return [
        Target(
            "efficient ≈ full (d̄ ± se, %)",
            "the efficient kernel matches the full LapSVM kernel within noise where both run "
            "(mean paired difference d̄ ≤ 2 standard errors, every label count)",
            lambda name: _matches_full(protocol, store, name),
        ),
        Target(
            f"efficient beats budget and RBF (l ≤ {BEATS_UP_TO})",
            "the efficient kernel beats the budget kernel and the RBF kernel at every label "
            f"count up to {BEATS_UP_TO} per class (mean test error)",
            lambda name: _beats(protocol, store, name),
        ),
    ]


def _choices(protocol, store, name, method) -> str:
    """How often each value of each searched parameter was chosen (all label counts, trials)."""
    recs = [r for r in store.select(EXPERIMENT, name, method) if "params" in r]
    if not recs:
        return ""
    parts = []
    for key in ("power", "eta", "sigma_scale", "C"):
        counts = Counter(r["params"][key] for r in recs if key in r["params"])
        if counts:
            parts.append(f"{key} " + ", ".join(f"{v:g}: {n}" for v, n in sorted(counts.items())))
    return "; ".join(parts)


def _task_section(protocol, store, name) -> list[str]:
    facts = store.get(EXPERIMENT, name, "task")
    methods = [m for m in protocol.methods if store.select(EXPERIMENT, name, m)]
    rows = [
        [per_class] + [_cell(errors_by_trial(store, name, m, per_class)) for m in methods]
        for per_class in protocol.labels_per_class
    ]
    lines = [f"## {name}", ""]
    lines.append(
        f"{facts['n_train']:,} training rows (labeled + unlabeled; {facts['train_positive']:,} "
        f"positive), {facts['n_test']:,} test rows, {facts['d']} features; σ₀ (median "
        f"distance) = {facts['sigma0']:.3g}."
    )
    paper = OURS.get(name)
    if paper:
        n, n_hat, n_test = TABLE1[paper]
        lines.append(
            f"Paper (Table 1, {paper}): n = {n:,}, n̂ = {n_hat}, {n_test:,} test points; its "
            "curves are in Figures 2-3, images not in the text we have."
        )
    graph = store.get(EXPERIMENT, name, "graph")
    if graph:
        lines.append(
            f"Graph: {graph['nnz']:,} non-zeros in L, built in {graph['graph_seconds']:.1f} s."
        )
    lines += ["", "Test error (%), mean ± std (trials), by labels per class:", ""]
    lines += md_table(["labels per class"] + methods, rows) + [""]
    lines += ["Chosen by CV (counts over trials and label counts):", ""]
    lines += [f"- {m}: {_choices(protocol, store, name, m)}" for m in methods] + [""]
    warned = _warnings(store, name, methods)
    if warned:
        lines += ["Warnings of the kernel fits (fits that raised each):", ""]
        lines += [f"- {text} ({n})" for text, n in warned.items()] + [""]
    return lines


def _warnings(store, name, methods) -> dict:
    """Warning text -> number of kernel fits (trial, p) that raised it, over ``methods``."""
    counts: Counter = Counter()
    for method in methods:
        seen = {}
        for r in store.select(EXPERIMENT, name, method):
            for p, facts in (r.get("solves") or {}).items():
                seen[(r["repeat"], p)] = facts.get("warnings", [])
        for texts in seen.values():
            counts.update(f"{method}: {t}" for t in texts)
    return dict(counts)


def plot(protocol, store, names, path):
    """One panel per task: test error against labels per class; None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not names:
        return None
    from matplotlib.ticker import NullFormatter

    cols = min(4, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows + 0.6), squeeze=False)
    colors = {m: f"C{i}" for i, m in enumerate(protocol.methods)}  # one colour per method
    for ax, name in zip(axes.ravel(), names):
        for method in protocol.methods:
            xs, ys, es = [], [], []
            for per_class in protocol.labels_per_class:
                ms = _mean_std(errors_by_trial(store, name, method, per_class))
                if ms:
                    xs.append(per_class)
                    ys.append(ms[0])
                    es.append(ms[1] / np.sqrt(ms[2]))
            if xs:
                ax.errorbar(
                    xs,
                    ys,
                    yerr=es,
                    marker="o",
                    ms=3,
                    capsize=2,
                    label=method,
                    color=colors[method],
                )
        ax.set_xscale("log")
        ax.set_xticks(list(protocol.labels_per_class))
        ax.set_xticklabels([str(v) for v in protocol.labels_per_class])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("labels per class")
        ax.set_ylabel("test error (%)")
    for ax in axes.ravel()[len(names) :]:
        ax.axis("off")
    handles = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=len(handles), fontsize=8)
    fig.tight_layout(rect=(0, 0.6 / (3.2 * rows + 0.6), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def _notes(protocol, store, names) -> list[str]:
    sizes = {n: sizes_of(protocol, store.get(EXPERIMENT, n, "task")) for n in names}
    errors = [r for r in store.select(EXPERIMENT) if "error" in r]
    return plan_notes(protocol, sizes, errors)


def _trials_line(protocol) -> str:
    ours = ", ".join(
        f"{d.name}: {protocol.repeats_for(d.name)[0]}" for d in protocol.datasets if d.source
    )
    return (
        f"Trials: {ours} (the paper: {TRIALS['default']}, {TRIALS['MNIST Odd vs Even']} on odd "
        "vs even)."
    )


def render_curves(bench, protocol, store, out) -> tuple[list[str], list[str]]:
    """``curves.md`` and ``curves.png``; returns (paths, summary lines)."""
    names = _tasks(protocol, store)
    lines = header("Paper 002, Figures 2-3: learning curves (ours)", protocol, store.runs())
    lines += [_trials_line(protocol), ""]
    for name in names:
        lines += _task_section(protocol, store, name)
    lines += ["## The paper (its figures' values are not in the text)", ""]
    lines += claims("fig2") + claims("fig3") + [""]
    paths = [write_text(out, "curves.md", lines)]
    png = plot(protocol, store, names, f"{out}/curves.png")
    summary = targets_section(targets(protocol, store), names) + [""]
    if png:
        paths.append(png)
        summary += ["![learning curves](curves.png)", ""]
    else:
        summary += ["(curves.png not drawn: matplotlib is not installed)", ""]
    summary += [_trials_line(protocol), "", "Tables: `curves.md`.", ""]
    return paths, summary


def render(bench, protocol, store, out) -> list[str]:
    """curves.md, curves.png, the timing and clustering files and summary.md, from the records."""
    paths, summary = render_curves(bench, protocol, store, out)
    names = _tasks(protocol, store)
    lines = header(
        "Paper 002 (data-dependent kernels in nearly-linear time), §5 reproduced",
        protocol,
        store.runs(),
    )
    lines += ["## Figures 2-3: learning curves (targets from the records)", ""] + summary
    lines += search_cost_lines(protocol, store)
    for title, renderer, prefix in (
        ("Figure 5: time to build the kernel (`timing.md`)", render_timing, "timing"),
        ("Figure 4: k-means on two moons (`clustering.md`)", render_clustering, "clustering"),
    ):
        told = renderer(store, protocol, out)
        lines += [f"## {title}", ""] + (told or ["Not run yet (no records)."]) + [""]
        paths += sorted(str(p) for p in Path(out).glob(f"{prefix}.*"))
    lines += ["## The paper's settings (§5.1)", ""] + [f"- {s}" for s in SETTINGS] + [""]
    lines += ["## What the paper says", ""] + claims() + [""]
    lines += protocol_lines(protocol, bench.methods, _UNUSED)
    notes = _notes(protocol, store, names)
    if notes:
        lines += ["## Notes", ""] + notes + [""]
    return paths + [write_text(out, "summary.md", lines)]
