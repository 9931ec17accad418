"""Data of a reproduction: dense loading, random train/test splits, svm-scale, labeled subsets."""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from semiscale_bench.harness.protocol import n_labeled

__all__ = [
    "MissingDataError",
    "Split",
    "downloads",
    "fetch_missing",
    "load_dense",
    "missing_sources",
    "make_split",
    "minmax_scaler",
    "n_labeled",
    "rmse",
    "standard_scaler",
]


#: Whether a run may download the datasets it lacks (``semiscale-bench --download``).
_DOWNLOADS = contextvars.ContextVar("semiscale_bench_downloads", default=False)


@contextmanager
def downloads(allowed: bool = True):
    """Let :func:`load_dense` download missing datasets inside the block (or forbid it)."""
    token = _DOWNLOADS.set(bool(allowed))
    try:
        yield
    finally:
        _DOWNLOADS.reset(token)


class MissingDataError(FileNotFoundError):
    """Datasets a run needs are not on disk, and it may not download them.

    ``sources`` are the registered names missing; ``others`` the paper names that could run
    (None for a study, which has no ``--datasets``).
    """

    def __init__(self, sources, data_home=None, others=None):
        from semiscale.datasets import get_data_home

        self.sources = list(sources)
        self.others = None if others is None else list(others)
        them = "it" if len(self.sources) == 1 else "them"
        fixes = f"rerun with --download to fetch {them} (from Python: download=True)"
        if self.others:
            fixes += f", or leave them out: --datasets {','.join(self.others)}"
        super().__init__(
            f"{', '.join(self.sources)}: not in the data directory {get_data_home(data_home)} "
            f"(set by $SEMISCALE_DATA); {fixes}"
        )


def missing_sources(sources, data_home=None, splits=None) -> list[str]:
    """The registered datasets among ``sources`` whose split is not on disk.

    ``splits`` maps a source to the split the run loads (default ``"train"``).
    """
    from semiscale.datasets.fetch import locate_file
    from semiscale.datasets.registry import REGISTRY

    missing = []
    for source in dict.fromkeys(sources):
        info = REGISTRY.get(source)
        if info is None:  # not a registered file set (e.g. built from others): load_dense says
            continue
        files = info.split((splits or {}).get(source, "train")).files
        if any(locate_file(info.name, file, data_home) is None for file in files):
            missing.append(source)
    return missing


def fetch_missing(sources, data_home=None, verbose: int = 1) -> None:
    """Download the train split of each of ``sources`` (a bar and a line each on stderr)."""
    from semiscale.datasets import fetch_dataset

    for source in sources:
        fetch_dataset(source, data_home=data_home, download=True, verbose=bool(verbose))


def load_dense(source: str, max_samples: int | None = None, data_home=None):
    """Dense float64 ``(X, y)`` of a registered dataset.

    Downloads only inside :func:`downloads` (``semiscale-bench --download``); elsewhere a
    missing dataset raises :class:`MissingDataError`, which names the command-line fix.
    ``max_samples`` keeps a fixed random subsample (seed 12345, rows in their original order):
    quick runs only.
    """
    from semiscale.datasets import load_dataset

    download = _DOWNLOADS.get()
    if not download and missing_sources([source], data_home):
        raise MissingDataError([source], data_home)
    X, y = load_dataset(source, data_home=data_home, download=download, dense=True)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if max_samples and X.shape[0] > max_samples:
        keep = np.sort(np.random.default_rng(12345).choice(X.shape[0], max_samples, replace=False))
        X, y = X[keep], y[keep]
    return X, y


def minmax_scaler(X_train):
    """svm-scale to [-1, 1] fitted on ``X_train`` (LIBSVM's convention); constant features -> 0.

    Returns the transform, to apply to the training and the test split alike.
    """
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = hi - lo
    const = span <= 0
    span = np.where(const, 1.0, span)

    def transform(A):
        Z = 2.0 * (A - lo) / span - 1.0
        Z[:, const] = 0.0
        return Z

    return transform


def standard_scaler(X_train):
    """Zero mean and unit variance per feature, fitted on ``X_train``; constant features -> 0.

    Returns the transform, to apply to the training and the test split alike.
    """
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    const = std <= 0
    std = np.where(const, 1.0, std)

    def transform(A):
        Z = (A - mean) / std
        Z[:, const] = 0.0
        return Z

    return transform


def rmse(a, b) -> float:
    """Root mean squared error between two vectors."""
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


@dataclass
class Split:
    """One repeat's data: scaled train/test parts and a random order of the training rows.

    Labeled sets are prefixes of ``order``, so sets for growing labeled fractions are nested.
    """

    X_train: np.ndarray
    y_train: np.ndarray  # every training target (other labeled fractions draw from it)
    X_test: np.ndarray
    y_test: np.ndarray
    order: np.ndarray
    seed: int
    y_observed: np.ndarray | None = None  # the protocol's labeled set; NaN = unlabeled

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    def observed(self, n_labeled: int) -> np.ndarray:
        """Targets with the first ``n_labeled`` rows of ``order`` labeled, NaN elsewhere."""
        y = np.full(self.n_train, np.nan)
        idx = self.order[:n_labeled]
        y[idx] = self.y_train[idx]
        return y


def make_split(
    X, y, seed: int, train_fraction: float, labeled_fraction: float, scaler=minmax_scaler
) -> Split:
    """Repeat ``seed``: random train/test split, ``scaler`` fitted on train, labeled prefix.

    One generator seeded with ``seed`` draws the split, then the order of the training rows.
    ``scaler`` is svm-scale to [-1, 1] (:func:`minmax_scaler`, paper 000) or
    :func:`standard_scaler` (paper 004).
    """
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    perm = rng.permutation(n)
    n_train = int(round(train_fraction * n))
    tr, te = perm[:n_train], perm[n_train:]
    transform = scaler(X[tr])
    order = rng.permutation(n_train)
    split = Split(transform(X[tr]), y[tr], transform(X[te]), y[te], order, seed)
    split.y_observed = split.observed(n_labeled(n_train, labeled_fraction))
    return split
