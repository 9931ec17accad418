"""What a fit keeps for approximate cross-validation, and the post-fit steps both share.

A classifier's decision is the solver's raw fit ``g`` centred (:func:`centring_offset`) and,
with zero-mean targets, rescaled with the labeled prior added (:func:`labeled_prior`).
:func:`semiscale.model_selection.bif_cross_val_predict` repeats these steps on each fold's
approximate fit, so that it predicts what the retrained estimator would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..solvers.problem import ManifoldProblem, Solution
from ._contract import FitRules

__all__ = ["FitState", "centring_offset", "fit_with_state", "labeled_prior"]


@dataclass(frozen=True)
class FitState:
    """What a fit solved, kept on request (``estimator._keep_fit_state = True`` before ``fit``).

    ``problem`` is the :class:`ManifoldProblem` handed to the solver (references to ``X`` and
    the Laplacian, not copies), ``decision`` the raw fitted values ``g = Kα + b`` on the
    training rows before any centring or rescaling, ``solution`` the solver's output, and
    ``rules`` the :class:`~semiscale.models._contract.FitRules` that turned ``decision`` into
    the estimator's decision (targets, centring, labeled prior, the ``"auto"`` weight), which
    approximate CV repeats on every fold.
    """

    problem: ManifoldProblem
    decision: np.ndarray
    solution: Solution
    rules: FitRules


def fit_with_state(estimator, fit):
    """Run ``fit(estimator)`` keeping the :class:`FitState`; return it (None if none was kept).

    The protocol of :class:`~semiscale.models._contract.FitContract`'s ``approximate_cv``: the
    manifold fit path keeps its state in ``_fit_state_`` while ``_keep_fit_state`` is set on
    the instance.  The state is removed from the estimator, so that it holds no reference to
    the training data beyond its fitted attributes.
    """
    estimator._keep_fit_state = True
    try:
        fit(estimator)
    finally:
        del estimator._keep_fit_state
    return estimator.__dict__.pop("_fit_state_", None)


def centring_offset(decision, laplacian, rows=None):
    """Poisson learning's normalization: the shift making ``Σ_i d_i f(x_i) = 0`` per column.

    ``d = diag(L)``; ``rows`` restricts the sum to some training rows (all by default).
    """
    d = np.asarray(laplacian.diagonal()).ravel()
    if rows is not None:
        d, decision = d[rows], decision[rows]
    return (d[:, None] * decision).sum(axis=0) / d.sum()


def labeled_prior(decision, Y, codes, labeled_rows, n_classes, plus_minus=False):
    """``(α, shift)`` of :meth:`SSLClassifierMixin._add_labeled_prior` for these labeled rows.

    ``α = ⟨F_l, Y_l⟩ / ⟨F_l, F_l⟩`` (1 when the fit does not correlate with the targets) and
    ``shift`` the labeled class proportions p (their difference for two classes); with
    ``plus_minus`` (±1 one-vs-rest targets) ``2p − 1``, the mean of each ±1 column.
    """
    F_l, Y_l = decision[labeled_rows], Y[labeled_rows]
    norm = float(np.vdot(F_l, F_l))
    corr = float(np.vdot(F_l, Y_l))
    alpha = corr / norm if norm > 0 and corr > 0 else 1.0
    counts = np.bincount(codes[labeled_rows], minlength=n_classes)
    prior = counts / counts.sum()
    if prior.shape[0] == 2:
        shift = prior[1:] - prior[:1]
    else:
        shift = 2.0 * prior - 1.0 if plus_minus else prior
    return alpha, shift
