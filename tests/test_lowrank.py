"""Random Fourier features and the factored SVT update against dense references."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from semiscale.linalg.lowrank import rbf_random_features, svt_update


def _rbf(X, gamma):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * sq)


def _dense_svt(M, tau, max_rank=None):
    """D_τ of a symmetric matrix by a full eigendecomposition: the reference."""
    mu, V = np.linalg.eigh((M + M.T) / 2)
    keep = np.flatnonzero(np.abs(mu) > tau)
    keep = keep[np.argsort(-np.abs(mu[keep]))][:max_rank]
    s = np.sign(mu[keep]) * (np.abs(mu[keep]) - tau)
    return (V[:, keep] * s) @ V[:, keep].T, s


def _orthonormal(rng, n, b):
    Q, _ = np.linalg.qr(rng.normal(size=(n, b)))
    return Q


def test_random_features_are_unbiased():
    """The mean of Φ Φᵀ over many draws is K, within a CLT tolerance shrinking as 1/√reps."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    gamma = 0.4
    K = _rbf(X, gamma)
    reps, a = 400, 8
    draws = np.stack(
        [(F := rbf_random_features(X, a, gamma, random_state=seed)) @ F.T for seed in range(reps)]
    )
    mean, std = draws.mean(0), draws.std(0)
    # 5 standard errors entrywise (0 on the diagonal: it is exactly 1 in every draw).
    assert np.all(np.abs(mean - K) <= 5 * std / np.sqrt(reps) + 1e-12)
    np.testing.assert_allclose(np.diagonal(draws, axis1=1, axis2=2), 1.0, atol=1e-12)
    # The check can fail: a wrong frequency scale (γ instead of 2γ) is far outside it.
    wrong = np.mean(
        [(F := rbf_random_features(X, a, gamma / 2, random_state=s)) @ F.T for s in range(reps)],
        axis=0,
    )
    assert np.any(np.abs(wrong - K) > 5 * std / np.sqrt(reps) + 1e-12)


def test_random_features_sparse_equals_dense_and_seed_reproduces():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 6)) * (rng.random((30, 6)) < 0.3)
    dense = rbf_random_features(X, 10, 0.5, random_state=3)
    sparse = rbf_random_features(sp.csr_matrix(X), 10, 0.5, random_state=3)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)
    assert dense.flags.f_contiguous and dense.shape == (30, 10)
    assert not np.allclose(rbf_random_features(X, 10, 0.5, random_state=4), dense)


def test_random_features_blocks_cover_all_rows(monkeypatch):
    """Row blocks of one row give the same features as one block."""
    import semiscale.linalg.lowrank as lowrank

    X = np.random.default_rng(2).normal(size=(9, 4))
    whole = rbf_random_features(X, 6, 0.3, random_state=0)
    monkeypatch.setattr(lowrank, "FEATURE_BLOCK_BYTES", 1)
    np.testing.assert_allclose(rbf_random_features(X, 6, 0.3, random_state=0), whole)


@pytest.mark.parametrize("n_features", [0, 3, 7])
def test_random_features_refuse_odd_counts(n_features):
    with pytest.raises(ValueError, match="n_features must be an even"):
        rbf_random_features(np.zeros((3, 2)), n_features, 1.0)


@pytest.mark.parametrize(
    "n, b, a, scale_old, scale_new, tau",
    [
        (80, 0, 6, -1.0, 2.0, 0.3),  # Z_1 = 0, SoCK's first step (η_1 = 2)
        (80, 5, 6, 0.5, 0.5, 0.05),  # a PSD step
        (80, 10, 4, 0.25, 0.75, 0.0),  # no thresholding: the exact sum
        (60, 8, 5, 1.0, -0.7, 0.1),  # a non-PSD sum: signed thresholding
        (12, 7, 9, 0.4, 0.6, 0.02),  # b + a > n: the concatenated QR
    ],
)
def test_svt_update_matches_dense_eigendecomposition(n, b, a, scale_old, scale_new, tau):
    rng = np.random.default_rng(n + b + a)
    U = _orthonormal(rng, n, b)
    s = np.sort(rng.random(b) + 0.1)[::-1]
    P = rng.normal(size=(n, a)) / np.sqrt(n)
    M = scale_old * (U * s) @ U.T + scale_new * P @ P.T
    reference, s_ref = _dense_svt(M, tau)
    U_new, s_new = svt_update(U, s, P, scale_old, scale_new, tau)
    np.testing.assert_allclose((U_new * s_new) @ U_new.T, reference, atol=1e-10)
    # τ = 0 keeps rounding-level eigenvalues on both sides: compare those above 1e-9.
    np.testing.assert_allclose(s_new[np.abs(s_new) > 1e-9], s_ref[np.abs(s_ref) > 1e-9])
    np.testing.assert_allclose(U_new.T @ U_new, np.eye(s_new.size), atol=1e-10)


def test_svt_update_overwrite_and_truncation():
    rng = np.random.default_rng(5)
    n, b, a = 70, 6, 8
    U, s = _orthonormal(rng, n, b), np.linspace(1.0, 0.2, b)
    P = np.asfortranarray(rng.normal(size=(n, a)) / np.sqrt(n))
    M = 0.5 * (U * s) @ U.T + 0.5 * P @ P.T
    keep = svt_update(U, s, P.copy(order="F"), 0.5, 0.5, 0.01)
    U3, s3 = svt_update(U, s, P, 0.5, 0.5, 0.01, max_rank=3, overwrite_p=True)
    reference, s_ref = _dense_svt(M, 0.01, max_rank=3)
    assert s3.size == 3 and keep[1].size > 3
    np.testing.assert_allclose(s3, s_ref, atol=1e-10)
    np.testing.assert_allclose((U3 * s3) @ U3.T, reference, atol=1e-10)


def test_svt_update_iterated_stays_orthonormal_and_exact():
    """Thirty chained updates (SoCK's use) keep U orthonormal and equal the dense chain."""
    rng = np.random.default_rng(6)
    n, a, tau = 90, 6, 0.02
    U, s = np.zeros((n, 0)), np.zeros(0)
    Z = np.zeros((n, n))
    for t in range(1, 31):
        eta = 2.0 / t
        P = rng.normal(size=(n, a)) / np.sqrt(n)
        Z, _ = _dense_svt((1 - eta) * Z + eta * P @ P.T, eta * tau)
        U, s = svt_update(U, s, P, 1 - eta, eta, eta * tau)
    np.testing.assert_allclose((U * s) @ U.T, Z, atol=1e-9)
    np.testing.assert_allclose(U.T @ U, np.eye(s.size), atol=1e-9)


def test_svt_update_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="P must have 5 rows"):
        svt_update(np.zeros((5, 0)), np.zeros(0), np.zeros((4, 2)), 1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        svt_update(np.zeros((5, 0)), np.zeros(0), np.zeros((5, 2)), 1.0, 1.0, -1.0)


@pytest.mark.parametrize("n, b, a", [(3000, 40, 32), (300, 290, 32)])
def test_svt_update_bytes_bounds_the_traced_peak(n, b, a):
    """The estimate covers both paths: projected (b + a <= n) and concatenated (b + a > n)."""
    import tracemalloc

    from semiscale.linalg.lowrank import svt_update_bytes

    rng = np.random.default_rng(7)
    U, s = _orthonormal(rng, n, b), np.linspace(1.0, 0.1, b)
    P = np.asfortranarray(rng.normal(size=(n, a)) / np.sqrt(n))
    tracemalloc.start()
    try:
        svt_update(U, s, P, 0.5, 0.5, 0.0, max_rank=b, overwrite_p=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= svt_update_bytes(n, b, a, max_rank=b), (peak, svt_update_bytes(n, b, a, b))
