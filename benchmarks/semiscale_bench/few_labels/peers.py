"""GraphLearning's Laplace and Poisson learning behind the benchmark's estimator interface.

Issue 12 names Calder's GraphLearning (``graphlearning`` on PyPI, the Poisson-learning paper's
own code) as the Laplace/Poisson-learning peer.  It is not a semiscale dependency: PyPI has
only its source distribution, whose C++ extension needs a compiler (``pip install
graphlearning``).  When it is importable the benchmark runs it beside semiscale's estimators;
when it is not, the fit records say so and (a)'s references fall back to semiscale's own.

The graph is GraphLearning's default for these experiments, ``weightmatrix.knn(X, 10)``: its
self-tuning Gaussian weights ``exp(−4|x_i − x_j|² / d_k(x_i)²)`` symmetrized by averaging.  Its
own neighbour search uses annoy (another compiled package) above 5 features, so the exact
neighbours come from scikit-learn's ``NearestNeighbors`` and are handed to it as ``knn_data``;
the search and the weights are timed apart (``graph_seconds_``), so the benchmark's fit seconds
exclude the graph as semiscale's do.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["GRAPHLEARNING_ALGORITHMS", "GraphLearningClassifier", "graphlearning_available"]

#: The benchmark's name for each GraphLearning model class (``graphlearning.ssl``).
GRAPHLEARNING_ALGORITHMS = {"laplace": "Laplace learning", "poisson": "Poisson learning"}


def graphlearning_available() -> bool:
    """Whether ``import graphlearning`` would succeed."""
    import importlib.util

    return importlib.util.find_spec("graphlearning") is not None


class GraphLearningClassifier:
    """``fit(X, y)`` then ``transduction_``: GraphLearning's model on its 10-NN graph.

    Parameters
    ----------
    algorithm : {"laplace", "poisson"}
        ``graphlearning.ssl.laplace`` or ``graphlearning.ssl.poisson``, at their defaults.
    n_neighbors : int, default=10
    unlabeled : int, default=-1
        The marker of unlabeled points in ``y``.
    """

    def __init__(self, algorithm, n_neighbors=10, unlabeled=-1):
        if algorithm not in GRAPHLEARNING_ALGORITHMS:
            raise ValueError(f"algorithm must be one of {sorted(GRAPHLEARNING_ALGORITHMS)}")
        self.algorithm = algorithm
        self.n_neighbors = n_neighbors
        self.unlabeled = unlabeled

    def fit(self, X, y):
        if not graphlearning_available():
            raise ImportError(
                "graphlearning is not installed: `pip install graphlearning` (a source "
                "distribution: it needs a C++ compiler)"
            )
        import graphlearning as gl
        from sklearn.neighbors import NearestNeighbors

        X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
        tic = time.perf_counter()
        # GraphLearning counts each point as its own first neighbour (k + 1 columns)
        search = NearestNeighbors(n_neighbors=self.n_neighbors + 1).fit(X)
        distances, indices = search.kneighbors(X)
        W = gl.weightmatrix.knn(X, self.n_neighbors, knn_data=(indices, distances))
        self.graph_seconds_ = time.perf_counter() - tic
        labeled = np.flatnonzero(y != self.unlabeled)
        self.classes_, codes = np.unique(y[labeled], return_inverse=True)
        model = getattr(gl.ssl, self.algorithm)(W)
        self.transduction_ = self.classes_[model.fit_predict(labeled, codes)]
        return self
