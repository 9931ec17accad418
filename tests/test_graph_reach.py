"""Which disconnected graphs deserve a warning (issue 28 item 8).

A graph of several components is fine for semi-supervised learning when each component holds a
labeled point (two moons with one label per moon); the points of a component without one get no
label through the graph.  Only the estimators see the labels, so they warn, naming how many
points are affected; a ``KNNGraph`` alone does not (tests/test_knngraph.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from semiscale.graph import DisconnectedGraphWarning, KNNGraph
from semiscale.graph._graph import component_labels, warn_unreached
from semiscale.models import (
    HarmonicClassifier,
    LapRLSClassifier,
    LapSVC,
    SparseLapCVMClassifier,
)


def _islands(n_islands=3, per_island=40, seed=0):
    """Clusters 100 apart (a 5-NN graph has one component per cluster), classes alternating."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.random((per_island, 2)) + 100.0 * i for i in range(n_islands)])
    y = np.repeat(np.arange(n_islands) % 2, per_island)
    return X, y


def _labels(y, islands, per_island=40):
    """Two labels on each island in ``islands``, -1 elsewhere."""
    y_ssl = np.full_like(y, -1)
    for i in islands:
        y_ssl[i * per_island : i * per_island + 2] = y[i * per_island]
    return y_ssl


def _disconnected_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, DisconnectedGraphWarning)]


GRAPH = KNNGraph(n_neighbors=5)

#: Each reads labels through the graph: kernel models (exact; core vector machine) and graph
#: learning.
ESTIMATORS = [
    LapRLSClassifier(graph=GRAPH, intrinsic_reg=1.0),
    SparseLapCVMClassifier(graph=GRAPH),
    HarmonicClassifier(graph=GRAPH),
]


@pytest.mark.parametrize("model", ESTIMATORS, ids=lambda m: type(m).__name__)
def test_components_that_each_hold_a_label_are_fine(model):
    # two islands of different classes, one label pair on each: the README's two moons case
    X, y = _islands(2)
    caught = _disconnected_warnings(lambda: model.fit(X, _labels(y, [0, 1])))
    assert not caught, [str(w.message) for w in caught]


@pytest.mark.parametrize("model", ESTIMATORS[:2], ids=lambda m: type(m).__name__)
def test_a_component_without_a_label_warns_with_its_size_and_the_fix(model):
    X, y = _islands(3)
    y_ssl = _labels(y, [0, 1])  # the third island (40 points) has no label
    with pytest.warns(DisconnectedGraphWarning) as caught:
        model.fit(X, y_ssl)
    (warning,) = [w for w in caught if issubclass(w.category, DisconnectedGraphWarning)]
    message = str(warning.message)
    assert message.startswith("40 of 120 training points (none of them labeled) lie in 1 ")
    assert "from the kernel (ambient) term alone" in message
    assert "Raise the graph's n_neighbors (now 5), or label a point of each component" in message
    assert warning.filename == __file__  # it points at the user's fit


def test_a_laplacian_passed_to_fit_is_checked_too():
    X, y = _islands(3)
    L = KNNGraph(n_neighbors=5).fit(X).laplacian_
    model = LapRLSClassifier(intrinsic_reg=1.0)
    with pytest.warns(DisconnectedGraphWarning, match="Build the graph with more neighbours"):
        model.fit(X, _labels(y, [0, 1]), laplacian=L)
    # without a graph term the graph is not used, so nothing to say
    no_graph = LapRLSClassifier(intrinsic_reg=0.0)
    assert not _disconnected_warnings(lambda: no_graph.fit(X, _labels(y, [0, 1]), laplacian=L))


def test_component_labels_agree_with_the_adjacency():
    # from a Laplacian (its diagonal and explicit zeros are no edges), against the components of
    # the dense adjacency
    X, _ = _islands(3, per_island=15)
    graph = KNNGraph(n_neighbors=3).fit(X)
    L = sp.csr_matrix(graph.laplacian_)
    L.data[:3] = 0.0  # stored zeros: no edge
    W = -(L.toarray() - np.diag(L.diagonal()))
    expected = connected_components(sp.csr_matrix(W != 0), directed=False)[1]
    found = component_labels(L)
    assert (found[:, None] == found[None, :]).tolist() == (
        (expected[:, None] == expected[None, :]).tolist()
    )
    assert component_labels(L, graph) is graph.component_labels_  # reused when fitted


def test_warn_unreached_counts_the_points_of_unlabeled_components():
    # a path 0-1-2, an edge 3-4 and a lone point 5
    W = sp.csr_matrix(([1.0] * 6, ([0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3])), shape=(6, 6))
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    labeled = np.array([False, False, True, False, False, False])
    with pytest.warns(DisconnectedGraphWarning, match="^3 of 6 training points .* in 2 conn"):
        assert warn_unreached(L, labeled, consequence="", stacklevel=1) == 3
    labeled[[3, 5]] = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_unreached(L, labeled, consequence="", stacklevel=1) == 0


@pytest.mark.parametrize(
    "params", [{}, {"solver": "dual", "early_stopping": False}], ids=["LapSVC", "deprecated"]
)
def test_lapsvc_warnings_point_at_the_users_fit(params):
    # LapSVC's fit reads its deprecated spellings without a frame of its own, so the shared fit
    # path's warnings (and the deprecation's) name the caller's line as for the other models
    X, y = _islands(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LapSVC(graph=GRAPH, **params).fit(X, _labels(y, [0, 1]))
    kinds = {w.category for w in caught}
    assert DisconnectedGraphWarning in kinds and (FutureWarning in kinds) == bool(params)
    assert all(w.filename == __file__ for w in caught), [(w.filename, w.lineno) for w in caught]
