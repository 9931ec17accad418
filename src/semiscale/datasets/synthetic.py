"""Synthetic two-class sets of any size: two moons and concentric circles.

Both follow scikit-learn's geometry (:func:`sklearn.datasets.make_moons`,
:func:`sklearn.datasets.make_circles`) but draw the angle of every point uniformly at random
instead of on an even grid, and are fully vectorised: a million points take well under a second.
Random numbers come from :func:`numpy.random.default_rng`, so values differ from scikit-learn's
for the same seed.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._random import as_generator

__all__ = ["make_circles", "make_two_moons"]


def _class_sizes(n_samples) -> tuple[int, int]:
    if isinstance(n_samples, numbers.Integral) and not isinstance(n_samples, bool):
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        return int(n_samples) // 2, int(n_samples) - int(n_samples) // 2
    if isinstance(n_samples, tuple | list) and len(n_samples) == 2:
        n0, n1 = n_samples
        if all(isinstance(v, numbers.Integral) and v >= 0 for v in (n0, n1)) and n0 + n1 >= 1:
            return int(n0), int(n1)
    raise ValueError(
        "n_samples must be a positive int or a pair (n_class0, n_class1) of non-negative ints, "
        f"got {n_samples!r}"
    )


def _check(noise, dtype) -> np.dtype:
    if not (isinstance(noise, numbers.Real) and noise >= 0 and np.isfinite(noise)):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    return dtype


def _finish(X, n0, n1, noise, rng, dtype, shuffle):
    """Add Gaussian noise, build labels (0 then 1), shuffle."""
    n = n0 + n1
    if noise > 0:
        X += rng.standard_normal((n, 2), dtype=dtype) * dtype.type(noise)
    y = np.zeros(n, dtype=np.int64)
    y[n0:] = 1
    if shuffle:
        perm = rng.permutation(n)
        X, y = X[perm], y[perm]
    return X, y


def make_two_moons(
    n_samples=100,
    noise: float = 0.1,
    random_state=None,
    *,
    dtype=np.float64,
    shuffle: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles.

    Class 0 lies on the upper half of the unit circle centred at (0, 0); class 1 on the lower
    half of the unit circle centred at (1, 0.5) -- scikit-learn's ``make_moons`` geometry.  Each
    point's angle is uniform on [0, π]; isotropic Gaussian noise of standard deviation ``noise``
    is added.

    Parameters
    ----------
    n_samples : int or (int, int), default=100
        Total points (split ``n // 2`` class 0, the rest class 1) or the size of each class.
    noise : float, default=0.1
        Standard deviation of the Gaussian noise.
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
        Seed or generator; the same int gives the same data.
    dtype : {np.float64, np.float32}, default=np.float64
    shuffle : bool, default=True
        Shuffle the points; otherwise class 0 comes first.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), int64
        Labels 0 and 1.

    Examples
    --------
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(1000, noise=0.05, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 2), [0, 1])
    """
    n0, n1 = _class_sizes(n_samples)
    dtype = _check(noise, dtype)
    rng = as_generator(random_state)
    theta = rng.random(n0 + n1, dtype=dtype) * dtype.type(np.pi)
    X = np.empty((n0 + n1, 2), dtype=dtype)
    np.cos(theta, out=X[:, 0])
    np.sin(theta, out=X[:, 1])
    X[n0:, 0] = 1.0 - X[n0:, 0]
    X[n0:, 1] = 0.5 - X[n0:, 1]
    return _finish(X, n0, n1, noise, rng, dtype, shuffle)


def make_circles(
    n_samples=100,
    noise: float = 0.05,
    factor: float = 0.5,
    random_state=None,
    *,
    dtype=np.float64,
    shuffle: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """A large circle (class 0, radius 1) around a small one (class 1, radius ``factor``).

    Both are centred at the origin -- scikit-learn's ``make_circles`` geometry; angles are
    uniform on [0, 2π) and isotropic Gaussian noise of standard deviation ``noise`` is added.

    Parameters
    ----------
    n_samples : int or (int, int), default=100
        Total points (split ``n // 2`` outer, the rest inner) or the size of each class.
    noise : float, default=0.05
        Standard deviation of the Gaussian noise.
    factor : float, default=0.5
        Radius of the inner circle, in [0, 1).
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
    dtype : {np.float64, np.float32}, default=np.float64
    shuffle : bool, default=True

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), int64
        0 for the outer circle, 1 for the inner one.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_circles
    >>> X, y = make_circles(200, noise=0.0, factor=0.5, random_state=0)
    >>> np.bincount(y).tolist()
    [100, 100]
    >>> radii = np.hypot(X[:, 0], X[:, 1])
    >>> bool(np.allclose(radii[y == 0], 1.0) and np.allclose(radii[y == 1], 0.5))
    True
    """
    n0, n1 = _class_sizes(n_samples)
    dtype = _check(noise, dtype)
    if not (isinstance(factor, numbers.Real) and 0 <= factor < 1):
        raise ValueError(f"factor must be in [0, 1), got {factor!r}")
    rng = as_generator(random_state)
    theta = rng.random(n0 + n1, dtype=dtype) * dtype.type(2 * np.pi)
    X = np.empty((n0 + n1, 2), dtype=dtype)
    np.cos(theta, out=X[:, 0])
    np.sin(theta, out=X[:, 1])
    X[n0:] *= dtype.type(factor)
    return _finish(X, n0, n1, noise, rng, dtype, shuffle)
