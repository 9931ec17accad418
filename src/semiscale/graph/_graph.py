"""The :class:`KNNGraph` estimator: kNN search → edge weights → symmetric W → Laplacian."""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._arrays import is_dask_array
from .._memory import check_fits
from .._progress import log, stage, verbosity
from .._random import RANDOM_STATE_CONSTRAINT
from .._validation import validate_X
from ._hnsw import ANN_LIBRARIES
from .knn import METHODS, search
from .laplacian import connected_components, degree, laplacian
from .weights import (
    BANDWIDTHS,
    SYMMETRIZE,
    WEIGHTS,
    knn_adjacency,
    kth_gaussian_weights,
    resolve_bandwidth,
    resolve_local_scale,
    self_tuning_weights,
)

__all__ = ["DisconnectedGraphWarning", "KNNGraph"]


class DisconnectedGraphWarning(UserWarning):
    """Some points lie in connected components of the graph without a labeled point.

    Labels cannot propagate between components.  A graph with several components is fine
    when each holds a labeled point (two moons with one label per moon); the points of a
    component without one get no label through the graph: the kernel models predict them from
    the ambient (kernel) term alone, graph learning gives them the class prior.  The estimators
    that read labels warn, naming how many points are affected; raise the graph's
    ``n_neighbors`` (or use ``symmetrize="union"`` for a mutual graph), or label a point of
    each component.  A :class:`KNNGraph` alone, which sees no labels, does not warn: its
    ``n_components_`` says how many components it has.
    """


def component_labels(laplacian, graph=None) -> np.ndarray:
    """The connected component of each vertex of the graph of ``laplacian``.

    An edge where an off-diagonal entry is non-zero (a power ``L^p`` has the components of
    ``L``); a fitted ``graph``'s own ``component_labels_`` are reused when they fit.
    """
    labels = getattr(graph, "component_labels_", None)
    if labels is not None and labels.shape[0] == laplacian.shape[0]:
        return labels
    off = sp.csr_matrix(laplacian, copy=True)
    off.setdiag(0)
    off.eliminate_zeros()
    return connected_components(off)[1]


#: What a kernel model's points out of the labels' reach get (:func:`warn_unreached`).
KERNEL_ONLY = ", so their predictions come from the kernel (ambient) term alone"


def warn_unreached(laplacian, labeled, *, graph=None, consequence: str, stacklevel: int) -> int:
    """Warn when points lie in connected components without a labeled point; return their number.

    ``labeled`` is the boolean mask of the labeled rows of ``laplacian``; ``graph`` the fitted
    graph (None for a Laplacian passed to ``fit``); ``consequence`` says what those points get
    instead (", so ...").  Components that each hold a label, of any class, are fine: nothing is
    said about them.
    """
    components = component_labels(laplacian, graph)
    has_label = np.zeros(components.max() + 1, dtype=bool)
    has_label[components[np.asarray(labeled, dtype=bool)]] = True
    unreached = ~has_label[components]
    n_unreached = int(np.count_nonzero(unreached))
    if n_unreached:
        k = getattr(graph, "n_neighbors", None)
        fix = (
            f"Raise the graph's n_neighbors (now {k})"
            if k is not None
            else "Build the graph with more neighbours"
        )
        if getattr(graph, "symmetrize", None) == "mutual":
            fix += ' or use symmetrize="union"'
        warnings.warn(
            f"{n_unreached} of {components.size} training points (none of them labeled) lie in "
            f"{np.unique(components[unreached]).size} connected component(s) of the graph "
            f"without a labeled point: labels cannot reach them through the graph{consequence}. "
            f"{fix}, or label a point of each component",
            DisconnectedGraphWarning,
            stacklevel=stacklevel + 1,
        )
    return n_unreached


#: Bytes per entry of the ``n × (k + 1)`` kNN table that a graph holds at its peak: the table
#: (distances and indices), the weights, the symmetric adjacency and the Laplacian.  Measured
#: by tracemalloc over ``KNNGraph(n_neighbors=k).fit``: 64–75 bytes per entry with the k-d tree
#: (n = 20,000–50,000, d = 2–10, k = 8–30); brute force adds its blocks, which it fits into
#: the same budget.
GRAPH_BYTES_PER_ENTRY = 80


def _check_heat_underflow(distances, values, bandwidth, sigma: float) -> None:
    """Name the cause when heat weights ``exp(−d²/(2σ²))`` of distinct points underflow to 0.

    Before (issue 26), ``bandwidth=1e-6`` lost every edge this way; the fit then warned
    "raise n_neighbors" and failed with "zero trace (no edges)", never naming the bandwidth.
    """
    lost = (values == 0) & (distances > 0)
    if not lost.any():
        return
    positive = distances[distances > 0]
    advice = (
        f"use a bandwidth near the neighbour distances (their median is "
        f"{np.median(positive):.3g}) or a rule such as bandwidth='contrast' (the default)"
    )
    if lost.sum() == positive.size:
        raise ValueError(
            f"bandwidth={bandwidth!r} is too small for these points: every kNN edge weight "
            f"exp(-d²/(2·bandwidth²)) underflows to 0 (the shortest neighbour distance, "
            f"{positive.min():.3g}, is {positive.min() / sigma:.3g} bandwidths), so the graph has "
            f"no edges; {advice}"
        )
    if isinstance(bandwidth, str):
        return  # a rule's far outliers: not the user's number to fix
    warnings.warn(
        f"bandwidth={bandwidth!r}: {lost.sum()} of {positive.size} kNN edge weights "
        f"exp(-d²/(2·bandwidth²)) underflow to 0 and those edges are lost; {advice}",
        UserWarning,
        stacklevel=4,
    )


class KNNGraph(BaseEstimator):
    r"""Symmetric k-nearest-neighbour graph and its Laplacian.

    ``fit(X)`` finds the ``n_neighbors`` nearest other points of every point, weighs each
    directed edge (heat: :math:`w_{ij} = \exp(-d_{ij}^2 / (2\sigma^2))`, self-tuning:
    :math:`w_{ij} = \exp(-d_{ij}^2 / (\sigma_i \sigma_j))`, kth-gaussian:
    :math:`w_{ij} = \exp(-4 d_{ij}^2 / \sigma_i^2)`, binary: 1), makes the
    adjacency symmetric (``"average"``: :math:`W = (A + A^T)/2`, ``"union"``:
    :math:`W = \max(A, A^T)`, ``"mutual"``: :math:`W = \min(A, A^T)`), and forms the Laplacian
    :math:`L = (D - W)^p + \text{ridge}\cdot I` or, with ``normalized=True``,
    :math:`L = (I - D^{-1/2} W D^{-1/2})^p + \text{ridge}\cdot I`.

    Parameters
    ----------
    n_neighbors : int, default=8
        ``k``, neighbours per point (not counting the point itself); ``1 <= k < n_samples``.
    weights : {"heat", "self-tuning", "kth-gaussian", "binary"}, default="heat"
        Edge weights.  Paper 000's ``exp(-d²/4)`` is ``weights="heat", bandwidth=sqrt(2)``.
        ``"self-tuning"`` (Zelnik-Manor & Perona 2004, the local scaling of Calder's Poisson
        learning experiments) gives every point ``i`` its own scale ``σ_i``, its distance to its
        ``n_neighbors``-th neighbour, and weighs an edge ``exp(-d_ij² / (σ_i σ_j))``: dense
        regions get narrow kernels, sparse ones wide, and the weights do not change when ``X``
        is multiplied by a constant.  A point with ``σ_i = 0`` (at least ``n_neighbors`` exact
        duplicates) gets the smallest positive scale, with a warning.  ``bandwidth`` is ignored.
        ``"kth-gaussian"`` is GraphLearning's graph (Calder et al., Poisson learning):
        ``exp(-4 d_ij² / σ_i²)`` with the edge's source scale, best with
        ``symmetrize="average"`` as there.  ``"heat"`` is the default by measurement: the
        kth-gaussian graph lifts Poisson learning by 0.7 to 1.9 points on usps and mnist, but
        links the two moons (10⁵–10⁶ points, one label per class: 81 % against 99.9 %;
        ``benchmarks/results/graph_kth_gaussian/``), as ``"self-tuning"`` does (79–82 %, ad
        hoc).
    bandwidth : {"contrast", "mean", "median", "mean-square", "kth"} or float, default="contrast"
        Heat-kernel ``σ``.  ``"contrast"`` sets ``2σ² = d̄_k² − d̄_1²`` (``d̄_1``, ``d̄_k``: the
        mean distances to the nearest and to the k-th neighbour), so that an edge as long as
        the mean nearest one weighs ``e`` times one as long as the mean k-th one, whatever the
        dimension.  ``"mean"`` is the mean length of all directed kNN edges, which flattens
        the weights where the distances concentrate (usps and mnist, ``d̄_1 / d̄_k`` = 0.80 and
        0.83: contrast 1.2).  ``"contrast"`` is the default by measurement (with
        ``symmetrize="average"``, against ``"mean"`` with ``"union"``): on mnist at one label
        per class Laplace learning with CMN 83.6 % against 76.1 %, Poisson learning 81.4 %
        against 75.5 %, two moons unchanged (``benchmarks/results/graph_bandwidth/``).
        ``"mean-square"`` sets ``2σ²`` to the mean squared edge length (paper 001's
        ``exp(−d²/β_g)``); ``"kth"`` gives ``exp(−4 d² / d̄_k²)``, GraphLearning's width with one
        scale for all points (as accurate on digits, but the Laplacian systems of large
        low-dimensional sets become ill-conditioned: Poisson learning on 100,000 two-moons
        points stops unconverged at the 1,000-iteration cap, 37.9 s, where ``"contrast"`` takes
        22 iterations, 1.5 s).  Only used by ``weights="heat"``.
    symmetrize : {"average", "union", "mutual"}, default="average"
        ``"average"``: ``W = (A + Aᵀ)/2``, an edge listed by one end point only keeps half its
        weight (GraphLearning's); ``"union"`` (the default before): ``max(A, Aᵀ)``, full weight;
        ``"mutual"``: only edges listed by both end points.
    normalized : bool, default=False
        Symmetric normalized Laplacian (isolated vertices get a zero row).
    power : int, default=1
        Iterated Laplacian ``L^p``.
    ridge : float, default=0.0
        Added to the diagonal of the Laplacian.
    method : {"auto", "exact", "approximate"}, default="auto"
        Neighbour search (see :mod:`semiscale.graph.knn`).
    ann_library : {"voyager", "hnswlib"} or None, default=None
        HNSW library of an approximate search; None = ``"voyager"`` (the ``ann`` extra, wheels
        only).  ``"hnswlib"`` is an option for those who have it (it needs a C++ compiler).
    memory_budget : int, str or None, default=None
        Bytes for the graph (None = 25 % of available memory): its kNN table, weights,
        adjacency and Laplacian (``GRAPH_BYTES_PER_ENTRY`` = 80 bytes per entry of the
        ``n × (k + 1)`` table), checked before the search, and the brute-force search's blocks.
        A budget that cannot hold them raises ``MemoryBudgetError`` naming what is needed.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the HNSW graph of an approximate search (exact search is deterministic).  A seed
        makes the graph identical across runs and processes (the index is then built on one
        thread, queried on ``n_jobs``); None builds it on ``n_jobs`` threads, not reproducibly.
        An estimator passes its own ``random_state`` to a graph that leaves this at None.
    n_jobs : int or None, default=None
        Search threads, as scikit-learn reads ``n_jobs``: None means 1 unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context, -1 means all cores.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    adjacency_ : scipy.sparse.csr_matrix of float64, shape (n_samples, n_samples)
        Symmetric weights ``W``, zero diagonal.
    laplacian_ : scipy.sparse.csr_matrix of float64, shape (n_samples, n_samples)
    degree_ : ndarray of shape (n_samples,)
        ``d_i = Σ_j W_ij``.
    n_components_ : int
        Connected components of the graph.  An estimator that fits the graph warns
        (:class:`DisconnectedGraphWarning`) when one of them holds no labeled point.
    component_labels_ : ndarray of int, shape (n_samples,)
    bandwidth_ : float or None
        ``σ`` used by the heat weights (None for binary and self-tuning weights).
    local_scale_ : ndarray of shape (n_samples,) or None
        Per-point scales ``σ_i`` of self-tuning weights (None for heat and binary weights).
    trace_ : float
        ``tr(laplacian_)``, the normaliser of the intrinsic term ``fᵀ L f / tr(L)``.
    search_method_ : str
        Search that produced the graph: ``"kdtree"``, ``"brute"`` or ``"hnsw"`` (``"brute"`` also
        when ``method="auto"`` replaced a low-recall approximate search).
    search_ann_library_ : str or None
        HNSW library of the approximate search (None when none ran).
    search_recall_ : float or None
        Recall@k of the approximate search estimated on 256 points searched exactly (None when
        no approximate search ran).
    n_samples_fit_, n_features_in_ : int
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names of a pandas DataFrame ``X`` (only set when they are all strings).
    fit_time_ : float
        Seconds spent in ``fit``; ``timings_`` splits it into ``"search"`` (validation and kNN
        search), ``"weights"`` (bandwidth, weights, symmetric adjacency) and ``"laplacian"``
        (Laplacian, degrees, connected components).
    """

    def __init__(
        self,
        *,
        n_neighbors=8,
        weights="heat",
        bandwidth="contrast",
        symmetrize="average",
        normalized=False,
        power=1,
        ridge=0.0,
        method="auto",
        ann_library=None,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.bandwidth = bandwidth
        self.symmetrize = symmetrize
        self.normalized = normalized
        self.power = power
        self.ridge = ridge
        self.method = method
        self.ann_library = ann_library
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    #: scikit-learn's declarative parameter validation, checked at the start of ``fit``
    #: (``n_neighbors < n_samples`` is checked by the search, which knows n).
    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "weights": [StrOptions(set(WEIGHTS))],
        "bandwidth": [Interval(Real, 0, None, closed="neither"), StrOptions(set(BANDWIDTHS))],
        "symmetrize": [StrOptions(set(SYMMETRIZE))],
        "normalized": ["boolean"],
        "power": [Interval(Integral, 1, None, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "ann_library": [StrOptions(set(ANN_LIBRARIES)), None],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Build the graph of ``X`` (``y`` is ignored: the graph uses every point).

        Parameters
        ----------
        X : array-like, sparse matrix or dask array of shape (n_samples, n_features)
            A ``dask.array`` chunked by rows is searched on the Dask workers (the default
            client), no worker holding all of it (:mod:`semiscale.backends._dask_knn`); the
            graph equals the one of ``X.compute()`` (exact search: the same distances and, but
            for ties, the same neighbours).

        Returns
        -------
        self
        """
        start = time.perf_counter()
        if is_dask_array(X):
            # searched where it lives (semiscale.backends._dask_knn): only the n x k table
            # comes to the client, which builds the weights and the Laplacian from it
            from ..backends._dask_knn import check_dask_X

            X = check_dask_X(X)
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
        else:
            X = validate_X(self, X, reset=True)
        n, d = X.shape
        check_fits(
            {
                f"the {n}x{self.n_neighbors} kNN table, weights, adjacency and Laplacian": (
                    GRAPH_BYTES_PER_ENTRY * n * (min(self.n_neighbors, n - 1) + 1)
                )
            },
            self.memory_budget,
            what=f"the kNN graph of {n} points",
            fix="lower n_neighbors",
        )
        with verbosity(self.verbose), stage(f"kNN graph of {n} points (k={self.n_neighbors})"):
            distances, indices, info = search(
                X,
                self.n_neighbors,
                method=self.method,
                ann_library=self.ann_library,
                memory_budget=self.memory_budget,
                random_state=self.random_state,
                n_jobs=self.n_jobs,
            )
        t_search = time.perf_counter()
        self.search_method_ = info["backend"]
        self.search_ann_library_ = info["ann_library"]
        self.search_recall_ = info["recall"]
        self.bandwidth_ = self.local_scale_ = None
        if self.weights == "self-tuning":
            self.local_scale_ = resolve_local_scale(distances)
            values = self_tuning_weights(distances, indices, self.local_scale_)
        elif self.weights == "kth-gaussian":
            self.local_scale_ = resolve_local_scale(distances)
            values = kth_gaussian_weights(distances, self.local_scale_)
        else:
            if self.weights == "heat":
                self.bandwidth_ = resolve_bandwidth(distances, self.bandwidth)
            values = WEIGHTS[self.weights](distances, self.bandwidth_)
            if self.weights == "heat":
                _check_heat_underflow(distances, values, self.bandwidth, self.bandwidth_)
        self.adjacency_ = knn_adjacency(indices, values, symmetrize=self.symmetrize)
        t_weights = time.perf_counter()
        self.laplacian_ = laplacian(
            self.adjacency_,
            normalized=self.normalized,
            power=self.power,
            ridge=self.ridge,
            memory_budget=self.memory_budget,
        )
        self.degree_ = degree(self.adjacency_)
        self.trace_ = float(self.laplacian_.diagonal().sum())
        self.n_components_, self.component_labels_ = connected_components(self.adjacency_)
        t_laplacian = time.perf_counter()
        self.n_samples_fit_ = n
        self.timings_ = {
            "search": t_search - start,
            "weights": t_weights - t_search,
            "laplacian": t_laplacian - t_weights,
        }
        self.fit_time_ = t_laplacian - start
        parts = ", ".join(f"{key} {value:.3f}s" for key, value in self.timings_.items())
        log(
            f"[KNNGraph] n={n} d={d} k={self.n_neighbors} ({self.search_method_}): "
            f"{self.adjacency_.nnz} edges, {self.n_components_} component(s); {parts}",
            self.verbose,
        )
        # No warning for several components: that is harmful only where a component holds no
        # labeled point, which the estimators that read labels check (warn_unreached).
        return self

    def fit_transform(self, X, y=None):
        """Build the graph of ``X`` and return its Laplacian: ``fit(X).laplacian_``.

        The graph is transductive, like scikit-learn's ``SpectralEmbedding`` and ``TSNE``: its
        Laplacian is defined on the fitted points only, so there is ``fit_transform`` but no
        ``transform`` (the graph of new points needs the old ones: build a new graph on all of
        them).  ``fit_transform`` makes a ``KNNGraph`` the last step of a scikit-learn
        ``Pipeline`` (e.g. after a ``StandardScaler``) whose output is the Laplacian to pass as
        ``fit(X, y, laplacian=L)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        laplacian : scipy.sparse.csr_matrix of float64, shape (n_samples, n_samples)
            ``laplacian_``, the same object.
        """
        return self.fit(X, y).laplacian_
