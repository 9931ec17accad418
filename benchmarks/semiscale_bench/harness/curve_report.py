"""Size curves' reports from the records: a table per measure and dataset, a figure, the notes.

:func:`dataset_tables`: per dataset, one table per measure of its experiment
(``CurveSpec.measures``; rows: unlabeled points u; columns: methods); :func:`plot`: the same
against u; :func:`notes`: the caps that applied and every failed fit; :func:`validation_lines`:
what :func:`~semiscale_bench.harness.curves.run_validation` chose; :func:`protocol_lines`: the
knobs a benchmark uses, each with its reason; :func:`figure_reports`: a report and a figure per
experiment, made of the above; :func:`figure_links`: the figures shown in a summary.
"""

from __future__ import annotations

import numpy as np

from semiscale_bench.harness.report import _value as _knob_value
from semiscale_bench.harness.report import header, md_table, write_text

__all__ = [
    "MEASURES",
    "dataset_tables",
    "figure_links",
    "figure_reports",
    "notes",
    "plot",
    "protocol_lines",
    "validation_lines",
]

MIB = 2**20

#: (title, value of a record, summary over repeats, format).
MEASURES = {
    "accuracy": ("test accuracy (%), mean ± std over repeats", "accuracy", "mean", "{:.2f}"),
    "fit": ("fit seconds (graph excluded), median", "fit_seconds", "median", "{:.3g}"),
    "total": ("fit + graph seconds, median", "total_seconds", "median", "{:.3g}"),
    "expansions": (
        "kernel expansions of the predictor (% of n_train), median",
        "expansions",
        "median",
        "{:.0f}",
    ),
    "predict": (
        "prediction seconds on the test set, median",
        "predict_seconds",
        "median",
        "{:.3g}",
    ),
    "memory": (
        "peak RSS of the fit's process (MiB; data and graph included), largest",
        "max_rss_bytes",
        "max",
        "{:.0f}",
    ),
}
#: The figures' panel titles.
SHORT = {
    "accuracy": "test accuracy (%)",
    "fit": "fit seconds (no graph)",
    "expansions": "kernel expansions",
    "memory": "peak RSS (MiB)",
}


def _records(spec, protocol, store, name: str) -> dict:
    """method -> u -> successful records (repeat order)."""
    experiment = spec.experiment(protocol, name)
    out = {m: {} for m in protocol.methods}
    for r in store.select(experiment, name):
        if r["method"] in out and "error" not in r:
            r = {**r, "total_seconds": r["fit_seconds"] + r["graph_seconds"]}
            out[r["method"]].setdefault(r["u"], []).append(r)
    return out


def _value(recs, key, how):
    values = np.array([r[key] for r in recs], dtype=float)
    if key == "max_rss_bytes":
        values = values / MIB
    if key == "accuracy":
        values = 100 * values
    return {"mean": values.mean(), "median": np.median(values), "max": values.max()}[how], values


def _cell(spec, protocol, name, meth, u, recs, measure) -> str:
    _, key, how, form = MEASURES[measure]
    repeats, _ = protocol.plan(meth, name, spec.plan_sizes(protocol, name, u))
    if not repeats:
        return "/"
    if not recs:
        return "…"
    if measure == "memory" and not all(r.get("isolated") for r in recs):
        return "(not isolated)"
    value, values = _value(recs, key, how)
    text = form.format(value)
    if measure == "accuracy" and values.size > 1:
        text += f" ± {values.std(ddof=1):.2f}"
    if measure == "expansions":
        text += f" ({100 * np.median([r['expansion_share'] for r in recs]):.3g} %)"
    if measure in ("accuracy", "fit") and not all(r.get("converged", True) for r in recs):
        text += "*"
    return text + (f" [r={len(recs)}]" if len(recs) < protocol.repeats_for(name)[0] else "")


def dataset_tables(spec, protocol, store, name: str, paper_column=None) -> list[str]:
    """Every measure's table of one dataset (empty when nothing is recorded).

    ``paper_column(dataset, measure)``: ``(title, text)`` of a column with the paper's value
    beside ours, or None.
    """
    data = _records(spec, protocol, store, name)
    if not any(data.values()):
        return []
    graphs = {}
    for by_u in data.values():
        for u, recs in by_u.items():
            graphs.setdefault(u, []).extend(r["graph_seconds"] for r in recs)
    lines = [f"## {name}", ""]
    first = next(r for by_u in data.values() for recs in by_u.values() for r in recs)
    lines += [
        f"d = {first['d']}, {first['n_test']:,} test points; `/`: not run (notes); `…`: "
        "not run yet; `*`: not converged on some repeat; `[r=k]`: k repeats only.",
        "",
    ]
    for measure in spec.measures[spec.experiment(protocol, name)]:
        lines += [f"### {MEASURES[measure][0]}", ""]
        paper = paper_column(name, measure) if paper_column else None
        cols = ["u", "n_train", "graph s", *protocol.methods] + ([paper[0]] if paper else [])
        rows = []
        for u in spec.sizes(protocol, name):
            g = graphs.get(u)
            row = [f"{u:,}", f"{u + 2:,}", "/" if g is None else f"{np.median(g):.3g}"]
            row += [
                _cell(spec, protocol, name, m, u, data[m].get(u, []), measure)
                for m in protocol.methods
            ]
            rows.append(row + ([paper[1]] if paper else []))
        lines += md_table(cols, rows) + [""]
    return lines


def notes(spec, protocol, store, names) -> list[str]:
    """The caps that applied (method, reason, where) and every failed fit."""
    where: dict[tuple, list] = {}
    for name in names:
        for meth in protocol.methods:
            for u in spec.sizes(protocol, name):
                reason = protocol.plan(meth, name, spec.plan_sizes(protocol, name, u))[1]
                if reason:
                    where.setdefault((meth, reason), []).append(f"{name} u = {u:,}")
    lines = [f"- {meth}: {reason}: {', '.join(at)}." for (meth, reason), at in where.items()]
    for name in names:
        lines += [
            f"- {name} / {r['method']} u = {r['u']:,} repeat {r['repeat']}: ERROR {r['error']}"
            for r in store.select(spec.experiment(protocol, name), name)
            if "error" in r
        ]
    return lines


def plot(spec, protocol, store, names, experiment, path):
    """One row of panels per dataset, one column per measure; None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measures = [m for m in spec.measures[experiment] if m not in ("total", "predict")]
    fig, axes = plt.subplots(
        len(names), len(measures), squeeze=False, figsize=(4.0 * len(measures), 3.4 * len(names))
    )
    for row, name in zip(axes, names):
        data = _records(spec, protocol, store, name)
        for ax, measure in zip(row, measures):
            _, key, how, _ = MEASURES[measure]
            for k, meth in enumerate(protocol.methods):
                us = sorted(data[meth])
                if measure == "memory":
                    us = [u for u in us if all(r.get("isolated") for r in data[meth][u])]
                if us:
                    y = [_value(data[meth][u], key, how)[0] for u in us]
                    ax.plot(us, y, marker="osd^vx"[k % 6], label=meth)
            if not ax.lines:
                ax.text(0.5, 0.5, "no isolated fits", transform=ax.transAxes, ha="center")
            ax.set_xscale("log")
            if measure != "accuracy":
                ax.set_yscale("log")
            ax.set_xlabel("unlabeled points u")
            ax.set_title(f"{name}: {SHORT[measure]}", fontsize=9)
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=7)
    fig.suptitle(f"{protocol.paper} {experiment} (ours)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def validation_lines(store, names) -> list[str]:
    """The ``## Validation`` section: per dataset and tuned method, the point chosen."""
    rows, keys = [], []
    for name in names:
        rec = store.get("validation", name, "search")
        if rec is None:
            continue
        for meth, chosen in rec["params"].items():
            keys = list(chosen)
            best = max(s["accuracy"] for s in rec["grid"][meth])
            rows.append(
                [name, rec["u"], rec["validation_points"], meth, *chosen.values()]
                + [f"{100 * best:.1f}"]
            )
    if not rows:
        return []
    lines = [
        f"## Validation: the tuned methods' ({', '.join(keys)})",
        "",
        "Repeat 0's labels at u = `validation_size`; scored by the accuracy on "
        "`validation_per_class` unlabeled training points per class (never the test set); "
        "the first best of the grid in its order.",
        "",
    ]
    cols = ["dataset", "u", "validation points", "method", *keys]
    return lines + md_table(cols + ["validation accuracy (%)"], rows) + [""]


def protocol_lines(protocol, methods, unused=()) -> list[str]:
    """The knobs a benchmark uses (value and reason; not those in ``unused``), its methods and
    its datasets' notes."""
    rows = [[k, _knob_value(v), why] for k, v, why in protocol.knobs() if k not in unused]
    lines = ["## Protocol", ""] + md_table(["knob", "value", "why"], rows) + ["", "Methods:", ""]
    lines += [f"- {name}: {methods[name].description}" for name in protocol.methods]
    return lines + ["", "Data:", ""] + [f"- {d.name}: {d.note}" for d in protocol.datasets] + [""]


def figure_reports(spec, protocol, store, out, figures, paper_column=None, paper_lines=None):
    """Per experiment with records: ``EXPERIMENT.md`` and its figure ``EXPERIMENT.png``.

    ``figures`` holds ``(experiment, title)``.  The report is the header, the tables of the
    experiment's datasets (:func:`dataset_tables`, with ``paper_column``), the lines
    ``paper_lines(experiment)`` (what the paper says) and the notes; the figure is
    :func:`plot` of the datasets with tables.  Returns the paths written and
    ``[(experiment, figure path or None)]`` for :func:`figure_links`.
    """
    runs = store.runs()
    names = [d.name for d in protocol.datasets if d.source is not None]
    paths, drawn = [], []
    for experiment, title in figures:
        mine = [n for n in names if spec.experiment(protocol, n) == experiment]
        tables = {n: dataset_tables(spec, protocol, store, n, paper_column) for n in mine}
        if not any(tables.values()):
            continue
        text = header(title, protocol, runs) + [line for n in mine for line in tables[n]]
        text += (paper_lines(experiment) if paper_lines else []) + ["", "## Notes", ""]
        paths.append(write_text(out, f"{experiment}.md", text + notes(spec, protocol, store, mine)))
        shown = [n for n in mine if tables[n]]
        picture = plot(spec, protocol, store, shown, experiment, f"{out}/{experiment}.png")
        drawn.append((experiment, picture))
        paths += [picture] if picture else []
    return paths, drawn


def figure_links(drawn) -> list[str]:
    """The figures :func:`figure_reports` drew, as Markdown images (or why one is missing)."""
    return [
        f"![{experiment}]({experiment}.png)"
        if picture
        else f"({experiment}.png not drawn: matplotlib is not installed, "
        "`pip install semiscale[plot]`)"
        for experiment, picture in drawn
    ]
