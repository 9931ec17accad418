"""Nyström LapRLS solved by preconditioned conjugate gradient (paper 000, §4).

With s Nyström centers x̃_1..x̃_s the function is f = Σ_j α_j k(x̃_j, ·) and the minimiser of the
LapRLS objective over that span solves (paper 000 eq. 4)

.. math::

    H α = z,\\qquad H = K_{ms}^\\top K_{ms} + λ_A K_{ss} + λ_I K_{ns}^\\top L K_{ns},
    \\qquad z = K_{ms}^\\top y,

with λ_A = l·ambient_reg and λ_I = l·intrinsic_reg/tr(L) (DESIGN.md §3).  H·α is computed in row
blocks without storing K_ns (eq. 7; K_ns is cached when it fits the memory budget), so memory
is O(n + s²) and each CG iteration costs O(n·s·d).  The default preconditioner
(``"sampled-hessian"``) writes H = Tᵀ G T with T = chol(K_ss), G's labeled term exact and its
graph term estimated from a row sample of the real graph; paper 000's eq. (5)/(6) are available
as ``"paper"``/``"paper5"``/``"paper6"``.  By default the labeled points are among the centers
(``labeled_centers``).
"""

from __future__ import annotations

from ._base import (
    AUTO_INTRINSIC_REG_CONSTRAINT,
    BALANCED_TARGETS_CONSTRAINT,
    DEFAULT_CLASSIFIER_KERNEL,
    DEFAULT_GRAPH,
    DEFAULT_KERNEL,
    OUT_OF_SAMPLE_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
    SSLRegressorMixin,
)
from ._nystrom_fit import LABEL_DIFFUSION_CONSTRAINT, _NystromLapRLSBase

__all__ = ["NystromLapRLSClassifier", "NystromLapRLSRegressor"]


class NystromLapRLSRegressor(SSLRegressorMixin, _NystromLapRLSBase):
    """Nyström LapRLS regression solved by PCG (paper 000, "Nyström-PCG").

    The LapRLS objective of :class:`LapRLSRegressor` minimised over f in the span of
    k(x̃_j, ·) for s Nyström centers x̃_j; memory O(n + s²), O(n·s·d) per PCG iteration.
    NaN targets mark unlabeled points.

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
        ``memory_budget`` and ``n_jobs`` where its own are None.
    ambient_reg : float, default=1e-4
        Weight of ‖f‖²_K in the canonical objective; ``>= 0``.
    intrinsic_reg : float, default=1.0
        Weight of fᵀLf / tr(L); ``>= 0``, and 0 gives Nyström RLS (only labeled rows are ever
        touched).
    n_centers : int, float, "auto" or "sqrt", default="auto"
        Number of Nyström centers s: an int in [1, n], a fraction of n in (0, 1], "auto" (1,000
        or n when smaller, chosen by measurement:
        :data:`semiscale.linalg.centers.AUTO_MAX_CENTERS`; fewer when ``memory_budget`` cannot
        hold the s×s arrays in half of it), or "sqrt" (⌈√n⌉, paper 000's theory).
    center_selection : {"uniform", "kmeans++", "rpcholesky"}, default="uniform"
        Uniform sampling (the paper's), kernel k-means++ (D²) sampling, or randomly pivoted
        Cholesky; the last two approximate K better on data of uneven density.  Uniform by
        measurement: the others kept the test RMSE within 0.3 % on paper 000's datasets at
        s = 0.1 n (:mod:`semiscale.linalg.centers`, ``benchmarks/results/center_selection/``).
    labeled_centers : bool, default=True
        When the m labeled points fit (m ≤ s), make all of them centers and choose only the
        other s − m by ``center_selection``.  The span then contains RLS's (by the representer
        theorem, ``intrinsic_reg=0`` gives exactly kernel RLS on the labeled points), and the
        preconditioner reads those points' features from chol(K_ss) instead of computing them.
        No effect when m > s.
    label_diffusion : int, default=0
        Steps m of the random walk ``T = D⁻¹W`` on the graph (the last step lazy, and mass on
        other labeled points sent back: :mod:`semiscale.graph.diffusion`) whose average each
        label is compared with: the labeled term becomes (1/l) Σ_i ((S_m f)(x_i) − y_i)²
        (:func:`semiscale.graph.label_diffusion_weights`).  0 is paper 000's LapRLS (the
        prediction at the labeled point itself), the regressors' default: the gain was measured
        for classification only (:class:`NystromLapRLSClassifier`).  Needs the graph term; no
        effect when ``intrinsic_reg == 0``.
    solver : {"pcg", "cg", "direct"}, default="pcg"
        Preconditioned CG, plain CG on the blocked operator, or forming H (s×s) and factoring it.
    preconditioner : str or None, default="sampled-hessian"
        A name of :data:`semiscale.solvers.PRECONDITIONERS` ("sampled-hessian", "paper", "paper5",
        "paper6", "falkon", "jacobi") used when ``solver="pcg"``.
    preconditioner_options : dict or None, default=None
        Extra keyword arguments of the preconditioner's builder, e.g. ``{"n_rows": 500}`` or
        ``{"n_labeled_rows": 2000}`` for ``"sampled-hessian"`` (see
        :func:`semiscale.solvers.sampled_hessian_preconditioner`), ``{"variant": 6}`` for
        ``"paper"``/``"falkon"``.
    tol : float, default=1e-6
        Relative residual ‖z − Hα‖/‖z‖ at which CG/PCG stops; ``> 0``.
    max_iter : int or None, default=None
        Iteration cap (None: 10·s).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "2GB" or "512MiB"); None = a quarter
        of available memory.  Decides block sizes and whether K_ns is cached; also bounds the
        graph search when ``graph`` has no budget of its own.
    kernel_dtype : {"float64", "float32"} or numpy dtype, default="float64"
        Precision of the kernel blocks and the K_ns cache, whatever the dtype of ``X`` (the
        Krylov recurrences always run in float64).  "float32" halves the cache and the memory
        traffic of each H product, but the operator then carries errors of about κ(H)·6e-8.
        float64 by measurement: float32 fitted madelon and phishing about 27 % faster, but on
        five of paper 000's nine datasets PCG did not reach its tolerance and the test RMSE
        grew to 5.5–590 (``benchmarks/results/kernel_dtype/``).  Use it only for a
        well-conditioned system (large ambient_reg), and check ``solver_info_["converged"]``.
    random_state : int, RandomState, Generator or None, default=None
        Seeds center selection, the preconditioner's row sample and kernel heuristics.  An int
        gives the same model on every fit; a ``RandomState`` or ``Generator`` is drawn from (and
        advanced).
    n_jobs : int or None, default=None
        Threads for the kernel blocks, as scikit-learn reads ``n_jobs``: None means 1 unless
        inside a ``joblib.parallel_config(n_jobs=...)`` context, -1 means all cores.  Each
        computes a contiguous chunk of K_ns's rows with single-threaded BLAS, so that NumPy's
        elementwise passes (exp) use every core too.  Also the graph search's threads when
        ``graph`` leaves its own ``n_jobs`` at None.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=False
        Add an unpenalised bias b: ``f(x) = Σ_j α_j k(x̃_j, x) + b`` (paper 000 has none); solved
        by a bordered system (:mod:`semiscale.solvers.newton`), one extra right-hand side.
        Needs ``label_diffusion=0`` where there is a graph term (the diffusion fixes the
        labeled rows, the bias moves them all); the pair is refused with that fix.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with data-dependent parameters resolved.
    graph_ : KNNGraph, PrecomputedGraph or None
        The fitted copy of ``graph`` (None when a Laplacian was passed or intrinsic_reg = 0).
    center_index_ : ndarray of int, shape (s,)
        Rows of the training X used as centers.
    X_fit_ : ndarray of shape (s, n_features)
        The centers, float32 when ``X`` or ``kernel_dtype`` is float32 (float32 data stay
        float32 whatever ``kernel_dtype``; float64 data fitted with ``kernel_dtype='float32'``
        keep the float32 centers the fit used), float64 otherwise.
    dual_coef_ : ndarray of shape (s, n_outputs)
        Coefficients α of the kernel expansion over the centers.
    intercept_ : ndarray of shape (n_outputs,)
        The bias (zeros unless ``fit_intercept``).
    intrinsic_reg_ : float
        The weight of the intrinsic term used (``intrinsic_reg``).
    n_iter_ : int
        CG/PCG iterations (0 for ``solver="direct"``).
    residuals_ : ndarray of shape (n_iter_ + 1, n_outputs) or None
        Relative residual history.
    solver_info_ : dict
        Preconditioner, jitter, whether K_ns could be cached and ``cache_filled`` (the cache is
        filled during the solve, once the passes computed without it, ``uncached_passes``,
        have cost as much as filling it), number of H products, convergence; for
        ``"sampled-hessian"`` also ``laplacian_rows`` (the graph sample used) and
        ``graph_trace_share``.  Seconds of the fit's phases: ``centers_seconds`` (center
        selection), ``rhs_seconds`` (z = K_msᵀy), ``preconditioner_seconds`` (with K_ss and its
        factorization) and ``iterations_seconds`` (the CG/PCG loop, retries included, and any
        filling of the cache; ``"direct"``: forming and factoring H).
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
    NystromLapRLSClassifier : The same model for class labels.
    LapRLSRegressor : The exact model (all n points as centers), for moderate n.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import NystromLapRLSRegressor
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]  # a point of each moon
    >>> y_ssl = np.full(200, np.nan)  # NaN marks unlabeled points
    >>> y_ssl[first] = [0.0, 1.0]     # two labeled points, one target per moon
    >>> model = NystromLapRLSRegressor(
    ...     kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...     ambient_reg=1e-6, intrinsic_reg=100.0, n_centers=150, random_state=0,
    ... ).fit(X, y_ssl)
    >>> model.X_fit_.shape  # the centers
    (150, 2)
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]]).round(1)  # new points on each moon
    array([0., 1.])
    """

    _parameter_constraints: dict = {
        **_NystromLapRLSBase._parameter_constraints,
        **LABEL_DIFFUSION_CONSTRAINT,
    }
    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="centers",
        fit_intercept=True,
        label_diffusion=True,
        n_jobs=True,
        approximate_cv=True,
        dask=True,
    )

    def __init__(
        self,
        *,
        kernel=DEFAULT_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-4,
        intrinsic_reg=1.0,
        n_centers="auto",
        center_selection="uniform",
        labeled_centers=True,
        label_diffusion=0,
        solver="pcg",
        preconditioner="sampled-hessian",
        preconditioner_options=None,
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        kernel_dtype="float64",
        random_state=None,
        n_jobs=None,
        verbose=0,
        fit_intercept=False,
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.n_centers = n_centers
        self.center_selection = center_selection
        self.labeled_centers = labeled_centers
        self.label_diffusion = label_diffusion
        self.solver = solver
        self.preconditioner = preconditioner
        self.preconditioner_options = preconditioner_options
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.kernel_dtype = kernel_dtype
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.fit_intercept = fit_intercept


class NystromLapRLSClassifier(SSLClassifierMixin, _NystromLapRLSBase):
    """Nyström LapRLS classification solved by PCG (paper 000, "Nyström-PCG").

    The objective of :class:`LapRLSClassifier`, one right-hand side per class, all solved in
    one PCG run:

    .. math::

        \\min_f\\; \\frac{1}{l} \\sum_{i \\le l} \\lVert Y_i - f(x_i) \\rVert^2
        + \\texttt{ambient\\_reg}\\, \\lVert f \\rVert_K^2
        + \\texttt{intrinsic\\_reg}\\,
          \\frac{\\operatorname{tr}(F^\\top L F)}{\\operatorname{tr}(L)}

    over f = (f_1, …, f_C) in the span of k(x̃_j, ·) for s Nyström centers x̃_j (C = 1 for a
    binary problem; F holds f on the n training points), with f(x_i) in the first term
    replaced by its ``label_diffusion``-step random-walk average (S_m f)(x_i) on the graph
    (m = 6 by default; m = 0 is paper 000's LapRLS). The labeled rows Y_i are
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
    to fit its class's single labeled spike. Chosen by measurement: 76.0 / 83.6 / 86.5 / 89.8 %
    on usps at 1 / 3 / 5 / 10 labels per class, against 36.8 / 66.4 / 76.6 / 86.3 % with ±1
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
        ``memory_budget`` and ``n_jobs`` where its own are None.
    ambient_reg : float, default=1e-6
        Weight of ‖f‖²_K in the canonical objective; ``>= 0``.  Small, so that the graph term
        carries a few labels along the data (``benchmarks/results/defaults/``).
    intrinsic_reg : float or "auto", default="auto"
        Weight of fᵀLf / tr(L); ``>= 0``, and 0 gives Nyström RLS (only labeled rows are ever
        touched).
        ``"auto"`` is ``0.01·(n/l)²`` for n training points (labeled and unlabeled) and l
        labeled ones, recorded in ``intrinsic_reg_``: the rule of
        ``benchmarks/results/few_label_laprls/`` (within 3 points of the best fixed setting on
        usps and letter at 1 to 10 labels per class; the best weight grows with n/l, so no
        constant suits every label count).
    n_centers : int, float, "auto" or "sqrt", default="auto"
        Number of Nyström centers s: an int in [1, n], a fraction of n in (0, 1], "auto" (1,000
        or n when smaller, chosen by measurement:
        :data:`semiscale.linalg.centers.AUTO_MAX_CENTERS`; fewer when ``memory_budget`` cannot
        hold the s×s arrays in half of it), or "sqrt" (⌈√n⌉, paper 000's theory).
    center_selection : {"uniform", "kmeans++", "rpcholesky"}, default="uniform"
        Uniform sampling (the paper's), kernel k-means++ (D²) sampling, or randomly pivoted
        Cholesky; the last two approximate K better on data of uneven density.  Uniform by
        measurement: the others kept the test RMSE within 0.3 % on paper 000's datasets at
        s = 0.1 n (:mod:`semiscale.linalg.centers`, ``benchmarks/results/center_selection/``).
    labeled_centers : bool, default=True
        When the m labeled points fit (m ≤ s), make all of them centers and choose only the
        other s − m by ``center_selection``.  The span then contains RLS's (by the representer
        theorem, ``intrinsic_reg=0`` gives exactly kernel RLS on the labeled points), and the
        preconditioner reads those points' features from chol(K_ss) instead of computing them.
        No effect when m > s.
    label_diffusion : int, default=6
        Steps m of the random walk ``T = D⁻¹W`` on the graph whose average each label is
        compared with: the labeled term becomes (1/l) Σ_i ‖(S_m F)_i − Y_i‖², the mean of the
        predictions where m − 1 or m steps from x_i end, ``S_m = T^{m−1}(I + T)/2``, with mass
        on other labeled points sent back to x_i (:func:`semiscale.graph.label_diffusion_weights`;
        ``H``'s labeled term ``K_msᵀK_ms`` becomes ``K_nsᵀ R Rᵀ K_ns`` with
        ``R = S_mᵀ E_l``, a few sparse products per PCG iteration; the last step is lazy
        because the plain walk ``T^m`` swaps the labels of a two-point graph).  With few labels
        the intrinsic term dominates and the fit is the Galerkin approximation, in the span of
        the centers, of Poisson learning's ``L u = Σ_i (y_i − ȳ) δ_{x_i}``; that solution has a
        spike at each labeled point which a span of Gaussian bumps cannot follow, and the energy
        norm in which Galerkin is optimal is spent on the spikes.  The diffused sources remove
        them (:mod:`semiscale.graph.diffusion`).  Chosen by measurement: at one label per class
        on held-out usps, mnist and letter points m = 5 gives 81.0 / 69.0 / 29.0 % against
        68.6 / 53.0 / 27.4 % for m = 0 (paper 000's LapRLS), at the same cost
        (``benchmarks/results/label_diffusion/``, plain walk; 3 trials); with the lazy last
        step m = 6 gave 85.3 % on usps against 84.8 % for m = 5 (ad hoc, 3 trials, new points
        predicted by the kernel expansion).  Needs the graph term (no effect when
        ``intrinsic_reg == 0``); approximate CV
        (:func:`~semiscale.model_selection.bif_cross_val_score`) needs ``label_diffusion=0``.
    solver : {"pcg", "cg", "direct"}, default="pcg"
        Preconditioned CG, plain CG on the blocked operator, or forming H (s×s) and factoring it.
    preconditioner : str or None, default="sampled-hessian"
        A name of :data:`semiscale.solvers.PRECONDITIONERS` ("sampled-hessian", "paper", "paper5",
        "paper6", "falkon", "jacobi") used when ``solver="pcg"``.
    preconditioner_options : dict or None, default=None
        Extra keyword arguments of the preconditioner's builder, e.g. ``{"n_rows": 500}`` or
        ``{"n_labeled_rows": 2000}`` for ``"sampled-hessian"`` (see
        :func:`semiscale.solvers.sampled_hessian_preconditioner`), ``{"variant": 6}`` for
        ``"paper"``/``"falkon"``.
    tol : float, default=1e-6
        Relative residual ‖z − Hα‖/‖z‖ at which CG/PCG stops; ``> 0``.
    max_iter : int or None, default=None
        Iteration cap (None: 10·s).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "2GB" or "512MiB"); None = a quarter
        of available memory.  Decides block sizes and whether K_ns is cached; also bounds the
        graph search when ``graph`` has no budget of its own.
    kernel_dtype : {"float64", "float32"} or numpy dtype, default="float64"
        Precision of the kernel blocks and the K_ns cache, whatever the dtype of ``X`` (the
        Krylov recurrences always run in float64).  "float32" halves the cache and the memory
        traffic of each H product, but the operator then carries errors of about κ(H)·6e-8.
        float64 by measurement: float32 fitted madelon and phishing about 27 % faster, but on
        five of paper 000's nine datasets PCG did not reach its tolerance and the test RMSE
        grew to 5.5–590 (``benchmarks/results/kernel_dtype/``).  Use it only for a
        well-conditioned system (large ambient_reg), and check ``solver_info_["converged"]``.
    random_state : int, RandomState, Generator or None, default=None
        Seeds center selection, the preconditioner's row sample and kernel heuristics.  An int
        gives the same model on every fit; a ``RandomState`` or ``Generator`` is drawn from (and
        advanced).
    n_jobs : int or None, default=None
        Threads for the kernel blocks, as scikit-learn reads ``n_jobs``: None means 1 unless
        inside a ``joblib.parallel_config(n_jobs=...)`` context, -1 means all cores.  Each
        computes a contiguous chunk of K_ns's rows with single-threaded BLAS, so that NumPy's
        elementwise passes (exp) use every core too.  Also the graph search's threads when
        ``graph`` leaves its own ``n_jobs`` at None.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=False
        Add an unpenalised bias b: ``f(x) = Σ_j α_j k(x̃_j, x) + b`` (paper 000 has none); solved
        by a bordered system (:mod:`semiscale.solvers.newton`), one extra right-hand side.
        Needs ``label_diffusion=0`` where there is a graph term (the diffusion fixes the
        labeled rows, the bias moves them all); the pair is refused with that fix.
    balanced_targets : bool, default=False
        Targets of the labeled points (squared loss): False gives ``e_c − ȳ`` (one-hot minus the
        labeled class proportions, :func:`semiscale._validation.zero_mean_targets`), which keeps
        the labeled proportions as the class prior; True gives every class the same total
        weight, ``(e_c − 1/C)·l/(C·n_c)`` (:func:`semiscale._validation.balanced_targets`), for
        labels drawn with other proportions than the classes'.  The two are equal when every
        class has the same number of labels.
    out_of_sample : {"graph", "kernel"}, default="graph"
        How ``predict`` and ``decision_function`` evaluate new points: ``"graph"`` extends the
        fitted decision values of the training points to their neighbours, ``"kernel"`` is
        the expansion over the centers (:class:`LapRLSClassifier`'s parameter).
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
    center_index_ : ndarray of int, shape (s,)
        Rows of the training X used as centers.
    X_fit_ : ndarray of shape (s, n_features)
        The centers, float32 when ``X`` or ``kernel_dtype`` is float32 (float32 data stay
        float32 whatever ``kernel_dtype``; float64 data fitted with ``kernel_dtype='float32'``
        keep the float32 centers the fit used), float64 otherwise.
    dual_coef_ : ndarray of shape (s, n_outputs)
        Coefficients α of the kernel expansion over the centers.
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
        Relative residual history.
    solver_info_ : dict
        Preconditioner, jitter, whether K_ns could be cached and ``cache_filled`` (the cache is
        filled during the solve, once the passes computed without it, ``uncached_passes``,
        have cost as much as filling it), number of H products, convergence; for
        ``"sampled-hessian"`` also ``laplacian_rows`` (the graph sample used) and
        ``graph_trace_share``.  Seconds of the fit's phases: ``centers_seconds`` (center
        selection), ``rhs_seconds`` (z = K_msᵀy), ``preconditioner_seconds`` (with K_ss and its
        factorization) and ``iterations_seconds`` (the CG/PCG loop, retries included, and any
        filling of the cache; ``"direct"``: forming and factoring H).
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
        With ``out_of_sample="graph"`` and a graph term: what ``predict`` extends; else None.

    See Also
    --------
    NystromLapRLSRegressor : The same model for real-valued targets.
    LapRLSClassifier : The exact model (all n points as centers), for moderate n.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import NystromLapRLSClassifier
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]  # a point of each moon
    >>> y_ssl = np.full_like(y, -1)  # -1 marks unlabeled points
    >>> y_ssl[first] = [0, 1]        # two labeled points, one per moon
    >>> model = NystromLapRLSClassifier(
    ...     kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...     ambient_reg=1e-6, intrinsic_reg=100.0, n_centers=150, random_state=0,
    ... ).fit(X, y_ssl)
    >>> float((model.transduction_ == y).mean())  # the 198 unlabeled points are labeled right
    1.0
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]])  # new points on each moon
    array([0, 1])
    """

    _parameter_constraints: dict = {
        **_NystromLapRLSBase._parameter_constraints,
        **LABEL_DIFFUSION_CONSTRAINT,
        **AUTO_INTRINSIC_REG_CONSTRAINT,
        **BALANCED_TARGETS_CONSTRAINT,
        **UNLABELED_CONSTRAINT,
        **OUT_OF_SAMPLE_CONSTRAINT,
    }
    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="centers",
        fit_intercept=True,
        balanced_targets=True,
        out_of_sample=True,
        label_diffusion=True,
        n_jobs=True,
        approximate_cv=True,
        dask=True,
    )

    def __init__(
        self,
        *,
        kernel=DEFAULT_CLASSIFIER_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-6,
        intrinsic_reg="auto",
        n_centers="auto",
        center_selection="uniform",
        labeled_centers=True,
        label_diffusion=6,
        solver="pcg",
        preconditioner="sampled-hessian",
        preconditioner_options=None,
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        kernel_dtype="float64",
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
        self.n_centers = n_centers
        self.center_selection = center_selection
        self.labeled_centers = labeled_centers
        self.label_diffusion = label_diffusion
        self.solver = solver
        self.preconditioner = preconditioner
        self.preconditioner_options = preconditioner_options
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.kernel_dtype = kernel_dtype
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.fit_intercept = fit_intercept
        self.balanced_targets = balanced_targets
        self.unlabeled = unlabeled
        self.out_of_sample = out_of_sample
