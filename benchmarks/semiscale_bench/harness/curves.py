"""Size curves: every method fitted on a series of training sets of growing size (a scaling figure).

A paper's scaling figure is, per dataset, a curve per method against the number ``u`` of
unlabeled points.  The paper describes its problems with a :class:`CurveSpec` (the sizes, how a
training set, its labeled rows and its graph are made, which experiment each dataset belongs
to); the harness runs them:

- :func:`run_validation`: per dataset, the tuned methods' hyper-parameter grid fitted at one
  size and scored on a few unlabeled training points per class (never the test set); the
  first best point of the grid is recorded (``validation`` records) and read by every fit;
- :func:`run_curves`: every (u, repeat, method) not recorded yet, one :class:`Problem` (and
  graph) per ``CurveSpec.problem_key``, each fit scored by :func:`fit_record`; with the
  protocol's ``isolate`` knob a dataset's fits run each in a fresh process
  (:func:`fit_in_child`), so that the peak memory recorded is the fit's own.

A fit record holds the test accuracy, the fit's seconds (graph excluded: the graph's are
``graph_seconds``), the predictor's kernel expansions (``CurveSpec.expansions``), the
prediction's seconds on the test set, convergence and the process's peak resident memory
(``max_rss_bytes``; the fit's own when ``isolated``).  :mod:`.curve_report` renders them.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness.child import run_child
from semiscale_bench.harness.peers import expansions
from semiscale_bench.harness.records import jsonable
from semiscale_bench.harness.runner import estimator_facts, measured_fit

__all__ = [
    "CurveSpec",
    "Problem",
    "build_graph",
    "chosen_params",
    "fit_in_child",
    "fit_record",
    "regularization_grid",
    "run_curves",
    "run_validation",
    "setting",
]


@dataclass
class Problem:
    """One training set (labeled rows ``labeled``), its graph, and the test set."""

    dataset: str
    u: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    laplacian: object = None
    graph_seconds: float = 0.0
    n_edges: int = 0
    n_components: int = 0
    labeled: np.ndarray | None = None

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    def observed(self, labeled=None) -> np.ndarray:
        """The targets with only ``labeled`` (default :attr:`labeled`) rows kept, -1 elsewhere."""
        rows = self.labeled if labeled is None else labeled
        y = np.full(self.n_train, -1, dtype=np.int64)
        y[rows] = self.y_train[rows]
        return y

    def graph_facts(self) -> dict:
        return {
            "graph_seconds": self.graph_seconds,
            "n_edges": self.n_edges,
            "n_components": self.n_components,
            "n_train": self.n_train,
            "n_test": int(self.X_test.shape[0]),
            "d": int(self.X_train.shape[1]),
        }


def build_graph(problem: Problem, graph) -> Problem:
    """Fit ``graph`` (an unfitted graph estimator) on the training points; record its seconds
    and its undirected edges."""
    from semiscale.solvers.slapcvm_kernel import graph_edges

    start = time.perf_counter()
    with warnings.catch_warnings(), silenced():
        warnings.simplefilter("ignore")
        graph = graph.fit(problem.X_train)
    problem.graph_seconds = time.perf_counter() - start
    problem.laplacian = graph.laplacian_
    problem.n_edges = int(graph_edges(graph.adjacency_)[0].size)
    problem.n_components = int(graph.n_components_)
    return problem


def regularization_grid(protocol) -> list[dict]:
    """Every (``ambient_reg``, ``intrinsic_reg``) of the protocol's ``ambient_grid`` and
    ``intrinsic_grid``, ``ambient_reg`` major."""
    return [
        {"ambient_reg": a, "intrinsic_reg": i}
        for a in protocol.ambient_grid
        for i in protocol.intrinsic_grid
    ]


@dataclass(frozen=True)
class CurveSpec:
    """How a paper makes the problems of its size curves.

    Parameters
    ----------
    experiment : callable
        ``experiment(protocol, dataset) -> str``: the experiment (figure) of a dataset.
    sizes : callable
        ``sizes(protocol, dataset) -> tuple``: its unlabeled counts ``u``.
    plan_sizes : callable
        ``plan_sizes(protocol, dataset, u) -> Sizes``: the sizes the caps are judged on.
    pool : callable
        ``pool(protocol, dataset, data_home)``: the data a dataset's problems are cut from,
        loaded once per dataset (None: nothing to load).
    problem : callable
        ``problem(protocol, dataset, pool, u, repeat) -> Problem``, graph built and labeled
        rows set.
    problem_key : callable
        ``problem_key(protocol, dataset, u, repeat)``: fits with the same key share one
        problem (and graph); ``relabel(protocol, dataset, problem, repeat)`` then sets the
        repeat's labeled rows on it.
    relabel : callable
    tuned : tuple of str
        The methods whose hyper-parameters :func:`run_validation` chooses.
    grid : callable
        ``grid(protocol) -> list of dict``: the validation grid, in its order; by default
        :func:`regularization_grid`.
    expansions : callable
        ``expansions(estimator) -> int``: the kernel expansions of a fitted predictor; by
        default :func:`~semiscale_bench.harness.peers.expansions`.
    measures : dict
        Experiment -> the measures its reports show (keys of
        :data:`~semiscale_bench.harness.curve_report.MEASURES`).
    child_knobs : tuple of str
        The protocol knobs a child process needs (the rest is the registered protocol's).
    isolated : tuple of str
        The experiments whose fits run in a child process when the protocol's ``isolate`` is
        set.
    """

    experiment: Callable
    sizes: Callable
    plan_sizes: Callable
    pool: Callable
    problem: Callable
    problem_key: Callable
    relabel: Callable
    tuned: tuple
    grid: Callable = regularization_grid
    expansions: Callable = expansions
    measures: Mapping = field(default_factory=dict)
    child_knobs: tuple = ()
    isolated: tuple = ()


def setting(u: int) -> str:
    """The record's setting of size ``u``."""
    return f"u={u}"


def fit_record(bench, protocol, method: str, problem: Problem, seed: int, tuned: dict) -> dict:
    """Fit ``method`` on ``problem`` (its graph given) and score it: the record's fields."""
    spec = bench.curves
    sizes = spec.plan_sizes(protocol, problem.dataset, problem.u)
    params = {"fixed": {"n_edges": problem.n_edges}, "tuned": tuned}
    est = bench.methods.build(
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
        expansions=spec.expansions(est),
        iterations=facts["iterations"],
        converged=bool(facts["converged"] and getattr(est, "converged_", True)),
        core_set=getattr(est, "core_set_size_", None),
    )
    rec["expansion_share"] = rec["expansions"] / problem.n_train
    return jsonable(rec)


def chosen_params(store, dataset: str) -> dict:
    """The hyper-parameters the validation chose per tuned method on ``dataset``."""
    record = store.get("validation", dataset, "search")
    if record is None:
        raise ValueError(f"{dataset} has no validation record: run the validation experiment")
    return record["params"]


def _datasets(bench, protocol, ctx, experiment: str | None = None) -> list[str]:
    names = [n for n in ctx.datasets if protocol.dataset(n).source is not None]
    return [
        n for n in names if experiment is None or bench.curves.experiment(protocol, n) == experiment
    ]


def validation_rows(problem: Problem, per_class: int) -> np.ndarray:
    """``per_class`` unlabeled training rows per class (seed 1000): the validation points."""
    rng = np.random.default_rng(1000)
    free = np.setdiff1d(np.arange(problem.n_train), problem.labeled)
    picks = [
        rng.choice(rows, min(per_class, rows.size), replace=False)
        for c in np.unique(problem.y_train)
        for rows in [free[problem.y_train[free] == c]]
    ]
    return np.sort(np.concatenate(picks))


def run_validation(bench, protocol, store, ctx) -> None:
    """Per dataset: the tuned methods' grid on repeat 0's labels at u = ``validation_size``."""
    spec = bench.curves
    names = [
        n for n in _datasets(bench, protocol, ctx) if not store.done("validation", n, "search")
    ]
    tuned = [m for m in spec.tuned if m in protocol.methods]
    grid = spec.grid(protocol)
    with ctx.fits(total=len(names) * len(tuned) * len(grid)) as bar:
        for name in names:
            start = time.perf_counter()
            pool = spec.pool(protocol, name, ctx.data_home)
            u = min(protocol.validation_size, max(spec.sizes(protocol, name)))
            problem = spec.problem(protocol, name, pool, u, 0)
            rows = validation_rows(problem, protocol.validation_per_class)
            scores, best = {}, {}
            for meth in tuned:
                scores[meth] = []
                for params in grid:
                    bar.set_postfix_str(f"{name}: {meth}", refresh=False)
                    sizes = spec.plan_sizes(protocol, name, u)
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
            params = {m: {k: b[k] for k in grid[0]} for m, b in best.items()}
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


def _todo(bench, protocol, store, name: str) -> list[tuple[int, int, str]]:
    """The (u, repeat, method) fits of ``name``'s figure not recorded yet, u by u."""
    spec = bench.curves
    experiment = spec.experiment(protocol, name)
    return [
        (u, r, meth)
        for u in spec.sizes(protocol, name)
        for r in range(protocol.repeats_for(name)[0])
        for meth in protocol.methods
        if r in protocol.plan(meth, name, spec.plan_sizes(protocol, name, u))[0]
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


_CHILD = "from semiscale_bench.harness.curves import child; child()"


def child() -> None:
    """A child process: a spec (JSON) on stdin, its fit record (JSON) on stdout."""
    import resource

    from semiscale_bench.harness.benchmark import load_benchmark

    spec = json.loads(sys.stdin.read())
    bench = load_benchmark(spec["benchmark"])
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in spec["knobs"].items()}
    protocol = dataclasses.replace(bench.protocol, **knobs)
    name, u, repeat = spec["dataset"], spec["u"], spec["repeat"]
    problem = bench.curves.problem(protocol, name, None, u, repeat)
    scale = 1 if sys.platform == "darwin" else 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    rec = fit_record(bench, protocol, spec["method"], problem, repeat, spec["tuned"])
    print(json.dumps({**rec, "max_rss_before_fit_bytes": before, "isolated": True}))


def fit_in_child(bench, protocol, dataset: str, method: str, u: int, repeat: int, tuned: dict):
    """:func:`fit_record` of one fit in a fresh Python process (a record with ``error`` if the
    process died, e.g. out of memory).  The problem is made there (its ``pool`` is None)."""
    knobs = jsonable(
        {
            k: dict(v) if hasattr(v, "items") else v
            for k, v in ((k, getattr(protocol, k)) for k in bench.curves.child_knobs)
        }
    )
    spec = {
        "benchmark": bench.name,
        "knobs": knobs,
        "dataset": dataset,
        "method": method,
        "u": u,
        "repeat": repeat,
        "tuned": tuned,
    }
    return run_child(_CHILD, spec)


def run_curves(bench, protocol, store, ctx, experiment: str) -> None:
    """Every (u, repeat, method) of ``experiment``'s datasets not recorded yet."""
    spec = bench.curves
    work = {
        name: _todo(bench, protocol, store, name)
        for name in _datasets(bench, protocol, ctx, experiment)
    }
    isolate = protocol.isolate and experiment in spec.isolated
    with ctx.fits(total=sum(map(len, work.values()))) as bar:
        for name, todo in work.items():
            if not todo:
                continue
            tuned = chosen_params(store, name)
            bar.set_postfix_str(f"{name}: data", refresh=False)
            pool = None if isolate else spec.pool(protocol, name, ctx.data_home)
            problem, key = None, None
            for u, r, meth in todo:
                bar.set_postfix_str(f"{name}: {meth}, u = {u}, repeat {r}", refresh=False)
                if isolate:
                    rec = fit_in_child(bench, protocol, name, meth, u, r, tuned)
                else:
                    if key != spec.problem_key(protocol, name, u, r):
                        key = spec.problem_key(protocol, name, u, r)
                        problem = spec.problem(protocol, name, pool, u, r)
                    spec.relabel(protocol, name, problem, r)
                    rec = fit_record(bench, protocol, meth, problem, r, tuned)
                    rec = {**rec, "isolated": False}
                store.put(experiment, name, meth, r, setting(u), u=u, **rec)
                bar.update()
                _log(ctx, f"{experiment} {name} {meth} u = {u} repeat {r}", rec)
