r"""Paper 002's data-dependent kernel (Lever, Diethe & Shawe-Taylor): :class:`DataDependentKernel`.

A base kernel ``K`` and an intrinsic regularizer ``ĥᵀQ̂ĥ`` measured at ``n̂`` landmark points give
the kernel of the space with norm ``‖h‖²_K + η ĥᵀQ̂ĥ`` (eqs. 5–6):

.. math::

    \tilde K(x, x') = K(x, x') - η\,\hat k_x^\top (I + η\hat Q \hat K)^{-1} \hat Q\,\hat k_{x'},
    \qquad \hat Q = \bigl((Q^{-1})_{ss}\bigr)^{-1}\ \text{(eq. 7)},

with ``Q = R^p``, ``R = L + ridge·I`` on the graph of *all* training points: by Theorem 3.2,
``ĥᵀQ̂ĥ`` is the ``Q``-smoothness of the smoothest extension of ``ĥ`` to the whole graph.  The fit
is in :mod:`semiscale.kernels._data_dependent_fit`.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from semiscale._pairs import _check_input, _Pair
from semiscale._progress import log
from semiscale._random import check_random_state
from semiscale.kernels import _data_dependent_fit as _fit
from semiscale.kernels._base import Kernel
from semiscale.kernels._data_dependent_fit import (
    _choice,
    _positive_int,
    _positive_real,
    default_graph,
    paper_graph,
)
from semiscale.kernels.fixed import RBF

__all__ = [
    "BASE_WIDTH_FACTOR",
    "CONSTRUCTIONS",
    "LANDMARK_SELECTIONS",
    "SOLVERS",
    "DataDependentKernel",
    "default_graph",
    "paper_graph",
]

CONSTRUCTIONS = ("landmarks", "exact", "budget")
LANDMARK_SELECTIONS = ("labeled", "random")
SOLVERS = ("amg", "cg", "direct")
#: The default base kernel's γ in units of the median heuristic's (``RBF(gamma="median")``):
#: σ is half the median pairwise distance.  Measured against 1 and 16
#: (``benchmarks/results/data_dependent_defaults/``).
BASE_WIDTH_FACTOR = 4.0
#: Rows of :meth:`DataDependentKernel.diag`'s chunks (one ``rows × n̂`` block at a time).
DIAG_CHUNK = 1024
#: The fitted state :meth:`DataDependentKernel.with_ambient` carries over.
_CARRIED = ("landmarks_", "landmark_points_", "A_", "Q_", "iterations_", "residual_")
_CARRIED += ("epsilon_", "converged_", "condition_bound_", "n_features_in_", "n_samples_fit_")


class DataDependentKernel(Kernel):
    r"""Paper 002's efficient data-dependent kernel (eq. 6), fitted on labeled and unlabeled points.

    .. math::

        \tilde K(x, x') = K(x, x') - η\,\hat k_x^\top (I + η\hat Q \hat K)^{-1}\hat Q\,\hat k_{x'}

    where ``k̂_x = (K(x_{s_1}, x), …, K(x_{s_n̂}, x))`` over the landmarks ``s``, ``K̂`` their Gram
    matrix and ``Q̂ = A⁺`` with ``A = ZᵀQZ``, ``Z = Q⁻¹E_s`` (``n̂`` sparse solves, Theorem 4.2:
    ``A ≈ (Q⁻¹)_{ss} = Q̂⁺`` of eq. 7), ``Q = R^p``, ``R = L + ridge·I`` and ``L`` the Laplacian
    of the graph on every training point.  It is the reproducing kernel of the functions of
    ``K``'s space with the norm ``‖h‖²_K + η ĥᵀQ̂ĥ`` (eq. 5), and by Theorem 3.2 ``ĥᵀQ̂ĥ`` is
    ``h*ᵀQh*`` for the smoothest extension ``h*`` of the landmark values ``ĥ`` to the whole
    graph: the kernel uses all unlabeled points while its evaluation costs ``O(n̂)`` base-kernel
    values per point.  With every point a landmark it is eq. (4)'s kernel (LapSVM's).

    ``fit`` returns a fitted copy that evaluates ``K̃`` between *any* points (training or new):
    ``kernel(A, B)``, :meth:`blocks`, ``semiscale.linalg.kernel_matmul``,
    ``sklearn.svm.SVC(kernel=fitted)`` or ``SVC(kernel="precomputed")`` with ``fitted(X_l, X_l)``.

    Parameters
    ----------
    base_kernel : Kernel or None, default=None
        The ambient kernel ``K``; None is the RBF with ``BASE_WIDTH_FACTOR`` (4) times the median
        heuristic's γ (``RBF(gamma="median")``: σ the median pairwise distance of a 1,000-point
        sample of the training points, γ = 1/(2σ²)), i.e. σ half the median distance: the
        paper's Gaussian ``K_σ`` with σ from "a common heuristic" (§5.1), scaled by measurement
        (factors 1, 4, 16: ``benchmarks/results/data_dependent_defaults/``).  Heuristic widths of
        a kernel given here are resolved on the training points in ``fit``.
    graph : KNNGraph, PrecomputedGraph, "estimator" or None, default=None
        The graph whose Laplacian ``L`` builds ``Q``.  None: :func:`default_graph`, the paper's
        5-NN graph with 0–1 weights but the unnormalized Laplacian ``D − W`` (measured better;
        :func:`paper_graph` is the paper's preset, with the normalized Laplacian).  A graph
        object is cloned and
        fitted on the training points (on the landmarks only for ``construction="budget"``); it
        must keep ``power=1`` and ``ridge=0``: ``KNNGraph(power=p, ridge=r)`` would give
        ``L^p + r·I``, a different matrix from this kernel's ``(L + ridge·I)^p``, so set this
        kernel's ``power`` and ``ridge`` instead.  ``"estimator"``: the Laplacian the estimator
        passes to ``fit(..., laplacian=L)`` (an error when it passes none), taken as ``L``.
    power : int, default=2
        ``p ≥ 1`` of ``Q = (L + ridge·I)^p``, the iterated Laplacian of Zhou and Belkin the
        paper recommends; solved as ``p`` nested sparse solves (Theorem 4.4), never formed.
        The paper selects it by cross-validation; 2 by measurement (mean error 25.32 % against
        30.21 % for p = 1 over the other settings, ``benchmarks/results/data_dependent_defaults/``).
    ridge : float, default=1e-3
        ``> 0``, makes ``R`` and ``Q`` positive definite (a Laplacian is singular): ``Q⁻¹``'s
        largest eigenvalue is ``ridge^{-p}`` (a function constant on a connected component is
        almost free), and ``A`` keeps about ``16 − log10 κ(R)^p`` digits (``fit`` warns below 4).
    n_landmarks : int, default=250
        ``n̂``, the paper's 250 (§5.1).  More than the training points: all of them, with a
        :class:`~semiscale.kernels._data_dependent_fit.LandmarkWarning`.
    eta : float, default=100.0
        ``η > 0``, weight of the intrinsic term ``η ĥᵀQ̂ĥ`` against ``‖h‖²_K``.  The paper selects
        it by cross-validation; 100 is the best of 1, 1e2, 1e4, 1e6 with the defaults above
        (the defaults' settings: ``benchmarks/results/data_dependent_defaults/``, by
        ``benchmarks/scripts/data_dependent_defaults.py``).
    landmark_selection : {"labeled", "random"}, default="labeled"
        ``"labeled"``: every labeled point, then unlabeled points at random — the paper's
        "strong bias to the labeled data" (§5.1); with more labeled points than ``n_landmarks``
        a random subset of them; with ``y=None`` random; with a ``y`` holding no label random,
        with a ``LandmarkWarning``.  ``"random"``: uniformly at random.
    construction : {"landmarks", "exact", "budget"}, default="landmarks"
        ``"landmarks"``: the efficient kernel above.  ``"exact"``: eq. (4) on all ``n`` points,
        literally — ``Q = R^p`` dense, ``M = (I + ηQK)⁻¹Q`` by a dense solve,
        ``K̃ = K − η k_xᵀ M k_x'``; ``O(n³)`` time, ``O(n²)`` memory, refused above
        ``EXACT_MAX_SAMPLES`` (5,000) points.  ``"budget"``: the paper's sanity baseline
        ("budget LapSVM", §5.1): the same graph built on the landmarks alone, ``Q̂ = R_b^p``
        (no unlabeled point beyond the landmarks is used).
    solver : {"amg", "cg", "direct"}, default="amg"
        The ``n̂`` solves with ``R`` (:class:`semiscale.solvers.sdd.SDDSolver`): AMG-preconditioned
        CG, Jacobi-preconditioned CG, or one sparse LU factorization.
    tol : float, default=1e-8
        Relative residual ``‖e_s − Qz‖ / ‖e_s‖`` each landmark column reaches; ``epsilon_`` is
        the ``ε`` of Theorem 4.2 this guarantees.
    unlabeled : int, float, str or None, default=-1
        The marker of unlabeled rows in ``y`` (as the classifiers' parameter; give it the
        marker of the estimator that fits this kernel); NaN and None always count as unlabeled
        (the regressors' marker).  A 2-D ``y``'s row is unlabeled when all its entries are.
    memory_budget : int, str or None, default=None
        Bytes for the solves' work arrays (columns solved in batches that fit); evaluation takes
        its own budget in :meth:`blocks`.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the landmark draw and the base kernel's width heuristic.  When not None it wins
        over the ``random_state`` that ``fit`` receives from an estimator (so a kernel fixed in
        a search keeps its landmarks); None uses that one.
    verbose : int, default=0
        1: a line per stage of ``fit`` on stderr; 2: also the solver's progress.

    Attributes
    ----------
    landmarks_ : ndarray of int, shape (n̂,)
        Positions of the landmarks in the training points (all of them for ``"exact"``).
    landmark_points_ : ndarray or sparse matrix of shape (n̂, n_features)
        The landmark points (the training points for ``"exact"``).
    base_kernel_ : Kernel
        The fitted base kernel (heuristic widths resolved).
    A_ : ndarray of shape (n̂, n̂) or None
        ``A = ZᵀQZ ≈ Q̂⁺`` (``"landmarks"``), ``R_b^{-p}`` (``"budget"``), None (``"exact"``).
    factor_ : ndarray of shape (n̂, n̂) or None
        Lower Cholesky factor ``C`` of ``A + ηK̂`` (None for ``"exact"``): ``K̃(a, b) =
        K(a, b) − η F(a)F(b)ᵀ`` with ``F(x) = (C⁻¹k̂_x)ᵀ``.
    jitter_ : float
        Diagonal jitter the Cholesky factorization needed (0.0 normally).
    Q_, inner_ : ndarray of shape (n, n) or None
        ``"exact"`` only: ``Q = R^p`` and ``M = (I + ηQK)⁻¹Q``.
    iterations_, residual_, epsilon_ : ndarray or None
        ``"landmarks"`` only: CG iterations of each of the ``p`` nested solves, each column's
        relative residual, each column's ``ε`` (Theorem 4.2: ``|A_ij − Q̂⁺_ij| ≤ (ε_i + ε_j +
        ε_iε_j)√(Q̂⁺_ii Q̂⁺_jj)``).
    converged_ : bool
        Every column reached ``tol`` (True for the dense constructions).
    condition_bound_ : float
        Gershgorin bound on ``κ(Q)``.
    timings_ : dict
        Seconds of ``"graph"``, ``"setup"`` (the solver's preparation of ``R``), ``"solve"``,
        ``"gram"`` (``A``) and ``"factor"``.
    n_features_in_, n_samples_fit_ : int
    """

    def __init__(
        self,
        base_kernel=None,
        graph=None,
        *,
        power=2,
        ridge=1e-3,
        n_landmarks=250,
        eta=100.0,
        landmark_selection="labeled",
        construction="landmarks",
        solver="amg",
        tol=1e-8,
        unlabeled=-1,
        memory_budget=None,
        random_state=None,
        verbose=0,
    ):
        self.base_kernel = base_kernel
        self.graph = graph
        self.power = power
        self.ridge = ridge
        self.n_landmarks = n_landmarks
        self.eta = eta
        self.landmark_selection = landmark_selection
        self.construction = construction
        self.solver = solver
        self.tol = tol
        self.unlabeled = unlabeled
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ parameters
    def _unfitted_copy(self):
        return type(self)(**{k: clone(v, safe=False) for k, v in self.get_params(False).items()})

    def __sklearn_clone__(self):
        # A fitted kernel is what SVC(kernel=fitted) computes with: scikit-learn's tools clone
        # the SVC (GridSearchCV, cross_val_score), and with it this kernel, so a clone keeps the
        # fitted state (shared, read-only arrays).  An estimator that fits the kernel itself
        # (kernel.fit) gets a new fitted copy anyway.
        new = self._unfitted_copy()
        for name, value in vars(self).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(new, name, value)
        return new

    def set_params(self, **params):
        """Set parameters; on a fitted kernel, keep its state consistent with them.

        A clone of a fitted kernel keeps its fit, so a search over ``SVC(kernel=fitted)``'s
        ``kernel__eta`` sets ``eta`` on a fitted copy.  ``eta`` alone: the ``n̂ × n̂`` factor is
        recomputed (as :meth:`with_ambient`).  ``verbose``, ``memory_budget``: the fit is kept.
        Any other change (graph, ``power``, ``ridge``, base kernel, landmarks, solver) drops the
        fit: evaluating raises ``NotFittedError`` until ``fit`` is called again.
        """
        if not hasattr(self, "landmark_points_"):
            return super().set_params(**params)
        before = self.get_params(deep=True)
        super().set_params(**params)
        after = self.get_params(deep=True)
        changed = {
            key for key in after if not _fit.same_value(before.get(key, _fit.MISSING), after[key])
        }
        changed -= {"verbose", "memory_budget"}
        if not changed:
            return self
        if changed == {"eta"}:
            try:
                self._check_params()
            except ValueError:
                pass  # dropped below; fit reports the bad value
            else:
                self._factorize()
                return self
        for name in [name for name in vars(self) if name.endswith("_")]:
            if not name.startswith("_"):
                delattr(self, name)
        self._dropped_by = sorted(changed)
        return self

    @property
    def kappa2(self):
        """``sup_x K̃(x, x) ≤ sup_x K(x, x)`` (the correction is positive semi-definite)."""
        base = getattr(self, "base_kernel_", None) or self.base_kernel or RBF()
        return base.kappa2

    def _check_params(self) -> None:
        if self.base_kernel is not None and not isinstance(self.base_kernel, Kernel):
            raise ValueError(
                "base_kernel must be a semiscale.kernels.Kernel (e.g. RBF(gamma=0.5)) or None, "
                f"got {self.base_kernel!r}"
            )
        graph = self.graph
        if isinstance(graph, str):
            if graph != "estimator":
                raise ValueError(
                    f"graph must be a graph object (KNNGraph, PrecomputedGraph), 'estimator' or "
                    f"None, got {graph!r}"
                )
        elif graph is not None and not hasattr(graph, "fit"):
            raise ValueError(f"graph must have a fit(X) method, got {graph!r}")
        for name in ("power", "n_landmarks"):
            _positive_int(getattr(self, name), name)
        _positive_real(
            self.ridge,
            "ridge",
            "; Q = (L + ridge·I)^p must be positive definite: use a small ridge such as 1e-3",
        )
        _positive_real(self.eta, "eta")
        _positive_real(self.tol, "tol")
        _choice(self.landmark_selection, "landmark_selection", LANDMARK_SELECTIONS)
        _choice(self.construction, "construction", CONSTRUCTIONS)
        _choice(self.solver, "solver", SOLVERS)

    def _check_fitted(self):
        if not hasattr(self, "landmark_points_"):
            dropped = getattr(self, "_dropped_by", None)
            cause = (
                f"set_params changed {', '.join(dropped)} of a fitted kernel, which its fit "
                "depends on"
                if dropped
                else "it is not fitted"
            )
            raise NotFittedError(
                f"This DataDependentKernel cannot be evaluated: {cause}; call kernel = "
                "kernel.fit(X, y) on the training points (labeled and unlabeled) first; fit "
                "returns the fitted copy"
            )

    # ------------------------------------------------------------------ fit
    def _graph_laplacian(self, X, laplacian):
        if self.graph == "estimator":
            if laplacian is None:
                raise ValueError(
                    "graph='estimator' uses the Laplacian the estimator passes to "
                    "fit(X, y, laplacian=L), and none was passed; give the kernel a graph "
                    "(graph=None is the paper's 5-NN graph) or fit it with laplacian=L"
                )
            if self.construction == "budget":
                raise ValueError(
                    "construction='budget' builds a graph on the landmarks alone, which a "
                    "Laplacian on all points cannot give: pass a graph object, not 'estimator'"
                )
            if laplacian.shape != (X.shape[0], X.shape[0]):
                raise ValueError(
                    f"laplacian has shape {laplacian.shape} but X has {X.shape[0]} rows"
                )
            return laplacian, None
        graph = default_graph() if self.graph is None else clone(self.graph)
        for name, neutral in (("power", 1), ("ridge", 0)):
            if getattr(graph, name, neutral) != neutral:
                raise ValueError(
                    f"graph has {name}={getattr(graph, name)!r}: the graph's power and ridge "
                    "give L^p + ridge·I, not this kernel's Q = (L + ridge·I)^p; build the graph "
                    "with power=1 and ridge=0 and set DataDependentKernel's power and ridge"
                )
        if self.construction == "budget":
            return None, graph
        return graph.fit(X).laplacian_, graph

    def fit(self, X, y=None, *, laplacian=None, random_state=None) -> DataDependentKernel:
        """Return a fitted copy: landmarks, ``A ≈ Q̂⁺`` and the factor of ``A + ηK̂``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training points, labeled and unlabeled (the graph is built on all of them).
        y : array-like of shape (n_samples,) or None
            Labels, ``unlabeled`` (and NaN/None) for unlabeled rows; only the landmark
            selection reads them.
        laplacian : sparse matrix of shape (n_samples, n_samples) or None
            The estimator's Laplacian, used with ``graph="estimator"`` (ignored otherwise).
        random_state : int, RandomState, Generator or None
            Used when the kernel's own ``random_state`` is None.

        Returns
        -------
        DataDependentKernel
            A new, fitted kernel; ``self`` is unchanged.

        Raises
        ------
        ValueError
            Invalid parameters (named), ``graph="estimator"`` without a Laplacian, a graph with
            its own power or ridge, ``construction="exact"`` above 5,000 points.
        """
        self._check_params()
        X = _check_input(X, "X")
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"X needs at least 2 points to build a graph, got {n}")
        if self.construction == "exact" and n > _fit.EXACT_MAX_SAMPLES:
            raise ValueError(
                f"construction='exact' forms n x n dense matrices and an O(n³) solve; refused "
                f"above {_fit.EXACT_MAX_SAMPLES} points (X has {n}): use "
                "construction='landmarks', the efficient kernel"
            )
        labeled = _fit.labeled_rows(y, n, self.unlabeled)
        state = self.random_state if self.random_state is not None else random_state
        new = self._unfitted_copy()
        if self.base_kernel is None:
            median = RBF(gamma="median").fit(X, random_state=state).gamma
            new.base_kernel_ = RBF(gamma=BASE_WIDTH_FACTOR * median)
        else:
            new.base_kernel_ = self.base_kernel.fit(X, random_state=state)
        timings = {}
        tic = time.perf_counter()
        L, graph = self._graph_laplacian(X, laplacian)
        timings["graph"] = time.perf_counter() - tic
        rng = check_random_state(state)
        if self.construction == "exact":
            landmarks = np.arange(n)
        else:
            landmarks = _fit.select_landmarks(
                n, self.n_landmarks, labeled, self.landmark_selection, rng
            )
        new.landmarks_ = landmarks
        new.landmark_points_ = X[landmarks]
        new.n_features_in_, new.n_samples_fit_ = X.shape[1], n
        new.iterations_ = new.residual_ = new.epsilon_ = None
        new.converged_ = True
        new.A_ = new.Q_ = None
        if self.construction == "landmarks":
            new._fit_landmarks(L, graph, timings)
        else:
            tic = time.perf_counter()
            if self.construction == "budget":
                L = graph.fit(new.landmark_points_).laplacian_
            timings["graph"] += time.perf_counter() - tic
            R = _fit.regularizer_base(L, self.ridge)
            new.condition_bound_ = _fit.warn_condition(R, self.ridge, self.power)
            tic = time.perf_counter()
            Q = _fit.dense_power(R, self.power)
            if self.construction == "budget":
                new.A_ = _fit.inverse_spd(Q)
            else:
                new.Q_ = Q
            timings["gram"] = time.perf_counter() - tic
        tic = time.perf_counter()
        new._factorize()
        timings["factor"] = time.perf_counter() - tic
        new.timings_ = timings
        parts = ", ".join(f"{key} {value:.3f}s" for key, value in timings.items())
        log(
            f"[DataDependentKernel] n={n} n̂={landmarks.size} ({self.construction}, "
            f"p={self.power}, η={self.eta}): {parts}",
            self.verbose,
        )
        return new

    def _fit_landmarks(self, L, graph, timings):
        R = _fit.regularizer_base(L, self.ridge)
        self.condition_bound_ = _fit.warn_condition(R, self.ridge, self.power)
        _fit.warn_unlandmarked(L, self.landmarks_, graph)
        near_nullspace = None
        if getattr(graph, "normalized", False) and getattr(graph, "degree_", None) is not None:
            near_nullspace = np.sqrt(graph.degree_)  # the normalized Laplacian's null vector
        Z, solution, setup = _fit.landmark_solves(
            R,
            self.landmarks_,
            self.power,
            self.ridge,
            solver=self.solver,
            tol=self.tol,
            near_nullspace=near_nullspace,
            memory_budget=self.memory_budget,
            verbose=max(int(self.verbose) - 1, 0),
        )
        timings["setup"], timings["solve"] = setup, solution["time"]
        self.iterations_ = solution["iterations"]
        self.residual_ = solution["residual"]
        self.epsilon_ = solution["epsilon"]
        self.converged_ = solution["converged"]
        tic = time.perf_counter()
        self.A_ = _fit.landmark_gram(R, Z, self.power)  # Z (n × n̂) is dropped here
        timings["gram"] = time.perf_counter() - tic

    def _factorize(self):
        """The η- and K-dependent part: the Cholesky factor, or eq. (4)'s ``M`` for ``exact``."""
        K_hat = self.base_kernel_(self.landmark_points_)
        if self.construction == "exact":
            self.inner_ = _fit.exact_inner(self.Q_, K_hat, self.eta)
            self.factor_, self.jitter_ = None, 0.0
        else:
            self.inner_ = None
            self.factor_, self.jitter_ = _fit.small_factor(self.A_, K_hat, self.eta)

    def with_ambient(
        self, *, eta=None, base_kernel=None, X=None, random_state=None
    ) -> DataDependentKernel:
        """A fitted copy with another ``eta`` or ``base_kernel``, without redoing the solves.

        ``A_``, the landmarks and the graph depend only on the graph, ``power``, ``ridge`` and
        the landmark selection; ``η`` and ``K`` enter only the ``n̂ × n̂`` factorization (and
        eq. 4's ``n × n`` solve for ``"exact"``), so a search over them costs ``O(n̂³)`` per point
        instead of ``n̂`` sparse solves.  The result equals a fresh ``fit`` with those parameters
        (and the same landmarks).

        Parameters
        ----------
        eta : float or None
            The new ``η`` (None keeps it).
        base_kernel : Kernel or None
            The new base kernel (None keeps the fitted one).  A heuristic width
            (``RBF(gamma="median")``) needs the training points ``X``.
        X : array-like or None
            The training points, to resolve ``base_kernel``'s heuristic width as ``fit`` does.
        random_state : int, RandomState or None
            The width heuristic's seed when the kernel's own ``random_state`` is None: pass the
            one ``fit`` was given (it samples 1,000 points above that many).

        Returns
        -------
        DataDependentKernel
        """
        self._check_fitted()
        params = {}
        if eta is not None:
            params["eta"] = eta
        if base_kernel is not None:
            params["base_kernel"] = base_kernel
        new = self._unfitted_copy().set_params(**params)
        new._check_params()
        for name in _CARRIED:
            setattr(new, name, getattr(self, name))
        new.timings_ = dict(self.timings_)
        if base_kernel is None:
            new.base_kernel_ = self.base_kernel_
        elif X is not None:
            state = self.random_state if self.random_state is not None else random_state
            new.base_kernel_ = base_kernel.fit(_check_input(X, "X"), random_state=state)
        else:
            try:
                base_kernel._check_params()
            except ValueError as exc:
                raise ValueError(
                    f"with_ambient(base_kernel={base_kernel!r}) needs the training points to fix "
                    f"its width: pass X=... as given to fit ({exc})"
                ) from exc
            new.base_kernel_ = base_kernel
        tic = time.perf_counter()
        new._factorize()
        new.timings_["factor"] = time.perf_counter() - tic
        return new

    # ------------------------------------------------------------------ evaluation
    def _left(self, K_ap):
        """``F_A`` of a block of rows: ``(C⁻¹k̂_a)ᵀ``, or ``K(a, X)·M`` for ``"exact"``."""
        from semiscale.linalg.ops import get_ops  # linalg sits above the kernels

        ops = get_ops()
        if self.construction == "exact":
            return ops.matmul(K_ap, self.inner_)
        return ops.solve_triangular(self.factor_, np.ascontiguousarray(K_ap.T), lower=True).T

    def _right(self, K_bp):
        return K_bp if self.construction == "exact" else self._left(K_bp)

    def _landmark_block(self, X):
        """``K(X, landmarks)`` in float64."""
        return np.asarray(self.base_kernel_(X, self.landmark_points_), dtype=np.float64)

    def _row_bytes(self, pair):
        self._check_fitted()
        base, n_hat = self.base_kernel_, self.landmark_points_.shape[0]
        ap = _Pair(pair.A, self.landmark_points_)
        # base block, K(a, landmarks) and its transformed row, the float64 correction row
        return base._row_bytes(pair) + base._row_bytes(ap) + 8 * (2 * n_hat + pair.B.shape[0])

    def _fixed_bytes(self, pair):
        self._check_fitted()
        base, n_hat = self.base_kernel_, self.landmark_points_.shape[0]
        ap = _Pair(pair.A, self.landmark_points_)
        bp = _Pair(pair.B, self.landmark_points_)
        n_b = pair.B.shape[0]
        inner = (
            base._fixed_bytes(bp)
            + n_b * base._row_bytes(bp)  # K(B, landmarks)
            + 8 * n_b * n_hat  # F_B
        )
        return base._fixed_bytes(pair) + base._fixed_bytes(ap) + inner

    def _setup(self, pair):
        self._check_fitted()
        base = self.base_kernel_
        ap = _Pair(pair.A, self.landmark_points_)
        G_B = self._right(self._landmark_block(pair.B))
        return base._setup(pair), ap, base._setup(ap), G_B

    def _block(self, pair, rows, state):
        from semiscale.linalg.ops import get_ops

        base_state, ap, ap_state, G_B = state
        K = self.base_kernel_._block(pair, rows, base_state)
        if pair.symmetric and self.construction != "exact":
            F_A = G_B[rows]  # the same F for A = B: one triangular solve saved, exact symmetry
        else:
            K_ap = np.asarray(self.base_kernel_._block(ap, rows, ap_state), dtype=np.float64)
            F_A = self._left(K_ap)
        correction = get_ops().matmul(F_A, G_B.T)
        correction *= self.eta
        K -= correction.astype(K.dtype, copy=False)
        return K

    def _diag(self, A):
        self._check_fitted()
        out = np.asarray(self.base_kernel_._diag(A), dtype=np.float64).copy()
        for start in range(0, A.shape[0], DIAG_CHUNK):
            rows = slice(start, min(start + DIAG_CHUNK, A.shape[0]))
            K_ap = self._landmark_block(A[rows])
            out[rows] -= self.eta * np.einsum("ij,ij->i", self._left(K_ap), self._right(K_ap))
        return out
