"""TorchOps (semiscale.backends._torch) against the NumPy reference, on CPU torch.

Every overridden method equals :class:`~semiscale.linalg.ops.ArrayOps` on small problems (float64
to 1e-10 relative, float32 to 1e-4), whole Nyström LapRLS fits under the backend give NumPy's
predictions to 1e-8, and the device copies of host arrays are kept only inside a residency scope
(one fit) and found again there only while the array is alive and unchanged.
"""

import gc

import numpy as np
import pytest
import scipy.sparse as sp

torch = pytest.importorskip("torch", reason="TorchOps needs PyTorch (the 'gpu' extra)")

from semiscale._memory import MemoryBudgetError  # noqa: E402
from semiscale.backends._torch import TorchOps  # noqa: E402
from semiscale.graph import KNNGraph  # noqa: E402
from semiscale.kernels import RBF, LaplacianKernel, Linear, Polynomial  # noqa: E402
from semiscale.linalg.ops import ArrayOps, use_ops  # noqa: E402
from semiscale.models import NystromLapRLSClassifier, NystromLapRLSRegressor  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")

NUMPY = ArrayOps()
RTOL = {np.float64: 1e-10, np.float32: 1e-4}
KERNELS = [RBF(gamma=0.3), LaplacianKernel(gamma=0.4), Linear(), Polynomial(3, 0.2, 1.0)]


def close(actual, expected, dtype):
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    scale = max(float(np.abs(expected).max()), 1e-300)
    assert float(np.abs(actual - expected).max()) <= RTOL[dtype] * scale


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return {
        "A": rng.standard_normal((700, 4)),
        "B": rng.standard_normal((90, 4)),
        "V": rng.standard_normal((90, 3)),
        "U": rng.standard_normal((700, 3)),
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
def test_kernel_products_equal_numpys(data, kernel, dtype):
    # 400 KB: a few hundred rows per block at most, so that the device loop runs over blocks
    ops, budget = TorchOps("cpu"), 400_000
    A, B = data["A"].astype(dtype), data["B"].astype(dtype)
    V, U = data["V"], data["U"]
    for args in ((A, B, V), (A, B, V[:, 0]), (B, None, V)):
        close(ops.kernel_matmul(kernel, *args, budget), NUMPY.kernel_matmul(kernel, *args), dtype)
    for args in ((A, B, U), (A, B, U[:, 0]), (A, None, U)):
        close(ops.kernel_rmatmul(kernel, *args, budget), NUMPY.kernel_rmatmul(kernel, *args), dtype)
    close(ops.kernel_matrix(kernel, A, B, 10**6), NUMPY.kernel_matrix(kernel, A, B), dtype)
    close(ops.kernel_matrix(kernel, B, None, 10**6), NUMPY.kernel_matrix(kernel, B), dtype)
    close(ops.kernel_matrix(kernel, B, B, 10**6), NUMPY.kernel_matrix(kernel, B, B), dtype)
    close(ops.kernel_row_sums(kernel, A, budget), NUMPY.kernel_row_sums(kernel, A), dtype)


def test_self_kernels_have_exact_unit_diagonals(data):
    B = data["B"]
    for kernel in (RBF(gamma=0.3), LaplacianKernel(gamma=0.4)):
        K = TorchOps("cpu").kernel_matrix(kernel, B)
        np.testing.assert_array_equal(np.diag(K), 1.0)


def test_rbf_shifts_far_off_data_as_numpy_does(data):
    # X + 1e6: the raw expansion ‖a‖² + ‖b‖² − 2ab would lose every digit (SHIFT_RATIO)
    A, B = data["A"] + 1e6, data["B"] + 1e6
    kernel = RBF(gamma=0.3)
    expected = NUMPY.kernel_matmul(kernel, A, B, data["V"])
    close(TorchOps("cpu").kernel_matmul(kernel, A, B, data["V"]), expected, np.float64)
    assert np.abs(expected).max() > 1e-3  # not all zeros: the kernel values survived


def test_computing_in_float32_returns_numpys_dtype(data):
    kernel = RBF(gamma=0.3)
    A, B, V = data["A"], data["B"], data["V"]
    out = TorchOps("cpu", dtype="float32").kernel_matmul(kernel, A, B, V)
    assert out.dtype == np.float64
    close(out, NUMPY.kernel_matmul(kernel, A, B, V), np.float32)


def test_other_operands_and_kernels_fall_back_to_numpy(data):
    class Shifted(RBF):  # a subclass may change the block formula: never fused
        def _exp(self, K):
            return np.exp(K + 1.0, out=K)

    ops = TorchOps("cpu")
    A, B, V = data["A"], data["B"], data["V"]
    sparse_A = sp.csr_matrix(np.where(np.abs(A) > 1, A, 0.0))
    for kernel, left in ((Shifted(gamma=0.3), A), (RBF(gamma=0.3), sparse_A)):
        expected = NUMPY.kernel_matmul(kernel, left, B, V)
        np.testing.assert_array_equal(ops.kernel_matmul(kernel, left, B, V), expected)
    assert ops.bytes_moved["to_device"] == 0


def test_a_budget_below_one_block_row_is_refused(data):
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        TorchOps("cpu").kernel_matmul(RBF(gamma=0.3), data["A"], data["B"], data["V"], 100)
    with pytest.raises(ValueError, match="dtype"):
        TorchOps("cpu", dtype="int32")


def test_bad_inputs_get_numpys_errors(data):
    ops, kernel = TorchOps("cpu"), RBF(gamma=0.3)
    bad = data["A"].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        ops.kernel_matmul(kernel, bad, data["B"], data["V"])
    with pytest.raises(ValueError, match="features"):
        ops.kernel_matmul(kernel, data["A"][:, :3], data["B"], data["V"])
    with pytest.raises(ValueError, match=r"V must have shape \(90,\)"):
        ops.kernel_matmul(kernel, data["A"], data["B"], data["U"])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_products_factorizations_and_solves_equal_numpys(dtype):
    rng = np.random.default_rng(1)
    ops = TorchOps("cpu")
    M = rng.standard_normal((120, 120))
    A = (M @ M.T / 120 + np.eye(120)).astype(dtype)  # well conditioned: the solves compare
    R = rng.standard_normal((120, 5)).astype(dtype)
    close(ops.matmul(A, R), NUMPY.matmul(A, R), dtype)
    close(ops.matmul(R.T, A), NUMPY.matmul(R.T, A), dtype)
    out = np.empty((120, 5), dtype)
    assert ops.matmul(A, R, out=out) is out
    close(out, NUMPY.matmul(A, R), dtype)
    L, jitter = ops.jittered_cholesky(A)
    L0, jitter0 = NUMPY.jittered_cholesky(A)
    assert jitter == jitter0 == 0.0
    close(L, L0, dtype)
    for kw in ({}, {"trans": True}, {"lower": False}):
        T = L if kw.get("lower", True) else L.T.copy()
        close(ops.solve_triangular(T, R, **kw), NUMPY.solve_triangular(T, R, **kw), dtype)
    close(ops.solve_triangular(L, R[:, 0]), NUMPY.solve_triangular(L0, R[:, 0]), dtype)
    right = dict(trans=True, side="right")
    close(
        ops.solve_triangular(L, R.T.copy(), **right),
        NUMPY.solve_triangular(L0.astype(np.float64), R.T.astype(np.float64), **right),
        dtype,
    )
    close(ops.cho_solve(L, R), NUMPY.cho_solve(L0, R), dtype)
    close(ops.cho_solve(L, R[:, 0]), NUMPY.cho_solve(L0, R[:, 0]), dtype)
    S = sp.random(120, 120, density=0.05, format="csr", random_state=2, dtype=dtype)
    assert not ops.sparse_on_device  # SciPy's product on the CPU; torch's CSR path tested here:
    ops.sparse_on_device = True
    ops.reset_counters()
    close(ops.sparse_matmul(S, R), NUMPY.sparse_matmul(S, R), dtype)
    close(ops.sparse_matmul(S, R[:, 0]), NUMPY.sparse_matmul(S, R[:, 0]), dtype)
    assert ops.bytes_moved["to_device"] >= S.data.nbytes  # it did run on torch
    with pytest.raises(ValueError, match="side"):
        ops.solve_triangular(L, R, side="middle")


def test_an_out_of_the_wrong_shape_is_refused_as_numpy_refuses_it():
    # np.copyto broadcast the (4, 1) product into every column of a (4, 5) out
    A, b = np.ones((4, 3)), np.arange(3.0)[:, None]
    with pytest.raises(ValueError):
        NUMPY.matmul(A, b, out=np.zeros((4, 5)))
    with pytest.raises(ValueError, match="out has shape"):
        TorchOps("cpu").matmul(A, b, out=np.zeros((4, 5)))
    out = np.zeros(4)
    assert TorchOps("cpu").matmul(A, b[:, 0], out=out) is out
    close(out, NUMPY.matmul(A, b[:, 0]), np.float64)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dia", "dok", "bsr"])
def test_sparse_matrices_of_every_format_multiply_on_the_device(fmt):
    # a COO Laplacian has no indptr/indices, which the device copy's cache read: AttributeError
    rng = np.random.default_rng(3)
    offsets = range(-20, 20)  # a band, so that DIA stores it without warning
    S = sp.diags([rng.standard_normal(3000 - abs(k)) for k in offsets], offsets, format=fmt)
    D = rng.standard_normal((3000, 2))
    ops = TorchOps("cpu")
    ops.sparse_on_device = True
    expected = NUMPY.sparse_matmul(S, D)
    close(ops.sparse_matmul(S, D), expected, np.float64)
    with ops.resident():  # S above 1 MiB: a kept copy where its format has one
        close(ops.sparse_matmul(S, D), expected, np.float64)
        close(ops.sparse_matmul(S, D[:, 0]), expected[:, 0], np.float64)


def test_singular_matrices_get_numpys_jitter():
    rng = np.random.default_rng(2)
    F = rng.standard_normal((60, 3))
    K = F @ F.T  # rank 3: the unjittered factor is refused
    ops = TorchOps("cpu")
    L, jitter = ops.jittered_cholesky(K)
    L0, jitter0 = NUMPY.jittered_cholesky(K)
    assert jitter == jitter0 > 0
    np.testing.assert_allclose(L @ L.T, K + jitter * np.eye(60), atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError, match="not positive") as failed:
        ops.jittered_cholesky(-np.eye(4), max_tries=2)
    with pytest.raises(np.linalg.LinAlgError) as failed0:
        NUMPY.jittered_cholesky(-np.eye(4), max_tries=2)
    assert str(failed.value) == str(failed0.value)  # one message: cholesky_failure


@pytest.fixture(scope="module")
def fit_problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    labeled = rng.random(600) < 0.2
    L = KNNGraph(n_neighbors=7, bandwidth=1.0).fit(X).laplacian_
    classes = np.where(labeled, (y > np.median(y)).astype(int), -1)
    return X, np.where(labeled, y, np.nan), classes, L


@pytest.mark.parametrize("memory_budget", [None, "600KB"], ids=["cached", "streamed"])
@pytest.mark.parametrize("estimator", [NystromLapRLSRegressor, NystromLapRLSClassifier])
def test_whole_fits_equal_numpys(fit_problem, estimator, memory_budget):
    # "600KB" keeps K_ns (600 x 80) out of the cache: every product streams kernel blocks; with
    # the default budget K_ns is cached once the streamed passes have cost as much (matmul)
    X, y_reg, y_cls, L = fit_problem
    y = y_reg if estimator is NystromLapRLSRegressor else y_cls
    kw = dict(
        kernel=RBF(gamma=0.3),
        ambient_reg=1e-3,
        intrinsic_reg=5.0,
        n_centers=80,
        tol=1e-10,
        random_state=0,
        memory_budget=memory_budget,
    )
    X_new = np.random.default_rng(3).standard_normal((50, 3))
    reference = estimator(**kw).fit(X, y, laplacian=L)
    ops = TorchOps("cpu")
    with use_ops(ops):
        model = estimator(**kw).fit(X, y, laplacian=L)
        predicted = model.predict(X_new)
        train = model.transduction_
    filled = model.solver_info_["cache_filled"]
    assert filled == reference.solver_info_["cache_filled"]  # the same path as NumPy's
    assert filled is (memory_budget is None)  # both paths: K_ns cached (matmul) and streamed
    np.testing.assert_allclose(train, reference.transduction_, rtol=1e-8, atol=1e-8)
    if estimator is NystromLapRLSRegressor:
        np.testing.assert_allclose(predicted, reference.predict(X_new), rtol=1e-8, atol=1e-8)
    else:
        np.testing.assert_array_equal(predicted, reference.predict(X_new))
        with use_ops(ops):
            decision = model.decision_function(X_new)
        np.testing.assert_allclose(
            decision, reference.decision_function(X_new), rtol=1e-8, atol=1e-8
        )
    assert ops.bytes_moved["to_device"] > 0  # the products did run on torch


def test_x_stays_on_the_device_between_calls_of_one_scope(data):
    # dtype="float32" makes the device copy a real copy, even on the CPU
    ops = TorchOps("cpu", dtype="float32")
    kernel, X = RBF(gamma=0.3), np.random.default_rng(4).standard_normal((40_000, 8))
    C, V = X[:50], np.ones((50, 2))
    with ops.resident():
        first = ops.kernel_matmul(kernel, X, C, V)
        moved = ops.bytes_moved["to_device"]
        assert moved >= X.size * 4  # X went up once (as float32)
        second = ops.kernel_matmul(kernel, X, C, V)
        assert ops.bytes_moved["to_device"] - moved < X.size * 4  # not again: only C and V
        np.testing.assert_array_equal(first, second)
        assert ops._cache.hits >= 1 and len(ops._cache) == 1
    assert len(ops._cache) == 0  # dropped at the scope's end
    moved = ops.bytes_moved["to_device"]
    for _ in range(2):  # outside a scope: every call uploads X
        ops.kernel_matmul(kernel, X, C, V)
    assert ops.bytes_moved["to_device"] - moved >= 2 * X.size * 4


def test_a_new_or_changed_x_is_uploaded_again():
    ops, kernel = TorchOps("cpu", dtype="float32"), RBF(gamma=0.3)
    rng = np.random.default_rng(5)
    V = np.ones((30, 1))
    C = rng.standard_normal((30, 8))

    def check(X):
        expected = NUMPY.kernel_matmul(kernel, X.astype(np.float32), C.astype(np.float32), V)
        close(ops.kernel_matmul(kernel, X, C, V), expected.astype(np.float64), np.float32)

    with ops.resident():  # within one scope the content sample is the guard
        X = rng.standard_normal((40_000, 8))
        check(X)
        assert len(ops._cache) == 1
        X *= 0.5  # in place: same object, pointer, shape and strides
        check(X)
        X[:] = rng.standard_normal(X.shape)
        check(X)
        del X
        gc.collect()
        assert len(ops._cache) == 0  # the dead array's copy is gone
        for _ in range(3):  # new arrays of the same shape, possibly at the old address
            check(rng.standard_normal((40_000, 8)))
        ops.clear_cache()
        assert len(ops._cache) == 0


def test_a_kept_matrix_and_its_transpose_are_not_uploaded_again():
    # K_ns cached by the solver: K_ns V then K_nsᵀ U at every product
    rng = np.random.default_rng(6)
    M, V, U = (
        rng.standard_normal((3000, 60)),
        rng.standard_normal((60, 2)),
        rng.standard_normal((3000, 2)),
    )
    ops = TorchOps("cpu")
    with ops.resident():
        close(ops.matmul(M, V), NUMPY.matmul(M, V), np.float64)
        moved = ops.bytes_moved["to_device"]
        assert moved >= M.nbytes
        close(ops.matmul(M.T, U), NUMPY.matmul(M.T, U), np.float64)
        close(ops.matmul(M, V), NUMPY.matmul(M, V), np.float64)
        assert ops.bytes_moved["to_device"] - moved == U.nbytes + V.nbytes


def test_config_context_runs_a_fit_on_torch(fit_problem):
    import semiscale
    from semiscale.linalg.ops import get_ops

    X, y, _, L = fit_problem
    kw = dict(kernel=RBF(gamma=0.3), n_centers=60, tol=1e-10, random_state=0)
    reference = NystromLapRLSRegressor(memory_budget="600KB", **kw).fit(X, y, laplacian=L)
    with semiscale.config_context(backend="torch"):
        ops = get_ops()
        assert isinstance(ops, TorchOps) and str(ops.device) == "cpu"
        model = NystromLapRLSRegressor(memory_budget="600KB", **kw).fit(X, y, laplacian=L)
    np.testing.assert_allclose(model.transduction_, reference.transduction_, rtol=1e-8, atol=1e-8)
    assert ops.bytes_moved["to_device"] > 0


class DeviceOps(TorchOps):
    """CPU torch with memory of its own, as a GPU's: every upload is a copy (on the CPU a float64
    upload is a view of the host array, which an in-place edit would reach), and the scopes of
    the fits are recorded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.scopes = []

    def _to_device(self, array, dtype):
        return super()._to_device(array, dtype).clone()

    def _resident(self, array, dtype):  # the device copy of a kernel product's X
        if not any(cache is self._cache for cache in self.scopes):
            self.scopes.append(self._cache)
        return super()._resident(array, dtype)


@pytest.fixture(scope="module")
def wide_problem():
    # 600 x 250 float64 = 1.2 MB: above the 1 MiB below which arrays are never kept
    rng = np.random.default_rng(7)
    X = rng.standard_normal((600, 250))
    y = np.where(rng.random(600) < 0.2, X[:, 0] + np.sin(X[:, 1]), np.nan)
    L = KNNGraph(n_neighbors=7, bandwidth=20.0).fit(X).laplacian_
    kw = dict(kernel=RBF(gamma=1 / 500), n_centers=60, tol=1e-10, random_state=0)
    return X, y, L, kw


def test_x_edited_in_place_between_two_fits_is_seen(wide_problem):
    # One long-lived TorchOps (as set_config(backend="torch") gives): rows 5-29 of X change in
    # place between two fits, between the rows of the content sample (0, 39, 79, ...).  The
    # second fit must be NumPy's on the edited X: the first fit's device copy of X is gone.
    X0, y, L, kw = wide_problem
    X = X0.copy()
    ops = DeviceOps("cpu")
    with use_ops(ops):
        NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
        X[5:30] = np.random.default_rng(8).standard_normal((25, X.shape[1]))
        model = NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
    reference = NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
    stale = NystromLapRLSRegressor(**kw).fit(X0, y, laplacian=L)
    assert np.abs(stale.transduction_ - reference.transduction_).max() > 1e-3  # the edit shows
    np.testing.assert_allclose(model.transduction_, reference.transduction_, rtol=1e-8, atol=1e-8)
    X_new = X[:40].copy()
    with use_ops(ops):  # predictions too: each call outside a fit uploads afresh
        first = model.predict(X_new)
        X_new[:10] *= 1.5
        second = model.predict(X_new)
    np.testing.assert_allclose(first, reference.predict(X[:40]), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(second, reference.predict(X_new), rtol=1e-8, atol=1e-8)


def test_a_fit_keeps_x_on_the_device_and_drops_it_at_the_end(wide_problem):
    X, y, L, kw = wide_problem
    ops = DeviceOps("cpu")
    ops.kernel_cache_bytes = 0  # K_ns not cached: X in every product
    with use_ops(ops):
        model = NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
    assert not model.solver_info_["cache_filled"]
    scopes = [cache for cache in ops.scopes if cache is not ops._uncached]
    assert len(scopes) == 1  # one scope for the whole fit
    assert scopes[0].misses >= 1 and scopes[0].hits >= 10  # X uploaded once, reused after
    assert len(scopes[0]) == 0 and len(ops._cache) == 0  # nothing left on the device


def test_the_kernel_cache_follows_the_backends_answer(fit_problem):
    # TorchOps.kernel_cache_pays: up to kernel_cache_bytes (None on the CPU, 0 on a GPU); here
    # the CPU device is given limits around K_ns's size
    X, y, _, L = fit_problem
    kw = dict(kernel=RBF(gamma=0.3), n_centers=80, tol=1e-10, random_state=0)
    reference = NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
    assert reference.solver_info_["cache_filled"]  # NumPy: K_ns (600 x 80) cached
    assert NUMPY.kernel_cache_pays(10**15)
    for limit, cached in ((None, True), (600 * 80 * 8, True), (600 * 80 * 8 - 1, False)):
        ops = TorchOps("cpu")
        ops.kernel_cache_bytes = limit
        assert ops.kernel_cache_pays(600 * 80 * 8) is cached
        with use_ops(ops):
            model = NystromLapRLSRegressor(**kw).fit(X, y, laplacian=L)
        assert model.solver_info_["cache_filled"] is cached
        np.testing.assert_allclose(
            model.transduction_, reference.transduction_, rtol=1e-8, atol=1e-8
        )
    small = TorchOps("cpu", resident_bytes=1000)
    assert small.kernel_cache_bytes is None  # the CPU reads a host cache in place, always


# ---------------------------------------------------------------- the preconditioner's Gram update
def feature_gram_case(dtype, kernel):
    """A Gram update of 35 points, 5 of them centers, through two sparse maps, on a full G."""
    rng = np.random.default_rng(11)
    C = rng.standard_normal((40, 3)).astype(dtype)
    lower, _ = NUMPY.jittered_cholesky(NUMPY.kernel_matrix(kernel, C, C).astype(np.float64))
    pos = np.full(35, -1)
    pos[[3, 10, 20, 31, 34]] = [0, 5, 7, 2, 39]
    A = rng.standard_normal((30, 3)).astype(dtype)  # the 30 points that are not centers
    maps = [
        sp.random(50, 35, density=0.1, random_state=1, format="csr"),
        sp.random(7, 35, density=0.2, random_state=2, format="coo"),
        sp.csr_matrix((0, 35)),  # a block without rows adds nothing
        (np.array([0, 3, 17, 34]), np.array([0.5, 0.0, 2.0, 1.5])),  # scaled rows of Φ
    ]
    G = np.asfortranarray(rng.standard_normal((40, 40)))
    return G, lower, A, C, pos, maps


@pytest.mark.parametrize("sparse_on_device", [False, True], ids=["scipy-maps", "torch-maps"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", KERNELS[:2], ids=lambda k: type(k).__name__)
def test_nystrom_feature_gram_equals_numpys(kernel, dtype, sparse_on_device):
    # DeviceOps: G's device copy is not the host array, so the result must come back into G
    G0, lower, A, C, pos, maps = feature_gram_case(dtype, kernel)
    expected = G0.copy(order="F")
    trace = NUMPY.nystrom_feature_gram(expected, lower, kernel, A, C, pos, maps, 0.7, 10**6)
    ops = DeviceOps("cpu")
    ops.sparse_on_device = sparse_on_device
    G = G0.copy(order="F")
    got = ops.nystrom_feature_gram(G, lower, kernel, A, C, pos, maps, 0.7, 200_000)
    close(np.tril(G), np.tril(expected), dtype)
    assert got == pytest.approx(trace, rel=RTOL[dtype])
    # the reference: Φ from explicit kernel rows and solves, the maps applied densely
    Phi = np.empty((35, 40))
    Phi[pos >= 0] = lower[pos[pos >= 0]]
    K = kernel(A, C).astype(np.float64)
    Phi[pos < 0] = np.linalg.solve(lower, K.T).T
    mapped = [M[1][:, None] * Phi[M[0]] if isinstance(M, tuple) else M @ Phi for M in maps]
    dense = G0 + 0.7 * sum(R.T @ R for R in mapped)
    close(np.tril(expected), np.tril(dense), np.float64)


def test_nystrom_feature_gram_of_centers_only_needs_no_kernel_rows():
    G0, lower, _, C, _, maps = feature_gram_case(np.float64, RBF(gamma=0.3))
    pos = np.arange(35) % 40
    empty = np.empty((0, 3))
    expected, G = G0.copy(order="F"), G0.copy(order="F")
    NUMPY.nystrom_feature_gram(expected, lower, RBF(gamma=0.3), empty, C, pos, maps)
    TorchOps("cpu").nystrom_feature_gram(G, lower, RBF(gamma=0.3), empty, C, pos, maps)
    close(np.tril(G), np.tril(expected), np.float64)


class UncachedNumPy(ArrayOps):
    def kernel_cache_pays(self, nbytes):
        return False


class CountingTorchOps(DeviceOps):
    feature_grams = 0

    def nystrom_feature_gram(self, *args, **kwargs):
        self.feature_grams += 1
        return super().nystrom_feature_gram(*args, **kwargs)


@pytest.mark.parametrize("estimator", [NystromLapRLSRegressor, NystromLapRLSClassifier])
def test_a_streamed_fit_builds_its_preconditioner_on_the_device(fit_problem, estimator):
    # K_ns not cached (as on a GPU): the sampled-Hessian preconditioner's graph rows go through
    # nystrom_feature_gram, on the device; the fit equals NumPy's (which takes the same path)
    X, y_reg, y_cls, L = fit_problem
    y = y_reg if estimator is NystromLapRLSRegressor else y_cls
    kw = dict(kernel=RBF(gamma=0.3), n_centers=80, tol=1e-10, random_state=0, memory_budget="2MB")
    ops = CountingTorchOps("cpu")
    ops.kernel_cache_bytes = 0
    with use_ops(ops):
        model = estimator(**kw).fit(X, y, laplacian=L)
    with use_ops(UncachedNumPy()):
        reference = estimator(**kw).fit(X, y, laplacian=L)
    assert not model.solver_info_["cache_filled"] and not reference.solver_info_["cache_filled"]
    assert ops.feature_grams >= 1
    assert model.solver_info_["laplacian_rows"] == reference.solver_info_["laplacian_rows"]
    np.testing.assert_allclose(model.transduction_, reference.transduction_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(model.predict(X), reference.predict(X), rtol=1e-8, atol=1e-8)
