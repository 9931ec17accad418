"""Semi-supervised folds: labeled and unlabeled points are split separately (paper 004, §2).

Paper 004 partitions the labeled set ``L`` and the unlabeled set ``U`` each into ``t`` parts
``L_k``, ``U_k``; fold ``k`` trains on everything but ``S_k = L_k ∪ U_k`` and measures the error
on ``L_k``.  Splitting the two sets separately keeps the share of labeled points equal in every
fold, which a plain ``KFold`` over all rows does not (with 1 % labels a test fold of ``KFold`` can
hold no labeled point at all).

Two ways to use a fold:

* **inductive** (``transductive=False``, paper 004's protocol): fit on every point outside
  ``S_k``, predict the points of ``L_k`` as new points;
* **transductive** (the default): fit on *all* points with the labels of ``L_k`` hidden (marked
  unlabeled), and read the predictions of ``L_k`` from the fitted ``transduction_``.  The graph
  is then the same in every fold, so a graph is built once for all folds.

Transductive folds need the labels to be hidden, which only semiscale's own functions do
(:func:`~semiscale.model_selection.ssl_cross_validate`,
:class:`~semiscale.model_selection.SSLGridSearchCV`, both through :meth:`SSLKFold.split_ssl`).
scikit-learn's ``cross_val_score`` or ``GridSearchCV`` only know ``split``, which therefore never
puts a test row in the training rows: in transductive mode it yields the training rows *all
points but the held-out labeled ones* -- the fold's unlabeled points stay in training, the
held-out labeled points are removed, not hidden, so no label can leak.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.multiclass import type_of_target

from .._random import as_random_state
from ._markers import is_nan_marker, labeled_mask

__all__ = ["SSLFold", "SSLKFold"]


class SSLFold(NamedTuple):
    """One semi-supervised fold, as positions into the rows of ``X``.

    Attributes
    ----------
    fit_rows : ndarray of int
        Rows the model is fitted on (sorted).
    hidden_rows : ndarray of int
        Labeled rows among ``fit_rows`` whose labels are hidden (marked unlabeled) for the fit;
        empty for an inductive fold.
    test_rows : ndarray of int
        Labeled rows the score is measured on.  Transductive folds: equal to ``hidden_rows``,
        predicted by ``transduction_``; inductive folds: rows outside ``fit_rows``, predicted by
        ``predict``.
    """

    fit_rows: np.ndarray
    hidden_rows: np.ndarray
    test_rows: np.ndarray

    @property
    def transductive(self) -> bool:
        """True when the test rows are hidden training rows."""
        return self.hidden_rows.size > 0


class SSLKFold:
    """K-fold cross-validation for semi-supervised data.

    The labeled points and the unlabeled points are each split into ``n_splits`` folds (paper
    004, §2); fold ``k`` pairs the ``k``-th labeled part with the ``k``-th unlabeled part.  The
    labeled points are stratified by class for class labels (like ``StratifiedKFold``), so every
    fold holds every class.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds, at least 2.  Needs at least ``n_splits`` labeled points (and, when
        stratifying, ``n_splits`` labeled points of every class).
    transductive : bool, default=True
        Transductive folds: fit on all points with fold ``k``'s labels hidden and score
        ``transduction_`` on them.  Inductive folds: fit on all points outside fold ``k``
        (labeled and unlabeled) and score ``predict`` on fold ``k``'s labeled points.  See the
        module docstring for what :meth:`split` yields in each mode.
    shuffle : bool, default=True
        Shuffle the labeled and the unlabeled points before splitting them.
    random_state : int, RandomState, Generator, SeedSequence or None, default=None
        Seeds the shuffles; an int gives the same folds on every call, a ``RandomState`` or a
        ``Generator`` is advanced by each call (new folds every time).
    unlabeled : scalar, default=-1
        Marker of unlabeled points when ``y`` holds class labels.  A float ``y`` containing NaN
        is read as regression targets with NaN marking the unlabeled points; pass
        ``unlabeled=np.nan`` to always use NaN.  semiscale's own functions use the estimator's
        marker instead (its ``unlabeled`` parameter, or NaN for a regressor).
    stratify : bool or "auto", default="auto"
        Stratify the labeled points by class.  ``"auto"``: when the labeled targets are class
        labels (binary or multiclass by scikit-learn's ``type_of_target``), not for regression
        targets.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.model_selection import SSLKFold
    >>> y = np.array([0, 1, -1, -1, 0, 1, -1, -1, 0, 1, -1, -1])
    >>> cv = SSLKFold(n_splits=2, random_state=0)
    >>> [fold.test_rows.size for fold in cv.split_ssl(np.zeros((12, 1)), y)]
    [3, 3]
    """

    def __init__(
        self,
        n_splits=5,
        *,
        transductive=True,
        shuffle=True,
        random_state=None,
        unlabeled=-1,
        stratify="auto",
    ):
        self.n_splits = n_splits
        self.transductive = transductive
        self.shuffle = shuffle
        self.random_state = random_state
        self.unlabeled = unlabeled
        self.stratify = stratify

    def __repr__(self):
        return (
            f"{type(self).__name__}(n_splits={self.n_splits}, transductive={self.transductive}, "
            f"shuffle={self.shuffle}, random_state={self.random_state!r}, "
            f"unlabeled={self.unlabeled!r}, stratify={self.stratify!r})"
        )

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of folds (scikit-learn's splitter API).

        Parameters
        ----------
        X, y, groups : object
            Ignored, for compatibility.

        Returns
        -------
        int
        """
        self._check_params()
        return int(self.n_splits)

    def _check_params(self):
        n = self.n_splits
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise ValueError(
                f"n_splits must be an integer >= 2, got {n!r}; cross-validation needs at least "
                "two folds"
            )
        if self.stratify not in (True, False, "auto"):
            raise ValueError(f"stratify must be True, False or 'auto', got {self.stratify!r}")
        if not isinstance(self.shuffle, (bool, np.bool_)):
            raise ValueError(f"shuffle must be True or False, got {self.shuffle!r}")

    def _labeled(self, y, n_samples, unlabeled):
        """``y`` as an array, its labeled-row mask and the marker used."""
        if y is None:
            raise ValueError(
                "SSLKFold needs y to tell labeled from unlabeled points; pass y with the "
                "unlabeled points marked (-1 for classes, NaN for regression targets)"
            )
        y = np.asarray(y)
        if y.shape[0] != n_samples:
            raise ValueError(f"y has {y.shape[0]} rows but X has {n_samples} samples")
        if unlabeled is None:
            has_nan = y.dtype.kind == "f" and bool(np.isnan(y).any())
            unlabeled = np.nan if has_nan else self.unlabeled
        return y, labeled_mask(y, unlabeled), unlabeled

    def _stratify_labels(self, y_labeled, nan_marked):
        if self.stratify is False or y_labeled.ndim != 1:
            return None
        kind = type_of_target(y_labeled)
        if kind not in ("binary", "multiclass"):
            if self.stratify is True:
                raise ValueError(
                    f"stratify=True needs class labels, but the labeled targets are {kind!r}; "
                    "use stratify=False (or 'auto') for regression targets"
                )
            return None
        if self.stratify == "auto" and nan_marked and y_labeled.dtype.kind == "f":
            # NaN-marked float targets are regression targets even when they look integral
            return None
        return y_labeled

    def split_ssl(self, X, y, groups=None, *, unlabeled=None):
        """Yield the semi-supervised folds as ``(fit_rows, hidden_rows, test_rows)``.

        This is what semiscale's own cross-validation uses: transductive folds hide the labels of
        ``hidden_rows`` for the fit and score ``transduction_[hidden_rows]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Only its number of rows is used.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets with the unlabeled points marked.
        groups : object
            Ignored.
        unlabeled : scalar or None, default=None
            Marker to use instead of the splitter's own guess (semiscale's functions pass the
            estimator's marker).

        Yields
        ------
        SSLFold
            ``fit_rows``, ``hidden_rows`` (empty for inductive folds), ``test_rows``.

        Raises
        ------
        ValueError
            Fewer labeled points than folds, or (when stratifying) a class with fewer labeled
            points than folds.
        """
        self._check_params()
        n_samples = len(X) if not hasattr(X, "shape") else X.shape[0]
        y, mask, marker = self._labeled(y, n_samples, unlabeled)
        labeled = np.flatnonzero(mask)
        unlabeled_rows = np.flatnonzero(~mask)
        k = int(self.n_splits)
        if labeled.size < k:
            raise ValueError(
                f"n_splits={k} folds need at least {k} labeled points, but y has "
                f"{labeled.size}; lower n_splits or label more points"
            )
        strata = self._stratify_labels(y[labeled], is_nan_marker(marker))
        # One RandomState for both splitters (scikit-learn's KFold refuses a Generator).
        random_state = as_random_state(self.random_state) if self.shuffle else None
        if strata is not None:
            classes, counts = np.unique(strata, return_counts=True)
            if counts.min() < k:
                rare = np.asarray(classes[np.argmin(counts)]).tolist()  # 1, not np.int64(1)
                raise ValueError(
                    f"n_splits={k} stratified folds need at least {k} labeled points of every "
                    f"class, but class {rare!r} has "
                    f"{counts.min()}; lower n_splits, label more "
                    "points of that class, or pass stratify=False"
                )
            splitter = StratifiedKFold(k, shuffle=self.shuffle, random_state=random_state)
            labeled_parts = [labeled[test] for _, test in splitter.split(labeled, strata)]
        else:
            splitter = KFold(k, shuffle=self.shuffle, random_state=random_state)
            labeled_parts = [labeled[test] for _, test in splitter.split(labeled)]
        unlabeled_parts = self._split_unlabeled(unlabeled_rows, k, random_state)
        everything = np.arange(n_samples)
        empty = np.empty(0, dtype=np.intp)
        for held_labeled, held_unlabeled in zip(labeled_parts, unlabeled_parts):
            held_labeled = np.sort(held_labeled)
            if self.transductive:
                yield SSLFold(everything, held_labeled, held_labeled)
            else:
                held = np.union1d(held_labeled, held_unlabeled)
                yield SSLFold(np.setdiff1d(everything, held), empty, held_labeled)

    def _split_unlabeled(self, rows, k, random_state):
        # KFold refuses fewer rows than folds; unlabeled points may be that few (or none), and a
        # fold without unlabeled points is fine.
        if rows.size >= k:
            splitter = KFold(k, shuffle=self.shuffle, random_state=random_state)
            return [rows[test] for _, test in splitter.split(rows)]
        return [rows[i : i + 1] for i in range(rows.size)] + [rows[:0]] * (k - rows.size)

    def split(self, X, y=None, groups=None):
        """Yield ``(train, test)`` row indices, safe for scikit-learn's model selection.

        ``test`` is fold ``k``'s labeled points.  Inductive mode: ``train`` is every point outside
        fold ``k`` (labeled and unlabeled).  Transductive mode: ``train`` is every point but the
        held-out labeled ones -- scikit-learn cannot hide labels, so they are left out instead
        and never leak into the fit; use :meth:`split_ssl` (as semiscale's functions do) for
        true transductive folds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Targets with the unlabeled points marked (required).
        groups : object
            Ignored.

        Yields
        ------
        train : ndarray of int
        test : ndarray of int
        """
        for fold in self.split_ssl(X, y, groups):
            if fold.transductive:
                yield np.setdiff1d(fold.fit_rows, fold.hidden_rows), fold.test_rows
            else:
                yield fold.fit_rows, fold.test_rows


def check_ssl_cv(cv, *, transductive=True):
    """Turn ``cv`` into a splitter with :meth:`SSLKFold.split_ssl`.

    ``None`` gives ``SSLKFold(5, shuffle=False)``, an int ``SSLKFold(cv, shuffle=False)``
    (both with ``transductive``): unshuffled, so that a search or a cross-validation given an
    int is the same on every call, as scikit-learn's ``cv=int`` (unshuffled ``KFold`` or
    ``StratifiedKFold``).  An :class:`SSLKFold` (or anything with ``split_ssl``) is used as is;
    any other scikit-learn splitter or iterable of ``(train, test)`` pairs gives inductive folds
    whose test rows are scored on their labeled points only.
    """
    if cv is None:
        cv = 5
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return SSLKFold(int(cv), transductive=transductive, shuffle=False)
    if hasattr(cv, "split_ssl"):
        return cv
    if hasattr(cv, "split") or hasattr(cv, "__iter__"):
        return _InductiveSplits(cv)
    raise ValueError(
        f"cv must be None, an int, an SSLKFold, a scikit-learn splitter or an iterable of "
        f"(train, test) index pairs; got {cv!r}"
    )


class _InductiveSplits:
    """Adapter: a scikit-learn splitter (or list of pairs) seen as inductive SSL folds."""

    def __init__(self, cv):
        self.cv = cv
        self._pairs = None if hasattr(cv, "split") else list(cv)

    def get_n_splits(self, X=None, y=None, groups=None):
        if self._pairs is not None:
            return len(self._pairs)
        return self.cv.get_n_splits(X, y, groups)

    def split_ssl(self, X, y, groups=None, *, unlabeled=None):
        pairs = self._pairs if self._pairs is not None else self.cv.split(X, y, groups)
        empty = np.empty(0, dtype=np.intp)
        for train, test in pairs:
            yield SSLFold(np.asarray(train), empty, np.asarray(test))

    def __repr__(self):
        return repr(self.cv)
