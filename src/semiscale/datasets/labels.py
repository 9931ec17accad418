"""Map stored labels to the codes estimators and metrics expect.

Datasets come with their labels as the source stored them (±1, 0/1, 1/2, 1..k, 0..9);
:func:`~semiscale.datasets.load_dataset` returns them unchanged.  These helpers recode them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["binary_labels", "encode_labels"]


def binary_labels(y, positive=None) -> np.ndarray:
    """Map a two-valued label vector to -1/+1.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Exactly two distinct values (e.g. ±1, 0/1, 1/2).
    positive : scalar, optional
        The value that becomes +1; default the larger of the two (so 0/1 and 1/2 map to
        -1/+1 in order, and ±1 is unchanged).  For skin_nonskin (1 = skin, 2 = non-skin) the
        default makes non-skin the positive class; pass ``positive=1`` for the opposite.

    Returns
    -------
    ndarray of shape (n_samples,), int64
        Values in {-1, +1}.  Note that -1 is also scikit-learn's unlabeled marker: with ±1
        labels, mark unlabeled points with another value (``mask_unlabeled(..., marker=0)``)
        or use :func:`encode_labels`.

    Examples
    --------
    >>> from semiscale.datasets import binary_labels
    >>> binary_labels([1, 2, 2, 1]).tolist()                 # skin_nonskin's 1/2
    [-1, 1, 1, -1]
    >>> binary_labels([1, 2, 2, 1], positive=1).tolist()
    [1, -1, -1, 1]
    """
    y = np.asarray(y).ravel()
    values = np.unique(y)
    if len(values) != 2:
        raise ValueError(f"binary_labels needs exactly 2 distinct labels, got {len(values)}")
    if positive is None:
        positive = values[1]
    elif positive not in values:
        raise ValueError(f"positive={positive!r} is not one of the labels {values.tolist()}")
    return np.where(y == positive, 1, -1).astype(np.int64)


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """Map labels to codes 0..k-1 in sorted label order.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    codes : ndarray of shape (n_samples,), int64
        ``classes[codes] == y``.
    classes : ndarray of shape (k,)
        Sorted distinct labels.

    Examples
    --------
    >>> from semiscale.datasets import encode_labels
    >>> codes, classes = encode_labels([-1, 1, 1, -1])      # ±1 labels: -1 becomes a code
    >>> codes.tolist(), classes.tolist()
    ([0, 1, 1, 0], [-1, 1])
    """
    y = np.asarray(y).ravel()
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError("y contains NaN; encode_labels needs fully labeled classes")
    classes, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.int64).ravel(), classes
