"""Data-dependent kernel widths: the ``gamma="local"``, ``"median"``, ``"mean"`` and ``"scale"``
heuristics.

Split out of :mod:`semiscale.kernels` (one concept per module): a kernel whose ``gamma`` names a
heuristic measures the data's scale here when :meth:`semiscale.kernels.Kernel.resolve` fixes it,
on a sample of at most ``MEDIAN_SAMPLE_SIZE`` points for the pairwise and local widths and on all
points for the mean deviation.  :mod:`semiscale.kernels` turns the width into ``gamma`` and
re-exports the public constants.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from semiscale._arrays import take_rows
from semiscale._pairs import _cast, _l1_distances, squared_distances
from semiscale._random import check_random_state

#: Most points used by the ``gamma="local"`` and ``"median"`` heuristics (a random sample when n
#: is larger).  It is also the most Nyström centers ``n_centers="auto"`` picks, so the local
#: width is the spacing of a center set as dense as the largest default one, whatever n is.
MEDIAN_SAMPLE_SIZE = 1000
#: ``gamma="local"`` measures the distance from each sampled point to its ``LOCAL_NEIGHBOR``-th
#: nearest other sampled point (the default graph's ``n_neighbors``).
LOCAL_NEIGHBOR = 8
_HEURISTICS = ("local", "median", "mean")
#: ``gamma="scale"``: scikit-learn's ``SVC`` convention, defined for the RBF kernel only.
SCALE = "scale"


def _sample(X, random_state):
    n = X.shape[0]
    if n < 2:
        raise ValueError("a data-dependent gamma needs at least 2 samples to measure a distance")
    rows = slice(None)
    if n > MEDIAN_SAMPLE_SIZE:
        rows = np.sort(
            check_random_state(random_state).choice(n, MEDIAN_SAMPLE_SIZE, replace=False)
        )
    return _cast(take_rows(X, rows), np.float64)  # a dask X: only the sample is computed


def _median_distance(X, metric: str, random_state) -> float:
    S = _sample(X, random_state)
    iu = np.triu_indices(S.shape[0], 1)
    d = _l1_distances(S, S)[iu] if metric == "l1" else np.sqrt(squared_distances(S)[iu])
    return float(np.median(d))


def _distinct_rows(S):
    """The distinct rows of a dense or CSR sample (first occurrences, in order)."""
    if sp.issparse(S):
        S = sp.csr_matrix(S)
        S.sum_duplicates()
        S.sort_indices()
        keys = [
            (S.indices[a:b].tobytes(), S.data[a:b].tobytes())
            for a, b in zip(S.indptr[:-1], S.indptr[1:], strict=True)
        ]
        first = sorted({key: i for i, key in reversed(list(enumerate(keys)))}.values())
        return S[first]
    return S[np.sort(np.unique(S, axis=0, return_index=True)[1])]


def _local_distance(X, metric: str, random_state) -> float:
    """Median over a sample of the distance to the ``LOCAL_NEIGHBOR``-th nearest sampled point.

    Repeated rows are dropped from the sample first, so data with duplicates get the spacing of
    their distinct points.  0 when fewer than two distinct points exist.
    """
    S = _distinct_rows(_sample(X, random_state))
    if S.shape[0] < 2:
        return 0.0
    if metric == "l1":
        D = _l1_distances(S, S)
    else:
        D = squared_distances(S)
        np.sqrt(D, out=D)
    np.fill_diagonal(D, np.inf)
    k = min(LOCAL_NEIGHBOR, S.shape[0] - 1)
    return float(np.median(np.partition(D, k - 1, axis=1)[:, k - 1]))


def _mean_deviation(X, metric: str) -> float:
    """Mean over points of ‖x − μ‖² (``"l2"``, paper 001's β) or ‖x − μ‖₁ (``"l1"``)."""
    n, d = X.shape
    power = (lambda v: v * v) if metric == "l2" else np.abs
    if sp.issparse(X):
        mu = np.bincount(X.indices, weights=X.data, minlength=d) / n
        total = power(X.data.astype(np.float64) - mu[X.indices]).sum()
        total += ((n - np.bincount(X.indices, minlength=d)) * power(mu)).sum()
        return float(total / n)
    mu = X.mean(axis=0, dtype=np.float64)
    step = max(1, (1 << 22) // max(d, 1))
    total = sum(power(X[i : i + step] - mu).sum() for i in range(0, n, step))
    return float(total / n)


def _feature_variance(X) -> float:
    """Variance of all the entries of X together, ``X.var()`` (zeros of a sparse X included).

    scikit-learn's ``SVC(gamma="scale")`` uses ``1 / (n_features · X.var())``; computed here in
    float64 for float32 data too, so the width does not depend on the input precision.
    """
    if sp.issparse(X):
        data = X.data.astype(np.float64)
        size = X.shape[0] * X.shape[1]
        mean = data.sum() / size
        # E[x²] − E[x]²: the zeros contribute to the mean and to the count, not to the squares.
        return float(max(np.square(data).sum() / size - mean * mean, 0.0))
    n, d = X.shape
    mean = X.sum(dtype=np.float64) / (n * d)
    # By row blocks of ~4M entries, as _mean_deviation: np.var would copy all of X in float64.
    step = max(1, (1 << 22) // max(d, 1))
    total = sum(
        np.square(np.subtract(X[i : i + step], mean, dtype=np.float64)).sum()
        for i in range(0, n, step)
    )
    return float(total / (n * d))


def _zero_width(which: str, metric: str):
    return ValueError(
        f"gamma={which!r}: the {which} {metric} distance of the data is 0 (duplicated or constant "
        "points), so no finite gamma follows; pass a numeric gamma"
    )
