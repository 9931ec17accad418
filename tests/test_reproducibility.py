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
