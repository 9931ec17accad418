r"""Approximate t-fold cross-validation from one fit: the Bouligand influence function (paper 004).

Exact t-fold CV refits the estimator t times.  Paper 004 fits once on all the data and predicts
each fold's held-out labels with the first-order expansion of the fold-out fit, its eq. (4),

.. math::

    f_{\mathcal S \setminus \mathcal S_i}(x_j) ≈ f_{\mathcal S}(x_j) + \frac{B_{ji}}{1 - t},

where column i of the BIF matrix B (Theorem 1) is a solve with the fit's Hessian.  Here that
term is computed as one Newton step from the full fit, with the full fit's Hessian, on the
objective the estimator would minimise without the fold (:mod:`semiscale.solvers.influence`):
the fold's labeled points lose their loss term (and, for inductive folds, its points leave the
graph: the subgraph induced on the training points), the loss weights, the ``"auto"``
``intrinsic_reg`` and the zero-mean class targets are those of the fold's labels, and the
classifier's centring and labeled-prior steps are repeated on the approximate fit.  The step
uses the full fit's Hessian (``step="bif"``, the paper's first order) or each fold-out
objective's own (``step="newton"``), which makes it exact for the squared loss; for the
smoothed hinges ``step="newton"`` iterates to the fold-out minimiser in the Hessian's span
(:func:`~semiscale.solvers.influence.nystrom_newton_fold_out`).

``hessian="nystrom"`` (default, paper 004 §4) replaces the ``n × n`` Hessian by the Nyström one
on ``c`` columns: the labeled points (so that the loss term is exact, as the paper's
block-diagonal ``T``) plus ``n_columns`` points drawn uniformly from the others (paper: ``c =
√n``).  One evaluation costs O(n c² + c³ + t n c) after the fit.  ``hessian="exact"`` solves
with the dense Hessian (O(n³)): the reference on small data.  A model fitted on Nyström centers
(:class:`~semiscale.models.NystromLapRLSClassifier`, ...) is approximated on its own centers,
which is its exact step.

What the first order cannot see: a data-dependent kernel width (``gamma="median"``) is the one
resolved on all points, and inductive folds use the induced subgraph where exact CV without a
``laplacian=`` rebuilds a kNN graph on the training points.

What this module reads of an estimator is declared: its class's
:class:`~semiscale.models._contract.FitContract` (``approximate_cv``, the solvers it covers,
early stopping, label diffusion, the span of its expansion) before the fit, and the fit's
:class:`~semiscale.models._fit_state.FitState` after it, whose
:class:`~semiscale.models._contract.FitRules` give the targets, centring and labeled prior
each fold-out fit repeats.
"""

from __future__ import annotations

import contextlib
import numbers
from functools import partial

import numpy as np
from sklearn import config_context
from sklearn.base import clone, is_classifier
from sklearn.metrics import get_scorer
from sklearn.utils import _safe_indexing

from .._random import check_random_state
from .._validation import check_X
from ..linalg.ops import get_ops
from ..losses import get_loss
from ..models._contract import fit_contract, fit_rules, formulation_of, labels_from_decision
from ..models._fit_state import centring_offset, fit_with_state, labeled_prior
from ..solvers.exact import check_dense_fits, keeping_factor
from ..solvers.influence import (
    HessianSpec,
    curvature_weights,
    exact_fold_out,
    fit_hessian,
    nystrom_fold_out,
    nystrom_newton_fold_out,
)
from ._fold_objectives import build_folds, check_folds
from ._markers import estimator_marker, hide_labels, labeled_mask
from .folds import check_ssl_cv

__all__ = ["HESSIANS", "STEPS", "bif_cross_val_predict", "bif_cross_val_score", "supports_bif"]

#: How the Hessian is inverted ("auto": :func:`resolve_hessian`).
HESSIANS = ("auto", "nystrom", "exact")
#: Which Hessian: the full fit's (paper 004's first-order BIF) or each fold-out objective's.
STEPS = ("bif", "newton")
#: Newton iterations per fold-out objective at most (``step="newton"``, non-quadratic losses).
MAX_NEWTON_STEPS = 20


def supports_bif(estimator) -> bool:
    """True for estimators whose fit the BIF can expand: semiscale's manifold regularizers.

    Those whose :class:`~semiscale.models._contract.FitContract` declares ``approximate_cv``
    (a fit through ``ManifoldMixin`` with a smooth loss: LapRLS, primal LapSVM with the
    squared or Huber hinge, and their Nyström variants), with a ``formulation`` it covers.
    """
    contract = fit_contract(estimator)
    if contract is None or not contract.approximate_cv:
        return False
    formulations = contract.approximate_cv_formulations
    return formulations is None or formulation_of(estimator) in formulations


def _check_estimator(estimator):
    contract = fit_contract(estimator)
    if not supports_bif(estimator):
        formulations = None if contract is None else contract.approximate_cv_formulations
        # exact CV fits every fold, so it takes any estimator
        fix = (
            "; cross-validate it exactly instead: ssl_cross_validate, SSLGridSearchCV or "
            "BIFSearchCV(method='exact')"
        )
        if formulations is not None and contract.approximate_cv:
            fix = (
                f" with formulation={formulation_of(estimator)!r}: use "
                f"formulation={formulations[0]!r}"
            )
        raise TypeError(
            f"approximate CV needs a semiscale manifold-regularization estimator with a smooth "
            f"loss (LapRLSClassifier, LapRLSRegressor, LapSVC(formulation='primal'), their Nyström "
            f"variants); got {type(estimator).__name__}{fix}"
        )
    if contract.early_stopping and estimator.early_stopping:
        raise ValueError(
            "approximate CV expands around the minimiser of the fit's objective, and "
            f"early_stopping=True stops {type(estimator).__name__}'s Newton iteration before "
            "it: use early_stopping=False (or method='exact' for exact CV)"
        )
    if contract.label_diffusion and estimator.label_diffusion:
        raise ValueError(
            f"approximate CV's influence of a labeled point is that of its own prediction, and "
            f"{type(estimator).__name__}(label_diffusion={estimator.label_diffusion}) compares "
            "each label with a random-walk average around its point instead: use "
            "label_diffusion=0 (or method='exact' for exact CV)"
        )


def wants_factor(hessian, step, n, ssl_folds, estimator, n_labeled) -> bool:
    """Whether the influence step may use the fit's LU: keeping it costs a copy of K and one
    more ``n × n`` array during the fit, for nothing when the Nyström Hessian will serve
    (:func:`resolve_hessian`)."""
    if hessian != "auto":
        return hessian == "exact"
    if n <= AUTO_EXACT_PER_FOLD:
        return True
    transductive = all(np.asarray(fold.fit_rows).size == n for fold in ssl_folds)
    rows = _woodbury_rows(step, fit_rules(estimator).loss, n_labeled)
    affordable = AUTO_WOODBURY_SHARE * rows <= n
    return n <= AUTO_EXACT_SHARED and affordable and (step == "bif" or transductive)


def fit_keeping_state(estimator, X, y, laplacian=None, fit=None, keep_factor=True):
    """Fit a clone of ``estimator`` keeping its :class:`~semiscale.models._base.FitState`.

    ``fit(est)`` replaces ``est.fit(X, y, laplacian=laplacian)`` (the search's shared graph).
    Returns the fitted estimator, the state, which is removed from the estimator, and the LU
    the exact solver factored (:class:`~semiscale.solvers.exact.KeptFactor`, None when the fit
    had none to keep or ``keep_factor`` is False): the exact influence step reuses it.
    """
    est = clone(estimator)
    if fit is None:

        def fit(est):
            est.fit(X, y, laplacian=laplacian)

    with keeping_factor() if keep_factor else contextlib.nullcontext([]) as kept:
        state = fit_with_state(est, fit)
    if state is None:
        raise TypeError(f"{type(estimator).__name__}.fit did not keep its fit state")
    factor = kept[0] if kept else None
    if factor is not None and factor.K.shape[0] != state.decision.shape[0]:
        factor = None  # a factor of another span (the labeled rows' RLS)
    return est, state, factor


def _gradient(loss, g, targets, labeled, weight, laplacian, lambda_intrinsic):
    """The value-space gradient ``u(g) = w ∘ ℓ'(y, g) + 2 λ_I L g`` of one objective."""
    rows = np.asarray(labeled, dtype=bool)[:, None]
    u = np.where(rows, weight * loss.derivative(targets, g), 0.0)
    if laplacian is not None and lambda_intrinsic > 0:
        u = u + 2.0 * lambda_intrinsic * get_ops().sparse_matmul(laplacian, g)
    return u


def _gradient_changes(problem, decision, folds):
    """``Δu_i = u_i(g) − u(g)`` of every fold, shape (n, r, t)."""
    loss, g = get_loss(problem.loss), decision
    u_full = _gradient(
        loss, g, problem.targets, problem.labeled, 1.0, problem.laplacian, problem.lambda_intrinsic
    )
    out = np.empty((*g.shape, len(folds)))
    for i, fold in enumerate(folds):
        u = _gradient(
            loss, g, fold.targets, fold.labeled, fold.weight, fold.laplacian, fold.lambda_intrinsic
        )
        out[:, :, i] = u - u_full
    return out


def _columns(state, X, n_columns, random_state):
    """Nyström columns: a Nyström model's own centers, else labeled points + sampled others."""
    X_fit = state.solution.X_fit
    if X_fit is not None and X_fit.shape[0] < X.shape[0]:
        return X_fit
    n = X.shape[0]
    labeled = np.flatnonzero(state.problem.labeled)
    others = np.setdiff1d(np.arange(n), labeled)
    c = int(np.ceil(np.sqrt(n))) if check_n_columns(n_columns) == "sqrt" else int(n_columns)
    rng = check_random_state(random_state)
    picked = rng.choice(others, size=min(c, others.size), replace=False)
    return _safe_indexing(X, np.sort(np.concatenate([labeled, picked])))


def _fold_hessian(problem, g, fold):
    """The Hessian of the fold-out objective at the full fit (``step="newton"``)."""
    weights = curvature_weights(problem.loss, fold.targets, fold.labeled, g, fold.weight)
    return HessianSpec(weights, fold.lambda_intrinsic, fold.laplacian)


#: ``hessian="auto"``: the exact Hessian up to this many training points when the fit's LU
#: serves every fold (paper 004's step; the squared loss's Newton step on transductive folds)
#: and its Woodbury rows are affordable (:data:`AUTO_WOODBURY_SHARE`), and up to
#: :data:`AUTO_EXACT_PER_FOLD` points when each fold's Hessian needs an LU of its own.
AUTO_EXACT_SHARED = 4000
#: See :data:`AUTO_EXACT_SHARED`.
AUTO_EXACT_PER_FOLD = 500
#: The shared LU's Woodbury correction on s rows costs 2n²s (``G = F⁻¹E_S``); ``"auto"`` takes
#: it when ``s <= n / 12``, a quarter of the fit's ⅔n³ LU.  Chosen by measurement (LapRLS on
#: abalone, 1,000 points, 100 labeled, 10 transductive folds): the correction on the 100 rows
#: costs about a fit more per grid point, t-CV / t-BIF 5.1x with it against 7.2x with the
#: Nyström step; see ``benchmarks/results/bif_newton/``.
AUTO_WOODBURY_SHARE = 12


def _woodbury_rows(step, loss, n_labeled) -> int:
    """Rows of the shared LU's Woodbury correction at most: none for paper 004's step on the
    squared loss (the fit's own Hessian), the labeled rows otherwise."""
    return 0 if step == "bif" and get_loss(loss).quadratic else n_labeled


def _factor_serves_folds(state, factor, folds, step):
    """Whether the fit's kept LU covers every fold's Hessian (:mod:`..solvers.influence`)."""
    problem = state.problem
    if factor is None:
        return False
    if step == "bif":
        return True
    if not get_loss(problem.loss).quadratic:
        return False  # each fold's Newton iterations have Hessians of their own
    return all(
        fold.laplacian is problem.laplacian
        and np.isclose(fold.lambda_intrinsic, problem.lambda_intrinsic, rtol=1e-12, atol=0.0)
        for fold in folds
    )


def resolve_hessian(hessian, state, factor, folds, step, n):
    """``hessian``, with ``"auto"`` resolved to ``"exact"`` or ``"nystrom"``.

    ``"auto"`` takes the exact Hessian where it costs little beside the fit: up to
    :data:`AUTO_EXACT_SHARED` (4,000) points when the fit's own LU serves every fold and its
    Woodbury correction is cheap (O(n² l) for l labeled points: l at most n / 12, or none for
    paper 004's step on the squared loss; K and the LU are the fit's, 2 × 128 MB at 4,000
    points), and up to :data:`AUTO_EXACT_PER_FOLD` (500) points when every fold
    needs an LU of its own (inductive folds, the hinges' Newton iterations), where t LUs cost
    about t fits.  The Nyström Hessian beyond, and for models fitted on Nyström centers (their
    centers give their exact step).
    """
    if hessian != "auto":
        return hessian
    X_fit = state.solution.X_fit
    if X_fit is not None and X_fit.shape[0] < n:
        return "nystrom"
    try:
        check_dense_fits(n + 1, state.problem.memory_budget, 4, "the exact BIF Hessian")
    except ValueError:  # MemoryBudgetError: the exact Hessian does not fit the budget
        return "nystrom"
    if n <= AUTO_EXACT_PER_FOLD:
        return "exact"
    rows = _woodbury_rows(step, state.problem.loss, int(np.sum(state.problem.labeled)))
    affordable = AUTO_WOODBURY_SHARE * rows <= n
    if n <= AUTO_EXACT_SHARED and affordable and _factor_serves_folds(state, factor, folds, step):
        return "exact"
    return "nystrom"


def _fold_decisions(
    est,
    state,
    X,
    folds,
    hessian,
    step,
    n_columns,
    random_state,
    max_newton_steps=MAX_NEWTON_STEPS,
    factor=None,
):
    """The approximate fold-out decisions, post-processed like ``fit`` does, per fold."""
    problem, g = state.problem, state.decision
    loss = get_loss(problem.loss)
    X_fit = state.solution.X_fit
    hessian = resolve_hessian(hessian, state, factor, folds, step, X.shape[0])
    exact_span = hessian == "exact" and (X_fit is None or X_fit.shape[0] == X.shape[0])
    if step == "newton" and max_newton_steps > 1 and not loss.quadratic:
        # Newton iterations on each fold-out objective, in the span of the Hessian's columns
        if exact_span:
            check_dense_fits(X.shape[0] + 1, problem.memory_budget, 4, "the exact BIF Hessian")
        columns = problem.X if exact_span else _columns(state, X, n_columns, random_state)
        full_gradient = _gradient(
            loss,
            g,
            problem.targets,
            problem.labeled,
            1.0,
            problem.laplacian,
            problem.lambda_intrinsic,
        )
        delta_g, _ = nystrom_newton_fold_out(
            problem, g, full_gradient, folds, columns, max_steps=max_newton_steps
        )
    else:
        delta_u = _gradient_changes(problem, g, folds)
        if step == "bif":
            specs, spec_of_fold = [fit_hessian(problem, g)], [0] * len(folds)
        else:
            specs = [_fold_hessian(problem, g, fold) for fold in folds]
            spec_of_fold = list(range(len(folds)))
        if exact_span:
            delta_g = exact_fold_out(problem, delta_u, specs, spec_of_fold, factor)
        else:
            columns = _columns(state, X, n_columns, random_state)
            delta_g = nystrom_fold_out(problem, delta_u, specs, spec_of_fold, columns)
    classifier = is_classifier(est)
    rules = state.rules
    # the full fit's choice, as the estimator's fit makes it from its resolved weight
    adds_prior = classifier and rules.adds_labeled_prior(est.intrinsic_reg_)
    out = []
    for i, fold in enumerate(folds):
        g_i = g + delta_g[:, :, i]
        if classifier and fold.laplacian is not None and rules.centres(fold.lambda_intrinsic):
            g_i = g_i - centring_offset(g_i, fold.laplacian, fold.fit_rows)
        if adds_prior:
            alpha, shift = labeled_prior(
                g_i,
                fold.targets,
                fold.codes,
                np.flatnonzero(fold.labeled),
                len(est.classes_),
                plus_minus=rules.plus_minus,
            )
            g_i = alpha * g_i + shift
        out.append(g_i)
    return out


def bif_cross_val_predict(
    estimator,
    X,
    y,
    *,
    cv=None,
    laplacian=None,
    hessian="auto",
    step="newton",
    n_columns="sqrt",
    method="predict",
    random_state=None,
    max_newton_steps=MAX_NEWTON_STEPS,
):
    """Held-out predictions of t-fold CV approximated from one fit (paper 004's t-BIF, eq. 6).

    Parameters
    ----------
    estimator : estimator
        Unfitted semiscale manifold regularizer (:func:`supports_bif`); cloned and fitted once.
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Targets with unlabeled points marked (the estimator's ``unlabeled``, or NaN).
    cv : int, SSLKFold or None, default=None
        As :func:`~semiscale.model_selection.ssl_cross_validate` (None: 5 transductive folds).
    laplacian : sparse matrix, optional
        A Laplacian of the whole data set, replacing the estimator's graph.
    hessian : {"auto", "nystrom", "exact"}, default="auto"
        ``"nystrom"``: the Nyström Hessian on the labeled points plus ``n_columns`` sampled
        ones (paper 004 §4), O(n c²) per Hessian.  ``"exact"``: the dense one, by the fit's own
        LU where it serves (paper 004's step; the squared loss's Newton step on transductive
        folds: Woodbury on the labeled rows, O(n² l)), else one O(n³) LU per fold.
        ``"auto"``: exact where that is cheap beside the fit, Nyström beyond
        (:func:`resolve_hessian`).
    step : {"newton", "bif"}, default="newton"
        ``"newton"``: Newton with each fold-out objective's own Hessian (one factorization per
        fold and iteration): one step, exact for the squared loss up to the Hessian's
        approximation; iterated for the smoothed hinges (``max_newton_steps``).  ``"bif"``:
        paper 004's first-order step, with the full fit's Hessian (one factorization for all
        folds); it cannot see a labeled point's influence on itself, so it scores fits that
        reproduce their labels too well: on paper 004's protocol it chooses the narrowest
        kernel and the smallest ``intrinsic_reg`` of the grid in all 82 searches, exact CV in
        12 of 82 (``benchmarks/results/paper004/``; the Newton step's choices in
        ``benchmarks/results/bif_newton/``).
    n_columns : "sqrt" or int, default="sqrt"
        Sampled columns besides the labeled points; ``"sqrt"``: ``ceil(√n)``.
    method : {"predict", "decision_function"}, default="predict"
    random_state : int, RandomState, Generator or None, default=None
        Seeds the sampled columns.
    max_newton_steps : int, default=20
        ``step="newton"`` with a loss that is not the square (the smoothed hinges): Newton
        iterations on each fold-out objective, in the span of the Hessian's columns, with a
        backtracking line search, until the loss's zones repeat (the piecewise-quadratic
        objective's minimiser in that span) or this many; 1 is the single Newton step.  The
        squared loss takes one step, which is exact.

    Returns
    -------
    ndarray
        ``method="predict"``: shape (n_samples,), the approximate held-out prediction of every
        test row and the unlabeled marker (NaN for regressors) elsewhere.
        ``"decision_function"``: shape (n_samples, n_outputs), NaN off the test rows.
    """
    if method not in ("predict", "decision_function"):
        raise ValueError(f"method must be 'predict' or 'decision_function', got {method!r}")
    est, pairs, marker = _bif_run(
        estimator, X, y, cv, laplacian, hessian, step, n_columns, random_state, max_newton_steps
    )
    n, r = pairs[0][1].shape
    if method == "predict" and is_classifier(est):
        out = hide_labels(np.asarray(y).reshape(n), np.arange(n), marker)
        for rows, dec in pairs:
            out[rows] = labels_from_decision(est.classes_, dec[rows])
        return out
    out = np.full((n, r), np.nan)
    for rows, dec in pairs:
        out[rows] = dec[rows]
    if method == "predict" and r == 1 and np.ndim(y) == 1:
        return out[:, 0]
    return out


def check_n_columns(n_columns):
    """``n_columns`` if it is "sqrt" or an int >= 0, else a ValueError."""
    if isinstance(n_columns, str) and n_columns == "sqrt":
        return n_columns
    integral = isinstance(n_columns, numbers.Integral) and not isinstance(n_columns, bool)
    if integral and n_columns >= 0:
        return n_columns
    raise ValueError(
        f"n_columns must be 'sqrt' or an int >= 0 (Nyström columns besides the labeled "
        f"points), got {n_columns!r}"
    )


def _check_options(hessian, step, n_columns="sqrt", max_newton_steps=1):
    if hessian not in HESSIANS:
        raise ValueError(f"hessian must be one of {HESSIANS}, got {hessian!r}")
    if step not in STEPS:
        raise ValueError(f"step must be one of {STEPS}, got {step!r}")
    check_n_columns(n_columns)
    if (
        isinstance(max_newton_steps, bool)
        or not isinstance(max_newton_steps, numbers.Integral)
        or max_newton_steps < 1
    ):
        raise ValueError(
            f"max_newton_steps must be an int >= 1 (1: one Newton step per fold), got "
            f"{max_newton_steps!r}"
        )


def approximate_folds(
    est,
    state,
    X,
    y,
    ssl_folds,
    marker,
    hessian,
    step,
    n_columns,
    seed,
    laplacian=None,
    graph=None,
    max_newton_steps=MAX_NEWTON_STEPS,
    factor=None,
):
    """Fold-out decisions of a fitted estimator (its kept ``state``) on ``ssl_folds``.

    ``laplacian`` is the one given to ``fit`` (None when the estimator built its graph) and
    ``graph`` the fitted graph object the fit's Laplacian came from when not ``est.graph_``
    (a search's shared graph): inductive folds take their subgraphs from it.  ``factor`` is
    the fit's kept LU (:func:`fit_keeping_state`).

    Returns
    -------
    list of (test_rows, decision) pairs
        Per fold, its held-out rows and the approximate fold-out decision on all n rows.
    """
    folds = build_folds(est, state, X, y, ssl_folds, marker, laplacian, graph)
    decisions = _fold_decisions(
        est, state, X, folds, hessian, step, n_columns, seed, max_newton_steps, factor
    )
    return [(fold.test_rows, dec) for fold, dec in zip(folds, decisions)]


def _bif_run(
    estimator, X, y, cv, laplacian, hessian, step, n_columns, random_state, max_newton_steps
):
    _check_estimator(estimator)
    _check_options(hessian, step, n_columns, max_newton_steps)
    X = check_X(X)
    y = np.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y has {y.shape[0]} rows but X has {X.shape[0]} samples")
    splitter = check_ssl_cv(cv)
    marker = estimator_marker(estimator, getattr(splitter, "unlabeled", -1))
    ssl_folds = list(splitter.split_ssl(X, y, unlabeled=marker))
    check_folds(estimator, X, y, ssl_folds, marker, hessian, laplacian)
    n_labeled = int(labeled_mask(y, marker).sum())
    keep = wants_factor(hessian, step, X.shape[0], ssl_folds, estimator, n_labeled)
    est, state, factor = fit_keeping_state(estimator, X, y, laplacian, keep_factor=keep)
    pairs = approximate_folds(
        est,
        state,
        X,
        y,
        ssl_folds,
        marker,
        hessian,
        step,
        n_columns,
        random_state,
        laplacian,
        max_newton_steps=max_newton_steps,
        factor=factor,
    )
    return est, pairs, marker


def fold_scores(est, y, pairs, score, marker):
    """``score(truth, prediction)`` on each fold's held-out labeled rows."""
    y = np.asarray(y)
    scores = []
    # the inputs are the search's own arrays: scikit-learn's checks of a metric's arguments
    # cost ~3 ms a call, more than a fold's whole influence step at 1,000 points
    with config_context(skip_parameter_validation=True):
        return _fold_scores(est, y, pairs, score, marker, scores)


def _fold_scores(est, y, pairs, score, marker, scores):
    for rows, dec in pairs:
        rows = rows[labeled_mask(y[rows], marker)]  # a splitter's test rows may be unlabeled
        if is_classifier(est):
            pred, truth = labels_from_decision(est.classes_, dec[rows]), y[rows]
        else:
            pred = dec[rows][:, 0] if dec.shape[1] == 1 else dec[rows]
            truth = np.asarray(y, dtype=np.float64)[rows]
        scores.append(score(truth, pred))
    return np.asarray(scores, dtype=np.float64)


def score_function(scoring, classifier):
    if scoring is None:
        scoring = "accuracy" if classifier else "r2"
    if not isinstance(scoring, str):
        raise ValueError(
            f"scoring must be None or the name of a scikit-learn scorer that reads predict "
            f"(e.g. 'accuracy', 'r2', 'neg_mean_squared_error'); got {scoring!r}"
        )
    scorer = get_scorer(scoring)
    if getattr(scorer, "_response_method", "predict") != "predict":
        raise ValueError(
            f"scoring={scoring!r} needs {scorer._response_method!r}; approximate CV gives "
            f"predictions only: use a scorer of predictions such as 'accuracy' or 'r2'"
        )
    # a partial of a module-level function, not a lambda: a fitted BIFSearchCV keeps it and
    # must pickle (tests/test_common.py)
    return partial(_signed_score, scorer)


def _signed_score(scorer, y_true, y_pred):
    """``scorer``'s score of predictions (greater is better, as scikit-learn's scorers)."""
    return scorer._sign * scorer._score_func(y_true, y_pred, **scorer._kwargs)


def bif_cross_val_score(
    estimator,
    X,
    y,
    *,
    cv=None,
    scoring=None,
    laplacian=None,
    hessian="auto",
    step="newton",
    n_columns="sqrt",
    random_state=None,
    max_newton_steps=MAX_NEWTON_STEPS,
):
    """Per-fold scores of t-fold CV approximated from one fit (t-BIF; paper 004 eq. 6).

    Same arguments as :func:`bif_cross_val_predict`, plus ``scoring``: None (accuracy for
    classifiers, R² for regressors, on each fold's held-out labeled points) or the name of a
    scikit-learn scorer of predictions (paper 004's 0-1 loss is ``"accuracy"``, its squared error
    ``"neg_mean_squared_error"``).

    Returns
    -------
    ndarray of shape (n_splits,)

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.models import LapRLSClassifier
    >>> from semiscale.model_selection import SSLKFold, bif_cross_val_score
    >>> X, y = make_two_moons(200, random_state=0)
    >>> y_ssl = np.where(np.arange(200) % 5 == 0, y, -1)
    >>> scores = bif_cross_val_score(LapRLSClassifier(), X, y_ssl, cv=SSLKFold(4, random_state=0))
    >>> scores.shape
    (4,)
    """
    score = score_function(scoring, is_classifier(estimator))
    est, pairs, marker = _bif_run(
        estimator, X, y, cv, laplacian, hessian, step, n_columns, random_state, max_newton_steps
    )
    return fold_scores(est, y, pairs, score, marker)
