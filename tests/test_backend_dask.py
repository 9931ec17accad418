"""The Dask backend (:class:`semiscale.backends.DaskOps`) against the NumPy layer, locally.

One ``LocalCluster`` of two worker processes on 127.0.0.1 serves the whole module (CI starts
nothing else).  Its workers' ``memory_limit`` is :data:`WORKER_MEMORY`, so that one test can fit
an ``X`` larger than a worker's limit; the other tests use a few megabytes.  The operands here
are small, so the ``DaskOps`` under test has ``gather_bytes = 0``: every dask operand runs on
the workers instead of being gathered (``bytes_moved["calls"]`` counts the rounds of tasks).
"""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors

dask = pytest.importorskip("dask", reason="the [distributed] extra (dask) is not installed")
da = pytest.importorskip("dask.array", reason="the [distributed] extra (dask) is not installed")
distributed = pytest.importorskip(
    "distributed", reason="the [distributed] extra (distributed) is not installed"
)

import semiscale  # noqa: E402
from dask_cluster import killing_a_worker, local_client  # noqa: E402
from semiscale._memory import MemoryBudgetError  # noqa: E402
from semiscale.backends._dask import DaskOps  # noqa: E402
from semiscale.datasets import make_two_moons  # noqa: E402
from semiscale.graph import KNNGraph  # noqa: E402
from semiscale.kernels import RBF, LaplacianKernel, Linear  # noqa: E402
from semiscale.linalg.ops import ArrayOps, use_ops  # noqa: E402
from semiscale.models import (  # noqa: E402
    LapRLSClassifier,
    NystromLapRLSClassifier,
    NystromLapRLSRegressor,
)

#: Each worker's memory limit: above a worker's own footprint (about 175 MiB with semiscale
#: imported), below the X of test_a_fit_on_an_x_larger_than_each_workers_memory_limit.  The
#: workers neither spill nor pause (nothing here is persisted near the limit), but are
#: terminated by their nanny at 95 % of it, distributed's default.
WORKER_MEMORY = 256 * 2**20


@pytest.fixture(scope="module")
def client():
    yield from local_client(memory_limit=WORKER_MEMORY)


@pytest.fixture
def ops(client):
    client.wait_for_workers(2, timeout=60)  # a killed worker's nanny restarts it
    ops = DaskOps(client)
    ops.gather_bytes = 0
    return ops


def _moons(n, seed=0, n_labeled=20):
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    y_ssl = np.full_like(y, -1)
    first = np.random.default_rng(seed).choice(n, n_labeled, replace=False)
    y_ssl[first] = y[first]
    return X, y, y_ssl


# ---------------------------------------------------------------------------- fused products
@pytest.mark.parametrize("kernel", [RBF(gamma=0.3), LaplacianKernel(gamma=0.5), Linear()])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_each_fused_product_equals_the_numpy_layers(ops, kernel, dtype):
    # 1003 rows in chunks of 300: the last chunk is short (the chunking does not divide n)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1003, 5)).astype(dtype)
    C, V, U = X[:37], rng.normal(size=(37, 3)), rng.normal(size=(1003, 3))
    Xd = da.from_array(X, chunks=(300, 5))
    ref = ArrayOps()
    # float64: the same per-row products, chunk sums in another order; float32 blocks are
    # summed in float32 per chunk, so their order shows at float32's round-off
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    pairs = [
        (ops.kernel_matmul(kernel, Xd, C, V), ref.kernel_matmul(kernel, X, C, V)),
        (ops.kernel_matmul(kernel, Xd, C, V[:, 0]), ref.kernel_matmul(kernel, X, C, V[:, 0])),
        (ops.kernel_rmatmul(kernel, Xd, C, U), ref.kernel_rmatmul(kernel, X, C, U)),
        (ops.kernel_rmatmul(kernel, Xd, C, U[:, 0]), ref.kernel_rmatmul(kernel, X, C, U[:, 0])),
        (ops.kernel_matrix(kernel, Xd, C), ref.kernel_matrix(kernel, X, C)),
    ]
    for got, want in pairs:
        assert type(got) is np.ndarray and got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
    assert ops.bytes_moved["calls"] == len(pairs)
    # V and the U_c went out, the centers once; n x r blocks, s x r sums and K came back
    assert ops.bytes_moved["received"] >= (1003 * 3 + 1003 + 4 * 37 * 3 + 1003 * 37) * X.itemsize


def test_bytes_moved_per_product_follow_the_model(ops):
    # K(X, C) V: V out once, n x r back; K(X, C)^T U: U out in its chunks, an s x r per chunk back
    n, s, r, p = 2000, 40, 2, 4
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 3))
    Xd = da.from_array(X, chunks=(n // p, 3))
    kernel, C = RBF(gamma=1.0), X[:s].copy()
    ops.kernel_matmul(kernel, Xd, C, rng.normal(size=(s, r)))  # the centers go out here
    ops.reset_counters()
    ops.kernel_matmul(kernel, Xd, C, rng.normal(size=(s, r)))
    ops.kernel_rmatmul(kernel, Xd, C, rng.normal(size=(n, r)))
    assert ops.bytes_moved == {
        "sent": 8 * s * r + 8 * n * r,
        "received": 8 * n * r + 8 * s * r * p,
        "calls": 2,
    }


@pytest.mark.parametrize("d", [3, 20])  # k-d tree and brute-force pair tasks
def test_the_neighbours_of_new_points_are_merged_on_the_workers(ops, d):
    # the graph extension's search (KNNGraph's distributed exact search, new points as queries):
    # 7 chunks, but only the merged m x k table comes back, 16 m k bytes
    rng = np.random.default_rng(9)
    X, Q = rng.normal(size=(700, d)), rng.normal(size=(50, d))
    dist, ind = ops.kneighbors(da.from_array(X, chunks=(100, d)), Q, 6)
    want_dist, want_ind = NearestNeighbors(n_neighbors=6).fit(X).kneighbors(Q)
    np.testing.assert_array_equal(ind, want_ind)
    np.testing.assert_allclose(dist, want_dist, rtol=0, atol=1e-12)
    assert ops.bytes_moved == {"sent": Q.nbytes, "received": 16 * 50 * 6, "calls": 1}


def test_products_that_would_gather_a_large_dask_x_refuse_it(ops):
    Xd = da.from_array(np.ones((100, 2)), chunks=(50, 2))
    with pytest.raises(TypeError, match="dask X"):
        ops.kernel_row_sums(RBF(gamma=1.0), Xd)
    with pytest.raises(TypeError, match="dask X"):
        ops.sq_distance_scan(Xd, np.ones(100), np.arange(3), lambda block, G: None)
    with pytest.raises(TypeError, match="K\\(A, A\\) of a dask A"):
        ops.kernel_matmul(RBF(gamma=1.0), Xd, None, np.ones(100))
    assert ops.bytes_moved["calls"] == 0


def test_block_rows_of_a_dask_x_are_sized_as_numpys_without_a_task(ops):
    X = np.random.default_rng(3).normal(size=(4000, 50))
    Xd, kernel = da.from_array(X, chunks=(1000, 50)), RBF(gamma=0.1)
    for budget in (2**20, 2**24):
        want = ArrayOps().kernel_block_rows(kernel, X, X[:30], budget)
        assert ops.kernel_block_rows(kernel, Xd, X[:30], budget) == want
    with pytest.raises(MemoryBudgetError, match="memory_budget=1000 B.*one kernel block row"):
        ops.kernel_block_rows(kernel, Xd, X[:30], 1000)
    assert ops.bytes_moved["calls"] == 0


def test_a_budget_smaller_than_one_chunk_is_refused_before_any_task(ops):
    X = np.random.default_rng(3).normal(size=(4000, 50))
    Xd = da.from_array(X, chunks=(4000, 50))  # one chunk of 1.5 MiB
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=1\.0 MiB.*4000 rows.*rechunk"):
        ops.kernel_matmul(RBF(gamma=0.1), Xd, X[:10], np.ones(10), memory_budget=2**20)
    assert ops.bytes_moved["calls"] == 0
    # the fix the message names works
    got = ops.kernel_matmul(RBF(gamma=0.1), Xd.rechunk((500, 50)), X[:10], np.ones(10), 2**20)
    np.testing.assert_allclose(
        got, ArrayOps().kernel_matmul(RBF(gamma=0.1), X, X[:10], np.ones(10))
    )


def test_an_estimators_budget_smaller_than_one_chunk_is_refused(ops):
    X, _, y_ssl = _moons(3000)
    X = np.hstack([X, np.zeros((3000, 98))])  # 2.3 MiB in one chunk
    L = KNNGraph(n_neighbors=5).fit(X[:, :2]).laplacian_
    model = NystromLapRLSRegressor(
        kernel=RBF(gamma=5.0), n_centers=20, memory_budget="1MiB", random_state=0
    )
    with use_ops(ops), pytest.raises(MemoryBudgetError, match="chunk of X.*smaller chunks"):
        model.fit(da.from_array(X, chunks=(3000, 100)), y_ssl.astype(float), laplacian=L)


# ---------------------------------------------------------------------------- whole fits
class _UncachedNumPy(ArrayOps):
    """The NumPy layer with the ``K_ns`` cache declined: the computation a Dask fit makes.

    A dask X's ``K_ns`` is never cached (it would gather ``n s`` numbers on the client), and
    the sampled-Hessian preconditioner draws ``t = min(⌈s/8⌉, 256)`` graph rows when ``K_ns``
    is cached, ``⌈s/4⌉`` when not (at least 32 either way, grown alike with the graph's share).

    The two then differ only in the order of the chunk sums of ``K(X, C)ᵀ U``, which these
    well-conditioned fits carry to ~1e-13.  An ill-conditioned PCG amplifies it to its
    tolerance, as it does any summation order: two moons of 803 points, ``RBF(gamma="median")``,
    s = 60 take 28 PCG iterations on NumPy and 18 on Dask, 1.4e-4 apart at ``tol=1e-6``, and
    NumPy alone moves by 1.8e-4 between ``memory_budget="1MB"`` and the default (other blocks).
    """

    def kernel_cache_pays(self, nbytes):
        return False


def _fit_pair(model, X, y, chunks, ops, **fit_kw):
    """``(NumPy fit without the K_ns cache, Dask fit)`` of ``model`` on the same data."""
    with use_ops(_UncachedNumPy()):
        numpy_fit = clone(model).fit(X, y, **fit_kw)
    with use_ops(ops):
        dask_fit = clone(model).fit(da.from_array(X, chunks=(chunks, X.shape[1])), y, **fit_kw)
    assert not numpy_fit.solver_info_["cached"] and not dask_fit.solver_info_["cached"]
    rows = numpy_fit.solver_info_.get("laplacian_rows")
    assert dask_fit.solver_info_.get("laplacian_rows") == rows  # the same preconditioner
    return numpy_fit, dask_fit


@pytest.mark.parametrize("out_of_sample", ["graph", "kernel"])
def test_the_classifier_on_a_dask_x_equals_the_uncached_numpy_fit(ops, out_of_sample):
    # at the default tol: the same computation, the products' chunk sums in another order
    # (s = 200 > 128: the cached and uncached preconditioner samples differ, 512 and 800 rows)
    X, _, y_ssl = _moons(1003)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = NystromLapRLSClassifier(n_centers=200, random_state=0, out_of_sample=out_of_sample)
    a, b = _fit_pair(model, X, y_ssl, 300, ops, laplacian=L)
    assert b.solver_info_["laplacian_rows"] == 800
    assert ops.bytes_moved["calls"] > 2 * b.n_iter_  # two rounds of tasks per PCG iteration
    np.testing.assert_array_equal(a.center_index_, b.center_index_)
    assert type(b.X_fit_) is np.ndarray
    X_new = X + 0.01
    for points in (X_new, da.from_array(X_new, chunks=(250, 2))):
        with use_ops(ops):
            got = b.decision_function(points)
        assert type(got) is np.ndarray
        want = a.decision_function(X_new)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
    np.testing.assert_array_equal(a.transduction_, b.transduction_)


def test_numpys_default_fit_is_matched_at_a_tight_tol_only(ops):
    # NumPy's default caches K_ns here, so its preconditioner samples 512 graph rows against
    # the Dask fit's 800: at the default tol the two PCG runs stop at other iterates (2e-6
    # apart on these data), at tol=1e-10 both are the solution to 1e-8
    X, _, y_ssl = _moons(1003)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = NystromLapRLSClassifier(
        n_centers=200, random_state=0, out_of_sample="kernel", tol=1e-10
    )
    a = clone(model).fit(X, y_ssl, laplacian=L)
    assert a.solver_info_["cached"] and a.solver_info_["laplacian_rows"] == 512
    with use_ops(ops):
        b = clone(model).fit(da.from_array(X, chunks=(300, 2)), y_ssl, laplacian=L)
    assert b.solver_info_["laplacian_rows"] == 800
    want = a.decision_function(X)
    np.testing.assert_allclose(
        b.decision_function(X), want, rtol=1e-8, atol=1e-8 * np.abs(want).max()
    )


def test_the_regressor_on_a_dask_x_equals_the_numpy_fit(ops):
    X, y, _ = _moons(1003, seed=4)
    target = np.where(np.arange(1003) % 25 == 0, X[:, 0] + y, np.nan)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = NystromLapRLSRegressor(n_centers=80, random_state=0, fit_intercept=True)
    a, b = _fit_pair(model, X, target, 333, ops, laplacian=L)
    assert ops.bytes_moved["calls"] > 0
    with use_ops(ops):
        got = b.predict(da.from_array(X, chunks=(400, 2)))
    want = a.predict(X)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())
    np.testing.assert_allclose(b.transduction_, a.transduction_, rtol=1e-8, atol=1e-8)


def test_a_dask_x_runs_on_the_default_client_without_a_context(client):
    # no use_ops: the estimator picks DaskOps() on the default client itself
    X, _, y_ssl = _moons(600, seed=5)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = NystromLapRLSClassifier(n_centers=60, random_state=0, out_of_sample="kernel")
    a = model.fit(X, y_ssl, laplacian=L).decision_function(X)
    b = NystromLapRLSClassifier(**model.get_params(deep=False)).fit(
        da.from_array(X, chunks=(200, 2)), y_ssl, laplacian=L
    )
    np.testing.assert_allclose(b.decision_function(da.from_array(X, chunks=(200, 2))), a, 1e-8)


def test_a_numpy_x_under_the_dask_backend_is_chunked_by_tasks(ops):
    X, _, y_ssl = _moons(600, seed=6)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    ops.chunk_rows = 256
    model = NystromLapRLSClassifier(n_centers=60, random_state=0, out_of_sample="kernel")
    a = NystromLapRLSClassifier(**model.get_params(deep=False)).fit(X, y_ssl, laplacian=L)
    with semiscale.config_context(backend=ops):
        b = model.fit(X, y_ssl, laplacian=L)
    assert ops.bytes_moved["sent"] >= X.nbytes  # the chunks went out as graph literals
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), 1e-8, 1e-10)
    assert ops.distribute(X).chunks[0] == (256, 256, 88)


def test_the_graph_built_on_the_workers_gives_the_same_model(ops):
    # KNNGraph().fit(X_dask) searches across the workers; the fit then equals NumPy's
    X, _, y_ssl = _moons(1003, seed=7)
    model = NystromLapRLSClassifier(
        n_centers=100, random_state=0, graph=KNNGraph(n_neighbors=8, method="exact")
    )
    a, b = _fit_pair(model, X, y_ssl, 300, ops)
    assert (a.graph_.laplacian_ != b.graph_.laplacian_).nnz == 0
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), 1e-8, 1e-10)


# ---------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("rows", [0, 2.5, "abc", float("nan"), True])
def test_a_bad_chunk_rows_is_refused_naming_it(rows):
    with pytest.raises(ValueError, match=r"chunk_rows must be a positive integer.*got"):
        DaskOps(chunk_rows=rows)


def test_an_estimator_that_cannot_run_on_dask_refuses_a_dask_x(client):
    X, _, y_ssl = _moons(200)
    with pytest.raises(TypeError, match=r"X is a dask array.*X\.compute\(\).*NystromLapRLS"):
        LapRLSClassifier().fit(da.from_array(X, chunks=(100, 2)), y_ssl)


def test_a_dask_x_of_the_wrong_form_is_refused_before_any_task(client):
    X, _, y_ssl = _moons(200)
    Xd, model = da.from_array(X, chunks=(100, 2)), NystromLapRLSClassifier(n_centers=20)
    with pytest.raises(ValueError, match=r"unknown chunk sizes.*X\.compute_chunk_sizes\(\)"):
        model.fit(Xd[Xd[:, 0] > -10], y_ssl)
    csr = Xd.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    with pytest.raises(TypeError, match=r"csr_matrix chunks.*dense NumPy chunks.*toarray"):
        model.fit(csr, y_ssl)
    with pytest.raises(ValueError, match="X must be numeric"):
        model.fit(da.from_array(np.full((200, 2), "a"), chunks=(100, 2)), y_ssl)
    with pytest.raises(ValueError, match="X must be a 2-D dask array"):
        model.fit(Xd[:, 0], y_ssl)


def test_without_a_running_client_the_error_names_client(monkeypatch):
    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    Xd = da.from_array(np.ones((10, 2)), chunks=(5, 2))
    ops = DaskOps()
    ops.gather_bytes = 0
    with pytest.raises(ValueError, match=r"DaskOps\(client=None\) found no running.*client="):
        ops.kernel_matmul(RBF(gamma=1.0), Xd, np.ones((2, 2)), np.ones(2))


def test_a_dask_x_with_nan_is_refused_in_one_pass_on_the_workers(ops):
    X, _, y_ssl = _moons(300)
    X[123, 1] = np.nan
    with use_ops(ops), pytest.raises(ValueError, match="NaN or infinity"):
        NystromLapRLSClassifier(n_centers=20).fit(da.from_array(X, chunks=(100, 2)), y_ssl)


# ---------------------------------------------------------------------------- failures and memory
def test_a_killed_worker_never_yields_a_different_model(client, ops):
    X, _, y_ssl = _moons(2000, seed=8)
    L = KNNGraph(n_neighbors=8).fit(X).laplacian_
    model = NystromLapRLSClassifier(n_centers=100, random_state=0, out_of_sample="kernel")
    with use_ops(_UncachedNumPy()):  # the computation the Dask fit makes (see _fit_pair)
        want = clone(model).fit(X, y_ssl, laplacian=L)
    with killing_a_worker(client, lambda: ops.bytes_moved["calls"] >= 3) as killed:
        try:
            with use_ops(ops):
                got = model.fit(da.from_array(X, chunks=(250, 2)), y_ssl, laplacian=L)
            calls = ops.bytes_moved["calls"]
        except RuntimeError as error:  # the scheduler gave up: a clear error, never a model
            assert "a Dask worker was lost" in str(error)
            assert isinstance(error.__cause__, Exception)
        else:
            assert killed.is_set() and calls > 3  # the worker died during the fit
            expected = want.decision_function(X)
            np.testing.assert_allclose(
                got.decision_function(X), expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max()
            )


def test_a_scheduler_that_gives_up_is_a_clear_error_naming_the_fix(ops):
    # What the scheduler raises once a task's workers died allowed-failures times
    def gave_up():
        from types import SimpleNamespace

        worker = SimpleNamespace(address="tcp://127.0.0.1:1")
        raise distributed.scheduler.KilledWorker("a-chunk", worker, 3)

    with pytest.raises(RuntimeError, match="worker was lost during K.*allowed-failures") as info:
        ops._gather([dask.delayed(gave_up)()], "K(X, C) V")
    assert isinstance(info.value.__cause__, distributed.scheduler.KilledWorker)


def test_a_fit_on_an_x_larger_than_each_workers_memory_limit(client, ops):
    """X (WORKER_MEMORY + one row) is larger than each worker's memory_limit.

    It is not persisted (``DaskOps.distribute`` persists only what fits in half of the
    workers' limits together): every pass over X recomputes its chunks from their tasks (a
    seeded random generator), so a worker holds a few chunks at a time.  A worker whose
    memory passes 95 % of its limit is killed by its nanny (the cluster's ``terminate``
    threshold): the same worker processes before and after show that none was.
    """
    pids = client.run(os.getpid)
    n, d = WORKER_MEMORY // (8 * 200) + 1, 200
    X = da.random.RandomState(0).random_sample((n, d), chunks=(4096, d))
    assert X.nbytes > WORKER_MEMORY
    assert ops.distribute(X) is X  # not persisted
    y = np.full(n, np.nan)
    y[:40] = np.linspace(-1.0, 1.0, 40)  # labels (and so centers) in the first chunk
    path = sp.diags(
        [-np.ones(n - 1), np.r_[1.0, 2.0 * np.ones(n - 2), 1.0], -np.ones(n - 1)],
        [-1, 0, 1],
        format="csr",
    )
    # plain CG, one iteration: four passes over X (validation, u = K V, K^T v, the training
    # decision), as each PCG iteration makes two; only that the fit completes is checked here
    model = NystromLapRLSRegressor(
        kernel=RBF(gamma=0.01),
        n_centers=5,
        solver="cg",
        max_iter=1,
        random_state=0,
        memory_budget="1GiB",
    )
    with use_ops(ops), pytest.warns(ConvergenceWarning):
        model.fit(X, y, laplacian=path)
    assert model.n_iter_ == 1 and np.all(np.isfinite(model.transduction_))
    assert model.transduction_.shape == (n,)
    assert client.run(os.getpid) == pids
