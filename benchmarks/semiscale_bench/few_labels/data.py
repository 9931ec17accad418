"""The few-labels benchmark's data: its datasets, the label draws, and the setting names.

Shared by the experiments (:mod:`.fits`, :mod:`.inductive`, :mod:`.scaling`), the reports and
the studies that reuse the benchmark's draws.
"""

from __future__ import annotations

import numpy as np

#: The synthetic source of the two-moons rows (not a registered dataset).
MOONS = "make_two_moons"

__all__ = ["class_proportions", "draw_labels", "load", "load_split", "log_fit", "setting"]

#: (source, split, moons_n, moons_noise, max_samples) -> each class's share of the points, in
#: the codes 0..k-1 of :func:`load`; filled by every :func:`load` (the oracle priors' source).
_PROPORTIONS: dict[tuple, np.ndarray] = {}


def _key(protocol, name) -> tuple:
    source = protocol.dataset(name).source
    moons = (protocol.moons_n, protocol.moons_noise) if source == MOONS else (None, None)
    return (source, protocol.split_of(name), *moons, protocol.max_samples)


def load(protocol, name, data_home=None):
    """``(X, y)`` of dataset ``name``: dense float64 points, labels coded 0..k-1."""
    from semiscale.datasets import encode_labels, make_two_moons

    source = protocol.dataset(name).source
    if source == MOONS:
        X, y = make_two_moons(protocol.moons_n, noise=protocol.moons_noise, random_state=0)
    else:
        X, y = load_split(source, protocol.split_of(name), protocol.max_samples, data_home)
    y = encode_labels(y)[0].astype(np.int64)
    _PROPORTIONS[_key(protocol, name)] = np.bincount(y) / y.size
    return np.asarray(X, dtype=np.float64), y


def class_proportions(protocol, name, data_home=None) -> np.ndarray:
    """Each class's share of all the points of dataset ``name`` (codes 0..k-1, sums to 1).

    The true class priors, which the oracle methods are given (``Poisson-MBO (true priors)``,
    GraphLearning's MBO methods): read from the labels of the last :func:`load` of the same
    data, else loaded.
    """
    key = _key(protocol, name)
    if key not in _PROPORTIONS:
        load(protocol, name, data_home)
    return _PROPORTIONS[key].copy()


def load_split(source, split, max_samples=None, data_home=None):
    """Dense ``(X, y)`` of one split of a registered dataset; never downloads.

    :func:`~semiscale_bench.harness.load_dense` for another split than ``"train"`` (the same
    fixed subsample when ``max_samples`` is given: quick runs only).
    """
    from semiscale.datasets import load_dataset

    X, y = load_dataset(source, split, data_home=data_home, download=False, dense=True)
    if max_samples and X.shape[0] > max_samples:
        keep = np.sort(np.random.default_rng(12345).choice(X.shape[0], max_samples, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def draw_labels(y, per_class: int, trial: int) -> np.ndarray:
    """``y`` with ``per_class`` points of each class kept, -1 elsewhere (seed ``[trial, k]``)."""
    rng = np.random.default_rng([trial, per_class])
    observed = np.full(y.shape, -1, dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        chosen = rng.choice(members, min(per_class, members.size), replace=False)
        observed[chosen] = c
    return observed


def setting(per_class: int) -> str:
    return f"{per_class}/class"


def log_fit(ctx, what: str, rec: dict) -> None:
    """One log line for a fit's record: its accuracy and seconds, or its error."""
    acc = rec.get("accuracy")
    outcome = (
        f"{100 * acc:.1f} %, {rec['fit_seconds']:.2f} s"
        if acc is not None
        else f"FAILED {rec['error']}"
    )
    ctx.log(f"{what}: {outcome}")
