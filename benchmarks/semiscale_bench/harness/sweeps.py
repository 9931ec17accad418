"""Sweeps: the test error against the labeled share or the center share (a paper's figures).

A :class:`Sweep` is data in the protocol.  :func:`run_sweeps` fits, per dataset and repeat,
every method at every swept value on the table's splits and graph, with the dataset's chosen
hyper-parameters (its CV record); labeled sets are nested (prefixes of one random order per
repeat).  A method in ``flat`` does not depend on the swept value (e.g. RLS in a sweep over
centers): it is fitted once per repeat at the protocol's own sizes and drawn as a flat line.
:func:`render_sweeps` draws the figures and tabulates their means, from the records.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness.data import load_dense, make_split
from semiscale_bench.harness.protocol import Sizes, n_labeled
from semiscale_bench.harness.records import jsonable
from semiscale_bench.harness.report import fmt, md_table, write_text
from semiscale_bench.harness.runner import chosen_params, measured_fit, planned_sizes

__all__ = ["FLAT", "Sweep", "render_sweeps", "run_sweeps", "sweep_curves"]

FLAT = "flat"


@dataclass(frozen=True)
class Sweep:
    """One figure: ``methods``' test error against ``values`` (shares of n_train).

    ``vary`` is ``"labeled"`` (m = value × n_train, the protocol's centers) or ``"centers"``
    (s = value × n_train, the protocol's labeled set).  ``caps``: method -> Cap rules with
    ``repeats=0`` that drop the method from the sweep on a dataset (with their reason);
    ``max_centers`` drops the points with more centers (time).
    """

    name: str
    title: str
    vary: str
    methods: tuple
    values: tuple
    datasets: tuple
    repeats: int
    flat: tuple = ()
    caps: Mapping = field(default_factory=dict)
    max_centers: int | None = None

    def __post_init__(self):
        if self.vary not in ("labeled", "centers"):
            raise ValueError(f"Sweep {self.name}: vary must be 'labeled' or 'centers'")

    def points(self, protocol, dataset, sizes: Sizes):
        """(method, setting, m, s) of one repeat."""
        out = []
        for meth in self.methods:
            if any(c.repeats == 0 and c.applies(dataset, sizes) for c in self.caps.get(meth, ())):
                continue
            if meth in self.flat:
                out.append((meth, FLAT, sizes.m, sizes.s))
                continue
            for v in self.values:
                m = n_labeled(sizes.n_train, v) if self.vary == "labeled" else sizes.m
                s = (
                    protocol.centers(dataset, sizes.n_train, v)
                    if self.vary == "centers"
                    else sizes.s
                )
                if self.max_centers is None or s <= self.max_centers:
                    out.append((meth, str(v), m, s))
        return out


def run_sweeps(bench, protocol, store, ctx) -> None:
    """Record every sweep point not yet recorded, on the selected datasets.

    Progress: one bar over the points of every sweep (recorded ones counted as done).
    """
    runs = [(sweep, name) for sweep in protocol.sweeps for name in sweep.datasets]
    runs = [(sweep, name) for sweep, name in runs if name in ctx.datasets]
    counted = {}
    for sweep, name in runs:
        sizes = planned_sizes(protocol, name, store)
        counted[sweep.name, name] = (
            (0, 0) if sizes is None else _count(sweep, protocol, name, sizes, store)
        )
    total, done = map(sum, zip(*counted.values())) if counted else (0, 0)
    with ctx.fits(total, done) as bar:
        for sweep, name in runs:
            _sweep_dataset(bench, protocol, store, ctx, sweep, name, bar, counted[sweep.name, name])


def _count(sweep, protocol, name, sizes, store) -> tuple[int, int]:
    """(points, points recorded) of ``sweep`` on ``name``, over its repeats."""
    points = sweep.points(protocol, name, sizes)
    keys = [(p[0], r, p[1]) for r in range(sweep.repeats) for p in points]
    return len(keys), sum(store.done(sweep.name, name, *key) for key in keys)


def _sweep_dataset(bench, protocol, store, ctx, sweep, name, bar, counted) -> None:
    spec = bench.table
    chosen = chosen_params(store, name, sweep.name)
    bar.set_postfix_str(f"{sweep.name}, {name}: loading", refresh=False)
    X, y = load_dense(protocol.dataset(name).source, protocol.max_samples, ctx.data_home)
    sizes = protocol.sizes(name, *X.shape)
    total, done = _count(sweep, protocol, name, sizes, store)
    if (total, done) != counted:  # the planned sizes were not the loaded data's
        bar.total += total - counted[0]
        bar.update(done - counted[1])
    for r in range(sweep.repeats):
        points = sweep.points(protocol, name, sizes)
        todo = [p for p in points if not store.done(sweep.name, name, p[0], r, p[1])]
        if not todo:
            continue
        split = make_split(X, y, r, protocol.train_fraction, protocol.labeled_fraction)
        bar.set_postfix_str(f"{sweep.name}, {name}: graph, repeat {r}", refresh=False)
        with warnings.catch_warnings(), silenced():
            warnings.simplefilter("ignore")  # the table records the graph's warnings
            laplacian = spec.graph(protocol, r).fit(split.X_train).laplacian_
        for meth, setting, m, s in todo:
            bar.set_postfix_str(
                f"{sweep.name}, {name}: {meth} at {setting}, repeat {r}", refresh=False
            )
            size = Sizes(sizes.n, sizes.d, sizes.n_train, m, s)
            est = bench.methods.build(meth, chosen, size, protocol=protocol, dataset=name, seed=r)
            fit = partial(est.fit, split.X_train, split.observed(m), laplacian=laplacian)
            rec = measured_fit(fit, trace_memory=False)
            if "error" not in rec:
                rec.update(spec.score(est, split))
            store.put(sweep.name, name, meth, r, setting, n_train=sizes.n_train, **rec)
            bar.update()
        ctx.log(f"{sweep.name}: {name} repeat {r} done")


def sweep_curves(records, values, metric: str) -> dict:
    """Method -> {"mean", "std", "per_repeat"} over the swept ``values`` (None where not run)."""
    repeats = sorted({r["repeat"] for r in records})
    out = {}
    for meth in dict.fromkeys(r["method"] for r in records):
        grid = np.full((len(repeats), len(values)), np.nan)
        for r in records:
            if r["method"] == meth and "error" not in r:
                i = repeats.index(r["repeat"])
                cols = slice(None) if r["setting"] == FLAT else values.index(float(r["setting"]))
                grid[i, cols] = r[metric]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: values skipped
            mean = np.nanmean(grid, axis=0)
            std = np.nanstd(grid, axis=0, ddof=1) if len(repeats) > 1 else 0 * mean
        out[meth] = {"mean": _none(mean), "std": _none(std), "per_repeat": list(map(_none, grid))}
    return jsonable(out)


def _none(values):
    return [None if np.isnan(v) else float(v) for v in values]


def render_sweeps(protocol, store, out, metric: str) -> list[str]:
    """One PNG per sweep and ``sweeps.md`` with their means, from the records (none: [])."""
    lines, paths = [f"# {protocol.paper}: sweeps (ours), {metric} mean over repeats", ""], []
    rendered = False
    for sweep in protocol.sweeps:
        values = list(sweep.values)
        panels = {}
        for name in sweep.datasets:
            recs = store.select(sweep.name, name)
            if recs:
                title = f"{name} (n_train={recs[0]['n_train']})"
                panels[name] = {"title": title, "curves": sweep_curves(recs, values, metric)}
        if not panels:
            continue
        rendered = True
        xlabel = f"{sweep.vary} proportion (% of n_train)"
        title = f"{protocol.paper} {sweep.name} (ours): {sweep.title}"
        picture = _plot(panels, values, f"{out}/{sweep.name}.png", xlabel, title, metric)
        if picture is None:
            lines += [
                f"({sweep.name}.png not drawn: matplotlib is not installed; pip install "
                "semiscale[plot])",
                "",
            ]
        else:
            paths.append(picture)
        cols = ["dataset", "method"] + [f"{100 * v:g} %" for v in values]
        rows = [
            [name, meth] + [fmt(v) for v in curve["mean"]]
            for name, panel in panels.items()
            for meth, curve in panel["curves"].items()
        ]
        lines += [f"## {sweep.name}: {sweep.title}", ""] + md_table(cols, rows) + [""]
    return paths + [write_text(out, "sweeps.md", lines)] if rendered else []


def _plot(panels, values, path, xlabel, title, ylabel) -> str | None:
    """Draw one figure; None when matplotlib (the ``plot`` extra) is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    x0 = 100 * np.asarray(values)
    for ax, panel in zip(axes[0], panels.values()):
        for k, (meth, st) in enumerate(panel["curves"].items()):
            x = x0 * (1 + 0.04 * (k - 1))  # small offsets so that error bars do not overlap
            mean = np.array([np.nan if v is None else v for v in st["mean"]])
            std = np.array([np.nan if v is None else v for v in st["std"]])
            ax.errorbar(x, mean, yerr=std, marker="osd^v"[k % 5], capsize=3, label=meth)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x0, [f"{p:g}" for p in x0])
        ax.set_xlabel(xlabel)
        ax.set_title(panel["title"])
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"test {ylabel}")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)
