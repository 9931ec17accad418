r"""Predicting new points by extending the graph: ``out_of_sample="graph"``.

A manifold-regularized fit is ``f = Σ_j α_j k(x_j, ·)``; the kernel expansion is its value
anywhere.  With the classifiers' defaults (a narrow ``"local"`` kernel, a tiny ``ambient_reg``
and a large ``intrinsic_reg``) the graph term decides f on the training points and the
expansion carries little of it to points between them.  Chosen by measurement (exact LapRLS,
five draws, see ``benchmarks/results/out_of_sample/``): on standardized breast_cancer with 3
labels per class this rule labels 93.0 % of held-out points right, the expansion 78.6 % (92.4 %
of the unlabeled training points); on usps at one label per class 88.1 % against 79.7 % (91.2 %;
the gap left is the usps test file's shift: on held-out training images it is −0.4 and +0.5
points).

The rule here gives a new point x the heat-weighted mean of the fitted decision values of its k
nearest training points,

.. math::  g(x) = \sum_{j \in N_k(x)} w_j\, F_j \Big/ \sum_{j \in N_k(x)} w_j ,
           \qquad w_j = \exp\!\big(-(d_j^2 - d_{(1)}^2) / 2σ^2\big),

with the fitted graph's k and bandwidth σ (each new point's mean neighbour distance when the
graph has none); a point at distance 0 from a training point gets that point's value, so
``predict`` on the training points gives ``transduction_``.  It is the harmonic extension of
Poisson and Laplace learning (:mod:`semiscale.models.graph_learning`).  A self-tuning graph's
weights ``exp(−d_j²/(σ_x σ_j))`` use its local scales; binary weights are uniform.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from .._arrays import is_dask_array, take_rows
from ..linalg.ops import get_ops

__all__ = ["extend", "extension_rule", "neighbor_weighting"]
#: Neighbours of a new point when the graph does not say (a Laplacian passed to ``fit``, or a
#: graph without ``n_neighbors``): :class:`~semiscale.graph.KNNGraph`'s default.
DEFAULT_EXTENSION_NEIGHBORS = 8


#: New points searched per round of tasks when the training points are a dask array: each
#: chunk's task receives the block (``8 d`` bytes a point) and returns ``16 k`` bytes a point.
DASK_QUERY_ROWS = 1 << 16


class _DaskNeighbors:
    """``kneighbors`` of new points among a dask ``X``'s rows (:meth:`DaskOps.kneighbors`)."""

    def __init__(self, X, k):
        from ..backends._dask import DaskOps

        ops = get_ops()
        self.ops = ops if isinstance(ops, DaskOps) else DaskOps()
        self.X, self.k = X, k

    def kneighbors(self, Q):
        return self.ops.kneighbors(self.X, Q, self.k)


def _split(rows: slice, size: int):
    return [slice(a, min(a + size, rows.stop)) for a in range(rows.start, rows.stop, size)]


def neighbor_weighting(graph, fitted_graph, n_samples: int) -> dict:
    """The graph's part of the rule: ``n_neighbors``, ``weights`` and ``bandwidth``.

    ``graph`` gives k (its ``n_neighbors``, else :data:`DEFAULT_EXTENSION_NEIGHBORS`, at most
    ``n_samples``); ``fitted_graph`` (None with a Laplacian passed to ``fit``) gives the weights:
    its binary or self-tuning ones, else heat weights of its bandwidth σ (None: each new point's
    mean distance to its k nearest training points).
    """
    params = graph.get_params(deep=False) if hasattr(graph, "get_params") else {}
    k = int(min(params.get("n_neighbors", DEFAULT_EXTENSION_NEIGHBORS), n_samples))
    weights = params.get("weights") if fitted_graph is not None else None
    if weights in ("binary", "self-tuning"):
        return {"n_neighbors": k, "weights": weights, "bandwidth": None}
    return {
        "n_neighbors": k,
        "weights": "heat",
        "bandwidth": getattr(fitted_graph, "bandwidth_", None),
    }


def extension_rule(graph, fitted_graph, X, decision) -> dict:
    """What :func:`extend` needs: the training points, their decision, k and the weights."""
    rule = {
        "X": X,
        "scores": np.asarray(decision),
        **neighbor_weighting(graph, fitted_graph, X.shape[0]),
    }
    if rule["weights"] != "heat":
        rule["local_scale"] = getattr(fitted_graph, "local_scale_", None)
    return rule


def extend(rule: dict, X_new, memory_budget=None, n_jobs=None, keep_fitted=True) -> np.ndarray:
    """The decision values of ``X_new`` by the graph extension (module docstring).

    ``keep_fitted=False`` averages a training point's value with its neighbours' too (Poisson
    and Laplace learning's ``predict``), instead of returning its fitted value.
    """
    scores = rule["scores"]
    k = rule["n_neighbors"]
    out = np.empty((X_new.shape[0], scores.shape[1]))
    if X_new.shape[0] == 0:
        return out
    row_bytes = 8 * k * (scores.shape[1] + 4)
    blocks = get_ops().row_blocks(
        X_new.shape[0], row_bytes, memory_budget, what="graph extension of new points"
    )
    if is_dask_array(rule["X"]):  # the training points stay on the Dask workers
        index = _DaskNeighbors(rule["X"], k)
        blocks = [b for big in blocks for b in _split(big, DASK_QUERY_ROWS)]
    else:  # sparse points: a brute-force scan (scikit-learn's trees take dense input only)
        algorithm = "brute" if sp.issparse(rule["X"]) or sp.issparse(X_new) else "auto"
        index = NearestNeighbors(n_neighbors=k, algorithm=algorithm, n_jobs=n_jobs)
        index.fit(rule["X"])
    for rows in blocks:
        distances, neighbors = index.kneighbors(take_rows(X_new, rows))
        if rule["weights"] == "binary":
            weights = np.ones_like(distances)
        elif rule["weights"] == "self-tuning":
            own = distances[:, -1:]
            scales = rule["local_scale"][neighbors] * np.where(own > 0, own, 1.0)
            exponent = distances**2 / scales
            weights = np.exp(-(exponent - exponent.min(axis=1, keepdims=True)))
        else:
            sigma = rule["bandwidth"]
            if sigma is None:
                sigma = distances.mean(axis=1, keepdims=True)
                sigma = np.where(sigma > 0, sigma, 1.0)
            # shifted by the nearest distance: a far-away point's weights do not all underflow
            sq = distances**2
            weights = np.exp(-(sq - sq[:, :1]) / (2.0 * np.square(sigma)))
        weights /= weights.sum(axis=1, keepdims=True)
        block = np.einsum("ij,ijc->ic", weights, scores[neighbors])
        # a training point keeps its fitted value: the extension interpolates the fit
        if keep_fitted:
            same = distances[:, 0] == 0.0
            block[same] = scores[neighbors[same, 0]]
        out[rows] = block
    return out
