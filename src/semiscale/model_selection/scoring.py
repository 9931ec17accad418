"""Scorers that evaluate on labeled rows only (DESIGN.md §3, "Scoring").

In semi-supervised data ``y`` marks unlabeled points (``-1`` for classes, ``NaN`` for regression
targets).  A plain scikit-learn scorer given such a ``y`` compares predictions with the marker:
on two moons with 10 % labels ``cross_val_score`` returned about 0.1 for a model whose accuracy
is 1.0.  The scorers here drop the unlabeled rows first and score the rest with the wrapped
scikit-learn scorer, so they can be given as ``scoring=`` to scikit-learn's ``GridSearchCV`` and
``cross_val_score`` as well as to semiscale's own functions.

The unlabeled marker is the scored estimator's: NaN for regressors, the ``unlabeled`` parameter
for classifiers that have one (every semiscale classifier), and the scorer's own ``unlabeled``
for other classifiers.  NaN rows are never scored.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier
from sklearn.metrics import get_scorer, make_scorer
from sklearn.utils import _safe_indexing

from ._markers import estimator_marker, labeled_mask
from ._pipelines import transduction_of

__all__ = ["SSLScorer", "get_ssl_scorer", "make_ssl_scorer"]


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


class _TransductionView:
    """The estimator as seen by a scorer of its transductive predictions on ``rows``.

    ``predict`` returns ``transduction[rows]`` (the labels the fit inferred for those training
    points: :func:`~._pipelines.transduction_of`); every other attribute --
    ``decision_function``, ``predict_proba``, ``classes_``, the estimator tags -- is the
    estimator's own, evaluated on the rows' features.  For kernel expansions such as LapRLS
    those equal the transductive values: the fitted function evaluated at a training point.
    """

    def __init__(self, estimator, transduction, rows):
        self._estimator = estimator
        self._transduction = transduction
        self._rows = rows

    def predict(self, X):
        if _n_rows(X) != self._rows.size:
            raise ValueError(
                f"the transductive predictions cover {self._rows.size} rows, got {_n_rows(X)}"
            )
        return self._transduction[self._rows]

    def __getattr__(self, name):
        return getattr(self._estimator, name)


class SSLScorer:
    """A scorer ``scorer(estimator, X, y)`` evaluated on the labeled rows of ``y`` only.

    Build one with :func:`make_ssl_scorer` or :func:`get_ssl_scorer`.

    Parameters
    ----------
    scorer : callable or None
        A scikit-learn scorer ``scorer(estimator, X, y)``.  None: the estimator's natural score,
        accuracy for classifiers and R² for regressors.
    unlabeled : scalar, default=-1
        Marker of unlabeled points for classifiers without an ``unlabeled`` parameter.
    name : str or None
        Shown by ``repr``.
    """

    def __init__(self, scorer, *, unlabeled=-1, name=None):
        self.scorer = scorer
        self.unlabeled = unlabeled
        self.name = name

    def __repr__(self):
        inner = self.name if self.name is not None else repr(self.scorer)
        return f"SSLScorer({inner}, unlabeled={self.unlabeled!r})"

    def _inner(self, estimator):
        if self.scorer is not None:
            return self.scorer
        return get_scorer("accuracy" if is_classifier(estimator) else "r2")

    def _labeled(self, estimator, y_true):
        y_true = np.asarray(y_true)
        mask = labeled_mask(y_true, estimator_marker(estimator, self.unlabeled))
        if not mask.any():
            raise ValueError(
                f"none of the {y_true.shape[0]} rows to score is labeled (every target is the "
                "unlabeled marker), so there is nothing to score; use SSLKFold, whose test "
                "folds always hold labeled points"
            )
        labels = y_true[mask]
        if labels.dtype == object:
            # the present labels in their own dtype (integers beside pd.NA or None were objects,
            # which scikit-learn's metrics call an "unknown" type of target)
            labels = np.asarray(labels.tolist())
        return labels, mask

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        """Score ``estimator`` on the labeled rows of ``(X, y_true)``.

        Parameters
        ----------
        estimator : fitted estimator
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y_true : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets with unlabeled points marked.
        sample_weight : array-like of shape (n_samples,), optional
            Subset like the rows.
        **kwargs
            Passed to the wrapped scorer.

        Returns
        -------
        float
            The wrapped scorer's value on the labeled rows (greater is better).

        Raises
        ------
        ValueError
            When no row is labeled.
        """
        labels, mask = self._labeled(estimator, y_true)
        if sample_weight is not None:
            kwargs["sample_weight"] = np.asarray(sample_weight)[mask]
        X_labeled = _safe_indexing(X, np.flatnonzero(mask))
        return float(self._inner(estimator)(estimator, X_labeled, labels, **kwargs))

    def score_transduction(self, estimator, X, y_true, rows, **kwargs):
        """Score the transductive predictions ``estimator.transduction_[rows]``.

        Parameters
        ----------
        estimator : fitted estimator with ``transduction_``
            Fitted on all rows of ``X`` (the rows' labels hidden); a pipeline whose final step
            has ``transduction_`` is read through that step.
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The training points the estimator was fitted on.
        y_true : array-like of shape (n_samples,) or (n_samples, n_targets)
            The true targets of all training points (unlabeled ones marked).
        rows : array-like of int
            The rows to score (their unlabeled ones are skipped).
        **kwargs
            Passed to the wrapped scorer.

        Returns
        -------
        float

        Raises
        ------
        NoTransductionError
            A ``TypeError``: neither the estimator nor a pipeline's final step has
            ``transduction_`` (the message names the fix, inductive folds).
        """
        transduction = transduction_of(estimator, _n_rows(X))
        rows = np.asarray(rows)
        labels, mask = self._labeled(estimator, np.asarray(y_true)[rows])
        rows = rows[mask]
        view = _TransductionView(estimator, transduction, rows)
        inner = self._inner(estimator)
        return float(inner(view, _safe_indexing(X, rows), labels, **kwargs))


def make_ssl_scorer(
    score_func,
    *,
    greater_is_better=True,
    unlabeled=-1,
    response_method="predict",
    **kwargs,
):
    """Make a scorer that evaluates ``score_func`` on labeled rows only.

    The semi-supervised counterpart of :func:`sklearn.metrics.make_scorer`.

    Parameters
    ----------
    score_func : callable or str
        A metric ``score_func(y_true, y_pred, **kwargs)`` such as
        :func:`sklearn.metrics.accuracy_score`, or a scikit-learn scoring name
        (``"accuracy"``, ``"neg_root_mean_squared_error"``, ...).
    greater_is_better : bool, default=True
        False for a loss: the scorer returns its negative, so that greater is always better.
        Must stay True with a scoring name (names carry their sign, e.g. ``"neg_..."``).
    unlabeled : scalar, default=-1
        Marker of unlabeled points for classifiers without an ``unlabeled`` parameter
        (semiscale's classifiers use their own; regressors use NaN).
    response_method : str, default="predict"
        Estimator method whose output is scored (``"decision_function"`` or
        ``"predict_proba"`` for ranking metrics).
    **kwargs
        Extra arguments of ``score_func``.

    Returns
    -------
    SSLScorer

    Examples
    --------
    A scikit-learn dummy model that predicts class 0 everywhere, scored on rows of which the
    last two are unlabeled (-1): only the four labeled rows count.

    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from sklearn.metrics import balanced_accuracy_score
    >>> from semiscale.model_selection import make_ssl_scorer
    >>> scorer = make_ssl_scorer(balanced_accuracy_score)
    >>> X = np.zeros((6, 1))
    >>> model = DummyClassifier(strategy="constant", constant=0).fit(X, [0, 0, 0, 1, 1, 1])
    >>> float(scorer(model, X, np.array([0, 0, 0, 1, -1, -1])))     # classes 0 and 1: 1.0, 0.0
    0.5
    """
    if isinstance(score_func, str):
        if kwargs or greater_is_better is not True or response_method != "predict":
            raise ValueError(
                f"score_func={score_func!r} is a scoring name, which fixes its own sign, "
                "response method and arguments; pass a metric function to set "
                "greater_is_better, response_method or keyword arguments"
            )
        return get_ssl_scorer(score_func, unlabeled=unlabeled)
    if not callable(score_func):
        raise ValueError(
            f"score_func must be a metric function or a scoring name, got {score_func!r}"
        )
    scorer = make_scorer(
        score_func,
        greater_is_better=greater_is_better,
        response_method=response_method,
        **kwargs,
    )
    return SSLScorer(scorer, unlabeled=unlabeled, name=getattr(score_func, "__name__", None))


def get_ssl_scorer(scoring=None, *, unlabeled=-1):
    """Return a scorer on labeled rows only for ``scoring``.

    Parameters
    ----------
    scoring : None, str, callable or SSLScorer, default=None
        None: accuracy for classifiers, R² for regressors (decided when called).  A str: a
        scikit-learn scoring name (``sklearn.metrics.get_scorer_names()``).  A callable: a
        scorer ``scorer(estimator, X, y)``, which is then given the labeled rows only.  An
        :class:`SSLScorer` is returned unchanged.
    unlabeled : scalar, default=-1
        Marker of unlabeled points for classifiers without an ``unlabeled`` parameter.

    Returns
    -------
    SSLScorer

    Raises
    ------
    ValueError
        An unknown scoring name, or several metrics (a list or dict), which are not supported.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyClassifier
    >>> from semiscale.model_selection import get_ssl_scorer
    >>> X = np.zeros((4, 1))
    >>> model = DummyClassifier(strategy="constant", constant=1).fit(X, [0, 1, 1, 1])
    >>> y = np.array([1, 1, 0, -1])                       # the last row is unlabeled
    >>> float(get_ssl_scorer()(model, X, y))              # accuracy on the 3 labeled rows
    0.6666666666666666
    >>> get_ssl_scorer("neg_mean_squared_error")
    SSLScorer('neg_mean_squared_error', unlabeled=-1)
    """
    if isinstance(scoring, SSLScorer):
        return scoring
    if scoring is None:
        return SSLScorer(None, unlabeled=unlabeled, name="score")
    if isinstance(scoring, str):
        try:
            inner = get_scorer(scoring)
        except ValueError:
            raise ValueError(
                f"scoring={scoring!r} is not a scikit-learn scoring name; see "
                "sklearn.metrics.get_scorer_names() or pass make_ssl_scorer(metric)"
            ) from None
        return SSLScorer(inner, unlabeled=unlabeled, name=repr(scoring))
    if callable(scoring):
        return SSLScorer(scoring, unlabeled=unlabeled)
    raise ValueError(
        f"scoring must be None, a scoring name or a scorer callable, got {scoring!r}; several "
        "metrics at once are not supported"
    )
