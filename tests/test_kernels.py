"""Kernel objects against scikit-learn's pairwise kernels, heuristics, API and errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import BaseEstimator, clone
from sklearn.metrics.pairwise import (
    laplacian_kernel,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)

from semiscale.kernels import (
    MEDIAN_SAMPLE_SIZE,
    RBF,
    Kernel,
    LaplacianKernel,
    Linear,
    Polynomial,
    gamma_from_paper,
    gamma_from_sigma,
    result_dtype,
    sigma_from_gamma,
    squared_distances,
)

CASES = {
    "rbf": (RBF(gamma=0.7), lambda a, b: rbf_kernel(a, b, gamma=0.7)),
    "laplacian": (LaplacianKernel(gamma=0.3), lambda a, b: laplacian_kernel(a, b, gamma=0.3)),
    "linear": (Linear(), linear_kernel),
    "poly": (
        Polynomial(degree=3, gamma=0.5, coef0=1.5),
        lambda a, b: polynomial_kernel(a, b, degree=3, gamma=0.5, coef0=1.5),
    ),
}


def _data(seed=0, n=40, m=25, d=6):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((m, d))


def _sparse(X, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(X * (rng.random(X.shape) < 0.4))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("fmt", ["dense", "sparse", "dense-sparse", "sparse-dense"])
@pytest.mark.parametrize("symmetric", [False, True])
def test_matches_sklearn(name, fmt, symmetric):
    kernel, ref = CASES[name]
    A, B = _data()
    A_s, B_s = _sparse(A, 1), _sparse(B, 2)
    A_in = A_s if fmt.startswith("sparse") else (_sparse(A, 1).toarray() if "sparse" in fmt else A)
    B_in = B_s if fmt.endswith("-sparse") or fmt == "sparse" else B
    if fmt == "sparse-dense":
        B_in = B_s.toarray()
    if symmetric:
        K, R = kernel(A_in), ref(A_in, A_in)
    else:
        K, R = kernel(A_in, B_in), ref(A_in, B_in)
    assert isinstance(K, np.ndarray) and K.dtype == np.float64
    assert K.shape == R.shape
    np.testing.assert_allclose(K, R, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_in_float32_out(name, sparse):
    kernel, ref = CASES[name]
    A, B = _data(3, d=4)
    A, B = A / 2, B / 2  # keep the polynomial's values moderate for float32
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    if sparse:
        A32, B32 = sp.csr_matrix(A32), sp.csr_matrix(B32)
    K = kernel(A32, B32)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, ref(A, B), rtol=2e-5, atol=2e-5)
    assert kernel(A32, B).dtype == np.float64  # mixed -> float64
    assert kernel(A32).dtype == np.float32
    assert kernel.diag(A32).dtype == np.float32


@pytest.mark.parametrize("name", CASES)
def test_sparse_formats_and_duplicates(name):
    kernel, ref = CASES[name]
    # a CSR with a duplicated entry (row 0, column 1 stored twice): must be summed, not dropped
    C = sp.csr_matrix(
        (np.array([1.0, 2.0, 3.0, 0.5]), np.array([1, 1, 0, 2]), np.array([0, 2, 4])), shape=(2, 3)
    )
    assert not C.has_canonical_format
    dense = C.toarray()
    data_before = C.data.copy()
    np.testing.assert_allclose(kernel(C), ref(dense, dense), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(C), np.diag(ref(dense, dense)), rtol=1e-12)
    np.testing.assert_array_equal(C.data, data_before)  # the input is not modified
    A, B = _data(8)
    A_s = _sparse(A)
    ref_AB = ref(A_s.toarray(), B)
    for fmt in (sp.csr_array, sp.coo_matrix, sp.csc_matrix):
        np.testing.assert_allclose(kernel(fmt(A_s), B), ref_AB, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel(np.asfortranarray(A), B), ref(A, B), rtol=1e-12, atol=1e-12)


def test_integer_and_list_inputs_are_float64():
    K = RBF(0.5)([[0, 1], [2, 3]], [[1, 1]])
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, rbf_kernel([[0, 1], [2, 3]], [[1, 1]], gamma=0.5), rtol=1e-14)
    assert result_dtype(np.zeros(2, np.float32), np.zeros(2)) == np.float64


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_diag_equals_diagonal(name, sparse):
    kernel, _ = CASES[name]
    A, _ = _data(4)
    A_in = _sparse(A) if sparse else A
    np.testing.assert_allclose(kernel.diag(A_in), np.diag(kernel(A_in)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_exact_zero_self_distances(sparse):
    rng = np.random.default_rng(5)
    A = 1e3 + rng.standard_normal((60, 8))  # large offset: cancellation without the fix
    A_in = _sparse(A) if sparse else A
    for D in (squared_distances(A_in), squared_distances(A_in, A_in)):
        assert np.all(np.diag(D) == 0.0) and np.all(D >= 0.0)
    assert np.all(np.diag(RBF(1.0)(A_in)) == 1.0)
    assert np.all(np.diag(LaplacianKernel(1.0)(A_in)) == 1.0)
    diffs = A[:, None, :] - A[None, :, :]
    np.testing.assert_allclose(squared_distances(A), (diffs**2).sum(-1), atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(
    X=st.integers(1, 15).flatmap(
        lambda n: arrays(np.float64, (n, 3), elements=st.floats(-5, 5, allow_nan=False))
    ),
    gamma=st.floats(0.01, 10),
    which=st.sampled_from([RBF, LaplacianKernel]),
)
def test_stationary_gram_is_psd(X, gamma, which):
    K = which(gamma=gamma)(X)
    n = K.shape[0]
    assert np.all(np.diag(K) == 1.0)
    assert np.linalg.eigvalsh((K + K.T) / 2).min() >= -1e-8 * n


def _median_direct(X, metric):
    diffs = X[:, None, :] - X[None, :, :]
    D = np.abs(diffs).sum(-1) if metric == "l1" else np.sqrt((diffs**2).sum(-1))
    return np.median(D[np.triu_indices(len(X), 1)])


@pytest.mark.parametrize("sparse", [False, True])
def test_median_and_mean_heuristics_match_numpy(sparse):
    X, _ = _data(6, n=120, d=5)
    X_in = _sparse(X) if sparse else X
    X = X_in.toarray() if sparse else X
    med2 = _median_direct(X, "l2")
    assert RBF("median").resolve(X_in).gamma == pytest.approx(1 / (2 * med2**2), rel=1e-10)
    assert LaplacianKernel("median").resolve(X_in).gamma == pytest.approx(
        1 / _median_direct(X, "l1"), rel=1e-10
    )
    beta = ((X - X.mean(0)) ** 2).sum(1).mean()
    assert RBF("mean").resolve(X_in).gamma == pytest.approx(1 / beta, rel=1e-10)
    beta1 = np.abs(X - X.mean(0)).sum(1).mean()
    assert LaplacianKernel("mean").resolve(X_in).gamma == pytest.approx(1 / beta1, rel=1e-10)
    # σ = median distance: the kernel at the median distance is exp(-1/2)
    assert RBF("median").resolve(X_in)(np.zeros((1, 5)), [[med2, 0, 0, 0, 0]])[0, 0] == (
        pytest.approx(np.exp(-0.5), rel=1e-10)
    )


def _local_direct(X, metric, k=8):
    """Median over the distinct points of the distance to the k-th nearest other one."""
    X = np.unique(X, axis=0)
    diffs = X[:, None, :] - X[None, :, :]
    D = np.abs(diffs).sum(-1) if metric == "l1" else np.sqrt((diffs**2).sum(-1))
    return np.median([np.sort(row)[k] for row in D])


@pytest.mark.parametrize("sparse", [False, True])
def test_local_heuristic_is_the_median_kth_neighbour_distance(sparse):
    X, _ = _data(6, n=120, d=5)
    X_in = _sparse(X) if sparse else X
    X = X_in.toarray() if sparse else X
    sigma = _local_direct(X, "l2")
    assert RBF("local").resolve(X_in).gamma == pytest.approx(1 / (2 * sigma**2), rel=1e-10)
    assert LaplacianKernel("local").resolve(X_in).gamma == pytest.approx(
        1 / _local_direct(X, "l1"), rel=1e-10
    )
    # narrower than the median width: the local scale, not the spread of the data
    assert RBF("local").resolve(X_in).gamma > RBF("median").resolve(X_in).gamma


def test_local_heuristic_skips_duplicates_and_samples_reproducibly():
    X, _ = _data(3, n=60, d=4)
    tripled = np.repeat(X, 3, axis=0)
    assert RBF("local").resolve(tripled).gamma == pytest.approx(RBF("local").resolve(X).gamma)
    few = X[:5]  # fewer than 8 neighbours: the farthest one counts
    assert RBF("local").resolve(few).gamma == pytest.approx(
        1 / (2 * _local_direct(few, "l2", 4) ** 2)
    )
    big = np.random.default_rng(7).standard_normal((MEDIAN_SAMPLE_SIZE + 300, 3))
    g0 = RBF("local").resolve(big, random_state=0).gamma
    idx = np.sort(np.random.RandomState(0).choice(len(big), MEDIAN_SAMPLE_SIZE, replace=False))
    assert g0 == pytest.approx(1 / (2 * _local_direct(big[idx], "l2") ** 2), rel=1e-10)
    assert RBF("local").resolve(big, random_state=0).gamma == g0


@pytest.mark.parametrize("gamma", ["local", "median"])
def test_heuristic_sample_takes_a_generator(gamma):
    X = np.random.default_rng(7).standard_normal((MEDIAN_SAMPLE_SIZE + 300, 3))
    first = RBF(gamma).resolve(X, random_state=np.random.default_rng(0)).gamma
    assert RBF(gamma).resolve(X, random_state=np.random.default_rng(0)).gamma == first


def test_median_sample_is_reproducible():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((MEDIAN_SAMPLE_SIZE + 300, 3))
    g0 = RBF("median").resolve(X, random_state=0).gamma
    assert RBF("median").resolve(X, random_state=0).gamma == g0
    idx = np.sort(np.random.RandomState(0).choice(len(X), MEDIAN_SAMPLE_SIZE, replace=False))
    assert g0 == pytest.approx(1 / (2 * _median_direct(X[idx], "l2") ** 2), rel=1e-10)
    g1 = RBF("median").resolve(X, random_state=1).gamma
    assert g1 != g0 and g1 == pytest.approx(g0, rel=0.05)


def test_resolve_returns_copy_without_mutating():
    X, _ = _data()
    k = RBF(gamma="median")
    r = k.resolve(X)
    assert k.gamma == "median" and r is not k and isinstance(r.gamma, float)
    for numeric in (RBF(0.3), LaplacianKernel(2.0), Linear(), Polynomial(2, 0.1, 0.0)):
        copy = numeric.resolve(X)
        assert copy is not numeric and type(copy) is type(numeric)
        assert copy.get_params() == numeric.get_params()


class _Holder(BaseEstimator):
    def __init__(self, kernel=None):
        self.kernel = kernel


def test_sklearn_params_and_clone():
    k = Polynomial(degree=2, gamma=0.5, coef0=0.0)
    assert k.get_params() == {"degree": 2, "gamma": 0.5, "coef0": 0.0}
    c = clone(k)
    assert c is not k and c.get_params() == k.get_params()
    h = _Holder(kernel=RBF(gamma=1.0)).set_params(kernel__gamma=3.0)
    assert h.kernel.gamma == 3.0 and h.get_params()["kernel__gamma"] == 3.0
    assert repr(RBF(gamma="median")) == "RBF(gamma='median')"
    assert RBF().kappa2 == 1.0 and LaplacianKernel().is_stationary and Linear().kappa2 is None


@pytest.mark.parametrize("bad", [-1.0, 0, np.inf, np.nan, True, "foo", None, [1.0]])
@pytest.mark.parametrize("cls", [RBF, LaplacianKernel])
def test_bad_gamma_is_a_clear_error(cls, bad):
    X, _ = _data()
    with pytest.raises(ValueError, match="gamma"):
        cls(gamma=bad).resolve(X)
    with pytest.raises(ValueError, match="gamma"):
        cls(gamma=bad)(X)


@pytest.mark.parametrize(
    "params",
    [{"degree": 0}, {"degree": 2.5}, {"gamma": -1.0}, {"coef0": -1.0}, {"coef0": np.nan}],
)
def test_bad_polynomial_params(params):
    with pytest.raises(ValueError, match=next(iter(params))):
        Polynomial(**params)(np.ones((2, 2)))


@pytest.mark.parametrize("method", ["call", "diag", "blocks"])
def test_unresolved_kernel_asks_for_resolve(method):
    X, _ = _data()
    k = RBF(gamma="median")
    with pytest.raises(ValueError, match=r"resolve\(X\)"):
        {"call": k, "diag": k.diag, "blocks": k.blocks}[method](X)


def test_zero_width_and_too_few_points():
    with pytest.raises(ValueError, match="numeric gamma"):
        RBF("median").resolve(np.ones((5, 2)))
    with pytest.raises(ValueError, match="numeric gamma"):
        LaplacianKernel("mean").resolve(np.ones((5, 2)))
    with pytest.raises(ValueError, match="numeric gamma"):
        RBF("local").resolve(np.ones((5, 2)))
    with pytest.raises(ValueError, match="2 samples"):
        RBF("median").resolve(np.ones((1, 2)))


def test_input_errors():
    A = np.ones((3, 2))
    with pytest.raises(ValueError, match="NaN or infinite"):
        RBF()(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="NaN or infinite"):
        Linear()(A, sp.csr_matrix(np.array([[np.inf, 0.0]])))
    with pytest.raises(ValueError, match="features"):
        RBF()(A, np.ones((2, 3)))
    with pytest.raises(ValueError, match="2-D"):
        RBF()(np.ones(3))
    big = np.full((2, 2), 1e308)  # finite values whose sum overflows: still accepted
    assert Linear()(big[:, :1] * 0, big[:, :1]).shape == (2, 2)


def test_converters():
    assert gamma_from_sigma(2.0) == pytest.approx(1 / 8)
    assert sigma_from_gamma(gamma_from_sigma(0.3)) == pytest.approx(0.3)
    assert gamma_from_paper(2.0, "2sigma2") == pytest.approx(1 / 8)
    assert gamma_from_paper(2.0, "sigma2") == pytest.approx(1 / 4)
    assert gamma_from_paper(4.0, "beta") == pytest.approx(1 / 4)
    assert gamma_from_paper(0.5, "gamma") == 0.5
    # paper 000's exp(-d²/4) is σ = √2
    assert gamma_from_paper(np.sqrt(2), "2sigma2") == pytest.approx(0.25)
    with pytest.raises(ValueError, match="convention"):
        gamma_from_paper(1.0, "sigma")
    for bad in (0.0, -1.0, np.nan, "1"):
        with pytest.raises(ValueError):
            gamma_from_sigma(bad)
        with pytest.raises(ValueError):
            gamma_from_paper(bad, "beta")


def test_rbf_blocks_of_near_duplicates_are_within_rounding_of_one():
    """The dense RBF block has no clip at exponent 0 (one elementwise pass fewer): duplicate
    rows of data far from the origin still give 1 to rounding, and the diagonal of K(A, A)
    is exactly 1."""
    rng = np.random.default_rng(0)
    A = 1e3 + rng.standard_normal((50, 8))
    B = np.vstack([A[:20], A[:20] + 1e-9])  # exact and near duplicates
    kernel = RBF(gamma=0.3)
    K = kernel(A, B)
    np.testing.assert_allclose(K[np.arange(20), np.arange(20)], 1.0, rtol=0, atol=1e-12)
    diff = A[:, None, :] - B[None, :, :]  # explicit differences: no cancellation
    exact = np.exp(-0.3 * np.einsum("ijk,ijk->ij", diff, diff))
    np.testing.assert_allclose(K, exact, rtol=1e-12, atol=1e-13)
    assert np.all(K <= 1.0 + 1e-12)
    np.testing.assert_array_equal(np.diag(kernel(A)), 1.0)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("fmt", ["dense", "sparse", "dense-sparse"])
def test_paired_is_the_diagonal_of_the_cross_matrix(name, fmt):
    kernel, ref = CASES[name]
    A, _ = _data(n=150)
    B = A[::-1] + 0.3
    A_in = _sparse(A, 1) if fmt == "sparse" else A
    B_in = _sparse(B, 2) if fmt != "dense" else B
    dense = lambda M: M.toarray() if sp.issparse(M) else M  # noqa: E731
    expected = np.diagonal(ref(dense(A_in), dense(B_in)))
    np.testing.assert_allclose(kernel.paired(A_in, B_in), expected, rtol=1e-12, atol=1e-12)


def test_paired_generic_fallback_and_shape_check():
    class Scaled(RBF):  # a kernel without its own _paired: the diagonals of small blocks
        def _paired(self, A, B):
            return Kernel._paired(self, A, B)

    A, _ = _data(n=150)
    B = A + 0.1
    np.testing.assert_allclose(Scaled(0.7).paired(A, B), RBF(0.7).paired(A, B), rtol=1e-12)
    with pytest.raises(ValueError, match="same shape"):
        RBF(0.7).paired(A, B[:-1])


def test_the_old_name_laplacian_warns_and_gives_laplacian_kernel():
    # renamed so that the kernel is not mistaken for the graph Laplacian: the old name works for
    # one release, through both import paths, and says what to use instead
    import semiscale
    import semiscale.kernels as kernels

    for module in (kernels, semiscale):
        with pytest.warns(FutureWarning, match=r"Laplacian is deprecated.*LaplacianKernel"):
            old = module.Laplacian
        assert old is LaplacianKernel
    with pytest.warns(FutureWarning, match="LaplacianKernel"):
        from semiscale.kernels import Laplacian  # noqa: F401
    assert "Laplacian" not in semiscale.__all__ and "LaplacianKernel" in semiscale.__all__
    assert "Laplacian" not in kernels.__all__
    with pytest.raises(AttributeError, match="no attribute 'Laplacien'"):
        kernels.Laplacien  # noqa: B018
