"""Approximate kNN with an HNSW index (optional dependency, imported on first use).

Private to :mod:`semiscale.graph.knn`.  Two HNSW libraries are supported (``ANN_LIBRARIES``):
``"voyager"`` (Spotify's hnswlib descendant; wheels for Linux, macOS and Windows, installed by
``pip install semiscale[ann]``) is the default, ``"hnswlib"`` (source only: needs a C++
compiler) is kept as an option.  Chosen by measurement: voyager finds hnswlib's graphs in
1.3–1.6 times its CPU time (``benchmarks/results/ann_wheels/``); the HNSW parameters:
``benchmarks/results/ann_choice/``.
"""

from __future__ import annotations

import numpy as np

from .._progress import progress
from .._random import check_random_state
from ._brute import _drop_self, _exact_sq_distances, _kneighbors_brute, _to_dense

#: HNSW graph degree, construction beam and (minimum) query beam.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 32
_DEFAULT_HNSW_SEED = 100  # hnswlib's own default
#: Points inserted into (or queried from) an HNSW index per library call: a fraction of a second
#: each, so that Ctrl-C and progress are not held up for the whole build.
HNSW_CHUNK = 8192
#: Query points of the exact spot check of an approximate search.
RECALL_SAMPLE = 256
#: Points of the pilot search that ``method="auto"`` runs before a large approximate search.
PILOT_SIZE = 4000

#: HNSW libraries that ``ann_library=`` accepts; the first is the default.
ANN_LIBRARIES = ("voyager", "hnswlib")
#: Library used when ``ann_library=None``.
DEFAULT_ANN_LIBRARY = ANN_LIBRARIES[0]

ANN_HINT = "approximate search needs voyager: pip install semiscale[ann]"
_HINTS = {
    "voyager": ANN_HINT,
    "hnswlib": "ann_library='hnswlib' needs hnswlib (source only, needs a C++ compiler): "
    "pip install semiscale[ann-hnswlib], or use the default ann_library='voyager'",
}


def check_ann_library(library) -> str:
    """``library`` (None = ``DEFAULT_ANN_LIBRARY``) validated against ``ANN_LIBRARIES``."""
    if library is None:
        return DEFAULT_ANN_LIBRARY
    if library not in ANN_LIBRARIES:
        raise ValueError(f"ann_library must be one of {ANN_LIBRARIES} or None, got {library!r}")
    return library


def ann_hint(library=None) -> str:
    """How to install ``library`` (None = the default)."""
    return _HINTS[check_ann_library(library)]


def ann_available(library=None) -> bool:
    """Whether ``library`` (None = the default, voyager) can be imported."""
    try:
        __import__(check_ann_library(library))
    except ImportError:
        return False
    return True


def estimate_recall(X, distances, *, random_state=None, memory_budget=None, n_jobs=1) -> float:
    """Recall@k of a kNN table, estimated on ``RECALL_SAMPLE`` random rows searched exactly.

    Recall is distance based: a returned neighbour counts when its distance is at most the exact
    ``k``-th distance (ties at the ``k``-th distance are all correct).
    """
    n, k = distances.shape
    rng = check_random_state(0 if random_state is None else random_state)
    rows = np.sort(rng.choice(n, size=min(n, RECALL_SAMPLE), replace=False))
    exact, _ = _kneighbors_brute(X, k, memory_budget=memory_budget, n_jobs=n_jobs, queries=rows)
    kth = exact[:, -1:]
    return float((distances[rows] <= kth * (1 + 1e-9) + 1e-12).mean())


def pilot_recall(
    X, k, *, random_state=None, memory_budget=None, n_jobs=1, ann_library=None
) -> float:
    """Estimated recall@k of HNSW on the kNN graph of ``PILOT_SIZE`` random points of ``X``.

    A cheap predictor of whether HNSW suits the data: massive ties and duplicates (binary
    sparse sets) make it fail on the pilot as on the whole set.
    """
    rng = check_random_state(0 if random_state is None else random_state)
    rows = np.sort(rng.choice(X.shape[0], size=min(X.shape[0], PILOT_SIZE), replace=False))
    pilot = X[rows]
    options = {"memory_budget": memory_budget, "n_jobs": n_jobs}
    distances, _ = _kneighbors_hnsw(
        pilot, k, random_state=random_state, ann_library=ann_library, **options
    )
    return estimate_recall(pilot, distances, random_state=random_state, **options)


def build_threads(n_jobs, random_state) -> int:
    """Threads that insert points into the HNSW index: 1 when ``random_state`` is set.

    Concurrent insertion makes the graph depend on thread timing (on 20,000 Gaussian points in
    20-D, two threaded builds with the same seed returned different neighbours for about 14 % of
    the points), so a fixed ``random_state`` builds on one thread and only the queries, which
    read a fixed index, use ``n_jobs`` threads.  ``random_state=None`` builds on ``n_jobs``
    threads: faster, not reproducible.
    """
    return n_jobs if random_state is None else 1


def _hnsw_seed(random_state) -> int:
    if random_state is None:
        return _DEFAULT_HNSW_SEED
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state) % 2**31
    return int(check_random_state(random_state).randint(2**31 - 1))


def voyager_index(n: int, d: int, seed: int):
    """An empty voyager index for ``n`` float32 points in ``d`` dimensions (squared L2).

    The library's HNSW parameters (``HNSW_M``, ``HNSW_EF_CONSTRUCTION``), one place for the
    single-machine search and the distributed search's per-chunk indexes
    (:mod:`semiscale.backends._dask_knn`), so that both build the same graph of the same rows.
    """
    from voyager import Index, Space, StorageDataType

    return Index(
        Space.Euclidean,
        num_dimensions=d,
        M=HNSW_M,
        ef_construction=HNSW_EF_CONSTRUCTION,
        random_seed=seed,
        max_elements=n,
        storage_data_type=StorageDataType.Float32,
    )


def _index_voyager(Xf, seed):
    """A voyager index for ``Xf`` (empty), its ``add(rows, ids, threads)`` and
    ``search(rows, k, ef, threads)``."""
    index = voyager_index(*Xf.shape, seed)

    def add(rows, ids, threads):
        index.add_items(rows, ids, num_threads=threads)

    def search(rows, k, ef, threads):
        return index.query(rows, k=k, num_threads=threads, query_ef=ef)[0]

    return add, search


def _index_hnswlib(Xf, seed):
    """An hnswlib index for ``Xf`` (empty), its ``add(rows, ids, threads)`` and
    ``search(rows, k, ef, threads)``."""
    import hnswlib

    n, d = Xf.shape
    index = hnswlib.Index(space="l2", dim=d)
    index.init_index(
        max_elements=n, M=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION, random_seed=seed
    )

    def add(rows, ids, threads):
        index.add_items(rows, ids, num_threads=threads)

    def search(rows, k, ef, threads):
        index.set_ef(ef)
        return index.knn_query(rows, k=k, num_threads=threads)[0]

    return add, search


def _build_index(library, Xf, n_jobs, seed, insert_threads):
    """Insert every row of ``Xf`` into a new index; return its ``query(k, ef)`` over ``Xf``.

    Points go in and queries go out ``HNSW_CHUNK`` rows at a time: the libraries hold the
    interpreter for a whole call, so one call for every point left Ctrl-C waiting for the end
    of the build (8 s on 300,000 points in 10-D), and chunks let a progress bar advance.
    Inserting the same rows chunk by chunk on one thread builds the same index as one call.
    """
    n = Xf.shape[0]
    add, search = _INDEXES[library](Xf, seed)
    bar = progress(total=n, desc=f"HNSW index ({insert_threads} thread(s))", unit="point")
    with bar:
        for start in range(0, n, HNSW_CHUNK):
            stop = min(start + HNSW_CHUNK, n)
            add(Xf[start:stop], np.arange(start, stop), insert_threads)
            bar.update(stop - start)

    def query(k, ef):
        with progress(total=n, desc="HNSW queries", unit="point") as bar:
            parts = []
            for start in range(0, n, HNSW_CHUNK):
                parts.append(search(Xf[start : start + HNSW_CHUNK], k, ef, n_jobs))
                bar.update(parts[-1].shape[0])
        return np.concatenate(parts)

    return query


_INDEXES = {"voyager": _index_voyager, "hnswlib": _index_hnswlib}


def _kneighbors_hnsw(X, k, *, memory_budget=None, n_jobs=1, random_state=None, ann_library=None):
    """Approximate search with an HNSW index of ``ann_library`` (float32, squared L2).

    Parameters (chosen in ``benchmarks/results/ann_choice/``): ``M = HNSW_M`` links per node,
    ``ef_construction = HNSW_EF_CONSTRUCTION``, query ``ef = max(HNSW_EF_SEARCH, 2(k+1))``;
    every point queries its ``k + 1`` nearest and drops itself by index.  Returned distances are
    recomputed exactly in float64 for the pairs found.  If the library cannot return ``k + 1``
    neighbours (a degenerate graph, e.g. almost all points identical), ``ef`` is raised once,
    then the search falls back to exact brute force.
    """
    library = check_ann_library(ann_library)
    if not ann_available(library):  # pragma: no cover - resolve_method checks first
        raise ImportError(ann_hint(library))
    n = X.shape[0]
    Xf = np.ascontiguousarray(_to_dense(X), dtype=np.float32)
    query = _build_index(
        library, Xf, n_jobs, _hnsw_seed(random_state), build_threads(n_jobs, random_state)
    )
    ind = None
    for ef in (max(HNSW_EF_SEARCH, 2 * (k + 1)), max(256, 8 * (k + 1))):
        try:
            ind = query(k + 1, min(ef, n))
            break
        except RuntimeError:  # fewer than k + 1 results for some query
            continue
    del query, Xf
    if ind is None:  # pragma: no cover - degenerate inputs only
        return _kneighbors_brute(X, k, memory_budget=memory_budget, n_jobs=n_jobs)
    ind = ind.astype(np.intp, copy=False)
    dist2, ind = _drop_self(_exact_sq_distances(X, ind), ind)
    order = np.argsort(dist2, axis=1, kind="stable")
    dist = np.sqrt(np.take_along_axis(dist2, order, axis=1))
    return dist, np.take_along_axis(ind, order, axis=1)
