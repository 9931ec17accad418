r"""SoCK: the stochastic cluster kernel of paper 003 (Algorithm 1), within a memory budget.

The top eigensystem of :math:`L = D^{-1/2} K D^{-1/2}` is read off the solution of

.. math::

    \hat L = \arg\min_Z \tfrac12 E\,‖Z − L_ξ‖_F^2 + λ‖Z‖_* = D_λ[L]
    = \sum_{i:\,σ_i > λ} (σ_i − λ)\,u_i u_i^⊤

(paper 003, eqs. 7–9), solved by stochastic proximal gradient descent (eq. 10):

.. math::

    Z_1 = 0,\qquad Z_{t+1} = D_{η_t λ}\big[(1 − η_t) Z_t + η_t L_t\big],\qquad η_t = 2/t,

where :math:`L_t = D^{-1/2} Φ_t Φ_t^⊤ D^{-1/2}` with fresh random Fourier features
:math:`Φ_t ∈ ℝ^{n×a}` (:func:`~semiscale.linalg.lowrank.rbf_random_features`,
:math:`E[Φ_tΦ_t^⊤] = K`, hence :math:`E[L_t] = L`).  Neither :math:`L_t` nor :math:`Z_t` is ever
formed: :math:`Z_t = U_t\,\mathrm{diag}(s_t)\,U_t^⊤` (n × b) and :math:`L_t = P_tP_t^⊤` with
:math:`P_t = D^{-1/2}Φ_t`, and each step is the factored SVT of
:func:`~semiscale.linalg.lowrank.svt_update` (Avron et al. 2012, Lemma 2.4).  With
:math:`η_t = 2/t` the unthresholded iterate (λ = 0) is, for T ≥ 2, the weighted mean
:math:`Z_{T+1} = \sum_{t=2}^{T} \frac{2(t-1)}{T(T-1)} L_t` (:math:`η_2 = 1` discards
:math:`Z_2 = 2L_1`), so :math:`E[Z_{T+1}] = L`; at T = 1 it is :math:`2L_1`, twice L in
expectation (both tested), as Algorithm 1 is written (:math:`η_1 = 2`).  Zhang et al. (2016)
bound :math:`‖Z_{T+1} − \hat L‖_F^2 = O(\log\log T / T)` with high probability.

The eigenpairs :math:`(u_i, \hat σ_i)` of :math:`Z_{T+1}` give :math:`σ_i = \hat σ_i + λ`
(Algorithm 1 line 8), the transfer function and the virtual samples ``F``
(:func:`~semiscale.cluster_kernels._spectral.virtual_samples`, eqs. 4–6).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._memory import check_fits, parse_memory_budget
from .._progress import log, stage
from .._random import as_random_state, check_random_state
from .._validation import validate_X
from ..linalg.lowrank import (
    low_rank_distance,
    random_features_bytes,
    rbf_random_features,
    svt_update,
    svt_update_bytes,
)
from ..linalg.ops import get_ops
from ._base import _ClusterKernelBase
from ._sizing import DEFAULT_MAX_COMPONENTS, degree_bytes, heuristic_bytes, stream_bytes
from ._spectral import kernel_degrees, virtual_samples
from .transfer import resolve_transfer

__all__ = ["StochasticClusterKernel", "stochastic_parts", "stochastic_sizes"]

#: BLAS threads of the exact degrees and the SVT steps (thin QR, ``(a + b)``-sized eigenproblem,
#: skinny products); the degrees' blocks still run on ``n_jobs`` threads.  On the shared 2-core
#: development machine at load 8, a default fit on splice (1,000 × 60, ``threshold=0.003``) took
#: 79.0 s with OpenBLAS's default threads (53.9 s of it in the 20 thin QRs of 1,000 × 64
#: columns, 15.5 s in the core eigenproblems; cProfile) and 1.24 s in one thread
#: (``OPENBLAS_NUM_THREADS=1``): oversubscribed threads spin in these small LAPACK calls.  The
#: degrees of 12,000 a9a rows (dense, γ = 1/32) at load 3.4: 3.92 s with the default threads,
#: 1.87 s in one (``n_jobs=None``).
BLAS_THREADS = 1


def stochastic_parts(n, d, a, b, *, sparse=False, nnz=None) -> dict:
    r"""The phases of a SoCK fit and their arrays (phase -> {name -> bytes}).

    Paper 003 (§3.1) counts :math:`(d + 2(a_t + b_t))\,n·8` bytes.  Here the data are the
    caller's (not counted, as in :mod:`semiscale.cluster_kernels._sizing`) and the fit holds,
    phase by phase (float64 entries):

    - **degrees**: the degree vector ``n`` and the streamed kernel blocks with their ``B``-side
      operands (:func:`~semiscale.cluster_kernels._sizing.degree_bytes`: the n × n product's
      bound for dense ``X``, one tile's for sparse ``X``, whose ``nnz`` stored entries bound
      every other sparse operand);
    - **a step** (the peak): the degrees and :math:`D^{-1/2}` (``2n``), the features
      :math:`P_t` (``a n``, projected and QR-factored in place), the iterate's factor
      :math:`U_t` (``b n``) and the new one :math:`U_{t+1}` (``b n``), the frequencies
      (``d a/2``), the feature block, the projection block and three ``(a + b)²`` core matrices
      (:func:`~semiscale.linalg.lowrank.random_features_bytes`,
      :func:`~semiscale.linalg.lowrank.svt_update_bytes`);
    - **the virtual samples**: ``U`` (``k n``, turned into the extension weights in place),
      ``F`` (``k n``) and the degrees, ``k ≤ b``;
    - **transform of the n points**: the weights, ``F`` and the streamed blocks over all ``n``
      fitted points.
    """
    n, d, a, b = int(n), int(d), int(a), int(b)
    stream = stream_bytes(n, n, d, sparse=sparse, nnz=nnz)
    degrees = degree_bytes(n, d, sparse=sparse, nnz=nnz)
    return {
        "degrees": {"the degrees": 8 * n, "the streamed kernel blocks": degrees},
        "a step": {
            "the degrees and D^-1/2": 16 * n,
            f"the {n}x{a} random features": 8 * n * a,
            f"the {n}x{b} iterate factor": 8 * n * b,
            "the frequencies and the feature block": random_features_bytes(d, a),
            "the new factor, the SVT core and block": svt_update_bytes(n, b, a, max_rank=b),
        },
        "virtual samples": {
            "the degrees": 8 * n,
            f"the {n}x{b} eigenvectors (extension weights)": 8 * n * b,
            f"the {n}x{b} virtual samples F": 8 * (n * b + n),
        },
        "transform": {
            f"the {n}x{b} extension weights and F": 16 * n * b + 8 * n,
            "the streamed kernel blocks": stream,
        },
    }


def stochastic_sizes(
    n, d, memory_budget, *, n_random_features, max_rank=None, gamma="median", sparse=False, nnz=None
):
    """SoCK's sizes ``(a, b, estimated_bytes)`` for ``n`` points within ``memory_budget``.

    The estimate is the largest phase of :func:`stochastic_parts` (and the ``gamma``
    heuristic's measurement, :func:`~semiscale.cluster_kernels._sizing.heuristic_bytes`,
    released before any of them).

    Parameters
    ----------
    n, d : int
        Points and features.
    memory_budget : int, str or None
    n_random_features : int
        ``a`` (even).
    max_rank : int, "budget" or None
        ``b``.  None: the largest that fits, at most
        :data:`~semiscale.cluster_kernels._sizing.DEFAULT_MAX_COMPONENTS` (a step costs
        :math:`O(n b (a + b))` flops, so a large budget must not make every step slow);
        ``"budget"``: the largest that fits; an int: that, refused when it does not fit.
        Always at most ``n``.
    gamma : float or str
        The kernel's width (a heuristic name adds its sample's bytes).
    sparse : bool, default=False
        Whether ``X`` is sparse (its streamed products' operands are counted by ``nnz``).
    nnz : int or None
        Stored entries of a sparse ``X`` (None: every row counted full).

    Returns
    -------
    a, b, estimated_bytes : int

    Raises
    ------
    MemoryBudgetError
        When not even ``b = 1`` (or the given ``max_rank``) fits, naming ``memory_budget``, the
        value refused and the fix.  Nothing is allocated.
    """
    n, d, a = int(n), int(d), int(n_random_features)
    budget = parse_memory_budget(memory_budget)
    heuristic = heuristic_bytes(n, d, gamma)

    def total(b):
        phases = stochastic_parts(n, d, a, b, sparse=sparse, nnz=nnz)
        return max(max(sum(p.values()) for p in phases.values()), heuristic)

    top = n
    if isinstance(max_rank, Integral):
        b = min(int(max_rank), top)
    else:
        if max_rank is None:
            top = min(top, DEFAULT_MAX_COMPONENTS)
        lo, hi = 1, top  # the largest b with total(b) <= budget: total grows with b
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if total(mid) <= budget else (lo, mid - 1)
        b = lo
    if total(b) > budget:
        phases = stochastic_parts(n, d, a, b, sparse=sparse, nnz=nnz)
        name = max(phases, key=lambda key: sum(phases[key].values()))
        given_b = isinstance(max_rank, Integral)
        if sum(phases[name].values()) < heuristic:
            parts, fix = {"the gamma heuristic's sample": heuristic}, "pass a numeric gamma"
        else:
            # only what grows with a or b: the degrees' and a transform's streamed blocks do not
            parts, fix = (
                phases[name],
                {
                    "a step": f"lower n_random_features (a = {a})"
                    + (f" or max_rank (b = {b})" if given_b else ""),
                    "virtual samples": f"lower max_rank (b = {b})" if given_b else "",
                }.get(name, ""),
            )
        check_fits(parts, budget, what=f"SoCK on {n} points ({name})", fix=fix)
    return a, b, int(total(b))


class StochasticClusterKernel(_ClusterKernelBase):
    r"""Stochastic cluster kernel (SoCK, paper 003 Algorithm 1): virtual samples in a budget.

    Finds the top eigensystem of :math:`L = D^{-1/2}KD^{-1/2}` (RBF ``K``, exact degrees ``D``)
    by ``n_iter`` stochastic proximal SVT steps on random Fourier features (module docstring),
    applies the transfer function and returns the virtual samples ``F`` (one row per point,
    :math:`FF^⊤` the cluster kernel; a linear SVM on ``F`` is the kernel SVM, Proposition 1).
    Memory is linear in ``n``: :func:`stochastic_sizes` chooses the iterate's rank ``b`` from
    ``memory_budget``.

    Parameters
    ----------
    n_iter : int, default=20
        T, the number of stochastic steps (paper 003 uses 20).
    n_random_features : int, default=64
        :math:`a_t`, random Fourier features per step (even: cos/sin pairs).
    max_rank : int, "budget" or None, default=None
        :math:`b_t`, the largest rank a step keeps: a truncation to the largest eigenvalues that
        Algorithm 1 does not have (its rank is whatever the threshold leaves), added to bound
        memory.  None: the largest the budget allows, at most 256
        (:data:`~semiscale.cluster_kernels._sizing.DEFAULT_MAX_COMPONENTS`, as NysCK's rank);
        ``"budget"``: the largest the budget allows.
    threshold : float, default=0.001
        λ of :math:`D_λ[L]`: the eigenvalues of L above λ are found (L's are at most 1, the top
        one exactly 1); step t thresholds at :math:`η_t λ`.  0 turns the thresholding off (the
        iterate is then the weighted mean of the :math:`L_t`, truncated to ``max_rank``).
    gamma : float or {"median", "local", "mean"}, default="median"
        RBF width, :math:`k(a, b) = \exp(-γ\lVert a - b\rVert^2)` (as
        :class:`~semiscale.cluster_kernels.NystromClusterKernel`).
    transfer : str or callable, default="poly-step"
        See :func:`~semiscale.cluster_kernels.transfer.resolve_transfer`.
    cut : "auto" or int, default="auto"
        The transfer's ``h``; ``"auto"``: ``l + 9`` with ``l`` the labeled rows of ``y``.  When
        ``h ≥ k`` a :class:`~semiscale.cluster_kernels.CutWarning` says that poly-step is a
        square root of every eigenvalue found.
    memory_budget : int, float, str or None, default=None
        Bytes for the fit's arrays, the data excepted (:func:`stochastic_parts`); None: 25 % of
        the available memory.
    unlabeled : scalar, default=-1
        The marker of unlabeled rows in ``y`` (only their count is used).
    n_jobs : int or None, default=None
        Threads of the exact degrees and of :meth:`transform`'s kernel rows, as scikit-learn
        reads ``n_jobs``: None means 1 unless inside a ``joblib.parallel_config(n_jobs=...)``
        context, -1 means all cores.
    random_state : None, int, RandomState, Generator or SeedSequence, default=None
        Draws the random features and the ``gamma`` heuristic's sample.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    n_components_ : int
        k, the rank of :math:`Z_{T+1}` (columns of ``F``).
    n_random_features_, max_rank_ : int
        The ``a`` and ``b`` used.
    cut_ : int
        The transfer's ``h``.
    eigenvalues_ : ndarray of shape (k,)
        :math:`σ_i = \hat σ_i + λ` (Algorithm 1 line 8), decreasing.
    transferred_eigenvalues_ : ndarray of shape (k,)
    degrees_ : ndarray of shape (n,)
        :math:`D_{ii} = \sum_j K_{ij}`, exact (one streamed pass, :math:`O(n^2 d)` time).
    components_ : ndarray of shape (n, k)
        The extension weights :math:`G = D^{-1/2} U Σ^{-1} \tilde Σ^{1/2}` on the fitted points
        (``U`` the eigenvectors of :math:`Z_{T+1}`).
    kernel_ : RBF
    estimated_bytes_ : int
        The fit's accounted peak (:func:`stochastic_sizes`).
    approximation_errors_ : ndarray of shape (n_iter,)
        :math:`‖Z_{t+1} − R‖_F` after each step, only when ``fit`` got ``reference=R``.
    n_features_in_ : int
    timings_ : dict
        Seconds of the fit: ``"degrees"``, ``"steps"``, ``"total"``.

    Notes
    -----
    :meth:`fit_transform` returns Algorithm 1's ``F`` from the eigenvectors of
    :math:`Z_{T+1}` (line 10).  :meth:`transform` extends those eigenvectors to any points by
    the Nyström formula through the exact kernel rows, :math:`u_i(x) = L(x, X)\,u_i / σ_i`
    (:func:`~semiscale.cluster_kernels._spectral.extend_eigenvectors`), not through a feature
    map (:math:`Z_{T+1}` mixes T independent ones).  On a fitted point it gives
    :math:`(Lu_i)_j / σ_i`, which is :math:`u_{ji}` only as far as :math:`u_i` is an
    eigenvector of L: ``transform(X_fit)`` approaches ``fit_transform(X_fit)`` as T grows
    (tested), it does not equal it.

    Examples
    --------
    >>> from semiscale.cluster_kernels import StochasticClusterKernel
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(300, noise=0.1, random_state=0)
    >>> sock = StochasticClusterKernel(memory_budget="64MiB", random_state=0)
    >>> F = sock.fit_transform(X)
    >>> F.shape == (300, sock.n_components_)
    True
    """

    _parameter_constraints: dict = {
        **_ClusterKernelBase._parameter_constraints,
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_random_features": [Interval(Integral, 2, None, closed="left")],
        "max_rank": [Interval(Integral, 1, None, closed="left"), StrOptions({"budget"}), None],
        "threshold": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_iter=20,
        n_random_features=64,
        max_rank=None,
        threshold=0.001,
        gamma="median",
        transfer="poly-step",
        cut="auto",
        memory_budget=None,
        unlabeled=-1,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_iter = n_iter
        self.n_random_features = n_random_features
        self.max_rank = max_rank
        self.threshold = threshold
        self.gamma = gamma
        self.transfer = transfer
        self.cut = cut
        self.memory_budget = memory_budget
        self.unlabeled = unlabeled
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _basis(self):
        return self.X_fit_

    def fit(self, X, y=None, *, reference=None):
        """Fit SoCK on all points ``X`` (``y`` only counts the labeled rows: ``cut="auto"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            Labels with ``unlabeled`` marking unlabeled rows; only their number ``l`` is used.
        reference : ndarray of shape (n_samples, n_samples), optional
            A dense matrix (e.g. the SVT solution :math:`D_λ[L]` on small data): the fit records
            :math:`‖Z_{t+1} − R‖_F` after each step in ``approximation_errors_``.  An
            ``n × n`` product per step: for studies on small data only.

        Returns
        -------
        self
        """
        self._fit(X, y, want_F=False, reference=reference)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, want_F, reference=None):
        start = time.perf_counter()
        name = type(self).__name__
        if self.n_random_features % 2:
            raise ValueError(
                f"n_random_features must be even (cos/sin pairs), got {self.n_random_features!r};"
                " pass an even number"
            )
        resolve_transfer(self.transfer)
        X = validate_X(self, X, reset=True, min_samples=2)
        n, d = X.shape
        n_labeled = int(self._labeled_mask(y, n).sum())
        if reference is not None and np.shape(reference) != (n, n):
            raise ValueError(
                f"reference must be an ({n}, {n}) array, got shape {np.shape(reference)}"
            )
        # sizes first: an impossible budget is refused before any array exists
        a, b, self.estimated_bytes_ = stochastic_sizes(
            n,
            d,
            self.memory_budget,
            n_random_features=self.n_random_features,
            max_rank=self.max_rank,
            gamma=self.gamma,
            sparse=sp.issparse(X),
            nnz=X.nnz if sp.issparse(X) else None,
        )
        self._log_sizes(f"a = {a} features, b = {b} rank, {self.estimated_bytes_} bytes estimated")
        seed = as_random_state(self.random_state)
        rng = check_random_state(seed)
        with stage(f"[{name}] kernel width on {n} points", self.verbose):
            self.kernel_ = self._kernel(X, seed)
        with (
            stage(f"[{name}] exact degrees of {n} points", self.verbose),
            get_ops().blas_threads(BLAS_THREADS),
        ):
            degrees = kernel_degrees(
                self.kernel_,
                X,
                degree_bytes(n, d, sparse=sp.issparse(X), nnz=X.nnz if sp.issparse(X) else None),
                self.n_jobs,
            )
        seconds = {"degrees": time.perf_counter() - start}
        inv_sqrt = np.divide(1.0, np.sqrt(degrees), out=np.zeros_like(degrees), where=degrees > 0)
        lam = float(self.threshold)
        U, s = np.zeros((n, 0)), np.zeros(0)
        errors = []
        with (
            stage(f"[{name}] {self.n_iter} steps (a = {a}, b = {b})", self.verbose),
            get_ops().blas_threads(BLAS_THREADS),
        ):
            for t in range(1, self.n_iter + 1):
                tick = time.perf_counter()
                eta = 2.0 / t
                P = rbf_random_features(X, a, self.kernel_.gamma, rng)
                P *= inv_sqrt[:, None]  # L_t = P Pᵀ = D^{-1/2} Φ_t Φ_tᵀ D^{-1/2}
                U, s = svt_update(U, s, P, 1.0 - eta, eta, eta * lam, b, overwrite_p=True)
                del P
                if reference is not None:
                    errors.append(low_rank_distance(U, s, reference))
                log(
                    f"[{name}] step {t}/{self.n_iter}: rank {s.size}, smallest kept "
                    f"{s.min(initial=0.0):.3g}, {time.perf_counter() - tick:.2f} s",
                    self.verbose,
                    level=2,
                )
        seconds["steps"] = time.perf_counter() - start - seconds["degrees"]
        if s.size == 0:
            # F would have no column: a classifier on it fails far from the cause
            raise ValueError(
                f"threshold={self.threshold!r} left no eigenvalue: the SoCK iterate after "
                f"{self.n_iter} steps is 0 (L's eigenvalues are at most 1, and step t thresholds "
                "at 2·threshold/t); pass a smaller threshold, e.g. the default 0.001"
            )
        # The iterate is PSD (1 − η_t ≥ 0 from t = 2 on, Z_1 = 0): svt_update's order by
        # magnitude is the decreasing order, and line 8 adds λ back.
        sigma = s + lam
        k = sigma.size
        self.cut_ = self._resolve_cut(n_labeled, k)
        F = None
        if want_F:
            F, _ = virtual_samples(U, sigma, self.transfer, self.cut_)
        self.components_, self.eigenvalues_, self.transferred_eigenvalues_ = self._weights(
            U, sigma, degrees, scale=1.0
        )
        self.X_fit_ = X
        self.degrees_ = degrees
        self.n_components_, self.n_random_features_, self.max_rank_ = k, a, b
        if reference is not None:
            self.approximation_errors_ = np.asarray(errors)
        elif hasattr(self, "approximation_errors_"):
            del self.approximation_errors_
        seconds["total"] = time.perf_counter() - start
        self.timings_ = seconds
        self._log_sizes(
            f"rank k = {k}, eigenvalues {sigma.max(initial=0):.4g} .. {sigma.min(initial=0):.4g},"
            f" cut h = {self.cut_}"
        )
        return F if want_F else self
