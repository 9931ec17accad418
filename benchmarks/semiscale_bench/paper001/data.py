"""Paper 001's problems: one training set, its labeled points, its graph and the test set.

A :class:`Problem` is what every method of one (dataset, u, repeat) is fitted on.  The moons'
(:func:`moons_problem`) are drawn for each u and repeat; the digits' (:func:`digit_problem`)
are prefixes of one permutation of a pool (:func:`digit_pool`), with one graph per u shared by
the repeats, whose labeled points (:func:`labeled_rows`) are the same at every u.  The rules are
in :mod:`.protocol`'s docstring.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from semiscale._progress import silenced
from semiscale_bench.harness import Sizes
from semiscale_bench.paper001.methods import centers_for, make_graph
from semiscale_bench.paper001.protocol import EXTENDED

__all__ = [
    "Problem",
    "digit_pool",
    "digit_problem",
    "labeled_rows",
    "moons_problem",
    "plan_sizes",
    "validation_rows",
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


def plan_sizes(protocol, dataset: str, u: int) -> Sizes:
    """The sizes that decide caps: n_train = u + 2 (two labeled points), r or s centers."""
    n_train = u + 2
    return Sizes(0, 0, n_train, 2, centers_for(protocol, dataset, n_train))


def build_graph(protocol, problem: Problem, seed: int = 0) -> Problem:
    """Fit the paper's graph on the training points; record its seconds and edges."""
    from semiscale.solvers.slapcvm_kernel import graph_edges

    start = time.perf_counter()
    with warnings.catch_warnings(), silenced():
        warnings.simplefilter("ignore")
        graph = make_graph(protocol, seed).fit(problem.X_train)
    problem.graph_seconds = time.perf_counter() - start
    problem.laplacian = graph.laplacian_
    problem.n_edges = int(graph_edges(graph.adjacency_)[0].size)
    problem.n_components = int(graph.n_components_)
    return problem


def moons_problem(protocol, u: int, repeat: int, *, graph: bool = True) -> Problem:
    """Two labeled points on the noise-free moons (seed ``repeat``), ``u`` noisy unlabeled."""
    from semiscale.datasets import make_two_moons

    X_lab, y_lab = make_two_moons((1, 1), noise=0.0, random_state=repeat)
    X, y = make_two_moons(u, noise=protocol.moons_noise, random_state=0)
    X_test, y_test = make_two_moons(protocol.moons_test, noise=protocol.moons_noise, random_state=1)
    problem = Problem(
        "two moons", u, np.vstack([X_lab, X]), np.concatenate([y_lab, y]), X_test, y_test
    )
    problem.labeled = np.array([0, 1])
    return build_graph(protocol, problem, repeat) if graph else problem


def digit_pool(protocol, dataset: str, data_home=None):
    """``(X_pool, y_pool, X_test, y_test)`` of a digit dataset: its ``digits`` only."""
    from semiscale.datasets import load_dataset, make_extended_usps

    if protocol.dataset(dataset).source == EXTENDED:
        options = dict(protocol.extended)
        options["scale_range"] = tuple(options["scale_range"])
        return make_extended_usps(protocol.digits, data_home=data_home, **options)
    out = []
    for split in ("train", "test"):
        X, y = load_dataset("usps", split, data_home=data_home, download=False, dense=True)
        keep = np.isin(y, protocol.digits)
        out += [np.asarray(X[keep], dtype=np.float64), y[keep].astype(np.int64)]
    return tuple(out)


def digit_problem(protocol, dataset: str, pool, u: int, *, graph: bool = True) -> Problem:
    """The first ``u + 2`` rows of the pool's permutation (seed ``pool_seed``) and the test set."""
    X_pool, y_pool, X_test, y_test = pool
    if u + 2 > X_pool.shape[0]:
        raise ValueError(f"{dataset}: u = {u} needs {u + 2} rows, the pool has {X_pool.shape[0]}")
    rows = np.random.default_rng(protocol.pool_seed).permutation(X_pool.shape[0])[: u + 2]
    problem = Problem(dataset, u, X_pool[rows], y_pool[rows], X_test, y_test)
    return build_graph(protocol, problem) if graph else problem


def labeled_rows(protocol, dataset: str, y_train, repeat: int) -> np.ndarray:
    """One row per class among the first ``min(sizes) + 2`` (the same at every u), seed [r, 1]."""
    head = min(protocol.sizes_of(dataset)) + 2
    rng = np.random.default_rng([repeat, 1])
    classes = np.unique(y_train[:head])
    return np.array([rng.choice(np.flatnonzero(y_train[:head] == c)) for c in classes])


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
