"""The few-labels report, from the records alone: a Markdown table per dataset (transductive),
``inductive.md``, ``scaling.md``, ``accuracy.png`` and ``summary.md`` (targets, protocol, all
tables)."""

from __future__ import annotations

import numpy as np

from semiscale_bench.few_labels.data import setting
from semiscale_bench.harness.report import header, md_table, plan_notes, write_text

#: Generic knobs this benchmark does not use (no train/test split, no centers, no figures).
_UNUSED = (
    "paper",
    "caps",
    "train_fraction",
    "labeled_fraction",
    "center_fraction",
    "center_cap",
    "sweeps",
    "speedup",
    "reduced_repeats",
)


def protocol_section(protocol, methods) -> list[str]:
    """The knobs this benchmark uses (value and reason), its methods and data notes."""
    from semiscale_bench.harness.report import _value

    rows = [[k, _value(v), why] for k, v, why in protocol.knobs() if k not in _UNUSED]
    lines = ["## Protocol", ""] + md_table(["knob", "value", "why"], rows) + ["", "Methods:", ""]
    lines += [f"- {name}: {methods[name].description}" for name in protocol.methods]
    return lines + ["", "Data:", ""] + [f"- {d.name}: {d.note}" for d in protocol.datasets] + [""]


GRAPHLEARNING_NOTE = (
    "GraphLearning (Calder's `graphlearning`, whose Laplace and Poisson learning issue 12 "
    "compares with, and whose Poisson-MBO and Volume-MBO issue 32 does) runs only where it "
    "is installed: PyPI has only an sdist of it (a C++ "
    "extension), and this project installs its own dependencies from wheels only "
    "(`pip install graphlearning` with a compiler; `peers.py`)."
)


def _stats(recs, key):
    values = np.array([r[key] for r in recs])
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def _cells(protocol, store, name, experiment="fits"):
    """method -> per_class -> list of successful records of ``experiment``."""

    methods = protocol.inductive_methods if experiment == "inductive" else protocol.methods
    out = {}
    for meth in methods:
        for k in protocol.per_class:
            recs = [
                r
                for r in store.select(experiment, name, meth)
                if r["setting"] == setting(k) and "error" not in r
            ]
            out.setdefault(meth, {})[k] = recs
    return out


def _accuracy_rows(protocol, name, cells) -> list[list[str]]:
    """One row per method: mean ± std accuracy per label count (``[r=k]``: k trials only)."""
    rows = []
    for meth, by_k in cells.items():
        row = [meth]
        for k in protocol.per_class:
            recs = by_k[k]
            if not recs:
                row.append("/")
                continue
            mean, std = _stats(recs, "accuracy")
            mark = "" if len(recs) == protocol.repeats_for(name)[0] else f" [r={len(recs)}]"
            row.append(f"{100 * mean:.1f} ± {100 * std:.1f}{mark}")
        rows.append(row)
    return rows


def _warning_notes(cells) -> list[str]:
    """A note per (method, warning category): in how many fits it was raised."""
    warned = {}
    for meth, by_k in cells.items():
        for r in (r for recs in by_k.values() for r in recs):
            for kind in {w.split(":")[0] for w in r.get("warnings", ())}:
                warned[(meth, kind)] = warned.get((meth, kind), 0) + 1
    return [f"- {meth}: {kind} in {count} fits." for (meth, kind), count in warned.items()]


def _failures(store, experiment, name) -> list[str]:
    """A note per failed fit (method, setting, trial: the error)."""
    return [
        f"- {r['method']} {r['setting']} trial {r['repeat']}: FAILED {r['error']}"
        for r in store.select(experiment, name)
        if "error" in r
    ]


def dataset_table(protocol, store, name) -> list[str]:
    from semiscale_bench.harness import Sizes

    sizes_rec = store.get("fits", name, "sizes")
    if sizes_rec is None:
        return []
    sizes = Sizes(**{k: sizes_rec[k] for k in ("n", "d", "n_train", "m")})
    graph = store.get("fits", name, "graph")
    cells = _cells(protocol, store, name)
    ks = protocol.per_class
    lines = [f"## {name} (n = {sizes.n}, d = {sizes.d}, {sizes.m} classes)", ""]
    lines += [
        "Transductive accuracy (%) on the unlabeled points, mean ± std over trials "
        "(`[r=k]`: k trials), by labels per class:",
        "",
    ]
    rows = _accuracy_rows(protocol, name, cells)
    lines += md_table(["method", *(f"{k}/class" for k in ks)], rows) + [""]
    lines += ["Seconds per fit, mean over trials (graph excluded where given; see below):", ""]
    rows = []
    for meth, by_k in cells.items():
        row = [meth]
        for k in ks:
            recs = by_k[k]
            row.append(f"{_stats(recs, 'fit_seconds')[0]:.3g}" if recs else "/")
        # a peer's own graph timed apart (graph_seconds) is excluded as the shared one is
        given = {
            bool(r.get("graph_given")) or r.get("graph_seconds") is not None
            for k in ks
            for r in by_k[k]
        }
        row.append("excluded" if given == {True} else "included" if given == {False} else "/")
        rows.append(row)
    lines += md_table(["method", *(f"{k}/class" for k in ks), "graph"], rows) + [""]
    if graph is not None and "error" not in graph:
        lines += [
            f"Graph: the default `KNNGraph(random_state={protocol.graph_seed})` on all "
            f"{sizes.n} points, built once in {graph['fit_seconds']:.2f} s "
            f"({graph['n_components']} connected component(s)); its Laplacian is given to "
            "every semiscale fit (`fit(X, y, laplacian=L)`).",
            "",
        ]
    notes = plan_notes(protocol, {name: sizes}, store.select("fits", name))
    notes += _warning_notes(cells) + _failures(store, "fits", name)
    return lines + (["Notes:", ""] + notes + [""] if notes else [])


def inductive_table(protocol, store, name) -> list[str]:
    """Held-out accuracy and seconds of the inductive experiment on ``name`` (empty: none)."""
    sizes = store.get("inductive", name, "sizes")
    if sizes is None:
        return []
    cells = _cells(protocol, store, name, "inductive")
    ks = protocol.per_class
    lines = [
        f"## inductive: {name} (pool {sizes['n_pool']}, held out {sizes['n_test']}, "
        f"d = {sizes['d']})",
        "",
        "Accuracy (%) of `predict` on the held-out points, each method fitted on the pool "
        "alone, mean ± std over trials, by labels per class:",
        "",
    ]
    lines += md_table(
        ["method", *(f"{k}/class" for k in ks)], _accuracy_rows(protocol, name, cells)
    )
    lines += ["", "Seconds per fit, graph included (of which the graph), mean over trials:", ""]
    rows = []
    for meth, by_k in cells.items():
        row = [meth]
        for k in ks:
            recs = by_k[k]
            graph = [r["graph_seconds"] for r in recs if r.get("graph_seconds") is not None]
            cell = f"{_stats(recs, 'fit_seconds')[0]:.3g}" if recs else "/"
            row.append(cell + (f" ({np.mean(graph):.3g})" if graph else ""))
        rows.append(row)
    lines += md_table(["method", *(f"{k}/class" for k in ks)], rows) + [""]
    notes = _warning_notes(cells) + _failures(store, "inductive", name)
    return lines + (["Notes:", ""] + notes + [""] if notes else [])


def scaling_table(protocol, store) -> list[str]:
    """The scaling experiment's table: one row per current (method, n) record (empty: none)."""
    from semiscale_bench.few_labels.protocol import MOONS
    from semiscale_bench.few_labels.scaling import current

    moons = [d.name for d in protocol.datasets if d.source == MOONS]
    recs = [
        (n, meth, current(store, protocol, moons[0], meth, n))
        for n in protocol.scaling_n
        for meth in protocol.scaling_methods
        if moons
    ]
    recs = [(n, meth, r) for n, meth, r in recs if r is not None]
    if not recs:
        return []
    lines = [
        f"## scaling: two moons (noise {protocol.scaling_noise:g}, random_state 0), one label "
        "per class",
        "",
        "Each fit in a fresh subprocess, on the raw points: the estimator builds its own "
        "default graph, and the seconds include it. Accuracy: transductive, on the unlabeled "
        "points. Peak RSS: the process's `ru_maxrss` after the fit (interpreter, imports and "
        "data included; before the fit it was the next column's).",
        "",
    ]
    rows = []
    for n, meth, r in recs:
        params = ", ".join(f"{k}={v!r}" for k, v in r["params"].items()) or "defaults"
        if "error" in r:
            rows.append([f"{n:,}", meth, params, f"FAILED: {r['error']}", *["/"] * 5])
            continue
        converged = "" if r.get("converged", True) else " (not converged)"
        rows.append(
            [
                f"{n:,}",
                meth,
                params,
                f"{100 * r['accuracy']:.2f}",
                f"{r['fit_seconds']:.3g}",
                "/" if r.get("graph_seconds") is None else f"{r['graph_seconds']:.3g}",
                f"{r['iterations']}{converged}",
                f"{r['max_rss_bytes'] / 2**20:.0f}",
                f"{r['max_rss_before_fit_bytes'] / 2**20:.0f}",
            ]
        )
    head = ["n", "method", "parameters", "accuracy (%)", "fit s (graph incl.)", "graph s"]
    head += ["iterations", "peak RSS MiB", "RSS before fit MiB"]
    return lines + md_table(head, rows) + [""]


#: Markers cycled over the methods (with tab20's colours: every method its own pair).
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">", "p")


def method_styles(methods) -> dict[str, dict]:
    """Method -> matplotlib line style: a colour and a marker of its own (tab20, up to 20
    methods), solid for semiscale's estimators, dashed for the peers (scikit-learn's,
    GraphLearning's)."""
    if len(methods) > 20:
        raise ValueError(f"{len(methods)} methods: the plot's palette has 20 colours")
    from matplotlib import colormaps

    palette = colormaps["tab20"]
    styles = {}
    for i, meth in enumerate(methods):
        peer = meth.startswith(("sklearn ", "GraphLearning "))
        # tab20 pairs a dark and a light shade: the dark ones first, then the light ones
        colour = palette((2 * i) % 20 + (2 * i) // 20)
        marker = _MARKERS[i % len(_MARKERS)]
        styles[meth] = {"color": colour, "marker": marker, "linestyle": "--" if peer else "-"}
    return styles


def plot(protocol, store, out):
    """accuracy.png: accuracy against labels per class, one panel per dataset (transductive on
    top, inductive below), every method in its own style, one legend; None without
    matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        (exp, d.name)
        for exp, key in (("fits", "fits"), ("inductive", "inductive"))
        for d in protocol.datasets
        if store.get(key, d.name, "sizes")
    ]
    if not panels:
        return None
    rows = sorted({exp for exp, _ in panels}, key=["fits", "inductive"].index)
    cols = max(sum(exp == row for exp, _ in panels) for row in rows)
    size = (4.4 * cols + 2.6, 3.8 * len(rows))
    fig, axes = plt.subplots(len(rows), cols, figsize=size, squeeze=False)
    for ax in axes.flat:
        ax.set_visible(False)
    styles = method_styles(protocol.methods)
    for row, exp in enumerate(rows):
        names = [name for e, name in panels if e == exp]
        for ax, name in zip(axes[row], names):
            _panel(ax, protocol, store, exp, name, styles)
    # one legend for every panel: the methods drawn, in the protocol's order
    handles = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    order = [m for m in protocol.methods if m in handles]
    fig.legend([handles[m] for m in order], order, loc="center right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1 - 2.6 / size[0], 1))
    path = f"{out}/accuracy.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _panel(ax, protocol, store, experiment, name, styles) -> None:
    """One dataset's accuracy against labels per class, one line per method."""
    ax.set_visible(True)
    for meth, by_k in _cells(protocol, store, name, experiment).items():
        ks = [k for k in protocol.per_class if by_k[k]]
        if not ks:
            continue
        stats = [_stats(by_k[k], "accuracy") for k in ks]
        mean = 100 * np.array([m for m, _ in stats])
        std = 100 * np.array([s for _, s in stats])
        ax.errorbar(ks, mean, yerr=std, capsize=3, label=meth, markersize=5, **styles[meth])
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(protocol.per_class, [str(k) for k in protocol.per_class])
    ax.set_xlabel("labels per class")
    inductive = experiment == "inductive"
    ax.set_ylabel(f"{'held-out' if inductive else 'transductive'} accuracy (%)")
    ax.set_title(f"{name} ({'inductive' if inductive else 'transductive'})")
    ax.grid(alpha=0.3)


def render(bench, protocol, store, out) -> list[str]:
    """``<dataset>.md`` per dataset run, ``inductive.md``, ``scaling.md``, the plot and
    ``summary.md`` (header, targets, protocol, every table)."""
    from semiscale_bench.few_labels.targets import target_lines

    runs = store.runs()
    paths = []
    for d in protocol.datasets:
        table = dataset_table(protocol, store, d.name)
        if table:
            lines = header(f"Few labels: {d.name}", protocol, runs) + table
            paths.append(write_text(out, f"{d.name.replace(' ', '_')}.md", lines))
    inductive = [
        line for d in protocol.datasets for line in inductive_table(protocol, store, d.name)
    ]
    if inductive:
        title = "Few labels, inductive: fit on a pool, predict held-out points"
        paths.append(write_text(out, "inductive.md", header(title, protocol, runs) + inductive))
    scaling = scaling_table(protocol, store)
    if scaling:
        title = "Few labels, scaling: two moons end to end"
        paths.append(write_text(out, "scaling.md", header(title, protocol, runs) + scaling))
    lines = header("Few labels per class: semiscale at its defaults", protocol, runs)
    lines += target_lines(protocol, store)
    lines += protocol_section(protocol, bench.methods)
    picture = plot(protocol, store, out)
    if picture is None:
        lines += ["accuracy.png not drawn: matplotlib is not installed (`semiscale[plot]`).", ""]
    else:
        paths.append(picture)
        lines += ["![accuracy against labels per class](accuracy.png)", ""]
    ran = any(
        "error" not in r
        for m in protocol.methods
        if m.startswith("GraphLearning ")
        for d in protocol.datasets
        for r in store.select("fits", d.name, m)
    )
    lines += [
        GRAPHLEARNING_NOTE
        + (" It ran in this run." if ran else " It did not run in this run (not installed)."),
        "",
    ]
    for d in protocol.datasets:
        lines += dataset_table(protocol, store, d.name)
    lines += inductive + scaling
    paths.append(write_text(out, "summary.md", lines))
    return paths
