"""Distorted digits: MNIST at USPS's format, seeded affine copies, the extended USPS builder."""

from pathlib import Path

import numpy as np
import pytest

from semiscale.datasets import distort_digits, make_extended_usps, resize_digits

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p for p in (ROOT / "shared" / "datasets", ROOT.parent / "shared" / "datasets") if p.is_dir()),
    None,
)


def _bar(side=16):
    """A vertical bar (a "1") in the middle of a side × side image."""
    image = np.zeros((side, side))
    image[3:13, 7:9] = 1.0
    return image.ravel()


def test_distort_keeps_each_image_first_and_is_seeded():
    images = np.stack([_bar(), _bar()[::-1]])
    X = distort_digits(images, 5, random_state=3)
    assert X.shape == (10, 256)
    np.testing.assert_array_equal(X[::5], images)  # copy 0: the image itself
    np.testing.assert_array_equal(X, distort_digits(images, 5, random_state=3))
    assert not np.array_equal(X, distort_digits(images, 5, random_state=4))
    assert X.min() >= 0.0 and X.max() <= 1.0
    assert all(not np.allclose(X[k], images[0]) for k in range(1, 5))  # copies moved


def test_distort_rotation_shift_and_scale_ranges():
    image = _bar()[None]
    turned = distort_digits(
        image, 2, max_rotation=90.0, scale_range=(1.0, 1.0), max_shift=0.0, random_state=0
    )[1].reshape(16, 16)
    angle = np.rad2deg(np.deg2rad(np.random.default_rng(0).uniform(-90, 90, (1, 2)))[0, 1])
    rows, cols = np.nonzero(turned > 0.5)
    fitted = np.rad2deg(np.arctan2(np.ptp(cols), np.ptp(rows)))  # a bar's tilt from vertical
    assert abs(fitted - abs(angle)) < 15
    shifted = distort_digits(
        image, 2, max_rotation=0.0, scale_range=(1.0, 1.0), max_shift=3.0, random_state=1
    )[1]
    assert shifted.sum() == pytest.approx(image.sum(), rel=0.35)  # moved, not erased
    with pytest.raises(ValueError, match="copies"):
        distort_digits(image, 0)
    with pytest.raises(ValueError, match="square"):
        distort_digits(np.zeros((1, 10)), 2)


def test_resize_fills_the_box_keeping_the_aspect_ratio():
    image = np.zeros((28, 28))
    image[4:24, 10:20] = 0.8  # 20 rows, 10 columns
    out = resize_digits(image.ravel()[None]).reshape(16, 16)
    rows, cols = np.nonzero(out > 0.5)
    assert np.ptp(rows) >= 14 and 6 <= np.ptp(cols) <= 9
    assert out.max() == pytest.approx(1.0)
    assert not resize_digits(np.zeros((1, 784))).any()


@pytest.mark.skipif(SHARED is None, reason="shared dataset folder not present")
def test_extended_usps_is_built_from_both_sources_and_seeded():
    a = make_extended_usps(train_copies=2, test_copies=1, data_home=SHARED)
    X_train, y_train, X_test, y_test = a
    # USPS 1s and 2s: 1,736 training and 462 test images; MNIST test: 2,167, 20 % held out
    mnist_test = round(0.2 * 2167)
    assert X_train.shape == (2 * (1736 + 2167 - mnist_test), 256)
    assert X_test.shape == (462 + mnist_test, 256)
    assert set(np.unique(y_train)) == {1, 2} and y_train.shape == (X_train.shape[0],)
    b = make_extended_usps(train_copies=2, test_copies=1, data_home=SHARED)
    for left, right in zip(a, b):
        np.testing.assert_array_equal(left, right)
    c = make_extended_usps(train_copies=2, test_copies=1, data_home=SHARED, random_state=1)
    assert not np.array_equal(a[0], c[0])
