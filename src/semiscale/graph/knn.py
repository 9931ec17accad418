"""k-nearest-neighbour search: exact (k-d tree, blocked brute force) and approximate (HNSW).

All searches return the ``k`` nearest *other* points of every row of ``X`` (the query set is the
data set), sorted by increasing Euclidean distance.  The point itself is removed **by index**, not
by a zero distance, so an exact duplicate of a point is a legitimate neighbour at distance 0.

Search methods (``method=``) and the backend each resolves to:

================  =========================================================================
``"exact"``       ``"kdtree"`` (scipy ``cKDTree``) when ``d <= KDTREE_MAX_DIM``, otherwise
                  ``"brute"``: BLAS-blocked ``‖a‖² + ‖b‖² − 2 a·b`` under ``memory_budget``.
``"approximate"`` ``"hnsw"``: an HNSW index of voyager (``pip install semiscale[ann]``,
                  wheels only), or of hnswlib with ``ann_library="hnswlib"``.
``"auto"``        ``"kdtree"`` when ``d <= KDTREE_MAX_DIM``; otherwise ``"brute"`` when the
                  brute-force work ``n² (d + 40)`` is at most ``AUTO_BRUTE_MAX_WORK`` (about
                  1 s on 2 cores) or the ANN library is missing, ``"hnsw"`` beyond.  An HNSW
                  result whose spot-checked recall is below ``AUTO_MIN_RECALL`` is redone by
                  brute force (see :func:`search`).
================  =========================================================================

The HNSW library is voyager by measurement: an hnswlib descendant with wheels (hnswlib needs a
C++ compiler), the same graphs in 1.3–1.6 times hnswlib's CPU time
(``benchmarks/results/ann_wheels/``); the HNSW parameters and the thresholds are chosen in
``benchmarks/results/ann_choice/`` and ``benchmarks/results/graph/``.  On 2 cores: the k-d tree
finds the 1M-point two-moons graph (k = 6) in about 2 s, far faster than HNSW in 2-D (k = 10:
4 s against 44–95 s of CPU time for the HNSW libraries); brute force is exact and about as fast as
HNSW for about a second of work (usps, 7,291 × 256: 0.7 s vs 0.3–0.4 s for HNSW); beyond, HNSW
reaches recall ≥ 0.99 several times faster (a9a, 32,561 × 123: ~2 s vs ~5 s).  Brute force costs
about ``n² (0.04 d + 1.5)`` ns on 2 cores (a GEMM of ``2d`` flops per pair plus the selection),
hence the work measure ``n² (d + 40)``.  Voyager found the graphs of hnswlib; faiss-cpu's
``IndexHNSWFlat`` (about voyager's CPU time; its OpenMP threads spin on a busy machine) and usearch
(more CPU) reached 0.001–0.002 lower recall; pynndescent needs 45–75 s of numba compilation in
every fresh process (see ``benchmarks/results/ann_wheels/``).
HNSW fails on data with massive ties and duplicates: on w8a (binary, 30 % duplicate rows) its
recall@8 is about 0.3–0.5, hence the spot check.
"""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.spatial import cKDTree

from .._arrays import is_dask_array
from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._pairs import _check_magnitude
from .._parallel import resolve_n_jobs
from .._progress import stage
from .._random import as_random_state
from .._validation import check_X
from ..linalg.streaming import _check_stop, _run_parallel
from ._brute import _drop_self, _kneighbors_brute, _to_dense
from ._hnsw import (
    ANN_LIBRARIES,
    PILOT_SIZE,
    RECALL_SAMPLE,
    _kneighbors_hnsw,
    ann_available,
    ann_hint,
    check_ann_library,
    estimate_recall,
    pilot_recall,
)

__all__ = [
    "ANN_LIBRARIES",
    "AUTO_BRUTE_MAX_WORK",
    "AUTO_MIN_RECALL",
    "LowRecallWarning",
    "KDTREE_MAX_DIM",
    "METHODS",
    "kneighbors",
    "resolve_method",
    "resolve_n_jobs",
    "search",
]

#: Largest dimension searched with a k-d tree (its cost grows like 2**d beyond that).
KDTREE_MAX_DIM = 15
#: Largest brute-force work ``n² (d + 40)`` that ``method="auto"`` searches exactly (usps:
#: 1.6e10, searched exactly; a9a: 1.7e11, approximately).
AUTO_BRUTE_MAX_WORK = 2.5e10
#: Public method names accepted by :func:`kneighbors`.
METHODS = ("auto", "exact", "approximate")
#: Smallest estimated recall that ``method="auto"`` accepts from approximate search.
AUTO_MIN_RECALL = 0.9


class LowRecallWarning(UserWarning):
    """An approximate kNN search found too few of the true neighbours (see ``AUTO_MIN_RECALL``).

    Data with many exact ties or duplicates (binary sparse sets such as w8a) are hard for HNSW:
    use ``method="exact"`` (``method="auto"`` switches to it by itself).
    """


def _ann_available(library=None) -> bool:
    return ann_available(library)


def resolve_method(method: str, n_samples: int, n_features: int, ann_library=None) -> str:
    """Backend (``"kdtree"``, ``"brute"`` or ``"hnsw"``) that ``method`` uses for an n×d ``X``.

    ``ann_library`` (one of ``ANN_LIBRARIES``; None = voyager) is the HNSW library.

    Raises
    ------
    ValueError
        For an unknown ``method`` or ``ann_library``.
    ImportError
        For ``method="approximate"`` when the ANN library is not installed.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    library = check_ann_library(ann_library)
    if method == "approximate":
        if not _ann_available(library):
            raise ImportError(ann_hint(library))
        return "hnsw"
    if n_features <= KDTREE_MAX_DIM:
        return "kdtree"
    work = float(n_samples) ** 2 * (n_features + 40)
    if method == "exact" or work <= AUTO_BRUTE_MAX_WORK or not _ann_available(library):
        return "brute"
    return "hnsw"


def _check_n_neighbors(n_neighbors, n_samples: int) -> int:
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)):
        raise ValueError(f"n_neighbors must be an integer, got {n_neighbors!r}")
    if n_neighbors < 1:
        raise ValueError(f"n_neighbors must be at least 1, got {n_neighbors}")
    if n_neighbors >= n_samples:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of samples "
            f"({n_samples}): each point needs n_neighbors other points; lower n_neighbors"
        )
    return int(n_neighbors)


def kneighbors(
    X,
    n_neighbors: int,
    *,
    method: str = "auto",
    memory_budget=None,
    random_state=None,
    n_jobs: int | None = None,
    ann_library=None,
):
    """The ``n_neighbors`` nearest other points of every point of ``X``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Points, finite.  Sparse input is searched by sparse brute force, or densified first when
        the dense copy is small (``n·d`` floats within a quarter of ``memory_budget``).
    n_neighbors : int
        ``k``, with ``1 <= k < n_samples``.
    method : {"auto", "exact", "approximate"}
        See the module docstring.  ``"approximate"`` raises ImportError without the ANN library;
        ``"auto"`` then falls back to exact search.  Approximate results are spot-checked
        against an exact search of 256 points (see :func:`search`).
    memory_budget : int, str or None
        Bytes for the temporaries of the brute-force search (see
        :func:`semiscale._memory.parse_memory_budget`); None = 25 % of available memory.
    random_state : int, RandomState, Generator or None
        Seeds the levels of the HNSW graph (approximate search only; exact search is
        deterministic).  Threads inserting points concurrently make the approximate result
        vary between runs, so a seed (not None) builds the index on one thread and queries it on
        ``n_jobs`` threads: the same seed gives the same graph in any process, about 1.6× slower
        to build with 2 threads (:func:`semiscale.graph._hnsw.build_threads`); None builds on
        ``n_jobs`` threads, faster but not reproducible.  On data with many
        tied distances the variation is large: two 2-thread builds of connect-4's 8-NN graph
        (47,290 points of 0/1/2 features) differed in 38 % of the Laplacian's entries, where
        tied neighbours were swapped; two 1-thread builds were identical.
    n_jobs : int or None
        Search threads, as scikit-learn reads ``n_jobs``: None = 1 (unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context), -1 = all cores (see
        :func:`semiscale._parallel.resolve_n_jobs`).
    ann_library : {"voyager", "hnswlib"} or None
        HNSW library of the approximate search; None = ``"voyager"`` (wheels on every platform,
        the ``ann`` extra).  ``"hnswlib"`` (source only, needs a C++ compiler) gives the same
        graphs at about the same speed (``benchmarks/results/ann_wheels/``).

    Returns
    -------
    distances : ndarray of float64, shape (n_samples, n_neighbors)
        Euclidean distances ``‖x_i − x_j‖``, ascending along each row.
    indices : ndarray of intp, shape (n_samples, n_neighbors)
        Neighbour indices, never ``i`` itself in row ``i``.

    Raises
    ------
    ValueError
        NaN/inf in ``X``, ``n_neighbors < 1`` or ``n_neighbors >= n_samples``, unknown method.
    """
    distances, indices, _ = search(
        X,
        n_neighbors,
        method=method,
        memory_budget=memory_budget,
        random_state=random_state,
        n_jobs=n_jobs,
        ann_library=ann_library,
    )
    return distances, indices


def search(
    X,
    n_neighbors: int,
    *,
    method="auto",
    memory_budget=None,
    random_state=None,
    n_jobs=None,
    ann_library=None,
):
    """:func:`kneighbors` that also says how the search went.

    Every approximate result is spot-checked: ``RECALL_SAMPLE`` (256) random points are searched
    exactly and the recall@k of the approximate table on them is estimated.  Below
    ``AUTO_MIN_RECALL`` (0.9), ``method="auto"`` redoes the search exactly (the HNSW time is
    lost, the graph is right) and ``method="approximate"`` keeps its result but issues a
    :class:`LowRecallWarning`.  Before a large approximate search (``n ≥ 2·PILOT_SIZE``),
    ``"auto"`` first runs a pilot HNSW search on ``PILOT_SIZE`` (4,000) random points and goes
    exact at once when the pilot's recall is already below ``AUTO_MIN_RECALL`` (about 0.5 s;
    w8a's pilot recall is about 0.25, a9a's 0.99).

    Approximate search on sparse ``X`` needs a dense float32 copy; when it does not fit in half
    of ``memory_budget``, ``"auto"`` searches exactly and ``"approximate"`` raises
    :class:`semiscale._memory.MemoryBudgetError`.

    Returns
    -------
    distances, indices : ndarray of shape (n_samples, n_neighbors)
        As :func:`kneighbors`.
    info : dict
        ``"backend"``: the search that produced the result (``"kdtree"``, ``"brute"`` or
        ``"hnsw"``); ``"recall"``: the estimated recall of the approximate search (None when
        none ran); ``"fallback"``: whether ``"auto"`` replaced a low-recall approximate result;
        ``"pilot_recall"``: the recall of ``"auto"``'s pilot search (None when none ran);
        ``"ann_library"``: the HNSW library of the approximate search (None when none ran).
    """
    distributed = is_dask_array(X)
    if distributed:
        # imported here: semiscale.backends._dask_knn imports this package's search kernels
        from ..backends._dask_knn import (
            check_dask_X,
            check_distributed_ann_library,
            dask_pilot_rows,
        )

        X = check_dask_X(X)
    else:
        X = check_X(X)
    n, d = X.shape
    k = _check_n_neighbors(n_neighbors, n)
    random_state = as_random_state(random_state)  # a Generator too (semiscale._random)
    library = check_ann_library(ann_library)
    backend = resolve_method(method, n, d, library)
    if backend == "hnsw" and sp.issparse(X):
        budget = parse_memory_budget(memory_budget)
        if 4 * n * d > budget // 2:
            if method == "auto":
                backend = "brute"
            else:
                raise MemoryBudgetError(
                    f"approximate search densifies sparse X: {format_bytes(4 * n * d)} does not "
                    f"fit in half of memory_budget={format_bytes(budget)}; raise memory_budget "
                    "or use method='exact'"
                )
    workers = resolve_n_jobs(n_jobs)
    options = {"memory_budget": memory_budget, "n_jobs": workers}
    info = {
        "backend": backend,
        "recall": None,
        "fallback": False,
        "pilot_recall": None,
        "ann_library": library if backend == "hnsw" else None,
    }
    if distributed and backend == "hnsw":
        check_distributed_ann_library(library)
    if backend == "hnsw" and method == "auto" and n >= 2 * PILOT_SIZE:
        info["pilot_recall"] = pilot_recall(
            dask_pilot_rows(X, random_state) if distributed else X,
            k,
            random_state=random_state,
            ann_library=library,
            **options,
        )
        if info["pilot_recall"] < AUTO_MIN_RECALL:
            backend = info["backend"] = "brute"
    if distributed:
        return _search_dask(X, k, backend, method, info, random_state, options)
    if backend == "hnsw":
        distances, indices = _kneighbors_hnsw(
            X, k, random_state=random_state, ann_library=library, **options
        )
    else:
        distances, indices = _BACKENDS[backend](X, k, random_state=random_state, **options)
    if backend == "hnsw":
        info["recall"] = estimate_recall(X, distances, random_state=random_state, **options)
        if info["recall"] < AUTO_MIN_RECALL:
            if method == "auto":
                distances, indices = _kneighbors_brute(X, k, **options)
                info.update(backend="brute", fallback=True)
            else:
                _warn_low_recall(info["recall"], stacklevel=4)
    return distances, indices, info


def _search_dask(X, k, backend, method, info, random_state, options):
    """:func:`search` of a dask array ``X`` on its workers (:mod:`semiscale.backends._dask_knn`).

    The same decisions as for a NumPy ``X``: the backend resolved for the whole of ``X`` runs
    on every chunk pair, an approximate table is spot-checked (the sample searched exactly
    across the chunks) and, below ``AUTO_MIN_RECALL``, redone exactly (``"auto"``) or warned
    about (``"approximate"``).
    """
    from ..backends._dask_knn import dask_estimate_recall, dask_kneighbors

    budget = options["memory_budget"]
    distances, indices, largest = dask_kneighbors(
        X,
        k,
        backend,
        memory_budget=budget,
        random_state=random_state,
        n_jobs=options["n_jobs"],
        ann_library=info["ann_library"],
    )
    # the tasks refused NaN, inf and overflow chunk by chunk; underflow needs the largest |x|
    _check_magnitude(np.array([largest], dtype=X.dtype), X.shape[1], "X")
    if backend == "hnsw":
        info["recall"] = dask_estimate_recall(
            X, distances, random_state=random_state, memory_budget=budget
        )
        if info["recall"] < AUTO_MIN_RECALL:
            if method == "auto":
                distances, indices, _ = dask_kneighbors(X, k, "brute", memory_budget=budget)
                info.update(backend="brute", fallback=True)
            else:
                _warn_low_recall(info["recall"], stacklevel=5)
    return distances, indices, info


def _warn_low_recall(recall: float, stacklevel: int) -> None:
    warnings.warn(
        f"approximate kNN search reached an estimated recall of {recall:.2f} "
        f"(< {AUTO_MIN_RECALL}) on {RECALL_SAMPLE} points checked exactly; data with "
        "many ties or duplicates are hard for HNSW: use method='exact' or 'auto'",
        LowRecallWarning,
        stacklevel=stacklevel,
    )


def _kneighbors_kdtree(X, k, *, memory_budget=None, n_jobs=1, random_state=None):
    """Exact search with scipy's ``cKDTree`` (sliding-midpoint tree, queried by ``n_jobs``).

    The points are queried in the tree's leaf order (``tree.indices``), so that consecutive
    queries visit the same nodes: about twice as fast as the input order on 1M points.

    The threads are ours, not scipy's ``workers=``: scipy joins its threads in the calling
    thread, so Ctrl-C raised there while they still wrote into the result arrays, which were
    then freed: the process died of a segmentation fault (issue 26).  Here every thread queries
    blocks of :data:`KDTREE_BLOCK_SECONDS` of work with ``workers=1`` (the query releases the
    GIL) into arrays that outlive them, and the calling thread waits in slices, so Ctrl-C stops
    the search after the blocks being queried (see :func:`_query_blocks`).
    """
    X = np.asarray(_to_dense(X), dtype=np.float64)
    tree = cKDTree(X, balanced_tree=False, compact_nodes=False)
    with stage(f"kNN search (k-d tree, {X.shape[0]} points)"):
        dist, ind = _query_blocks(tree, X, k + 1, n_jobs)
    return _drop_self(dist, ind)


#: Target seconds of one k-d-tree query block: short enough that Ctrl-C waits for no longer,
#: long enough that the ~20 µs of a ``query`` call stay negligible.  A query costs from about
#: 2 µs (2-D) to 16 ms (15-D Gaussian, k = 10), so block sizes adapt (:func:`_query_blocks`).
KDTREE_BLOCK_SECONDS = 0.05


def _query_blocks(tree, X, kp1: int, workers: int):
    """``tree.query(X, kp1)`` in leaf order, on ``workers`` threads, interruptibly.

    Each thread takes the next block of the leaf order from a shared cursor; it starts with 16
    queries and doubles or halves its block so that one block takes about
    :data:`KDTREE_BLOCK_SECONDS`.  Results go straight into ``(n, kp1)`` arrays in input order.
    """
    n = X.shape[0]
    order = tree.indices
    dist = np.empty((n, kp1), dtype=np.float64)
    ind = np.empty((n, kp1), dtype=np.intp)
    cursor = [0]
    lock = threading.Lock()

    def work(_, stop):
        size = 16
        while True:
            _check_stop(stop)
            with lock:
                start = cursor[0]
                cursor[0] = stop_at = min(n, start + size)
            if start >= n:
                return
            rows = order[start:stop_at]
            tic = time.perf_counter()
            d, i = tree.query(X[rows], kp1, workers=1)
            dist[rows], ind[rows] = d, i
            elapsed = time.perf_counter() - tic
            if elapsed < KDTREE_BLOCK_SECONDS / 2:
                size *= 2
            elif elapsed > 2 * KDTREE_BLOCK_SECONDS and size > 1:
                size //= 2

    if workers <= 1:
        work(None, None)
    else:
        _run_parallel(work, range(workers), workers)
    return dist, ind


_BACKENDS = {
    "kdtree": _kneighbors_kdtree,
    "brute": _kneighbors_brute,
    "hnsw": _kneighbors_hnsw,
}
