"""Paper 001's reports from the records: Figures 1-2 as tables and PNGs, and ``summary.md``.

``fig1.md`` / ``fig2.md``: per dataset, one table per measure (rows: unlabeled points u;
columns: methods), the paper's statements beside them; ``fig1.png`` / ``fig2.png``: the same
against u; ``summary.md``: the targets (:mod:`.targets`), what the paper says, the validation
choices, how the data are made, the protocol and the notes (caps and errors).
"""

from __future__ import annotations

import re

import numpy as np

from semiscale.datasets import distorted
from semiscale_bench.harness.report import header, md_table, write_text
from semiscale_bench.paper001.data import plan_sizes
from semiscale_bench.paper001.paper import FIG1_ACCURACY, MACHINE, SETTINGS, TABLE1, claims
from semiscale_bench.paper001.targets import target_lines

__all__ = ["render"]

MIB = 2**20

#: (title, value of a record, summary over repeats, format); None: not reported on that figure.
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
SHORT = {
    "accuracy": "test accuracy (%)",
    "fit": "fit seconds (no graph)",
    "expansions": "kernel expansions",
    "memory": "peak RSS (MiB)",
}
FIGURE_MEASURES = {
    "fig1": ("accuracy", "fit", "total", "expansions", "memory", "predict"),
    "fig2": ("accuracy", "fit", "expansions", "predict"),
}


def _records(protocol, store, name: str) -> dict:
    """method -> u -> successful records (repeat order)."""
    experiment = protocol.experiment_of(name)
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


def _cell(protocol, name, meth, u, recs, measure) -> str:
    _, key, how, form = MEASURES[measure]
    repeats, _ = protocol.plan(meth, name, plan_sizes(protocol, name, u))
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


def _paper_accuracy() -> str:
    return ", ".join(f"{meth} {100 * v:g}" for meth, v in FIG1_ACCURACY.items())


def dataset_tables(protocol, store, name: str) -> list[str]:
    """Every measure's table of one dataset (empty when nothing is recorded)."""
    data = _records(protocol, store, name)
    if not any(data.values()):
        return []
    experiment = protocol.experiment_of(name)
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
    paper = name == "two moons"
    for measure in FIGURE_MEASURES[experiment]:
        lines += [f"### {MEASURES[measure][0]}", ""]
        cols = ["u", "n_train", "graph s", *protocol.methods] + (
            ["paper (§4.1)"] if measure == "accuracy" and paper else []
        )
        rows = []
        for u in protocol.sizes_of(name):
            g = graphs.get(u)
            row = [f"{u:,}", f"{u + 2:,}", "/" if g is None else f"{np.median(g):.3g}"]
            row += [
                _cell(protocol, name, m, u, data[m].get(u, []), measure) for m in protocol.methods
            ]
            if measure == "accuracy" and paper:
                row.append(_paper_accuracy())
            rows.append(row)
        lines += md_table(cols, rows) + [""]
    return lines


def notes(protocol, store, names) -> list[str]:
    """The caps that applied (method, reason, where) and every failed fit."""
    where: dict[tuple, list] = {}
    for name in names:
        for meth in protocol.methods:
            for u in protocol.sizes_of(name):
                reason = protocol.plan(meth, name, plan_sizes(protocol, name, u))[1]
                if reason:
                    where.setdefault((meth, reason), []).append(f"{name} u = {u:,}")
    lines = [f"- {meth}: {reason}: {', '.join(at)}." for (meth, reason), at in where.items()]
    for name in names:
        lines += [
            f"- {name} / {r['method']} u = {r['u']:,} repeat {r['repeat']}: ERROR {r['error']}"
            for r in store.select(protocol.experiment_of(name), name)
            if "error" in r
        ]
    return lines


def _plot(protocol, store, names, experiment, path):
    """One row of panels per dataset, one column per measure; None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measures = [m for m in FIGURE_MEASURES[experiment] if m not in ("total", "predict")]
    fig, axes = plt.subplots(
        len(names), len(measures), squeeze=False, figsize=(4.0 * len(measures), 3.4 * len(names))
    )
    for row, name in zip(axes, names):
        data = _records(protocol, store, name)
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
    fig.suptitle(f"paper001 {experiment} (ours)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def _validation(protocol, store, names) -> list[str]:
    rows = []
    for name in names:
        rec = store.get("validation", name, "search")
        if rec is None:
            continue
        for meth, chosen in rec["params"].items():
            best = max(s["accuracy"] for s in rec["grid"][meth])
            rows.append(
                [
                    name,
                    rec["u"],
                    rec["validation_points"],
                    meth,
                    chosen["ambient_reg"],
                    chosen["intrinsic_reg"],
                    f"{100 * best:.1f}",
                ]
            )
    if not rows:
        return []
    lines = [
        "## Validation: the tuned methods' (ambient_reg, intrinsic_reg)",
        "",
        "Repeat 0's labels at u = `validation_size`; scored by the accuracy on "
        "`validation_per_class` unlabeled training points per class (never the test set); "
        "the first best of the grid in its order.",
        "",
    ]
    cols = ["dataset", "u", "validation points", "method", "ambient_reg", "intrinsic_reg"]
    return lines + md_table(cols + ["validation accuracy (%)"], rows) + [""]


def _data_section(protocol) -> list[str]:
    doc = distorted.__doc__.split("\n\n", 1)[1].strip().replace("``", "`")
    doc = re.sub(r":func:`([^`]+)`", r"`\1()`", doc)
    lines = [
        "## Data",
        "",
        f"The extended USPS (`make_extended_usps({dict(protocol.extended)})`, digits "
        f"{protocol.digits}): {doc}",
        "",
    ]
    t = TABLE1
    lines += [
        "The paper's Table 1 (labeled / unlabeled / test, + and −): "
        + "; ".join(
            f"{k}: {v['attributes']} attributes, {v['labeled']}, {v['unlabeled']}, {v['test']}"
            for k, v in t.items()
        )
        + ".",
        "",
    ]
    return lines


#: Generic knobs this benchmark does not use (no random split, no sweeps, no CV).
_UNUSED = (
    "paper",
    "caps",
    "train_fraction",
    "labeled_fraction",
    "reduced_repeats",
    "center_fraction",
    "center_cap",
    "sweeps",
    "speedup",
    "max_samples",
)


def protocol_lines(protocol, methods) -> list[str]:
    """The knobs this benchmark uses (value and reason), its methods and the data notes."""
    from semiscale_bench.harness.report import _value

    rows = [[k, _value(v), why] for k, v, why in protocol.knobs() if k not in _UNUSED]
    lines = ["## Protocol", ""] + md_table(["knob", "value", "why"], rows) + ["", "Methods:", ""]
    lines += [f"- {name}: {methods[name].description}" for name in protocol.methods]
    return lines + ["", "Data:", ""] + [f"- {d.name}: {d.note}" for d in protocol.datasets] + [""]


def render(bench, protocol, store, out) -> list[str]:
    """fig1.md, fig2.md, their PNGs and summary.md, from the records that exist."""
    runs = store.runs()
    names = [d.name for d in protocol.datasets if d.source is not None]
    paths, figures = [], []
    for experiment, title in (("fig1", "Figure 1: two moons"), ("fig2", "Figure 2: USPS")):
        mine = [n for n in names if protocol.experiment_of(n) == experiment]
        tables = [line for n in mine for line in dataset_tables(protocol, store, n)]
        if not tables:
            continue
        text = header(f"Paper 001, {title} (ours; the paper's statements below)", protocol, runs)
        text += tables + ["## The paper (its figures' values are not in the text)", ""]
        text += claims(experiment) + ["", "## Notes", ""] + notes(protocol, store, mine)
        paths.append(write_text(out, f"{experiment}.md", text))
        picture = _plot(
            protocol,
            store,
            [n for n in mine if dataset_tables(protocol, store, n)],
            experiment,
            f"{out}/{experiment}.png",
        )
        figures.append((experiment, picture))
        paths += [picture] if picture else []
    lines = header("Paper 001 (SLapCVM), §4: Figures 1-2 reproduced", protocol, runs)
    lines += target_lines(protocol, store)
    for experiment, picture in figures:
        lines.append(
            f"![{experiment}]({experiment}.png)"
            if picture
            else f"({experiment}.png not drawn: matplotlib is not installed, "
            "`pip install semiscale[plot]`)"
        )
    lines += ["", "Tables: `fig1.md` (two moons), `fig2.md` (usps, extended usps).", ""]
    lines += ["## The paper's settings", "", f"Machine: {MACHINE}.", ""]
    lines += [f"- {s}" for s in SETTINGS] + [""]
    lines += _validation(protocol, store, names) + _data_section(protocol)
    lines += protocol_lines(protocol, bench.methods)
    lines += ["## Notes", ""] + notes(protocol, store, names)
    return paths + [write_text(out, "summary.md", lines)]
