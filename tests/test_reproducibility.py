"""A fixed ``random_state`` gives identical results, threads or not."""

import numpy as np
import pytest

from semiscale.graph import _hnsw

pytestmark = pytest.mark.skipif(
    not _hnsw.ann_available(), reason=f"approximate search not installed: {_hnsw.ANN_HINT}"
)


def test_threaded_hnsw_search_with_a_seed_is_reproducible():
    # Concurrent insertion made two builds with the same seed differ on ~20 of 4,000 rows.
    X = np.random.default_rng(0).standard_normal((4000, 20))
    first = _hnsw._kneighbors_hnsw(X, 10, n_jobs=2, random_state=0)[1]
    for _ in range(3):
        np.testing.assert_array_equal(
            _hnsw._kneighbors_hnsw(X, 10, n_jobs=2, random_state=0)[1], first
        )


def test_only_a_seeded_search_builds_on_one_thread():
    assert _hnsw.build_threads(4, None) == 4
    assert _hnsw.build_threads(4, 0) == 1
    assert _hnsw.build_threads(4, np.random.RandomState(0)) == 1


def test_an_estimator_seed_makes_its_approximate_graph_reproducible():
    from semiscale.graph import KNNGraph
    from semiscale.models import NystromLapRLSClassifier

    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 20))
    y = np.where(rng.random(3000) < 0.02, (X[:, 0] > 0).astype(int), -1)
    graph = KNNGraph(method="approximate")

    def fit():
        return NystromLapRLSClassifier(graph=graph, n_jobs=2, random_state=0).fit(X, y)

    first, second = fit(), fit()
    assert first.graph_.random_state == 0 and graph.random_state is None
    assert (first.graph_.adjacency_ != second.graph_.adjacency_).nnz == 0
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))
