"""Two moons and circles: shapes, balance, reproducibility, scikit-learn's geometry, scale."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_circles as sk_circles
from sklearn.datasets import make_moons as sk_moons

from semiscale.datasets import make_circles, make_two_moons

MAKERS = [make_two_moons, make_circles]


def on_moons(X, y, atol=1e-12):
    """True where a noiseless point lies on its scikit-learn moon."""
    upper = (np.abs(np.hypot(X[:, 0], X[:, 1]) - 1) < atol) & (X[:, 1] >= -atol)
    lower = (np.abs(np.hypot(X[:, 0] - 1, X[:, 1] - 0.5) - 1) < atol) & (X[:, 1] <= 0.5 + atol)
    return np.where(y == 0, upper, lower)


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("n", [1, 2, 101, 1000])
def test_shapes_labels_balance(make, n):
    X, y = make(n, random_state=0)
    assert X.shape == (n, 2) and X.dtype == np.float64 and y.shape == (n,)
    assert y.dtype == np.int64 and set(np.unique(y)) <= {0, 1}
    assert np.sum(y == 0) == n // 2 and np.sum(y == 1) == n - n // 2


@pytest.mark.parametrize("make", MAKERS)
def test_reproducible_and_seeded(make):
    X1, y1 = make(500, random_state=7)
    X2, y2 = make(500, random_state=7)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, _ = make(500, random_state=8)
    assert not np.allclose(X1, X3)
    X4, _ = make(500, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(X1, X4)  # int seed == Generator seeded with that int
    Xa, _ = make(500, random_state=np.random.RandomState(0))
    Xb, _ = make(500, random_state=np.random.RandomState(0))
    np.testing.assert_array_equal(Xa, Xb)


@pytest.mark.parametrize("make", MAKERS)
def test_class_sizes_shuffle_dtype(make):
    X, y = make((30, 70), random_state=0, shuffle=False, dtype=np.float32)
    assert X.dtype == np.float32 and y.tolist() == [0] * 30 + [1] * 70
    _, ys = make(1000, random_state=0)
    assert np.any(np.diff(ys) < 0)  # shuffled: not sorted by class


def test_moons_match_sklearn_geometry():
    X, y = make_two_moons(20000, noise=0.0, random_state=0)
    Xs, ys = sk_moons(20000, noise=0.0, random_state=0)
    assert on_moons(X, y).all() and on_moons(Xs, ys).all()  # same curves, same label convention
    for c in (0, 1):  # same layout of each class, not the same random points
        np.testing.assert_allclose(X[y == c].mean(0), Xs[ys == c].mean(0), atol=0.02)
    for a, b in [(X, Xs)]:
        np.testing.assert_allclose(a.min(0), b.min(0), atol=1e-3)
        np.testing.assert_allclose(a.max(0), b.max(0), atol=1e-3)


def test_moons_noise_level():
    X, y = make_two_moons(50000, noise=0.1, random_state=1, shuffle=False)
    clean, _ = make_two_moons(50000, noise=0.0, random_state=1, shuffle=False)
    # Same seed -> same angles; the difference is the noise alone.
    np.testing.assert_allclose((X - clean).std(0), 0.1, rtol=0.03)


def test_circles_match_sklearn_geometry():
    for factor in (0.3, 0.5, 0.8):
        X, y = make_circles(5000, noise=0.0, factor=factor, random_state=0)
        Xs, ys = sk_circles(5000, noise=0.0, factor=factor, random_state=0)
        for A, b in [(X, y), (Xs, ys)]:
            r = np.hypot(A[:, 0], A[:, 1])
            np.testing.assert_allclose(r[b == 0], 1.0)
            np.testing.assert_allclose(r[b == 1], factor)
        np.testing.assert_allclose(X.mean(0), 0.0, atol=0.03)


def test_one_million_points():
    for make in MAKERS:
        X, y = make(1_000_000, random_state=0)
        assert X.shape == (1_000_000, 2) and y.sum() == 500_000
        assert np.isfinite(X).all()


def test_errors():
    with pytest.raises(ValueError, match="n_samples"):
        make_two_moons(0)
    with pytest.raises(ValueError, match="n_samples"):
        make_circles((1, 2, 3))
    with pytest.raises(ValueError, match="n_samples"):
        make_two_moons(10.5)
    with pytest.raises(ValueError, match="noise"):
        make_two_moons(10, noise=-0.1)
    with pytest.raises(ValueError, match="factor"):
        make_circles(10, factor=1.0)
    with pytest.raises(ValueError, match="dtype"):
        make_circles(10, dtype=np.int32)
    with pytest.raises(TypeError, match="random_state"):
        make_two_moons(10, random_state="seed")
