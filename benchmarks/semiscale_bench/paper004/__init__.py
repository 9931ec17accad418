"""Paper 004 (approximate CV by the Bouligand influence function) reproduced: Tables 1-2.

``semiscale-bench paper004`` runs one experiment, ``select``, into
``./semiscale-bench/paper004/`` (the committed run: ``--out benchmarks/results/paper004``): per
dataset, repeat and t, :class:`~semiscale.model_selection.BIFSearchCV` chooses the
hyper-parameters with exact t-fold CV (method ``"CV"``) and with t-BIF (``"BIF"``) on the same
split, labels and folds (:mod:`.protocol`), and records the search's seconds, the chosen point
and the chosen model's test error.  :mod:`.report` renders ``table1.md`` (test errors, paired
t-test), ``table2.md`` (run times) and ``summary.md`` (the issue's targets as PASS/FAIL lines),
the paper's numbers (:mod:`.paper`) beside ours.
"""

from __future__ import annotations

import time

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness import Benchmark, MethodRegistry, load_dense, make_split
from semiscale_bench.harness.data import standard_scaler
from semiscale_bench.paper004.protocol import PROTOCOL, QUICK
from semiscale_bench.paper004.report import render

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]

METHODS = MethodRegistry()


def _estimator(protocol, kind: str, seed: int):
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSRegressor, LapSVC

    common = {
        "kernel": RBF(gamma=1.0),
        "graph": KNNGraph(
            n_neighbors=protocol.n_neighbors,
            weights="heat",
            bandwidth="mean",  # the graph of the recorded runs (KNNGraph's default before)
            symmetrize="union",
            random_state=seed,
        ),
        "ambient_reg": protocol.ambient_reg,
    }
    if kind == "classification":
        return LapSVC(
            formulation="primal",
            loss="huber_hinge",
            huber_width=protocol.huber_width,
            out_of_sample="kernel",  # paper 004's predictor: the kernel expansion
            **common,
        )
    return LapRLSRegressor(**common)


def _grid(protocol) -> dict:
    """The protocol's grid in estimator parameters (sigma -> RBF gamma = 1 / (2 sigma))."""
    return {
        "kernel__gamma": [1.0 / (2.0 * s) for s in protocol.grid["sigma"]],
        "intrinsic_reg": list(protocol.grid["intrinsic_reg"]),
    }


def _search(params, sizes, *, protocol, dataset, seed, method):
    from semiscale.model_selection import BIFSearchCV, SSLKFold

    kind = protocol.estimator_kind(dataset)
    return BIFSearchCV(
        _estimator(protocol, kind, seed),
        _grid(protocol),
        cv=SSLKFold(params["t"], transductive=False, random_state=seed),
        method=method,
        hessian=protocol.hessian,
        step=protocol.step,
        n_columns=protocol.n_columns,
        scoring=None if kind == "classification" else "neg_mean_squared_error",
        random_state=seed,
    )


@METHODS.register("CV", params="select", description="exact t-fold CV: t fits per grid point")
def _cv(params, sizes, *, protocol, dataset, seed):
    return _search(params, sizes, protocol=protocol, dataset=dataset, seed=seed, method="exact")


@METHODS.register(
    "BIF", params="select", description="t-BIF (paper 004 eq. 6): one fit per grid point"
)
def _bif(params, sizes, *, protocol, dataset, seed):
    return _search(params, sizes, protocol=protocol, dataset=dataset, seed=seed, method="bif")


def _data(protocol, name, seed, data_home):
    """Standardized split of repeat ``seed``; classes coded 0/1, unlabeled -1 or NaN."""
    source = protocol.dataset(name).source
    X, y = load_dense(source, protocol.max_samples, data_home)
    classification = protocol.estimator_kind(name) == "classification"
    if classification:
        y = (y == y.max()).astype(np.float64)
    split = make_split(
        X, y, seed, protocol.train_fraction, protocol.labeled_fraction, scaler=standard_scaler
    )
    observed = split.y_observed
    if classification:
        observed = np.where(np.isnan(observed), -1, observed).astype(np.int64)
    else:  # targets standardized on the labeled training points (the paper does not say)
        labeled = ~np.isnan(observed)
        mean, std = observed[labeled].mean(), observed[labeled].std() or 1.0
        observed = (observed - mean) / std
        split.y_test = (split.y_test - mean) / std
    return split, observed, classification


def chosen_test_error(search, split, classification: bool) -> float:
    """The chosen model's test error: % misclassified, or the MSE (Table 1's measures)."""
    pred = search.predict(split.X_test)
    if classification:
        return 100.0 * float(np.mean(pred != split.y_test))
    return float(np.mean((pred - split.y_test) ** 2))


def run_select(bench, protocol, store, ctx) -> None:
    """Every (dataset, repeat, t, criterion) not yet recorded, recorded."""
    names = [n for n in ctx.datasets if protocol.dataset(n).source is not None]
    todo = []
    for name in names:
        for t in protocol.folds:
            for meth in protocol.methods:
                for r in range(protocol.repeats_for(name)[0]):
                    if not store.done("select", name, meth, r, f"t={t}"):
                        todo.append((name, r, t, meth))
    with ctx.fits(total=len(todo)) as bar:
        loaded = {}
        for name, r, t, meth in todo:
            sizes_known = store.get("select", name, "sizes")
            key = (name, r)
            if key not in loaded:
                loaded.clear()
                loaded[key] = _data(protocol, name, r, ctx.data_home)
            split, observed, classification = loaded[key]
            if sizes_known is None:
                store.put("select", name, "sizes", n_train=split.n_train, d=split.X_train.shape[1])
            planned = protocol.plan(meth, name, protocol.sizes(name, split.n_train, 1))[0]
            if r not in planned:
                bar.update()
                continue
            bar.set_postfix_str(f"{name}: {t}-{meth}, repeat {r}", refresh=False)
            search = bench.methods.build(
                meth, {"select": {"t": t}}, None, protocol=protocol, dataset=name, seed=r
            )
            tic = time.perf_counter()
            try:
                with silenced():
                    search.fit(split.X_train, observed)
            except Exception as exc:  # recorded, the run goes on
                store.put("select", name, meth, r, f"t={t}", error=f"{type(exc).__name__}: {exc}")
                bar.update()
                continue
            seconds = time.perf_counter() - tic
            error = chosen_test_error(search, split, classification)
            best = {k: float(v) for k, v in search.best_params_.items()}
            n_labeled = int(
                np.sum(observed >= 0) if classification else np.sum(~np.isnan(observed))
            )
            store.put(
                "select",
                name,
                meth,
                r,
                f"t={t}",
                seconds=seconds,
                test_error=error,
                best_params=best,
                best_score=float(search.best_score_),
                mean_scores=[float(v) for v in search.cv_results_["mean_test_score"]],
                n_labeled=n_labeled,
            )
            ctx.log(f"{name} repeat {r}: {t}-{meth} error {error:.4g}, {seconds:.1f} s, {best}")
            bar.update()


BENCHMARK = Benchmark(
    name="paper004",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(("select", run_select),),
    render=render,
    results="benchmarks/results/paper004",
)
