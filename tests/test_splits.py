"""ssl_split, mask_unlabeled and the label-recoding helpers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semiscale.datasets import binary_labels, encode_labels, mask_unlabeled, ssl_split


@pytest.fixture
def y3():
    """Three imbalanced classes: 600 / 300 / 100 points, shuffled."""
    y = np.repeat([0, 1, 2], [600, 300, 100])
    return np.random.default_rng(0).permutation(y)


def test_counts_and_complement(y3):
    lab, unl = ssl_split(y3, n_labeled=50, random_state=0)
    assert lab.dtype == bool and lab.shape == y3.shape
    assert lab.sum() == 50 and np.array_equal(unl, ~lab)
    np.testing.assert_array_equal(np.bincount(y3[lab]), [30, 15, 5])  # stratified


def test_label_rate(y3):
    lab, _ = ssl_split(y3, label_rate=0.1, random_state=0)
    assert lab.sum() == 100
    lab, _ = ssl_split(y3, label_rate=1.0, random_state=0)
    assert lab.all()
    with pytest.warns(UserWarning, match="cannot cover"):
        lab, _ = ssl_split(y3, label_rate=1e-6, random_state=0)
    assert lab.sum() == 1  # at least one point


def test_per_class(y3):
    lab, _ = ssl_split(y3, n_labeled=7, per_class=True, random_state=1)
    np.testing.assert_array_equal(np.bincount(y3[lab]), [7, 7, 7])
    with pytest.raises(ValueError, match="fewer points: 2 \\(100\\)"):
        ssl_split(y3, n_labeled=101, per_class=True)
    with pytest.raises(ValueError, match="not label_rate"):
        ssl_split(y3, label_rate=0.1, per_class=True)


def test_all_classes_present_with_few_labels():
    y = np.repeat([-1.0, 1.0, 5.0], [10000, 10, 2])
    for stratify in (True, False):
        for seed in range(5):
            lab, _ = ssl_split(y, n_labeled=3, stratify=stratify, random_state=seed)
            assert lab.sum() == 3 and set(y[lab]) == {-1.0, 1.0, 5.0}
    lab, _ = ssl_split(y, n_labeled=3, ensure_all_classes=False, stratify=True, random_state=0)
    assert set(y[lab]) == {-1.0}  # proportional share alone gives the tiny classes nothing


def test_fewer_labels_than_classes_warns(y3):
    with pytest.warns(UserWarning, match="cannot cover all 3 classes"):
        lab, _ = ssl_split(y3, n_labeled=2, random_state=0)
    assert lab.sum() == 2 and len(set(y3[lab])) == 2


def test_reproducible(y3):
    a, _ = ssl_split(y3, n_labeled=40, random_state=3)
    b, _ = ssl_split(y3, n_labeled=40, random_state=3)
    c, _ = ssl_split(y3, n_labeled=40, random_state=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    d, _ = ssl_split(y3, n_labeled=40, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a, d)


def test_regression_targets():
    y = np.random.default_rng(0).standard_normal(500)
    lab, _ = ssl_split(y, n_labeled=20, random_state=0)
    assert lab.sum() == 20
    with pytest.raises(ValueError, match="regression"):
        ssl_split(y, n_labeled=2, per_class=True)
    rings = np.random.default_rng(0).integers(1, 30, 400).astype(float)  # abalone-like
    lab, _ = ssl_split(rings, n_labeled=5, task="regression", random_state=0)
    assert lab.sum() == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as classes (28 of them) 5 labels would warn
        ssl_split(rings, n_labeled=5, task="regression", random_state=0)
    many = np.arange(200, dtype=float)  # > 50 distinct integer-valued floats -> regression
    ssl_split(many, n_labeled=3, per_class=False, random_state=0)
    with pytest.raises(ValueError, match="regression"):
        ssl_split(many, n_labeled=1, per_class=True)
    lab, _ = ssl_split(many, n_labeled=1, per_class=True, task="multiclass")
    assert lab.sum() == 200


def test_errors(y3):
    with pytest.raises(ValueError, match="exactly one"):
        ssl_split(y3)
    with pytest.raises(ValueError, match="exactly one"):
        ssl_split(y3, n_labeled=5, label_rate=0.1)
    with pytest.raises(ValueError, match="exceeds the number of samples n=1000"):
        ssl_split(y3, n_labeled=1001)
    with pytest.raises(ValueError, match=">= 1"):
        ssl_split(y3, n_labeled=0)
    with pytest.raises(ValueError, match="must be an int"):
        ssl_split(y3, n_labeled=2.5)
    for rate in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"label_rate must be in \(0, 1\]"):
            ssl_split(y3, label_rate=rate)
    with pytest.raises(ValueError, match="task"):
        ssl_split(y3, n_labeled=3, task="clustering")
    with pytest.raises(ValueError, match="1-D"):
        ssl_split(np.zeros((4, 2)), n_labeled=1)
    with pytest.raises(ValueError, match="NaN"):
        ssl_split(np.array([0.0, np.nan, 1.0]), n_labeled=1)


@settings(max_examples=40, deadline=None)
@given(
    counts=st.lists(st.integers(1, 40), min_size=1, max_size=6),
    frac=st.floats(0, 1),
    stratify=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_property_exact_count_and_coverage(counts, frac, stratify, seed):
    y = np.repeat(np.arange(len(counts)), counts)
    n, k = len(y), len(counts)
    m = k + int(frac * (n - k))
    lab, _ = ssl_split(y, n_labeled=m, stratify=stratify, random_state=seed)
    assert lab.sum() == m
    assert set(y[lab]) == set(range(k))
    got = np.bincount(y[lab], minlength=k)
    exact = m * np.array(counts) / n
    if stratify and exact.min() >= 1:  # no class needed its share raised to one
        assert np.all(np.abs(got - exact) < 1)


# --------------------------------------------------------------------------- masking


def test_mask_unlabeled_classification():
    y = np.array([0, 1, 2, 1], dtype=np.uint8)
    mask = np.array([True, False, True, False])
    out = mask_unlabeled(y, mask)
    assert out.tolist() == [0, -1, 2, -1] and out.dtype.kind == "i"
    assert y.tolist() == [0, 1, 2, 1]  # input untouched
    pm = np.array([-1.0, 1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="marker=-1 is also a label"):
        mask_unlabeled(pm, mask)
    assert mask_unlabeled(pm, mask, marker=0).tolist() == [-1.0, 0.0, 1.0, 0.0]


def test_mask_unlabeled_regression_and_errors():
    y = np.array([0.5, 1.5, 2.5])
    out = mask_unlabeled(y, np.array([True, False, True]), marker=np.nan)
    assert np.isnan(out[1]) and out[0] == 0.5
    out = mask_unlabeled(np.array([3, 4]), np.array([False, True]), marker=np.nan)
    assert out.dtype == np.float64 and np.isnan(out[0])
    with pytest.raises(ValueError, match="boolean"):
        mask_unlabeled(y, np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="shape"):
        mask_unlabeled(y, np.array([True, False]))


def test_split_then_mask(y3):
    lab, _ = ssl_split(y3, n_labeled=30, random_state=0)
    y_ssl = mask_unlabeled(y3, lab)
    assert (y_ssl == -1).sum() == 970 and np.array_equal(y_ssl[lab], y3[lab])


# --------------------------------------------------------------------------- label helpers


def test_binary_labels():
    assert binary_labels([0, 1, 1, 0]).tolist() == [-1, 1, 1, -1]
    assert binary_labels([1.0, 2.0]).tolist() == [-1, 1]  # skin_nonskin: 2 (non-skin) -> +1
    assert binary_labels([1.0, 2.0], positive=1.0).tolist() == [1, -1]
    assert binary_labels([-1, 1]).tolist() == [-1, 1]
    with pytest.raises(ValueError, match="exactly 2"):
        binary_labels([0, 1, 2])
    with pytest.raises(ValueError, match="not one of the labels"):
        binary_labels([0, 1], positive=5)


def test_encode_labels():
    codes, classes = encode_labels([5.0, 1.0, 26.0, 1.0])
    assert codes.tolist() == [1, 0, 2, 0] and classes.tolist() == [1.0, 5.0, 26.0]
    assert codes.dtype == np.int64
    with pytest.raises(ValueError, match="NaN"):
        encode_labels([1.0, np.nan])
