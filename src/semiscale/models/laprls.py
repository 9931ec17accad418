"""Laplacian regularized least squares on the full problem (the reference model).

Paper 000 (Li et al. 2019), §3, eq. (3): with f = Σ_j α_j k(x_j, ·) over all n training points,
the minimiser of

.. math::

    \\sum_{i \\le l} (y_i - f(x_i))^2 + \\lambda_A \\|f\\|_K^2 + \\lambda_I f^\\top L f

is :math:`\\alpha = (J K + \\lambda_A I + \\lambda_I L K)^{-1} J y` with J the diagonal indicator of
labeled points.  semiscale's canonical scaling (DESIGN.md §3) sets λ_A = l·ambient_reg and
λ_I = l·intrinsic_reg / tr(L) (see :mod:`semiscale.scaling`).

With ``intrinsic_reg = 0`` the unlabeled coefficients are zero and the labeled ones solve
(K_ll + λ_A I) α_l = y_l: supervised RLS, i.e. kernel ridge regression with alpha = λ_A.
"""

from __future__ import annotations

from functools import partial
from numbers import Integral

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import StrOptions

from ..solvers.exact import DIRECT_WHAT, EXACT_SOLVERS, check_dense_fits, solve_exact
from ..solvers.newton import solve_manifold
from ._base import (
    AUTO_INTRINSIC_REG_CONSTRAINT,
    BALANCED_TARGETS_CONSTRAINT,
    DEFAULT_CLASSIFIER_KERNEL,
    DEFAULT_GRAPH,
    DEFAULT_KERNEL,
    EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR,
    MANIFOLD_PARAMETER_CONSTRAINTS,
    OUT_OF_SAMPLE_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    FitContract,
    ManifoldMixin,
    ManifoldProblem,
    Solution,
    SSLClassifierMixin,
    SSLRegressorMixin,
)

__all__ = ["LapRLSClassifier", "LapRLSRegressor"]


class _LapRLSBase(ManifoldMixin, BaseEstimator):
    _parameter_constraints: dict = {
        **MANIFOLD_PARAMETER_CONSTRAINTS,
        "solver": [StrOptions(set(EXACT_SOLVERS))],
        "n_jobs": [Integral, None],
    }

    def _check_before_graph(self, n_samples: int, n_labeled: int) -> None:
        # the direct solve's two n×n arrays (K, then the system, and LAPACK's copy)
        if self.solver == "direct" and self._resolve_intrinsic_reg(n_samples, n_labeled) > 0:
            check_dense_fits(n_samples, self.memory_budget, 2, DIRECT_WHAT)
        elif self._resolve_intrinsic_reg(n_samples, n_labeled) > 0:  # CG holds K (n×n)
            what = f"LapRLS with solver={self.solver!r} (it holds the n x n kernel matrix K)"
            check_dense_fits(n_samples, self.memory_budget, 1, what)

    def _solve(self, problem: ManifoldProblem) -> Solution:
        quadratic = partial(
            solve_exact,
            solver=self.solver,
            preconditioner=self.preconditioner,
            tol=self.tol,
            max_iter=self.max_iter,
        )
        return solve_manifold(problem, quadratic)


class LapRLSRegressor(SSLRegressorMixin, _LapRLSBase):
    """Laplacian regularized least-squares regression (exact; paper 000 eq. 3).

    Minimises ``(1/l) Σ_labeled (y_i − f(x_i))² + ambient_reg‖f‖²_K + intrinsic_reg fᵀLf/tr(L)``
    over f in the span of k(x_j, ·) for all training points. NaN targets mark unlabeled points.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="median")
        Kernel object from :mod:`semiscale.kernels` (fixed, or fitted on the training data);
        None also means ``RBF(gamma="median")``.
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` defines the intrinsic term (None also means
        ``KNNGraph()``); :class:`semiscale.graph.PrecomputedGraph` reuses a Laplacian of the
        whole data set.  Ignored when ``fit`` receives ``laplacian=`` or when
        ``intrinsic_reg == 0``.  A copy is fitted (``graph_``); it takes the estimator's
        ``memory_budget`` when its own is None.
    ambient_reg : float, default=1e-4
        Weight of ‖f‖²_K in the canonical objective; ``>= 0``.
    intrinsic_reg : float, default=1.0
        Weight of fᵀLf / tr(L); ``>= 0``, and 0 gives supervised RLS on the labeled points.
    solver : {"direct", "cg", "pcg"}, default="direct"
        "direct": dense LU of paper 000's eq. (3), O(n³) time, two n×n arrays of memory.
        "cg"/"pcg": (preconditioned) conjugate gradient on the symmetric form
        K(JK + λ_A I + λ_I LK)α = KJy, holding the n×n K (it must fit ``memory_budget``; the
        Nyström estimators scale past it) (paper 000's LapRLS-CG/PCG); with ``intrinsic_reg=0``,
        CG on (K_ll + λ_A I)α = y (RLS-CG), K_ll recomputed in blocks when it does not fit.
    preconditioner : str or None, default="sampled-hessian"
        For ``solver="pcg"``: a name of :data:`semiscale.solvers.PRECONDITIONERS`.
    tol : float, default=1e-6
        Relative residual at which CG/PCG stops; ``> 0``.
    max_iter : int or None, default=None
        CG/PCG iteration cap (None: 10·n).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "4GB" or "512MiB"); None = a quarter
        of available memory.  A problem that does not fit raises ``MemoryBudgetError`` before
        allocating.  Also bounds the graph search when ``graph`` has no budget of its own.
    random_state : int, RandomState, Generator or None, default=None
        Seeds data-dependent kernel heuristics (``gamma="median"``) and the ``"pcg"``
        preconditioner's row sample.  An int gives the same model on every fit; a
        ``RandomState`` or ``Generator`` is drawn from (and advanced).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads ``n_jobs`` (None: one, unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context; -1: all cores), for the kernel blocks
        (the kernel matrix of the solve or its blocks, the kernel expansion at ``predict``), the
        graph's neighbour search when ``graph`` leaves its own ``n_jobs`` at None, and the graph
        extension's at ``predict``.  The result does not depend on it.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=False
        Add an unpenalised bias b: ``f(x) = Σ_j α_j k(x_j, x) + b`` (paper 000 has none); solved
        by a bordered system (:mod:`semiscale.solvers.newton`).

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with data-dependent parameters resolved.
    graph_ : KNNGraph, PrecomputedGraph or None
        The fitted copy of ``graph`` (None when a Laplacian was passed or intrinsic_reg = 0).
    X_fit_ : ndarray of shape (n_fit, n_features)
        Expansion points (all training points; the labeled ones when intrinsic_reg = 0), in
        the dtype of ``X`` (float32 data stay float32; the fit computes in float64).
    dual_coef_ : ndarray of shape (n_fit, n_outputs)
        Coefficients α of the kernel expansion.
    intercept_ : ndarray of shape (n_outputs,)
        The bias (zeros unless ``fit_intercept``).
    intrinsic_reg_ : float
        The weight of the intrinsic term used (``intrinsic_reg``).
    n_iter_ : int
        CG/PCG iterations (0 for ``solver="direct"``).
    residuals_ : ndarray of shape (n_iter_ + 1, n_outputs) or None
        Relative residual history of CG/PCG.
    solver_info_ : dict
        What the solver did (system solved, whether K was cached, convergence).
    laplacian_trace_ : float
        tr(L), the normaliser of the intrinsic term (0 without a graph).
    n_labeled_ : int
        Number of labeled training points.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names of ``X`` seen during ``fit``, when ``X`` is a pandas DataFrame with string
        column names; ``predict`` then refuses columns in another order.
    timings_ : dict
        Seconds spent in graph construction (``"graph"``), solving (``"solve"``) and in total.
    transduction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        f on the training points (labeled and unlabeled).

    See Also
    --------
    LapRLSClassifier : The same model for class labels.
    NystromLapRLSRegressor : Its Nyström approximation, for large n.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import LapRLSRegressor
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]  # a point of each moon
    >>> y_ssl = np.full(200, np.nan)  # NaN marks unlabeled points
    >>> y_ssl[first] = [0.0, 1.0]     # two labeled points, one target per moon
    >>> model = LapRLSRegressor(
    ...     kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...     ambient_reg=1e-6, intrinsic_reg=100.0,
    ... ).fit(X, y_ssl)
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]]).round(1)  # new points on each moon
    array([0., 1.])
    """

    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="training",
        fit_intercept=True,
        n_jobs=True,
        approximate_cv=True,
    )

    def __init__(
        self,
        *,
        kernel=DEFAULT_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-4,
        intrinsic_reg=1.0,
        solver="direct",
        preconditioner="sampled-hessian",
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
        fit_intercept=False,
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.solver = solver
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.fit_intercept = fit_intercept


class LapRLSClassifier(SSLClassifierMixin, _LapRLSBase):
    """Laplacian regularized least-squares classification (exact; paper 000 eq. 3).

    Solves, with one right-hand side per class in a single factorization,

    .. math::

        \\min_f\\; \\frac{1}{l} \\sum_{i \\le l} \\lVert Y_i - f(x_i) \\rVert^2
        + \\texttt{ambient\\_reg}\\, \\lVert f \\rVert_K^2
        + \\texttt{intrinsic\\_reg}\\,
          \\frac{\\operatorname{tr}(F^\\top L F)}{\\operatorname{tr}(L)}

    over f = (f_1, …, f_C) in the span of k(x_j, ·) for all n training points (C = 1 for a
    binary problem; F holds f on the n training points). The labeled rows Y_i are
    zero-mean, ``e_c − ȳ`` for a point of class c (``ȳ`` the labeled class proportions; a
    binary problem has one column, ±1 when the two label counts are equal), or class-balanced
    with ``balanced_targets=True``. With a graph, each fitted column is then shifted so that
    ``Σ_i d_i f_c(x_i) = 0`` over the training points, ``d = diag(L)`` (Poisson learning's
    normalization). Last, with the default zero-mean targets, the decision becomes
    ``g_c = α f_c + ȳ_c``: α (``decision_scale_``) the least-squares scale of f to the
    labeled targets, and the labeled proportions added back, so that the arg max is the most
    probable class, not the class that most exceeds its prior (with equal label counts the
    predictions are unchanged). The shift and scale are kept in ``dual_coef_`` and
    ``intercept_``, so ``decision_function`` and ``predict`` use g. Without zero-mean
    targets and the centring, LapRLS collapses at one label per class: each column is offset
    to fit its class's single labeled spike. Chosen by measurement: 89.5 / 92.2 / 92.4 / 93.9 %
    on usps at 1 / 3 / 5 / 10 labels per class, against 35.5 / 69.5 / 82.9 / 91.7 % with ±1
    targets (``benchmarks/results/few_label_laprls/``). ``y == unlabeled`` marks unlabeled
    points.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="local")
        Kernel object from :mod:`semiscale.kernels` (fixed, or fitted on the training data);
        None also means ``RBF(gamma="local")``: σ is the data's local scale (the median
        distance to the 8th nearest point of a 1,000-point sample).  The regressors' median
        width is too wide for classes that interleave, such as two moons with one label per
        class (``benchmarks/results/defaults/``).
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` defines the intrinsic term (None also means
        ``KNNGraph()``); :class:`semiscale.graph.PrecomputedGraph` reuses a Laplacian of the
        whole data set.  Ignored when ``fit`` receives ``laplacian=`` or when
        ``intrinsic_reg == 0``.  A copy is fitted (``graph_``); it takes the estimator's
        ``memory_budget`` when its own is None.
    ambient_reg : float, default=1e-6
        Weight of ‖f‖²_K in the canonical objective; ``>= 0``.  Small, so that the graph term
        carries a few labels along the data (``benchmarks/results/defaults/``).
    intrinsic_reg : float or "auto", default="auto"
        Weight of fᵀLf / tr(L); ``>= 0``, and 0 gives supervised RLS on the labeled points.
        ``"auto"`` is ``(n/l)²`` for n training points (labeled and unlabeled) and l
        labeled ones, recorded in ``intrinsic_reg_`` (the best weight grows with n/l, so no
        constant suits every label count).  Chosen by measurement: 91.7 / 94.5 / 94.8 % on usps
        at 1 / 3 / 10 labels per class, against 80.4 / 90.0 / 94.4 % for ``0.01·(n/l)²``
        (``benchmarks/results/auto_intrinsic_reg/``).
    solver : {"direct", "cg", "pcg"}, default="direct"
        "direct": dense LU of paper 000's eq. (3), O(n³) time, two n×n arrays of memory.
        "cg"/"pcg": (preconditioned) conjugate gradient on the symmetric form
        K(JK + λ_A I + λ_I LK)α = KJy, holding the n×n K (it must fit ``memory_budget``; the
        Nyström estimators scale past it) (paper 000's LapRLS-CG/PCG); with ``intrinsic_reg=0``,
        CG on (K_ll + λ_A I)α = y (RLS-CG), K_ll recomputed in blocks when it does not fit.
    preconditioner : str or None, default="sampled-hessian"
        For ``solver="pcg"``: a name of :data:`semiscale.solvers.PRECONDITIONERS`.
    tol : float, default=1e-6
        Relative residual at which CG/PCG stops; ``> 0``.
    max_iter : int or None, default=None
        CG/PCG iteration cap (None: 10·n).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "4GB" or "512MiB"); None = a quarter
        of available memory.  A problem that does not fit raises ``MemoryBudgetError`` before
        allocating.  Also bounds the graph search when ``graph`` has no budget of its own.
    random_state : int, RandomState, Generator or None, default=None
        Seeds data-dependent kernel heuristics (``gamma="median"``) and the ``"pcg"``
        preconditioner's row sample.  An int gives the same model on every fit; a
        ``RandomState`` or ``Generator`` is drawn from (and advanced).
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads ``n_jobs`` (None: one, unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context; -1: all cores), for the kernel blocks
        (the kernel matrix of the solve or its blocks, the kernel expansion at ``predict``), the
        graph's neighbour search when ``graph`` leaves its own ``n_jobs`` at None, and the graph
        extension's at ``predict``.  The result does not depend on it.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=False
        Add an unpenalised bias b: ``f(x) = Σ_j α_j k(x_j, x) + b`` (paper 000 has none); solved
        by a bordered system (:mod:`semiscale.solvers.newton`).
    balanced_targets : bool, default=False
        Targets of the labeled points (squared loss): False gives ``e_c − ȳ`` (one-hot minus the
        labeled class proportions, :func:`semiscale._validation.zero_mean_targets`), which keeps
        the labeled proportions as the class prior; True gives every class the same total
        weight, ``(e_c − 1/C)·l/(C·n_c)`` (:func:`semiscale._validation.balanced_targets`), for
        labels drawn with other proportions than the classes'.  The two are equal when every
        class has the same number of labels.
    out_of_sample : {"graph", "kernel"}, default="graph"
        How ``predict`` and ``decision_function`` evaluate new points.  ``"graph"``: the
        heat-weighted mean of the fitted decision values of the new point's k nearest training
        points (the fitted graph's k and bandwidth; :mod:`semiscale.models._extension`), as
        Poisson and Laplace learning extend their graph.  ``"kernel"``: the kernel expansion
        ``Σ_j α_j k(x_j, x) + b``.  With the default narrow kernel the expansion carries little
        of the graph's labeling away from the training points:
        ``benchmarks/results/out_of_sample/``.  Without a graph term (``intrinsic_reg=0``) both
        are the kernel expansion.
    unlabeled : int, float, str or None, default=-1
        Marker of unlabeled points in ``y`` (None: every point is labeled).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes seen among the labeled points.
    kernel_ : Kernel
        The kernel with data-dependent parameters resolved.
    graph_ : KNNGraph, PrecomputedGraph or None
        The fitted copy of ``graph`` (None when a Laplacian was passed or intrinsic_reg = 0).
    X_fit_ : ndarray of shape (n_fit, n_features)
        Expansion points (all training points; the labeled ones when intrinsic_reg = 0), in
        the dtype of ``X`` (float32 data stay float32; the fit computes in float64).
    dual_coef_ : ndarray of shape (n_fit, n_outputs)
        Coefficients α of the kernel expansion.
    intercept_ : ndarray of shape (n_outputs,)
        The bias (``fit_intercept``) minus the centring shift of each column (with a graph),
        scaled by ``decision_scale_``, plus the labeled class proportions (zero-mean targets;
        binary problems: their difference ``ȳ_1 − ȳ_0``).
    decision_scale_ : float
        α, the least-squares scale of the centred fit to the labeled zero-mean targets
        (``α = ⟨F_l, Y_l⟩ / ⟨F_l, F_l⟩``, 1 when they do not correlate); absent with
        ``balanced_targets=True``.
    intrinsic_reg_ : float
        The weight of the intrinsic term used (``"auto"`` resolved).
    n_iter_ : int
        CG/PCG iterations (0 for ``solver="direct"``).
    residuals_ : ndarray of shape (n_iter_ + 1, n_outputs) or None
        Relative residual history of CG/PCG.
    solver_info_ : dict
        What the solver did (system solved, whether K was cached, convergence).
    laplacian_trace_ : float
        tr(L), the normaliser of the intrinsic term (0 without a graph).
    n_labeled_ : int
        Number of labeled training points.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names of ``X`` seen during ``fit``, when ``X`` is a pandas DataFrame with string
        column names; ``predict`` then refuses columns in another order.
    timings_ : dict
        Seconds spent in graph construction (``"graph"``), solving (``"solve"``) and in total.
    transduction_ : ndarray of shape (n_samples,)
        Predicted labels of the training points (labeled and unlabeled).
    extension_ : dict or None
        With ``out_of_sample="graph"`` and a graph term: the training points, their fitted
        decision values and the graph's k and bandwidth that ``predict`` extends; else None.

    See Also
    --------
    LapRLSRegressor : The same model for real-valued targets.
    NystromLapRLSClassifier : Its Nyström approximation, for large n.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import LapRLSClassifier
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]  # a point of each moon
    >>> y_ssl = np.full_like(y, -1)  # -1 marks unlabeled points
    >>> y_ssl[first] = [0, 1]        # two labeled points, one per moon
    >>> model = LapRLSClassifier(
    ...     kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...     ambient_reg=1e-6, intrinsic_reg=100.0,
    ... ).fit(X, y_ssl)
    >>> float((model.transduction_ == y).mean())  # the 198 unlabeled points are labeled right
    1.0
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]])  # new points on each moon
    array([0, 1])
    """

    _auto_intrinsic_factor = EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR
    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="training",
        fit_intercept=True,
        balanced_targets=True,
        out_of_sample=True,
        n_jobs=True,
        approximate_cv=True,
    )

    _parameter_constraints: dict = {
        **_LapRLSBase._parameter_constraints,
        **AUTO_INTRINSIC_REG_CONSTRAINT,
        **BALANCED_TARGETS_CONSTRAINT,
        **UNLABELED_CONSTRAINT,
        **OUT_OF_SAMPLE_CONSTRAINT,
    }

    def __init__(
        self,
        *,
        kernel=DEFAULT_CLASSIFIER_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-6,
        intrinsic_reg="auto",
        solver="direct",
        preconditioner="sampled-hessian",
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
        fit_intercept=False,
        balanced_targets=False,
        unlabeled=-1,
        out_of_sample="graph",
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.solver = solver
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.fit_intercept = fit_intercept
        self.balanced_targets = balanced_targets
        self.unlabeled = unlabeled
        self.out_of_sample = out_of_sample
