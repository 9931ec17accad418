"""Paper 001's problems: one training set, its labeled points, its graph and the test set.

The hooks of its :class:`~semiscale_bench.harness.curves.CurveSpec`.  The moons' problems
(:func:`moons_problem`) are drawn for each u and repeat; the digits' (:func:`digit_problem`) are
prefixes of one permutation of a pool (:func:`digit_pool`), with one graph per u shared by the
repeats, whose labeled points (:func:`labeled_rows`) are the same at every u.  The rules are in
:mod:`.protocol`'s docstring.
"""

from __future__ import annotations

import numpy as np

from semiscale_bench.harness import Sizes
from semiscale_bench.harness.curves import CurveSpec, Problem, build_graph
from semiscale_bench.paper001.methods import centers_for, make_graph
from semiscale_bench.paper001.protocol import EXTENDED, MOONS, TUNED

__all__ = [
    "CURVES",
    "digit_pool",
    "digit_problem",
    "labeled_rows",
    "moons_problem",
    "plan_sizes",
    "pool",
    "problem",
    "problem_key",
    "relabel",
]


def plan_sizes(protocol, dataset: str, u: int) -> Sizes:
    """The sizes that decide caps: n_train = u + 2 (two labeled points), r or s centers."""
    n_train = u + 2
    return Sizes(0, 0, n_train, 2, centers_for(protocol, dataset, n_train))


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
    return build_graph(problem, make_graph(protocol, repeat)) if graph else problem


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
    return build_graph(problem, make_graph(protocol)) if graph else problem


def labeled_rows(protocol, dataset: str, y_train, repeat: int) -> np.ndarray:
    """One row per class among the first ``min(sizes) + 2`` (the same at every u), seed [r, 1]."""
    head = min(protocol.sizes_of(dataset)) + 2
    rng = np.random.default_rng([repeat, 1])
    classes = np.unique(y_train[:head])
    return np.array([rng.choice(np.flatnonzero(y_train[:head] == c)) for c in classes])


def pool(protocol, dataset: str, data_home=None):
    """The digits' pool; None for the moons (drawn per problem)."""
    return (
        None
        if protocol.dataset(dataset).source == MOONS
        else digit_pool(protocol, dataset, data_home)
    )


def problem(protocol, dataset: str, pool, u: int, repeat: int) -> Problem:
    """Repeat ``repeat``'s problem at size ``u``, its graph built and its labeled rows drawn."""
    if protocol.dataset(dataset).source == MOONS:
        return moons_problem(protocol, u, repeat)
    made = digit_problem(protocol, dataset, pool, u)
    return relabel(protocol, dataset, made, repeat)


def problem_key(protocol, dataset: str, u: int, repeat: int):
    """The moons draw a problem per (u, repeat); the digits share one per u (one graph)."""
    return (u, repeat) if protocol.dataset(dataset).source == MOONS else u


def relabel(protocol, dataset: str, problem: Problem, repeat: int) -> Problem:
    """The digits' labeled rows of ``repeat``; the moons' are fixed (rows 0 and 1)."""
    if protocol.dataset(dataset).source != MOONS:
        problem.labeled = labeled_rows(protocol, dataset, problem.y_train, repeat)
    return problem


#: Paper 001's size curves: Figure 1 (the moons, each fit in its own process when the protocol
#: isolates) and Figure 2 (the digits).
CURVES = CurveSpec(
    experiment=lambda protocol, dataset: protocol.experiment_of(dataset),
    sizes=lambda protocol, dataset: protocol.sizes_of(dataset),
    plan_sizes=plan_sizes,
    pool=pool,
    problem=problem,
    problem_key=problem_key,
    relabel=relabel,
    tuned=TUNED,
    measures={
        "fig1": ("accuracy", "fit", "total", "expansions", "memory", "predict"),
        "fig2": ("accuracy", "fit", "expansions", "predict"),
    },
    child_knobs=(
        *("moons_noise", "moons_test", "moons_gamma", "moons_centers", "n_neighbors"),
        *("slapcvm", "slapcvm_paper", "svm_C"),
    ),
    isolated=("fig1",),
)
