"""Edge weights of a kNN graph and the symmetric sparse adjacency matrix built from them.

Heat weights are ``w_ij = exp(−d_ij² / (2 σ²))`` with bandwidth ``σ``; binary weights are 1 on
every edge.  Paper 000 (Nyström LapRLS) uses ``exp(−d²/4)``, which is ``σ = sqrt(2)``.
Self-tuning weights (Zelnik-Manor & Perona, NIPS 2004) are ``w_ij = exp(−d_ij² / (σ_i σ_j))``
with a local scale ``σ_i`` per point: its distance to its k-th (farthest listed) neighbour.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp

__all__ = [
    "BANDWIDTHS",
    "CONTRAST_MIN_SPREAD",
    "SYMMETRIZE",
    "WEIGHTS",
    "binary_weights",
    "heat_weights",
    "knn_adjacency",
    "resolve_bandwidth",
    "resolve_local_scale",
    "self_tuning_weights",
]


def _mean(distances: np.ndarray) -> float:
    return float(np.mean(distances)) if distances.size else 0.0


def _median(distances: np.ndarray) -> float:
    return float(np.median(distances)) if distances.size else 0.0


def _mean_square(distances: np.ndarray) -> float:
    # exp(−d²/(2σ²)) = exp(−d²/β_g) with β_g the mean squared edge length (paper 001 §4)
    return float(np.sqrt(np.mean(np.square(distances)) / 2.0)) if distances.size else 0.0


#: ``bandwidth="contrast"`` falls back to ``"mean"`` when ``d̄_k² − d̄_1²`` is below this share
#: of ``d̄_k²`` (all neighbours at one distance, as on a lattice).
CONTRAST_MIN_SPREAD = 1e-6


def _kth_mean(distances: np.ndarray) -> float:
    # exp(−d²/(2σ²)) = exp(−4 d² / d̄_k²): GraphLearning's kth-gaussian width, one for all points
    if not distances.size:
        return 0.0
    return float(np.mean(distances.max(axis=1)) / np.sqrt(8.0))


def _contrast(distances: np.ndarray) -> float:
    # exp(−d̄_1²/2σ²) = e · exp(−d̄_k²/2σ²): a fixed contrast between near and far neighbours
    if not distances.size:
        return 0.0
    near = float(np.mean(distances.min(axis=1)))
    far = float(np.mean(distances.max(axis=1)))
    spread = far * far - near * near
    if not spread > CONTRAST_MIN_SPREAD * far * far:
        return _mean(distances)  # every neighbour equally far: no contrast to set
    return float(np.sqrt(spread / 2.0))


#: Data-dependent bandwidth rules: statistic of all kNN edge lengths.
BANDWIDTHS = {
    "mean": _mean,
    "median": _median,
    "mean-square": _mean_square,
    "kth": _kth_mean,
    "contrast": _contrast,
}


def resolve_bandwidth(distances: np.ndarray, bandwidth="mean") -> float:
    """The heat-kernel bandwidth ``σ`` as a positive float.

    Parameters
    ----------
    distances : ndarray of shape (n_samples, n_neighbors)
        kNN distances (every directed edge once).
    bandwidth : {"contrast", "mean", "median", "mean-square", "kth"} or float
        ``"contrast"``: ``2σ² = d̄_k² − d̄_1²``, with ``d̄_1`` and ``d̄_k`` the mean distances to
        the nearest and to the k-th neighbour, the width at which an edge of length ``d̄_1``
        weighs ``e`` times one of length ``d̄_k``; ``"mean"`` where ``d̄_k = d̄_1`` (no
        contrast to set).  ``"mean"``: ``σ = (1 / nk) Σ_i Σ_{j ∈ N_k(i)} d_ij``, the mean
        length of all directed kNN edges; ``"median"``: their median; ``"mean-square"``:
        ``2σ² = β_g``, the mean squared length of the directed kNN edges, so that the weights
        are paper 001's ``exp(−d²/β_g)``; ``"kth"``: ``σ = d̄_k / √8``, so that the weights are
        ``exp(−4 d² / d̄_k²)`` — the width of GraphLearning's ``kth-gaussian`` weights
        (Calder), one for all points instead of one per point; a positive float is returned
        as is.

    Returns
    -------
    float
        ``σ > 0``.  When the rule gives 0 (every point has at least ``k`` exact duplicates, so
        every edge has length 0) the weights ``exp(0) = 1`` do not depend on ``σ``; ``σ = 1.0``
        is returned with a ``UserWarning``.

    Raises
    ------
    ValueError
        For an unknown rule or a non-positive / non-finite number.
    """
    if isinstance(bandwidth, str):
        if bandwidth not in BANDWIDTHS:
            raise ValueError(
                f"bandwidth must be a positive number or one of {sorted(BANDWIDTHS)}, "
                f"got {bandwidth!r}"
            )
        sigma = BANDWIDTHS[bandwidth](np.asarray(distances))
        if not sigma > 0:
            warnings.warn(
                f"bandwidth={bandwidth!r} is 0: every kNN distance is 0 (each point has at least "
                "n_neighbors exact duplicates); all heat weights are exp(0) = 1 whatever the "
                "bandwidth, using bandwidth=1.0. Remove duplicate points or raise n_neighbors.",
                UserWarning,
                stacklevel=3,
            )
            sigma = 1.0
        return sigma
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, Real):
        raise ValueError(
            f"bandwidth must be a positive number or 'mean'/'median', got {bandwidth!r}"
        )
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be positive and finite, got {bandwidth!r}")
    return float(bandwidth)


def heat_weights(distances: np.ndarray, bandwidth: float) -> np.ndarray:
    """Heat-kernel weights ``exp(−d² / (2 σ²))``.

    ``σ = sqrt(2)`` gives paper 000's ``exp(−d²/4)``.
    """
    d = np.asarray(distances, dtype=np.float64)
    return np.exp(-(d * d) / (2.0 * float(bandwidth) ** 2))


def binary_weights(distances: np.ndarray, bandwidth: float | None = None) -> np.ndarray:
    """Weight 1 on every kNN edge (``bandwidth`` is ignored)."""
    return np.ones(np.shape(distances), dtype=np.float64)


def resolve_local_scale(distances: np.ndarray) -> np.ndarray:
    """Per-point scales ``σ_i`` of self-tuning weights: the distance to the k-th neighbour.

    ``k`` is the number of columns of ``distances`` (``n_neighbors``), so ``σ_i`` is the length
    of the longest edge listed for point ``i``.  Zelnik-Manor & Perona use the 7th neighbour;
    Calder's GraphLearning uses the k-th of its k-NN graph, as here (with the default
    ``n_neighbors=8`` the two are one rank apart), so that no second rank has to be chosen.

    Parameters
    ----------
    distances : ndarray of shape (n_samples, n_neighbors)
        kNN distances (every directed edge once).

    Returns
    -------
    ndarray of float64, shape (n_samples,)
        ``σ_i > 0``.  A point with at least ``k`` exact duplicates has ``σ_i = 0``; it is
        raised to the smallest positive ``σ`` with a ``UserWarning`` (its edges to the
        duplicates keep weight ``exp(0) = 1``).  When every ``σ_i`` is 0, every edge has
        length 0 and weight 1 whatever the scale; ``σ_i = 1.0`` is used, with a warning.
    """
    d = np.asarray(distances, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] == 0:
        raise ValueError(f"distances must have shape (n_samples, n_neighbors), got {d.shape}")
    sigma = d.max(axis=1)  # the k-th neighbour (robust to an unsorted table)
    zero = ~(sigma > 0)
    if zero.any():
        positive = sigma[~zero]
        floor = float(positive.min()) if positive.size else 1.0
        which = "the smallest positive scale" if positive.size else "scale"
        warnings.warn(
            f"weights='self-tuning': {int(zero.sum())} point(s) have local scale 0 (at least "
            f"n_neighbors exact duplicates); using {which} {floor:.6g} for them. Remove "
            "duplicate points or raise n_neighbors.",
            UserWarning,
            stacklevel=3,
        )
        sigma = np.where(zero, floor, sigma)
    return sigma


def self_tuning_weights(
    distances: np.ndarray, indices: np.ndarray, local_scale: np.ndarray | None = None
) -> np.ndarray:
    """Self-tuning weights ``exp(−d_ij² / (σ_i σ_j))`` of a directed kNN table.

    The weight of an edge does not depend on its direction, so the table's two copies of an
    edge listed by both end points are equal and ``"union"`` / ``"mutual"`` symmetrization
    keep it; the weights are unchanged when ``X`` is multiplied by a constant.

    Parameters
    ----------
    distances : ndarray of shape (n_samples, n_neighbors)
        kNN distances, ``distances[i, m] = d(i, indices[i, m])``.
    indices : ndarray of int, shape (n_samples, n_neighbors)
        Neighbour indices.
    local_scale : ndarray of shape (n_samples,) or None
        ``σ``; None = :func:`resolve_local_scale` of ``distances``.

    Returns
    -------
    ndarray of float64, shape (n_samples, n_neighbors)
    """
    d = np.asarray(distances, dtype=np.float64)
    sigma = resolve_local_scale(d) if local_scale is None else np.asarray(local_scale, np.float64)
    return np.exp(-(d * d) / (sigma[:, None] * sigma[np.asarray(indices)]))


#: The factor of :func:`kth_gaussian_weights` (Calder et al.'s Poisson-learning graphs).
KTH_GAUSSIAN_FACTOR = 4.0


def kth_gaussian_weights(
    distances: np.ndarray, local_scale: np.ndarray | None = None
) -> np.ndarray:
    """Directed weights ``exp(−4 d_ij² / σ_i²)`` of a kNN table, ``σ_i`` the k-th distance.

    The weights of GraphLearning's ``weightmatrix.knn`` (Calder, Cook, Thorpe & Slepčev, ICML
    2020): each point scales its own edges by its distance to its k-th neighbour, so the
    k-th edge weighs ``e⁻⁴`` whatever the density.  Unlike :func:`self_tuning_weights` the two
    copies of an edge differ (each uses its source's scale); GraphLearning averages them
    (``symmetrize="average"``).

    Parameters
    ----------
    distances : ndarray of shape (n_samples, n_neighbors)
    local_scale : ndarray of shape (n_samples,) or None
        ``σ``; None = :func:`resolve_local_scale` of ``distances`` (zero scales raised, with
        a warning).

    Returns
    -------
    ndarray of float64, shape (n_samples, n_neighbors)
    """
    d = np.asarray(distances, dtype=np.float64)
    sigma = resolve_local_scale(d) if local_scale is None else np.asarray(local_scale, np.float64)
    return np.exp(-KTH_GAUSSIAN_FACTOR * (d / sigma[:, None]) ** 2)


#: Weight functions by name: ``f(distances, bandwidth) -> weights`` for ``"heat"`` and
#: ``"binary"``; ``"self-tuning"`` is :func:`self_tuning_weights` ``(distances, indices)``.
WEIGHTS = {
    "heat": heat_weights,
    "binary": binary_weights,
    "self-tuning": self_tuning_weights,
    "kth-gaussian": kth_gaussian_weights,
}


def _union(W: sp.csr_matrix) -> sp.csr_matrix:
    return W.maximum(W.T)


def _mutual(W: sp.csr_matrix) -> sp.csr_matrix:
    return W.minimum(W.T)


def _average(W: sp.csr_matrix) -> sp.csr_matrix:
    return (W + W.T) * 0.5


#: Symmetrization rules for the directed kNN graph.
SYMMETRIZE = {"union": _union, "mutual": _mutual, "average": _average}


def knn_adjacency(indices: np.ndarray, weights: np.ndarray, *, symmetrize="union") -> sp.csr_matrix:
    """Symmetric sparse adjacency matrix from a directed kNN table.

    The directed graph has ``A_ij = weights[i, m]`` for ``j = indices[i, m]``.  It is made
    symmetric by

    - ``"union"``: ``W = max(A, Aᵀ)``, an edge when either point is among the other's neighbours;
    - ``"mutual"``: ``W = min(A, Aᵀ)``, an edge only when each point is among the other's
      neighbours (the graph may then have isolated vertices);
    - ``"average"``: ``W = (A + Aᵀ)/2``, GraphLearning's: an edge listed by one end point only
      keeps half its weight.

    Parameters
    ----------
    indices : ndarray of int, shape (n_samples, n_neighbors)
        Neighbour indices, without the point itself.
    weights : ndarray of float, shape (n_samples, n_neighbors)
        Non-negative edge weights.
    symmetrize : {"union", "mutual", "average"}

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (n_samples, n_samples)
        Symmetric, zero diagonal, sorted indices, no explicit zeros.
    """
    if symmetrize not in SYMMETRIZE:
        raise ValueError(f"symmetrize must be one of {sorted(SYMMETRIZE)}, got {symmetrize!r}")
    n, k = indices.shape
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    A = sp.csr_matrix(
        (np.asarray(weights, dtype=np.float64).ravel(), np.asarray(indices).ravel(), indptr),
        shape=(n, n),
    )
    A.sort_indices()
    W = SYMMETRIZE[symmetrize](A).tocsr()
    diagonal = W.diagonal()
    if diagonal.any():  # a table that lists a point as its own neighbour: drop the self-loop
        W = (W - sp.diags(diagonal, format="csr")).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    return W
