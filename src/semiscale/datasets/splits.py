"""Choose which points keep their label in a semi-supervised experiment.

:func:`ssl_split` draws a labeled subset from a fully labeled ``y`` and returns boolean masks;
:func:`mask_unlabeled` turns a mask into the target vector an estimator takes (``-1`` marks an
unlabeled point for classifiers, ``NaN`` for regressors).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._random import as_generator

__all__ = ["AUTO_MAX_CLASSES", "mask_unlabeled", "ssl_split"]

#: ``task="auto"`` treats float targets with more distinct values than this as regression.
AUTO_MAX_CLASSES = 50
_CLASSIFICATION = ("classification", "binary", "multiclass")


def _resolve_task(y: np.ndarray, task: str) -> str:
    if task in _CLASSIFICATION:
        return "classification"
    if task == "regression":
        return task
    if task != "auto":
        raise ValueError(
            f"task must be 'auto', 'classification', 'binary', 'multiclass' or 'regression', "
            f"got {task!r}"
        )
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or inf; ssl_split needs the full ground truth")
        if np.any(y != np.round(y)) or len(np.unique(y)) > AUTO_MAX_CLASSES:
            return "regression"
    return "classification"


def _stratified_quotas(m: int, counts: np.ndarray, ensure_all: bool, rng) -> np.ndarray:
    """Split ``m`` labels across classes in proportion to ``counts`` (largest remainder).

    With ``ensure_all``, a class whose share rounds to 0 gets one label, taken from the class
    with the largest quota; when ``m`` < number of classes, ``m`` random classes get one each.
    """
    k = len(counts)
    if ensure_all and m < k:
        quota = np.zeros(k, dtype=np.int64)
        quota[rng.choice(k, m, replace=False)] = 1
        return quota
    quota, rem = np.divmod(m * counts, int(counts.sum()))  # exact integer floor and remainder
    short = m - int(quota.sum())
    if short:
        order = np.lexsort((rng.random(k), -rem))  # largest remainder, random tie-break
        quota[order[:short]] += 1
    if ensure_all:
        for c in np.flatnonzero(quota == 0):
            quota[np.argmax(quota)] -= 1
            quota[c] = 1
    return quota


def ssl_split(
    y,
    n_labeled: int | None = None,
    label_rate: float | None = None,
    *,
    per_class: bool = False,
    stratify: bool = True,
    ensure_all_classes: bool = True,
    task: str = "auto",
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the labeled subset of a semi-supervised split.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Ground-truth targets of every point (no unlabeled marker).
    n_labeled : int, optional
        Number of labeled points (per class when ``per_class=True``).
    label_rate : float in (0, 1], optional
        Fraction of points to label: ``max(1, round(label_rate * n_samples))`` points.  Pass
        exactly one of ``n_labeled`` and ``label_rate``.
    per_class : bool, default=False
        Label exactly ``n_labeled`` points of every class (classification only).
    stratify : bool, default=True
        Share the labeled points among classes in proportion to class sizes (largest
        remainder, so the class counts are exact to within one); otherwise draw them uniformly.
        Ignored for regression.
    ensure_all_classes : bool, default=True
        Label at least one point of every class.  When ``n_labeled`` is smaller than the number
        of classes this is impossible: that many distinct classes get one label each and a
        warning is issued.  Ignored for regression.
    task : {"auto", "classification", "binary", "multiclass", "regression"}, default="auto"
        ``"auto"`` treats ``y`` as a regression target when it is a float array with a
        non-integer value or more than :data:`AUTO_MAX_CLASSES` (50) distinct values, as class
        labels otherwise.  Integer-valued regression targets with few values (abalone's ring
        counts) need ``task="regression"``; a registry entry's ``info.task`` can be passed as is.
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
        Same int -> same split.

    Returns
    -------
    labeled_mask : ndarray of bool, shape (n_samples,)
    unlabeled_mask : ndarray of bool, shape (n_samples,)
        ``~labeled_mask``.

    Raises
    ------
    ValueError
        Both or neither of ``n_labeled``/``label_rate``; ``n_labeled`` not a positive int or
        larger than ``n_samples``; ``label_rate`` outside (0, 1]; ``per_class`` with a
        regression target or with ``label_rate``; a class with fewer than ``n_labeled`` points
        under ``per_class``.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import ssl_split
    >>> y = np.repeat([0, 1, 2], 100)
    >>> labeled, unlabeled = ssl_split(y, n_labeled=2, per_class=True, random_state=0)
    >>> np.bincount(y[labeled]).tolist()
    [2, 2, 2]
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or len(y) == 0:
        raise ValueError(f"y must be a non-empty 1-D array, got shape {y.shape}")
    n = len(y)
    if (n_labeled is None) == (label_rate is None):
        raise ValueError(
            "pass exactly one of n_labeled (a count) or label_rate (a fraction in (0, 1])"
        )
    task = _resolve_task(y, task)
    if per_class and task == "regression":
        raise ValueError("per_class=True needs class labels; y is a regression target")
    if label_rate is not None:
        if per_class:
            raise ValueError("per_class=True takes n_labeled (points per class), not label_rate")
        if not (isinstance(label_rate, numbers.Real) and 0 < label_rate <= 1):
            raise ValueError(f"label_rate must be in (0, 1], got {label_rate!r}")
        m = max(1, int(round(label_rate * n)))
    else:
        if not isinstance(n_labeled, numbers.Integral) or isinstance(n_labeled, bool):
            raise ValueError(f"n_labeled must be an int, got {n_labeled!r}")
        if n_labeled < 1:
            raise ValueError(f"n_labeled must be >= 1, got {n_labeled}")
        if not per_class and n_labeled > n:
            raise ValueError(f"n_labeled={n_labeled} exceeds the number of samples n={n}")
        m = int(n_labeled)
    rng = as_generator(random_state)
    labeled = np.zeros(n, dtype=bool)
    if task == "regression":
        labeled[rng.choice(n, m, replace=False)] = True
        return labeled, ~labeled

    classes, codes = np.unique(y, return_inverse=True)
    codes = codes.ravel()
    k = len(classes)
    counts = np.bincount(codes, minlength=k)
    members = np.split(np.argsort(codes, kind="stable"), np.cumsum(counts)[:-1])
    if per_class:
        short = [f"{classes[c].item()!r} ({counts[c]})" for c in range(k) if counts[c] < m]
        if short:
            raise ValueError(
                f"per_class n_labeled={m} but some classes have fewer points: {', '.join(short)}"
            )
        quota = np.full(k, m, dtype=np.int64)
    elif stratify:
        quota = _stratified_quotas(m, counts, ensure_all_classes, rng)
    else:
        quota = None
        if ensure_all_classes:
            chosen = np.arange(k) if m >= k else rng.choice(k, m, replace=False)
            labeled[[members[c][rng.integers(counts[c])] for c in chosen]] = True
        rest = m - int(labeled.sum())
        if rest:
            labeled[rng.choice(np.flatnonzero(~labeled), rest, replace=False)] = True
    if quota is not None:
        for c in range(k):
            if quota[c]:
                labeled[rng.choice(members[c], quota[c], replace=False)] = True
    if ensure_all_classes and not per_class and m < k:
        warnings.warn(
            f"{m} labeled point(s) cannot cover all {k} classes; {m} classes get one label each",
            stacklevel=2,
        )
    return labeled, ~labeled


def mask_unlabeled(y, labeled_mask, marker=-1) -> np.ndarray:
    """Return a copy of ``y`` with the unlabeled entries replaced by ``marker``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Ground-truth targets.
    labeled_mask : array-like of bool, shape (n_samples,)
        True where the label is kept (e.g. the first output of :func:`ssl_split`).
    marker : scalar, default=-1
        Value marking unlabeled points: ``-1`` for classifiers (scikit-learn's convention),
        ``np.nan`` for regressors.  The dtype widens when needed (integer ``y`` becomes float
        for NaN; unsigned becomes signed for -1).

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the mask is not boolean of the right length, or ``marker`` is itself a label of a
        labeled point (±1 labels with ``marker=-1``): recode with
        :func:`~semiscale.datasets.encode_labels` or pick another marker and pass it to the
        estimator's ``unlabeled=`` parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import mask_unlabeled
    >>> y = np.array([0, 1, 2, 0, 1, 2])
    >>> mask_unlabeled(y, np.array([True, True, True, False, False, False])).tolist()
    [0, 1, 2, -1, -1, -1]
    >>> mask_unlabeled([0.5, 1.5, 2.5], np.array([True, False, True]), marker=np.nan).tolist()
    [0.5, nan, 2.5]
    """
    y = np.asarray(y)
    mask = np.asarray(labeled_mask)
    if mask.dtype != bool or mask.shape != y.shape[:1] or y.ndim != 1:
        raise ValueError(
            f"labeled_mask must be a boolean array of shape {y.shape[:1]} matching 1-D y, got "
            f"dtype {mask.dtype} and shape {mask.shape}"
        )
    marker_arr = np.asarray(marker)
    is_nan = marker_arr.dtype.kind == "f" and np.isnan(marker_arr)
    if is_nan:
        out = y.astype(np.result_type(y.dtype, np.float64), copy=True)
    else:
        if np.any(y[mask] == marker):
            raise ValueError(
                f"marker={marker!r} is also a label of a labeled point (e.g. ±1 labels with the "
                "default -1); recode the labels (encode_labels, binary_labels) or choose another "
                "marker and pass it to the estimator as unlabeled="
            )
        out = y.astype(np.result_type(y.dtype, marker_arr.dtype), copy=True)
    out[~mask] = marker
    return out
