r"""The fit of :class:`~semiscale.kernels.data_dependent.DataDependentKernel`, step by step.

Landmark selection, the regularizer ``Q = R^p`` with ``R = L + ridge·I``, the landmark columns
``Z = Q⁻¹ E_s`` (Theorem 4.2's ``n̂`` SDD solves), ``A = ZᵀQZ ≈ Q̂⁺`` and the small factor of
``(A + ηK̂)``; the exact (eq. 4) and budget constructions.  Pure functions on arrays: the class
holds the parameters and the fitted state.

The graph and solver layers sit above the kernels (an estimator imports both), so they are
imported inside the functions that use them.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

#: Above this many points ``construction="exact"`` (eq. 4: n × n dense matrices, an O(n³)
#: solve) is refused: its fit peaks at 5 dense n × n float64 arrays (measured at 2,000 points,
#: tracemalloc: 5.05; 1 GB at 5,000) and keeps 2 (``Q_``, ``inner_``).
EXACT_MAX_SAMPLES = 5000
#: ``κ(R)^p`` above which ``A`` loses more than about 4 of its 16 digits (``u·κ^p ≈ 2e-4``):
#: :func:`regularizer` warns.
CONDITION_WARN = 1e12


def paper_graph():
    """The graph of paper 002's experiments (§5.1): 5-NN, 0–1 weights, normalized Laplacian.

    ``KNNGraph(n_neighbors=5, weights="binary", symmetrize="union", normalized=True)``: an edge
    where either end point lists the other among its 5 nearest neighbours.  Pass it as
    ``graph=paper_graph()`` to reproduce the paper; the default (:func:`default_graph`) differs
    in the Laplacian only.
    """
    from semiscale.graph import KNNGraph  # graphs sit above the kernels

    return KNNGraph(n_neighbors=5, weights="binary", symmetrize="union", normalized=True)


def default_graph():
    """``graph=None``'s graph: :func:`paper_graph` with the unnormalized Laplacian ``D − W``.

    Why not the paper's normalized Laplacian: with it ``Q⁻¹``'s largest eigenvector is
    ``D^{1/2}1``, nearly free of penalty (eigenvalue ``ridge^{-p}``), so a classifier on a few
    labels can separate them by the points' degrees, which an SVM's bias (a constant) does not
    absorb; ``D − W``'s is the constant.  Measured on letter D vs O and usps 3 vs 8 (2 and 10
    labels a class, SVM, C = 1000): mean transductive error 12.28 % against 14.40 % at each
    graph's best setting (``benchmarks/results/data_dependent_defaults/``).
    """
    from semiscale.graph import KNNGraph

    return KNNGraph(n_neighbors=5, weights="binary", symmetrize="union")


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _positive_real(value, name, hint=""):
    if isinstance(value, bool) or not isinstance(value, Real) or not (0 < value < math.inf):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}{hint}")


def _choice(value, name, options):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}")


#: A parameter absent before :meth:`DataDependentKernel.set_params` (a new nested key).
MISSING = object()


def same_value(a, b) -> bool:
    """Parameter values equal (objects by identity or ``==``; arrays only by identity)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays, matrices: ambiguous truth value
        return False


def labeled_rows(y, n, unlabeled):
    """Mask of the labeled rows of ``y`` (None for ``y=None``), by the models' rule.

    ``unlabeled`` and NaN/None mark an unlabeled row; a 2-D ``y`` (several regression targets)
    has a row unlabeled when all its entries are.
    """
    if y is None:
        return None
    from semiscale._validation import unlabeled_rows  # the models' rule for unlabeled rows

    y = np.asarray(y, dtype=object) if not hasattr(y, "dtype") else np.asarray(y)
    if y.ndim not in (1, 2) or y.shape[0] != n:
        raise ValueError(f"y must have shape ({n},) or ({n}, n_outputs) to match X, got {y.shape}")
    if y.ndim == 2:
        return ~np.all([unlabeled_rows(col, unlabeled) for col in y.T], axis=0)
    return ~unlabeled_rows(y, unlabeled)


class LandmarkWarning(UserWarning):
    """The landmark set fell back from what was asked (more landmarks than points, no label)."""


def select_landmarks(n, n_landmarks, labeled, selection, rng):
    """Indices of the ``n̂`` landmarks among ``n`` points, labeled points first for ``"labeled"``.

    ``labeled`` is a boolean mask or None (no ``y``).  ``"labeled"``: every labeled point (a
    random subset of them when there are more than ``n_landmarks``), then unlabeled points drawn
    at random; with ``y=None`` plain random selection (nothing to bias towards), with a ``y``
    holding no label the same, with a :class:`LandmarkWarning`.  ``n_landmarks > n``: all
    points, with a :class:`LandmarkWarning`.
    """
    if n_landmarks > n:
        warnings.warn(
            f"n_landmarks={n_landmarks} is larger than the {n} training points: every point is "
            "a landmark (the kernel is then the exact one of eq. 4 up to the solver's "
            f"tolerance); pass n_landmarks <= {n} to silence this",
            LandmarkWarning,
            stacklevel=4,
        )
        n_landmarks = n
    if selection == "random" or labeled is None:
        return np.sort(rng.choice(n, n_landmarks, replace=False))
    first = np.flatnonzero(labeled)
    if first.size == 0:
        warnings.warn(
            'landmark_selection="labeled" but y holds no labeled point: the landmarks are '
            'drawn at random (landmark_selection="random")',
            LandmarkWarning,
            stacklevel=4,
        )
        return np.sort(rng.choice(n, n_landmarks, replace=False))
    if first.size >= n_landmarks:
        return np.sort(rng.choice(first, n_landmarks, replace=False))
    rest = rng.choice(np.flatnonzero(~labeled), n_landmarks - first.size, replace=False)
    return np.sort(np.concatenate([first, rest]))


def regularizer_base(L, ridge):
    """``R = L + ridge·I`` as CSR float64, refusing a singular ``R`` (``ridge = 0``)."""
    if not ridge > 0:
        raise ValueError(
            f"ridge must be > 0, got {ridge!r}: Q = (L + ridge·I)^p is singular without it (a "
            "graph Laplacian has the constant vector of every connected component in its null "
            "space), and A = ZᵀQZ needs Q⁻¹; pass a small positive ridge such as 1e-3"
        )
    L = sp.csr_matrix(L, dtype=np.float64)
    if L.shape[0] != L.shape[1]:
        raise ValueError(f"the Laplacian must be square, got shape {L.shape}")
    R = (L + float(ridge) * sp.eye(L.shape[0], format="csr")).tocsr()
    R.sort_indices()
    return R


def warn_condition(R, ridge, power) -> float:
    r"""Gershgorin bound on ``κ(Q) = κ(R)^p`` (``λ_max(R) ≤ max_i Σ_j |R_ij|``, ``λ_min ≥ ridge``).

    ``A``'s entries are as large as ``λ_max(Q⁻¹) = ridge^{-p}`` and carry an absolute rounding
    error of about ``u·ridge^{-p}``, while its smallest eigenvalues are ``λ_max(Q)^{-1}``: the
    kernel keeps about ``16 − log10 κ(Q)`` digits; warn past :data:`CONDITION_WARN`.
    """
    lam_max = float(abs(R).sum(axis=1).max()) if R.nnz else float(ridge)
    kappa = (lam_max / float(ridge)) ** int(power)
    if kappa > CONDITION_WARN:
        warnings.warn(
            f"Q = (L + ridge·I)^p has condition number up to {kappa:.2g} (ridge={ridge}, "
            f"power={power}): A = ZᵀQZ keeps only about {max(16 - np.log10(kappa), 0):.0f} "
            "significant digits; raise ridge or lower power",
            UserWarning,
            stacklevel=4,
        )
    return kappa


def warn_unlandmarked(L, landmarks, graph=None) -> int:
    """Warn when a connected component of the graph holds no landmark; return how many points.

    A fitted ``graph``'s ``component_labels_`` are reused (its fit found them already).
    """
    from semiscale.graph import DisconnectedGraphWarning
    from semiscale.graph._graph import component_labels

    components = component_labels(L, graph)
    has = np.zeros(components.max() + 1, dtype=bool)
    has[components[landmarks]] = True
    missed = ~has[components]
    count = int(missed.sum())
    if count:
        warnings.warn(
            f"{count} of {components.size} training points lie in "
            f"{np.unique(components[missed]).size} connected component(s) of the graph without a "
            "landmark: Q⁻¹ is block-diagonal, so the intrinsic term does not see them and the "
            "kernel equals the base kernel plus the landmarks' correction there. Raise the "
            "graph's n_neighbors or n_landmarks",
            DisconnectedGraphWarning,
            stacklevel=4,
        )
    return count


#: Bytes of the unit right-hand sides ``E_s`` given to the solver at once: columns go in batches
#: of ``max(LANDMARK_BATCH_MIN, RHS_BYTES // (8 n))`` (all 250 in one batch up to 134,217
#: points), so that ``E_s`` does not double the ``n × n̂`` memory of ``Z`` on large graphs.
RHS_BYTES = 256 * 2**20
LANDMARK_BATCH_MIN = 16


def landmark_solves(
    R, landmarks, power, ridge, *, solver, tol, near_nullspace, memory_budget, verbose
):
    """``Z = R^{-p} E_s`` (``p`` nested solves, one preparation of ``R``) and its diagnostics.

    ``ridge`` is a lower bound of ``λ_min(R)`` (``L`` is positive semi-definite), which gives the
    a-posteriori ``ε`` of Theorem 4.2 for every column (:class:`semiscale.solvers.sdd.SDDSolver`).
    Returns ``(Z, diagnostics, setup_seconds)``; the diagnostics hold ``iterations`` (the most
    over the batches), ``residual``, ``epsilon``, ``converged`` and ``time`` (summed).
    """
    from semiscale.solvers.sdd import SDDSolver

    n, n_hat = R.shape[0], landmarks.size
    sdd = SDDSolver(
        R,
        method=solver,
        tol=tol,
        near_nullspace=near_nullspace if solver == "amg" else None,
        memory_budget=memory_budget,
        verbose=verbose,
    )
    batch = max(LANDMARK_BATCH_MIN, RHS_BYTES // (8 * n))
    Z = np.empty((n, n_hat))
    iterations = np.zeros(int(power), dtype=int)
    residual, epsilon = np.empty(n_hat), np.empty(n_hat)
    converged, seconds = True, 0.0
    for start in range(0, n_hat, batch):
        cols = np.arange(start, min(start + batch, n_hat))
        E = np.zeros((n, cols.size))
        E[landmarks[cols], np.arange(cols.size)] = 1.0
        solution = sdd.solve(E, power=int(power), eigenvalue_floor=float(ridge))
        del E
        Z[:, cols] = solution.solution
        iterations = np.maximum(iterations, solution.iterations)
        residual[cols], epsilon[cols] = solution.residual, solution.epsilon
        converged &= bool(solution.converged)
        seconds += solution.time
    if not converged:
        warnings.warn(
            f"the landmark solves stopped above tol={tol} (largest relative residual "
            f"{residual.max():.3g}): A = ZᵀQZ is less accurate than asked (see epsilon_); "
            "raise ridge, or use solver='direct' on small graphs",
            UserWarning,
            stacklevel=4,
        )
    diagnostics = {
        "iterations": iterations,
        "residual": residual,
        "epsilon": epsilon,
        "converged": converged,
        "time": seconds,
    }
    return Z, diagnostics, sdd.setup_time


def landmark_gram(R, Z, power):
    r"""``A = ZᵀQZ`` with ``Q = R^p`` (Theorem 4.2's estimator of Q̂⁺), symmetric by construction.

    ``R`` is symmetric, so ``ZᵀR^pZ = WᵀW`` with ``W = R^{p/2}Z`` for even ``p`` and
    ``Wᵀ(RW)`` with ``W = R^{(p−1)/2}Z`` for odd ``p``: ``⌈p/2⌉`` sparse products and one
    ``n × n̂`` temporary besides ``Z`` (``R^p`` is never formed).
    """
    from semiscale.linalg.ops import get_ops

    ops = get_ops()
    W = Z
    for _ in range(int(power) // 2):
        W = np.asarray(ops.sparse_matmul(R, W))
    if int(power) % 2:
        A = ops.matmul(W.T, np.asarray(ops.sparse_matmul(R, W)))
    else:
        A = ops.matmul(W.T, W)
    return np.ascontiguousarray((A + A.T) / 2.0)


def inverse_spd(Q):
    """``Q⁻¹`` of a small dense SPD matrix (the budget construction's ``A = Q_b⁻¹``), symmetric."""
    from semiscale.linalg.ops import get_ops

    ops = get_ops()
    A = ops.solve(np.asarray(Q, dtype=np.float64), np.eye(Q.shape[0]), assume_a="pos")
    return np.ascontiguousarray((A + A.T) / 2.0)


def dense_power(R, power):
    """Dense ``R^p`` (the exact and budget constructions), by ``p − 1`` products."""
    from semiscale.linalg.ops import get_ops

    ops = get_ops()
    Rd = R.toarray() if sp.issparse(R) else np.asarray(R, dtype=np.float64)
    Q = Rd
    for _ in range(int(power) - 1):
        Q = ops.matmul(Q, Rd)
    return np.ascontiguousarray((Q + Q.T) / 2.0)


def small_factor(A, K_hat, eta):
    r"""Lower Cholesky factor ``C`` of ``S = A + ηK̂`` (jittered only if rounding demands it).

    Why this matrix: for an SPD ``A`` (it is, since ``Q`` is SPD: ``A ≈ (Q⁻¹)_{ss}``),
    ``(I + ηQ̂K̂)⁻¹Q̂`` with ``Q̂ = A⁻¹`` equals ``(A(I + ηA⁻¹K̂))⁻¹ = (A + ηK̂)⁻¹``, and with
    ``A = UΛUᵀ`` that is ``U(Λ + ηUᵀK̂U)⁻¹Uᵀ``, the eigenvector form, keeping every eigenvalue:
    ``Q̂ = A⁺`` is never formed and ``(I + ηA⁺K̂)`` never inverted.  Returns ``(C, jitter)``.
    """
    from semiscale.linalg.ops import get_ops

    S = np.asarray(A, dtype=np.float64) + float(eta) * np.asarray(K_hat, dtype=np.float64)
    S = (S + S.T) / 2.0
    return get_ops().jittered_cholesky(S)


def exact_inner(Q, K, eta):
    r"""Eq. (4)'s ``M = (I + ηQK)⁻¹ Q`` by one dense LU solve, literally (O(n³)); symmetrized."""
    from semiscale.linalg.ops import get_ops

    ops = get_ops()
    n = Q.shape[0]
    system = np.eye(n) + float(eta) * ops.matmul(Q, K)
    M = ops.solve(system, Q)
    return np.ascontiguousarray((M + M.T) / 2.0)
