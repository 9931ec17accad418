"""Cluster-kernel transformers (paper 003): the spectral core, the transfers, the sizing, and
:class:`ClusterKernel` / :class:`NystromClusterKernel` against dense closed forms (n ≤ 200)."""

import functools
import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from semiscale._memory import MemoryBudgetError, parse_memory_budget
from semiscale.cluster_kernels import (
    ClusterKernel,
    CutWarning,
    NystromClusterKernel,
    StochasticClusterKernel,
)
from semiscale.cluster_kernels import transfer as tr
from semiscale.cluster_kernels._sizing import (
    DEFAULT_MAX_COMPONENTS,
    largest_subsample,
    nystrom_sizes,
    stream_bytes,
)
from semiscale.cluster_kernels._spectral import (
    extend_eigenvectors,
    kernel_degrees,
    virtual_samples,
)
from semiscale.datasets import make_two_moons
from semiscale.kernels import RBF
from semiscale.linalg.ops import get_ops


def _points(n=120, d=3, seed=0):
    return np.random.RandomState(seed).randn(n, d)


def _dense_laplacian(X, gamma):
    K = RBF(gamma=gamma)(X)
    d = K.sum(axis=1)
    return K, d, K / np.sqrt(np.outer(d, d))


def _closed_form(L, transfer, cut):
    """K̃ = D̃^{1/2} U Σ̃ Uᵀ D̃^{1/2}, D̃_ii = 1 / L̃_ii, from numpy's own eigh."""
    w, V = np.linalg.eigh(L)
    w, V = np.maximum(w[::-1], 0.0), V[:, ::-1]
    s = tr.TRANSFERS[transfer](w, cut) if isinstance(transfer, str) else transfer(w, cut)
    Lt = (V * s) @ V.T
    Dt = 1.0 / np.diag(Lt)
    return np.sqrt(Dt)[:, None] * Lt * np.sqrt(Dt)[None, :]


# ----------------------------------------------------------------------------- transfers
SIGMA = np.array([0.9, 0.64, 0.25, 0.04, 0.01])


@pytest.mark.parametrize(
    "name, expected",
    [
        ("linear", SIGMA),
        ("step", [1.0, 1.0, 0.0, 0.0, 0.0]),
        ("linear-step", [0.9, 0.64, 0.0, 0.0, 0.0]),
        ("polynomial", SIGMA**2),
        ("poly-step", [0.9**0.5, 0.8, 0.25**2, 0.04**2, 0.01**2]),
    ],
)
def test_each_transfer_matches_its_formula(name, expected):
    np.testing.assert_allclose(tr.resolve_transfer(name)(SIGMA, 2), expected, rtol=1e-15)


def test_poly_step_with_a_cut_past_the_spectrum_is_a_square_root():
    np.testing.assert_allclose(tr.poly_step(SIGMA, 5), np.sqrt(SIGMA))
    np.testing.assert_allclose(tr.poly_step(SIGMA, 100), np.sqrt(SIGMA))


def test_transfer_names_and_callables_are_checked():
    cubic = functools.partial(tr.polynomial, power=3)
    assert tr.resolve_transfer(cubic) is cubic
    np.testing.assert_allclose(tr.apply_transfer(cubic, SIGMA, 0), SIGMA**3)
    with pytest.raises(ValueError, match="transfer='poly' names no transfer.*'poly-step'"):
        tr.resolve_transfer("poly")
    with pytest.raises(TypeError, match="transfer must be one of"):
        tr.resolve_transfer(3)
    with pytest.raises(ValueError, match="negative or non-finite"):
        tr.apply_transfer(lambda s, h: s - 1.0, SIGMA, 2)
    with pytest.raises(ValueError, match="one new eigenvalue per eigenvalue"):
        tr.apply_transfer(lambda s, h: s[:2], SIGMA, 2)


# ---------------------------------------------------------------------------- the core
def test_layer_eigh_gives_the_top_pairs_in_decreasing_order():
    A = np.random.RandomState(1).randn(40, 40)
    A = A + A.T
    w, V = np.linalg.eigh(A)
    values, vectors = get_ops().eigh(A.copy(), n_top=6)
    np.testing.assert_allclose(values, w[::-1][:6], rtol=1e-12)
    np.testing.assert_allclose(np.abs(vectors.T @ V[:, ::-1][:, :6]), np.eye(6), atol=1e-10)
    values, vectors = get_ops().eigh(A.copy(), overwrite_a=True)
    np.testing.assert_allclose((vectors * values) @ vectors.T, A, atol=1e-10)


def test_kernel_degrees_are_the_row_sums_blockwise():
    X = _points()
    K, d, _ = _dense_laplacian(X, 0.5)
    # a budget small enough for several row blocks
    np.testing.assert_allclose(kernel_degrees(RBF(gamma=0.5), X, "96KiB"), d, rtol=1e-12)
    Y = X[:7] + 0.1
    np.testing.assert_allclose(
        kernel_degrees(RBF(gamma=0.5), X, rows=Y), RBF(gamma=0.5)(Y, X).sum(axis=1), rtol=1e-12
    )


@pytest.mark.parametrize("transfer", ["poly-step", "linear", "step", "polynomial"])
def test_virtual_samples_give_the_closed_form_cluster_kernel(transfer):
    X = _points(100)
    _, _, L = _dense_laplacian(X, 0.5)
    values, vectors = get_ops().eigh(L.copy())
    F, transferred = virtual_samples(vectors, values, transfer, 12)
    np.testing.assert_allclose(F @ F.T, _closed_form(L, transfer, 12), atol=1e-10)
    np.testing.assert_allclose(np.diag(F @ F.T), 1.0, atol=1e-12)
    assert transferred.shape == values.shape


def test_a_row_with_no_transferred_weight_stays_zero():
    U = np.array([[1.0, 0.0], [0.0, 1.0]])
    F, _ = virtual_samples(U, np.array([0.5, 0.2]), "step", 1)
    np.testing.assert_array_equal(F, [[1.0, 0.0], [0.0, 0.0]])


def test_the_extension_reproduces_the_fitted_rows():
    X = _points(90)
    kernel = RBF(gamma=0.5)
    _, d, L = _dense_laplacian(X, 0.5)
    values, vectors = get_ops().eigh(L.copy())
    F, _ = virtual_samples(vectors, values, "poly-step", 10)
    U_new = extend_eigenvectors(kernel, X, d, vectors, values, X, memory_budget="96KiB")
    F_new, _ = virtual_samples(U_new, values, "poly-step", 10)
    np.testing.assert_allclose(F_new @ F_new.T, F @ F.T, atol=1e-9)
    # the leading eigenvectors themselves come back
    np.testing.assert_allclose(U_new[:, :10], vectors[:, :10], atol=1e-9)


# -------------------------------------------------------------------------- transformers
def _moons(n=150, seed=0, n_labeled=6):
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    y_ssl = np.full_like(y, -1)
    y_ssl[:n_labeled] = y[:n_labeled]
    return X, y_ssl


@pytest.mark.parametrize("transfer", ["poly-step", "linear-step", "polynomial"])
def test_cluster_kernel_F_gives_the_closed_form(transfer):
    X, y = _moons()
    ck = ClusterKernel(gamma=2.0, transfer=transfer)
    F = ck.fit_transform(X, y)
    assert ck.cut_ == 6 + 9 and ck.n_components_ == F.shape[1] == 150
    _, _, L = _dense_laplacian(X, 2.0)
    np.testing.assert_allclose(F @ F.T, _closed_form(L, transfer, 15), atol=1e-10)
    # transform of the fitted points is the fitted rows (the extension), and is what fit gives
    np.testing.assert_allclose(ck.transform(X) @ F.T, F @ F.T, atol=1e-8)
    np.testing.assert_allclose(
        ClusterKernel(gamma=2.0, transfer=transfer).fit(X, y).transform(X), ck.transform(X)
    )


@pytest.mark.parametrize("transfer", ["poly-step", "linear", "step"])
def test_nystrom_with_every_column_and_rank_is_the_exact_cluster_kernel(transfer):
    X, y = _moons(120)
    exact = ClusterKernel(gamma=2.0, transfer=transfer).fit_transform(X, y)
    nys = NystromClusterKernel(n_components=120, n_landmarks=120, gamma=2.0, transfer=transfer)
    F = nys.fit_transform(X, y)
    assert (nys.n_components_, nys.n_landmarks_) == (120, 120)
    np.testing.assert_allclose(F @ F.T, exact @ exact.T, atol=1e-8)
    X_new = X[:15] + 0.05
    ck = ClusterKernel(gamma=2.0, transfer=transfer).fit(X, y)
    new_exact, new_nys = ck.transform(X_new), nys.transform(X_new)
    np.testing.assert_allclose(new_nys @ F.T, new_exact @ exact.T, atol=1e-7)


def test_nystrom_eigensystem_follows_eq_13():
    # a rank-k Nyström of L from s landmarks, written out densely
    X, _ = _moons(100)
    nys = NystromClusterKernel(n_components=8, n_landmarks=30, gamma=2.0, cut=3, random_state=1)
    F = nys.fit_transform(X)
    K, d, L = _dense_laplacian(X, 2.0)
    S = nys.landmark_indices_
    W = L[np.ix_(S, S)]
    w, V = np.linalg.eigh(W)
    w, V = w[::-1][:8], V[:, ::-1][:, :8]
    np.testing.assert_allclose(nys.eigenvalues_, 100 / 30 * w, rtol=1e-10)
    U = np.sqrt(30 / 100) * L[:, S] @ V / w
    sig = tr.poly_step(100 / 30 * w, 3)
    Lt = (U * sig) @ U.T
    Dt = 1.0 / np.diag(Lt)
    np.testing.assert_allclose(F @ F.T, np.sqrt(np.outer(Dt, Dt)) * Lt, atol=1e-9)


def test_the_kernel_reading_follows_eqs_3_to_6():
    X, _ = _moons(100)
    nys = NystromClusterKernel(
        n_components=8, n_landmarks=30, gamma=2.0, cut=3, approximation="kernel", random_state=1
    )
    F = nys.fit_transform(X)
    assert nys.degrees_ is None
    K, d, _ = _dense_laplacian(X, 2.0)
    S = nys.landmark_indices_
    w, V = np.linalg.eigh(K[np.ix_(S, S)])
    w, V = w[::-1][:8], V[:, ::-1][:, :8]
    U = np.sqrt(30 / 100) * K[:, S] @ V / w  # eq. (13) on K
    sig = tr.poly_step(100 / 30 * w, 3)
    Lt = (U * sig) @ U.T / np.sqrt(np.outer(d, d))  # eq. (4): D^{-1/2} U Σ̃ Uᵀ D^{-1/2}
    Dt = 1.0 / np.diag(Lt)  # eq. (5)
    np.testing.assert_allclose(F @ F.T, np.sqrt(np.outer(Dt, Dt)) * Lt, atol=1e-9)


@pytest.mark.parametrize("cls", [ClusterKernel, NystromClusterKernel])
def test_sparse_X_gives_what_dense_X_gives(cls):
    X, y = _moons(100)
    X = np.hstack([X, np.zeros((100, 3))])
    dense = cls(random_state=0).fit_transform(X, y)
    est = cls(random_state=0)
    sparse = est.fit_transform(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse @ sparse.T, dense @ dense.T, atol=1e-9)
    np.testing.assert_allclose(est.transform(sp.csr_matrix(X[:9])), sparse[:9], atol=1e-8)


@pytest.mark.parametrize("cls", [ClusterKernel, NystromClusterKernel, StochasticClusterKernel])
def test_float32_points_transform_in_small_batches(cls):
    # the ops layer casts the float64 weights G to float32 for a float32 X: a transform of a
    # few rows was refused (MemoryBudgetError) when that copy was not in its budget
    X, y = _moons(120)
    X = X.astype(np.float32)
    est = cls(random_state=0).fit(X, y)
    whole = est.transform(X)
    for m in (1, 5):
        np.testing.assert_allclose(est.transform(X[:m]), whole[:m], atol=1e-4)  # float32 sums


@pytest.mark.parametrize("cls", [ClusterKernel, NystromClusterKernel, StochasticClusterKernel])
def test_output_feature_names_and_pandas_output(cls):
    # scikit-learn's transformers that make new features name them "<class>0", ... so that
    # set_output (and a Pipeline's) works; without get_feature_names_out it is unavailable
    X, y = _moons(120)
    est = cls(random_state=0).set_output(transform="pandas")
    F = est.fit_transform(X, y)
    names = est.get_feature_names_out()
    prefix = cls.__name__.lower()
    assert list(names) == [f"{prefix}{i}" for i in range(est.n_components_)]
    assert isinstance(F, pd.DataFrame) and list(F.columns) == list(names)
    assert list(est.transform(X[:3]).columns) == list(names)


def test_a_seed_reproduces_the_landmarks_and_F():
    X, y = _moons(200)
    a = NystromClusterKernel(n_components=10, cut=5, random_state=3).fit_transform(X, y)
    b = NystromClusterKernel(n_components=10, cut=5, random_state=3).fit_transform(X, y)
    np.testing.assert_array_equal(a, b)


def test_a_cut_past_the_rank_warns_and_is_reported():
    X, y = _moons(150, n_labeled=40)
    with pytest.warns(CutWarning, match=r"cut h = 49 \(l \+ 9, l = 40 labeled\).*square root"):
        nys = NystromClusterKernel(n_components=20, gamma=2.0, random_state=0).fit(X, y)
    assert (nys.cut_, nys.n_components_) == (49, 20)
    # the warning points at the caller's line, through scikit-learn's wrappers
    with pytest.warns(CutWarning) as record:
        NystromClusterKernel(n_components=20, gamma=2.0).fit_transform(X, y)
    assert record[0].filename == __file__
    np.testing.assert_allclose(nys.transferred_eigenvalues_, np.sqrt(nys.eigenvalues_))
    # NaN and other markers count the same labeled rows
    y_nan = np.where(y == -1, np.nan, y).astype(float)
    with pytest.warns(CutWarning):
        other = NystromClusterKernel(n_components=20, gamma=2.0, unlabeled=np.nan).fit(X, y_nan)
    assert other.cut_ == 49


def test_cluster_kernel_random_subsample_keeps_the_labeled_rows():
    X, y = _moons(300, n_labeled=10)
    ck = ClusterKernel(gamma=2.0, max_samples=120, random_state=0)
    F = ck.fit_transform(X, y)
    assert ck.n_fit_samples_ == 120 and F.shape == (300, 120)
    assert set(range(10)) <= set(ck.fit_indices_)
    # the fitted rows are the exact kernel of the subsample; the others its extension
    sub = ClusterKernel(gamma=2.0).fit_transform(X[ck.fit_indices_], y[ck.fit_indices_])
    np.testing.assert_allclose(F[ck.fit_indices_] @ F[ck.fit_indices_].T, sub @ sub.T, atol=1e-9)
    np.testing.assert_allclose(F, ck.transform(X), atol=1e-8)
    with pytest.raises(ValueError, match="max_samples=5 is below the 10 labeled rows"):
        ClusterKernel(max_samples=5).fit(X, y)


# -------------------------------------------------------------------------------- budget
def test_chosen_sizes_grow_with_the_budget():
    sizes = [nystrom_sizes(30_000, 123, f"{mb}MB", "budget") for mb in (50, 100, 200, 400)]
    ks = [k for k, _, _ in sizes]
    assert ks == sorted(ks) and len(set(ks)) == 4, sizes
    for (k, s, est), mb in zip(sizes, (50, 100, 200, 400), strict=True):
        assert k <= s <= 30_000 and est <= mb * 2**20
        assert s == math.ceil(k * math.log(k))
    # the default is capped, the budget only lowers it
    assert nystrom_sizes(30_000, 123, "8GB")[0] == DEFAULT_MAX_COMPONENTS
    assert nystrom_sizes(30_000, 123, "50MB")[0] == sizes[0][0]
    # tiny data: k <= s <= n
    assert nystrom_sizes(7, 2, "1GB", "budget")[:2] == (7, 7)
    m_small, _ = largest_subsample(5000, 10, "50MB", 10)
    m_large, _ = largest_subsample(5000, 10, "200MB", 10)
    assert 10 < m_small < m_large < 5000


@pytest.mark.parametrize(
    "make",
    [
        lambda: NystromClusterKernel(memory_budget="2MB"),
        lambda: NystromClusterKernel(n_components=2000, memory_budget="40MB"),
        lambda: ClusterKernel(memory_budget="100MB"),
        lambda: ClusterKernel(max_samples="budget", memory_budget="20MB"),
    ],
)
def test_an_impossible_budget_is_refused_before_allocating(make):
    X = np.random.RandomState(0).randn(6000, 5)
    y = np.full(6000, -1)
    y[:3000] = 0  # ClusK+RandSub must hold the 3,000 labeled rows
    est = make()
    tracemalloc.start()
    try:
        with pytest.raises(MemoryBudgetError, match=r"memory_budget=.*raise memory_budget"):
            est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 * 2**20, peak  # nothing of the fit's arrays was allocated


@pytest.mark.parametrize(
    "make",
    [
        lambda: NystromClusterKernel(memory_budget="60MB", random_state=0),
        lambda: NystromClusterKernel(
            n_components="budget", memory_budget="60MB", approximation="kernel", random_state=0
        ),
        lambda: ClusterKernel(max_samples="budget", memory_budget="60MB", random_state=0),
    ],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_the_traced_peak_stays_under_the_estimate(make, sparse):
    rng = np.random.RandomState(0)
    X = rng.randn(4000, 20) * (rng.rand(4000, 20) < 0.3)
    X = sp.csr_matrix(X) if sparse else X
    y = np.full(4000, -1)
    y[:50] = rng.randint(2, size=50)
    est = make()
    tracemalloc.start()
    try:
        F = est.fit_transform(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert est.estimated_bytes_ <= 60 * 2**20
    assert F.shape[0] == 4000
    assert peak <= est.estimated_bytes_, (peak, est.estimated_bytes_)
    # and the estimate is not a blanket bound: measured ratios 0.56-0.87 here
    assert peak >= 0.5 * est.estimated_bytes_, (peak, est.estimated_bytes_)


@pytest.mark.parametrize("sparse", [False, True])
def test_fit_without_virtual_samples_is_estimated_without_them(sparse):
    # fit allocates no n x m F: its estimate (and the subsample it admits) must not count it,
    # and its traced peak must still stay under that smaller estimate
    rng = np.random.RandomState(0)
    X = rng.randn(4000, 20) * (rng.rand(4000, 20) < 0.3)
    X = sp.csr_matrix(X) if sparse else X
    y = np.full(4000, -1)
    y[:50] = rng.randint(2, size=50)
    est = ClusterKernel(max_samples="budget", memory_budget="60MB", random_state=0)
    tracemalloc.start()
    try:
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert est.estimated_bytes_ <= 60 * 2**20
    assert peak <= est.estimated_bytes_, (peak, est.estimated_bytes_)
    assert peak >= 0.5 * est.estimated_bytes_, (peak, est.estimated_bytes_)
    with_F = ClusterKernel(max_samples="budget", memory_budget="60MB", random_state=0)
    with_F.fit_transform(X, y)
    assert est.n_fit_samples_ > with_F.n_fit_samples_


def test_a_budget_too_small_for_fit_transform_admits_fit():
    # 6,000 points, 1,000 labeled: fit_transform needs F (6,000 x >= 1,000 floats, 46 MiB)
    # beside the fitted rows; fit needs only K and its eigenvectors
    rng = np.random.RandomState(0)
    X = rng.randn(6000, 5)
    y = np.full(6000, -1)
    y[:1000] = rng.randint(2, size=1000)
    est = ClusterKernel(max_samples="budget", memory_budget="40MB", gamma=0.5, random_state=0)
    with pytest.raises(MemoryBudgetError, match="fit without F"):
        est.fit_transform(X, y)
    est.fit(X, y)
    assert 1000 < est.n_fit_samples_ < 6000
    assert est.estimated_bytes_ <= 40 * 2**20
    assert set(np.flatnonzero(y != -1)) <= set(est.fit_indices_)
    # and where both fit, fit admits more points
    m_fit, _ = largest_subsample(6000, 5, "200MB", 1000, gamma=0.5, virtual_samples=False)
    m_all, _ = largest_subsample(6000, 5, "200MB", 1000, gamma=0.5)
    assert m_all < m_fit


@pytest.mark.parametrize("sparse", [False, True])
def test_transform_of_many_rows_streams_its_kernel_blocks(sparse):
    # transform holds its n x m result, not the n x m kernel block beside it
    rng = np.random.RandomState(1)
    X = rng.randn(3000, 20) * (rng.rand(3000, 20) < 0.3)
    X = sp.csr_matrix(X) if sparse else X
    est = ClusterKernel(max_samples=400, memory_budget="60MB", gamma=0.05, random_state=0)
    est.fit(X)
    Z = rng.randn(30000, 20) * (rng.rand(30000, 20) < 0.3)
    Z = sp.csr_matrix(Z) if sparse else Z
    tracemalloc.start()
    try:
        F = est.transform(Z)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    result = F.nbytes
    assert F.shape == (30000, 400)
    # the kernel rows K(Z, X_fit) alone would be another `result`: the blocks stay within the
    # streamed product's bound (_sizing.stream_bytes, 24 MiB of blocks at most)
    assert peak - result <= stream_bytes(30000, 400, 20, sparse=sparse), (peak, result)
    np.testing.assert_allclose(F[:5], est.transform(Z[:5]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "make, want_F",
    [
        (lambda: NystromClusterKernel(n_components="budget", gamma=0.5), True),
        (lambda: NystromClusterKernel(gamma=0.5), False),
        (lambda: ClusterKernel(max_samples="budget", gamma=0.5, random_state=0), True),
        (lambda: ClusterKernel(max_samples="budget", gamma=0.5, random_state=0), False),
        (lambda: ClusterKernel(max_samples=300, gamma=0.5), False),
    ],
)
def test_columns_for_a_budget_are_those_a_fit_returns(make, want_F):
    # StorageFitClassifier reserves its classifier's part from this before the fit
    rng = np.random.RandomState(0)
    X = rng.randn(3000, 5)
    y = np.full(3000, -1)
    y[:100] = rng.randint(2, size=100)
    est = make().set_params(memory_budget="20MB")
    k = est._columns_for_budget(3000, 5, 100, "20MB", sparse=False, want_F=want_F)
    F = est.fit_transform(X, y) if want_F else est.fit(X, y).transform(X[:3])
    assert F.shape[1] == k == est.n_components_
    assert est._columns_for_budget(3000, 5, 100, "1KB", sparse=False, want_F=want_F) in (0, 300)


def test_the_random_subsample_refusal_names_what_it_needs():
    # it said "on the 2 labeled points" without a labeled point, and "use NystromClusterKernel"
    # where the gamma heuristic's sample alone was over the budget (NysCK needs it as well)
    X = np.random.RandomState(0).randn(20000, 4)
    with pytest.raises(MemoryBudgetError) as refused:
        ClusterKernel(max_samples="budget", memory_budget="1MB").fit(X)
    message = str(refused.value)
    assert "2 labeled" not in message and "the 0 labeled ones" in message
    assert "pass a numeric gamma" in message and "NystromClusterKernel" not in message


@pytest.mark.parametrize("cls", [ClusterKernel, NystromClusterKernel, StochasticClusterKernel])
def test_n_jobs_is_documented_as_the_library_reads_it(cls):
    # the docstrings said "None: all cores"; resolve_n_jobs reads None as 1 (scikit-learn's rule)
    doc = cls.__doc__
    entry = doc[doc.index("n_jobs : ") : doc.index("random_state : ")]
    assert "None means 1" in " ".join(entry.split()) and "None: all cores" not in entry


def test_a_list_of_string_labels_with_the_number_marker_counts_its_labeled_rows():
    # np.asarray made the marker -1 the string '-1' among 'a' and 'b': every row counted as
    # labeled, so cut="auto" was n + 9 instead of l + 9
    X, _ = _moons(120)
    y = ["a", "b"] * 10 + [-1] * 100
    est = NystromClusterKernel(random_state=0).fit(X, y)
    assert est.cut_ == 20 + 9
    assert est.cut_ == NystromClusterKernel(random_state=0).fit(X, np.array(y, object)).cut_


def _low_density(n=10_000, d=300, density=0.04, seed=0):
    """A random CSR problem of low density (w8a has 4 %: 12 of 300 features a row)."""
    X = sp.random(n, d, density=density, format="csr", random_state=seed, dtype=np.float64)
    y = np.full(n, -1)
    y[:100] = np.arange(100) % 2
    return X, y


@pytest.mark.parametrize(
    "make, method",
    [
        # sizes the old bound refused at 40MB (it took at most k = 122 and m = 829: every
        # sparse row of B counted as d entries)
        (lambda: NystromClusterKernel(n_components=140, memory_budget="40MB"), "fit_transform"),
        (lambda: ClusterKernel(max_samples=860, memory_budget="40MB"), "fit"),
        (lambda: ClusterKernel(max_samples="budget", memory_budget="40MB"), "fit"),
        (lambda: ClusterKernel(max_samples="budget", memory_budget="60MB"), "fit_transform"),
        (lambda: NystromClusterKernel(n_components="budget", memory_budget="40MB"), "fit"),
    ],
)
def test_a_sparse_budget_counts_the_stored_entries_not_full_rows(make, method):
    X, y = _low_density()
    model = make().set_params(gamma=1.0, random_state=0)
    tracemalloc.start()
    try:
        getattr(model, method)(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    budget = parse_memory_budget(model.memory_budget)
    assert peak <= model.estimated_bytes_ <= budget, (peak, model.estimated_bytes_)


@pytest.mark.parametrize(
    "make, want_F",
    [
        (lambda: NystromClusterKernel(n_components="budget"), True),
        (lambda: ClusterKernel(max_samples="budget", random_state=0), False),
    ],
)
def test_columns_for_a_budget_count_a_sparse_xs_stored_entries(make, want_F):
    # StorageFitClassifier reserves its classifier's part for these columns: counted with full
    # sparse rows they were fewer than the fit (which counts X.nnz) returns
    X, y = _low_density()
    est = make().set_params(memory_budget="40MB", gamma=1.0)
    k = est._columns_for_budget(*X.shape, 100, "40MB", sparse=True, want_F=want_F, nnz=X.nnz)
    F = est.fit_transform(X, y) if want_F else est.fit(X, y).transform(X[:3])
    assert F.shape[1] == k == est.n_components_
