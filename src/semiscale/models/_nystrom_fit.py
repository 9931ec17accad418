"""The shared fit path of the Nyström LapRLS estimators: centers, memory budget, solver.

:mod:`semiscale.models.nystrom_laprls` holds the two public estimators (and the method's
mathematics); this module holds what they share: the choice of the number of centers within
``memory_budget`` (``n_centers="auto"``), the BLAS-thread rule and the Nyström solve.
"""

from __future__ import annotations

import dataclasses
import time
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .._arrays import take_rows
from .._memory import check_fits, parse_memory_budget
from .._random import check_random_state
from ..linalg import resolve_n_centers, select_centers
from ..linalg.centers import CENTER_METHODS
from ..linalg.ops import get_ops
from ..solvers.hessian_system import ITERATIVE_SOLVERS
from ..solvers.newton import solve_manifold
from ..solvers.nystrom_quadratic import NEEDS_CENTER_GRAPH, NystromSolver, solver_memory
from ._base import (
    MANIFOLD_PARAMETER_CONSTRAINTS,
    ManifoldMixin,
    ManifoldProblem,
    Solution,
)

__all__ = ["AUTO_MIN_CENTERS", "LABEL_DIFFUSION_CONSTRAINT", "SINGLE_THREAD_BLAS_MAX_CENTERS"]

#: Fewest centers ``n_centers="auto"`` shrinks to in a small ``memory_budget``.
AUTO_MIN_CENTERS = 50

#: Up to this many centers the fit runs with single-threaded BLAS: its s × s factorizations
#: take milliseconds, and waking OpenBLAS's threads for each costs more than they save
#: (``benchmarks/results/blas_threads/``).  Kernel blocks
#: still use ``n_jobs`` threads.
SINGLE_THREAD_BLAS_MAX_CENTERS = 1200


#: ``label_diffusion`` of the Nyström LapRLS estimators: random-walk steps, an integer ``>= 0``.
LABEL_DIFFUSION_CONSTRAINT = {"label_diffusion": [Interval(Integral, 0, None, closed="left")]}


def _kernel_dtype(kernel_dtype):
    try:
        # np.dtype(None) is float64: None is refused rather than read as a choice.
        dtype = None if kernel_dtype is None else np.dtype(kernel_dtype)
    except TypeError:
        dtype = None
    if dtype is None or dtype.type not in (np.float64, np.float32):
        raise ValueError(f"kernel_dtype must be 'float64' or 'float32', got {kernel_dtype!r}")
    return dtype


class _NystromLapRLSBase(ManifoldMixin, BaseEstimator):
    _parameter_constraints: dict = {
        **MANIFOLD_PARAMETER_CONSTRAINTS,
        "n_centers": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            StrOptions({"auto", "sqrt"}),
        ],
        "center_selection": [StrOptions(set(CENTER_METHODS))],
        "labeled_centers": ["boolean"],
        "solver": [StrOptions(set(ITERATIVE_SOLVERS))],
        "preconditioner_options": [dict, None],
        # the names; numpy's dtype objects and scalar types (np.float32) are also accepted
        "kernel_dtype": [StrOptions({"float64", "float32"}), np.dtype, type],
        "n_jobs": [Integral, None],
    }

    def _compute_dtype(self) -> np.dtype:
        """The kernel blocks' dtype (``kernel_dtype``), the fit's precision."""
        return _kernel_dtype(self.kernel_dtype)

    def _label_diffusion_steps(self, problem: ManifoldProblem) -> int:
        """Random-walk steps of ``label_diffusion``: 0 without it or without a graph term."""
        steps = self.label_diffusion if self._fit_contract.label_diffusion else 0
        if problem.laplacian is None or problem.lambda_intrinsic == 0:
            return 0
        if steps and problem.fit_intercept:
            # The bias borders the system with a column on every row (J_a + λ_I L)·1, while
            # the diffusion holds the labeled rows fixed: the two do not compose.
            raise ValueError(
                f"label_diffusion={steps} cannot be combined with fit_intercept=True (the "
                "diffusion fixes the labeled rows, the bias moves them all); set "
                "label_diffusion=0 to fit a bias, or fit_intercept=False to keep the diffusion"
            )
        return int(steps)

    def _check_before_graph(self, n_samples: int, n_labeled: int) -> None:
        """Refuse before the graph a budget that the Nyström system will certainly refuse.

        Issue 26: an impossible budget on 50,000 × 50 points was refused only after the 22 s kNN
        graph.  What is known before the graph gives a lower bound of what the operator checks
        (:class:`~semiscale.linalg.operators.NystromLapRLSHessian`): ``K_ss`` and the solver's
        buffers (without the graph's degree) for the centers the fit will use ("auto": as
        :meth:`_centers_within_budget` shrinks them; ``AUTO_MIN_CENTERS`` for a solver it does
        not know), and the two work arrays of one output column over the rows the operator
        touches (all of them with the graph term).
        """
        super()._check_before_graph(n_samples, n_labeled)
        itemsize = _kernel_dtype(self.kernel_dtype).itemsize
        explicit = self.n_centers != "auto"
        known = self.solver in ITERATIVE_SOLVERS  # a solver whose buffers solver_memory knows

        def square_parts(s):
            parts = {f"K_ss ({s}x{s})": s * s * itemsize}
            if known:
                parts.update(
                    solver_memory(self.solver, self.preconditioner, n_samples, n_labeled, s)
                )
            return parts

        s = resolve_n_centers(self.n_centers, n_samples)
        if not explicit:  # _centers_within_budget's rule; else its floor
            budget = parse_memory_budget(self.memory_budget)
            while known and s > AUTO_MIN_CENTERS and sum(square_parts(s).values()) > budget // 2:
                s = max(AUTO_MIN_CENTERS, int(s * 0.9))
            s = s if known else min(s, AUTO_MIN_CENTERS)
        parts = square_parts(s)
        rows = n_samples if self.intrinsic_reg_ > 0 else n_labeled
        parts[f"the {rows}x1 work arrays of a product"] = 2 * rows * itemsize
        check_fits(
            parts,
            self.memory_budget,
            what=f"the Nyström system with n={n_samples} points and at least s={s} centers",
            fix="use fewer centers (n_centers)" if explicit else "",
        )

    def _solve(self, problem: ManifoldProblem) -> Solution:
        n_centers = resolve_n_centers(self.n_centers, problem.X.shape[0])
        if self.n_centers == "auto":
            n_centers = self._centers_within_budget(problem, n_centers)
        small = n_centers <= SINGLE_THREAD_BLAS_MAX_CENTERS
        ops = get_ops()
        # one residency scope per fit: a device backend keeps X, L and the factors between the
        # solver's calls and drops them at the end (ArrayOps.resident)
        with ops.blas_threads(1 if small else None), ops.resident():
            return self._solve_with(problem, n_centers)

    def _centers_within_budget(self, problem: ManifoldProblem, n_centers: int) -> int:
        """``n_centers="auto"`` shrunk until the s×s arrays take at most half the budget.

        The s×s part of the fit (``K_ss`` and the solver's factors,
        :func:`~semiscale.solvers.nystrom_quadratic.solver_memory`) grows as s² while the rest
        (kernel blocks, work arrays) is blocked to what is left; the other half of the budget is
        left to that rest.  An explicit ``n_centers`` is never changed (a budget too small for it is
        refused before anything is allocated).
        """
        budget = parse_memory_budget(self.memory_budget)
        n, n_labeled = problem.X.shape[0], int(np.count_nonzero(problem.labeled))
        itemsize = _kernel_dtype(self.kernel_dtype).itemsize

        def square_bytes(s):
            parts = solver_memory(self._s_solver(n, s), self.preconditioner, n, n_labeled, s)
            return s * s * itemsize + sum(parts.values())

        while n_centers > AUTO_MIN_CENTERS and square_bytes(n_centers) > budget // 2:
            n_centers = max(AUTO_MIN_CENTERS, int(n_centers * 0.9))
        return n_centers

    def _solve_with(self, problem: ManifoldProblem, n_centers: int) -> Solution:
        dtype = _kernel_dtype(self.kernel_dtype)
        X = problem.X if problem.X.dtype == dtype else problem.X.astype(dtype)
        rng = check_random_state(problem.random_state)
        labeled_index = np.flatnonzero(problem.labeled)
        take_labeled = self.labeled_centers and labeled_index.size <= n_centers
        tic = time.perf_counter()
        centers = select_centers(
            X,
            n_centers,
            method=self.center_selection,
            random_state=rng.randint(2**31 - 1),
            kernel=problem.kernel,
            labeled=labeled_index if take_labeled else None,
            memory_budget=self.memory_budget,
        )
        centers_seconds = time.perf_counter() - tic
        options = dict(self.preconditioner_options or {})
        solver = self._s_solver(X.shape[0], centers.size)
        if solver == "pcg":
            needs_graph = self.preconditioner in NEEDS_CENTER_GRAPH
            if needs_graph and problem.laplacian is not None and "center_laplacian" not in options:
                graph = self._graph_to_fit()
                options["center_laplacian"] = graph.fit(take_rows(X, centers)).laplacian_
            elif self.preconditioner == "sampled-hessian":
                options.setdefault("random_state", rng.randint(2**31 - 1))
        quadratic = self._quadratic_solver(solver, problem, centers, options)
        solution = solve_manifold(dataclasses.replace(problem, X=X), quadratic)
        self.center_index_ = centers
        solution.info["centers_seconds"] = centers_seconds
        return solution

    def _s_solver(self, n_samples: int, n_centers: int) -> str:
        """The solver of the s × s systems: ``solver`` (``NystromLapSVC`` resolves "auto")."""
        return self.solver

    def _quadratic_solver(self, solver, problem, centers, options):
        """The quadratic solver over ``centers`` handed to ``solve_manifold``."""
        return NystromSolver(
            centers,
            solver=solver,
            preconditioner=self.preconditioner,
            preconditioner_options=options,
            tol=self.tol,
            max_iter=self.max_iter,
            memory_budget=self.memory_budget,
            n_jobs=self.n_jobs,
            label_diffusion=self._label_diffusion_steps(problem),
        )
