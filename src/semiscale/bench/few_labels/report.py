"""The few-labels report: one Markdown table per dataset and a plot, from the records alone."""

from __future__ import annotations

import importlib.util

import numpy as np

from ..harness.report import header, md_table, plan_notes, write_text

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
    from ..harness.report import _value

    rows = [[k, _value(v), why] for k, v, why in protocol.knobs() if k not in _UNUSED]
    lines = ["## Protocol", ""] + md_table(["knob", "value", "why"], rows) + ["", "Methods:", ""]
    lines += [f"- {name}: {methods[name].description}" for name in protocol.methods]
    return lines + ["", "Data:", ""] + [f"- {d.name}: {d.note}" for d in protocol.datasets] + [""]


GRAPHLEARNING_NOTE = (
    "GraphLearning (Calder's `graphlearning`, whose Laplace and Poisson learning issue 12 "
    "compares with) is not in this run: PyPI has only an sdist of it, no wheel, and this "
    "project installs its benchmark peers from wheels only."
)


def _stats(recs, key):
    values = np.array([r[key] for r in recs])
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def _cells(protocol, store, name):
    """method -> per_class -> list of successful records."""
    from . import setting

    out = {}
    for meth in protocol.methods:
        for k in protocol.per_class:
            recs = [
                r
                for r in store.select("fits", name, meth)
                if r["setting"] == setting(k) and "error" not in r
            ]
            out.setdefault(meth, {})[k] = recs
    return out


def dataset_table(protocol, store, name) -> list[str]:
    from ..harness import Sizes

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
    rows = []
    for meth, by_k in cells.items():
        row = [meth]
        for k in ks:
            recs = by_k[k]
            if not recs:
                row.append("/")
                continue
            mean, std = _stats(recs, "accuracy")
            mark = "" if len(recs) == protocol.repeats_for(name)[0] else f" [r={len(recs)}]"
            row.append(f"{100 * mean:.1f} ± {100 * std:.1f}{mark}")
        rows.append(row)
    lines += md_table(["method", *(f"{k}/class" for k in ks)], rows) + [""]
    lines += ["Seconds per fit, mean over trials (graph excluded where given; see below):", ""]
    rows = []
    for meth, by_k in cells.items():
        row = [meth]
        for k in ks:
            recs = by_k[k]
            row.append(f"{_stats(recs, 'fit_seconds')[0]:.3g}" if recs else "/")
        given = {r.get("graph_given") for k in ks for r in by_k[k]}
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
    warned = {}
    for meth, by_k in cells.items():
        for r in (r for k in ks for r in by_k[k]):
            for kind in {w.split(":")[0] for w in r.get("warnings", ())}:
                warned[(meth, kind)] = warned.get((meth, kind), 0) + 1
    notes += [f"- {meth}: {kind} in {count} fits." for (meth, kind), count in warned.items()]
    return lines + (["Notes:", ""] + notes + [""] if notes else [])


def plot(protocol, store, out):
    """accuracy.png: accuracy against labels per class, one panel per dataset; None without
    matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [d.name for d in protocol.datasets if store.get("fits", d.name, "sizes")]
    if not names:
        return None
    fig, axes = plt.subplots(1, len(names), figsize=(4.4 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        for i, (meth, by_k) in enumerate(_cells(protocol, store, name).items()):
            ks = [k for k in protocol.per_class if by_k[k]]
            if not ks:
                continue
            stats = [_stats(by_k[k], "accuracy") for k in ks]
            mean = 100 * np.array([m for m, _ in stats])
            std = 100 * np.array([s for _, s in stats])
            ax.errorbar(ks, mean, yerr=std, marker="o", capsize=3, label=meth, color=f"C{i}")
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(protocol.per_class, [str(k) for k in protocol.per_class])
        ax.set_xlabel("labels per class")
        ax.set_ylabel("transductive accuracy (%)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = f"{out}/accuracy.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render(bench, protocol, store, out) -> list[str]:
    """``<dataset>.md`` per dataset run, ``summary.md`` (header, protocol, notes) and the plot."""
    paths = []
    for d in protocol.datasets:
        table = dataset_table(protocol, store, d.name)
        if table:
            title = f"Few labels: {d.name}"
            lines = header(title, protocol, store.runs()) + table
            paths.append(write_text(out, f"{d.name.replace(' ', '_')}.md", lines))
    lines = header("Few labels per class: semiscale at its defaults", protocol, store.runs())
    lines += protocol_section(protocol, bench.methods)
    picture = plot(protocol, store, out)
    if picture is None:
        lines += ["accuracy.png not drawn: matplotlib is not installed (`semiscale[plot]`).", ""]
    else:
        paths.append(picture)
        lines += ["![accuracy against labels per class](accuracy.png)", ""]
    installed = importlib.util.find_spec("graphlearning") is not None
    lines += [
        GRAPHLEARNING_NOTE
        + (" (It is installed here, but this version does not run it.)" if installed else ""),
        "",
    ]
    for d in protocol.datasets:
        lines += dataset_table(protocol, store, d.name)
    paths.append(write_text(out, "summary.md", lines))
    return paths
