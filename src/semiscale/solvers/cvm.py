r"""The Core Vector Machine on a center-constrained minimum enclosing ball (paper 001 §3.2).

SLapCVM's dual (8), ``max (2/C)·1_ℓᵀα − αᵀK̃α`` over the simplex (``1_ℓ`` marks the labeled
items), is the dual (9) of a *center-constrained* MEB: with ``Δ_a = η − K̃_aa + (2/C)·1_ℓ(a) ≥ 0``
each item a is the point ``z̃_a = [z_a; √Δ_a e_a]`` of a feature space where ``‖z̃_a‖² = η +
(2/C)·1_ℓ(a)``, the ball's center ``c = Σ α_a z_a`` has no Δ coordinates, and

.. math::

    d_a^2 = \|c - \tilde z_a\|^2 = α^\top K̃ α - 2 (K̃ α)_a + η + \tfrac2C 1_ℓ(a), \qquad
    R^2 = η + \tfrac2C 1_ℓ^\top α - α^\top K̃ α .

The CVM (Tsang, Kwok & Cheung 2005) grows a core set S: solve the QP on S (SMO, warm-started:
:func:`semiscale.solvers.smo.simplex_qp_smo`), draw ``n_candidates`` (59) items outside S at
random, and stop when the furthest of them lies within ``(1 + ε) R`` — with 59 draws the
furthest is among the 5 % furthest items with probability 0.95 (the probabilistic speed-up) —
else add it to S.  Only ``K̃_SS`` (``|S|²`` entries) and the candidates' rows against S are formed;
η is the largest ``K̃_aa − (2/C)·1_ℓ(a)`` over all items (one O(1) diagonal entry each).

The regressor's dual has two items per labeled point, with linear terms ``±2y_i/C`` (of any
sign) in place of ``2/C``; everything above holds with that vector ``v`` in place of
``(2/C)·1_ℓ``: ``Δ_a = η − K̃_aa + v_a ≥ 0`` for ``η = max_a (K̃_aa − v_a)``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._progress import progress
from .._random import check_random_state
from ..linalg.ops import get_ops
from .smo import simplex_qp_smo

__all__ = ["CVMResult", "N_CANDIDATES", "core_vector_machine"]

#: Random candidates per iteration: their furthest is among the 5 % furthest items with
#: probability 1 − 0.95⁵⁹ ≈ 0.95 (CVM's probabilistic speed-up).
N_CANDIDATES = 59


class CVMResult:
    """The core set, its weights α (summing to 1), the radius and what the run did."""

    def __init__(self, core_set, alpha, radius2, eta, n_iter, converged, smo_iterations):
        self.core_set = core_set
        self.alpha = alpha
        self.radius2 = radius2
        self.eta = eta
        self.n_iter = n_iter
        self.converged = converged
        self.smo_iterations = smo_iterations


def core_vector_machine(
    kernel,
    labeled_weight,
    *,
    initial,
    tol=1e-4,
    max_core_set=5000,
    n_candidates=N_CANDIDATES,
    smo_tol=1e-8,
    random_state=None,
    verbose=0,
) -> CVMResult:
    """Solve ``max v·α − αᵀK̃α`` over the simplex by the CVM (module docstring).

    Parameters
    ----------
    kernel : SLapCVMKernel
        K̃ (``block``, ``diag``, ``n_items``, ``m``: items below ``m`` are the labeled ones).
    labeled_weight : float or ndarray of shape (kernel.m,)
        The linear term of the labeled items: ``2/C`` for classification (eq. 8), or one value
        per labeled item (``±2y_i/C`` for the regressor's two items per labeled point).
    initial : ndarray of int
        The initial core set (the labeled items).
    tol : float, default=1e-4
        ε of the ``(1 + ε)`` ball.
    max_core_set : int, default=5000
        Largest core set; reached before convergence: a ConvergenceWarning.
    n_candidates : int, default=59
    smo_tol : float, default=1e-8
        The inner SMO's KKT tolerance.
    random_state : int, RandomState, Generator or None
    verbose : int, default=0

    Raises
    ------
    ValueError
        When ``max_core_set`` cannot hold the initial core set.
    """
    rng = check_random_state(random_state)
    initial = np.unique(np.asarray(initial, dtype=np.intp))
    if max_core_set < initial.size:
        raise ValueError(
            f"max_core_set={max_core_set} cannot hold the initial core set of {initial.size} "
            "labeled points; raise max_core_set to at least the number of labeled points"
        )
    n_items, m = kernel.n_items, kernel.m
    labeled_linear = np.broadcast_to(np.asarray(labeled_weight, dtype=float), (m,))

    def linear(items):
        items = np.asarray(items, dtype=np.intp)
        return np.where(items < m, labeled_linear[np.minimum(items, m - 1)], 0.0)

    eta = float(np.max(kernel.diag() - linear(np.arange(n_items))))
    core = list(initial)
    in_core = np.zeros(n_items, dtype=bool)
    in_core[core] = True
    # K̃ on the core set in a buffer that doubles when full (no |S|² copy per new point)
    buffer = np.empty((max(2 * len(core), 64),) * 2)
    k = len(core)
    buffer[:k, :k] = kernel.block(core, core)
    Q = buffer[:k, :k]
    v = linear(core)
    result = simplex_qp_smo(Q, v, tol=smo_tol)
    alpha, smo_iterations = result.alpha, [result.n_iter]
    matmul = get_ops().matmul
    converged, n_iter = False, 0
    with progress(desc="CVM core set", unit="point", verbose=verbose) as bar:
        while True:
            Qa = matmul(Q, alpha)
            aQa = float((alpha * Qa).sum())
            radius2 = eta + float((v * alpha).sum()) - aQa
            outside = np.flatnonzero(~in_core)
            if outside.size == 0:
                converged = True
                break
            take = min(n_candidates, outside.size)
            candidates = rng.choice(outside, take, replace=False)
            cross = kernel.block(candidates, core)  # (take, |S|)
            dist2 = aQa - 2.0 * matmul(cross, alpha) + eta + linear(candidates)
            far = int(np.argmax(dist2))
            if not bar.disable:
                bar.set_postfix_str(f"|S| {len(core)}, R² {radius2:.4g}", refresh=False)
            if dist2[far] <= (1.0 + tol) ** 2 * radius2:
                converged = True
                break
            if len(core) >= max_core_set:
                warnings.warn(
                    f"the core vector machine reached max_core_set={max_core_set} before the "
                    f"(1 + {tol:g}) ball: the furthest candidate lies at "
                    f"{np.sqrt(dist2[far] / radius2):.4g} R; raise max_core_set or tol",
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
            buffer[k, k] = kernel.block([new], [new])[0, 0]
            Q = buffer[: k + 1, : k + 1]
            core.append(new)
            in_core[new] = True
            v = np.append(v, linear([new]))
            result = simplex_qp_smo(Q, v, np.append(alpha, 0.0), tol=smo_tol)
            alpha = result.alpha
            smo_iterations.append(result.n_iter)
            n_iter += 1
            bar.update(1)
    return CVMResult(np.asarray(core), alpha, radius2, eta, n_iter, converged, smo_iterations)
