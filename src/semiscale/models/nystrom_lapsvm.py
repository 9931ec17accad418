"""The primal Laplacian SVM on Nyström centers: paper 001 §3.5's "reduced LapSVM".

The objective of :class:`semiscale.models.LapSVC` (squared or Huber-smoothed hinge) minimised
over f in the span of k(x̃_j, ·) for s centers x̃_j, with ‖f‖²_K = αᵀK_ssα: with s random
points this is the reduced LapSVM of paper 001 §3.5 (after Lee & Mangasarian's reduced SVM;
the paper uses r = 200 on two moons, 2,000 on USPS).  Each Newton step is one weighted Nyström
LapRLS solve by PCG on the machinery of paper 000
(:class:`~semiscale.solvers.nystrom_quadratic.NystromSolver`,
the sampled-Hessian preconditioner, the K_ns cache): memory O(n + s²), O(n·s·d) per iteration.
"""

from __future__ import annotations

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import HuberHingeLoss, SquaredHingeLoss
from ..solvers.hessian_system import ITERATIVE_SOLVERS
from ..solvers.lapsvm_nystrom import CachedNystromSolver, cached_solver_fits
from ._base import (
    AUTO_INTRINSIC_REG_CONSTRAINT,
    DEFAULT_CLASSIFIER_KERNEL,
    DEFAULT_GRAPH,
    EARLY_STOPPING_CONSTRAINTS,
    OUT_OF_SAMPLE_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
)
from ._nystrom_fit import _NystromLapRLSBase

__all__ = ["NystromLapSVC"]


class NystromLapSVC(SSLClassifierMixin, _NystromLapRLSBase):
    """Primal Laplacian SVM on s Nyström centers (paper 001 §3.5's reduced LapSVM).

    Minimises ``(1/l) Σ_labeled ℓ(y_i, f(x_i) + b) + ambient_reg‖f‖²_K +
    intrinsic_reg fᵀLf/tr(L)`` over f in the span of the centers' kernel functions, ℓ the
    squared hinge or the Huber-smoothed hinge, by Newton's method with an exact line search
    (:mod:`semiscale.solvers.newton`), each step one Nyström LapRLS system solved by PCG
    (:class:`NystromLapRLSClassifier`'s solvers and preconditioners).  One-vs-rest for several
    classes.  With every training point a center it is :class:`LapSVC`'s primal.
    ``y == unlabeled`` marks unlabeled points.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="local")
        Kernel object from :mod:`semiscale.kernels`; None also means ``RBF(gamma="local")``.
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` defines the intrinsic term.  Ignored when ``fit``
        receives ``laplacian=`` or when ``intrinsic_reg == 0``.
    ambient_reg : float, default=1e-6
        Weight of ‖f‖²_K; ``>= 0``.
    intrinsic_reg : float or "auto", default="auto"
        Weight of fᵀLf / tr(L); ``>= 0``.  ``"auto"``: 0.01·(n/l)², as :class:`LapSVC`.
    loss : {"auto", "squared_hinge", "huber_hinge"}, default="auto"
        The smooth hinge minimised; ``"auto"`` is the squared hinge, what ``"auto"`` means for
        :class:`LapSVC`'s primal formulation (the only one on centers).
    huber_width : float, default=0.01
        Half-width h of the Huber hinge's quadratic zone.
    n_centers : int, float, "auto" or "sqrt", default="auto"
        Number of centers s (as :class:`NystromLapRLSClassifier`: "auto" is 1,000, or n when
        smaller, fewer to fit ``memory_budget``).
    center_selection : {"uniform", "kmeans++", "rpcholesky"}, default="uniform"
        How the centers are drawn (uniform: the reduced LapSVM's random subset).
    labeled_centers : bool, default=True
        Make the labeled points centers when they fit.
    solver : {"auto", "pcg", "cg", "direct"}, default="auto"
        The solver of each Newton step's s × s system.  ``"auto"``: when ``K_ns`` (n × s) fits in
        half of ``memory_budget`` (:func:`~semiscale.solvers.lapsvm_nystrom.cached_solver_bytes`),
        ``K_ns``, ``K_ss`` and ``K_nsᵀ L K_ns`` are computed once and each step factors its s × s
        system directly (:class:`~semiscale.solvers.lapsvm_nystrom.CachedNystromSolver`, float64
        whatever ``kernel_dtype``); otherwise ``"pcg"``.  The others rebuild the step's system from
        kernel blocks at each step: ``"pcg"`` a preconditioner and a PCG run, ``"direct"`` the dense
        H.  Fit seconds at the defaults, ``"pcg"`` → ``"auto"``: sklearn's digits (1,437 points)
        14.6 → 1.5, usps (7,291) 19.4 → 1.6, where ``LapSVC()`` took 1.7 and 20.9
        (``benchmarks/results/out_of_sample/``).
    preconditioner : str or None, default="sampled-hessian"
        A name of :data:`semiscale.solvers.PRECONDITIONERS` (``solver="pcg"``).
    preconditioner_options : dict or None, default=None
        Options of the preconditioner.
    tol : float, default=1e-6
        Relative residual at which each step's CG/PCG stops.
    max_iter : int or None, default=None
        CG/PCG iteration cap per step.
    memory_budget : int, str or None, default=None
        Largest working memory; None = a quarter of available memory.
    kernel_dtype : {"float64", "float32"}, default="float64"
        Precision of the kernel blocks (see :class:`NystromLapRLSClassifier`).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the centers, the kernel's width heuristic and the preconditioner's sample.
    n_jobs : int or None, default=None
        Threads for the kernel blocks (None: one).
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=True
        Fit the unpenalised bias b.
    centring : bool, default=True
        With a graph term, shift each fitted column so that ``Σ_i d_i f(x_i) = 0`` over the
        training points, ``d = diag(L)`` (Poisson learning's normalization, as the LapRLS
        classifiers do; the shift goes into ``intercept_``).  Without it the sign of f + b
        follows f's decay away from few labeled points: at one label per class on USPS digits
        1 against 2 (302 and 1,002 points, paper 001's graph and kernel) the plain LapSVM
        classified 57–60 % of the training points right, 97–100 % with the shift.  As the
        shift alone assumes classes of equal mass, the decision then becomes
        ``α (f − c) + (2p − 1)``: α the least-squares scale on the labeled rows and p the
        labeled class proportions, as the LapRLS classifiers do (a9a, 76/24 classes, 48,842
        points, 500 labeled: ``NystromLapSVC()`` 75.2 % with the shift alone, 80.8 % without
        centring, 82.1 % with both; ``benchmarks/results/lapsvm_scale/``).  False: the
        papers' LapSVM, ``sign(f + b)``.
    early_stopping : bool, default=False
        Stop each binary problem's Newton iteration once at most ``stability_tol`` of the
        training points change side between two consecutive steps (Melacci & Belkin 2011's
        stability check on the unlabeled predictions, at Newton steps;
        :mod:`semiscale.solvers.newton`).  The fit is then approximate: not the minimiser,
        which approximate CV (:mod:`semiscale.model_selection.bif`) needs and so refuses.
        ``solver_info_["stopped_early"]`` says which problems stopped.
    stability_tol : float, default=1e-3
        Fraction of the training points, in [0, 1], allowed to change side in the step that
        ends the iteration (``early_stopping=True``).
    out_of_sample : {"graph", "kernel"}, default="graph"
        How ``predict`` and ``decision_function`` evaluate new points.  ``"graph"``: the
        heat-weighted mean of the fitted decision values of the new point's k nearest training
        points (the fitted graph's k and bandwidth; :mod:`semiscale.models._extension`), as
        Poisson and Laplace learning extend their graph.  ``"kernel"``: the kernel expansion
        ``Σ_j α_j k(x_j, x) + b``.  Without a graph term (``intrinsic_reg=0``) both are the
        kernel expansion.
    unlabeled : int, float, str or None, default=-1
        The marker of unlabeled points in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_ : Kernel
    graph_ : KNNGraph, PrecomputedGraph or None
    X_fit_ : ndarray of shape (s, n_features)
        The centers, float32 when ``X`` or ``kernel_dtype`` is float32 (float32 data stay
        float32 whatever ``kernel_dtype``; float64 data fitted with ``kernel_dtype='float32'``
        keep the float32 centers the fit used), float64 otherwise.
    center_index_ : ndarray of shape (s,)
        Their rows in the training data.
    dual_coef_ : ndarray of shape (s, n_outputs)
        Coefficients α (one column per binary problem).
    intercept_ : ndarray of shape (n_outputs,)
        The bias of each binary problem.
    n_iter_ : int
        CG/PCG iterations, over every Newton step.
    solver_info_ : dict
        What the solver did (``newton_iterations`` per column, the cache, convergence).
    intrinsic_reg_ : float
    laplacian_trace_ : float
    n_labeled_ : int
    n_features_in_ : int
    timings_ : dict
    transduction_ : ndarray of shape (n_samples,)
        Predicted labels of the training points.
    extension_ : dict or None
        With ``out_of_sample="graph"`` and a graph term: the training points, their fitted
        decision values and the graph's k and bandwidth that ``predict`` extends; else None.

    See Also
    --------
    LapSVC : The exact Laplacian SVM (primal or dual) over all training points.
    NystromLapRLSClassifier : The squared loss on the same centers.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import NystromLapSVC
    >>> X, y = make_two_moons(2000, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    >>> # 200 random centers and paper 001's width β = 0.25 (k = exp(-|x - z|²/β)): the
    >>> # default local width is too narrow for so few centers (63.8 % here)
    >>> model = NystromLapSVC(kernel=RBF(gamma=4.0), n_centers=200, random_state=0)
    >>> model = model.fit(X, y_ssl)
    >>> model.X_fit_.shape
    (200, 2)
    >>> bool((model.transduction_ == y).mean() > 0.99)
    True
    """

    _parameter_constraints: dict = {
        **_NystromLapRLSBase._parameter_constraints,
        **AUTO_INTRINSIC_REG_CONSTRAINT,
        **UNLABELED_CONSTRAINT,
        **OUT_OF_SAMPLE_CONSTRAINT,
        "loss": [StrOptions({"auto", "squared_hinge", "huber_hinge"})],
        "huber_width": [Interval(Real, 0, None, closed="neither")],
        "centring": ["boolean"],
        **EARLY_STOPPING_CONSTRAINTS,
        "solver": [StrOptions({"auto", *ITERATIVE_SOLVERS})],
    }
    _default_kernel = DEFAULT_CLASSIFIER_KERNEL
    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="centers",
        fit_intercept=True,
        early_stopping=True,
        centring=True,
        out_of_sample=True,
        n_jobs=True,
        approximate_cv=True,
    )

    def __init__(
        self,
        *,
        kernel=DEFAULT_CLASSIFIER_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-6,
        intrinsic_reg="auto",
        loss="auto",
        huber_width=0.01,
        n_centers="auto",
        center_selection="uniform",
        labeled_centers=True,
        solver="auto",
        preconditioner="sampled-hessian",
        preconditioner_options=None,
        tol=1e-6,
        max_iter=None,
        memory_budget=None,
        kernel_dtype="float64",
        random_state=None,
        n_jobs=None,
        verbose=0,
        fit_intercept=True,
        centring=True,
        early_stopping=False,
        stability_tol=1e-3,
        unlabeled=-1,
        out_of_sample="graph",
    ):
        self.kernel = kernel
        self.graph = graph
        self.ambient_reg = ambient_reg
        self.intrinsic_reg = intrinsic_reg
        self.loss = loss
        self.huber_width = huber_width
        self.n_centers = n_centers
        self.center_selection = center_selection
        self.labeled_centers = labeled_centers
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
        self.centring = centring
        self.early_stopping = early_stopping
        self.stability_tol = stability_tol
        self.unlabeled = unlabeled
        self.out_of_sample = out_of_sample

    def _s_solver(self, n_samples: int, n_centers: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "cached" if cached_solver_fits(n_samples, n_centers, self.memory_budget) else "pcg"

    def _quadratic_solver(self, solver, problem, centers, options):
        if solver == "cached":
            return CachedNystromSolver(centers, n_jobs=self.n_jobs)
        return super()._quadratic_solver(solver, problem, centers, options)

    def _problem_loss(self):
        if self.loss == "huber_hinge":
            return HuberHingeLoss(h=self.huber_width)
        return SquaredHingeLoss()
