"""Paper 002's tasks: binary problems from letter, usps, MNIST's test images and extended USPS.

:func:`binary_task` keeps the rows of a task's classes and codes them 1 (positive) / 0;
:func:`load_task` pools a dataset's train and test files and draws one seeded split (the
extended set keeps its own split: its test rows are distortion-free images of other bases);
:func:`class_orders` and :func:`labeled_rows` give a trial's nested labeled sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semiscale_bench.paper002.protocol import EXTENDED, MNIST_TEST

__all__ = ["Task", "binary_task", "class_orders", "labeled_rows", "load_task"]


@dataclass
class Task:
    """One task's training rows (the kernel's graph) and test rows (new points), labels 0/1."""

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray

    def facts(self) -> dict:
        """Sizes and class counts, for the records."""
        return {
            "n_train": int(self.X_train.shape[0]),
            "n_test": int(self.X_test.shape[0]),
            "d": int(self.X_train.shape[1]),
            "train_positive": int(self.y_train.sum()),
            "test_positive": int(self.y_test.sum()),
        }


def binary_task(X, y, positive, negative):
    """The rows of ``y`` in ``positive`` or ``negative``, labeled 1 and 0.

    Raises
    ------
    ValueError
        When a class is in both groups, or a group has no row in ``y``.
    """
    positive, negative = np.asarray(positive), np.asarray(negative)
    both = np.intersect1d(positive, negative)
    if both.size:
        raise ValueError(f"classes {both.tolist()} are both positive and negative")
    y = np.asarray(y)
    pos, neg = np.isin(y, positive), np.isin(y, negative)
    for name, group, mask in (("positive", positive, pos), ("negative", negative, neg)):
        if not mask.any():
            present = np.unique(y).tolist()
            raise ValueError(f"no {name} row: classes {group.tolist()} not among {present}")
    keep = pos | neg
    return np.asarray(X[keep], dtype=np.float64), pos[keep].astype(np.int64)


def _pooled(source: str, data_home):
    """A registered dataset's train and test files stacked (:data:`MNIST_TEST`: MNIST's test
    file only)."""
    from semiscale.datasets import load_dataset

    splits = ("train", "test")
    if source == MNIST_TEST:
        source, splits = "mnist", ("test",)
    parts = [
        load_dataset(source, s, data_home=data_home, download=False, dense=True) for s in splits
    ]
    X = np.vstack([np.asarray(X, dtype=np.float64) for X, _ in parts])
    return X, np.concatenate([np.asarray(y) for _, y in parts])


def _subsample(X, y, n, seed):
    if n is None or X.shape[0] <= n:
        return X, y
    keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return X[keep], y[keep]


def load_task(protocol, name: str, data_home=None) -> Task:
    """The task ``name`` of ``protocol`` (see :data:`~.protocol._NOTES` for each one's rows).

    Pooled datasets: the rows of the task's classes from the train and test files, split by one
    permutation of seed ``protocol.split_seed`` into ``n_train`` training rows and the rest.
    The extended set: :func:`semiscale.datasets.make_extended_usps` with ``protocol.extended``,
    its own train/test parts.  ``protocol.max_train`` (quick runs) subsamples the training rows.
    """
    spec = protocol.task(name)
    source = protocol.dataset(name).source
    if source == EXTENDED:
        from semiscale.datasets import make_extended_usps

        options = dict(protocol.extended)
        digits = tuple(options.pop("digits"))
        options["scale_range"] = tuple(options["scale_range"])
        X_tr, d_tr, X_te, d_te = make_extended_usps(digits, data_home=data_home, **options)
        X_train, y_train = binary_task(X_tr, d_tr, spec["positive"], spec["negative"])
        X_test, y_test = binary_task(X_te, d_te, spec["positive"], spec["negative"])
    else:
        X, y = binary_task(*_pooled(source, data_home), spec["positive"], spec["negative"])
        n_train = spec["n_train"]
        if not 0 < n_train < X.shape[0]:
            raise ValueError(f"{name}: n_train = {n_train} of {X.shape[0]} rows leaves no test row")
        perm = np.random.default_rng(protocol.split_seed).permutation(X.shape[0])
        train, test = perm[:n_train], perm[n_train:]
        X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    X_train, y_train = _subsample(X_train, y_train, protocol.max_train, protocol.split_seed)
    return Task(name, X_train, y_train, X_test, y_test)


def class_orders(y_train, most: int, trial: int) -> list[np.ndarray]:
    """Per class (0, then 1), the first ``most`` rows of a random order of its rows.

    One generator of seed ``[trial, 2]`` draws the orders.  The labeled set of ``l`` labels per
    class is their first ``l`` rows (:func:`labeled_rows`): the sets of a trial are nested.

    Raises
    ------
    ValueError
        When a class has fewer than ``most`` training rows.
    """
    rng = np.random.default_rng([trial, 2])
    orders = []
    for c in (0, 1):
        rows = np.flatnonzero(np.asarray(y_train) == c)
        if rows.size < most:
            raise ValueError(f"class {c} has {rows.size} training rows, fewer than {most} labels")
        orders.append(rng.permutation(rows)[:most])
    return orders


def labeled_rows(orders, per_class: int) -> np.ndarray:
    """Row indices of ``per_class`` labels per class: the first of each class's order."""
    return np.concatenate([order[:per_class] for order in orders])
