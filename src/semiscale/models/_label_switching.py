r"""Joachims' label switching (the loop of :class:`~semiscale.models.TSVMClassifier`).

With the labeled machine trained, the ``u`` unlabeled training rows get the labels of its
``n_pos`` largest values (``+1``) and ``-1`` otherwise; their weights start at
:data:`INITIAL_C_UNLABELED` (the positives' scaled by the ratio) and double, capped at
``C_unlabeled``; at each weight, every disjoint pair (positive ``i``, negative ``j``) with
:math:`\xi^*_i > 0,\ \xi^*_j > 0,\ \xi^*_i + \xi^*_j > 2` is switched and the machine
retrained, until no pair is left, ``max_iter`` rounds, or a labeling already tried at the
weight comes back.  The switches keep the number of positives.  The class docstring of
:class:`~semiscale.models.TSVMClassifier` gives the details and the references.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import log

__all__ = ["INITIAL_C_UNLABELED", "switch_labels", "switchable_pairs"]

#: Joachims' first weight of the unlabeled points' losses (C*₋ = 1e-5; C*₊ scaled by the ratio).
INITIAL_C_UNLABELED = 1e-5


def switch_labels(
    machine,
    data,
    y_l,
    n_pos,
    *,
    train,
    decision_on,
    find_pairs,
    C,
    C_unlabeled,
    max_iter,
    owner,
    name,
    verbose,
):
    """The label-switching rounds after the labeled ``machine``.

    Parameters
    ----------
    machine : fitted classifier
        The machine of the labeled rows (the first ``y_l.size`` rows of ``data``).
    data : ndarray
        The training rows, or their Gram matrix, labeled rows first.
    y_l : ndarray of shape (l,)
        The labeled rows' targets in ±1.
    n_pos : int
        Unlabeled rows labeled +1 (the class-ratio constraint).
    train : callable ``(data, targets, weights) -> machine``
    decision_on : callable ``(machine, data, rows) -> values``
    find_pairs : callable ``(y_u, f_u) -> (positives, negatives)``
        The disjoint switchable pairs (:func:`switchable_pairs`).
    C, C_unlabeled : float
        The labeled rows' weight, the unlabeled rows' final weight.
    max_iter : int
        Rounds at most per weight (a ``ConvergenceWarning`` when they ran out).
    owner, name : str
        The estimator's class and the machine's name ("binary", "class 'a' against the
        rest"), in the log and the warning.
    verbose : int

    Returns
    -------
    machine, y_u, fits, switched
        The final machine, the unlabeled rows' ±1 labels, the trainings and the pairs
        switched.
    """
    l = y_l.size
    u = data.shape[0] - l
    fits, switched = 0, 0
    unlabeled_rows = slice(l, l + u)
    f_u = decision_on(machine, data, unlabeled_rows)
    y_u = -np.ones(u)
    y_u[np.argsort(-f_u, kind="stable")[:n_pos]] = 1.0
    c_star = float(C_unlabeled)
    c_neg = min(INITIAL_C_UNLABELED, c_star)
    c_pos = min(INITIAL_C_UNLABELED * n_pos / max(u - n_pos, 1), c_star)
    targets = np.concatenate([y_l, y_u])
    stopped = []
    while True:
        seen = {np.packbits(y_u > 0).tobytes()}  # the labelings tried at this weight
        for rounds in range(1, max_iter + 1):
            weights = np.concatenate([np.full(l, float(C)), np.where(y_u > 0, c_pos, c_neg)])
            targets[l:] = y_u
            machine = train(data, targets, weights)
            fits += 1
            pairs = find_pairs(y_u, decision_on(machine, data, unlabeled_rows))
            log(
                f"[{owner}] {name}: C*-={c_neg:.3g} C*+={c_pos:.3g} round "
                f"{rounds}: {pairs[0].size} pairs to switch",
                verbose,
                level=2,
            )
            if pairs[0].size == 0:
                break
            proposal = y_u.copy()
            proposal[pairs[0]], proposal[pairs[1]] = -1.0, 1.0
            key = np.packbits(proposal > 0).tobytes()
            if key in seen:
                # A cycle: each switch lowers the objective of an exact solve, so a labeling
                # met again means the solver's tolerance decided it (at small unlabeled
                # weights a switch gains less than libsvm's tol); the weight ends here.
                log(
                    f"[{owner}] {name}: the switch returns to a labeling "
                    "already tried at this weight: next weight",
                    verbose,
                    level=2,
                )
                break
            seen.add(key)
            y_u = proposal
            switched += pairs[0].size
        else:
            stopped.append(c_neg)
        if c_neg >= c_star and c_pos >= c_star:
            break
        c_neg, c_pos = min(2 * c_neg, c_star), min(2 * c_pos, c_star)
    if stopped:
        warnings.warn(
            f"{owner}: the {name} machine stopped switching labels after "
            f"max_iter={max_iter} rounds at {len(stopped)} unlabeled weight(s) with "
            "pairs left to switch; raise max_iter to switch them all",
            ConvergenceWarning,
            stacklevel=5,
        )
    return machine, y_u, fits, switched


def switchable_pairs(y_u, f_u):
    """Disjoint pairs (positive i, negative j) with ξ_i, ξ_j > 0 and ξ_i + ξ_j > 2.

    The positives and the negatives are each sorted by decreasing slack and paired in that
    order: the k-th pair has the largest sum any k disjoint pairs can reach, so the pairs
    kept are a prefix.
    """
    slack = np.maximum(0.0, 1.0 - y_u * f_u)
    pos = np.flatnonzero((y_u > 0) & (slack > 0))
    neg = np.flatnonzero((y_u < 0) & (slack > 0))
    pos = pos[np.argsort(-slack[pos], kind="stable")]
    neg = neg[np.argsort(-slack[neg], kind="stable")]
    k = min(pos.size, neg.size)
    keep = slack[pos[:k]] + slack[neg[:k]] > 2.0
    k = int(np.count_nonzero(keep))  # sums decrease along the pairs: a prefix
    return pos[:k], neg[:k]
