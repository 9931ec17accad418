"""Approximate kNN with hnswlib (optional dependency, imported on first use).

Private to :mod:`semiscale.graph.knn`; the library and its parameters were chosen with
the retired ``benchmarks/ann_choice.py`` (results in ``benchmarks/results/ann_choice/``).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ._brute import _drop_self, _exact_sq_distances, _kneighbors_brute, _to_dense

#: HNSW graph degree, construction beam and (minimum) query beam.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 32
_DEFAULT_HNSW_SEED = 100  # hnswlib's own default
#: Query points of the exact spot check of an approximate search.
RECALL_SAMPLE = 256
#: Points of the pilot search that ``method="auto"`` runs before a large approximate search.
PILOT_SIZE = 4000

ANN_HINT = "approximate search needs hnswlib: pip install semiscale[ann]"


def ann_available() -> bool:
    """Whether hnswlib can be imported."""
    try:
        import hnswlib  # noqa: F401
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


def pilot_recall(X, k, *, random_state=None, memory_budget=None, n_jobs=1) -> float:
    """Estimated recall@k of HNSW on the kNN graph of ``PILOT_SIZE`` random points of ``X``.

    A cheap predictor of whether HNSW suits the data: massive ties and duplicates (binary
    sparse sets) make it fail on the pilot as on the whole set.
    """
    rng = check_random_state(0 if random_state is None else random_state)
    rows = np.sort(rng.choice(X.shape[0], size=min(X.shape[0], PILOT_SIZE), replace=False))
    pilot = X[rows]
    options = {"memory_budget": memory_budget, "n_jobs": n_jobs}
    distances, _ = _kneighbors_hnsw(pilot, k, random_state=random_state, **options)
    return estimate_recall(pilot, distances, random_state=random_state, **options)


def _hnsw_seed(random_state) -> int:
    if random_state is None:
        return _DEFAULT_HNSW_SEED
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state) % 2**31
    return int(check_random_state(random_state).randint(2**31 - 1))


def _kneighbors_hnsw(X, k, *, memory_budget=None, n_jobs=1, random_state=None):
    """Approximate search with an hnswlib HNSW index (float32, squared L2).

    Parameters (chosen in ``benchmarks/results/ann_choice/``): ``M = HNSW_M`` links per node,
    ``ef_construction = HNSW_EF_CONSTRUCTION``, query ``ef = max(HNSW_EF_SEARCH, 2(k+1))``;
    every point queries its ``k + 1`` nearest and drops itself by index.  Returned distances are
    recomputed exactly in float64 for the pairs found.  If hnswlib cannot return ``k + 1``
    neighbours (a degenerate graph, e.g. almost all points identical), ``ef`` is raised once,
    then the search falls back to exact brute force.
    """
    try:
        import hnswlib
    except ImportError as exc:  # pragma: no cover - resolve_method checks first
        raise ImportError(ANN_HINT) from exc
    n, d = X.shape
    Xf = np.ascontiguousarray(_to_dense(X), dtype=np.float32)
    index = hnswlib.Index(space="l2", dim=d)
    index.init_index(
        max_elements=n, M=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION,
        random_seed=_hnsw_seed(random_state),
    )  # fmt: skip
    index.add_items(Xf, np.arange(n), num_threads=n_jobs)
    ind = None
    for ef in (max(HNSW_EF_SEARCH, 2 * (k + 1)), max(256, 8 * (k + 1))):
        index.set_ef(min(ef, n))
        try:
            ind, _ = index.knn_query(Xf, k=k + 1, num_threads=n_jobs)
            break
        except RuntimeError:  # fewer than k + 1 results for some query
            continue
    del index, Xf
    if ind is None:  # pragma: no cover - degenerate inputs only
        return _kneighbors_brute(X, k, memory_budget=memory_budget, n_jobs=n_jobs)
    ind = ind.astype(np.intp, copy=False)
    dist2, ind = _drop_self(_exact_sq_distances(X, ind), ind)
    order = np.argsort(dist2, axis=1, kind="stable")
    dist = np.sqrt(np.take_along_axis(dist2, order, axis=1))
    return dist, np.take_along_axis(ind, order, axis=1)
