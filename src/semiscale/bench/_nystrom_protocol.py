"""The protocol pieces of :mod:`semiscale.bench.nystrom`: knobs, data, splits, methods, CV.

See :mod:`semiscale.bench.nystrom` for the protocol and the reasons behind every choice.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..graph import KNNGraph
from ..kernels import RBF, sigma_from_gamma
from ..models.laprls import LapRLSRegressor
from ..models.nystrom_laprls import NystromLapRLSRegressor
from ..scaling import to_paper000
from . import paper000
from ._measure import measure

#: Paper-000 dataset names in Table 2's order.
PAPER_DATASETS = tuple(paper000.SAMPLE_SIZE)
#: Our methods: the paper's five, then two references not in its tables.
METHODS = paper000.METHODS + (
    "LapRLS-direct",
    "Nyström-PCG (paper P)",
    "Nyström-PCG (uniform centers)",
)
EXACT_METHODS = ("LapRLS-CG", "LapRLS-PCG", "LapRLS-direct")


@dataclass
class Protocol:
    """Every knob of the benchmark (the defaults are the documented full run)."""

    repeats: int = 5
    train_fraction: float = 0.7
    labeled_fraction: float = 0.1
    center_fraction: float = 0.1
    n_neighbors: int = 8
    graph_bandwidth: float = math.sqrt(2.0)
    cv_folds: int = 3
    #: CV scores held-out labeled points inductively (removed from the fold's training points
    #: and graph, then ``predict``-ed), as the test split is scored; False = the held-out points
    #: stay in the graph as unlabeled points and are scored by ``transduction_``.
    cv_inductive: bool = False
    #: A second CV stage: each regularization parameter (LapRLS intrinsic_reg then ambient_reg,
    #: RLS ambient_reg) at the geometric midpoints around its best grid value.  The decade grid
    #: alone chose intrinsic_reg 10 on phishing, where CV prefers 3 and so does the test split.
    cv_refine: bool = True
    cv_max_samples: int = 16000
    #: Smaller CV subsamples for time: skin_nonskin's grid corner (gamma = 4 x median,
    #: ambient_reg 1e-6) needs thousands of PCG iterations (212 s at 4000 points).
    cv_max_override: dict = field(default_factory=lambda: {"skin_nonskin": 4000})
    gamma_factors: tuple = (16.0, 4.0, 1.0, 0.25, 0.0625)
    ambient_grid: tuple = (1e-6, 1e-4, 1e-2)
    intrinsic_grid: tuple = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)
    cg_max_iter: int = 300
    exact_max_n: int = 16000  # exact LapRLS only up to this n_train
    exact_all_repeats_max_n: int = 8000  # LapRLS-direct on every repeat up to here
    exact_cg_max_n: int = 8000  # LapRLS-CG only up to here ...
    exact_cg_all_repeats_max_n: int = 4000  # ... and on every repeat up to here
    exact_pcg_max_n: int = 4000  # LapRLS-PCG (dense n x n preconditioner factors) up to here
    pcg_max_iter: int = 50  # Nyström-PCG cap (the target is 10; default 10·s)
    nystrom_cg_all_repeats_max_n: int = 8000
    nystrom_cg_skip: dict = field(
        default_factory=lambda: {
            "cod-rna": "~0.55 s per iteration: 300 iterations = 2.8 min per fit",
            "connect-4": "~0.45 s per iteration: 300 iterations = 2.3 min per fit",
            "skin_nonskin": "uncached K_ns, ~4.5 s per iteration: 300 iterations = 23 min per fit",
        }
    )
    #: Datasets that run fewer repeats for time (their Nyström-PCG fits cost minutes).
    reduced_repeats: dict = field(
        default_factory=lambda: {"cod-rna": 2, "connect-4": 2, "skin_nonskin": 1}
    )
    paper_p_skip: dict = field(
        default_factory=lambda: {
            "skin_nonskin": "uncached K_ns, ~4.5 s per iteration, ~200 iterations at 35k points"
        }
    )
    center_override: dict = field(default_factory=lambda: {"skin_nonskin": 3000})
    nystrom_budget: str = "4GB"
    low_memory_budget: dict = field(default_factory=lambda: {"skin_nonskin": "1GB"})
    exact_budget: str = "12GB"
    max_samples: int | None = None  # quick mode: subsample each dataset first
    speedup_dataset: str = "a9a"
    speedup_n: int = 20000
    speedup_direct_fits: int = 3
    figure_datasets: tuple = ("madelon", "space_ga", "abalone", "phishing")
    figure_proportions: tuple = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64)
    figure_direct_max_n: int = 4000  # LapRLS-direct in Figure 1 (7 fits per repeat) up to here
    figure_direct_s_max_n: int = 8000  # ... in Figure 2 (one fit per repeat) up to here
    figure_max_centers: int = 3000  # Figure 2: larger s (phishing at 64 %) skipped for time
    figure_repeats: int = 5


def quick_protocol() -> Protocol:
    """Tiny sizes for a smoke test (seconds, not minutes)."""
    return Protocol(
        repeats=1,
        cv_max_samples=300,
        gamma_factors=(1.0,),
        ambient_grid=(1e-4,),
        intrinsic_grid=(1.0, 10.0),
        cg_max_iter=50,
        max_samples=500,
        speedup_n=400,
        speedup_direct_fits=1,
        figure_proportions=(0.04, 0.16, 0.64),
        figure_repeats=1,
    )


def log(message: str) -> None:
    """Progress line on stderr."""
    print(f"[bench nystrom {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------- data
def load_data(name: str, protocol: Protocol, data_home=None):
    """Dense float64 (X, y) of a registered dataset (``download=False``: never downloads)."""
    from ..datasets import load_dataset

    X, y = load_dataset(name, data_home=data_home, download=False, dense=True)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if protocol.max_samples and X.shape[0] > protocol.max_samples:
        keep = np.random.default_rng(12345).choice(X.shape[0], protocol.max_samples, replace=False)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    return X, y


def minmax_scaler(X_train):
    """svm-scale to [-1, 1] fitted on ``X_train``; constant features map to 0."""
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = hi - lo
    const = span <= 0
    span = np.where(const, 1.0, span)

    def transform(A):
        Z = 2.0 * (A - lo) / span - 1.0
        Z[:, const] = 0.0
        return Z

    return transform


@dataclass
class Split:
    X_train: np.ndarray
    y_train: np.ndarray  # all training targets (for figures' other labeled proportions)
    y_observed: np.ndarray  # NaN = unlabeled
    X_test: np.ndarray
    y_test: np.ndarray
    order: np.ndarray  # a random permutation of the training rows (nested labeled sets)
    seed: int

    @property
    def n_train(self):
        return self.X_train.shape[0]

    def observed(self, n_labeled):
        """Targets with the first ``n_labeled`` rows of ``order`` labeled, NaN elsewhere."""
        y = np.full(self.n_train, np.nan)
        idx = self.order[:n_labeled]
        y[idx] = self.y_train[idx]
        return y


def prepare_split(X, y, seed: int, protocol: Protocol) -> Split:
    """Repeat ``seed``: 70/30 split, svm-scale on the training part, 10 % labeled."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    perm = rng.permutation(n)
    n_train = int(round(protocol.train_fraction * n))
    tr, te = perm[:n_train], perm[n_train:]
    transform = minmax_scaler(X[tr])
    order = rng.permutation(n_train)
    split = Split(transform(X[tr]), y[tr], None, transform(X[te]), y[te], order, seed)
    split.y_observed = split.observed(n_labeled(n_train, protocol))
    return split


def n_labeled(n_train, protocol, fraction=None):
    fraction = protocol.labeled_fraction if fraction is None else fraction
    return max(2, int(round(fraction * n_train)))


def n_centers(name, n_train, protocol, fraction=None):
    s = max(2, min(n_train, math.ceil((fraction or protocol.center_fraction) * n_train)))
    if fraction is None and name in protocol.center_override:
        return min(protocol.center_override[name], s)  # a cap (skin_nonskin: 3000)
    return s


def make_graph(protocol, seed=0):
    return KNNGraph(
        n_neighbors=protocol.n_neighbors,
        weights="heat",
        bandwidth=protocol.graph_bandwidth,
        random_state=seed,
    )


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


@dataclass
class Problem:
    """One repeat of the protocol on one dataset, ready to fit (for benchmark scripts)."""

    name: str
    split: Split
    laplacian: object
    n_centers: int


def repeat_problem(name: str, protocol: Protocol, seed: int = 0) -> Problem:
    """Repeat ``seed`` of ``name`` (a paper-000 name): split, graph Laplacian and s.

    What every repeat of :mod:`semiscale.bench.nystrom` builds, for the scripts in
    ``benchmarks/`` that measure one part of it; graph warnings (disconnected components)
    are silenced, the bench itself reports them.
    """
    X, y = load_data(paper000.DATASET_NAMES.get(name) or name, protocol)
    split = prepare_split(X, y, seed, protocol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        laplacian = make_graph(protocol, seed).fit(split.X_train).laplacian_
    return Problem(name, split, laplacian, n_centers(name, split.n_train, protocol))


def fit_nystrom_pcg(problem: Problem, params: dict, protocol: Protocol, **options):
    """Fit the bench's Nyström-PCG with LapRLS ``params`` (and ``set_params(**options)``).

    Returns the fitted estimator and the fit's wall seconds; warnings are silenced.
    """
    return _fit_method("Nyström-PCG", {"laprls": params}, problem, protocol, **options)


def fit_rls(problem: Problem, params: dict, protocol: Protocol):
    """Fit the bench's RLS-CG with RLS ``params`` (gamma, ambient_reg) on ``problem``.

    Returns the fitted estimator and the fit's wall seconds; warnings are silenced.
    """
    return _fit_method("RLS-CG", {"rls": params}, problem, protocol)


def _fit_method(method, params, problem, protocol, **options):
    est = build_estimator(
        method,
        params,
        name=problem.name,
        n_train=problem.split.n_train,
        s=problem.n_centers,
        seed=problem.split.seed,
        protocol=protocol,
    )
    est.set_params(**options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(problem.split.X_train, problem.split.y_observed, laplacian=problem.laplacian)
        seconds = time.perf_counter() - start
    return est, seconds


def write_jsonl(path, rows) -> None:
    """One JSON object per line (the benchmark scripts' raw results)."""
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


# ------------------------------------------------------------------------------- methods
def build_estimator(method, params, *, name, n_train, s, seed, protocol):
    """The estimator of ``method`` with the CV-chosen ``params``."""
    if method == "RLS-CG":  # needs only params["rls"]
        rls = params["rls"]
        return LapRLSRegressor(
            kernel=RBF(gamma=rls["gamma"]),
            ambient_reg=rls["ambient_reg"],
            intrinsic_reg=0.0,
            solver="cg",
            # K_ll (m x m) is dense: 2.2 GiB on skin_nonskin, so never the 1 GB low budget.
            memory_budget=protocol.nystrom_budget,
        )
    lap = params["laprls"]
    nys_budget = protocol.low_memory_budget.get(name, protocol.nystrom_budget)
    common = {
        "kernel": RBF(gamma=lap["gamma"]),
        "ambient_reg": lap["ambient_reg"],
        "intrinsic_reg": lap["intrinsic_reg"],
    }
    if method.startswith("LapRLS-"):
        solver = method.split("-")[1].lower()
        extra = {"max_iter": protocol.cg_max_iter} if solver == "cg" else {}
        return LapRLSRegressor(
            **common,
            solver=solver,
            memory_budget=protocol.exact_budget,
            random_state=seed,
            **extra,
        )
    nys = {
        "n_centers": s,
        "memory_budget": nys_budget,
        "random_state": seed,
        "graph": make_graph(protocol, seed),
    }
    if method == "Nyström-CG":
        return NystromLapRLSRegressor(**common, **nys, solver="cg", max_iter=protocol.cg_max_iter)
    if method == "Nyström-PCG":
        return NystromLapRLSRegressor(**common, **nys, solver="pcg", max_iter=protocol.pcg_max_iter)
    if method == "Nyström-PCG (uniform centers)":
        return NystromLapRLSRegressor(
            **common, **nys, labeled_centers=False, solver="pcg", max_iter=protocol.pcg_max_iter
        )
    if method == "Nyström-PCG (paper P)":
        return NystromLapRLSRegressor(
            **common, **nys, solver="pcg", preconditioner="paper", max_iter=protocol.cg_max_iter
        )
    raise ValueError(f"unknown method {method!r}")


def method_repeats(method, name, n_train, repeats, protocol):
    """(repeats this method runs on, reason when fewer than ``repeats`` or none)."""
    all_r = list(range(repeats))
    p = protocol
    if method in EXACT_METHODS:
        if n_train > p.exact_max_n:
            return [], (
                f"not run (n_train > {p.exact_max_n}: a dense n x n K is over 2 GB and the "
                'solve O(n³); the paper\'s "/" starts at cod-rna)'
            )
        if method == "LapRLS-direct":
            if n_train > p.exact_all_repeats_max_n:
                return all_r[:1], f"repeat 0 only (n_train > {p.exact_all_repeats_max_n}: time)"
            return all_r, None
        if method == "LapRLS-PCG" and n_train > p.exact_pcg_max_n:
            return [], (
                f"not run for time (n_train > {p.exact_pcg_max_n}: the sampled-Hessian "
                "preconditioner with s = n factors dense n x n matrices, ~120 s and 3.6 GB at "
                "n = 7.7k)"
            )
        if n_train > p.exact_cg_max_n:
            return [], f"not run for time (n_train > {p.exact_cg_max_n}: 300 O(n²) iterations)"
        if n_train > p.exact_cg_all_repeats_max_n:
            return all_r[:1], f"repeat 0 only (n_train > {p.exact_cg_all_repeats_max_n}: time)"
        return all_r, None
    if method == "Nyström-CG":
        if name in p.nystrom_cg_skip:
            return [], f"not run for time ({p.nystrom_cg_skip[name]})"
        if n_train > p.nystrom_cg_all_repeats_max_n:
            return all_r[:1], f"repeat 0 only (n_train > {p.nystrom_cg_all_repeats_max_n})"
    if method == "Nyström-PCG (uniform centers)":
        if n_labeled(n_train, p) > n_centers(name, n_train, p):
            return [], "not run (m > s: the labeled points are not made centers, as in Nyström-PCG)"
        if repeats > 1:
            return all_r[:1], "repeat 0 only (a reference, not in the paper's tables)"
    if method == "Nyström-PCG (paper P)":
        if name in p.paper_p_skip:
            return [], f"not run for time ({p.paper_p_skip[name]})"
        if repeats > 1:
            return all_r[:1], "repeat 0 only (a reference, not in the paper's tables)"
    return all_r, None


#: Fits faster than this (traced) are timed again without tracemalloc; slower ones are dominated
#: by BLAS work that tracemalloc does not slow.
RETIME_BELOW_SECONDS = 10.0


def fit_and_score(est, split, laplacian, y_observed=None):
    """Fit (measured) and score on the test split; returns a record."""
    y_obs = split.y_observed if y_observed is None else y_observed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with measure() as m:
            est.fit(split.X_train, y_obs, laplacian=laplacian)
    seconds, timed = m.seconds, "traced fit"
    if m.seconds < RETIME_BELOW_SECONDS:
        # tracemalloc's per-allocation cost doubled sub-second fits (madelon: 0.05 s traced,
        # 0.026 s untraced): time those again without it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with measure(trace_memory=False) as untraced:
                est.fit(split.X_train, y_obs, laplacian=laplacian)
        seconds, timed = untraced.seconds, "second, untraced fit"
    info = getattr(est, "solver_info_", {}) or {}
    res = getattr(est, "residuals_", None)
    history = [] if res is None else np.max(np.asarray(res).reshape(len(res), -1), axis=1)
    return {
        "rmse": rmse(est.predict(split.X_test), split.y_test),
        "iterations": int(est.n_iter_),
        "converged": bool(info.get("converged", True)),
        # The sampled-Hessian preconditioner's graph sample and the graph term's trace share.
        "laplacian_rows": info.get("laplacian_rows"),
        "graph_trace_share": info.get("graph_trace_share"),
        # Seconds of the timed fit's phases (Nyström estimators only; None elsewhere).
        "phase_seconds": {
            phase: info.get(f"{phase}_seconds")
            for phase in ("centers", "rhs", "preconditioner", "iterations")
        },
        "final_residual": float(history[-1]) if len(history) else None,
        "residuals": [float(f"{v:.3g}") for v in history],
        "fit_seconds": seconds,
        "fit_seconds_timed_on": timed,
        "peak_traced_bytes": int(m.peak_traced_bytes),
        "max_rss_bytes": int(m.max_rss_bytes),
        "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught}),
    }


# ------------------------------------------------------------------------------------ CV
def cross_validate(name, split, protocol):
    """Choose LapRLS (gamma, ambient_reg, intrinsic_reg) and RLS (gamma, ambient_reg) by CV.

    Uses repeat 0's training split only: a subsample of at most ``cv_max_samples`` points (its
    labeled points are repeat 0's), one graph, ``cv_folds`` folds over its labeled points.
    """
    from sklearn.model_selection import KFold

    start = time.perf_counter()
    rng = np.random.default_rng(1000 + split.seed)
    n_sub = min(
        split.n_train,
        protocol.cv_max_samples,
        protocol.cv_max_override.get(name, protocol.cv_max_samples),
    )
    sub = np.sort(rng.choice(split.n_train, n_sub, replace=False))
    X, y_obs = split.X_train[sub], split.y_observed[sub]
    labeled = np.flatnonzero(~np.isnan(y_obs))
    gamma_median = float(RBF(gamma="median").resolve(X, random_state=0).gamma)
    s_sub = n_centers("", n_sub, protocol)  # 10 % of the subsample (skin_nonskin too)
    folds = list(KFold(protocol.cv_folds, shuffle=True, random_state=0).split(labeled))
    budget = protocol.low_memory_budget.get(name, protocol.nystrom_budget)

    def graph(rows):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DisconnectedGraphWarning: recorded by the table run
            return make_graph(protocol).fit(X[rows]).laplacian_

    # Per fold, built once for the whole grid: (fit points, their targets, the Laplacian of the
    # fit points, held-out rows, their position among the fit points or None when inductive).
    fold_data = []
    if protocol.cv_inductive:
        for _, held in folds:
            keep = np.setdiff1d(np.arange(n_sub), labeled[held])
            fold_data.append((X[keep], y_obs[keep], graph(keep), labeled[held], None))
    else:
        L = graph(np.arange(n_sub))
        for _, held in folds:
            y_fit = y_obs.copy()
            y_fit[labeled[held]] = np.nan
            fold_data.append((X, y_fit, L, labeled[held], labeled[held]))

    def score(make):
        errors = []
        for X_fit, y_fit, laplacian, held, transductive in fold_data:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = make().fit(X_fit, y_fit, laplacian=laplacian)
            if transductive is None:
                predicted = est.predict(X[held])
            else:
                predicted = est.transduction_[transductive]
            errors.append(rmse(predicted, y_obs[held]))
        return float(np.mean(errors))

    def rls(gamma, ambient_reg):
        return LapRLSRegressor(
            kernel=RBF(gamma=gamma), ambient_reg=ambient_reg, intrinsic_reg=0.0, solver="cg"
        )

    def laprls(gamma, ambient_reg, intrinsic_reg):
        return NystromLapRLSRegressor(
            kernel=RBF(gamma=gamma),
            ambient_reg=ambient_reg,
            intrinsic_reg=intrinsic_reg,
            n_centers=s_sub,
            solver="pcg",
            memory_budget=budget,
            random_state=0,
        )

    models = {"laprls": laprls, "rls": rls}
    grid = {"laprls": [], "rls": []}

    def evaluate(model, stage, **params):
        err = score(lambda: models[model](**params))
        grid[model].append({**params, "cv_rmse": err, "stage": stage})

    for factor in protocol.gamma_factors:
        gamma = gamma_median * factor
        for a in protocol.ambient_grid:
            evaluate("rls", 1, gamma=gamma, ambient_reg=a)
            for i in protocol.intrinsic_grid:
                evaluate("laprls", 1, gamma=gamma, ambient_reg=a, intrinsic_reg=i)
    if protocol.cv_refine:
        # Stage 2: each regularization parameter, one at a time, at the geometric midpoints
        # between its best grid value and that value's grid neighbours (the same tuning for RLS
        # and LapRLS).
        for model, names in (
            ("rls", ("ambient_reg",)),
            ("laprls", ("intrinsic_reg", "ambient_reg")),
        ):
            for param in names:
                best = min(grid[model], key=lambda r: r["cv_rmse"])
                values = sorted(getattr(protocol, _GRIDS[param]))
                for value in _midpoints(values, best[param]):
                    point = {k: best[k] for k in best if k not in ("cv_rmse", "stage")}
                    evaluate(model, 2, **{**point, param: value})
    best = {k: min(v, key=lambda r: r["cv_rmse"]) for k, v in grid.items()}
    seconds = time.perf_counter() - start
    log(f"{name}: CV on {n_sub} points ({labeled.size} labeled, s={s_sub}) took {seconds:.1f} s")
    return {
        "params": {
            "laprls": {k: best["laprls"][k] for k in ("gamma", "ambient_reg", "intrinsic_reg")},
            "rls": {k: best["rls"][k] for k in ("gamma", "ambient_reg")},
        },
        "cv_rmse": {k: best[k]["cv_rmse"] for k in best},
        "gamma_median": gamma_median,
        "n_sub": n_sub,
        "n_labeled_sub": int(labeled.size),
        "s_sub": s_sub,
        "seconds": seconds,
        "grid": grid,
    }


_GRIDS = {"ambient_reg": "ambient_grid", "intrinsic_reg": "intrinsic_grid"}


def _midpoints(values, best):
    """Geometric midpoints between ``best`` and its neighbours in the sorted grid ``values``."""
    k = min(range(len(values)), key=lambda j: abs(math.log(values[j] / best)))
    return [math.sqrt(best * values[j]) for j in (k - 1, k + 1) if 0 <= j < len(values)]


def paper_equivalents(params, m, trace):
    """Paper 000's sigma, lambda_A, lambda_I (and RLS lambda) for our chosen parameters."""
    lap, rls = params["laprls"], params["rls"]
    lam_a, lam_i = to_paper000(lap["ambient_reg"], lap["intrinsic_reg"], m, trace)
    return {
        "laprls": {"sigma": sigma_from_gamma(lap["gamma"]), "lambda_A": lam_a, "lambda_I": lam_i},
        "rls": {"sigma": sigma_from_gamma(rls["gamma"]), "lambda": m * rls["ambient_reg"]},
        "laplacian_trace": trace,
        "n_labeled": m,
    }
