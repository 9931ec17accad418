r"""Volume-constrained MBO on a graph: Poisson-MBO (Calder, Cook, Thorpe & Slepčev, ICML 2020).

Poisson-MBO refines Poisson learning's labels by the Merriman–Bence–Osher scheme: alternately
*diffuse* the class indicators ``u`` (one-hot rows) by a few explicit steps of the graph heat
equation with Poisson learning's sources as a forcing term, and *threshold* them back to
one-hot rows under a constraint on every class's volume (its number of points).  One outer
iteration (the paper's PoissonMBO algorithm, inner loop of ``N_s`` steps of size ``dt``):

.. math::  u \leftarrow u - dt\,\bigl(L u - \mu B\bigr) \quad (N_s \text{ times}), \qquad
           u_i \leftarrow e_{k(i)}, \quad
           k(i) = \arg\max_c\, (u_{ic} + s_c),

with ``B`` the sources ``Σ_j (y_j − ȳ) δ_j`` of Poisson learning, ``μ`` the fidelity and ``s``
per-class *volume offsets* chosen so that class ``c`` receives between ``lower_c`` and
``upper_c`` points (:func:`volume_threshold`).  Without thresholding the diffusion converges to
``μ`` times Poisson learning's solution (its fixed point solves ``L u = μ B``); the threshold
with its volume constraint is what lets the scheme move class boundaries to where the prior
class sizes put them.  Each inner step is one sparse product ``P u`` with ``P = I − dt L``
(O(nnz(L)·C), through the array-operations layer); each threshold a few sweeps of O(n·C) per
class.

The paper and GraphLearning adjust multiplicative weights by gradient steps until the volumes
match within 10⁻³; here the offsets are additive and each class's is set exactly (an order
statistic of its margins, one class at a time, :func:`volume_threshold`): the same arg max rule,
the volumes met to the point where ties allow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._progress import log
from ..linalg.ops import get_ops
from .graph_learning import centred_sources, one_hot

__all__ = [
    "MBOSolution",
    "VolumeThreshold",
    "heat_step_matrix",
    "poisson_mbo",
    "volume_bounds",
    "volume_threshold",
]


@dataclass
class VolumeThreshold:
    """The result of :func:`volume_threshold`.

    ``labels`` the arg max of ``scores + offsets`` per row, ``offsets`` the per-class volume
    offsets, ``counts`` the points per class, ``n_sweeps`` the sweeps over the classes and
    ``satisfied`` whether every count lies within its bounds (up to ``slack``).
    """

    labels: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    n_sweeps: int
    satisfied: bool


def volume_bounds(prior, n, tolerance):
    """Integer bounds on each class's number of points: its prior share within a factor.

    Class ``c`` may hold between ``⌊n b_c / (1 + t)⌋`` and ``⌈n b_c (1 + t)⌉`` of the ``n``
    points; ``t = 0`` gives exact counts (rounded so that they sum to ``n``, the largest
    remainders rounded up).

    Parameters
    ----------
    prior : ndarray of shape (n_classes,)
        Class proportions ``b`` (positive, summing to 1).
    n : int
        Number of points to share.
    tolerance : float
        ``t ≥ 0``.

    Returns
    -------
    lower, upper : ndarray of int, shape (n_classes,)
    """
    prior = np.asarray(prior, dtype=np.float64)
    target = n * prior
    if tolerance == 0:
        counts = np.floor(target).astype(np.int64)
        short = int(n - counts.sum())
        if short > 0:  # the largest remainders get the points the floors left
            counts[np.argsort(counts - target, kind="stable")[:short]] += 1
        return counts, counts.copy()
    lower = np.floor(target / (1.0 + tolerance)).astype(np.int64)
    upper = np.minimum(np.ceil(target * (1.0 + tolerance)), n).astype(np.int64)  # t may be inf
    return lower, upper


def _feasible_offset(margins, low, high, n):
    """The offset nearest 0 that gives the class ``low ≤ count ≤ high`` rows.

    The class takes row ``i`` when its offset exceeds ``margins[i]``; the feasible offsets
    are those above the ``low``-th smallest margin and at most the ``(high+1)``-th.
    """
    count = int(np.count_nonzero(margins < 0.0))
    if low <= count <= high:
        return 0.0
    m = low if count < low else high  # the bound that binds
    if m <= 0:
        return float(margins.min()) - 1.0
    if m >= n:
        return float(margins.max()) + 1.0
    kth = np.partition(margins, (m - 1, m))
    return 0.5 * (float(kth[m - 1]) + float(kth[m]))


def volume_threshold(scores, lower, upper, *, offsets=None, max_sweeps=100, slack=None):
    r"""Threshold scores to one class per row with every class's count within its bounds.

    Row ``i`` gets class ``argmax_c (scores_ic + s_c)``.  The offsets ``s`` are set one class
    at a time: class ``c``'s *margins* ``m_i = max_{c' ≠ c}(scores_ic' + s_c') − scores_ic``
    say which rows it takes (those with ``m_i < s_c``), so the offset that gives it between
    ``lower_c`` and ``upper_c`` rows is read off two order statistics of the margins (O(n));
    among the feasible offsets the one nearest 0 is taken.  Sweeps over the classes repeat
    (at least one) until every count is within its bounds (each update can move the others'
    counts) or ``max_sweeps``.  This is the dual (auction) view of the assignment with volume
    constraints (Jacobs, Merkurjev & Esedoḡlu 2018), solved by block coordinate steps.  With
    exact volumes (``lower == upper``) met, the labels maximize the total score among all
    assignments with those volumes (linear-programming duality).  With a band the sweeps stop
    as soon as the bounds are met: an offset set while its bound was binding is kept, so the
    labels meet the bounds but need not be the band's best assignment (on 20 random band
    problems, 7 were below that optimum, ``tests/test_mbo.py``; sweeping on until no offset
    changed took 21 sweeps on average, and changed usps's Poisson-MBO accuracy by at most
    0.05 points).  Bounds ``0 … n`` for every class are no constraint: the plain arg max.

    Parameters
    ----------
    scores : ndarray of shape (n, n_classes)
    lower, upper : ndarray of int, shape (n_classes,)
        Bounds on each class's count (``lower ≤ upper``; ``Σ lower ≤ n ≤ Σ upper``).
    offsets : ndarray of shape (n_classes,) or None
        Starting offsets (the previous threshold's: a warm start); None: zeros.
    max_sweeps : int, default=100
    slack : int or None
        Counts within this many points of their bounds count as met (ties in the scores can
        make a bound unreachable exactly); None: ``max(1, n // 1000)``.

    Returns
    -------
    VolumeThreshold
    """
    scores = np.asarray(scores)
    n, n_classes = scores.shape
    lower = np.asarray(lower, dtype=np.int64)
    upper = np.asarray(upper, dtype=np.int64)
    if lower.sum() > n or upper.sum() < n or np.any(lower > upper):
        raise ValueError(
            f"volume bounds cannot be met: lower {lower.tolist()} (sum {int(lower.sum())}) and "
            f"upper {upper.tolist()} (sum {int(upper.sum())}) for {n} points"
        )
    slack = max(1, n // 1000) if slack is None else int(slack)
    offsets = np.zeros(n_classes) if offsets is None else np.array(offsets, dtype=np.float64)
    if not lower.any() and np.all(upper >= n):  # no constraint: the plain arg max
        offsets[:] = 0.0
        labels = np.argmax(scores, axis=1)
        return VolumeThreshold(labels, offsets, np.bincount(labels, minlength=n_classes), 0, True)
    shifted = scores + offsets
    labels = np.argmax(shifted, axis=1)
    counts = np.bincount(labels, minlength=n_classes)

    def met(counts):
        return bool(np.all(counts >= lower - slack) and np.all(counts <= upper + slack))

    n_sweeps = 0
    # at least one sweep, also when the start meets the bounds: it moves each offset back
    # towards 0 where the bounds allow (warm-started offsets would otherwise stay where an
    # earlier threshold needed them)
    while n_sweeps < max_sweeps and (n_sweeps == 0 or not met(counts)):
        n_sweeps += 1
        for c in range(n_classes):
            shifted[:, c] = -np.inf
            margins = shifted.max(axis=1) - scores[:, c]
            offsets[c] = _feasible_offset(margins, lower[c], upper[c], n)
            shifted[:, c] = scores[:, c] + offsets[c]
        labels = np.argmax(shifted, axis=1)
        counts = np.bincount(labels, minlength=n_classes)
    return VolumeThreshold(labels, offsets, counts, n_sweeps, met(counts))


def heat_step_matrix(L, time_step):
    """``P = I − dt L`` (CSR): one explicit step of the graph heat equation ``u' = −L u``.

    Its entries are non-negative and its rows sum to 1 (for ``L = D − W``) when
    ``dt ≤ 1 / max_i L_ii``: a step is then an average, and one-hot rows stay in the simplex.
    """
    n = L.shape[0]
    return sp.csr_matrix(sp.identity(n, format="csr") - time_step * sp.csr_matrix(L))


@dataclass
class MBOSolution:
    """Poisson-MBO's result on its rows.

    ``labels`` (class codes), ``scores`` (the last diffusion plus the volume offsets: their
    arg max is ``labels``), ``offsets``, ``counts`` (points per class), ``n_outer`` (MBO
    iterations run), ``changed`` (labels changed by each iteration), ``satisfied`` (volume
    bounds met by the last threshold), ``time_step``.
    """

    labels: np.ndarray
    scores: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    n_outer: int
    changed: list
    satisfied: bool
    time_step: float


def poisson_mbo(
    L,
    labeled,
    codes,
    init_scores,
    lower,
    upper,
    *,
    n_outer=20,
    n_inner=40,
    fidelity=1.0,
    time_step=None,
    components=None,
    verbose=0,
):
    r"""Volume-constrained MBO iterations from Poisson learning's scores (module docstring).

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Graph Laplacian ``D − W`` of the rows iterated on (every row in a component with
        labels of two or more classes).
    labeled : ndarray of int
        Indices (rows of ``L``) of the labeled points.
    codes : ndarray of int
        Their class codes ``0 … C−1``.
    init_scores : ndarray of shape (n, C)
        Poisson learning's scores: their volume-constrained threshold starts the iterations.
    lower, upper : ndarray of int, shape (C,)
        Bounds on each class's count (:func:`volume_bounds`).
    n_outer : int, default=20
        MBO iterations at most (the paper's ``T``); they stop early when no label changes.
    n_inner : int, default=40
        Heat-equation steps per iteration (``N_s``).
    fidelity : float, default=1.0
        ``μ``, the weight of the sources.
    time_step : float or None, default=None
        ``dt``; None: ``1 / max_i L_ii``, the largest step whose ``I − dt L`` is an average.
    components : ndarray of int, shape (n,) or None
        Connected-component label of every row; the sources are centred by each component's
        own mean label, as Poisson learning's (:func:`~semiscale.solvers.graph_learning.
        poisson_learning`), so that every component's sources sum to 0 (else its mass grows
        with every step).  None: one component.
    verbose : int, default=0

    Returns
    -------
    MBOSolution
    """
    n = L.shape[0]
    n_classes = init_scores.shape[1]
    degree_max = float(L.diagonal().max(initial=0.0))
    dt = float(time_step) if time_step is not None else 1.0 / max(degree_max, np.finfo(float).tiny)
    labeled = np.asarray(labeled)
    if components is None:
        components = np.zeros(n, dtype=np.int64)
    # the forcing is 0 off the labeled rows: added there only, not as an n x C array each step
    forcing = (
        fidelity
        * dt
        * centred_sources(np.asarray(codes), np.asarray(components)[labeled], n_classes)
    )
    step = heat_step_matrix(L, dt)
    ops = get_ops()

    threshold = volume_threshold(init_scores, lower, upper)
    labels, scores, changed = threshold.labels, init_scores + threshold.offsets, []
    for it in range(n_outer):
        u = one_hot(labels, n_classes)
        for _ in range(n_inner):
            u = ops.sparse_matmul(step, u)
            u[labeled] += forcing
        threshold = volume_threshold(u, lower, upper, offsets=threshold.offsets)
        moved = int(np.count_nonzero(threshold.labels != labels))
        changed.append(moved)
        labels, scores = threshold.labels, u + threshold.offsets
        log(
            f"[Poisson-MBO] iteration {it + 1}: {moved} labels changed, "
            f"{threshold.n_sweeps} volume sweeps",
            verbose,
            level=2,
        )
        if moved == 0:
            break
    return MBOSolution(
        labels,
        scores,
        threshold.offsets,
        threshold.counts,
        len(changed),
        changed,
        threshold.satisfied,
        dt,
    )
