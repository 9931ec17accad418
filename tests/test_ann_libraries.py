"""The HNSW libraries behind ``method="approximate"``: voyager (default, the ``ann`` extra) and
hnswlib (optional, source only).  Each test skips, with the reason, when its library is missing;
``make test`` installs the ``ann`` extra, so the voyager tests run in CI."""

import numpy as np
import pytest

from semiscale.graph import KNNGraph
from semiscale.graph._hnsw import ANN_LIBRARIES, DEFAULT_ANN_LIBRARY
from semiscale.graph.knn import kneighbors, search


def data(n=3000, d=30, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def recall(X, ind, exact_dist):
    true = np.linalg.norm(X[ind] - X[:, None, :], axis=2)
    return (true <= exact_dist[:, -1:] * (1 + 1e-9) + 1e-12).mean()


@pytest.fixture(params=ANN_LIBRARIES)
def library(request):
    reasons = {
        "voyager": "voyager not installed (the ann extra): pip install semiscale[ann]",
        "hnswlib": "hnswlib not installed (optional, source only, needs a C++ compiler): "
        "pip install semiscale[ann-hnswlib]",
    }
    pytest.importorskip(request.param, reason=reasons[request.param])
    return request.param


def test_voyager_is_the_default():
    assert DEFAULT_ANN_LIBRARY == "voyager" and ANN_LIBRARIES[0] == "voyager"


def test_each_library_finds_the_neighbours(library):
    X = data()
    exact_dist, _ = kneighbors(X, 10, method="exact")
    dist, ind, info = search(X, 10, method="approximate", ann_library=library, random_state=0)
    assert info["backend"] == "hnsw" and info["ann_library"] == library
    assert info["recall"] > 0.9
    assert not (ind == np.arange(len(X))[:, None]).any()
    assert (np.diff(dist, axis=1) >= 0).all()
    np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None], axis=2), atol=1e-10)
    assert recall(X, ind, exact_dist) >= 0.95


def test_one_thread_is_reproducible(library):
    X = data(2000, 20, seed=1)
    runs = [
        kneighbors(X, 8, method="approximate", ann_library=library, random_state=3, n_jobs=1)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_knngraph_passes_the_library(library):
    X = data(1500, 20)
    g = KNNGraph(n_neighbors=6, method="approximate", ann_library=library, random_state=0).fit(X)
    assert g.search_method_ == "hnsw" and g.search_ann_library_ == library
    assert g.search_recall_ > 0.9
    exact = KNNGraph(n_neighbors=6, method="exact").fit(X)
    assert exact.search_ann_library_ is None


def test_unknown_library_is_refused():
    with pytest.raises(ValueError, match="'ann_library' parameter of KNNGraph must be a str among"):
        KNNGraph(ann_library="annoy").fit(data(50, 3))
    with pytest.raises(ValueError, match="ann_library must be one of"):
        kneighbors(data(50, 3), 3, ann_library="faiss")
