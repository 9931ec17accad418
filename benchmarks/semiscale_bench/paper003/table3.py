"""Paper 003, Table 3: AUC on the unlabeled rows with 10 % labeled, parameters by 5-fold CV.

Per shared set and repeat r: the labeled rows are a stratified 10 % draw (seed r); the labeled
rows are split into ``cv_folds`` stratified folds (seed r); every method's grid point is scored
by its mean AUC over the folds, each fold's labels hidden from the fit (transductive CV) or, for
the supervised SVC that chooses TSVM's gamma and C, left out of it.  The best point is fitted on
all rows with every label and scored by the AUC of its values on the unlabeled rows
(:func:`~.data.scores`).  A record per (set, method, repeat): the AUC, the CV's AUC and choice,
the seconds of the search and of the final fit, and the fitted sizes (k, h, s, ...).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from semiscale._progress import silenced
from semiscale_bench.paper003.data import draw_labeled, load_set, observed, scores
from semiscale_bench.paper003.facts import fitted_sizes, load_average
from semiscale_bench.paper003.methods import (
    FAMILIES,
    grid,
    linear_svm,
    median_gamma,
    transformer,
)
from semiscale_bench.paper003.protocol import TABLE3_METHODS

__all__ = ["choose", "fit_and_score", "run_table3"]


def _folds(y_lab, k: int, seed: int):
    return list(
        StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(y_lab.size), y_lab)
    )


def _auc(y_true, values) -> float:
    return float(roc_auc_score(y_true, values))


def _cv_features(method, protocol, X, y, labeled, points, seed):
    """Per gamma one transformer fit on all rows; the linear SVM's C by CV on its labeled F."""
    y_obs = observed(y, labeled)
    folds = _folds(y[labeled], protocol.cv_folds, seed)
    results = []
    for gamma in sorted({p["gamma"] for p in points}):
        extra = {"n_iter": protocol.sock_n_iter} if method == "SoCK" else {}
        F = transformer(method, gamma, seed, **extra).fit_transform(X, y_obs)[labeled]
        for p in (p for p in points if p["gamma"] == gamma):
            aucs = []
            for tr, te in folds:
                svm = linear_svm(p["C"]).fit(F[tr], y[labeled][tr])
                aucs.append(_auc(y[labeled][te], svm.decision_function(F[te])))
            results.append((float(np.mean(aucs)), p))
    return results


def _cv_supervised(protocol, X, y, labeled, points, seed):
    """gamma and C of TSVM by CV of scikit-learn's SVC on the labeled rows alone."""
    from sklearn.svm import SVC

    folds = _folds(y[labeled], protocol.cv_folds, seed)
    Xl, yl = X[labeled], y[labeled]
    results = []
    for p in points:
        aucs = []
        for tr, te in folds:
            svc = SVC(kernel="rbf", gamma=p["gamma"], C=p["C"]).fit(Xl[tr], yl[tr])
            aucs.append(_auc(yl[te], svc.decision_function(Xl[te])))
        results.append((float(np.mean(aucs)), p))
    return results


def _cv_transductive(bench, method, protocol, name, X, y, labeled, points, seed):
    """Each point fitted on all rows once per fold, that fold's labels hidden, scored there."""
    folds = _folds(y[labeled], protocol.cv_folds, seed)
    results = []
    for p in points:
        aucs = []
        for tr, te in folds:
            y_fold = observed(y, labeled[tr])
            est = bench.methods.build(
                method, {FAMILIES[method]: p}, None, protocol=protocol, dataset=name, seed=seed
            )
            est.fit(X, y_fold)
            aucs.append(_auc(y[labeled[te]], scores(est, X, labeled[te])))
        results.append((float(np.mean(aucs)), p))
    return results


def choose(bench, method, protocol, name, X, y, labeled, seed, gamma0):
    """The CV's best point of ``method``'s grid, its CV AUC and every point's (or None, None)."""
    points = grid(protocol, method, gamma0)
    family = FAMILIES[method]
    if family == "none":
        return points[0], None, []
    if family == "features":
        results = _cv_features(method, protocol, X, y, labeled, points, seed)
    elif family == "supervised":
        results = _cv_supervised(protocol, X, y, labeled, points, seed)
    else:
        results = _cv_transductive(bench, method, protocol, name, X, y, labeled, points, seed)
    best = max(range(len(results)), key=lambda i: results[i][0])  # first of equals: grid order
    return results[best][1], results[best][0], results


def fit_and_score(bench, method, protocol, name, X, y, labeled, seed, params):
    """The chosen point fitted on all rows: (AUC on the unlabeled rows, seconds, estimator)."""
    est = bench.methods.build(
        method, {FAMILIES[method]: params}, None, protocol=protocol, dataset=name, seed=seed
    )
    tic = time.perf_counter()
    est.fit(X, observed(y, labeled))
    seconds = time.perf_counter() - tic
    unlabeled = np.setdiff1d(np.arange(y.size), labeled)
    return _auc(y[unlabeled], scores(est, X, unlabeled)), seconds, est


def _todo(protocol, store, names):
    methods = [m for m in TABLE3_METHODS if m in protocol.methods]
    return [
        (name, r, m)
        for name in names
        for r in range(protocol.repeats_for(name)[0])
        for m in methods
        if not store.done("table3", name, m, r)
    ]


def run_table3(bench, protocol, store, ctx) -> None:
    """Every (set, repeat, method) of Table 3 not recorded yet, recorded."""
    names = [n for n in protocol.table3() if n in ctx.datasets]
    todo = _todo(protocol, store, names)
    loaded = {}
    with ctx.fits(total=len(todo)) as bar:
        for name, r, method in todo:
            if name not in loaded:
                loaded.clear()
                X, y = load_set(protocol, name, ctx.data_home)
                loaded[name] = (X, y, median_gamma(X))
            X, y, gamma0 = loaded[name]
            labeled = draw_labeled(y, None, r, fraction=protocol.labeled_fraction)
            bar.set_postfix_str(f"{name}: {method}, repeat {r}", refresh=False)
            try:
                with silenced(), warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    tic = time.perf_counter()
                    params, cv_auc, results = choose(
                        bench, method, protocol, name, X, y, labeled, r, gamma0
                    )
                    cv_seconds = time.perf_counter() - tic
                    auc, seconds, est = fit_and_score(
                        bench, method, protocol, name, X, y, labeled, r, params
                    )
            except Exception as exc:  # recorded, the run goes on
                store.put("table3", name, method, r, error=f"{type(exc).__name__}: {exc}")
                ctx.log(f"table3 {name} {method} repeat {r}: FAILED {type(exc).__name__}: {exc}")
                bar.update()
                continue
            store.put(
                "table3",
                name,
                method,
                r,
                auc=auc,
                cv_auc=cv_auc,
                params=params,
                gamma0=gamma0,
                cv_points=[{"cv_auc": a, **p} for a, p in results],
                cv_seconds=cv_seconds,
                fit_seconds=seconds,
                n=int(y.size),
                d=int(X.shape[1]),
                n_labeled=int(labeled.size),
                sizes=fitted_sizes(est),
                warnings=sorted({str(w.message)[:160] for w in caught}),
                load=load_average(),
            )
            ctx.log(
                f"table3 {name} {method} repeat {r}: AUC {auc:.3f} (CV {cv_auc or 0:.3f}), "
                f"{params}, CV {cv_seconds:.1f} s + fit {seconds:.2f} s"
            )
            bar.update()
