"""The kNN graph of a dask array searched across Dask workers (semiscale.backends._dask_knn).

Reference: the single-machine search of ``X.compute()``.  One LocalCluster of two worker
processes for the whole file.
"""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the distributed kNN search needs dask")
distributed = pytest.importorskip("distributed", reason="the tests run a distributed LocalCluster")

from dask.core import get_dependencies  # noqa: E402
from dask.utils import key_split  # noqa: E402
from sklearn.neighbors import NearestNeighbors  # noqa: E402

from dask_cluster import killing_a_worker, local_client, tasks_running  # noqa: E402
from semiscale.backends._dask_knn import (  # noqa: E402
    MERGE_FAN_IN,
    _compute,
    _merge,
    _pair_task,
    check_dask_X,
    check_distributed_ann_library,
    new_points_plan,
    search_plan,
)
from semiscale.graph import KNNGraph  # noqa: E402
from semiscale.graph.knn import kneighbors, resolve_method, search  # noqa: E402


@pytest.fixture(scope="module")
def client():
    yield from local_client()


def _points(n, d, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(dtype)


@pytest.mark.parametrize(
    ("d", "dtype", "rows", "expected"),
    [
        (3, np.float64, 150, "kdtree"),  # 601 = 4 x 150 + 1: 5 chunks on 2 workers
        (20, np.float64, 150, "brute"),
        (20, np.float32, 250, "brute"),
        (5, np.float32, 60, "kdtree"),  # 11 chunks, the last of 1 row (< k + 1)
    ],
)
def test_the_graph_across_chunks_is_the_single_machine_graph(client, d, dtype, rows, expected):
    X = _points(601, d, dtype)
    ref_dist, ref_ind = kneighbors(X, 7, method="exact")
    dist, ind, info = search(da.from_array(X, chunks=(rows, d)), 7, method="exact")
    assert info["backend"] == expected
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=0, atol=1e-12)
    assert dist.dtype == np.float64 and ind.dtype == np.intp


@pytest.mark.parametrize("d", [4, 24])
def test_knngraph_of_a_dask_array_has_the_single_machine_laplacian(client, d):
    X = _points(523, d, seed=1)
    dense = KNNGraph(n_neighbors=6, weights="self-tuning").fit(X)
    # chunked along the columns too: the search undoes it (one column chunk)
    Xd = da.from_array(X, chunks=(100, max(1, d // 2)))
    graph = KNNGraph(n_neighbors=6, weights="self-tuning").fit(Xd)
    assert graph.n_features_in_ == d and graph.n_samples_fit_ == 523
    assert graph.search_method_ == dense.search_method_
    assert abs(graph.laplacian_ - dense.laplacian_).max() <= 1e-12
    np.testing.assert_array_equal(graph.laplacian_.indices, dense.laplacian_.indices)
    heat = KNNGraph(n_neighbors=6).fit(Xd)
    assert heat.bandwidth_ == pytest.approx(KNNGraph(n_neighbors=6).fit(X).bandwidth_, abs=1e-12)


def test_the_search_runs_on_the_workers_as_chunk_pairs(client):
    X = _points(500, 3, seed=3)
    Xd = da.from_array(X, chunks=(100, 3))
    with distributed.get_task_stream(client) as stream:
        graph = KNNGraph(n_neighbors=5).fit(Xd)
    # the fit's own tasks (pure: their keys are the plan's), not a stray one of another test
    tables, checks = search_plan(check_dask_X(Xd), 5, "kdtree")
    planned = set(checks[0].__dask_graph__()) | {c.key for c in checks}
    for table in tables:
        planned |= set(table.__dask_graph__())
    ran = [key_split(task["key"]) for task in stream.data if task["key"] in planned]
    # 5 chunks: 25 pair tasks, a tree of merges per query chunk, one check per chunk
    assert ran.count("pair_task") == 25 and ran.count("check_chunk") == 5
    assert ran.count("merge") == 5
    assert abs(graph.laplacian_ - KNNGraph(n_neighbors=5).fit(X).laplacian_).max() <= 1e-12


@pytest.mark.parametrize("backend", ["kdtree", "brute", "hnsw"])
def test_no_task_reads_more_than_two_chunks(backend):
    # 20 chunks: each pair task reads two chunks of X (one on the diagonal) and, for HNSW, the
    # index of the second; each merge reads at most MERGE_FAN_IN tables and no chunk
    X = check_dask_X(da.from_array(_points(1000, 3), chunks=(50, 3)))
    tables, _ = search_plan(X, 5, backend, random_state=0)
    graph = {}
    for table in tables:
        graph.update(table.__dask_graph__())
    chunks = {key for key in graph if isinstance(key, tuple) and key[0] == X.name}
    seen = {"pair_task": 0, "merge": 0}
    for key in graph:
        deps = get_dependencies(graph, key)
        kind = key_split(key)
        if kind == "pair_task":
            assert 1 <= len(deps & chunks) <= 2 and len(deps) <= 3
        elif kind == "merge":
            assert len(deps) <= MERGE_FAN_IN and not deps & chunks
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["pair_task"] == 400 and seen["merge"] == 20 * 4  # 20 -> 3 -> 1 per chunk


def test_the_merge_keeps_the_k_smallest_of_the_chunks_candidates():
    # two chunks' padded tables for two rows: (+inf, -1) pads never beat a real candidate
    a = (np.array([[0.5, 2.0, np.inf], [1.0, 1.5, 3.0]]), np.array([[3, 4, -1], [0, 2, 1]]))
    b = (np.array([[0.7, 1.0, 4.0], [0.2, 2.5, np.inf]]), np.array([[7, 9, 8], [6, 5, -1]]))
    dist, ind = _merge(a, b)
    np.testing.assert_array_equal(dist, [[0.5, 0.7, 1.0], [0.2, 1.0, 1.5]])
    np.testing.assert_array_equal(ind, [[3, 7, 9], [6, 0, 2]])


def test_nan_in_a_chunk_is_refused_naming_x_and_its_row(client):
    X = _points(300, 3)
    X[217, 1] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or infinity \(first in row 217\)"):
        KNNGraph(n_neighbors=5).fit(da.from_array(X, chunks=(100, 3)))


@pytest.mark.parametrize("backend", ["kdtree", "brute"])
def test_a_pair_task_names_nan_in_either_chunk(backend):
    # the first task to meet the NaN raises the error; it used to be scipy's ("'x' must be
    # finite") when the NaN was in the query chunk of an off-diagonal k-d-tree pair
    Q, Xj = _points(50, 3), _points(40, 3, seed=1)
    Q[7, 2] = np.nan
    options = {"memory_budget": None}
    with pytest.raises(ValueError, match=r"X contains NaN or infinity \(first in row 107\)"):
        _pair_task(Q, 100, Xj, 0, 5, backend, False, options)


def test_unknown_chunk_sizes_and_sparse_chunks_are_refused_clearly():
    X = da.from_array(_points(100, 3), chunks=(30, 3))
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        check_dask_X(X[X[:, 0] > 0])
    sparse = pytest.importorskip("scipy.sparse")
    Xs = X.map_blocks(sparse.csr_matrix, meta=sparse.csr_matrix((0, 0)))
    with pytest.raises(TypeError, match="csr_matrix chunks.*dense NumPy chunks"):
        check_dask_X(Xs)
    # the checks of every dask X (semiscale._arrays.check_dask_array): a ValueError for a
    # non-numeric dtype, as the search of a NumPy X of strings and the estimators' validation
    with pytest.raises(ValueError, match="X must be numeric, got a dask array of dtype"):
        check_dask_X(da.from_array(np.array([["a", "b"], ["c", "d"]]), chunks=(1, 2)))
    with pytest.raises(ValueError, match="2-D dask array"):
        check_dask_X(X[:, 0])
    with pytest.raises(ValueError, match="X has no rows"):
        check_dask_X(X[:0])
    with pytest.raises(TypeError, match="X must be a dask array here, got ndarray"):
        check_dask_X(_points(10, 3))
    assert check_dask_X(X.astype(np.int32)).dtype == np.float64


def test_approximate_search_queries_every_chunks_index(client):
    pytest.importorskip("voyager", reason="approximate search needs voyager (the ann extra)")
    X = _points(2000, 20, seed=2)
    ref_dist, _ = kneighbors(X, 8, method="exact")
    dist, ind, info = search(
        da.from_array(X, chunks=(600, 20)), 8, method="approximate", random_state=0
    )
    assert info["backend"] == "hnsw" and info["recall"] >= 0.9
    assert (ind != np.arange(2000)[:, None]).all() and (ind >= 0).all()
    # recall against the exact table: distance based, as the spot check counts it
    assert (dist <= ref_dist[:, -1:] * (1 + 1e-9)).mean() >= 0.9
    # the distances returned are exact for the pairs found
    exact = np.sqrt(((X[ind] - X[:, None, :]) ** 2).sum(axis=2))
    np.testing.assert_allclose(dist, exact, rtol=1e-12)


def test_the_distributed_approximate_search_refuses_hnswlib_clearly():
    assert check_distributed_ann_library(None) == "voyager"
    with pytest.raises(ValueError, match="ann_library='hnswlib'.*voyager.*method='exact'"):
        check_distributed_ann_library("hnswlib")


def test_near_ties_across_chunks_are_resolved_in_float64(client):
    # lattice points 1e-10 from ties: float32 products (errors ~1e-6 here) cannot order their
    # neighbours, so the off-diagonal tasks must search those rows again in float64 (4 of
    # 2,400 neighbours differ when their float32 result is accepted unverified)
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, (400, 20)) + 1e-10 * rng.standard_normal((400, 20))
    ref_dist, ref_ind = kneighbors(X, 6, method="exact")
    dist, ind, info = search(da.from_array(X, chunks=(150, 20)), 6, method="exact")
    assert info["backend"] == "brute"
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=0, atol=1e-12)


def test_a_worker_killed_during_the_search_never_yields_a_different_graph(client):
    X = _points(6000, 3, seed=5)
    want = KNNGraph(n_neighbors=8).fit(X).laplacian_
    with killing_a_worker(client, lambda: tasks_running(client, "pair_task")) as killed:
        try:
            got = KNNGraph(n_neighbors=8).fit(da.from_array(X, chunks=(500, 3))).laplacian_
        except RuntimeError as error:  # the scheduler gave up: a clear error, never a graph
            assert "worker was lost during the distributed kNN search" in str(error)
            assert error.__cause__ is not None
        else:
            assert killed.is_set()  # the worker died during the search
            assert abs(got - want).max() <= 1e-12  # its lost tasks were run again


def test_a_search_whose_scheduler_gives_up_is_the_clear_error(client):
    # what the scheduler raises once a task's workers died allowed-failures times: the error
    # DaskOps raises too (semiscale.backends._dask_errors), the cause chained
    def gave_up():
        from types import SimpleNamespace

        worker = SimpleNamespace(address="tcp://127.0.0.1:1")
        raise distributed.scheduler.KilledWorker("a-pair", worker, 3)

    import dask

    with pytest.raises(
        RuntimeError, match="lost during the distributed kNN.*allowed-failures"
    ) as info:
        _compute(dask.delayed(gave_up)())
    assert isinstance(info.value.__cause__, distributed.scheduler.KilledWorker)


@pytest.mark.parametrize("d", [3, 20])  # k-d tree and brute-force pair tasks
def test_new_points_are_searched_among_the_chunks_with_one_copy_of_them(client, d):
    X, Q = _points(430, d, seed=6), _points(40, d, seed=7)
    backend = resolve_method("exact", 430, d)
    assert backend == ("kdtree" if d == 3 else "brute")
    plan = new_points_plan(da.from_array(X, chunks=(100, d)), Q, 5, backend)
    graph = dict(plan.__dask_graph__())
    # Q is one graph literal read by the 5 pair tasks, not a copy in each task's arguments
    literals = [key for key in graph if str(key).startswith("semiscale-queries-")]
    assert len(literals) == 1
    assert sum(key_split(key) == "pair_task" for key in graph) == 5
    dist, ind = plan.compute()
    want_dist, want_ind = NearestNeighbors(n_neighbors=5).fit(X).kneighbors(Q)
    np.testing.assert_array_equal(ind, want_ind)
    np.testing.assert_allclose(dist, want_dist, rtol=0, atol=1e-12)
