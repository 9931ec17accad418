"""Laplacian support vector machines on the full problem (paper 001 §2.1's baseline).

The model of every estimator here (DESIGN.md §3's canonical scaling, λ_A = l·ambient_reg and
λ_I = l·intrinsic_reg / tr(L)):

.. math::

    \\min_{f, b}\\; \\frac1l \\sum_{i \\le l} \\ell\\big(y_i, f(x_i) + b\\big)
    + \\texttt{ambient\\_reg}\\, \\lVert f \\rVert_K^2
    + \\texttt{intrinsic\\_reg}\\, \\frac{f^\\top L f}{\\operatorname{tr}(L)},
    \\qquad f = \\sum_{j \\le n} α_j k(x_j, ·),

with ℓ the hinge (``formulation="dual"``, Belkin, Niyogi & Sindhwani 2006) or a smooth hinge
(``formulation="primal"``, Melacci & Belkin 2011: Newton steps in the primal, each one weighted
least-squares solve by LapRLS's solvers, :mod:`semiscale.solvers.newton`).

``solver`` names, as in every estimator, the method that solves the linear system (here: of
each Newton step).  Until this release ``solver`` named the formulation and ``linear_solver``
the step's solver; both old spellings still work for one release with a ``FutureWarning``
(the value sets are disjoint, so ``LapSVC(solver="dual")`` is unambiguous).
"""

from __future__ import annotations

import warnings
from functools import partial
from numbers import Integral, Real

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from ..losses import HuberHingeLoss, SquaredHingeLoss
from ..solvers.exact import DIRECT_WHAT, EXACT_SOLVERS, check_dense_fits, solve_exact
from ..solvers.lapsvm_dual import DUAL_WHAT, solve_lapsvm_dual
from ..solvers.newton import solve_manifold
from ._base import (
    AUTO_INTRINSIC_REG_CONSTRAINT,
    DEFAULT_CLASSIFIER_KERNEL,
    DEFAULT_GRAPH,
    EARLY_STOPPING_CONSTRAINTS,
    MANIFOLD_PARAMETER_CONSTRAINTS,
    OUT_OF_SAMPLE_CONSTRAINT,
    UNLABELED_CONSTRAINT,
    FitContract,
    ManifoldMixin,
    ManifoldProblem,
    Solution,
    SSLClassifierMixin,
)

__all__ = ["LapSVC"]

#: The loss each formulation minimises when ``loss="auto"``.
AUTO_LOSS = {"dual": "hinge", "primal": "squared_hinge"}
#: The formulations; until this release they were values of ``solver`` (deprecated there).
FORMULATIONS = ("primal", "dual")
#: The default of the deprecated ``linear_solver`` (scikit-learn's spelling of "not given").
_NOT_GIVEN = "deprecated"


def resolve_formulation(estimator, *, warn: bool = False, stacklevel: int = 2) -> tuple[str, str]:
    """``(formulation, solver)`` of a :class:`LapSVC`, its deprecated spellings resolved.

    ``solver="primal"|"dual"`` (the old name of the formulation) and ``linear_solver`` (the old
    name of ``solver``) still work for one release; with ``warn`` each one used warns with a
    ``FutureWarning`` naming the new spelling, ``stacklevel`` frames above the caller.
    Contradicting old and new values are refused.
    """
    formulation, solver = estimator.formulation, estimator.solver
    linear_solver = estimator.linear_solver
    if solver in FORMULATIONS:
        if warn:
            warnings.warn(
                f"LapSVC(solver={solver!r}) is deprecated and will be refused in the next "
                f"release: use formulation={solver!r} (solver now names the solver of each "
                "Newton step's linear system, 'direct', 'cg' or 'pcg', formerly linear_solver)",
                FutureWarning,
                stacklevel=stacklevel + 1,
            )
        if formulation != "primal" and formulation != solver:
            raise ValueError(
                f"LapSVC got formulation={formulation!r} and the deprecated solver={solver!r}, "
                f"which contradict each other: pass formulation={formulation!r} only"
            )
        formulation, solver = solver, "direct"
    if linear_solver != _NOT_GIVEN:
        if warn:
            warnings.warn(
                f"LapSVC(linear_solver={linear_solver!r}) is deprecated and will be refused in "
                f"the next release: use solver={linear_solver!r}",
                FutureWarning,
                stacklevel=stacklevel + 1,
            )
        if solver not in ("direct", linear_solver):
            raise ValueError(
                f"LapSVC got solver={solver!r} and the deprecated "
                f"linear_solver={linear_solver!r}, which contradict each other: pass "
                f"solver={solver!r} only"
            )
        solver = linear_solver
    return formulation, solver


class LapSVC(SSLClassifierMixin, ManifoldMixin, BaseEstimator):
    """Laplacian SVM classifier over all training points (exact; paper 001 §2.1).

    Minimises ``(1/l) Σ_labeled ℓ(y_i, f(x_i) + b) + ambient_reg‖f‖²_K +
    intrinsic_reg fᵀLf/tr(L)`` (module docstring) with f in the span of k(x_j, ·) over all n
    training points, one binary problem per class (one-vs-rest, ±1 targets; a single one for two
    classes).  ``y == unlabeled`` marks unlabeled points.

    ``formulation="dual"`` is the original LapSVM: the hinge loss's dual QP over the labeled points,
    ``Q̃ = J K (2λ_A I + 2λ_I L K)⁻¹ Jᵀ``, solved by scikit-learn's ``SVC(kernel="precomputed")``
    (libsvm's SMO), then ``α = (2λ_A I + 2λ_I L K)⁻¹ Jᵀ Y β``
    (:mod:`semiscale.solvers.lapsvm_dual`); O(n³) time and two n × n arrays.
    ``formulation="primal"`` minimises the squared hinge ``max(0, 1 − y f)²`` or the Huber-smoothed
    hinge (width ``huber_width``, paper 004's h = 0.01; it tends to the hinge, hence to the dual's
    solution, as the width goes to 0) by Newton's method with an exact line search, each step
    one LapRLS-type solve over the full span by ``solver``.  For large n use
    :class:`NystromLapSVC`, the same objective over Nyström centers.

    Parameters
    ----------
    kernel : Kernel, str or None, default=RBF(gamma="local")
        Kernel object from :mod:`semiscale.kernels` (fixed, or fitted on the training data);
        None also means ``RBF(gamma="local")``.
        A name of :data:`semiscale.kernels.KERNEL_NAMES` (``"rbf"``, ``"laplacian"``,
        ``"linear"``, ``"poly"``) builds that kernel: ``"rbf"`` with this default's width (as
        ``SVC(kernel="rbf")`` means SVC's default), the others with their class's defaults.
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` defines the intrinsic term (None also means
        ``KNNGraph()``).  Ignored when ``fit`` receives ``laplacian=`` or when
        ``intrinsic_reg == 0``.  A copy is fitted (``graph_``).
    ambient_reg : float, default=1e-6
        Weight of ‖f‖²_K; ``> 0`` for the dual (its system is singular without it).
    intrinsic_reg : float or "auto", default="auto"
        Weight of fᵀLf / tr(L); ``>= 0``, and 0 gives the SVM on the labeled points
        (with the dual, exactly scikit-learn's ``SVC`` on K / (2 l·ambient_reg)).  ``"auto"``
        is the Nyström LapRLS classifier's rule 0.01·(n/l)² (``intrinsic_reg_``): on 2,000
        two-moons points with one label per class and paper 001's width β = 0.25, 1 left the
        exact dual below 90 % on some of six draws where the rule's 10⁴ separates them all,
        even with 200 centers (``tests/test_lapsvm.py``).
    formulation : {"primal", "dual"}, default="primal"
        Newton's method in the primal, or the dual QP of §2.1.  (Until this release the values
        of ``solver``; ``solver="dual"`` still works for one release, with a ``FutureWarning``.)
    loss : {"auto", "hinge", "squared_hinge", "huber_hinge"}, default="auto"
        ``"auto"``: the hinge for the dual, the squared hinge for the primal.  The dual solves
        only the hinge, the primal only the two smooth ones.
    huber_width : float, default=0.01
        Half-width h of the Huber hinge's quadratic zone (``loss="huber_hinge"``).
    solver : {"direct", "cg", "pcg"}, default="direct"
        Primal: the solver of each Newton step's weighted LapRLS system
        (:class:`~semiscale.models.LapRLSClassifier`'s ``solver``); the dual's QP is libsvm's.
    linear_solver : {"direct", "cg", "pcg"}, default="deprecated"
        Deprecated spelling of ``solver`` (kept for one release, with a ``FutureWarning``).
    preconditioner : str or None, default="sampled-hessian"
        For ``solver="pcg"``.
    tol : float, default=1e-3
        Dual: libsvm's stopping tolerance (SMO's KKT violation).  Primal: the relative
        residual at which a Newton step's CG/PCG stops.
    max_iter : int or None, default=None
        Dual: libsvm's iteration cap (None: none).  Primal: the CG/PCG cap.
    memory_budget : int, str or None, default=None
        Largest working memory (bytes or a string such as "4GB"); None = a quarter of
        available memory.  An exact fit that does not fit raises ``MemoryBudgetError`` before
        the graph is built.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the kernel's data-dependent width and the graph's approximate search.
    n_jobs : int or None, default=None
        Threads, as scikit-learn reads ``n_jobs`` (None: one, unless inside a
        ``joblib.parallel_config(n_jobs=...)`` context; -1: all cores), for the kernel blocks
        (the kernel matrix of the Newton steps and of the dual, the kernel expansion at
        ``predict``), the graph's neighbour search when ``graph`` leaves its own ``n_jobs`` at
        None, and the graph extension's at ``predict``.  The result does not depend on it.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    fit_intercept : bool, default=True
        Fit the unpenalised bias b (the dual always has it: ``yᵀβ = 0`` is its condition).
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
        Primal only.  Stop each binary problem's Newton iteration once at most
        ``stability_tol`` of the training points change side between two consecutive steps
        (Melacci & Belkin 2011's stability check on the unlabeled predictions, at Newton steps;
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
        ``Σ_j α_j k(x_j, x) + b``.  With the default narrow kernel the expansion carries little
        of the graph's labeling away from the training points:
        ``benchmarks/results/out_of_sample/``.  Without a graph term (``intrinsic_reg=0``) both
        are the kernel expansion.
    unlabeled : int, float, str or None, default=-1
        The marker of unlabeled points in ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_ : Kernel
        The kernel with data-dependent parameters resolved.
    graph_ : KNNGraph, PrecomputedGraph or None
        The fitted copy of ``graph``.
    X_fit_ : ndarray of shape (n_fit, n_features)
        Expansion points (all training points; the labeled ones when intrinsic_reg = 0 in the
        primal), in the dtype of ``X`` (float32 data stay float32; the fit computes in float64).
    dual_coef_ : ndarray of shape (n_fit, n_outputs)
        Coefficients α of the kernel expansion (one column per binary problem).
    intercept_ : ndarray of shape (n_outputs,)
        The bias of each binary problem.
    support_ : list of ndarray
        Dual only: for each binary problem, the training rows with β > 0 (its support vectors;
        every training point enters α, the LapSVM solution is not sparse).
    n_iter_ : int
        Dual: libsvm's iterations (largest over the binary problems).  Primal: CG/PCG
        iterations (0 with ``solver="direct"``).
    solver_info_ : dict
        What the solver did (``newton_iterations`` for the primal).
    intrinsic_reg_ : float
    laplacian_trace_ : float
    n_labeled_ : int
    n_features_in_ : int
    timings_ : dict
        Seconds spent in graph construction, solving and in total.
    transduction_ : ndarray of shape (n_samples,)
        Predicted labels of the training points.
    extension_ : dict or None
        With ``out_of_sample="graph"`` and a graph term: the training points, their fitted
        decision values and the graph's k and bandwidth that ``predict`` extends; else None.

    See Also
    --------
    LapRLSClassifier : The squared loss on the same span.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models import LapSVC
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    >>> common = dict(kernel=RBF(gamma=20.0), graph=KNNGraph(n_neighbors=10),
    ...               ambient_reg=1e-4, intrinsic_reg=100.0)
    >>> primal = LapSVC(**common).fit(X, y_ssl)
    >>> dual = LapSVC(formulation="dual", **common).fit(X, y_ssl)
    >>> float((primal.transduction_ == y).mean()), float((dual.transduction_ == y).mean())
    (1.0, 1.0)
    """

    _parameter_constraints: dict = {
        **MANIFOLD_PARAMETER_CONSTRAINTS,
        **AUTO_INTRINSIC_REG_CONSTRAINT,
        **UNLABELED_CONSTRAINT,
        **OUT_OF_SAMPLE_CONSTRAINT,
        "formulation": [StrOptions(set(FORMULATIONS))],
        "solver": [
            StrOptions(set(EXACT_SOLVERS) | set(FORMULATIONS), deprecated=set(FORMULATIONS))
        ],
        "loss": [StrOptions({"auto", "hinge", "squared_hinge", "huber_hinge"})],
        "huber_width": [Interval(Real, 0, None, closed="neither")],
        "centring": ["boolean"],
        "n_jobs": [Integral, None],
        "linear_solver": [StrOptions(set(EXACT_SOLVERS)), Hidden(StrOptions({_NOT_GIVEN}))],
        **EARLY_STOPPING_CONSTRAINTS,
    }
    _default_kernel = DEFAULT_CLASSIFIER_KERNEL
    _fit_contract = FitContract(
        fit_path="manifold",
        expansion="training",
        fit_intercept=True,
        early_stopping=True,
        centring=True,
        out_of_sample=True,
        n_jobs=True,
        approximate_cv=True,
        approximate_cv_formulations=("primal",),  # the dual QP's hinge is not smooth
    )

    def __init__(
        self,
        *,
        kernel=DEFAULT_CLASSIFIER_KERNEL,
        graph=DEFAULT_GRAPH,
        ambient_reg=1e-6,
        intrinsic_reg="auto",
        formulation="primal",
        loss="auto",
        huber_width=0.01,
        solver="direct",
        linear_solver=_NOT_GIVEN,
        preconditioner="sampled-hessian",
        tol=1e-3,
        max_iter=None,
        memory_budget=None,
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
        self.formulation = formulation
        self.loss = loss
        self.huber_width = huber_width
        self.solver = solver
        self.linear_solver = linear_solver
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.fit_intercept = fit_intercept
        self.centring = centring
        self.early_stopping = early_stopping
        self.stability_tol = stability_tol
        self.unlabeled = unlabeled
        self.out_of_sample = out_of_sample

    def _formulation(self) -> str:
        """The formulation fitted (``formulation``, or the deprecated ``solver="dual"``)."""
        return resolve_formulation(self)[0]

    def _loss_name(self) -> str:
        formulation, _ = resolve_formulation(self)
        name = AUTO_LOSS[formulation] if self.loss == "auto" else self.loss
        if formulation == "dual" and name != "hinge":
            raise ValueError(
                f"formulation='dual' solves the hinge loss only, got loss={self.loss!r}; use "
                "loss='hinge' (or 'auto'), or formulation='primal' for the smooth hinges"
            )
        if formulation == "primal" and name == "hinge":
            raise ValueError(
                "formulation='primal' needs a smooth loss (Newton steps): use "
                "loss='squared_hinge' or 'huber_hinge' (the hinge as huber_width -> 0), or "
                "formulation='dual' for the hinge"
            )
        if formulation == "dual" and self.early_stopping:
            raise ValueError(
                "early_stopping=True stops the primal's Newton iteration; formulation='dual' "
                "(libsvm) has none: use formulation='primal', or early_stopping=False"
            )
        if formulation == "dual" and not self.fit_intercept:
            raise ValueError(
                "formulation='dual' always fits the bias (its QP has the constraint "
                "y'beta = 0); use fit_intercept=True, or formulation='primal' for a model "
                "without bias"
            )
        return name

    def _problem_loss(self):
        # The dual reads no loss object (its QP is the hinge's); a hinge-type loss still
        # selects the ±1 one-vs-rest targets (and centring only when ``centring``).
        if self._loss_name() == "huber_hinge":
            return HuberHingeLoss(h=self.huber_width)
        return SquaredHingeLoss()

    def _check_before_graph(self, n_samples: int, n_labeled: int) -> None:
        # the deprecated spellings warn once per fit, here rather than in a fit of LapSVC's own,
        # whose extra frame would move every warning of the shared fit path off the caller's
        # line (stacklevel from this frame: _fit_problem_here, _fit_problem, fit, its
        # _fit_context, the caller)
        formulation, solver = resolve_formulation(self, warn=True, stacklevel=6)
        self._loss_name()  # parameter combinations, before any work
        if formulation == "dual":
            check_dense_fits(n_samples, self.memory_budget, 2, DUAL_WHAT)
        elif solver == "direct" and self._resolve_intrinsic_reg(n_samples, n_labeled) > 0:
            check_dense_fits(n_samples, self.memory_budget, 2, DIRECT_WHAT)

    def _solve(self, problem: ManifoldProblem) -> Solution:
        formulation, solver = resolve_formulation(self)
        if formulation == "dual":
            solution = solve_lapsvm_dual(
                problem, tol=self.tol, max_iter=-1 if self.max_iter is None else self.max_iter
            )
            self.support_ = solution.info["support"]
            return solution
        self.__dict__.pop("support_", None)  # from an earlier dual fit
        quadratic = partial(
            solve_exact,
            solver=solver,
            preconditioner=self.preconditioner,
            tol=self.tol,
            max_iter=self.max_iter,
            kernel_cache={},  # K computed once for all Newton steps of this fit
        )
        return solve_manifold(problem, quadratic)
