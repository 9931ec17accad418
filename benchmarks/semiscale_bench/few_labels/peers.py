"""GraphLearning's Laplace, Poisson learning and MBO methods behind the benchmark's interface.

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

Issue 32 adds its two volume-constrained MBO methods: ``poisson_mbo`` (Poisson learning's
source term, then MBO iterations whose threshold keeps each class's volume at its prior; the
Poisson-learning paper's Algorithm) and ``volume_mbo`` (Jacobs, Merkurjev & Esedoḡlu's auction
dynamics, a C extension).  Both need the class priors, as GraphLearning's own examples give
them (the true proportions, ``gl.utils.class_priors(labels)``); ``volume_mbo`` calls
``sys.exit`` without them and ``poisson_mbo`` fails in its volume projection, so the wrapper
refuses both first.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["GRAPHLEARNING_ALGORITHMS", "GraphLearningClassifier", "graphlearning_available"]

#: The benchmark's name for each GraphLearning model class (``graphlearning.ssl``).
GRAPHLEARNING_ALGORITHMS = {
    "laplace": "Laplace learning",
    "poisson": "Poisson learning",
    "poisson_mbo": "Poisson-MBO",
    "volume_mbo": "Volume-MBO",
}
#: Algorithms that cannot run without the class priors: volume_mbo exits the interpreter,
#: poisson_mbo's volume projection subtracts None (a TypeError after the Poisson solve).
NEEDS_PRIORS = ("poisson_mbo", "volume_mbo")


#: Algorithms not run on a graph with non-finite weights: on letter's (NaN: its self-tuning
#: scale is 0 at points with 10 or more exact duplicates) volume_mbo returned at 4.0 % in
#: 2.4-3.3 s six times, then one fit (5 labels per class, trial 1) had not returned after
#: 5 minutes.
HANGS_ON_NAN = ("volume_mbo",)


def graphlearning_available() -> bool:
    """Whether ``import graphlearning`` would succeed."""
    import importlib.util

    return importlib.util.find_spec("graphlearning") is not None


class GraphLearningClassifier:
    """``fit(X, y)`` then ``transduction_``: GraphLearning's model on its 10-NN graph.

    Parameters
    ----------
    algorithm : {"laplace", "poisson", "poisson_mbo", "volume_mbo"}
        The model class of ``graphlearning.ssl``, at its defaults but for ``class_priors``.
    class_priors : array of shape (n_classes,), default=None
        Each class's share of the points, in the order of the sorted labels (``classes_``):
        GraphLearning's ``class_priors`` (it codes the labels 0..k-1 in that order).
        Normalized to sum to one.  Required by the MBO methods, whose thresholds keep each
        class's volume near its prior; with the others, GraphLearning's ``predict`` projects
        the scores to those volumes.
    n_neighbors : int, default=10
    unlabeled : int, default=-1
        The marker of unlabeled points in ``y``.
    """

    def __init__(self, algorithm, class_priors=None, n_neighbors=10, unlabeled=-1):
        if algorithm not in GRAPHLEARNING_ALGORITHMS:
            raise ValueError(f"algorithm must be one of {sorted(GRAPHLEARNING_ALGORITHMS)}")
        if class_priors is None and algorithm in NEEDS_PRIORS:
            raise ValueError(
                f"GraphLearning's {algorithm} needs class_priors (it cannot run without "
                "them): pass each class's share of the points, e.g. "
                "np.bincount(y) / y.size"
            )
        self.algorithm = algorithm
        self.class_priors = class_priors
        self.n_neighbors = n_neighbors
        self.unlabeled = unlabeled

    def _priors(self):
        """``class_priors`` checked against ``classes_`` and normalized (None: none given)."""
        if self.class_priors is None:
            return None
        priors = np.asarray(self.class_priors, dtype=np.float64)
        k = self.classes_.size
        if priors.shape != (k,) or not np.all(np.isfinite(priors)) or np.any(priors <= 0):
            raise ValueError(
                f"class_priors must be {k} positive numbers, one per labeled class "
                f"{self.classes_.tolist()} in that order; got {priors.tolist()}: give every "
                "class a label, and the priors in the sorted labels' order"
            )
        return priors / priors.sum()

    def fit(self, X, y):
        if not graphlearning_available():
            raise ImportError(
                "graphlearning is not installed: `pip install graphlearning` (a source "
                "distribution: it needs a C++ compiler)"
            )
        import graphlearning as gl
        from sklearn.neighbors import NearestNeighbors

        X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
        labeled = np.flatnonzero(y != self.unlabeled)
        self.classes_, codes = np.unique(y[labeled], return_inverse=True)
        priors = self._priors()  # before the graph: a wrong length fails at once
        tic = time.perf_counter()
        # GraphLearning counts each point as its own first neighbour (k + 1 columns)
        search = NearestNeighbors(n_neighbors=self.n_neighbors + 1).fit(X)
        distances, indices = search.kneighbors(X)
        W = gl.weightmatrix.knn(X, self.n_neighbors, knn_data=(indices, distances))
        self.graph_seconds_ = time.perf_counter() - tic
        bad = np.count_nonzero(~np.isfinite(W.data))
        if self.algorithm in HANGS_ON_NAN and bad:
            raise ValueError(
                f"GraphLearning's 10-NN weights are not finite here ({bad} edges: points with "
                f"{self.n_neighbors} or more exact duplicates, a zero distance to the last "
                f"neighbour); its {self.algorithm} (a C extension) may then not return: not run"
            )
        extra = {} if priors is None else {"class_priors": priors}
        model = getattr(gl.ssl, self.algorithm)(W, **extra)
        try:
            predicted = model.fit_predict(labeled, codes)
        except SystemExit as exc:  # GraphLearning reports some errors with sys.exit
            raise RuntimeError(f"GraphLearning's {self.algorithm} exited: {exc}") from None
        self.transduction_ = self.classes_[predicted]
        return self
