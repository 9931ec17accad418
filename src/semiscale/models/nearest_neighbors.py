r"""The nearest-neighbour baseline on the labeled points (paper 003's 1-NN).

A supervised baseline with the semi-supervised conventions: the unlabeled rows of ``y`` are
ignored by the fit, every training row gets a label (``transduction_``), and the decision
values rank points for an AUC.
"""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.neighbors import NearestNeighbors
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._progress import log
from .._validation import check_classification_targets, validate_X
from ._base import (
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
    _check_y_given,
    _column_or_1d_labels,
)
from ._contract import labels_from_decision

__all__ = ["NearestNeighborsClassifier"]


class NearestNeighborsClassifier(SSLClassifierMixin, BaseEstimator):
    r"""Nearest labeled neighbours, with a distance score for AUC (paper 003's 1-NN baseline).

    One neighbour search per class among the labeled points of that class (scikit-learn's
    ``NearestNeighbors``).  The decision value of class ``c`` at ``x`` is minus the mean
    distance from ``x`` to its ``k = n_neighbors`` nearest labeled points of class ``c``,

    .. math::  s_c(x) = -\frac1k \sum_{j=1}^{k} d\big(x,\ x^{(c)}_{[j]}(x)\big),

    and the predicted class is the arg max of :math:`s_c` (the nearest class).  With two
    classes the decision function is the difference

    .. math::  f(x) = s_1(x) - s_0(x) = \bar d_0(x) - \bar d_1(x),

    positive for ``classes_[1]``: how much nearer ``x`` is to the labeled points of the second
    class than to those of the first.  A 1-NN classifier has no score of its own (its vote is 0
    or 1, which ties every point of a class for an AUC); this margin of distances ranks the
    points and its sign is the 1-NN label: with ``n_neighbors=1`` the predictions are those of
    ``KNeighborsClassifier(n_neighbors=1)`` on the labeled points (up to ties of distance).
    With more neighbours the rule is the nearest class by mean distance, not the majority vote
    of scikit-learn's ``KNeighborsClassifier``.

    Parameters
    ----------
    n_neighbors : int, default=1
        Labeled neighbours ``k`` per class whose distances are averaged (a class with fewer
        labeled points uses all of them).
    metric : str, default="euclidean"
        Distance of the search (any metric scikit-learn's ``NearestNeighbors`` takes by name).
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    unlabeled : int, float, str or None, default=-1
        Marker of unlabeled points in ``y`` (None: every point is labeled).  A missing label
        (``None``, ``NaN``, pandas' ``pd.NA``) marks an unlabeled point too; with
        ``unlabeled=None`` it is refused.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes seen among the labeled points.
    searches_ : list of sklearn.neighbors.NearestNeighbors
        One search per class, fitted on that class's labeled points.
    labeled_indices_ : ndarray of shape (n_labeled,)
        Rows of the training ``X`` that are labeled.
    n_labeled_ : int
    transduction_ : ndarray of shape (n_samples,)
        The labels of every training point (a labeled point is its own nearest neighbour, so
        with ``n_neighbors=1`` it keeps its label unless a duplicate point has another).
    timings_ : dict
        Seconds of the searches' fit (``"fit"``), of ``transduction_`` and in total.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    sklearn.neighbors.KNeighborsClassifier : The same predictions for ``n_neighbors=1``.
    HarmonicClassifier : Labels propagated along a graph of all points.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(200, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[:10] = y[:10]
    >>> model = NearestNeighborsClassifier().fit(X, y_ssl)
    >>> model.transduction_.shape
    (200,)
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "metric": [str],
        "verbose": ["verbose"],
        **UNLABELED_CONSTRAINT,
    }
    _fit_contract = FitContract(fit_path="nearest-neighbors", expansion=None, memory_budget=False)

    def __init__(self, *, n_neighbors=1, metric="euclidean", verbose=0, unlabeled=-1):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.verbose = verbose
        self.unlabeled = unlabeled

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Index the labeled points of each class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            All training points, labeled and unlabeled (the unlabeled ones get labels in
            ``transduction_``).
        y : array-like of shape (n_samples,)
            Labels; ``unlabeled`` (default -1) marks an unlabeled point.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            No labeled point, or a single labeled class (naming the marker).
        """
        start = time.perf_counter()
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        labeled = np.flatnonzero(targets.labeled)
        codes = targets.codes[labeled]
        self.classes_ = targets.classes
        self.searches_ = []
        for c, label in enumerate(self.classes_):
            rows = labeled[codes == c]
            self.searches_.append(NearestNeighbors(metric=self.metric).fit(X[rows]))
            log(
                f"[{type(self).__name__}] class {label!r}: {rows.size} labeled points indexed",
                self.verbose,
                level=2,
            )
        self.labeled_indices_ = labeled
        self.n_labeled_ = int(labeled.size)
        timings = {"fit": time.perf_counter() - start}
        tic = time.perf_counter()
        self.transduction_ = labels_from_decision(self.classes_, self._decision(X))
        timings["transduction"] = time.perf_counter() - tic
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        log(
            f"[{type(self).__name__}] n={X.shape[0]} labeled={labeled.size} "
            f"classes={self.classes_.size}: {timings['total']:.3f}s",
            self.verbose,
        )
        return self

    def _scores(self, X):
        """``s_c(x)``: minus the mean distance to the ``k`` nearest labeled points of class c."""
        scores = np.empty((X.shape[0], len(self.searches_)))
        for c, search in enumerate(self.searches_):
            k = min(self.n_neighbors, search.n_samples_fit_)
            distances, _ = search.kneighbors(X, n_neighbors=k)
            scores[:, c] = -distances.mean(axis=1)
        return scores

    def _decision(self, X):
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return (scores[:, 1] - scores[:, 0])[:, None]
        return scores

    def decision_function(self, X):
        """Distance margins: how much nearer each point is to one class than to the other.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_classes)
            Two classes: ``d̄₀(x) − d̄₁(x)``, positive means ``classes_[1]``.  More: one column
            per class, minus the mean distance to its ``n_neighbors`` nearest labeled points.
        """
        decision = self._decision(self._check_predict_X(X))
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def predict(self, X):
        """The nearest class of each point (the 1-NN label for ``n_neighbors=1``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        decision = self._decision(self._check_predict_X(X))  # refuses an unfitted model
        return labels_from_decision(self.classes_, decision)

    def _check_predict_X(self, X):
        check_is_fitted(self, "searches_")
        return validate_X(self, X, reset=False)
