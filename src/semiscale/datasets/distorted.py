"""Distorted digit images: MNIST at USPS's 16 × 16, random affine copies, an "extended USPS".

Paper 001 (§4.2, Table 1) trains on an "extended USPS" of 266,079 distorted USPS digits (two
classes, 26 × 26 pixels), which is not public; :func:`make_extended_usps` builds a set of the
same kind from the data stored here, deterministically from its seed:

* the base images are USPS's digits of the chosen classes (16 × 16, pixels in [0, 1]) and
  MNIST's test images of the same digits brought to USPS's format by :func:`resize_digits`
  (cropped to the bounding box of the pixels above 0.1, padded to a centred square, resized to
  16 × 16 by linear interpolation, divided by their maximum: USPS digits fill the 16-pixel box
  and keep their aspect ratio);
* the training bases are USPS's training digits and a random ``1 - mnist_test_share`` of the
  MNIST digits; the test bases are USPS's test digits and the other MNIST digits (no base image
  is in both);
* every base image gives ``copies`` rows (:func:`distort_digits`): itself, then ``copies - 1``
  random affine copies.  A copy rotates the image about its centre by an angle drawn uniformly
  in ``[-max_rotation, max_rotation]`` degrees, scales it by a factor uniform in
  ``scale_range`` and shifts it by a row and a column offset each uniform in
  ``[-max_shift, max_shift]`` pixels; pixel values are read from the original by
  ``scipy.ndimage.map_coordinates`` (linear interpolation, 0 outside the image).  One
  ``numpy.random.default_rng(random_state)`` draws, in this order, every copy's angle, scale,
  row shift and column shift.
"""

from __future__ import annotations

import numpy as np

from .._random import as_generator

__all__ = ["distort_digits", "make_extended_usps", "resize_digits"]

#: Rows of each map_coordinates call (3 × rows × pixels coordinates in float64).
_CHUNK = 4096


def resize_digits(images, side: int = 16, *, threshold: float = 0.1) -> np.ndarray:
    """Square digit images brought to USPS's format: the digit fills a ``side``-pixel box.

    Each image is cropped to the bounding box of its pixels above ``threshold``, padded with
    zeros to a centred square, resized to ``side × side`` by linear interpolation
    (:func:`scipy.ndimage.zoom`), clipped at 0 and divided by its maximum.

    Parameters
    ----------
    images : array-like of shape (n, h * w) or (n, h, w)
        Square grey images, background 0 (e.g. MNIST's 28 × 28 test images in [0, 1]).
    side : int, default=16
        The output side (USPS: 16).
    threshold : float, default=0.1
        Pixels above it delimit the digit.

    Returns
    -------
    ndarray of shape (n, side * side)
        Pixels in [0, 1]; an image with no pixel above ``threshold`` stays all zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import resize_digits
    >>> image = np.zeros((28, 28))
    >>> image[4:24, 12:16] = 1.0  # a "1": 20 rows, 4 columns
    >>> out = resize_digits(image[None]).reshape(16, 16)
    >>> out.shape, bool(out[:, 0].max() == 0), bool(out[0].max() > 0)
    ((16, 16), True, True)
    """
    from scipy import ndimage

    images = np.asarray(images, dtype=np.float64)
    n = images.shape[0]
    h = int(round(np.sqrt(images[0].size)))
    images = images.reshape(n, h, h)
    out = np.zeros((n, side, side))
    for i, image in enumerate(images):
        rows = np.flatnonzero((image > threshold).any(axis=1))
        cols = np.flatnonzero((image > threshold).any(axis=0))
        if rows.size == 0:
            continue
        crop = image[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
        size = max(crop.shape)
        square = np.zeros((size, size))
        r0, c0 = (size - crop.shape[0]) // 2, (size - crop.shape[1]) // 2
        square[r0 : r0 + crop.shape[0], c0 : c0 + crop.shape[1]] = crop
        zoomed = ndimage.zoom(square, side / size, order=1, grid_mode=True, mode="grid-constant")
        zoomed = np.clip(zoomed[:side, :side], 0.0, None)
        out[i, : zoomed.shape[0], : zoomed.shape[1]] = zoomed / max(zoomed.max(), 1e-12)
    return out.reshape(n, side * side)


def distort_digits(
    images,
    copies: int,
    *,
    max_rotation: float = 15.0,
    scale_range: tuple[float, float] = (0.9, 1.1),
    max_shift: float = 2.0,
    random_state=None,
) -> np.ndarray:
    """Each image followed by ``copies - 1`` random affine copies of it (module docstring).

    Parameters
    ----------
    images : array-like of shape (n, side * side)
        Square grey images, background 0.
    copies : int
        Rows per image (>= 1): the image itself, then the distorted copies.
    max_rotation : float, default=15.0
        Rotation angles are uniform in ``[-max_rotation, max_rotation]`` degrees.
    scale_range : (float, float), default=(0.9, 1.1)
        Scale factors are uniform in this interval.
    max_shift : float, default=2.0
        Row and column shifts are each uniform in ``[-max_shift, max_shift]`` pixels.
    random_state : None, int, Generator or SeedSequence, default=None
        Seeds the draws (angles, scales, row shifts, column shifts, in this order).

    Returns
    -------
    ndarray of shape (n * copies, side * side)
        Row ``i * copies + k`` is copy k of image i (k = 0: the image itself).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import distort_digits
    >>> images = np.random.default_rng(0).random((3, 256))
    >>> X = distort_digits(images, 4, random_state=0)
    >>> X.shape, bool(np.array_equal(X[::4], images))
    ((12, 256), True)
    """
    from scipy import ndimage

    if int(copies) < 1:
        raise ValueError(f"copies must be >= 1, got {copies!r}")
    images = np.asarray(images, dtype=np.float64)
    n, pixels = images.shape
    side = int(round(np.sqrt(pixels)))
    if side * side != pixels:
        raise ValueError(f"images must be square: {pixels} pixels per row")
    rng = as_generator(random_state)
    shape = (n, int(copies))
    angle = np.deg2rad(rng.uniform(-max_rotation, max_rotation, shape))
    scale = rng.uniform(scale_range[0], scale_range[1], shape)
    shift_r = rng.uniform(-max_shift, max_shift, shape)
    shift_c = rng.uniform(-max_shift, max_shift, shape)
    angle[:, 0], scale[:, 0], shift_r[:, 0], shift_c[:, 0] = 0.0, 1.0, 0.0, 0.0
    params = [a.ravel() for a in (angle, scale, shift_r, shift_c)]
    source = np.repeat(np.arange(n), int(copies))
    centre = (side - 1) / 2.0
    grid_r, grid_c = np.meshgrid(np.arange(side) - centre, np.arange(side) - centre, indexing="ij")
    out = np.empty((source.size, pixels))
    for start in range(0, source.size, _CHUNK):
        rows = slice(start, min(start + _CHUNK, source.size))
        theta, s, tr, tc = (p[rows, None, None] for p in params)
        # output pixel p = S R (q - c) + c + t, so the source pixel is q = R⁻¹ (p - c - t) / S + c
        pr, pc = grid_r[None] - tr, grid_c[None] - tc
        cos, sin = np.cos(theta), np.sin(theta)
        q_r = (cos * pr + sin * pc) / s + centre
        q_c = (cos * pc - sin * pr) / s + centre
        plane = np.broadcast_to(np.arange(q_r.shape[0])[:, None, None], q_r.shape)
        stack = images[source[rows]].reshape(-1, side, side)
        coords = np.stack([plane, q_r, q_c])
        moved = ndimage.map_coordinates(stack, coords, order=1, mode="constant", cval=0.0)
        out[rows] = np.clip(moved, 0.0, 1.0).reshape(-1, pixels)
    return out


def make_extended_usps(
    digits=(1, 2),
    *,
    train_copies: int = 30,
    test_copies: int = 5,
    mnist_test_share: float = 0.2,
    max_rotation: float = 15.0,
    scale_range: tuple[float, float] = (0.9, 1.1),
    max_shift: float = 2.0,
    data_home=None,
    download: bool = False,
    random_state=0,
):
    """An extended USPS from distorted USPS and MNIST-test digits (module docstring).

    Parameters
    ----------
    digits : tuple of int, default=(1, 2)
        The classes kept (paper 001's Table 1 has two).
    train_copies, test_copies : int, default=30, 5
        Rows per training and per test base image (the image itself and its copies).
    mnist_test_share : float, default=0.2
        Share of the MNIST digits whose images are test bases (a seeded random subset).
    max_rotation, scale_range, max_shift
        The distortions' ranges (:func:`distort_digits`).
    data_home : path-like, optional
        Data directory (default ``$SEMISCALE_DATA`` or ``~/.semiscale``).
    download : bool, default=False
        Download missing USPS or MNIST files.
    random_state : int, Generator or SeedSequence, default=0
        Seeds the MNIST split, then the training copies, then the test copies.

    Returns
    -------
    X_train : ndarray of shape (n_train, 256)
    y_train : ndarray of shape (n_train,), int64
        The digits.
    X_test : ndarray of shape (n_test, 256)
    y_test : ndarray of shape (n_test,), int64
    """
    from .loaders import load_dataset

    if not 0 <= mnist_test_share < 1:
        raise ValueError(f"mnist_test_share must be in [0, 1), got {mnist_test_share!r}")
    digits = np.asarray(digits)
    parts = {}
    for split in ("train", "test"):
        X, y = load_dataset("usps", split, data_home=data_home, download=download, dense=True)
        keep = np.isin(y, digits)
        parts[split] = (np.asarray(X[keep], dtype=np.float64), y[keep].astype(np.int64))
    M, my = load_dataset("mnist", "test", data_home=data_home, download=download, dense=True)
    keep = np.isin(my, digits)
    M, my = resize_digits(M[keep]), np.asarray(my[keep], dtype=np.int64)
    rng = as_generator(random_state)
    to_test = np.zeros(my.size, dtype=bool)
    to_test[rng.permutation(my.size)[: int(round(mnist_test_share * my.size))]] = True
    options = dict(max_rotation=max_rotation, scale_range=scale_range, max_shift=max_shift)
    out = []
    for (X, y), mnist, copies in (
        (parts["train"], ~to_test, train_copies),
        (parts["test"], to_test, test_copies),
    ):
        bases, labels = np.vstack([X, M[mnist]]), np.concatenate([y, my[mnist]])
        out += [
            distort_digits(bases, copies, random_state=rng, **options),
            np.repeat(labels, copies),
        ]
    return tuple(out)
