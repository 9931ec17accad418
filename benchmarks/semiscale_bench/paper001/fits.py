"""Paper 001's experiments: the validation search, Figure 1 (two moons), Figure 2 (digits).

Each fills the record store and skips what is recorded.  A fit record (:func:`fit_record`)
holds the test accuracy, the fit's seconds (graph excluded: the graph's are ``graph_seconds``),
the predictor's kernel expansions, the prediction's seconds on the test set, convergence and
the process's peak resident memory (``max_rss_bytes``; the fit's own when ``isolated``: a fresh
process per Figure 1 fit, :func:`fit_in_child`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import warnings
from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness import measured_fit
from semiscale_bench.harness.child import run_child
from semiscale_bench.harness.records import jsonable
from semiscale_bench.harness.runner import estimator_facts
from semiscale_bench.paper001.data import (
    digit_pool,
    digit_problem,
    labeled_rows,
    moons_problem,
    plan_sizes,
    validation_rows,
)
from semiscale_bench.paper001.methods import expansions
from semiscale_bench.paper001.protocol import MOONS, TUNED

__all__ = ["child", "fit_in_child", "fit_record", "run_digits", "run_moons", "run_validation"]

#: The knobs a Figure 1 child process needs (the rest of the protocol is the registered one).
CHILD_KNOBS = ("moons_noise", "moons_test", "moons_gamma", "moons_centers", "n_neighbors")
CHILD_KNOBS += ("slapcvm", "slapcvm_paper", "svm_C")
_CHILD = "from semiscale_bench.paper001.fits import child; child()"


def setting(u: int) -> str:
    return f"u={u}"


def fit_record(methods, protocol, method: str, problem, seed: int, tuned: dict) -> dict:
    """Fit ``method`` on ``problem`` (its graph given) and score it: the record's fields."""
    sizes = plan_sizes(protocol, problem.dataset, problem.u)
    params = {"fixed": {"n_edges": problem.n_edges}, "tuned": tuned}
    est = methods.build(
        method, params, sizes, protocol=protocol, dataset=problem.dataset, seed=seed
    )
    observed = problem.observed()
    rec = measured_fit(
        partial(est.fit, problem.X_train, observed, laplacian=problem.laplacian),
        trace_memory=False,
    )
    rec.update(problem.graph_facts(), labeled=problem.labeled)
    if "error" in rec:
        return jsonable(rec)
    start = time.perf_counter()
    predicted = est.predict(problem.X_test)
    facts = estimator_facts(est)
    rec.update(
        accuracy=float(np.mean(predicted == problem.y_test)),
        predict_seconds=time.perf_counter() - start,
        expansions=expansions(est),
        iterations=facts["iterations"],
        converged=bool(facts["converged"] and getattr(est, "converged_", True)),
        core_set=getattr(est, "core_set_size_", None),
    )
    rec["expansion_share"] = rec["expansions"] / problem.n_train
    return jsonable(rec)


def chosen_params(store, dataset: str) -> dict:
    """The (ambient_reg, intrinsic_reg) the validation chose per tuned method on ``dataset``."""
    record = store.get("validation", dataset, "search")
    if record is None:
        raise ValueError(f"{dataset} has no validation record: run the validation experiment")
    return record["params"]


def _datasets(protocol, ctx, figure: str | None = None) -> list[str]:
    names = [n for n in ctx.datasets if protocol.dataset(n).source is not None]
    return [n for n in names if figure is None or protocol.experiment_of(n) == figure]


def _problem(protocol, name, u, pool=None):
    if protocol.dataset(name).source == MOONS:
        return moons_problem(protocol, u, 0)
    problem = digit_problem(protocol, name, pool, u)
    problem.labeled = labeled_rows(protocol, name, problem.y_train, 0)
    return problem


def run_validation(bench, protocol, store, ctx) -> None:
    """Per dataset: the tuned methods' grid on repeat 0's labels at u = ``validation_size``."""
    names = [n for n in _datasets(protocol, ctx) if not store.done("validation", n, "search")]
    tuned = [m for m in TUNED if m in protocol.methods]
    grid = [(a, i) for a in protocol.ambient_grid for i in protocol.intrinsic_grid]
    with ctx.fits(total=len(names) * len(tuned) * len(grid)) as bar:
        for name in names:
            start = time.perf_counter()
            pool = (
                None
                if protocol.dataset(name).source == MOONS
                else digit_pool(protocol, name, ctx.data_home)
            )
            u = min(protocol.validation_size, max(protocol.sizes_of(name)))
            problem = _problem(protocol, name, u, pool)
            rows = validation_rows(problem, protocol.validation_per_class)
            scores, best = {}, {}
            for meth in tuned:
                scores[meth] = []
                for ambient, intrinsic in grid:
                    bar.set_postfix_str(f"{name}: {meth}", refresh=False)
                    params = {"ambient_reg": ambient, "intrinsic_reg": intrinsic}
                    sizes = plan_sizes(protocol, name, u)
                    est = bench.methods.build(
                        meth,
                        {"tuned": {meth: params}},
                        sizes,
                        protocol=protocol,
                        dataset=name,
                        seed=0,
                    )
                    with warnings.catch_warnings(), silenced():
                        warnings.simplefilter("ignore")
                        est.fit(problem.X_train, problem.observed(), laplacian=problem.laplacian)
                    acc = float(
                        np.mean(est.predict(problem.X_train[rows]) == problem.y_train[rows])
                    )
                    scores[meth].append({**params, "accuracy": acc})
                    bar.update()
                best[meth] = max(scores[meth], key=lambda s: s["accuracy"])  # first best
            params = {
                m: {k: b[k] for k in ("ambient_reg", "intrinsic_reg")} for m, b in best.items()
            }
            store.put(
                "validation",
                name,
                "search",
                params=params,
                grid=scores,
                u=u,
                validation_points=int(rows.size),
                seconds=time.perf_counter() - start,
            )
            ctx.log(f"validation {name} (u = {u}, {rows.size} points): {params}")


def _todo(protocol, store, name: str) -> list[tuple[int, int, str]]:
    """The (u, repeat, method) fits of ``name``'s figure not recorded yet, u by u."""
    experiment = protocol.experiment_of(name)
    return [
        (u, r, meth)
        for u in protocol.sizes_of(name)
        for r in range(protocol.repeats_for(name)[0])
        for meth in protocol.methods
        if r in protocol.plan(meth, name, plan_sizes(protocol, name, u))[0]
        and not store.done(experiment, name, meth, r, setting(u))
    ]


def _log(ctx, what: str, rec: dict) -> None:
    if "error" in rec:
        ctx.log(f"{what}: FAILED {rec['error']}")
        return
    ctx.log(
        f"{what}: {100 * rec['accuracy']:.2f} %, fit {rec['fit_seconds']:.2f} s + graph "
        f"{rec['graph_seconds']:.2f} s, {rec['expansions']} expansions"
        + ("" if rec["converged"] else " (NOT converged)")
    )


def child() -> None:
    """A Figure 1 child process: a spec (JSON) on stdin, its fit record (JSON) on stdout."""
    import resource

    from semiscale_bench.paper001.methods import METHODS
    from semiscale_bench.paper001.protocol import PROTOCOL

    spec = json.loads(sys.stdin.read())
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["knobs"].items()}
    protocol = dataclasses.replace(PROTOCOL, **knobs)
    problem = moons_problem(protocol, spec["u"], spec["repeat"])
    scale = 1 if sys.platform == "darwin" else 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    rec = fit_record(METHODS, protocol, spec["method"], problem, spec["repeat"], spec["tuned"])
    print(json.dumps({**rec, "max_rss_before_fit_bytes": before, "isolated": True}))


def fit_in_child(protocol, method: str, u: int, repeat: int, tuned: dict) -> dict:
    """:func:`fit_record` of a moons fit in a fresh Python process (a record with ``error`` if
    the process died, e.g. out of memory)."""
    knobs = jsonable(
        {
            k: dict(v) if hasattr(v, "items") else v
            for k, v in ((k, getattr(protocol, k)) for k in CHILD_KNOBS)
        }
    )
    spec = {"knobs": knobs, "method": method, "u": u, "repeat": repeat, "tuned": tuned}
    return run_child(_CHILD, spec)


def run_moons(bench, protocol, store, ctx) -> None:
    """Figure 1: every (u, repeat, method) of the moons not recorded yet."""
    for name in _datasets(protocol, ctx, "fig1"):
        tuned = chosen_params(store, name)
        todo = _todo(protocol, store, name)
        with ctx.fits(total=len(todo)) as bar:
            problem, key = None, None
            for u, r, meth in todo:
                bar.set_postfix_str(f"{meth}, u = {u}, repeat {r}", refresh=False)
                if protocol.isolate:
                    rec = fit_in_child(protocol, meth, u, r, tuned)
                else:
                    if key != (u, r):  # one problem (and graph) per (u, repeat)
                        problem, key = moons_problem(protocol, u, r), (u, r)
                    rec = {
                        **fit_record(bench.methods, protocol, meth, problem, r, tuned),
                        "isolated": False,
                    }
                store.put("fig1", name, meth, r, setting(u), u=u, **rec)
                bar.update()
                _log(ctx, f"fig1 {meth} u = {u} repeat {r}", rec)


def run_digits(bench, protocol, store, ctx) -> None:
    """Figure 2: per digit dataset and u, one graph; every (repeat, method) not recorded yet."""
    work = {name: _todo(protocol, store, name) for name in _datasets(protocol, ctx, "fig2")}
    with ctx.fits(total=sum(map(len, work.values()))) as bar:
        for name, todo in work.items():
            if not todo:
                continue
            tuned = chosen_params(store, name)
            bar.set_postfix_str(f"{name}: data", refresh=False)
            pool = digit_pool(protocol, name, ctx.data_home)
            for u in dict.fromkeys(u for u, _, _ in todo):
                bar.set_postfix_str(f"{name}: graph, u = {u}", refresh=False)
                problem = digit_problem(protocol, name, pool, u)
                for _, r, meth in (t for t in todo if t[0] == u):
                    problem.labeled = labeled_rows(protocol, name, problem.y_train, r)
                    bar.set_postfix_str(f"{name}: {meth}, u = {u}, repeat {r}", refresh=False)
                    rec = fit_record(bench.methods, protocol, meth, problem, r, tuned)
                    store.put("fig2", name, meth, r, setting(u), u=u, isolated=False, **rec)
                    bar.update()
                    _log(ctx, f"fig2 {name} {meth} u = {u} repeat {r}", rec)
