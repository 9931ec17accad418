r"""The Core Vector Machine on a center-constrained minimum enclosing ball (paper 001 §3.2).

SLapCVM's dual (8), ``max (2/C)·1_ℓᵀα − αᵀK̃α`` over the simplex (``1_ℓ`` marks the labeled
items), is the dual (9) of a *center-constrained* MEB: with ``Δ_a = η − K̃_aa + (2/C)·1_ℓ(a) ≥ 0``
each item a is the point ``z̃_a = [z_a; √Δ_a e_a]`` of a feature space where ``‖z̃_a‖² = η +
(2/C)·1_ℓ(a)``, the ball's center ``c = Σ α_a z_a`` has no Δ coordinates, and

.. math::

    d_a^2 = \|c - \tilde z_a\|^2 = α^\top K̃ α - 2 (K̃ α)_a + η + \tfrac2C 1_ℓ(a), \qquad
    R^2 = η + \tfrac2C 1_ℓ^\top α - α^\top K̃ α .

The CVM (Tsang, Kwok & Cheung 2005) grows a core set S: solve the QP on S, draw
``n_candidates`` (59) items outside S at random, and stop when the furthest of them lies within
``(1 + ε) R`` — with 59 draws the furthest is among the 5 % furthest items with probability
0.95 (the probabilistic speed-up) — else add it to S.  Only ``K̃_SS`` (``|S|²`` entries) and
the candidates' rows against S are formed.  η is any value with every ``Δ_a ≥ 0`` (the paper:
"for some sufficiently large η"); the dual's solution does not depend on it, but R² and the
``(1 + ε)`` test do, so the smallest one is used, ``max_a (K̃_aa − v_a)``, found once by
:meth:`~semiscale.solvers.slapcvm_kernel.SLapCVMKernel.eta` with kernel evaluations only on the
edges that a closed-form bound cannot rule out.  The candidates are drawn by rejection (uniform
item numbers, those in S or drawn twice redrawn), so one iteration costs
``O(|S|·n_candidates)`` kernel values and the QP on S, nothing of the order of ``m + 2|E|``:
once the core set stops growing, the solve time no longer grows with the data.

The QP on S (:data:`INNER_SOLVERS`): SMO warm-started from the previous α padded with a zero
(:func:`~semiscale.solvers.smo.simplex_qp_smo`, one Python step per pair update), or libsvm's
compiled one-class solver from scratch, polished by SMO in double precision
(:func:`~semiscale.solvers.simplex_qp_libsvm.simplex_qp_libsvm`).  ``inner="auto"`` uses SMO
while ``|S| < LIBSVM_FROM`` and libsvm from there on (see :data:`LIBSVM_FROM` for the
measurement).

The regressor's dual has two items per labeled point, with linear terms ``±2y_i/C`` (of any
sign) in place of ``2/C``; everything above holds with that vector ``v`` in place of
``(2/C)·1_ℓ``: ``Δ_a = η − K̃_aa + v_a ≥ 0`` for ``η = max_a (K̃_aa − v_a)``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._progress import log, progress
from .._random import check_random_state
from ..linalg.ops import get_ops
from .simplex_qp_libsvm import simplex_qp_libsvm
from .smo import simplex_qp_smo

__all__ = [
    "CVMResult",
    "INNER_SOLVERS",
    "LIBSVM_FROM",
    "N_CANDIDATES",
    "core_set_bytes",
    "core_vector_machine",
    "largest_core_set",
]

#: Random candidates per iteration: their furthest is among the 5 % furthest items with
#: probability 1 − 0.95⁵⁹ ≈ 0.95 (CVM's probabilistic speed-up).
N_CANDIDATES = 59
#: The inner QP's solvers (module docstring).
INNER_SOLVERS = ("auto", "smo", "libsvm")
#: Core-set size from which ``inner="auto"`` solves the QP on S by libsvm rather than by
#: warm-started SMO.  Measured over whole fits (``timings_["solve"]``, best of 2, this 2-core
#: machine, timing lock; /tmp script at the commit that set it): equal below ~20 items
#: (breast_cancer, |S| 13-19: 0.08-0.14 s either way), libsvm faster from there on — |S| = 25
#: and 46: 0.25 → 0.18 s and 0.51 → 0.29 s; two moons at mμ = 100, |S| = 43: 0.35 → 0.13 s,
#: |S| = 400: 11.0 → 4.1-5.6 s.  SMO's warm start saves less than its Python loop costs.
LIBSVM_FROM = 10
#: Pair updates allowed to one inner SMO call per core-set item (SMO's own default scale).
_SMO_UPDATES_PER_ITEM = 100
_SMO_UPDATES_FLOOR = 1000


class CVMResult:
    """The core set, its weights α (summing to 1), the radius and what the run did.

    ``n_iter`` counts iterations (balls checked against candidates: the items added, plus
    the last check); ``inner_iterations`` the inner SMO's
    pair updates per solve; ``inner_gap`` the KKT gap of the last inner solve (of ``alpha``).
    """

    def __init__(
        self, core_set, alpha, radius2, eta, n_iter, converged, inner_iterations, inner_gap
    ):
        self.core_set = core_set
        self.alpha = alpha
        self.radius2 = radius2
        self.eta = eta
        self.n_iter = n_iter
        self.converged = converged
        self.smo_iterations = self.inner_iterations = inner_iterations
        self.inner_gap = inner_gap


def _draw_outside(rng, n_items, in_core, n_core, take):
    """``take`` distinct items with ``in_core`` False, uniformly, in O(take) when S is small.

    Rejection: uniform item numbers, those in S or already drawn thrown away, until ``take``
    remain (each subset of the outside items is equally likely).  When S holds half the items
    or more, the outside items are listed instead (O(m + 2|E|), only on small problems).
    """
    if 2 * n_core >= n_items:
        return rng.choice(np.flatnonzero(~in_core), take, replace=False)
    chosen = np.empty(0, dtype=np.intp)
    while chosen.size < take:
        draw = rng.randint(0, n_items, size=2 * (take - chosen.size) + 8)
        draw = draw[~in_core[draw]]
        # keep the first occurrence of each, in draw order (np.unique sorts: order matters
        # only for which ones are kept when there are too many, and sorted order would bias
        # that towards small item numbers)
        merged = np.concatenate([chosen, draw])
        _, first = np.unique(merged, return_index=True)
        chosen = merged[np.sort(first)]
    return chosen[:take]


def _solve(Q, v, alpha, inner, tol, max_updates):
    if inner == "libsvm" or (inner == "auto" and v.size >= LIBSVM_FROM):
        return simplex_qp_libsvm(Q, v, tol=tol, max_iter=max_updates)
    return simplex_qp_smo(Q, v, alpha, tol=tol, max_iter=max_updates)


def core_set_bytes(size: int, initial_size: int) -> int:
    """Peak bytes of the Gram matrix K̃_SS of a core set of ``size`` items (one started from
    ``initial_size``): its buffer, which doubles from ``max(2·initial_size, 64)`` rows, the
    buffer it was copied from when it last doubled, and one ``size²`` copy for the QP."""
    first = max(2 * initial_size, 64)
    capacity = first
    while capacity < size:
        capacity *= 2
    previous = capacity // 2 if capacity > first else 0
    return 8 * (capacity**2 + previous**2 + size**2)


def largest_core_set(memory_budget, initial_size: int, max_core_set: int) -> int:
    """The largest core set, at most ``max_core_set``, whose K̃_SS fits ``memory_budget``.

    Raises
    ------
    MemoryBudgetError
        When not even the initial core set (the labeled items) fits.
    """
    budget = parse_memory_budget(memory_budget)
    needed = core_set_bytes(initial_size, initial_size)
    if needed > budget:
        raise MemoryBudgetError(
            f"the core vector machine's Gram matrix needs {format_bytes(needed)} for its "
            f"initial core set of {initial_size} labeled items but memory_budget is "
            f"{format_bytes(budget)}; raise memory_budget"
        )
    low, high = initial_size, max(initial_size, max_core_set)  # core_set_bytes grows with size
    while low < high:
        middle = (low + high + 1) // 2
        if core_set_bytes(middle, initial_size) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def core_vector_machine(
    kernel,
    labeled_weight,
    *,
    initial,
    tol=1e-4,
    max_core_set=5000,
    max_iter=None,
    n_candidates=N_CANDIDATES,
    smo_tol=1e-8,
    inner="auto",
    random_state=None,
    verbose=0,
    memory_budget=None,
) -> CVMResult:
    """Solve ``max v·α − αᵀK̃α`` over the simplex by the CVM (module docstring).

    Parameters
    ----------
    kernel : SLapCVMKernel
        K̃ (``block``, ``eta``, ``n_items``, ``m``: items below ``m`` are the labeled ones).
    labeled_weight : float or ndarray of shape (kernel.m,)
        The linear term of the labeled items: ``2/C`` for classification (eq. 8), or one value
        per labeled item (``±2y_i/C`` for the regressor's two items per labeled point).
    initial : ndarray of int
        The initial core set (the labeled items).
    tol : float, default=1e-4
        ε of the ``(1 + ε)`` ball.
    max_core_set : int, default=5000
        Largest core set; reached before convergence: a ConvergenceWarning.
    memory_budget : int, str or None, default=None
        Bounds the core set too (:func:`largest_core_set`; None: a quarter of the memory
        available): reached before convergence, a ConvergenceWarning that names it.
    max_iter : int or None, default=None
        Iterations (each: the ball on the core set, the candidates' check and, when one lies
        outside, one item added) before stopping with a ConvergenceWarning; None: bounded by
        ``max_core_set`` only.
    n_candidates : int, default=59
    smo_tol : float, default=1e-8
        The inner solver's KKT tolerance.  Each inner solve is capped at 100 pair updates per
        core-set item (libsvm: as many iterations); when the last one stops there, a
        ConvergenceWarning (its gap is ``inner_gap``).
    inner : {"auto", "smo", "libsvm"}, default="auto"
        The QP on the core set (module docstring).
    random_state : int, RandomState, Generator or None
    verbose : int, default=0
        A progress bar of the core set on stderr when > 0.

    Raises
    ------
    ValueError
        When ``max_core_set`` cannot hold the initial core set, or ``inner`` is unknown.
    """
    if inner not in INNER_SOLVERS:
        raise ValueError(f"inner must be one of {INNER_SOLVERS}, got {inner!r}")
    rng = check_random_state(random_state)
    initial = np.unique(np.asarray(initial, dtype=np.intp))
    if max_core_set < initial.size:
        raise ValueError(
            f"max_core_set={max_core_set} cannot hold the initial core set of {initial.size} "
            "labeled points; raise max_core_set to at least the number of labeled points"
        )
    budget_core_set = largest_core_set(memory_budget, initial.size, max_core_set)
    max_iter = max_core_set if max_iter is None else int(max_iter)
    n_items, m = kernel.n_items, kernel.m
    labeled_linear = np.broadcast_to(np.asarray(labeled_weight, dtype=float), (m,))

    def linear(items):
        items = np.asarray(items, dtype=np.intp)
        return np.where(items < m, labeled_linear[np.minimum(items, m - 1)], 0.0)

    eta = kernel.eta(labeled_linear)
    core = list(initial)
    in_core = np.zeros(n_items, dtype=bool)
    in_core[core] = True
    # K̃ on the core set in a buffer that doubles when full (no |S|² copy per new point)
    buffer = np.empty((max(2 * len(core), 64),) * 2)
    k = len(core)
    buffer[:k, :k] = kernel.block(core, core)
    Q = buffer[:k, :k]
    v = linear(core)
    result = _solve(Q, v, None, inner, smo_tol, _SMO_UPDATES_PER_ITEM * k + _SMO_UPDATES_FLOOR)
    alpha, inner_iterations, inner_gap = result.alpha, [result.n_iter], result.gap
    matmul = get_ops().matmul
    converged, n_iter, stopped = False, 0, None
    with progress(desc="CVM core set", unit="point", verbose=verbose) as bar:
        while True:
            n_iter += 1
            Qa = matmul(Q, alpha)
            aQa = float((alpha * Qa).sum())
            radius2 = eta + float((v * alpha).sum()) - aQa
            n_outside = n_items - len(core)
            if n_outside == 0:
                converged = True
                break
            take = min(n_candidates, n_outside)
            candidates = _draw_outside(rng, n_items, in_core, len(core), take)
            cross = kernel.block(candidates, core)  # (take, |S|)
            dist2 = aQa - 2.0 * matmul(cross, alpha) + eta + linear(candidates)
            far = int(np.argmax(dist2))
            if not bar.disable:
                bar.set_postfix_str(f"|S| {len(core)}, R² {radius2:.4g}", refresh=False)
            # verbose >= 2: a line per iteration (the bar above keeps only the latest)
            line = f"[CVM core set] iteration {n_iter}: |S| {len(core)}, R² {radius2:.4g}"
            log(line, verbose, level=2)
            if dist2[far] <= (1.0 + tol) ** 2 * radius2:
                converged = True
                break
            fix = "raise max_core_set / max_iter or tol"
            if len(core) >= max_core_set:
                stopped = f"reached max_core_set={max_core_set}"
            elif len(core) >= budget_core_set:
                stopped = (
                    f"reached the largest core set memory_budget holds ({budget_core_set} "
                    f"items: {format_bytes(core_set_bytes(budget_core_set + 1, initial.size))} "
                    f"for one more)"
                )
                fix = "raise memory_budget, or tol"
            elif n_iter >= max_iter:
                stopped = f"ran max_iter={max_iter} iterations"
            if stopped:
                warnings.warn(
                    f"the core vector machine {stopped} before the (1 + {tol:g}) ball: the "
                    f"furthest candidate lies at {np.sqrt(dist2[far] / radius2):.4g} R "
                    f"(core set of {len(core)} items); {fix}",
                    ConvergenceWarning,
                    stacklevel=2,
                )
                break
            new = int(candidates[far])
            k = len(core)
            if k == buffer.shape[0]:
                grown = np.empty((2 * k, 2 * k))
                grown[:k, :k] = buffer
                buffer = grown
            buffer[k, :k] = buffer[:k, k] = cross[far]
            buffer[k, k] = kernel.diag([new])[0]
            Q = buffer[: k + 1, : k + 1]
            core.append(new)
            in_core[new] = True
            v = np.append(v, linear([new]))
            result = _solve(
                Q,
                v,
                np.append(alpha, 0.0),
                inner,
                smo_tol,
                _SMO_UPDATES_PER_ITEM * (k + 1) + _SMO_UPDATES_FLOOR,
            )
            alpha = result.alpha
            inner_iterations.append(result.n_iter)
            inner_gap = result.gap
            bar.update(1)
    if inner_gap > smo_tol:
        warnings.warn(
            f"the QP on the core set stopped at its cap of {_SMO_UPDATES_PER_ITEM} pair "
            f"updates per item with a KKT gap of {inner_gap:.3g} > smo_tol={smo_tol:g}: the "
            "core set's weights are approximate; loosen smo_tol",
            ConvergenceWarning,
            stacklevel=2,
        )
    return CVMResult(
        np.asarray(core), alpha, radius2, eta, n_iter, converged, inner_iterations, inner_gap
    )
