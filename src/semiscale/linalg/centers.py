"""Nyström centers and the jittered Cholesky factorization of ``K_ss``.

A Nyström method restricts the predictor to ``f = Σ_{j≤s} α_j k(x̃_j, ·)`` over ``s`` centers
``x̃_j`` (paper 000 §4.1), which replaces the kernel matrix by ``K ≈ K_ns K_ss⁺ K_sn``.  How the
centers are chosen sets the quality of that approximation:

* ``"uniform"`` — uniform sampling without replacement (paper 000, Algorithm 1 step 2);
* ``"kmeans++"`` — D² sampling in the kernel-induced distance
  ``d²(x, c) = k(x, x) + k(c, c) − 2 k(x, c)`` (Arthur & Vassilvitskii's seeding in feature
  space): each new center is drawn with probability proportional to its squared feature-space
  distance to the nearest center already chosen.  O(n) memory, ``n·s`` kernel evaluations;
* ``"rpcholesky"`` — randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber, 2023): each new
  center is drawn with probability proportional to the *residual* diagonal
  ``diag(K − K_ns K_ss⁻¹ K_sn)`` of the current Nyström approximation, i.e. proportional to the
  squared distance to the *span* of the centers already chosen.  ``n·s`` memory (one ``n × s``
  factor, checked against ``memory_budget``), ``O(n s² + n s d)`` time, drawn by the
  accelerated (rejection-sampling, BLAS-3) algorithm of Epperly, Tropp & Webber (2024):
  2.9–8.5× faster than the sequential one on phishing, ijcnn1, a8a and a9a at s = 0.1 n
  (``benchmarks/results/rpcholesky/``).

``"uniform"`` is the default, chosen by measurement: at ``s = 0.1 n`` the kernel-aware schemes
lower the Nyström trace error (3–240×) but keep LapRLS's test RMSE within 0.3 % of uniform
centers', at up to 25 s of selection for a 6 s fit (``benchmarks/results/center_selection/``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from .._memory import block_rows
from .ops import get_ops

__all__ = ["jittered_cholesky", "resolve_n_centers", "select_centers", "CENTER_METHODS"]


#: ``n_centers="auto"``: AUTO_MAX_CENTERS centers (or every point when there are fewer).
#: Chosen by measurement: s = 1,000 gives the worst seed 0.996 on two moons with one label per
#: class (n = 2,000, 20 seeds; ``benchmarks/results/defaults/``) where s = 500 gave 0.919, and
#: s = 2,000 was no more accurate than 1,000 on a9a at 1.7× the time (both ad hoc).
AUTO_MAX_CENTERS = 1000


def resolve_n_centers(n_centers, n_samples: int) -> int:
    """Number of Nyström centers from an int, a fraction of ``n_samples``, "auto" or ``"sqrt"``.

    Parameters
    ----------
    n_centers : int, float or {"auto", "sqrt"}
        An int in ``[1, n_samples]``; a float in ``(0, 1]`` meaning ``⌈n_centers · n_samples⌉``;
        ``"auto"`` meaning ``min(n_samples, AUTO_MAX_CENTERS)`` (1,000); ``"sqrt"`` meaning
        ``⌈√n_samples⌉`` (the paper-000 regime ``s ~ √n``).
    n_samples : int
        Number of candidate points.

    Returns
    -------
    int
    """
    if n_samples < 1:
        raise ValueError(f"need at least one sample to choose Nyström centers, got {n_samples}")
    if isinstance(n_centers, str):
        if n_centers == "auto":
            return min(AUTO_MAX_CENTERS, n_samples)
        if n_centers != "sqrt":
            raise ValueError(
                f"n_centers={n_centers!r} is not understood; use an int, a fraction in (0, 1], "
                "'auto' or 'sqrt'"
            )
        return min(math.ceil(math.sqrt(n_samples)), n_samples)
    if isinstance(n_centers, bool) or not isinstance(n_centers, numbers.Real):
        raise TypeError(
            f"n_centers must be an int, a float fraction in (0, 1], 'auto' or 'sqrt', got "
            f"{n_centers!r}"
        )
    if isinstance(n_centers, numbers.Integral):
        if not 1 <= n_centers <= n_samples:
            raise ValueError(
                f"n_centers={n_centers} must lie in [1, n_samples={n_samples}]; pass a fraction "
                "in (0, 1] or 'sqrt' to scale with the data"
            )
        return int(n_centers)
    if not 0 < n_centers <= 1:
        raise ValueError(
            f"a float n_centers is a fraction of the samples and must lie in (0, 1], "
            f"got {n_centers!r}"
        )
    return max(1, min(math.ceil(n_centers * n_samples), n_samples))


def _rng(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


def _uniform(X, n_centers, rng, kernel, candidates, memory_budget):
    return rng.choice(candidates, size=n_centers, replace=False)


def _row_keys(X, index):
    """An exact, hashable key per row of ``X[index]`` (dense or sparse): equal rows, equal keys."""
    rows = X[index]
    if sp.issparse(rows):
        rows = sp.csr_matrix(rows, copy=True)
        rows.sum_duplicates()
        rows.eliminate_zeros()
        rows.sort_indices()
        bounds = zip(rows.indptr[:-1], rows.indptr[1:])
        return [(rows.indices[a:b].tobytes(), rows.data[a:b].tobytes()) for a, b in bounds]
    rows = np.ascontiguousarray(rows)
    return [row.tobytes() for row in rows]


def _distinct_rows(X, centers, n_centers, rng, mask):
    """``centers`` without repeated points, topped up uniformly from ``mask`` to ``n_centers``.

    Two equal centers make ``K_ss`` exactly singular and ``H`` singular along their difference;
    on data with many repeated rows (skin_nonskin: integer RGB values) uniform sampling draws
    such pairs and CG on the singular system can break down.  The first occurrence is kept.
    """
    keys, kept = set(), []
    for i, key in zip(centers, _row_keys(X, centers)):
        if key not in keys:
            keys.add(key)
            kept.append(i)
    if len(kept) == len(centers):
        return centers
    mask = mask.copy()
    mask[centers] = False
    order = rng.permutation(np.flatnonzero(mask))
    pos = 0
    while len(kept) < n_centers and pos < order.size:
        batch = order[pos : pos + max(2 * (n_centers - len(kept)), 64)]
        pos += batch.size
        for i, key in zip(batch, _row_keys(X, batch)):
            if key not in keys:
                keys.add(key)
                kept.append(i)
                if len(kept) == n_centers:
                    break
    if len(kept) < n_centers:
        warnings.warn(
            f"X has only {len(kept)} distinct rows among the candidates: using {len(kept)} "
            f"Nyström centers instead of {n_centers}",
            UserWarning,
            stacklevel=3,
        )
    return np.asarray(kept, dtype=np.intp)


def _sample(weights, rng, taken):
    """Index drawn with probability ∝ ``weights``; uniform over the untaken ones when all ~0."""
    total = weights.sum()
    if not total > 0:
        return int(rng.choice(np.flatnonzero(~taken)))
    u = rng.random() * total
    return int(min(np.searchsorted(np.cumsum(weights), u, side="right"), weights.size - 1))


def _kmeanspp(X, n_centers, rng, kernel, candidates, memory_budget):
    Xc = X[candidates]
    diag = np.asarray(kernel.diag(Xc), dtype=np.float64)
    taken = np.zeros(candidates.size, dtype=bool)
    chosen = [int(rng.integers(candidates.size))]
    dist = np.full(candidates.size, np.inf)
    ops = get_ops()
    for _ in range(n_centers - 1):
        c = chosen[-1]
        taken[c] = True
        k_c = ops.kernel_matrix(kernel, Xc, Xc[c : c + 1], memory_budget)
        k_c = np.asarray(k_c, dtype=np.float64)[:, 0]
        np.minimum(dist, np.maximum(diag + diag[c] - 2 * k_c, 0), out=dist)
        dist[taken] = 0
        chosen.append(_sample(dist, rng, taken))
    return candidates[np.asarray(chosen)]


#: Proposals per round of the accelerated randomly pivoted Cholesky (:func:`_rpcholesky`).
RPCHOLESKY_BLOCK = 128


def _rpcholesky(X, n_centers, rng, kernel, candidates, memory_budget):
    return candidates[_rpcholesky_factor(X, n_centers, rng, kernel, candidates, memory_budget)[0]]


def _rpcholesky_factor(X, n_centers, rng, kernel, candidates, memory_budget):
    """Accelerated randomly pivoted Cholesky: ``(pivots, F)`` with ``F Fᵀ ≈ K`` on ``candidates``.

    The pivots are distributed exactly as sequential RPCholesky's (each drawn with probability
    ∝ the residual diagonal ``diag(K − F Fᵀ)``), but drawn by rejection sampling in rounds
    (Epperly, Tropp & Webber, "Embrace rejection: kernel matrix approximation by accelerated
    randomly pivoted Cholesky", 2024): propose ``b`` points i.i.d. ∝ the residual at the start of
    the round, then accept proposal ``j`` with probability ``r_j / d_j``, its current residual
    (the ``b × b`` block's Schur complement after the round's earlier acceptances) over its
    residual at the round's start.  The ``a`` accepted pivots then update ``F`` with one ``n × a``
    kernel block, one matrix product and one triangular solve, where the sequential algorithm
    does ``a`` matrix-vector passes over ``F``: the same ``O(n s²)`` flops as BLAS-3.  A point
    whose residual is below ``1e-14 ×`` the largest diagonal entry is never a pivot; once every
    point's is (the pivots span all of them), the rest are drawn uniformly and add no column.
    """
    n = candidates.size
    b_max = min(RPCHOLESKY_BLOCK, n_centers)
    # Per candidate: its row of F (s), of the round's kernel block and product (b each), and
    # its residual.  F is not blocked, so it must fit whole.
    per_row, what = 8 * (n_centers + 2 * b_max + 1), "randomly pivoted Cholesky factor"
    block_rows(n, per_row, memory_budget, what=what)
    block_rows(1, n * per_row, memory_budget, what=what)
    Xc = X[candidates]
    ops = get_ops()
    residual = np.asarray(kernel.diag(Xc), dtype=np.float64).copy()
    floor = 1e-14 * max(residual.max(initial=0.0), np.finfo(float).tiny)
    # Column-major: the filled columns F[:, :k] are one contiguous block for BLAS.
    F = np.zeros((n, n_centers), order="F")
    taken = np.zeros(n, dtype=bool)
    pivots = []
    k = 0  # columns of F filled
    while len(pivots) < n_centers:
        weights = np.where((residual > floor) & ~taken, residual, 0.0)
        total = weights.sum()
        if not total > 0:
            rest = rng.choice(np.flatnonzero(~taken), n_centers - len(pivots), replace=False)
            pivots.extend(int(i) for i in rest)
            break
        b = min(b_max, 2 * (n_centers - len(pivots)))
        cumulative = np.cumsum(weights)
        proposals = np.minimum(
            np.searchsorted(cumulative, rng.random(b) * total, side="right"), n - 1
        )
        start = weights[proposals]  # > 0: a zero weight is never drawn
        H = np.asarray(kernel(Xc[proposals], Xc[proposals]), dtype=np.float64)
        H -= ops.matmul(F[proposals, :k], F[proposals, :k].T)
        accept_draws = rng.random(b)
        accepted = []
        for j in range(b):
            if len(pivots) + len(accepted) == n_centers:
                break
            r_j = H[j, j]
            repeated = proposals[j] in proposals[accepted]
            if repeated or r_j <= floor or accept_draws[j] * start[j] >= r_j:
                continue
            accepted.append(j)
            H -= np.outer(H[:, j], H[j, :] / r_j)  # Schur complement: residuals given j
        if not accepted:
            continue
        S = proposals[accepted]
        new = slice(k, k + S.size)
        # The accepted pivots' residual columns G = K[:, S] − F Fᵀ[:, S], then F_new = G L⁻ᵀ
        # with L Lᵀ = G[S] (in place: BLAS trsm from the right on F's column block).
        # row-major a × n: a plain copy into F's columns
        F[:, new] = ops.kernel_matrix(kernel, Xc[S], Xc, memory_budget).T
        F[:, new] -= ops.matmul(F[:, :k], F[S, :k].T)
        block = F[S, new]
        L, _ = jittered_cholesky((block + block.T) / 2)
        F[:, new] = ops.solve_triangular(L, F[:, new], trans=True, overwrite_b=True, side="right")
        residual -= np.einsum("ij,ij->i", F[:, new], F[:, new])
        np.maximum(residual, 0, out=residual)
        taken[S] = True
        residual[taken] = 0
        pivots.extend(int(i) for i in S)
        k += S.size
    return np.asarray(pivots, dtype=np.intp), F[:, :k]


#: Lookup table of center-selection schemes: ``name -> f(X, s, rng, kernel, candidates, budget)``.
CENTER_METHODS = {"uniform": _uniform, "kmeans++": _kmeanspp, "rpcholesky": _rpcholesky}


def select_centers(
    X,
    n_centers,
    method="uniform",
    random_state=None,
    kernel=None,
    labeled=None,
    *,
    memory_budget=None,
):
    """Choose Nyström centers among the rows of ``X``.

    Parameters
    ----------
    X : array_like or sparse matrix of shape (n, d)
        Candidate points (labeled and unlabeled).
    n_centers : int, float or {"sqrt"}
        See :func:`resolve_n_centers`.
    method : {"uniform", "kmeans++", "rpcholesky"}
        Selection scheme (see the module docstring); the kernel-aware ones need ``kernel``.
    random_state : int, Generator, RandomState or None
        Seed for reproducible choices.
    kernel : callable, optional
        Kernel object with ``kernel(A, B)`` and ``kernel.diag(A)`` (required unless uniform).
    labeled : array_like of int or bool, optional
        Labeled points are taken first (all of them if ``n_centers`` allows, otherwise a uniform
        subset); the remaining centers are chosen by ``method`` among the other points.
    memory_budget : int, str or None
        Budget for ``"rpcholesky"``'s ``n × s`` factor.

    Returns
    -------
    ndarray of int, shape (n_centers,)
        Indices of distinct *points* of ``X`` (no two centers are equal rows: a repeated row
        would make ``K_ss`` singular; repeats are replaced by uniformly drawn rows), in order of
        selection.  Fewer, with a ``UserWarning``, when ``X`` has fewer distinct rows.
    """
    n = X.shape[0]
    s = resolve_n_centers(n_centers, n)
    try:
        select = CENTER_METHODS[method]
    except KeyError:
        raise ValueError(
            f"method={method!r} is not a center-selection scheme; choose one of "
            f"{sorted(CENTER_METHODS)}"
        ) from None
    if method != "uniform" and kernel is None:
        raise ValueError(f"method={method!r} measures kernel distances and needs a kernel")
    rng = _rng(random_state)
    first = np.zeros(0, dtype=np.intp)
    mask = np.ones(n, dtype=bool)
    if labeled is not None:
        labeled = np.asarray(labeled)
        first = np.flatnonzero(labeled) if labeled.dtype == bool else labeled.astype(np.intp)
        first = np.unique(first)
        if first.size > s:
            first = rng.choice(first, size=s, replace=False)
        mask[first] = False
    rest = s - first.size
    chosen = np.zeros(0, dtype=np.intp)
    if rest > 0:
        candidates = np.flatnonzero(mask)
        chosen = select(X, rest, rng, kernel, candidates, memory_budget)
    centers = np.concatenate([first, chosen]).astype(np.intp)
    return _distinct_rows(X, centers, s, rng, np.ones(n, dtype=bool))


def jittered_cholesky(K_ss, *, initial_jitter=1e-12, max_tries=12, growth=10.0, min_pivot=None):
    r"""Lower Cholesky factor of a symmetric PSD matrix, adding jitter until it is well posed.

    ``(L, jitter)`` with ``L Lᵀ = K_ss + jitter·I``, computed by the current array-operations
    layer: :meth:`semiscale.linalg.ops.ArrayOps.jittered_cholesky` documents the jitter schedule
    and the pivot floor (``min_pivot``; default ``s·u``).

    Raises
    ------
    numpy.linalg.LinAlgError
        When even the largest jitter fails (the matrix is not PSD or not finite).
    """
    return get_ops().jittered_cholesky(
        K_ss,
        initial_jitter=initial_jitter,
        max_tries=max_tries,
        growth=growth,
        min_pivot=min_pivot,
    )
