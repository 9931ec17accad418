"""The inductive experiment: fit on a training pool, ``predict`` the held-out points.

Per dataset one seeded permutation splits the points into a pool (:attr:`inductive_pool` of
them) and held-out test points; on trial t with k labels per class the labels are drawn in the
pool by the transductive rule (:func:`~semiscale_bench.few_labels.draw_labels`), each method is
fitted on the pool alone, semiscale's estimators building their own default graph inside
``fit`` (its seconds are in the fit's and recorded apart from ``timings_["graph"]``), and the
accuracy is that of ``predict`` on the held-out points.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.few_labels.data import draw_labels, load, log_fit, setting
from semiscale_bench.harness import measured_fit
from semiscale_bench.harness.runner import estimator_facts

__all__ = ["pool_split", "run_inductive"]


def pool_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of the training pool (``round(fraction * n)`` points) and the rest."""
    perm = np.random.default_rng(seed).permutation(n)
    n_pool = int(round(fraction * n))
    return np.sort(perm[:n_pool]), np.sort(perm[n_pool:])


def _todo(protocol, store, name) -> list[tuple[int, int, str]]:
    return [
        (t, k, meth)
        for t in range(protocol.repeats_for(name)[0])
        for k in protocol.per_class
        for meth in protocol.inductive_methods
        if not store.done("inductive", name, meth, t, setting(k))
    ]


def held_out_record(est, fit, X_test, y_test) -> dict:
    """The record of ``fit()`` (graph seconds apart) and of ``est.predict(X_test)``'s accuracy."""
    with silenced():
        rec = measured_fit(fit, trace_memory=False)
    if "error" in rec:
        return rec
    rec["graph_seconds"] = getattr(est, "timings_", {}).get("graph")
    tic = time.perf_counter()
    try:
        with silenced():
            predicted = est.predict(X_test)
    except Exception as exc:  # recorded, and the run goes on
        return {**rec, "error": f"predict: {type(exc).__name__}: {exc}"}
    rec["predict_seconds"] = time.perf_counter() - tic
    rec["accuracy"] = float(np.mean(predicted == y_test))
    facts = estimator_facts(est)
    facts.pop("residuals")
    return {**rec, **facts}


def run_inductive(bench, protocol, store, ctx) -> None:
    """Every (dataset, trial, labels per class, method) of the inductive experiment, recorded."""
    from semiscale_bench.harness import Sizes

    names = [n for n in ctx.datasets if n in protocol.inductive_datasets]
    with ctx.fits(total=0) as bar:
        for name in names:
            todo = _todo(protocol, store, name)
            bar.total += len(todo)
            bar.refresh()
            if not todo:
                continue
            X, y = load(protocol, name, ctx.data_home)
            pool, test = pool_split(X.shape[0], protocol.inductive_pool, protocol.inductive_seed)
            store.put("inductive", name, "sizes", n_pool=pool.size, n_test=test.size, d=X.shape[1])
            X_pool, y_pool, X_test, y_test = X[pool], y[pool], X[test], y[test]
            sizes = Sizes(X.shape[0], X.shape[1], pool.size, int(np.unique(y).size))
            ctx.log(f"{name}: inductive, pool {pool.size}, held out {test.size}")
            for t, k, meth in todo:
                bar.set_postfix_str(f"{name}: {meth}, {setting(k)}, trial {t}", refresh=False)
                observed = draw_labels(y_pool, k, t)
                est = bench.methods.build(
                    meth, {"defaults": {}}, sizes, protocol=protocol, dataset=name, seed=t
                )
                fit = partial(est.fit, X_pool, observed)
                rec = held_out_record(est, fit, X_test, y_test)
                store.put("inductive", name, meth, t, setting(k), **rec)
                bar.update()
                log_fit(ctx, f"{name}: inductive {meth} {setting(k)} trial {t}", rec)
