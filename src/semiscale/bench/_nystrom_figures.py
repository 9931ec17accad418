"""Paper 000 Figures 1-2: test RMSE against the labeled and the center proportion.

* Figure 1: m = n_train × {1, 2, 4, 8, 16, 32, 64} % labeled (nested sets: the first m rows of one
  random order per repeat), s = 10 % centers.
* Figure 2: s = n_train × {1, ..., 64} % centers, m = 10 % labeled (the same labeled set for every
  s, so RLS and LapRLS are flat lines, as in the paper).

Methods: RLS-CG, LapRLS-direct (exact; Figure 1 only where n_train ≤ 4,000 as it needs 7 O(n³)
fits per repeat, Figure 2 where n_train ≤ 8,000) and Nyström-PCG (CG and PCG reach the same
solution, so the paper merges them). Datasets: madelon, space_ga, abalone, phishing — the four
smallest of Table 2, where s up to 64 % n and the exact reference fit the time budget (a8a at
s = 64 % would need ~10k centers: minutes per fit); the paper used eight unnamed datasets.
Figure 2 skips s > 3,000 centers (phishing at 64 %: ~20 s per fit, as the default
preconditioner costs O(n s²)). 5 repeats (the paper: 20), mean ± std error bars, the Table 2
CV hyper-parameters (CV is run here when the dataset was not in the table run). Same
preprocessing, graph and splits as the tables.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from . import _nystrom_protocol as nb
from ._nystrom_report import write_json

FIG_METHODS = ("RLS-CG", "LapRLS-direct", "Nyström-PCG")


def _fit(meth, params, name, split, L, y_obs, s, seed, protocol):
    est = nb.build_estimator(
        meth, params, name=name, n_train=split.n_train, s=s, seed=seed, protocol=protocol
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(split.X_train, y_obs, laplacian=L)
    return nb.rmse(est.predict(split.X_test), split.y_test)


def sweep_dataset(name, protocol, params, data_home=None):
    """Both sweeps on one dataset; returns per-method (repeats × proportions) RMSE arrays."""
    X, y = nb.load_data(name, protocol, data_home)
    props = list(protocol.figure_proportions)
    R = protocol.figure_repeats
    fig1 = {meth: np.full((R, len(props)), np.nan) for meth in FIG_METHODS}
    fig2 = {meth: np.full((R, len(props)), np.nan) for meth in FIG_METHODS}
    n_train = None
    start = time.perf_counter()
    for r in range(R):
        split = nb.prepare_split(X, y, r, protocol)
        n_train = split.n_train
        if params is None:
            params = nb.cross_validate(name, split, protocol)["params"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L = nb.make_graph(protocol, r).fit(split.X_train).laplacian_
        s10 = nb.n_centers("", n_train, protocol)
        direct1 = n_train <= protocol.figure_direct_max_n
        direct2 = n_train <= protocol.figure_direct_s_max_n
        for j, p in enumerate(props):
            y_obs = split.observed(nb.n_labeled(n_train, protocol, p))
            for meth in FIG_METHODS:
                if meth == "LapRLS-direct" and not direct1:
                    continue
                fig1[meth][r, j] = _fit(meth, params, name, split, L, y_obs, s10, r, protocol)
        y10 = split.y_observed
        fixed = {"RLS-CG": _fit("RLS-CG", params, name, split, L, y10, s10, r, protocol)}
        if direct2:
            fixed["LapRLS-direct"] = _fit(
                "LapRLS-direct", params, name, split, L, y10, s10, r, protocol
            )
        for meth, val in fixed.items():
            fig2[meth][r, :] = val
        for j, p in enumerate(props):
            s = nb.n_centers("", n_train, protocol, p)
            if s > protocol.figure_max_centers:
                continue
            fig2["Nyström-PCG"][r, j] = _fit(
                "Nyström-PCG", params, name, split, L, y10, s, r, protocol
            )
        nb.log(f"figures: {name} repeat {r} done ({time.perf_counter() - start:.0f} s so far)")
    return {
        "n_train": n_train,
        "params": params,
        "seconds": time.perf_counter() - start,
        "fig1": fig1,
        "fig2": fig2,
    }


def _nan_to_none(values):
    return [None if np.isnan(v) else float(v) for v in values]


def _stats(arrays):
    out = {}
    for meth, a in arrays.items():
        if np.all(np.isnan(a)):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (skipped s)
            mean = np.nanmean(a, axis=0)
            std = np.nanstd(a, axis=0, ddof=1) if a.shape[0] > 1 else np.zeros(a.shape[1])
        out[meth] = {
            "mean": _nan_to_none(mean),
            "std": _nan_to_none(std),
            "per_repeat": [_nan_to_none(row) for row in a],
        }
    return out


def _plot(data, key, xlabel, title, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["datasets"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    props = 100 * np.asarray(data["proportions"])
    styles = {"RLS-CG": ("C0", "s"), "LapRLS-direct": ("C1", "^"), "Nyström-PCG": ("C2", "o")}
    for ax, name in zip(axes[0], names):
        for k, (meth, st) in enumerate(data["datasets"][name][key].items()):
            color, marker = styles[meth]
            x = props * (1 + 0.04 * (k - 1))  # small offsets so the error bars do not overlap
            mean = np.array([np.nan if v is None else v for v in st["mean"]])
            std = np.array([np.nan if v is None else v for v in st["std"]])
            ax.errorbar(
                x,
                mean,
                yerr=std,
                color=color,
                marker=marker,
                capsize=3,
                label=meth,
                alpha=0.9,
            )
        ax.set_xscale("log", base=2)
        ax.set_xticks(props)
        ax.set_xticklabels([f"{p:g}" for p in props])
        ax.set_xlabel(xlabel)
        ax.set_title(f"{name} (n_train={data['datasets'][name]['n_train']})")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test RMSE")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_figures(protocol, records, out, header, names=None, data_home=None):
    """Figures 1-2 (PNG + JSON); uses the Table 2 CV parameters when ``records`` has them."""
    names = list(names) if names else list(protocol.figure_datasets)
    by_name = {r.get("dataset"): r for r in records if r.get("available")}
    results = {}
    for name in names:
        params = by_name.get(name, {}).get("params")
        results[name] = sweep_dataset(name, protocol, params, data_home)
    common = {
        **header,
        "figure_note": __doc__,
        "proportions": list(protocol.figure_proportions),
        "repeats": protocol.figure_repeats,
    }
    paths = []
    specs = (
        ("fig1", "labeled proportion m/n_train (%)", "RMSE vs labeled proportion (s = 10 %)"),
        ("fig2", "center proportion s/n_train (%)", "RMSE vs center proportion (m = 10 %)"),
    )
    for key, xlabel, title in specs:
        data = {
            **common,
            "figure": f"paper 000 Figure {key[-1]}: {title}",
            "datasets": {
                name: {
                    "n_train": res["n_train"],
                    "params": res["params"],
                    "seconds": res["seconds"],
                    key: _stats(res[key]),
                }
                for name, res in results.items()
            },
        }
        paths.append(write_json(os.path.join(out, f"nystrom_{key}.json"), data))
        png = os.path.join(out, f"nystrom_{key}.png")
        _plot(data, key, xlabel, f"Paper 000 Figure {key[-1]} (ours): {title}", png)
        paths.append(png)
    return paths
