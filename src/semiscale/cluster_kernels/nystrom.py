r"""NysCK: the Nyström cluster kernel of paper 003 §3.2 (Algorithm 2), sized by the budget."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._memory import MemoryBudgetError
from .._progress import stage
from .._random import as_random_state, check_random_state
from .._validation import validate_X
from ..linalg.blocked import kernel_matrix, kernel_rmatmul
from ..linalg.ops import get_ops
from ._base import EIGH_BLAS_THREADS, _ClusterKernelBase
from ._sizing import nystrom_sizes, stream_bytes

__all__ = ["NystromClusterKernel"]


class NystromClusterKernel(_ClusterKernelBase):
    r"""Nyström cluster kernel (NysCK, paper 003 Algorithm 2): virtual samples in a budget.

    ``s`` landmarks are drawn uniformly without replacement; ``C = K(X, X_S)`` (``n × s``) and
    ``W = K(X_S, X_S)`` give the rank-``k`` Nyström eigensystem of eqs. (11)–(13):

    .. math::

        Σ_k = \frac{n}{s} Σ_{W,k},\qquad U_k = \sqrt{\frac{s}{n}}\; C\, U_{W,k}\, Σ_{W,k}^{+},

    then a transfer function (:mod:`~semiscale.cluster_kernels.transfer`) and eqs. (4)–(6) give
    the virtual samples :math:`F = \tilde D^{1/2} U_k \tilde Σ_k^{1/2}`, whose rows have unit
    length and :math:`F F^\top ≈ \tilde K`, the cluster kernel.  A linear SVM on ``F`` is the
    kernel SVM of :math:`\tilde K` (Proposition 1).

    **Two readings** (``approximation``).  ``"laplacian"`` (default) takes the Nyström
    approximation of :math:`L = D^{-1/2} K D^{-1/2}` itself — the columns :math:`C_L = D^{-1/2}
    C D_S^{-1/2}` and :math:`W_L = D_S^{-1/2} W D_S^{-1/2}` — so that the transfer acts on
    eigenvalues of ``L`` as in ClusK and SoCK, and ``s = n``, ``k = n`` is
    :class:`~semiscale.cluster_kernels.ClusterKernel` exactly (tested).  ``"kernel"`` is the
    paper's literal reading: the Nyström eigensystem of ``K``, transferred, then eqs. (3)–(6).

    **The degrees.**  Row ``i`` of :math:`U_k \tilde Σ^{1/2}` is :math:`\sqrt{s/n}\,
    d_i^{-1/2}` times row ``i`` of :math:`C D_S^{-1/2} U_W Σ_W^+ \tilde Σ^{1/2}`, and eq. (5)'s
    :math:`\tilde D^{1/2}` scales every row to unit length: these positive factors cancel.  So
    ``F`` needs the degrees of the ``s`` landmarks only (:math:`D_S = C^\top 1`, exact, over all
    ``n`` points: one streamed pass, ``O(n s d)``), never the ``n``-vector the paper computes in
    ``O(n^2 d)``.  In the ``"kernel"`` reading the degrees cancel altogether (eq. 5 normalizes
    the rows of :math:`D^{-1/2} U_k \tilde Σ^{1/2}`), so none is computed.

    **Memory.**  ``C`` is never stored: it is streamed through the ops layer once for
    :math:`D_S` and once for ``F = \mathrm{rows}(C G)`` with the ``s × k`` weights
    :math:`G = D_S^{-1/2} U_W Σ_W^+ \tilde Σ^{1/2}`, so a fit holds :math:`s^2 + 3sk + nk`
    floats and the streamed blocks (:mod:`semiscale.cluster_kernels._sizing` counts every
    array), where the paper counts :math:`(d + s + 2k) n`.  The Nyström eigenvectors are not
    orthonormalized (the paper does not either): :math:`U_k Σ_k U_k^\top = C W_k^+ C^\top` holds
    without it, and orthonormalizing would need ``C`` (or an ``n × k`` QR) in memory.

    Parameters
    ----------
    n_components : int, "budget" or None, default=None
        The rank ``k`` (at most ``s``).  None: the largest ``k`` ≤ ``DEFAULT_MAX_COMPONENTS``
        (256) whose arrays fit ``memory_budget``; ``"budget"``: the largest that fits, up to
        ``n`` (paper 003's storage fit: the budget decides); an int: that rank, refused when
        it does not fit.
    n_landmarks : int or None, default=None
        ``s``, the columns sampled (at most ``n``).  None: paper 003's :math:`s = k \ln k`,
        at least ``k``.
    approximation : {"laplacian", "kernel"}, default="laplacian"
        What the Nyström method approximates: ``L`` (ClusK's spectrum; exact at ``s = n``) or
        ``K`` (the paper's literal reading).
    gamma : float or {"median", "local", "mean"}, default="median"
        RBF width, :math:`k(a, b) = \exp(-γ\lVert a - b\rVert^2)`: a positive float, or a
        heuristic fixed from ``X`` in ``fit`` (:class:`~semiscale.kernels.RBF`; ``"median"``:
        σ = the median pairwise distance of a 1,000-point sample, γ = 1/(2σ²), the library's
        default for kernels that see the whole data).  Paper 003 uses σ = 0.55, i.e.
        ``gamma=semiscale.kernels.gamma_from_sigma(0.55)`` (≈ 1.653).
    transfer : str or callable, default="poly-step"
        ``"linear"``, ``"step"``, ``"linear-step"``, ``"polynomial"``, ``"poly-step"``, or a
        callable ``(sigma, cut) -> new eigenvalues``
        (:func:`~semiscale.cluster_kernels.transfer.resolve_transfer`).
    cut : "auto" or int, default="auto"
        The transfer's ``h``.  ``"auto"``: ``l + 9`` with ``l`` the labeled rows of ``y`` in
        ``fit`` (0 when ``y`` is None).  When ``h ≥ k`` (many labels, a small budget) the
        step transfers keep every eigenvalue and poly-step is a square root: a
        :class:`~semiscale.cluster_kernels.CutWarning` says so and ``cut_`` is reported beside
        ``n_components_``.
    memory_budget : int, float, str or None, default=None
        Bytes for the fit's arrays (``"400MB"``; None: 25 % of the available memory), the data
        excepted.  Decides ``k`` and ``s`` when they are not given.
    unlabeled : scalar, default=-1
        The marker of unlabeled rows in ``y`` (NaN and missing values are unlabeled too).
    n_jobs : int or None, default=None
        Threads of the streamed kernel products, as scikit-learn reads ``n_jobs``: None
        means 1 unless inside a ``joblib.parallel_config(n_jobs=...)`` context, -1 means all
        cores.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the landmarks and the ``gamma`` heuristic's sample.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    n_components_ : int
        ``k``.
    n_landmarks_ : int
        ``s``.
    cut_ : int
        The transfer's ``h``.
    eigenvalues_ : ndarray of shape (k,)
        The Nyström eigenvalues :math:`\frac{n}{s} σ_{W,i}` of ``L`` (or ``K``), decreasing.
    transferred_eigenvalues_ : ndarray of shape (k,)
    degrees_ : ndarray of shape (s,) or None
        The landmarks' exact degrees over all points (None for ``approximation="kernel"``).
    landmark_indices_ : ndarray of shape (s,)
        Rows of the training ``X`` drawn as landmarks (sorted).
    landmarks_ : ndarray or sparse matrix of shape (s, n_features)
    components_ : ndarray of shape (s, k)
        The extension weights ``G``: ``F = rows(K(X, landmarks_) G)``.
    kernel_ : RBF
        The kernel with its width fixed.
    estimated_bytes_ : int
        The bytes the fit's arrays were sized at (``transform`` of ``n`` points included).
    n_features_in_ : int
    timings_ : dict
        Seconds of the fit.

    Examples
    --------
    >>> from semiscale.cluster_kernels import NystromClusterKernel
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(300, noise=0.1, random_state=0)
    >>> nysck = NystromClusterKernel(memory_budget="8MiB", random_state=0)
    >>> F = nysck.fit_transform(X)
    >>> F.shape == (300, nysck.n_components_)
    True
    """

    _parameter_constraints: dict = {
        **_ClusterKernelBase._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"budget"}), None],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "approximation": [StrOptions({"laplacian", "kernel"})],
    }

    def __init__(
        self,
        *,
        n_components=None,
        n_landmarks=None,
        approximation="laplacian",
        gamma="median",
        transfer="poly-step",
        cut="auto",
        memory_budget=None,
        unlabeled=-1,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_components = n_components
        self.n_landmarks = n_landmarks
        self.approximation = approximation
        self.gamma = gamma
        self.transfer = transfer
        self.cut = cut
        self.memory_budget = memory_budget
        self.unlabeled = unlabeled
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _basis(self):
        return self.landmarks_

    def _columns_for_budget(self, n, d, n_labeled, memory_budget, *, sparse, want_F, nnz=None):
        """Columns ``k`` of ``F`` a fit with ``memory_budget`` would give (0: refused).

        Allocates nothing (:class:`~semiscale.models.StorageFitClassifier` reserves its own
        part of a budget before handing the rest over); ``n_labeled`` and ``want_F`` do not
        change the sizes.
        """
        try:
            return nystrom_sizes(
                n,
                d,
                memory_budget,
                self.n_components,
                self.n_landmarks,
                gamma=self.gamma,
                sparse=sparse,
                nnz=nnz,
            )[0]
        except MemoryBudgetError:
            return 0

    @_fit_context(prefer_skip_nested_validation=True)
    def _fit(self, X, y, want_F):
        start = time.perf_counter()
        name = type(self).__name__
        X = validate_X(self, X, reset=True, min_samples=2)
        n, d = X.shape
        n_labeled = int(self._labeled_mask(y, n).sum())
        # sizes first: an impossible budget is refused before any array exists
        k, s, self.estimated_bytes_ = nystrom_sizes(
            n,
            d,
            self.memory_budget,
            self.n_components,
            self.n_landmarks,
            gamma=self.gamma,
            sparse=sp.issparse(X),
            nnz=X.nnz if sp.issparse(X) else None,
        )
        self._log_sizes(
            f"k = {k} components, s = {s} landmarks, {self.estimated_bytes_} bytes estimated"
        )
        seed = as_random_state(self.random_state)
        rng = check_random_state(seed)
        with stage(f"[{name}] kernel width on {n} points", self.verbose):
            self.kernel_ = self._kernel(X, seed)
        self.landmark_indices_ = np.sort(rng.choice(n, s, replace=False))
        self.landmarks_ = X[self.landmark_indices_]
        stream = stream_bytes(n, s, d, sparse=sp.issparse(X), nnz=X.nnz if sp.issparse(X) else None)
        with stage(f"[{name}] landmark kernel and degrees ({s} of {n} points)", self.verbose):
            W = np.asarray(
                kernel_matrix(self.kernel_, self.landmarks_, None, 8 * s * s + stream, self.n_jobs),
                dtype=np.float64,
            )
            self.degrees_ = None
            if self.approximation == "laplacian":
                # D_S = Cᵀ 1: each landmark's degree over all n points, C streamed
                self.degrees_ = np.asarray(
                    kernel_rmatmul(
                        self.kernel_, X, self.landmarks_, np.ones(n), stream, self.n_jobs
                    ),
                    dtype=np.float64,
                )
                inv_sqrt = 1.0 / np.sqrt(self.degrees_)  # ≥ K_jj = 1 for the RBF
                W *= inv_sqrt[:, None]
                W *= inv_sqrt[None, :]
        with stage(f"[{name}] top {k} eigenpairs of the {s}x{s} landmark block", self.verbose):
            with get_ops().blas_threads(EIGH_BLAS_THREADS):
                sigma_w, U_w = get_ops().eigh(W, n_top=k, overwrite_a=True)
            del W
        self.cut_ = self._resolve_cut(n_labeled, k)
        # eq. (13): Σ_k = (n/s) Σ_W; U_k's constant √(s/n) cancels in F's unit rows
        self.components_, self.eigenvalues_, self.transferred_eigenvalues_ = self._weights(
            U_w, sigma_w, self.degrees_, scale=1.0, n_eigen_scale=n / s
        )
        self.n_components_, self.n_landmarks_ = k, s
        self._log_sizes(
            f"eigenvalues {self.eigenvalues_[0]:.4g} .. {self.eigenvalues_[-1]:.4g}, cut h = "
            f"{self.cut_}"
        )
        F = None
        if want_F:
            with stage(f"[{name}] virtual samples F ({n}x{k})", self.verbose):
                F = self._extend(X)
        self.timings_ = {"total": time.perf_counter() - start}
        return F if want_F else self
