r"""SLapCVM: the Laplacian SVM with a sparsified manifold regularizer, by the Core Vector Machine.

**Faithful to paper 001, and not the estimator for an accurate sparse, scalable Laplacian
SVM.**  The exact-QP study (``benchmarks/results/slapcvm_exact_qp/``) shows that the paper's
dual (8) at its ``mμ = 1`` is accurate only where its solution is not sparse; the estimators
keep the paper's formulation all the same.  For a sparse, scalable Laplacian SVM use
:class:`~semiscale.models.LapSVC` (exact primal) or :class:`~semiscale.models.NystromLapSVC`
(Nyström: the predictor lives on its centres; ``center_selection="uniform"`` is paper 001's
reduced LapSVM).  The defaults are the paper 001 benchmark's preset (``mμ = 1``,
θ = 100·``|E|``/m: ``theta="auto"``), which fits in seconds but is no more accurate than an
SVM on the labeled points alone: ``benchmarks/results/slapcvm_defaults/`` and the classifier's
docstring.

Paper 001 (Tsang & Kwok): the manifold term of LapSVM with the squared edge differences replaced
by ε̄-insensitive ones (eq. 4), two-norm slacks and a penalised bias (primal (5)–(7)), whose dual
(8) over the labeled items and the ``2|E|`` edge constraints is a center-constrained minimum
enclosing ball (9), solved by the CVM (:func:`~semiscale.solvers.cvm.core_vector_machine`).
The predictor keeps only the core set's terms: a kernel expansion over the labeled points and
the ends of the edges whose constraint is active.

What the tube width does (measured, ``benchmarks/results/slapcvm_tube/``): μ sets ε̄ as ν sets
the tube in ν-SVR.  On 1,000 two-moons points with one label per class (the paper's kernel
``RBF(gamma=4.0)``, C = 100, θ = 100·``|E|``/m, ``tol=1e-6``), the paper's ``mμ = 1`` leaves
weighted edge differences up to 0.1, within which the decision decays away from the two
labeled points for free, so the labels do not travel along the moons: 73.0 % test accuracy
from 19 support points.  Accuracy rises as μ narrows the tube — 86.8 % at ``mμ = 30`` (182
points), 99.5 % at ``mμ = 100`` — but then 943 of the 1,000 points are in the support and the
fit takes 229 s.  With the default ``tol=1e-4`` the CVM stops earlier and the accuracy jumps
between 72 % and 97 % across μ.  The paper's 100 % with sparse solutions was not reproduced.

It is the formulation, not the CVM (``benchmarks/results/slapcvm_exact_qp/``): the dual (8)
solved exactly on the same 1,000 points (SMO over all 7,462 items) gives 61–92 % at ``mμ = 1``
wherever its solution is sparse (C from 10² to 10⁵, θ from 0.01 to 100·``|E|``/m), and the
settings that reach 99.5 % close the tube (ε̄ < 0: every edge pays slack, as in the two-norm
LapSVM) and keep all 1,000 points in the expansion.  An open tube lets f fall by ε̄√w per edge
for free, and a moon's far end is 27–34 hops from its label, more than ``|f|`` at the label can
absorb; more points mean more hops.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._random import RANDOM_STATE_CONSTRAINT, as_random_state
from ..graph import KNNGraph
from ..graph._graph import KERNEL_ONLY, warn_unreached
from ..kernels import RBF, LaplacianKernel
from ..solvers.cvm import core_vector_machine, largest_core_set
from ..solvers.slapcvm_kernel import SLapCVMKernel, graph_edges
from ._base import (
    KERNEL_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    FitContract,
    ManifoldMixin,
    SSLClassifierMixin,
    SSLRegressorMixin,
    _check_fit_laplacian,
    kernel_reading_marker,
    kernel_to_fit,
)

__all__ = [
    "SLAPCVM_GRAPH",
    "SLAPCVM_KERNEL",
    "THETA_EDGE_RATIO",
    "SparseLapCVMClassifier",
    "SparseLapCVMRegressor",
]

#: Paper 001 §4's kernel preset: the Gaussian kernel exp(−‖x − z‖²/β), β the mean squared
#: distance of the points to their mean.
SLAPCVM_KERNEL = RBF(gamma="mean")
#: Paper 001 §4's graph preset: the 6-NN graph with weights exp(−d²/β_g), β_g the mean squared
#: edge length, unnormalized Laplacian.
SLAPCVM_GRAPH = KNNGraph(n_neighbors=6, bandwidth="mean-square", symmetrize="union")
#: ``theta="auto"``: θ = THETA_EDGE_RATIO·|E|/m, the paper 001 benchmark's preset, which weighs
#: all the edge slacks together 100 times the labeled ones (θ's natural scale is |E|/m).
THETA_EDGE_RATIO = 100.0


class _SparseLapCVMBase(ManifoldMixin, BaseEstimator):
    """The fit shared by the classifier and the regressor: graph → edges → one CVM per column.

    Subclasses define :meth:`_labeled_items`: the labeled items' point rows, signs and linear
    terms for one column of targets.
    """

    _parameter_constraints: dict = {
        **KERNEL_CONSTRAINT,
        "graph": [HasMethods(["fit"]), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, None, closed="neither"), None],
        "theta": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_core_set": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left")],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }
    _default_kernel = SLAPCVM_KERNEL
    _default_graph = SLAPCVM_GRAPH
    #: Items per labeled point (1 for the classifier's margin, 2 for the regressor's tube).
    _items_per_label = 1
    #: A fit of its own (no fit_intercept), whose loss is not the squared one; no approximate
    #: CV.  memory_budget bounds the core set and, with n_jobs, the graph and predict.
    _fit_contract = FitContract(
        fit_path="core-vector-machine", expansion="support", memory_budget=True, n_jobs=True
    )

    def _edges(self, X, laplacian):
        """``graph_edges`` of the fitted graph, or of ``−offdiag(laplacian)`` when given."""
        if laplacian is not None:
            L = sp.csr_matrix(_check_fit_laplacian(laplacian, X.shape[0]))
            adjacency = -(L - sp.diags(L.diagonal()))
            adjacency.eliminate_zeros()
            self.graph_ = None
            return graph_edges(adjacency, normalized=False)
        graph = self._graph_to_fit()
        self.graph_ = graph.fit(X)
        return graph_edges(self.graph_.adjacency_, bool(getattr(graph, "normalized", False)))

    def _fit_problem(self, X, Y, labeled, laplacian, y=None):
        start = time.perf_counter()
        labeled_mask, labeled = labeled, np.flatnonzero(labeled)
        m = labeled.size
        if self.max_core_set < self._items_per_label * m:
            raise ValueError(
                f"max_core_set={self.max_core_set} is smaller than the "
                f"{self._items_per_label * m} labeled items ({m} labeled points), which form "
                "the initial core set; raise max_core_set"
            )
        # the labeled items' Gram matrix must fit before any work
        largest_core_set(self.memory_budget, self._items_per_label * m, self.max_core_set)
        random_state = as_random_state(self.random_state)
        edges = self._edges(X, laplacian)
        self.n_edges_ = int(edges[0].size)
        if self.n_edges_ == 0:
            raise ValueError(
                "the graph has no edges, so there is no manifold constraint; check graph "
                "(n_neighbors) and that X has distinct points"
            )
        L = self.graph_.laplacian_ if self.graph_ is not None else laplacian
        warn_unreached(L, labeled_mask, graph=self.graph_, consequence=KERNEL_ONLY, stacklevel=4)
        graph_seconds = time.perf_counter() - start
        kernel = kernel_reading_marker(kernel_to_fit(self.kernel, SLAPCVM_KERNEL), self)
        self.kernel_ = kernel.fit(X, y, laplacian=None, random_state=random_state)
        mu = 1.0 / m if self.mu is None else float(self.mu)
        theta = THETA_EDGE_RATIO * self.n_edges_ / m if self.theta == "auto" else self.theta
        self.theta_ = float(theta)
        labeled_ridge = mu * m / self.C
        edge_ridge = self.n_edges_ * mu / (self.C * self.theta_)
        # RBF and LaplacianKernel values are ≥ 0: a tighter bound, fewer kernel values for η
        nonnegative = isinstance(self.kernel_, (RBF, LaplacianKernel))
        tic = time.perf_counter()
        expansions, self.core_set_size_, iterations, converged = [], [], [], True
        for c in range(Y.shape[1]):
            rows, signs, linear = self._labeled_items(labeled, Y[labeled, c])
            K = SLapCVMKernel(
                self.kernel_,
                X,
                rows,
                signs,
                edges,
                labeled_ridge,
                edge_ridge,
                nonnegative=nonnegative,
            )
            result = core_vector_machine(
                K,
                linear,
                initial=np.arange(rows.size),
                tol=self.tol,
                max_core_set=self.max_core_set,
                max_iter=self.max_iter,
                n_candidates=self.n_candidates,
                random_state=random_state,
                verbose=self.verbose,
                memory_budget=self.memory_budget,
            )
            # w = C Σ α_a z_a (§3.1), over the core set's items only
            expansions.append(K.expansion(self.C * result.alpha, items=result.core_set))
            self.core_set_size_.append(int(result.core_set.size))
            iterations.append(result.n_iter)
            converged &= result.converged
        self.support_ = np.unique(np.concatenate([points for points, _, _ in expansions]))
        self.n_support_ = int(self.support_.size)
        self.dual_coef_ = np.zeros((self.n_support_, Y.shape[1]))
        for c, (points, weights, _) in enumerate(expansions):
            self.dual_coef_[np.searchsorted(self.support_, points), c] = weights
        self.intercept_ = np.array([bias for _, _, bias in expansions])
        self.X_fit_ = X[self.support_]
        self.n_iter_ = max(iterations)
        self.converged_ = bool(converged)
        solve_seconds = time.perf_counter() - tic
        decision = self._raw_decision(X)
        self.timings_ = {
            "graph": graph_seconds,
            "solve": solve_seconds,
            "total": time.perf_counter() - start,
        }
        return decision


class SparseLapCVMClassifier(SSLClassifierMixin, _SparseLapCVMBase):
    """Sparsified Laplacian core vector machine for classification (paper 001, "SLapCVM").

    **Faithful to the paper, and not the estimator for an accurate sparse Laplacian SVM.**
    Solved exactly, the paper's dual (8) at its ``mμ = 1`` is accurate only where its solution
    is not sparse (``benchmarks/results/slapcvm_exact_qp/``: on two moons with one label per
    class 61–92 % wherever it is sparse; 99.5 % only with all 1,000 points in the expansion).
    For a scalable Laplacian SVM use :class:`~semiscale.models.LapSVC` (exact) or
    :class:`~semiscale.models.NystromLapSVC` (a predictor on its centres; with
    ``center_selection="uniform"`` it is paper 001's reduced LapSVM).

    The defaults are the paper 001 benchmark's preset (``mμ = 1``, ``θ = 100·|E|/m``), which keeps
    the core set small, with C chosen by measurement (parameter C).  Measured at the defaults
    (``benchmarks/results/slapcvm_defaults/``, this 2-core machine, timing lock; accuracy on
    the unlabeled points, SLapCVM averaged over ``random_state`` 0-2): two moons
    (``make_two_moons(2000, noise=0.1, random_state=0)``, the first point of each class
    labeled) 64.7 % in 0.04 s — below an RBF ``SVC()`` on the two labeled points (66.7 %),
    where ``LapSVC()`` reaches 99.9 %; scikit-learn's breast_cancer (569 points, standardized,
    3 labels per class, 5 draws) 87.8 %, median 0.11 s a fit — on par with the ``SVC()``
    (87.5 %), below ``LapSVC()`` (91.6 %, 0.41 s).  Which random candidates the CVM draws
    moves single fits by several points (59.0-73.7 % on 10⁵ moons points across 3 seeds).

    Solves the primal (paper 001 eq. 5–7), with ``f(x) = wᵀφ(x) + b``,

    ``min ‖w‖² + b² + C/(mμ) Σ_i ξ_i² + 2Cε̄ + Cθ/(|E|μ) Σ_e (ζ_e² + ζ_e*²)`` subject to
    ``y_i f(x_i) ≥ 1 − ε̄ − ξ_i`` on the m labeled points and
    ``|√w_e (f(x_u)/s(u) − f(x_v)/s(v))| ≤ ε̄ + ζ_e`` on every edge e = (u, v) of the graph
    (s = 1, or √degree with a normalized graph),

    through its dual (8): a QP over the simplex in the ``m + 2|E|`` items of the transformed
    kernel K̃ (:class:`~semiscale.solvers.slapcvm_kernel.SLapCVMKernel`, every entry from at most
    four base-kernel values), read as a center-constrained MEB (9) and solved by the Core Vector
    Machine (:func:`~semiscale.solvers.cvm.core_vector_machine`: core set grown from the labeled
    points, furthest of 59 random candidates, the QP on the core set by libsvm's compiled
    one-class solver or SMO, stop at a ``(1 + tol)`` ball).  ``w`` and ``b`` come from the KKT
    conditions of §3.1, so the predictor is a kernel expansion over the core set's points only
    (``support_``).  Memory beyond the graph:
    ``O(|S|²)`` for a core set S.  One-vs-rest (±1 targets) for several classes.
    ``y == unlabeled`` marks unlabeled points.

    The tube ε̄ trades sparsity for how far the labels travel: see the module docstring and
    ``benchmarks/results/slapcvm_tube/`` before relying on the paper's ``mμ = 1``.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="mean")
        The base kernel; the default is paper 001's exp(−‖x − z‖²/β), β the mean squared
        distance of the points to their mean (None also means it).  The paper's two-moons
        experiment uses ``RBF(gamma=4.0)`` (β = 0.25).
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph or None, default=SLAPCVM_GRAPH
        The graph whose edges become constraints; the default is paper 001's 6-NN graph with
        weights exp(−d²/β_g), β_g the mean squared edge length, united:
        ``KNNGraph(n_neighbors=6, bandwidth="mean-square", symmetrize="union")``.
        ``graph.normalized`` selects the
        normalized form of eq. (3) (s(u) = √degree).  Ignored when ``fit`` gets ``laplacian=``.
    C : float, default=10.0
        Weight of the slacks and of the tube (paper 001's C; the paper tunes it on a
        validation set).  The default is measured at the other defaults (mean accuracy on the
        unlabeled points for C = 1 / 10 / 100, against an RBF ``SVC()`` on the labeled points;
        ad hoc ``/tmp`` scripts of issue 26): breast_cancer (standardized, 3 labels per class,
        5 draws) 88.4 / 88.3 / 84.4 % (SVC 87.5 %); wine (standardized, 2 per class, 5 draws)
        90.3 / 90.7 / 89.5 % (SVC 91.3 %); digits (standardized, 2 per class, 3 draws)
        73.6 / 75.8 / 81.5 % (SVC 71.3 %), but at C = 100 the ten one-vs-rest core sets grow
        and a fit took 44 s against 2.6 s at C = 10; two moons (2,000 points, one label per
        class) 66.7 / 65.4 / 64.7 % (SVC 66.7 %).
    mu : float or None, default=None
        μ of eq. (5), which sets the tube width ε̄ (as ν in ν-SVR): larger μ, narrower tube and
        more active edges.  None: ``1/m`` (the paper's ``mμ = 1``), m the number of labeled
        points.
    theta : float or "auto", default="auto"
        θ of eq. (5): the edge slacks weigh ``Cθ/(|E|μ)`` against ``C/(mμ)`` for the labeled
        ones, so θ's natural scale is ``|E|/m``.  "auto": ``100·|E|/m``
        (:data:`THETA_EDGE_RATIO`), the paper 001 benchmark's preset, which keeps the core set
        small.  Small θ makes the edge items' ridge ``|E|μ/(Cθ)`` large and the core set grow
        towards all ``m + 2|E|`` items: the old default θ = 1 did not finish in 4.5 minutes
        on 2,000 two-moons points.
    tol : float, default=1e-4
        ε of the CVM's ``(1 + ε)``-approximate ball.
    max_core_set : int, default=5000
        Largest core set; reaching it first gives a ConvergenceWarning.  The core set's K̃
        block is kept in a buffer that doubles from 64 rows (or twice the labeled items), so
        at most :func:`~semiscale.solvers.cvm.core_set_bytes` ``(max_core_set, ·)`` bytes with
        the copy made when it doubles and the QP's (830.7 MiB at 5,000 from up to 32 labeled
        items); ``memory_budget`` stops it growing sooner.
    max_iter : int, default=1000
        CVM iterations per problem (each: the ball on the core set, the check of the random
        candidates and, when one lies outside, one item added); reaching it first gives a
        ConvergenceWarning.  The QP on the core set is capped too (100 pair updates per item).
    n_candidates : int, default=59
        Items outside the core set drawn per CVM iteration (the paper's probabilistic
        speed-up: the furthest of 59 is among the 5 % furthest with probability 0.95).  The
        CVM stops when the furthest candidate is inside the ``(1 + tol)`` ball, so a few
        violating items can go unseen; a value at least ``m + 2|E|`` checks every item and
        gives the exact ``(1 + tol)`` ball, at ``|S|`` K̃ entries per item per iteration.
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "4GB"); None = a quarter of the
        memory available.  Bounds the core set's Gram matrix (the core set stops growing where
        it would not fit, with a ``ConvergenceWarning`` naming it; labeled points whose initial
        core set does not fit raise ``MemoryBudgetError`` before the graph is built), the
        kernel blocks of ``predict``, and the graph's search when ``graph`` leaves its own
        budget at None.
    n_jobs : int or None, default=None
        Threads of the graph's neighbour search (when ``graph`` leaves its own ``n_jobs`` at
        None) and of the kernel blocks of ``predict``, as scikit-learn reads ``n_jobs`` (None:
        one, unless inside a ``joblib.parallel_config(n_jobs=...)`` context; -1: all cores).
        The core set grows one point at a time on one thread.  The result does not depend on it.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the CVM's candidate draws, the kernel width's sample and the graph's search.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    unlabeled : int, float, str or None, default=-1
        The marker of unlabeled points in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_ : Kernel
        The base kernel with its width resolved.
    graph_ : KNNGraph or None
        The fitted graph (None when ``fit`` got ``laplacian=``).
    X_fit_ : ndarray or sparse matrix of shape (n_support, n_features)
        The points of the expansion (``X[support_]``).
    support_ : ndarray of shape (n_support,)
        Their rows in the training data: labeled points and ends of active edges.
    n_support_ : int
        ``len(support_)``.
    dual_coef_ : ndarray of shape (n_support, n_outputs)
        Expansion weights (one column per binary problem or target).
    intercept_ : ndarray of shape (n_outputs,)
        The bias b of each problem.
    core_set_size_ : list of int
        The CVM's core set size per problem.
    n_iter_ : int
        CVM iterations (largest over the problems): items added to the core set, plus the
        last check.
    converged_ : bool
        Whether every CVM reached its ``(1 + tol)`` ball.
    n_edges_ : int
        The number of graph edges ``|E|`` (the edge constraints number ``2|E|``).
    theta_ : float
        The θ used (``theta``, or ``100·|E|/m`` for "auto").
    timings_ : dict
        Seconds in the graph, the solve and in total.
    transduction_ : ndarray of shape (n_samples,)
        Predicted labels of the training points.

    See Also
    --------
    SparseLapCVMRegressor : The same machine for real targets.
    LapSVC : The exact Laplacian SVM (paper 001 §2.1).
    NystromLapSVC : The Laplacian SVM on a reduced basis of centers.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import SparseLapCVMClassifier
    >>> X, y = make_two_moons(1000, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    >>> model = SparseLapCVMClassifier(kernel=RBF(gamma=4.0), C=100.0, theta=1e5,
    ...                                random_state=0).fit(X, y_ssl)
    >>> model.converged_, bool(model.n_support_ < 100)
    (True, True)
    """

    _parameter_constraints: dict = {
        **_SparseLapCVMBase._parameter_constraints,
        **UNLABELED_CONSTRAINT,
    }
    _zero_mean_targets = False
    _centre_decision = False
    _prior_decision = False

    def __init__(
        self,
        *,
        kernel=SLAPCVM_KERNEL,
        graph=SLAPCVM_GRAPH,
        C=10.0,
        mu=None,
        theta="auto",
        tol=1e-4,
        max_core_set=5000,
        max_iter=1000,
        n_candidates=59,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.kernel = kernel
        self.graph = graph
        self.C = C
        self.mu = mu
        self.theta = theta
        self.tol = tol
        self.max_core_set = max_core_set
        self.max_iter = max_iter
        self.n_candidates = n_candidates
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.unlabeled = unlabeled

    def _labeled_items(self, labeled, targets):
        """One item ``y_i φ̃(x_i)`` per labeled point, linear term ``2/C`` (eq. 8)."""
        return labeled, np.where(targets > 0, 1.0, -1.0), 2.0 / self.C


class SparseLapCVMRegressor(SSLRegressorMixin, _SparseLapCVMBase):
    """Sparsified Laplacian core vector machine for regression (paper 001 §3, "SLapCVM").

    **Faithful to the paper, and not the estimator for an accurate sparse Laplacian model.**
    The classifier's dual (8), of which this is the regression form, is accurate at the
    paper's ``mμ = 1`` only where its solution is not sparse
    (``benchmarks/results/slapcvm_exact_qp/``); for a scalable manifold-regularized regressor
    use :class:`~semiscale.models.LapRLSRegressor` or
    :class:`~semiscale.models.NystromLapRLSRegressor`, for classification
    :class:`~semiscale.models.LapSVC` or :class:`~semiscale.models.NystromLapSVC`.  The
    defaults are the paper 001 benchmark's preset (``mμ = 1``, ``θ = 100·|E|/m``).

    The classifier's primal with the margin constraints replaced by an ε̄-insensitive tube
    around the targets (paper 001 §3.1, last paragraph, and eq. 12 for the manifold-free case):

    ``min ‖w‖² + b² + C/(mμ) Σ_i (ξ_i² + ξ_i*²) + 2Cε̄ + Cθ/(|E|μ) Σ_e (ζ_e² + ζ_e*²)``
    subject to ``y_i − f(x_i) ≤ ε̄ + ξ_i``, ``f(x_i) − y_i ≤ ε̄ + ξ_i*`` and the edge
    constraints of :class:`SparseLapCVMClassifier`.  Its dual has two items per labeled point,
    ``±φ̃(x_i)`` with linear terms ``±2y_i/C``, plus the ``2|E|`` edge items, over the simplex: the
    same center-constrained MEB, solved by the same CVM.  Without edges (θ → 0) it is the
    two-norm ε-SVR with a penalised bias of eq. (12), whose tube width μ sets.  One CVM per
    target column; ``NaN`` marks unlabeled points.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="mean")
        The base kernel; the default is paper 001's exp(−‖x − z‖²/β), β the mean squared
        distance of the points to their mean (None also means it).  The paper's two-moons
        experiment uses ``RBF(gamma=4.0)`` (β = 0.25).
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph or None, default=SLAPCVM_GRAPH
        The graph whose edges become constraints; the default is paper 001's 6-NN graph with
        weights exp(−d²/β_g), β_g the mean squared edge length, united:
        ``KNNGraph(n_neighbors=6, bandwidth="mean-square", symmetrize="union")``.
        ``graph.normalized`` selects the
        normalized form of eq. (3) (s(u) = √degree).  Ignored when ``fit`` gets ``laplacian=``.
    C : float, default=100.0
        Weight of the slacks and of the tube (paper 001's C; the paper tunes it on a
        validation set).  The default is measured: at C = 1 the penalised ‖w‖² + b² dominates
        and the fit is nearly constant (training R² 0.09 on scikit-learn's regression check
        data at the other defaults, 0.58 at C = 10, 0.91 at C = 100, 0.92 at C = 1,000; ad hoc
        ``/tmp`` script of issue 26; ``check_regressors_train`` in ``tests/test_slapcvm.py``
        needs more than 0.5).
    mu : float or None, default=None
        μ of eq. (5), which sets the tube width ε̄ (as ν in ν-SVR): larger μ, narrower tube and
        more active edges.  None: ``1/m`` (the paper's ``mμ = 1``), m the number of labeled
        points.
    theta : float or "auto", default="auto"
        θ of eq. (5): the edge slacks weigh ``Cθ/(|E|μ)`` against ``C/(mμ)`` for the labeled
        ones, so θ's natural scale is ``|E|/m``.  "auto": ``100·|E|/m``
        (:data:`THETA_EDGE_RATIO`), the paper 001 benchmark's preset, which keeps the core set
        small.  Small θ makes the edge items' ridge ``|E|μ/(Cθ)`` large and the core set grow
        towards all ``m + 2|E|`` items: the old default θ = 1 did not finish in 4.5 minutes
        on 2,000 two-moons points.
    tol : float, default=1e-4
        ε of the CVM's ``(1 + ε)``-approximate ball.
    max_core_set : int, default=5000
        Largest core set; reaching it first gives a ConvergenceWarning.  The core set's K̃
        block is kept in a buffer that doubles from 64 rows (or twice the labeled items), so
        at most :func:`~semiscale.solvers.cvm.core_set_bytes` ``(max_core_set, ·)`` bytes with
        the copy made when it doubles and the QP's (830.7 MiB at 5,000 from up to 32 labeled
        items); ``memory_budget`` stops it growing sooner.
    max_iter : int, default=1000
        CVM iterations per problem (each: the ball on the core set, the check of the random
        candidates and, when one lies outside, one item added); reaching it first gives a
        ConvergenceWarning.  The QP on the core set is capped too (100 pair updates per item).
    n_candidates : int, default=59
        Items outside the core set drawn per CVM iteration (the paper's probabilistic
        speed-up: the furthest of 59 is among the 5 % furthest with probability 0.95).  The
        CVM stops when the furthest candidate is inside the ``(1 + tol)`` ball, so a few
        violating items can go unseen; a value at least ``m + 2|E|`` checks every item and
        gives the exact ``(1 + tol)`` ball, at ``|S|`` K̃ entries per item per iteration.
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "4GB"); None = a quarter of the
        memory available.  Bounds the core set's Gram matrix (the core set stops growing where
        it would not fit, with a ``ConvergenceWarning`` naming it; labeled points whose initial
        core set does not fit raise ``MemoryBudgetError`` before the graph is built), the
        kernel blocks of ``predict``, and the graph's search when ``graph`` leaves its own
        budget at None.
    n_jobs : int or None, default=None
        Threads of the graph's neighbour search (when ``graph`` leaves its own ``n_jobs`` at
        None) and of the kernel blocks of ``predict``, as scikit-learn reads ``n_jobs`` (None:
        one, unless inside a ``joblib.parallel_config(n_jobs=...)`` context; -1: all cores).
        The core set grows one point at a time on one thread.  The result does not depend on it.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the CVM's candidate draws, the kernel width's sample and the graph's search.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).

    Attributes
    ----------
    kernel_ : Kernel
        The base kernel with its width resolved.
    graph_ : KNNGraph or None
        The fitted graph (None when ``fit`` got ``laplacian=``).
    X_fit_ : ndarray or sparse matrix of shape (n_support, n_features)
        The points of the expansion (``X[support_]``).
    support_ : ndarray of shape (n_support,)
        Their rows in the training data: labeled points and ends of active edges.
    n_support_ : int
        ``len(support_)``.
    dual_coef_ : ndarray of shape (n_support, n_outputs)
        Expansion weights (one column per binary problem or target).
    intercept_ : ndarray of shape (n_outputs,)
        The bias b of each problem.
    core_set_size_ : list of int
        The CVM's core set size per problem.
    n_iter_ : int
        CVM iterations (largest over the problems): items added to the core set, plus the
        last check.
    converged_ : bool
        Whether every CVM reached its ``(1 + tol)`` ball.
    n_edges_ : int
        The number of graph edges ``|E|`` (the edge constraints number ``2|E|``).
    theta_ : float
        The θ used (``theta``, or ``100·|E|/m`` for "auto").
    timings_ : dict
        Seconds in the graph, the solve and in total.
    transduction_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Predictions at the training points.

    See Also
    --------
    SparseLapCVMClassifier : The same machine for class labels.
    LapRLSRegressor : Exact Laplacian regularized least squares.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import SparseLapCVMRegressor
    >>> X = np.linspace(0, 1, 60)[:, None]
    >>> y = np.full(60, np.nan)
    >>> y[[0, 59]] = [0.0, 1.0]
    >>> model = SparseLapCVMRegressor(kernel=RBF(gamma=10.0), C=100.0, random_state=0)
    >>> bool(np.all(np.diff(model.fit(X, y).predict(X)) >= -1e-6))
    True
    """

    _items_per_label = 2

    def __init__(
        self,
        *,
        kernel=SLAPCVM_KERNEL,
        graph=SLAPCVM_GRAPH,
        C=100.0,
        mu=None,
        theta="auto",
        tol=1e-4,
        max_core_set=5000,
        max_iter=1000,
        n_candidates=59,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.kernel = kernel
        self.graph = graph
        self.C = C
        self.mu = mu
        self.theta = theta
        self.tol = tol
        self.max_core_set = max_core_set
        self.max_iter = max_iter
        self.n_candidates = n_candidates
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _labeled_items(self, labeled, targets):
        """Items ``+φ̃(x_i)`` (linear term ``2y_i/C``) and ``−φ̃(x_i)`` (``−2y_i/C``)."""
        rows = np.concatenate([labeled, labeled])
        signs = np.concatenate([np.ones(labeled.size), -np.ones(labeled.size)])
        return rows, signs, np.concatenate([targets, -targets]) * (2.0 / self.C)
