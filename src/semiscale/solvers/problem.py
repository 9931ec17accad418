"""What an estimator hands to a solver, and what a solver gives back.

A manifold-regularization fit is *data*: the points, the targets (one column per output or
one-vs-rest class), which rows are labeled, the graph Laplacian, the two regularization weights,
the loss, whether an unpenalised bias is fitted, and the kernel.  Estimators build a
:class:`ManifoldProblem`; :func:`semiscale.solvers.newton.solve_manifold` reduces it to a
sequence of :class:`QuadraticProblem` (one for the squared loss, one per Newton step otherwise),
each solved by the estimator's *quadratic solver* (exact LapRLS, Nyström-PCG, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["ManifoldProblem", "QuadraticProblem", "Solution"]


@dataclass
class ManifoldProblem:
    """The canonical objective in paper 000's un-normalised form, for every column of ``targets``:

    ``min_f  Σ_{i labeled} loss(y_i, f(x_i)) + λ_A ‖f‖²_K + λ_I fᵀ L f``,
    ``f = Σ_j α_j k(x_j, ·) + b``

    with ``b`` present only when ``fit_intercept``.  Columns are solved together when the loss is
    quadratic (one solve with several right-hand sides), one at a time otherwise (their active
    sets differ).
    """

    X: object  # ndarray or CSR of shape (n, d)
    targets: np.ndarray  # (n, r): ±1 (classification) or values on labeled rows, 0 elsewhere
    labeled: np.ndarray  # (n,) bool
    laplacian: sp.csr_matrix | None  # None when lambda_intrinsic == 0
    lambda_ambient: float
    lambda_intrinsic: float
    kernel: object
    loss: object = None  # a semiscale.losses.Loss; None means the squared loss
    fit_intercept: bool = False
    memory_budget: object = None
    random_state: object = None
    verbose: int = 0
    #: Threads of the kernel blocks (scikit-learn's reading: None is one thread).
    n_jobs: int | None = None
    #: Early stopping of a non-quadratic loss's Newton iteration (Melacci & Belkin 2011's
    #: stability check): a column stops once at most this fraction of the training points
    #: changes side between two consecutive Newton steps; None runs Newton to convergence.
    stability_tol: float | None = None
    #: Weights w of the decision's centring: the side of a point is the sign of
    #: ``f − Σ w f / Σ w`` (None: the sign of f).
    stability_weights: np.ndarray | None = None


@dataclass
class QuadraticProblem:
    """One weighted least-squares system, for every column of ``rhs``:

    ``min_f  Σ_{i active} f_i² − 2 Σ_i rhs_i f_i + λ_A ‖f‖²_K + λ_I fᵀ L f``.

    With ``rhs = y`` on the labeled rows and ``active`` the labeled rows this is LapRLS
    (paper 000 eq. 2); a Newton step of another loss gives other active rows and right-hand side.
    Its normal equations over a span ``f = K_{·s} α`` are ``H α = K_{ns}ᵀ rhs`` with
    ``H = K_{as}ᵀ K_{as} + λ_A K_ss + λ_I K_{ns}ᵀ L K_{ns}`` (paper 000 eq. 4; ``a``: active rows).
    """

    X: object
    rhs: np.ndarray  # (n, r)
    active: np.ndarray  # (n,) bool
    laplacian: sp.csr_matrix | None
    lambda_ambient: float
    lambda_intrinsic: float
    kernel: object
    memory_budget: object = None
    random_state: object = None
    verbose: int = 0
    #: Threads of the kernel blocks (scikit-learn's reading: None is one thread).
    n_jobs: int | None = None
    #: Rows that carry a loss term (the span of f without a graph term); None means ``active``.
    labeled: np.ndarray | None = None

    @property
    def rhs_on_active_only(self) -> bool:
        """True when ``rhs`` vanishes off the active rows (then ``z = K_{as}ᵀ rhs_a``)."""
        return not np.any(self.rhs[~self.active])


@dataclass
class Solution:
    """What a solver returns: the expansion points, coefficients and diagnostics."""

    X_fit: object  # (n_fit, d)
    dual_coef: np.ndarray  # (n_fit, r)
    train_decision: np.ndarray | None = None  # f on the training points, if cheaply known
    intercept: np.ndarray | None = None  # (r,) when a bias was fitted
    n_iter: int = 0
    residuals: np.ndarray | None = None
    info: dict = field(default_factory=dict)
