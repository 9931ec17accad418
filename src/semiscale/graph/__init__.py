"""Graphs: kNN search (exact or approximate), edge weights, Laplacians, and :class:`KNNGraph`.

The optional ANN library (voyager; hnswlib as an option) is imported only when an approximate
search runs.
"""

from ._graph import DisconnectedGraphWarning, KNNGraph
from .diffusion import label_diffusion_weights
from .knn import LowRecallWarning, kneighbors
from .laplacian import connected_components, laplacian
from .precomputed import PrecomputedGraph

__all__ = [
    "DisconnectedGraphWarning",
    "KNNGraph",
    "LowRecallWarning",
    "PrecomputedGraph",
    "connected_components",
    "kneighbors",
    "label_diffusion_weights",
    "laplacian",
]
