"""Exact t-fold semi-supervised cross-validation (paper 004, eq. 2).

Each fold is fitted from scratch: on every point with the fold's labels hidden (transductive) or
on every point outside the fold (inductive); see :class:`~semiscale.model_selection.SSLKFold`.
The graph is built once per training set -- once in total for transductive folds -- and given to
every fit as ``laplacian=``.
"""

from __future__ import annotations

import numpy as np

from ._evaluate import Evaluator, check_error_score, check_input
from ._markers import estimator_marker
from .folds import check_ssl_cv
from .scoring import get_ssl_scorer

__all__ = ["ssl_cross_val_score", "ssl_cross_validate"]


def ssl_cross_validate(
    estimator,
    X,
    y,
    *,
    cv=None,
    scoring=None,
    laplacian=None,
    return_estimator=False,
    error_score=np.nan,
    verbose=0,
    n_jobs=None,
):
    """Cross-validate a semi-supervised estimator on labeled and unlabeled points.

    Parameters
    ----------
    estimator : estimator
        Unfitted; cloned for every fold.  semiscale estimators (a ``graph`` parameter and
        ``fit(X, y, laplacian=None)``) get one graph per training set; others (a scikit-learn
        ``Pipeline`` ending in a semiscale estimator, ...) are fitted plainly, on ``X`` as
        given.  Transductive folds read a pipeline's ``transduction_`` from its final step.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All points, labeled and unlabeled.
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Targets; unlabeled points marked with the estimator's marker (``unlabeled``, default -1,
        for classifiers; NaN for regressors).
    cv : int, SSLKFold, scikit-learn splitter or None, default=None
        None: ``SSLKFold(5, shuffle=False)`` (transductive, the same folds on every call, as
        scikit-learn's ``cv=int``); an int: ``SSLKFold(cv, shuffle=False)``.  A scikit-learn
        splitter or a list of ``(train, test)`` pairs gives inductive folds scored on their test
        rows' labeled points.
    scoring : None, str, callable or SSLScorer, default=None
        See :func:`~semiscale.model_selection.get_ssl_scorer`; None is accuracy (classifiers) or
        R² (regressors) on the held-out labeled points.
    laplacian : sparse matrix of shape (n_samples, n_samples), optional
        A Laplacian of the whole data set, replacing the estimator's graph.  Transductive folds use
        it as is; inductive folds use the Laplacian of the subgraph induced by their training
        points (read as ``D - W`` of its off-diagonal weights, see
        :class:`~semiscale.graph.PrecomputedGraph`).
    return_estimator : bool, default=False
        Keep the fitted estimator of every fold.
    error_score : "raise" or float, default=np.nan
        Score of a fold whose fit fails (with a ``FitFailedWarning``), or "raise".
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    n_jobs : int or None, default=None
        Folds fitted in parallel (joblib, as scikit-learn's ``cross_validate``): None is 1
        unless inside a ``joblib.parallel_config`` context, -1 all cores.  The graph is still
        built once per training set, in the calling process.

    Returns
    -------
    dict
        ``"test_score"``, ``"fit_time"``, ``"score_time"`` : ndarray of shape (n_splits,);
        ``"estimator"`` : list (when ``return_estimator``); ``"n_graph_fits"`` : int, graphs
        built; ``"graph_time"`` : float, seconds spent building them (not in ``fit_time``).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.models import LapRLSClassifier
    >>> from semiscale.model_selection import SSLKFold, ssl_cross_validate
    >>> X, y = make_two_moons(300, random_state=0)
    >>> y_ssl = np.where(np.arange(300) % 10 == 0, y, -1)
    >>> result = ssl_cross_validate(LapRLSClassifier(), X, y_ssl, cv=SSLKFold(3, random_state=0))
    >>> result["n_graph_fits"]
    1
    """
    X, y = check_input(estimator, X, y, laplacian)
    error_score = check_error_score(error_score)
    splitter = check_ssl_cv(cv)
    default_marker = getattr(splitter, "unlabeled", -1)
    scorer = get_ssl_scorer(scoring, unlabeled=default_marker)
    marker = estimator_marker(estimator, default_marker)
    folds = list(splitter.split_ssl(X, y, unlabeled=marker))
    evaluator = Evaluator(
        estimator,
        X,
        y,
        laplacian=laplacian,
        error_score=error_score,
        verbose=verbose,
        name="ssl_cross_validate",
        default_marker=default_marker,
        n_jobs=n_jobs,
    )
    results = evaluator.run([{}], folds, scorer, keep_estimators=return_estimator)
    out = {
        "test_score": results.scores[0],
        "fit_time": results.fit_times[0],
        "score_time": results.score_times[0],
        "n_graph_fits": evaluator.n_graph_fits,
        "graph_time": evaluator.graph_time,
    }
    if return_estimator:
        out["estimator"] = results.estimators[0]
    return out


def ssl_cross_val_score(
    estimator,
    X,
    y,
    *,
    cv=None,
    scoring=None,
    laplacian=None,
    error_score=np.nan,
    verbose=0,
    n_jobs=None,
):
    """Scores of semi-supervised cross-validation, one per fold.

    Same arguments as :func:`ssl_cross_validate`.

    Returns
    -------
    ndarray of shape (n_splits,)

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import LapRLSClassifier
    >>> from semiscale.model_selection import SSLKFold, ssl_cross_val_score
    >>> X, y = make_two_moons(300, random_state=0)
    >>> y_ssl = np.where(np.arange(300) % 10 == 0, y, -1)
    >>> model = LapRLSClassifier(kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...                          ambient_reg=1e-6, intrinsic_reg=100.0)
    >>> ssl_cross_val_score(model, X, y_ssl, cv=SSLKFold(3, random_state=0))
    array([1., 1., 1.])
    """
    return ssl_cross_validate(
        estimator,
        X,
        y,
        cv=cv,
        scoring=scoring,
        laplacian=laplacian,
        error_score=error_score,
        verbose=verbose,
        n_jobs=n_jobs,
    )["test_score"]
