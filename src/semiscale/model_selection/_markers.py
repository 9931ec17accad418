"""Which rows of ``y`` carry a label, and how to hide a label (DESIGN.md §3, "Unlabeled points").

Classifiers mark an unlabeled point with ``y == unlabeled`` (default ``-1``); regressors with
``NaN``.  Model selection must agree with the estimator it evaluates, so the marker is taken from
the estimator when one is known (:func:`estimator_marker`) and guessed from ``y`` otherwise
(:func:`labeled_mask` with ``marker=None``).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import is_regressor

from .._validation import label_array, missing_labels, unlabeled_rows
from ._pipelines import final_estimator

__all__ = ["estimator_marker", "hide_labels", "is_nan_marker", "labeled_mask"]


def is_nan_marker(marker) -> bool:
    """True when ``marker`` is NaN (the regressors' marker)."""
    return isinstance(marker, numbers.Real) and not isinstance(marker, bool) and np.isnan(marker)


def estimator_marker(estimator, default=-1):
    """The value that marks an unlabeled point for ``estimator``.

    Regressors use NaN; classifiers their ``unlabeled`` parameter when they have one (every
    semiscale classifier does), else ``default``.
    """
    final = final_estimator(estimator)  # a pipeline's marker is its last step's, which reads y
    if is_regressor(final) or is_regressor(estimator):
        return np.nan
    return getattr(final, "unlabeled", default)


def labeled_mask(y, marker=None, *, default=-1) -> np.ndarray:
    """Boolean mask of the labeled rows of ``y``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
    marker : scalar or None
        The unlabeled marker.  NaN: rows that are NaN are unlabeled (a 2-D row when all its
        targets are NaN).  A value: rows equal to it are unlabeled, and NaN rows as well (a NaN
        can never be scored).  None: guess from ``y`` -- float ``y`` containing NaN uses NaN,
        anything else uses ``default``.
    default : scalar
        The marker used by the guess when ``y`` has no NaN.
    """
    y = np.asarray(label_array(y))
    nan_rows = np.zeros(y.shape[0], dtype=bool)
    if y.dtype.kind in "fO":  # NaN, and None / pd.NA among objects: missing labels
        nan = missing_labels(y)
        nan_rows = nan.all(axis=1) if y.ndim == 2 else nan
    if marker is None:
        marker = np.nan if nan_rows.any() else default
    if is_nan_marker(marker) or y.ndim != 1:
        return ~nan_rows
    return ~unlabeled_rows(y, marker)  # the classifiers' own rule: the marker or missing


def hide_labels(y, rows, marker) -> np.ndarray:
    """A copy of ``y`` whose ``rows`` are marked unlabeled with ``marker``.

    The dtype is widened when the marker does not fit (an int ``y`` with a NaN marker becomes
    float, a string ``y`` a longer string), so the marker is never silently truncated or cast.
    """
    y = np.asarray(y)
    if y.dtype.kind in "US" and not isinstance(marker, str):
        # numpy would turn the marker into a string ("-1"), which no longer equals it
        dtype = np.dtype(object)
    else:
        try:
            dtype = np.result_type(y.dtype, np.asarray(marker).dtype)
        except TypeError:
            dtype = np.dtype(object)
    hidden = y.astype(dtype, copy=True)
    hidden[rows] = marker
    return hidden
