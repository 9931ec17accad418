"""A speed-up claim: a reference method against a fast one on one larger problem.

The problem is the first ``n_rows`` rows of repeat 0's training split of ``dataset`` (a
uniform random subsample: the split is a random permutation), with the protocol's labeled and
center shares, one graph passed to both methods, in one process.  Each method is fitted
``fits`` times (median), first with every BLAS thread, then with one: a direct solve is one
large factorization that uses every core, an iterative solver mixes BLAS-3 with memory-bound
and Python work, so the ratio depends on the threads.  Parameters: the dataset's CV record.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness.data import Split, load_dense, make_split
from semiscale_bench.harness.protocol import Sizes, n_labeled
from semiscale_bench.harness.report import MIB, header, md_table
from semiscale_bench.harness.runner import chosen_params, estimator_facts, measured_fit

__all__ = ["THREADS", "Speedup", "render_speedup", "run_speedup"]

THREADS = {"all BLAS threads": None, "1 BLAS thread": 1}


@dataclass(frozen=True)
class Speedup:
    """``reference``'s median fit time over ``fast``'s must reach ``target``."""

    dataset: str
    n_rows: int
    reference: str
    fast: str
    fits: int
    target: float

    @property
    def methods(self):
        return (self.reference, self.fast)


def _problem(protocol, spec, data_home):
    X, y = load_dense(protocol.dataset(spec.dataset).source, protocol.max_samples, data_home)
    split = make_split(X, y, 0, protocol.train_fraction, protocol.labeled_fraction)
    n = min(spec.n_rows, split.n_train)
    order = np.random.default_rng(0).permutation(n)
    sub = Split(split.X_train[:n], split.y_train[:n], split.X_test, split.y_test, order, 0)
    m = n_labeled(n, protocol.labeled_fraction)
    sub.y_observed = sub.observed(m)
    # the protocol's center share without a dataset cap: "m = s = 10 %" of the subsample
    return sub, Sizes(n + len(split.y_test), X.shape[1], n, m, protocol.centers("", n))


def run_speedup(bench, protocol, store, ctx) -> None:
    """Record every (threads, method, fit) not yet recorded (only when its dataset is run).

    Progress: a bar over the fits (recorded ones counted as done).
    """
    from threadpoolctl import threadpool_limits

    spec = protocol.speedup
    keys = [(t, m, k) for t in THREADS for m in spec.methods for k in range(spec.fits)]
    todo = [key for key in keys if not store.done("speedup", spec.dataset, key[1], key[2], key[0])]
    if spec.dataset not in ctx.datasets or not todo:
        return
    chosen = chosen_params(store, spec.dataset, "the speed-up")
    with ctx.fits(len(keys), len(keys) - len(todo)) as bar:
        bar.set_postfix_str(f"{spec.dataset}: data and graph", refresh=False)
        sub, sizes = _problem(protocol, spec, ctx.data_home)
        with warnings.catch_warnings(), silenced():
            warnings.simplefilter("ignore")
            laplacian = bench.table.graph(protocol, 0).fit(sub.X_train).laplacian_
        ctx.log(f"speed-up: {spec.dataset} {sizes}")
        for threads, meth, k in todo:
            bar.set_postfix_str(f"{spec.dataset}: {meth}, {threads}, fit {k}", refresh=False)
            with threadpool_limits(limits=THREADS[threads], user_api="blas"):
                est = bench.methods.build(
                    meth, chosen, sizes, protocol=protocol, dataset=spec.dataset, seed=0
                )
                fit = partial(est.fit, sub.X_train, sub.y_observed, laplacian=laplacian)
                rec = measured_fit(fit)
            if "error" not in rec:
                rec.update(bench.table.score(est, sub), **estimator_facts(est))
            params = chosen[bench.methods[meth].params]
            store.put(
                "speedup",
                spec.dataset,
                meth,
                k,
                threads,
                sizes=sizes.__dict__,
                params=params,
                **rec,
            )
            bar.update()
            seconds = rec.get("fit_seconds", np.nan)
            ctx.log(f"speed-up ({threads}): {meth} fit {k}: {seconds:.2f} s")


def render_speedup(protocol, store, metric: str) -> list[str] | None:
    """The speed-up report from its records, or None when there are none."""
    spec, recs = protocol.speedup, store.select("speedup")
    if not recs:
        return None
    size = recs[0]["sizes"]
    lines = header(f"{spec.reference} vs {spec.fast}: speed-up", protocol, store.runs())
    lines += [
        f"Data: {spec.dataset}, the first {size['n_train']} rows of the repeat-0 training split "
        f"(d = {size['d']}, m = {size['m']}, s = {size['s']}); test: the repeat-0 test split "
        f"({size['n'] - size['n_train']} rows). One graph for both methods, in one process; "
        f"parameters from the CV record of {spec.dataset}: "
        + "; ".join(
            f"{m} {next(r['params'] for r in recs if r['method'] == m)}" for m in spec.methods
        ),
        "",
    ]
    rows, verdicts = [], []
    for threads in THREADS:
        medians = {}
        for meth in spec.methods:
            ok = [
                r
                for r in recs
                if r["setting"] == threads and r["method"] == meth and "error" not in r
            ]
            if ok:
                times = [r["fit_seconds"] for r in ok]
                medians[meth] = float(np.median(times))
                rows.append(
                    [threads, meth, f"{medians[meth]:.2f} ({', '.join(f'{t:.2f}' for t in times)})"]
                    + [ok[0]["iterations"], f"{ok[0][metric]:.4f}"]
                    + [f"{ok[0]['peak_traced_bytes'] / MIB:.1f}"]
                )
        if len(medians) == 2:
            ratio = medians[spec.reference] / medians[spec.fast]
            verdict = "PASS" if ratio >= spec.target else "FAIL"
            verdicts.append(
                f"Speed-up with {threads}: **{ratio:.1f}×** "
                f"(target ≥ {spec.target:g}×: **{verdict}**)."
            )
    cols = ["BLAS threads", "method", "fit s (median; all fits)", "iterations", f"test {metric}"]
    return lines + md_table(cols + ["peak traced MiB"], rows) + [""] + verdicts
