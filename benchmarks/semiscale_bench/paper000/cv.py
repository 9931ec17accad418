"""Paper 000's hyper-parameters: semi-supervised CV on repeat 0's training split.

LapRLS (gamma, ambient_reg, intrinsic_reg) is chosen with Nyström-PCG as the CV model, RLS
(gamma, ambient_reg) with RLS itself, on a random subsample of at most ``cv_max_samples``
training points (its labeled points are repeat 0's; s = 10 % of it, no cap) with its own graph,
by :func:`~semiscale_bench.harness.search.refined_search` over :class:`SSLKFold` folds of its
labeled points, scored by RMSE.  The result is the dataset's CV record: every method reads its
parameters from it.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale.kernels import RBF
from semiscale.models import LapRLSRegressor, NystromLapRLSRegressor
from semiscale_bench.harness.search import refined_search
from semiscale_bench.paper000.methods import make_graph

#: Parameters refined at the second stage, in order (the same tuning for RLS and LapRLS).
REFINE = {"laprls": ("intrinsic_reg", "ambient_reg"), "rls": ("ambient_reg",)}


def choose(protocol, dataset, split, sizes, store=None) -> dict:
    """The CV record of ``dataset`` (see the module docstring)."""
    from semiscale.model_selection import SSLKFold

    start = time.perf_counter()
    rng = np.random.default_rng(1000 + split.seed)
    cap = protocol.cv_max_override.get(dataset, protocol.cv_max_samples)
    n_sub = min(split.n_train, protocol.cv_max_samples, cap)
    sub = np.sort(rng.choice(split.n_train, n_sub, replace=False))
    X, y = split.X_train[sub], split.y_observed[sub]
    gamma_median = float(RBF(gamma="median").resolve(X, random_state=0).gamma)
    s_sub = protocol.centers("", n_sub)
    budget = protocol.low_memory_budget.get(dataset, protocol.nystrom_budget)
    kernel = RBF(gamma=gamma_median)
    regs = {"ambient_reg": list(protocol.ambient_grid)}
    models = {
        "laprls": (
            NystromLapRLSRegressor(
                kernel=kernel, n_centers=s_sub, memory_budget=budget, random_state=0
            ),
            {**regs, "intrinsic_reg": list(protocol.intrinsic_grid)},
        ),
        "rls": (LapRLSRegressor(kernel=kernel, intrinsic_reg=0.0, solver="cg"), regs),
    }
    cv = SSLKFold(protocol.cv_folds, transductive=not protocol.cv_inductive, random_state=0)
    laplacian, graph_fits = None, 0
    if not protocol.cv_inductive:  # one graph for every fold and search (inductive: per fold)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            laplacian, graph_fits = make_graph(protocol).fit(X).laplacian_, 1
    grid, best = {}, {}
    for model, (estimator, params) in models.items():
        gammas = {"kernel__gamma": [gamma_median * f for f in protocol.gamma_factors]}
        rows, fits = refined_search(
            estimator.set_params(graph=make_graph(protocol)),
            {**gammas, **params},
            refine=REFINE[model] if protocol.cv_refine else (),
            cv=cv,
            X=X,
            y=y,
            scoring="neg_root_mean_squared_error",
            laplacian=laplacian,
        )
        graph_fits += fits
        grid[model] = [
            {k.replace("kernel__", ""): v for k, v in r.items() if k != "score"}
            | {"cv_rmse": -r["score"]}
            for r in rows
        ]
        best[model] = min(grid[model], key=lambda r: r["cv_rmse"])
    return {
        "params": {
            m: {k: v for k, v in b.items() if k not in ("cv_rmse", "stage")}
            for m, b in best.items()
        },
        "cv_rmse": {m: b["cv_rmse"] for m, b in best.items()},
        "gamma_median": gamma_median,
        "n_sub": n_sub,
        "n_labeled_sub": int(np.isfinite(y).sum()),
        "s_sub": s_sub,
        "n_graph_fits": graph_fits,
        "seconds": time.perf_counter() - start,
        "grid": grid,
    }
