"""Nyström centers, their number, and the jittered Cholesky of K_ss."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats

from semiscale._memory import MemoryBudgetError
from semiscale.kernels import RBF
from semiscale.linalg.centers import (
    CENTER_METHODS,
    jittered_cholesky,
    resolve_n_centers,
    select_centers,
)


def nystrom_error(K, S):
    """Relative trace-norm error ``tr(K − K_ns K_ss⁺ K_sn) / tr(K)`` (the residual is PSD)."""
    w, V = np.linalg.eigh(K[np.ix_(S, S)])
    keep = w > 1e-12 * w.max()
    F = K[:, S] @ (V[:, keep] / np.sqrt(w[keep]))
    return (np.trace(K) - np.einsum("ij,ij->", F, F)) / np.trace(K)


def _imbalanced_blobs(seed=0):
    """One big Gaussian cloud and six small, far clusters: uniform sampling misses the latter."""
    rng = np.random.default_rng(seed)
    angles = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    far = 20 * np.c_[np.cos(angles), np.sin(angles)]
    small = [rng.normal(loc=c, scale=0.1, size=(15, 2)) for c in far]
    return np.vstack([rng.normal(size=(900, 2)), *small])


# ------------------------------------------------------------------ resolve_n_centers
@pytest.mark.parametrize(
    "value, n, expected",
    [
        (5, 10, 5),
        (10, 10, 10),
        (np.int64(3), 10, 3),
        (0.1, 1000, 100),
        (1.0, 7, 7),
        (1e-9, 7, 1),
        (0.25, 10, 3),
        ("sqrt", 100, 10),
        ("sqrt", 101, 11),
        ("sqrt", 1, 1),
    ],
)
def test_resolve_n_centers(value, n, expected):
    assert resolve_n_centers(value, n) == expected


@pytest.mark.parametrize(
    "value, error, match",
    [
        (0, ValueError, r"\[1, n_samples=10\]"),
        (11, ValueError, "n_samples"),
        (1.5, ValueError, r"\(0, 1\]"),
        (0.0, ValueError, r"\(0, 1\]"),
        (-0.1, ValueError, "fraction"),
        ("log", ValueError, "sqrt"),
        (True, TypeError, "int"),
        (None, TypeError, "int"),
    ],
)
def test_resolve_n_centers_errors(value, error, match):
    with pytest.raises(error, match=match):
        resolve_n_centers(value, 10)


# ------------------------------------------------------------------ select_centers
@pytest.mark.parametrize("method", sorted(CENTER_METHODS))
def test_select_centers_distinct_reproducible(method):
    X = np.random.default_rng(0).normal(size=(200, 3))
    kernel = RBF(gamma=0.5)
    a = select_centers(X, 30, method, random_state=1, kernel=kernel)
    b = select_centers(X, 30, method, random_state=1, kernel=kernel)
    assert a.dtype == np.intp and a.shape == (30,)
    assert np.unique(a).size == 30 and a.min() >= 0 and a.max() < 200
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["kmeans++", "rpcholesky"])
def test_kernel_aware_centers_beat_uniform_on_imbalanced_data(method):
    X = _imbalanced_blobs()
    kernel = RBF(gamma=0.1)
    K = kernel(X)
    uniform = np.mean([nystrom_error(K, select_centers(X, 20, random_state=r)) for r in range(5)])
    better = np.mean([nystrom_error(K, select_centers(X, 20, method, r, kernel)) for r in range(5)])
    assert better < 0.5 * uniform


@pytest.mark.parametrize("method", ["kmeans++", "rpcholesky"])
def test_kernel_aware_centers_find_the_far_clusters(method):
    X = _imbalanced_blobs()
    kernel = RBF(gamma=0.1)
    hits = [
        len({(i - 900) // 15 for i in select_centers(X, 20, method, r, kernel) if i >= 900})
        for r in range(4)
    ]
    uniform = [
        len({(i - 900) // 15 for i in select_centers(X, 20, random_state=r) if i >= 900})
        for r in range(4)
    ]
    assert min(hits) >= 5 and np.mean(hits) > np.mean(uniform) + 2


@pytest.mark.parametrize("method", sorted(CENTER_METHODS))
def test_select_centers_with_duplicate_points(method):
    X = np.repeat(np.random.default_rng(2).normal(size=(5, 2)), 6, axis=0)  # 5 distinct points
    with pytest.warns(UserWarning, match="only 5 distinct rows"):
        S = select_centers(X, 12, method, random_state=0, kernel=RBF(gamma=1.0))
    assert S.size == 5 and np.unique(X[S], axis=0).shape[0] == 5


@pytest.mark.parametrize("method", sorted(CENTER_METHODS))
@pytest.mark.parametrize("sparse", [False, True])
def test_select_centers_returns_distinct_points(method, sparse):
    # Integer-valued data with many repeated rows (like skin_nonskin): a uniform sample of 60
    # rows almost surely repeats some; the centers must still be 60 distinct points.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(2000, 3)).astype(float)  # 216 distinct rows
    labeled = np.flatnonzero(rng.random(2000) < 0.02)
    Xin = sp.csr_matrix(X) if sparse else X
    for lab in (None, labeled):
        S = select_centers(Xin, 60, method, random_state=0, kernel=RBF(gamma=1.0), labeled=lab)
        assert S.size == 60 and np.unique(S).size == 60
        assert np.unique(X[S], axis=0).shape[0] == 60
    # Duplicate-free data keep the plain uniform draw (same seed, same centers as before).
    Y = rng.normal(size=(500, 3))
    if method == "uniform" and not sparse:
        expected = np.random.default_rng(5).choice(500, size=40, replace=False)
        np.testing.assert_array_equal(select_centers(Y, 40, random_state=5), expected)


def test_select_centers_sparse_input():
    import scipy.sparse as sp

    X = sp.random(100, 20, density=0.2, format="csr", random_state=0)
    for method in CENTER_METHODS:
        S = select_centers(X, 10, method, random_state=0, kernel=RBF(gamma=1.0))
        assert np.unique(S).size == 10


def test_labeled_points_come_first():
    X = np.random.default_rng(3).normal(size=(50, 2))
    labeled = np.zeros(50, dtype=bool)
    labeled[[4, 9, 17]] = True
    S = select_centers(X, 10, "kmeans++", random_state=0, kernel=RBF(), labeled=labeled)
    assert set(S[:3]) == {4, 9, 17} and np.unique(S).size == 10
    few = select_centers(X, 2, labeled=[4, 9, 17], random_state=0)
    assert set(few) <= {4, 9, 17} and few.size == 2


def test_select_centers_errors():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="center-selection scheme"):
        select_centers(X, 3, "random")
    with pytest.raises(ValueError, match="needs a kernel"):
        select_centers(X, 3, "kmeans++")
    with pytest.raises(MemoryBudgetError):
        select_centers(np.ones((100, 2)), 50, "rpcholesky", kernel=RBF(), memory_budget=1000)


def test_rpcholesky_with_all_centers_is_exact():
    X = np.random.default_rng(4).normal(size=(40, 2))
    S = select_centers(X, 40, "rpcholesky", random_state=0, kernel=RBF(gamma=2.0))
    assert nystrom_error(RBF(gamma=2.0)(X), S) < 1e-10


def test_rpcholesky_factor_is_the_nystrom_approximation_of_its_pivots():
    from semiscale.linalg.centers import _rpcholesky_factor

    X = np.random.default_rng(8).normal(size=(300, 3))
    kernel = RBF(gamma=0.5)
    K = kernel(X)
    # 70 pivots: rounds of up to RPCHOLESKY_BLOCK proposals, several of them.
    pivots, F = _rpcholesky_factor(X, 70, np.random.default_rng(0), kernel, np.arange(300), None)
    assert pivots.size == 70 and np.unique(pivots).size == 70
    K_nS = K[:, pivots]
    reference = K_nS @ np.linalg.solve(K[np.ix_(pivots, pivots)], K_nS.T)
    np.testing.assert_allclose(F @ F.T, reference, atol=1e-8)


def _sequential_rpcholesky_law(K, n_pivots):
    """Exact probability of every ordered pivot sequence of sequential RPCholesky."""
    law = {}

    def visit(sequence, residual_matrix, probability):
        if len(sequence) == n_pivots:
            law[tuple(sequence)] = probability
            return
        d = np.clip(np.diag(residual_matrix), 0, None)
        for i in np.flatnonzero(d > 0):
            column = residual_matrix[:, i]
            visit(
                sequence + [int(i)],
                residual_matrix - np.outer(column, column) / column[i],
                probability * d[i] / d.sum(),
            )

    visit([], K, 1.0)
    return law


def test_accelerated_rpcholesky_draws_pivots_with_the_sequential_law():
    """Rejection sampling must reproduce sequential RPCholesky's distribution exactly.

    Two near-duplicate pairs make the difference visible: accepting every proposal of a round
    (block RPCholesky without rejection) picks both points of a pair far more often.
    """
    from semiscale.linalg.centers import _rpcholesky_factor

    X = np.array([[0.0], [0.05], [3.0], [3.05], [6.0], [9.0]])
    kernel = RBF(gamma=1.0)
    law = _sequential_rpcholesky_law(kernel(X), 3)
    rng = np.random.default_rng(0)
    draws = 4000
    counts = {}
    for _ in range(draws):
        pivots, _ = _rpcholesky_factor(X, 3, rng, kernel, np.arange(6), None)
        counts[tuple(pivots)] = counts.get(tuple(pivots), 0) + 1
    assert set(counts) <= set(law)
    # Pearson's chi-square over the sequences (those expected fewer than 5 times pooled): a
    # correct sampler fails at the 0.1 % level, i.e. never with this fixed seed unless changed.
    pooled = [k for k, p in law.items() if p * draws < 5]
    bins = [(counts.get(k, 0), p * draws) for k, p in law.items() if p * draws >= 5]
    bins.append((sum(counts.get(k, 0) for k in pooled), sum(law[k] for k in pooled) * draws))
    statistic = sum((observed - expected) ** 2 / expected for observed, expected in bins)
    assert statistic < scipy.stats.chi2.ppf(0.999, len(bins) - 1)
    both = sum(p for k, p in law.items() if {0, 1} <= set(k) or {2, 3} <= set(k))
    drawn = sum(c for k, c in counts.items() if {0, 1} <= set(k) or {2, 3} <= set(k)) / draws
    assert abs(drawn - both) < 0.02


@pytest.mark.slow
@pytest.mark.parametrize("dataset, n_features", [("a9a", 123), ("cod-rna", 8)])
def test_center_selection_error_on_real_data(dataset, n_features, capsys):
    """Nyström error of uniform vs kernel-aware centers on 2000 points of a real dataset."""
    from semiscale.datasets import load_dataset

    X, _ = load_dataset(dataset, dense=True)
    assert X.shape[1] == n_features
    X = X[np.random.default_rng(0).choice(X.shape[0], 2000, replace=False)]
    kernel = RBF(gamma="median").resolve(X, random_state=0)
    K = kernel(X)
    errors = {
        m: np.mean([nystrom_error(K, select_centers(X, 200, m, r, kernel)) for r in range(3)])
        for m in CENTER_METHODS
    }
    with capsys.disabled():
        print(f"\n{dataset}: relative trace-norm Nyström error, s=200:", errors)
    assert min(errors["kmeans++"], errors["rpcholesky"]) <= 1.02 * errors["uniform"]


# ------------------------------------------------------------------ jittered_cholesky
def test_cholesky_of_spd_needs_no_jitter():
    A = RBF(gamma=1.0)(np.random.default_rng(5).normal(size=(20, 3)))
    L, jitter = jittered_cholesky(A)
    assert jitter == 0.0
    np.testing.assert_allclose(L @ L.T, A, atol=1e-12)
    assert np.allclose(L, np.tril(L))


def test_cholesky_of_duplicate_centers_adds_jitter():
    C = np.random.default_rng(6).normal(size=(10, 2))
    K = RBF(gamma=0.5)(np.vstack([C, C[:3]]))  # exactly singular
    L, jitter = jittered_cholesky(K)
    assert jitter > 0
    assert jitter < 1e-4 * np.mean(np.diag(K))
    np.testing.assert_allclose(L @ L.T, K + jitter * np.eye(13), atol=1e-12)
    assert np.all(np.isfinite(L))


def test_cholesky_float32():
    A = RBF(gamma=1.0)(np.random.default_rng(7).normal(size=(15, 3)).astype(np.float32))
    L, jitter = jittered_cholesky(A)
    assert L.dtype == np.float32
    np.testing.assert_allclose(L @ L.T, A + jitter * np.eye(15), atol=1e-5)


@pytest.mark.parametrize(
    "A, error, match",
    [
        (-np.eye(3), np.linalg.LinAlgError, "not positive"),
        (np.full((2, 2), np.nan), np.linalg.LinAlgError, "NaN"),
        (np.ones((2, 3)), ValueError, "square"),
    ],
)
def test_cholesky_errors(A, error, match):
    with pytest.raises(error, match=match):
        jittered_cholesky(A, max_tries=3)


def test_auto_n_centers_is_1000_or_every_point():
    from semiscale.kernels import MEDIAN_SAMPLE_SIZE
    from semiscale.linalg.centers import AUTO_MAX_CENTERS, resolve_n_centers
    from semiscale.models import NystromLapRLSRegressor

    assert resolve_n_centers("auto", 5) == 5
    assert resolve_n_centers("auto", 2000) == 1000
    assert resolve_n_centers("auto", 10**6) == AUTO_MAX_CENTERS == 1000
    # the local kernel width is measured at the density of the default center set
    assert MEDIAN_SAMPLE_SIZE == AUTO_MAX_CENTERS
    assert NystromLapRLSRegressor().n_centers == "auto"
    with pytest.raises(ValueError, match="'auto' or 'sqrt'"):
        resolve_n_centers("half", 100)
