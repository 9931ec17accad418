"""StochasticClusterKernel (SoCK, paper 003 Algorithm 1) against dense references."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import semiscale.cluster_kernels.stochastic as stochastic
from semiscale._memory import MemoryBudgetError
from semiscale.cluster_kernels._sizing import DEFAULT_MAX_COMPONENTS
from semiscale.cluster_kernels.stochastic import StochasticClusterKernel, stochastic_sizes

GAMMA = 0.5


def _blobs(n_per=20, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(size=(n_per, 2)), rng.normal(size=(n_per, 2)) + 3.0])


def _dense_L(X, gamma=GAMMA):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * sq)
    d = K.sum(1)
    return K / np.sqrt(np.outer(d, d)), d


def _svt(L, lam):
    """The SVT solution L̂ = D_λ[L] = Σ_{σ_i > λ} (σ_i − λ) u_i u_iᵀ."""
    sigma, V = np.linalg.eigh(L)
    keep = sigma > lam
    return (V[:, keep] * (sigma[keep] - lam)) @ V[:, keep].T


def _eigenvectors(model):
    """U from the extension weights G = D^{-1/2} U Σ^{-1} Σ̃^{1/2} (every σ̃ > 0 here)."""
    sigma, transferred = model.eigenvalues_, model.transferred_eigenvalues_
    return np.sqrt(model.degrees_)[:, None] * model.components_ * (sigma / np.sqrt(transferred))


def _iterate(model):
    """Z_{T+1} = U diag(σ − λ) Uᵀ from the fitted attributes."""
    U = _eigenvectors(model)
    return (U * (model.eigenvalues_ - model.threshold)) @ U.T


def test_iterate_approaches_the_svt_solution_as_T_grows():
    """‖Z_{T+1} − D_λ[L]‖_F at T = 5, 20, 80 on one seed: a decreasing trend (issue 30)."""
    X = _blobs(60)
    L, _ = _dense_L(X)
    lam = 0.02
    reference = _svt(L, lam)
    model = StochasticClusterKernel(
        n_iter=80, n_random_features=16, threshold=lam, gamma=GAMMA, random_state=0
    ).fit(X, reference=reference)
    errors = model.approximation_errors_
    assert errors.shape == (80,)
    assert errors[4] > errors[19] > errors[79]
    # The rate: O(log log T / T) for the squared error, so roughly 1/√T for the error.
    assert errors[79] < 0.5 * errors[4]
    np.testing.assert_allclose(errors[-1], np.linalg.norm(_iterate(model) - reference))
    # Without a reference the attribute is absent (and a refit removes a stale one).
    assert not hasattr(model.fit(X), "approximation_errors_")


@pytest.mark.parametrize("n_iter, factor", [(6, 1.0), (1, 2.0)])
def test_unthresholded_iterate_is_unbiased(n_iter, factor):
    """λ = 0: Z_{T+1} = Σ_{t=2}^T 2(t − 1)/(T(T − 1)) L_t, so its mean over seeds is L.

    At T = 1, Z_2 = 2 L_1 (η_1 = 2, as Algorithm 1 is written): its mean is 2L.  Within 5
    standard errors entrywise.
    """
    X = _blobs(10)
    L, _ = _dense_L(X)
    reps = 60
    Z = np.stack(
        [
            _iterate(
                StochasticClusterKernel(
                    n_iter=n_iter,
                    n_random_features=8,
                    threshold=0.0,
                    gamma=GAMMA,
                    max_rank=20,
                    random_state=seed,
                ).fit(X)
            )
            for seed in range(reps)
        ]
    )
    stderr = Z.std(0) / np.sqrt(reps)
    assert np.all(np.abs(Z.mean(0) - factor * L) <= 5 * stderr + 1e-12)
    # The check can fail: a constant 5 % bias on every entry is far outside it.
    assert not np.all(np.abs(1.05 * Z.mean(0) - factor * L) <= 5 * stderr + 1e-12)


def test_thresholded_iterate_equals_the_svt_solution_in_expectation():
    """λ > 0: averaging seeds removes the error as it removes independent noise.

    The prox is nonlinear, so E[Z_{T+1}] = L̂ only as T grows; what is checked is that the
    seeds' mean is within 2/√reps of a single run's error from L̂ (a bias, e.g. a wrong η_t,
    a missing + λ or wrong degrees, would stay as reps grow), and that it shrinks with T.
    """
    X = _blobs(20)
    L, _ = _dense_L(X)
    lam = 0.05
    reference = _svt(L, lam)
    reps = 40
    mean_errors = []
    for T in (5, 40):
        Z = [
            _iterate(
                StochasticClusterKernel(
                    n_iter=T,
                    n_random_features=8,
                    threshold=lam,
                    gamma=GAMMA,
                    max_rank=40,
                    random_state=seed,
                ).fit(X)
            )
            for seed in range(reps)
        ]
        single = np.mean([np.linalg.norm(z - reference) for z in Z])
        mean_error = np.linalg.norm(np.mean(Z, axis=0) - reference)
        assert mean_error < 2 * single / np.sqrt(reps)
        mean_errors.append(mean_error)
    assert mean_errors[1] < mean_errors[0]


def test_fitted_attributes_and_virtual_samples():
    X = _blobs(30)
    y = np.full(60, -1)
    y[[0, 1, 30, 31]] = [0, 0, 1, 1]
    model = StochasticClusterKernel(n_iter=10, n_random_features=16, gamma=GAMMA, random_state=0)
    F = model.fit_transform(X, y)
    k = model.n_components_
    assert F.shape == (60, k) and k >= 1
    assert model.cut_ == 4 + 9
    assert model.n_random_features_ == 16 and 1 <= model.max_rank_ <= 60
    assert np.all(np.diff(model.eigenvalues_) <= 0) and model.eigenvalues_[-1] > model.threshold
    np.testing.assert_allclose(model.degrees_, _dense_L(X)[1])
    # Rows of F have unit length (the cluster kernel's diagonal is 1).
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), 1.0)
    np.testing.assert_allclose(_eigenvectors(model).T @ _eigenvectors(model), np.eye(k), atol=1e-10)
    assert model.estimated_bytes_ > 0
    assert StochasticClusterKernel(n_iter=2, gamma=GAMMA, cut=3).fit(X).cut_ == 3
    assert StochasticClusterKernel(n_iter=2, gamma=GAMMA).fit(X).cut_ == 9


def test_transform_extends_to_fitted_rows_closer_as_T_grows():
    """The Nyström extension of Z's eigenvectors gives back the fitted rows approximately.

    Exactly only for exact eigenvectors of L; SoCK's approach them as T grows.
    """
    X = _blobs(30)
    gaps = []
    for T in (3, 60):
        model = StochasticClusterKernel(
            n_iter=T, n_random_features=16, threshold=0.05, gamma=GAMMA, random_state=1
        )
        F = model.fit_transform(X)
        gaps.append(np.abs(model.transform(X) - F).max())
    assert gaps[1] < 0.5 * gaps[0]
    new = model.transform(X[:5] + 0.01)
    assert new.shape == (5, model.n_components_)
    np.testing.assert_allclose(np.linalg.norm(new, axis=1), 1.0)


def test_random_state_reproduces_and_sparse_equals_dense():
    rng = np.random.default_rng(3)
    X = rng.random((50, 8)) * (rng.random((50, 8)) < 0.4)
    params = dict(n_iter=5, n_random_features=10, gamma=GAMMA)
    F = StochasticClusterKernel(random_state=7, **params).fit_transform(X)
    again = StochasticClusterKernel(random_state=7, **params).fit_transform(X)
    sparse = StochasticClusterKernel(random_state=7, **params).fit_transform(sp.csr_matrix(X))
    other = StochasticClusterKernel(random_state=8, **params).fit_transform(X)
    np.testing.assert_array_equal(F, again)
    # eigenvectors are defined up to sign: rounding differences of the sparse products may flip
    # a column (F Fᵀ, the cluster kernel, is unchanged)
    signs = np.where(np.sum(sparse * F, axis=0) < 0, -1.0, 1.0)
    np.testing.assert_allclose(sparse * signs, F, atol=1e-10)
    assert F.shape != other.shape or not np.allclose(F, other)


def test_sizes_grow_with_the_budget_and_fit_it():
    n, d, a = 20_000, 10, 32
    ranks = []
    for budget in ("40MB", "60MB", "100MB"):
        a_, b, estimated = stochastic_sizes(n, d, budget, n_random_features=a)
        assert a_ == a and estimated <= int(budget[:-2]) * 1024**2
        ranks.append(b)
    assert ranks[0] < ranks[1] < ranks[2] <= DEFAULT_MAX_COMPONENTS
    assert stochastic_sizes(n, d, "10GB", n_random_features=a)[1] == DEFAULT_MAX_COMPONENTS
    assert stochastic_sizes(n, d, "10GB", n_random_features=a, max_rank=7)[1] == 7


def test_an_impossible_budget_is_refused_before_any_allocation(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("allocated before the budget check")

    monkeypatch.setattr(stochastic, "kernel_degrees", forbidden)
    monkeypatch.setattr(stochastic, "rbf_random_features", forbidden)
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=1000 B.*raise memory_budget"):
        StochasticClusterKernel(memory_budget=1000, gamma=GAMMA).fit(_blobs(10))
    with pytest.raises(MemoryBudgetError, match="lower n_random_features"):
        StochasticClusterKernel(memory_budget="1MB", max_rank=500, gamma=GAMMA).fit(_blobs(500))


def test_odd_feature_counts_are_refused():
    with pytest.raises(ValueError, match="n_random_features must be even"):
        StochasticClusterKernel(n_random_features=7).fit(_blobs(5))


def test_verbose_2_writes_one_line_per_step(capsys):
    StochasticClusterKernel(n_iter=3, n_random_features=8, gamma=GAMMA, verbose=2).fit(_blobs(8))
    lines = [line for line in capsys.readouterr().err.splitlines() if "] step" in line]
    assert [line.split(":")[0] for line in lines] == [
        f"[StochasticClusterKernel] step {t}/3" for t in (1, 2, 3)
    ]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("max_rank", [None, "budget"])
def test_the_traced_peak_stays_under_the_estimate(sparse, max_rank):
    rng = np.random.RandomState(0)
    X = rng.randn(4000, 20) * (rng.rand(4000, 20) < 0.3)
    X = sp.csr_matrix(X) if sparse else X
    y = np.full(4000, -1)
    y[:50] = rng.randint(2, size=50)
    est = StochasticClusterKernel(
        n_iter=3, max_rank=max_rank, threshold=1e-6, memory_budget="40MB", random_state=0
    )
    tracemalloc.start()
    try:
        F = est.fit_transform(X, y)
        est.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert est.estimated_bytes_ <= 40 * 2**20
    assert F.shape == (4000, est.n_components_)
    assert peak <= est.estimated_bytes_, (peak, est.estimated_bytes_)
    print(f"traced peak {peak} of {est.estimated_bytes_} estimated, b = {est.max_rank_}")
    assert 64 < est.max_rank_ <= (DEFAULT_MAX_COMPONENTS if max_rank is None else 4000)


def test_a_refusal_suggests_only_what_shrinks_the_phase_over_budget():
    # the streamed blocks of a transform of the n points do not shrink with n_random_features
    X = np.random.RandomState(0).randn(20000, 4)
    with pytest.raises(MemoryBudgetError, match=r"\(transform\)") as refused:
        StochasticClusterKernel(memory_budget="2MB", gamma=GAMMA).fit(X)
    assert "n_random_features" not in str(refused.value)
    with pytest.raises(MemoryBudgetError, match="pass a numeric gamma"):
        StochasticClusterKernel(memory_budget="2MB").fit(X[:1000])  # the sample: 26 MB


def test_a_threshold_that_leaves_no_eigenvalue_is_refused():
    # it returned an F with no column, and a classifier on F failed without naming threshold
    with pytest.raises(ValueError, match=r"threshold=100\.0 left no eigenvalue.*smaller"):
        StochasticClusterKernel(threshold=100.0, n_iter=3, gamma=GAMMA).fit(_blobs(40))


def _low_density(n=10_000, d=300, density=0.04, seed=0):
    """A random CSR problem of low density (w8a has 4 %: 12 of 300 features a row)."""
    X = sp.random(n, d, density=density, format="csr", random_state=seed, dtype=np.float64)
    y = np.full(n, -1)
    y[:10] = np.arange(10) % 2
    return X, y


def test_a_sparse_budget_counts_the_stored_entries_not_full_rows():
    # the bound counted every row of a sparse X as d entries (24 n (d + 2) bytes of B-side
    # operands, 69 MiB here): 40MB was refused though the fit's traced peak is far below it
    X, y = _low_density()
    model = StochasticClusterKernel(
        memory_budget="40MB", n_random_features=32, n_iter=2, gamma=1.0, random_state=0
    )
    tracemalloc.start()
    try:
        model.fit_transform(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= model.estimated_bytes_ <= 40 * 1024**2, (peak, model.estimated_bytes_)
    # a full X (nnz unknown) is still counted row by row
    with pytest.raises(MemoryBudgetError):
        stochastic_sizes(*X.shape, "40MB", n_random_features=32, gamma=1.0, sparse=True)


def test_the_degrees_of_sparse_rows_count_dense_tiles_only_where_they_are_densified():
    # kernel_row_sums densifies a sparse X's tiles only at a density of 10 % or more: 2 % of
    # 2,000 features keeps them sparse (two dense 1,024-row tiles would be 31 MiB more)
    X = sp.random(6000, 2000, density=0.02, format="csr", random_state=1, dtype=np.float64)
    y = np.full(6000, -1)
    y[:10] = np.arange(10) % 2
    model = StochasticClusterKernel(
        memory_budget="60MB", n_random_features=16, n_iter=2, gamma=0.5, random_state=0
    )
    tracemalloc.start()
    try:
        model.fit_transform(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= model.estimated_bytes_ <= 60 * 1024**2, (peak, model.estimated_bytes_)
