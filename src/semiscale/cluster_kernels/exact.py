r"""ClusK: the exact cluster kernel (Chapelle et al. 2002; paper 003 §2), and ClusK+RandSub."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._progress import stage
from .._random import as_random_state, check_random_state
from .._validation import validate_X
from ..linalg.blocked import kernel_matrix
from ..linalg.ops import get_ops
from ._base import EIGH_BLAS_THREADS, _ClusterKernelBase
from ._sizing import (
    STREAM_BYTES,
    _total,
    exact_bytes,
    exact_parts,
    heuristic_bytes,
    largest_subsample,
    stream_bytes,
)
from ._spectral import virtual_samples

__all__ = ["ClusterKernel"]


class ClusterKernel(_ClusterKernelBase):
    r"""The exact cluster kernel (ClusK): the O(n²) reference of paper 003, as a transformer.

    Paper 003 §2 (Chapelle, Weston & Schölkopf 2002): the full RBF affinity ``K``,
    :math:`D_{ii} = \sum_j K_{ij}`, :math:`L = D^{-1/2} K D^{-1/2} = U Σ U^\top`
    (``scipy.linalg.eigh``, every eigenpair, eigenvalues decreasing), a transfer function
    :math:`\tilde σ_i = φ(σ)_i`, :math:`\tilde L = U \tilde Σ U^\top`, :math:`\tilde D_{ii} =
    1/\tilde L_{ii}` and :math:`\tilde K = \tilde D^{1/2} \tilde L \tilde D^{1/2}`.  The
    transformer returns the virtual samples :math:`F = \tilde D^{1/2} U \tilde Σ^{1/2}`
    (eqs. 4–6), :math:`F F^\top = \tilde K` (tested against the closed form), so that a linear
    SVM on ``F`` is the kernel SVM of :math:`\tilde K` (Proposition 1).  New points get their
    rows by the Nyström extension of the eigenvectors (:mod:`semiscale.cluster_kernels._base`),
    which reproduces the fitted rows on the fitted points.

    It holds ``K`` and ``U`` (``2 n²`` floats): a budget that cannot is refused before any of
    it is allocated, unless ``max_samples`` asks for **ClusK+RandSub** (paper 003 §4): the fit
    on every labeled row plus the largest random subsample of unlabeled rows that fits, the
    other rows transformed by the extension.  ``fit`` sizes the fit without the ``n × m``
    virtual samples that only ``fit_transform`` allocates (``transform`` streams its kernel
    blocks, and a caller may transform the rows a block at a time), so ``fit`` admits a larger
    subsample in the same budget: the paper's inductive ClusK+RandSub.

    Parameters
    ----------
    gamma : float or {"median", "local", "mean"}, default="median"
        RBF width, :math:`k(a, b) = \exp(-γ\lVert a - b\rVert^2)`: a positive float, or a
        heuristic fixed from ``X`` in ``fit`` (:class:`~semiscale.kernels.RBF`; ``"median"``:
        σ = the median pairwise distance of a 1,000-point sample, γ = 1/(2σ²)).  Paper 003
        uses σ = 0.55: ``gamma=semiscale.kernels.gamma_from_sigma(0.55)`` (≈ 1.653).
    transfer : str or callable, default="poly-step"
        ``"linear"``, ``"step"``, ``"linear-step"``, ``"polynomial"``, ``"poly-step"``, or a
        callable ``(sigma, cut) -> new eigenvalues``.
    cut : "auto" or int, default="auto"
        The transfer's ``h``; ``"auto"``: ``l + 9`` with ``l`` the labeled rows of ``y`` in
        ``fit`` (0 when ``y`` is None).
    memory_budget : int, float, str or None, default=None
        Bytes for the fit's arrays (None: 25 % of the available memory), the data excepted.
    max_samples : int, "budget" or None, default=None
        None: fit on every row (refused when it does not fit).  ``"budget"``: every labeled
        row and as many random unlabeled ones as fit (ClusK+RandSub; ``fit`` counts no ``F``,
        ``fit_transform`` the ``n × m`` ``F``).  An int: that many rows in all (at least the
        labeled ones), every labeled row among them.
    unlabeled : scalar, default=-1
        The marker of unlabeled rows in ``y`` (NaN and missing values are unlabeled too).
    n_jobs : int or None, default=None
        Threads of the kernel products, as scikit-learn reads ``n_jobs``: None means 1
        unless inside a ``joblib.parallel_config(n_jobs=...)`` context, -1 means all cores.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the subsample and the ``gamma`` heuristic's sample.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    n_components_ : int
        ``k`` = the points fitted on (every eigenpair is kept).
    n_fit_samples_ : int
        The points fitted on (``n`` without subsampling).
    fit_indices_ : ndarray of shape (n_fit_samples_,)
        Their rows in the training ``X``.
    cut_ : int
    eigenvalues_ : ndarray of shape (k,)
        Eigenvalues of ``L``, decreasing (negative rounding errors clipped to 0).
    transferred_eigenvalues_ : ndarray of shape (k,)
    degrees_ : ndarray of shape (k,)
        The fitted points' degrees :math:`D_{ii}`.
    X_fit_ : ndarray or sparse matrix of shape (k, n_features)
        The fitted points (the training ``X`` itself without subsampling).
    components_ : ndarray of shape (k, k)
        The extension weights :math:`G = D^{-1/2} U Σ^+ \tilde Σ^{1/2}`.
    kernel_ : RBF
    estimated_bytes_ : int
        The fit's estimated peak: without ``F`` after ``fit``, with it after
        ``fit_transform``.
    n_features_in_ : int
    timings_ : dict

    Examples
    --------
    >>> from semiscale.cluster_kernels import ClusterKernel
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(200, noise=0.1, random_state=0)
    >>> F = ClusterKernel(random_state=0).fit_transform(X)
    >>> F.shape
    (200, 200)
    """

    _parameter_constraints: dict = {
        **_ClusterKernelBase._parameter_constraints,
        "max_samples": [Interval(Integral, 2, None, closed="left"), StrOptions({"budget"}), None],
    }

    def __init__(
        self,
        *,
        gamma="median",
        transfer="poly-step",
        cut="auto",
        memory_budget=None,
        max_samples=None,
        unlabeled=-1,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.gamma = gamma
        self.transfer = transfer
        self.cut = cut
        self.memory_budget = memory_budget
        self.max_samples = max_samples
        self.unlabeled = unlabeled
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _basis(self):
        return self.X_fit_

    def _fit_size(self, n, d, n_labeled, sparse, want_F, nnz=None):
        """Points to fit on and the estimated bytes; refuses before anything is allocated.

        ``fit`` (``want_F`` False) allocates no ``n × m`` virtual samples, so its estimate and
        the subsample it admits differ from ``fit_transform``'s.
        """
        if self.max_samples == "budget":
            return largest_subsample(
                n,
                d,
                self.memory_budget,
                n_labeled,
                gamma=self.gamma,
                sparse=sparse,
                virtual_samples=want_F,
                nnz=nnz,
            )
        m = n if self.max_samples is None else min(int(self.max_samples), n)
        if m < n_labeled:
            raise ValueError(
                f"max_samples={self.max_samples} is below the {n_labeled} labeled rows, which "
                f"are all fitted on; pass max_samples >= {n_labeled} or 'budget'"
            )
        parts = exact_parts(
            n, m, d, subsample=m < n, sparse=sparse, virtual_samples=want_F, nnz=nnz
        )
        peak = exact_bytes(n, m, d, subsample=m < n, sparse=sparse, virtual_samples=want_F, nnz=nnz)
        needed = _total(peak, heuristic_bytes(n, d, self.gamma))
        budget = parse_memory_budget(self.memory_budget)
        if needed > budget:
            listed = ", ".join(f"{k} {format_bytes(v)}" for k, v in parts.items())
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(budget)} is too small for the exact cluster "
                f"kernel on {m} points: its arrays ({listed}; K is released before F) need "
                f"{format_bytes(needed)} at their peak; raise memory_budget to at least "
                f"{needed} bytes ({format_bytes(needed)}), or pass max_samples='budget' "
                "(ClusK+RandSub), or use NystromClusterKernel"
            )
        return m, needed

    def _columns_for_budget(self, n, d, n_labeled, memory_budget, *, sparse, want_F, nnz=None):
        """Columns ``m`` of ``F`` a fit with ``memory_budget`` would give (0: refused).

        Allocates nothing: a caller (:class:`~semiscale.models.StorageFitClassifier`) reserves
        its own part of a budget before handing the rest to this transformer.
        """
        if self.max_samples != "budget":
            return n if self.max_samples is None else min(int(self.max_samples), n)
        try:
            return largest_subsample(
                n,
                d,
                memory_budget,
                n_labeled,
                gamma=self.gamma,
                sparse=sparse,
                nnz=nnz,
                virtual_samples=want_F,
            )[0]
        except MemoryBudgetError:
            return 0

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, want_F):
        start = time.perf_counter()
        name = type(self).__name__
        X = validate_X(self, X, reset=True, min_samples=2)
        n, d = X.shape
        labeled = self._labeled_mask(y, n)
        n_labeled = int(labeled.sum())
        m, self.estimated_bytes_ = self._fit_size(
            n, d, n_labeled, sp.issparse(X), want_F, X.nnz if sp.issparse(X) else None
        )
        self._log_sizes(f"{m} of {n} points fitted on, {self.estimated_bytes_} bytes estimated")
        seed = as_random_state(self.random_state)
        rng = check_random_state(seed)
        with stage(f"[{name}] kernel width on {n} points", self.verbose):
            self.kernel_ = self._kernel(X, seed)
        if m < n:
            others = np.flatnonzero(~labeled)
            drawn = rng.choice(others.shape[0], m - n_labeled, replace=False)
            self.fit_indices_ = np.sort(np.concatenate([np.flatnonzero(labeled), others[drawn]]))
            self.X_fit_ = X[self.fit_indices_]
        else:
            self.fit_indices_ = np.arange(n)
            self.X_fit_ = X
        # fit_transform streams F's other rows too; fit only the m x m kernel
        stream = stream_bytes(
            n if want_F else m, m, d, sparse=sp.issparse(X), nnz=X.nnz if sp.issparse(X) else None
        )
        with stage(f"[{name}] {m}x{m} kernel and its Laplacian", self.verbose):
            L = np.asarray(
                kernel_matrix(self.kernel_, self.X_fit_, None, 8 * m * m + stream, self.n_jobs),
                dtype=np.float64,
            )
            self.degrees_ = L.sum(axis=1)  # ≥ K_ii = 1 for the RBF
            inv_sqrt = 1.0 / np.sqrt(self.degrees_)
            L *= inv_sqrt[:, None]
            L *= inv_sqrt[None, :]
        with stage(f"[{name}] eigendecomposition of the {m}x{m} L", self.verbose):
            with get_ops().blas_threads(EIGH_BLAS_THREADS):
                sigma, U = get_ops().eigh(L, overwrite_a=True)
            del L
        self.cut_ = self._resolve_cut(n_labeled, m)
        F = None
        if want_F:
            F_fit, _ = virtual_samples(U, sigma, self.transfer, self.cut_)
            if m == n:
                F = F_fit
            else:
                F = np.empty((n, m))
                F[self.fit_indices_] = F_fit
                del F_fit
        self.components_, self.eigenvalues_, self.transferred_eigenvalues_ = self._weights(
            U, sigma, self.degrees_, scale=1.0
        )
        self.n_components_ = self.n_fit_samples_ = m
        self._log_sizes(
            f"eigenvalues {self.eigenvalues_[0]:.4g} .. {self.eigenvalues_[-1]:.4g}, cut h = "
            f"{self.cut_}"
        )
        if want_F and m < n:
            with stage(f"[{name}] extension to the {n - m} other points", self.verbose):
                rest = np.setdiff1d(np.arange(n), self.fit_indices_)
                step = max(1, STREAM_BYTES // (8 * m))
                for start_row in range(0, rest.shape[0], step):
                    rows = rest[start_row : start_row + step]
                    F[rows] = self._extend(X[rows])
        self.timings_ = {"total": time.perf_counter() - start}
        return F if want_F else self
