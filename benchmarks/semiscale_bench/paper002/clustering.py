"""Paper 002, Figure 4: k-means (k = 2) on two moons with the Euclidean, full and efficient kernels.

The paper (§5.2) clusters "an artificially generated 2-moons data set with 1000 data points" by
k-means with the Euclidean distance, with the full LapSVM kernel (all 1,000 points) and with the
efficient data-dependent kernel (n̂ = 40 landmarks, p = 2), "selected the best kernels from a
small grid over the parameters γ and η", and reports errors of 11.4 %, 0 % and 1 %.

Here, per seed s of :data:`SEEDS`: ``make_two_moons(1000, noise=0.1, random_state=s)``;
Euclidean k-means is scikit-learn's ``KMeans(2, n_init=1, random_state=s)``; the two kernels are
:class:`~semiscale.kernels.DataDependentKernel` on the paper's graph (§5.1,
``graph=paper_graph()``: 5 nearest neighbours, binary weights, the normalized Laplacian, plus
the kernel's default ridge 1e-3),
``power=2``, ``landmark_selection="random"`` (no labels in clustering) and ``random_state=s``,
``construction="exact"`` (full) or ``n_landmarks=40`` (efficient), clustered by
:class:`~semiscale.KernelKMeans` (``n_clusters=2``, ``n_init=1``, ``random_state=s``) at every
(γ, η) of :data:`GRID` (γ: the base RBF's exp(−γ‖x − x'‖²)).  The error is the share of points
misclassified under the best matching of clusters to moons.  Selecting the grid point by that
error uses the true labels, as the paper's "best kernels" do: the report gives the selected
error AND the median over the grid, so the selection's share of the result is visible.  The
paper does not give its moons' generator: Euclidean k-means errs more on ours (scikit-learn's
geometry, table below) than its 11.4 %, so its moons are not ours.
"""

from __future__ import annotations

import time
import warnings
from itertools import permutations
from pathlib import Path

import numpy as np

from semiscale_bench.paper002.timing_settings import _Records, experiment_store

__all__ = ["GRID", "NOISE", "SEEDS", "clustering_error", "render_clustering", "run_clustering"]

N_POINTS = 1000
#: Gaussian noise of the moons (the paper does not give its generator): the project's moons noise.
NOISE = 0.1
SEEDS = (0, 1, 2)
#: The small grid: base RBF γ (σ = 1/√(2γ) from 2.2 to 0.25, around the moons' radius 1) and
#: η (the weight of the graph term in eq. 6), a factor 10 apart.
GRID = {"gamma": (0.1, 0.5, 2.0, 8.0), "eta": (10.0, 100.0, 1e3, 1e4)}
KERNELS = {
    "full": {"construction": "exact"},
    "efficient": {"construction": "landmarks", "n_landmarks": 40},
}
#: Beside the paper's: the efficient kernel on the library's default graph (DataDependentKernel's
#: graph=None: 5-NN, 0–1 weights, the unnormalized Laplacian D − W), the same grid and seeds.
VARIANTS = {"efficient_dw": {"construction": "landmarks", "n_landmarks": 40, "graph": "default"}}
POWER = 2
#: k-means runs per clustering, k-means++ seeding: one, both k-means' default for k-means++
#: (a kernel k-means run costs about ten n × n kernel products on a busy 2-core machine).
N_INIT = 1
#: The paper's errors (§5.2), in %.
PAPER = {"euclidean": 11.4, "full": 0.0, "efficient": 1.0}
#: The issue's target: the efficient kernel's error, in %.
TARGET_PERCENT = 1.0

_QUICK = {
    "n_points": 120,
    "seeds": (0,),
    "grid": {"gamma": (0.5,), "eta": (10.0, 100.0)},
    "kernels": {"full": KERNELS["full"], "efficient": {**KERNELS["efficient"], "n_landmarks": 20}},
    "variants": {"efficient_dw": {**VARIANTS["efficient_dw"], "n_landmarks": 20}},
    "n_init": 1,
}
_FULL = {
    "n_points": N_POINTS,
    "seeds": SEEDS,
    "grid": GRID,
    "kernels": KERNELS,
    "variants": VARIANTS,
    "n_init": N_INIT,
}
DATASET = "two_moons"


def plan(protocol) -> dict:
    """Sizes, seeds, grid and kernels: the quick variant for a quick protocol."""
    return _QUICK if protocol.quick else _FULL


def clustering_error(labels, y) -> float:
    """Share of points misclassified under the best one-to-one matching of clusters to classes."""
    labels, y = np.asarray(labels), np.asarray(y)
    classes, clusters = np.unique(y), np.unique(labels)
    if len(clusters) > len(classes):
        raise ValueError(f"{len(clusters)} clusters for {len(classes)} classes")
    best = 0
    for perm in permutations(classes, len(clusters)):
        mapped = np.asarray(perm)[np.searchsorted(clusters, labels)]
        best = max(best, int(np.sum(mapped == y)))
    return 1.0 - best / len(y)


def _setting(gamma: float, eta: float) -> str:
    return f"gamma={gamma:g},eta={eta:g}"


def _spec(protocol, method=None) -> dict:
    """What a record was made with (a variant's own kernel added): compared on a rerun."""
    p = plan(protocol)
    if method in p["variants"]:
        return {**_spec(protocol), "variant": dict(p["variants"][method])}
    return {
        "n_points": p["n_points"],
        "noise": NOISE,
        "graph": "paper_graph()",
        "power": POWER,
        "n_init": p["n_init"],
        "grid": {k: list(v) for k, v in p["grid"].items()},
        "kernels": {k: dict(v) for k, v in p["kernels"].items()},
    }


def _current(store, protocol, method, seed, setting):
    rec = store.get("clustering", DATASET, method, seed, setting)
    if rec is None or store.force or rec.get("spec") != _spec(protocol, method):
        return None
    return rec


def _methods(p) -> dict:
    """Kernel method -> its DataDependentKernel parameters (the paper's, then the variants)."""
    return {**p["kernels"], **p["variants"]}


def _kernel(name: str, gamma: float, eta: float, seed: int, p: dict):
    from semiscale.kernels import RBF, DataDependentKernel
    from semiscale.kernels.data_dependent import paper_graph

    params = dict(_methods(p)[name])
    graph = paper_graph() if params.pop("graph", "paper") == "paper" else None
    return DataDependentKernel(
        base_kernel=RBF(gamma=gamma),
        graph=graph,
        power=POWER,
        eta=eta,
        landmark_selection="random",
        random_state=seed,
        **params,
    )


def _record(labels, y, seconds, seed, extra=None) -> dict:
    rec = {"error_percent": 100.0 * clustering_error(labels, y), "seconds": seconds}
    if seed == 0:  # seed 0's clusterings are drawn (Figure 4)
        rec["labels"] = "".join(str(int(v)) for v in labels)
    return {**rec, **(extra or {})}


def run_clustering(bench, protocol, store, ctx) -> None:
    """Every (method, seed, grid point) without a current record, recorded."""
    from sklearn.cluster import KMeans

    from semiscale import KernelKMeans
    from semiscale.datasets import make_two_moons

    p = plan(protocol)
    parent, store = store, experiment_store(store, protocol, "clustering")
    points = [(g, e) for g in p["grid"]["gamma"] for e in p["grid"]["eta"]]
    # seed by seed, the efficient kernel (the target) first: an interrupted run leaves whole seeds
    todo = [("euclidean", s, None) for s in p["seeds"]]
    kernels = ["efficient", "full", *p["variants"]]
    todo += [(k, s, pt) for s in p["seeds"] for k in kernels for pt in points]
    todo = [
        t
        for t in todo
        if _current(store, protocol, t[0], t[1], "" if t[2] is None else _setting(*t[2])) is None
    ]
    if not todo:
        return
    start = time.perf_counter()
    store = experiment_store(parent, protocol, "clustering", start=True)
    with ctx.fits(total=len(todo)) as bar:
        data = {}
        for method, seed, point in todo:
            if seed not in data:
                data[seed] = make_two_moons(p["n_points"], noise=NOISE, random_state=seed)
            X, y = data[seed]
            bar.set_postfix_str(f"{method}, seed {seed}, {point}", refresh=False)
            spec, tic = _spec(protocol, method), time.perf_counter()
            if point is None:
                km = KMeans(n_clusters=2, n_init=p["n_init"], random_state=seed).fit(X)
                rec = _record(km.labels_, y, time.perf_counter() - tic, seed)
                store.put("clustering", DATASET, method, seed, "", spec=spec, **rec)
            else:
                kernel = _kernel(method, *point, seed, p)
                try:
                    km = KernelKMeans(
                        n_clusters=2, kernel=kernel, n_init=p["n_init"], random_state=seed
                    ).fit(X)
                except Exception as exc:  # recorded, the run goes on
                    rec = {"error": f"{type(exc).__name__}: {exc}"}
                else:
                    extra = {"gamma": point[0], "eta": point[1]}
                    landmarks = getattr(km.kernel_, "landmarks_", None)
                    if seed == 0 and landmarks is not None and method != "full":
                        extra["landmarks"] = np.asarray(landmarks).tolist()
                    rec = _record(km.labels_, y, time.perf_counter() - tic, seed, extra)
                store.put("clustering", DATASET, method, seed, _setting(*point), spec=spec, **rec)
            bar.update()
        ctx.log(f"clustering: {len(todo)} clusterings recorded")
    store.end_run(wall_seconds=time.perf_counter() - start)


# --------------------------------------------------------------------------------- report
def _table(store, protocol) -> dict:
    """method -> {setting -> [error % per seed ("failed"; None: not run)]} of the records."""
    p = plan(protocol)
    points = [_setting(g, e) for g in p["grid"]["gamma"] for e in p["grid"]["eta"]]
    out = {"euclidean": {"": []}}
    out.update({k: {pt: [] for pt in points} for k in _methods(p)})
    for method, settings in out.items():
        for setting, errors in settings.items():
            for seed in p["seeds"]:
                rec = _current(store, protocol, method, seed, setting)
                if rec is None:
                    errors.append(None)
                else:
                    errors.append("failed" if "error" in rec else rec["error_percent"])
    return out


def _stats(settings: dict) -> dict:
    """Selected and median errors of one method over its grid and seeds (None where missing)."""
    grid = np.array([[e if isinstance(e, float) else np.nan for e in v] for v in settings.values()])
    cells = [e for v in settings.values() for e in v]
    names = list(settings)
    if np.isnan(grid).all():
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a grid point or seed not run yet
        means = np.nanmean(grid, axis=1)
        per_seed_best = np.nanmin(grid, axis=0)
    best = int(np.nanargmin(means))
    return {
        "per_seed_best": per_seed_best,  # the paper's selection, seed by seed
        "point_best": names[best],  # one grid point for every seed
        "point_best_errors": grid[best],
        "median": float(np.nanmedian(grid)),
        "failed": f"{cells.count('failed')} / {cells.count(None)}",
    }


def _plot(store, protocol, stats, path) -> str | None:
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from semiscale.datasets import make_two_moons

    p = plan(protocol)
    if 0 not in p["seeds"]:
        return None
    X, _ = make_two_moons(p["n_points"], noise=NOISE, random_state=0)
    panels = [("euclidean", "")] + [(k, stats[k]["point_best"]) for k in _methods(p) if stats[k]]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    for ax, (method, setting) in zip(axes[0], panels):
        rec = _current(store, protocol, method, 0, setting)
        if rec is None or "labels" not in rec:
            ax.set_axis_off()
            continue
        labels = np.array([int(c) for c in rec["labels"]])
        ax.scatter(X[:, 0], X[:, 1], c=labels, s=6, cmap="coolwarm")
        if rec.get("landmarks"):
            L = X[rec["landmarks"]]
            ax.scatter(L[:, 0], L[:, 1], marker="x", c="k", s=30, label="landmarks")
            ax.legend(fontsize=7, loc="lower left")
        where = f", {setting}" if setting else ""
        paper = f" (paper {PAPER[method]:g} %)" if method in PAPER else ""
        ax.set_title(f"{method}{where}: {rec['error_percent']:.1f} %{paper}", fontsize=9)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"paper 002, Figure 4 (ours): k-means, two moons, {p['n_points']} points, seed 0")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def _paper(method) -> str:
    return f"{PAPER[method]:g}" if method in PAPER else "/ (not in the paper)"


def _fmt(values) -> str:
    return ", ".join("/" if np.isnan(v) else f"{v:.1f}" for v in values)


def render_clustering(store, protocol, out_dir) -> list[str]:
    """clustering.md and clustering.png from the records; returns the summary lines."""
    from semiscale_bench.harness.report import header, md_table, write_text

    store = experiment_store(store, protocol, "clustering")
    table = _table(store, protocol)
    if all(e is None for settings in table.values() for v in settings.values() for e in v):
        return []
    p = plan(protocol)
    stats = {m: _stats(s) for m, s in table.items()}
    lines = header(
        "paper 002, Figure 4: kernel k-means on two moons",
        _Records(protocol.quick, "clustering"),
        store.runs(),
    )
    lines = [line.replace("`records.jsonl`", "`clustering/records.jsonl`") for line in lines]
    lines += [
        " ".join(__doc__.split("\n\n")[2].split()),
        "",
        f"Grid: γ in {p['grid']['gamma']}, η in {p['grid']['eta']}; seeds {p['seeds']}; "
        f"kernels {p['kernels']} on the paper's graph, p = {POWER}; beside them (not in the "
        f"paper) {p['variants']}, graph 'default' being DataDependentKernel's graph=None (5-NN, "
        "0–1 weights, the unnormalized Laplacian D − W).",
        "",
    ]
    rows = []
    for method, st in stats.items():
        if not st:
            rows.append([method, "/", "/", "/", "/", _paper(method)])
            continue
        sel = st["per_seed_best"]
        rows.append(
            [
                method,
                f"{np.nanmean(sel):.2f} ({_fmt(sel)})",
                f"{st['point_best'] or 'no grid'}: {np.nanmean(st['point_best_errors']):.2f} "
                f"({_fmt(st['point_best_errors'])})",
                f"{st['median']:.2f}",
                str(st["failed"]),
                _paper(method),
            ]
        )
    cols = [
        "method",
        "error %: best grid point per seed, mean (per seed)",
        "error %: one grid point for all seeds, mean (per seed)",
        "median % over grid and seeds",
        "fits failed / not run",
        "paper %",
    ]
    lines += md_table(cols, rows) + [""]
    grid_cols = ["method", "γ, η"] + [f"seed {s}" for s in p["seeds"]]
    grid_rows = [
        [m, pt] + [f"{e:.1f}" if isinstance(e, float) else (e or "/") for e in errs]
        for m, settings in table.items()
        if m != "euclidean"
        for pt, errs in settings.items()
    ]
    lines += ["## Every grid point (error %)", ""] + md_table(grid_cols, grid_rows) + [""]
    summary = []
    eff = stats.get("efficient") or {}
    if eff:
        sel = float(np.nanmean(eff["per_seed_best"]))
        one = float(np.nanmean(eff["point_best_errors"]))
        ok = sel <= TARGET_PERCENT
        full = np.nanmean(stats["full"]["per_seed_best"]) if stats.get("full") else np.nan
        summary.append(
            f"Kernel k-means, efficient kernel (n̂ = {p['kernels']['efficient']['n_landmarks']}, "
            f"p = {POWER}) on two moons: {sel:.2f} % (best grid point per seed, selected by the "
            f"true labels as the paper; mean over {len(p['seeds'])} seeds), {one:.2f} % at one "
            f"grid point for all seeds, median {eff['median']:.2f} % over the grid (target ≤ "
            f"{TARGET_PERCENT:g} %, paper 1 %; full kernel {full:.2f} %,"
            f" Euclidean {np.nanmean(stats['euclidean']['per_seed_best']):.2f} %; paper 0 % and "
            f"11.4 %): **{'PASS' if ok else 'FAIL'}**"
        )
    for name in p["variants"]:
        var = stats.get(name) or {}
        if var:
            sel = float(np.nanmean(var["per_seed_best"]))
            summary.append(
                f"Beside the paper: the efficient kernel on our default graph ({name}: "
                f"{p['variants'][name]}): {sel:.2f} % (best grid point per seed), "
                f"{np.nanmean(var['point_best_errors']):.2f} % at one grid point "
                f"({var['point_best']}), median {var['median']:.2f} % over the grid (the same "
                f"target ≤ {TARGET_PERCENT:g} %): **{'PASS' if sel <= TARGET_PERCENT else 'FAIL'}**"
            )
    lines += ["## Target", ""] + [f"- {s}" for s in summary] + [""]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    picture = _plot(store, protocol, stats, out_dir / "clustering.png")
    lines += ["![clusterings](clustering.png)" if picture else "(clustering.png not drawn)", ""]
    write_text(out_dir, "clustering.md", lines)
    return summary
