"""Paper 003, Figure 2: SoCK's AUC against its fit time as T grows, NysCK and ClusK as points.

Per set (splice; kr-vs-kp's stand-in) and repeat r: 10 % of the rows labeled (stratified, seed
r); SoCK (``n_iter`` = T for each T of the protocol), NysCK and ClusK, each inside
:class:`~semiscale.models.StorageFitClassifier` with its default linear SVM, at the library's
default RBF width (the paper gives no width for this figure), fitted in this process.  A record
per (set, method, T, repeat): the AUC on the unlabeled rows, the fit's seconds (transformer and
SVM), the fitted sizes.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.metrics import roc_auc_score

from semiscale._progress import silenced
from semiscale_bench.paper003.data import draw_labeled, load_set, observed, scores
from semiscale_bench.paper003.facts import fitted_sizes, load_average
from semiscale_bench.paper003.methods import storage_fit_classifier, transformer

__all__ = ["points", "run_sock_curve"]


def points(protocol):
    """(method, setting, transformer parameters) of every point of one curve."""
    out = [("SoCK", f"T={t}", {"n_iter": t}) for t in protocol.sock_iterations]
    return out + [("NysCK", "", {}), ("ClusK", "", {})]


def run_sock_curve(bench, protocol, store, ctx) -> None:
    """Every Figure 2 point not recorded yet, recorded."""
    names = [n for n in protocol.curve_sets if n in ctx.datasets]
    todo = [
        (name, r, m, s, p)
        for name in names
        for r in range(protocol.curve_repeats)
        for m, s, p in points(protocol)
        if not store.done("sock_curve", name, m, r, s)
    ]
    loaded = {}
    with ctx.fits(total=len(todo)) as bar:
        for name, r, method, setting, params in todo:
            if name not in loaded:
                loaded.clear()
                loaded[name] = load_set(protocol, name, ctx.data_home)
            X, y = loaded[name]
            labeled = draw_labeled(y, None, r, fraction=protocol.labeled_fraction)
            unlabeled = np.setdiff1d(np.arange(y.size), labeled)
            bar.set_postfix_str(f"{name}: {method} {setting}, repeat {r}", refresh=False)
            try:
                est = storage_fit_classifier(transformer=transformer(method, None, r, **params))
                with silenced(), warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    tic = time.perf_counter()
                    est.fit(X, observed(y, labeled))
                    seconds = time.perf_counter() - tic
                    auc = float(roc_auc_score(y[unlabeled], scores(est, X, unlabeled)))
            except Exception as exc:  # recorded, the run goes on
                store.put(
                    "sock_curve", name, method, r, setting, error=f"{type(exc).__name__}: {exc}"
                )
                bar.update()
                continue
            store.put(
                "sock_curve",
                name,
                method,
                r,
                setting,
                auc=auc,
                fit_seconds=seconds,
                n=int(y.size),
                d=int(X.shape[1]),
                n_labeled=int(labeled.size),
                sizes=fitted_sizes(est),
                warnings=sorted({str(w.message)[:160] for w in caught}),
                load=load_average(),
                **params,
            )
            ctx.log(
                f"sock_curve {name} {method} {setting} repeat {r}: AUC {auc:.3f}, {seconds:.2f} s"
            )
            bar.update()
