r"""Kernel k-means: Lloyd's algorithm in a kernel's feature space, never forming ``K(X, X)``.

Paper 002 §5.2 clusters two moons with its data-dependent kernel through the kernel metric
``d(x, x')² = K(x, x) + K(x', x') − 2K(x, x')``; any semiscale kernel works here, a learned one
(:class:`~semiscale.kernels.DataDependentKernel`) being fitted on the points first.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._memory import check_fits
from .._progress import log, stage
from .._random import RANDOM_STATE_CONSTRAINT, as_random_state, check_random_state
from .._validation import validate_X
from ..kernels import RBF
from ..linalg.blocked import kernel_matmul, kernel_matrix
from ._defaults import KERNEL_CONSTRAINT, kernel_to_fit

__all__ = ["KernelKMeans"]

#: The kernel of ``kernel=None``: an RBF as wide as the data's median distance (resolved on
#: ``X`` in ``fit``), the regressors' default width, since clusters are larger than the local
#: scale the classifiers' ``"local"`` width follows.
DEFAULT_CLUSTER_KERNEL = RBF(gamma="median")


class KernelKMeans(ClusterMixin, BaseEstimator):
    r"""k-means in the feature space of a kernel (Lloyd's algorithm, k-means++ seeding).

    With ``φ`` the feature map of the kernel ``K`` and a cluster ``c`` of points, its centre
    ``μ_c = (1/|c|) Σ_{j∈c} φ(x_j)`` lives in feature space, so it is never formed (there is
    no ``cluster_centers_``): the squared distance of any point to it is

    .. math::  \|φ(x) − μ_c\|^2 = K(x, x) − \frac{2}{|c|}\sum_{j∈c} K(x, x_j)
               + \frac{1}{|c|^2}\sum_{j,l∈c} K(x_j, x_l),

    i.e. ``D = diag(K) 1ᵀ − 2 K M + 1 diag(Mᵀ K M)ᵀ`` with ``M`` the ``n × k`` matrix of the
    assignment divided by the cluster sizes.  Each iteration computes ``S = K(X, X) M`` by
    :func:`semiscale.linalg.kernel_matmul` (row blocks of the kernel under ``memory_budget``,
    each released before the next: nothing ``n × n`` is held), reads ``diag(MᵀKM)`` off it, and
    assigns every point to its nearest centre; ``inertia_`` is ``Σ_i D[i, labels_i]``.  Cost
    per iteration: ``n²`` kernel evaluations (``O(n² d)`` for the built-in kernels, plus
    ``O(n² k)`` for the product); memory ``O(n k)`` plus one kernel block.  With the linear
    kernel this is scikit-learn's ``KMeans`` (Lloyd) exactly, step for step: the same initial
    centres give the same labels and inertia (``tests/test_kernel_kmeans.py``).

    The iteration is scikit-learn's: it stops when the labels do not change, or when the
    centres moved by ``Σ_c ‖μ_c^{new} − μ_c^{old}‖² ≤ tol_`` (computed from the kernel products
    of the two iterations), after which the points are assigned to the last centres once more.
    An empty cluster takes, as in scikit-learn, the point farthest from its own centre (which
    leaves its cluster's mean); the next assignment then decides the labels.

    Seeding: ``"k-means++"`` is scikit-learn's greedy k-means++ on kernel distances
    ``d(x, c)² = K(x, x) + K(c, c) − 2K(x, c)``: the first centre uniformly at random, then
    for each next centre ``2 + ⌊ln k⌋`` candidates drawn with probability proportional to
    ``d²`` to the nearest centre chosen so far, keeping the one that lowers the sum of those
    ``d²`` most (one kernel column per candidate: ``O(n k log k)`` kernel evaluations).
    ``"random"``: ``k`` distinct points drawn uniformly.  The best of ``n_init`` runs (the
    lowest inertia) is kept.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``k`` (at most the number of points).
    kernel : Kernel, {"rbf", "laplacian", "linear", "poly"} or None, default=None
        The kernel; fitted on ``X`` first (``kernel.fit(X, random_state=...)``: a learned
        kernel learns from the points, a fixed one resolves a data-dependent width) and kept
        in ``kernel_``.  None: ``RBF(gamma="median")``; a name: that kernel with the class
        defaults (``"rbf"``: the default's median width).
    init : {"k-means++", "random"} or array-like of shape (n_clusters,), default="k-means++"
        Seeding (above), or the indices of ``n_clusters`` distinct training points to start
        from (the centres are those points).
    n_init : "auto" or int, default="auto"
        Runs from different seeds, the lowest inertia kept.  ``"auto"``: 1 for
        ``"k-means++"`` and for given indices, 10 for ``"random"`` (scikit-learn's rule).
    max_iter : int, default=300
        Lloyd iterations per run.
    tol : float, default=1e-4
        Stop when the centres' squared shift ``Σ_c ‖μ_c^{new} − μ_c^{old}‖²`` is at most
        ``tol_ = tol · V / d``, with ``V`` the points' total variance in feature space
        (``mean K(x, x) − mean K``, one more pass over the kernel) and ``d`` the number of
        features: for the linear kernel ``V / d`` is the mean per-feature variance, as in
        scikit-learn.  0: only when the labels stop changing (no extra pass).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "512MiB"); None = a quarter of the
        available memory.  Bounds the ``n × k`` arrays (checked before any work:
        ``MemoryBudgetError``) and the kernel blocks.
    n_jobs : int or None, default=None
        Threads of the kernel products (-1: all cores); the result does not depend on it.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the initial centres and the kernel's fit.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every training point.
    inertia_ : float
        ``Σ_i ‖φ(x_i) − μ_{labels_i}‖²`` (each term clipped at 0 against rounding).
    n_iter_ : int
        Lloyd iterations of the kept run.
    kernel_ : Kernel
        The fitted kernel.
    X_fit_ : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training points, in the dtype of ``X``: :meth:`predict` evaluates ``K(X_new,
        X_fit_)`` against them (``O(n_new · n)`` kernel evaluations, memory ``O(n d)`` kept).
    center_assignment_ : ndarray of shape (n_samples,)
        The assignment whose cluster means are the final centres (``labels_`` when the labels
        stopped changing; the one before otherwise, as scikit-learn's centres are the means of
        the labels before its last assignment).
    center_sq_norms_ : ndarray of shape (n_clusters,)
        ``‖μ_c‖²`` in feature space.
    tol_ : float
        The tolerance used (above).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    sklearn.cluster.KMeans : The same iteration on the points themselves (the linear kernel).
    semiscale.kernels.DataDependentKernel : A kernel learned from the points' graph (paper 002).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.kernels import Linear
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> km = KernelKMeans(n_clusters=2, kernel=Linear(), init=[0, 2]).fit(X)
    >>> km.labels_
    array([0, 0, 1, 1])
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        **KERNEL_CONSTRAINT,
        "init": [StrOptions({"k-means++", "random"}), "array-like"],
        "n_init": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_clusters=8,
        kernel=None,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        memory_budget=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.memory_budget = memory_budget
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------------ checks
    def _initial_indices(self, n):
        """``init`` as indices (None for a named seeding), refusing bad ones with the fix."""
        if isinstance(self.init, str):
            return None
        indices = np.asarray(self.init)
        k = self.n_clusters
        if (
            indices.shape != (k,)
            or indices.dtype.kind not in "iu"
            or np.any(indices < 0)
            or np.any(indices >= n)
            or np.unique(indices).size != k
        ):
            raise ValueError(
                f"init must be 'k-means++', 'random' or the indices of n_clusters={k} distinct "
                f"training points (integers in [0, {n})), got {self.init!r}; to start from "
                "given centre points pass their row numbers in X"
            )
        return indices.astype(np.intp)

    def _runs(self, indices):
        if self.n_init == "auto":
            return 10 if isinstance(self.init, str) and self.init == "random" else 1
        if indices is not None and self.n_init != 1:
            warnings.warn(
                f"n_init={self.n_init} with given initial centres (init=indices): only one run "
                "is made; pass n_init=1 to silence this",
                RuntimeWarning,
                stacklevel=3,
            )
            return 1
        return self.n_init

    # ------------------------------------------------------------------------------ fit
    # prefer_skip_nested_validation=False: the kernel fitted inside checks its own parameters
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Cluster the points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : ignored
            Accepted for scikit-learn's API (pipelines).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``n_clusters`` larger than the number of points, or a bad ``init``.
        MemoryBudgetError
            Before any kernel work, when ``memory_budget`` cannot hold the ``n × k`` arrays.
        """
        start = time.perf_counter()
        # two points at least: a data-dependent width (the default's) measures a distance
        X = validate_X(self, X, reset=True, min_samples=2)
        n, k = X.shape[0], self.n_clusters
        if k > n:
            raise ValueError(
                f"n_samples={n} should be >= n_clusters={k}: every cluster needs a point; "
                f"pass n_clusters <= {n}"
            )
        indices = self._initial_indices(n)
        runs = self._runs(indices)
        check_fits(
            {
                f"the {n}x{k} centre weights, kernel products and distances (float64, "
                "two iterations' products)": 4 * 8 * n * k,
                f"the kernel's diagonal and the labels of {n} points": 3 * 8 * n,
            },
            self.memory_budget,
            what=f"{type(self).__name__} with {k} clusters on {n} points",
        )
        seed = as_random_state(self.random_state)
        rng = check_random_state(seed)  # the seeding's draws; the kernel's fit gets the seed
        # float64 throughout: float32 data give the same clusters as their float64 copy
        X64 = X.astype(np.float64, copy=False)
        with stage(f"[{type(self).__name__}] kernel on {n} points", self.verbose):
            self.kernel_ = kernel_to_fit(self.kernel, DEFAULT_CLUSTER_KERNEL).fit(
                X64, None, random_state=seed
            )
        diag = np.asarray(self.kernel_.diag(X64), dtype=np.float64)
        self.tol_ = self._tolerance(X64, diag)
        best = None
        for run in range(runs):
            seeds = indices if indices is not None else self._seed(X64, diag, rng)
            result = self._lloyd(X64, diag, seeds)
            log(
                f"[{type(self).__name__}] run {run + 1}/{runs}: {result[3]} iterations, "
                f"inertia {result[1]:.6g}",
                self.verbose,
            )
            if best is None or result[1] < best[1]:
                best = result
        self.labels_, self.inertia_, self.center_assignment_, self.n_iter_ = best[:4]
        distinct = np.unique(self.labels_).size
        if distinct < k:  # as scikit-learn's KMeans: identical points, or too many clusters
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than n_clusters ({k}): "
                "the points (in the kernel's feature space) have fewer distinct values than "
                "clusters; pass a smaller n_clusters or remove duplicate points",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.center_sq_norms_ = best[4]
        self.X_fit_ = X
        self.timings_ = {"total": time.perf_counter() - start}
        return self

    def _tolerance(self, X64, diag):
        if self.tol == 0:
            return 0.0
        n = X64.shape[0]
        # V = mean_i K(x_i, x_i) − (1/n²) Σ_ij K(x_i, x_j): one blocked pass over the kernel
        mean_k = kernel_matmul(
            self.kernel_, X64, None, np.full(n, 1.0 / n), self.memory_budget, self.n_jobs
        ).mean()
        variance = max(float(diag.mean() - mean_k), 0.0)
        return float(self.tol) * variance / X64.shape[1]

    def _columns(self, X64, idx):
        """``K(X, X[idx])``: one kernel column per given point."""
        return np.asarray(
            kernel_matrix(self.kernel_, X64, X64[idx], self.memory_budget, self.n_jobs),
            dtype=np.float64,
        )

    def _seed(self, X64, diag, rng):
        """Initial centres (indices): k-means++ (greedy, scikit-learn's) or uniform."""
        n, k = X64.shape[0], self.n_clusters
        if self.init == "random":
            return np.sort(rng.choice(n, k, replace=False))
        trials = 2 + int(np.log(k))
        chosen = np.empty(k, dtype=np.intp)
        chosen[0] = rng.randint(n)
        closest = np.maximum(diag + diag[chosen[0]] - 2 * self._columns(X64, chosen[:1])[:, 0], 0)
        potential = closest.sum()
        for c in range(1, k):
            cumulative = np.cumsum(closest)
            candidates = np.searchsorted(cumulative, rng.uniform(size=trials) * potential)
            candidates = np.minimum(candidates, n - 1)
            d2 = np.maximum(
                diag[:, None] + diag[candidates][None, :] - 2 * self._columns(X64, candidates), 0
            )
            np.minimum(d2, closest[:, None], out=d2)
            potentials = d2.sum(axis=0)
            best = int(np.argmin(potentials))
            chosen[c], potential, closest = candidates[best], potentials[best], d2[:, best]
        return chosen

    def _means(self, labels):
        """``M``: the assignment divided by the cluster sizes (``n × k``; an empty column 0)."""
        n, k = labels.shape[0], self.n_clusters
        counts = np.bincount(labels, minlength=k)
        M = np.zeros((n, k))
        M[np.arange(n), labels] = 1.0 / counts[labels]
        return M

    def _lloyd(self, X64, diag, seeds):
        """One run from the seed points: (labels, inertia, centre assignment, n_iter, norms)."""
        n, k = X64.shape[0], self.n_clusters
        # the first centres are the seed points themselves: M one-hot, S = their kernel columns
        M = np.zeros((n, k))
        M[seeds, np.arange(k)] = 1.0
        S = self._columns(X64, seeds)
        centres = None  # the assignment M stands for (None: the seeds)
        previous = np.full(n, -1)
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            norms = np.einsum("ij,ij->j", M, S)
            D = diag[:, None] - 2.0 * S + norms[None, :]
            labels = np.argmin(D, axis=1)
            assignment = self._relocate(labels, D)
            M_new = self._means(assignment)
            if np.array_equal(labels, previous):
                converged = True
                if centres is not None and np.array_equal(assignment, centres):
                    break  # the same centres: nothing to recompute
                S_new = kernel_matmul(
                    self.kernel_, X64, None, M_new, self.memory_budget, self.n_jobs
                )
                M, S, centres = M_new, S_new, assignment
                break
            S_new = kernel_matmul(self.kernel_, X64, None, M_new, self.memory_budget, self.n_jobs)
            # Σ_c ‖μ_new − μ_old‖² = Σ_c (m_newᵀ K m_new − 2 m_newᵀ K m_old + m_oldᵀ K m_old)
            shift = float(
                np.einsum("ij,ij->", M_new, S_new)
                - 2.0 * np.einsum("ij,ij->", M_new, S)
                + np.einsum("ij,ij->", M, S)
            )
            M, S, centres = M_new, S_new, assignment
            log(
                f"[{type(self).__name__}] iteration {n_iter}: centre shift {shift:.3e} "
                f"(tol_ {self.tol_:.3e})",
                self.verbose,
                level=2,
            )
            if shift <= self.tol_:
                break
            previous = labels
        norms = np.einsum("ij,ij->j", M, S)
        D = diag[:, None] - 2.0 * S + norms[None, :]
        if not converged:
            labels = np.argmin(D, axis=1)  # assigned to the last centres, as scikit-learn
        inertia = float(np.maximum(D[np.arange(n), labels], 0.0).sum())
        return labels, inertia, centres, n_iter, norms

    def _relocate(self, labels, D):
        """The assignment whose means are the next centres: ``labels`` with every empty
        cluster given the point farthest from its own centre (scikit-learn's relocation)."""
        k = self.n_clusters
        counts = np.bincount(labels, minlength=k)
        empty = np.flatnonzero(counts == 0)
        if empty.size == 0:
            return labels
        assignment = labels.copy()
        distance = D[np.arange(labels.shape[0]), labels]
        farthest = np.argsort(distance, kind="stable")[::-1][: empty.size]
        assignment[farthest] = empty
        return assignment

    # ------------------------------------------------------------------------ predict
    def _distances(self, X):
        check_is_fitted(self, "labels_")
        X64 = validate_X(self, X, reset=False).astype(np.float64, copy=False)
        M = self._means(self.center_assignment_)
        S = kernel_matmul(
            self.kernel_,
            X64,
            self.X_fit_.astype(np.float64, copy=False),
            M,
            self.memory_budget,
            self.n_jobs,
        )
        diag = np.asarray(self.kernel_.diag(X64), dtype=np.float64)
        return diag[:, None] - 2.0 * S + self.center_sq_norms_[None, :]

    def predict(self, X):
        """The nearest centre of each point, in feature space.

        Costs ``K(X, X_fit_)``: ``len(X) · n`` kernel evaluations, in blocks under
        ``memory_budget``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        return np.argmin(self._distances(X), axis=1)

    def score(self, X, y=None):
        """Opposite of the inertia of ``X`` against the fitted centres (scikit-learn's sign).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)
        y : ignored

        Returns
        -------
        float
        """
        D = np.maximum(self._distances(X), 0.0)
        return -float(D.min(axis=1).sum())
