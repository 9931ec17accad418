r"""Newton's method in the primal, for every loss: a :class:`ManifoldProblem` as least squares.

The loss-agnostic fit path (this module was ``semiscale.solvers.manifold`` before; the old path
still works for one release, with a ``FutureWarning``).

Every manifold-regularization estimator hands its problem to :func:`solve_manifold` together with
a *quadratic solver* ``solve_quadratic(qp: QuadraticProblem) -> Solution`` (exact LapRLS,
Nyström-PCG, ...).  Three things are data of the problem, not of the estimator's class:

**The loss.**  For the squared loss one quadratic solve with all target columns is exact.  For a
piecewise-quadratic loss with curvature ``c`` (:mod:`semiscale.losses`) each column is solved by
Newton's method in the primal (Chapelle 2007; Melacci & Belkin 2011's primal LapSVM).  At the
current ``f`` with loss derivative ``g`` and active rows ``a`` (where ℓ'' = c), the Newton step
``α⁺`` solves

.. math::

    \Big(K_{as}^\top K_{as} + \tfrac{2λ_A}{c} K_{ss} + \tfrac{2λ_I}{c} K_{ns}^\top L K_{ns}\Big) α^+
    = K_{ns}^\top b,\qquad b = f ∘ 𝟙_a − g / c ,

the quadratic problem with ``active = a`` and ``rhs = b`` (the factor 2 because the objective is
Σℓ + λ_A‖f‖² + λ_I fᵀLf and a quadratic problem's loss part is Σ_a f² − 2bᵀf).  An exact line
search along ``α⁺ − α`` (the objective is piecewise quadratic in the step) makes every step a
descent step; the iteration stops when the active set repeats with a full step, or the relative
decrease falls below ``newton_tol``.  Newton runs on each loss of ``loss.continuation()`` in
turn, each from the last one's solution (the Huber hinge: widths 1, 0.1, ..., h), which ends at
the same minimiser in fewer steps when a narrow quadratic zone would otherwise be found a few
points per step.

**Early stopping.**  With ``problem.stability_tol`` set, a column stops before convergence
once at most that fraction of the training points changes side (the sign of its decision,
centred by ``problem.stability_weights`` when the estimator centres) between two consecutive
Newton steps -- Melacci & Belkin (2011)'s stability check on the predictions of the unlabeled
data, taken here at Newton steps instead of PCG iterations.  The result is then not the
minimiser (approximate CV, which expands around the minimiser, refuses such fits).

**The bias.**  With ``fit_intercept`` the unpenalised bias ``b`` borders the system:
``[H u; uᵀ σ] [α; b] = [z; ζ]`` with ``v = (J_a + λ_I L) 1``, ``u = K_{ns}ᵀ v``,
``σ = 1ᵀ v`` and ``ζ = 1ᵀ rhs``.  Sherman–Morrison on the Schur complement needs only the
quadratic solver, applied to the extra right-hand side ``v``: with ``H x = z``, ``H y = u``,
``α = x + y (vᵀ f_x − ζ)/(σ − vᵀ f_y)`` and ``b = (ζ − vᵀ f_α)/σ``, since ``uᵀx = vᵀ K_{ns} x``.

**The per-class solves.**  One-vs-rest targets are columns of ``targets``.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from functools import partial

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from .._progress import log, progress
from ..losses import get_loss
from .problem import ManifoldProblem, QuadraticProblem, Solution

__all__ = ["NEWTON_MAX_ITER", "NEWTON_TOL", "solve_manifold"]

#: Newton iterations per column before a ConvergenceWarning.
NEWTON_MAX_ITER = 50
#: Relative decrease of the objective below which Newton stops.
NEWTON_TOL = 1e-9
#: Width added to the quadratic zones when choosing a Newton step's active rows (round-off).
ZONE_TOL = 1e-8


def _quadratic(problem: ManifoldProblem, rhs, active, scale=1.0) -> QuadraticProblem:
    return QuadraticProblem(
        X=problem.X,
        rhs=rhs,
        active=active,
        laplacian=problem.laplacian,
        lambda_ambient=problem.lambda_ambient / scale,
        lambda_intrinsic=problem.lambda_intrinsic / scale,
        kernel=problem.kernel,
        memory_budget=problem.memory_budget,
        random_state=problem.random_state,
        verbose=problem.verbose,
        n_jobs=problem.n_jobs,
        labeled=np.asarray(problem.labeled, dtype=bool),
    )


def _train_decision(solution: Solution, qp: QuadraticProblem, kernel_matmul) -> np.ndarray:
    if solution.train_decision is not None:
        return np.asarray(solution.train_decision).reshape(qp.rhs.shape[0], -1)
    f = kernel_matmul(qp.kernel, qp.X, solution.X_fit, solution.dual_coef, qp.memory_budget)
    return np.asarray(f).reshape(qp.rhs.shape[0], -1)


def _bias_row_weights(qp: QuadraticProblem) -> np.ndarray:
    """``v = (J_a + λ_I L) 1``: the bias's coupling to f, row by row."""
    v = qp.active.astype(np.float64)
    if qp.laplacian is not None and qp.lambda_intrinsic > 0:
        ones = np.ones(qp.rhs.shape[0])
        v = v + qp.lambda_intrinsic * np.asarray(qp.laplacian @ ones).ravel()
    return v


def _bias_is_flat(qp: QuadraticProblem) -> bool:
    """True when ``σ = 1ᵀ(J_a + λ_I L)1`` vanishes up to round-off (no curvature along b)."""
    sigma = float(_bias_row_weights(qp).sum())
    scale = float(qp.active.sum()) + 1.0
    if qp.laplacian is not None and qp.lambda_intrinsic > 0:
        scale += qp.lambda_intrinsic * float(abs(qp.laplacian).sum())
    return sigma <= 1e-10 * scale


def _solve_with_intercept(qp: QuadraticProblem, solve_quadratic, kernel_matmul):
    """Quadratic solve with an unpenalised bias (Sherman–Morrison on the bordered system)."""
    n, r = qp.rhs.shape
    v = _bias_row_weights(qp)
    sigma = float(v.sum())
    if _bias_is_flat(qp):
        raise ValueError(
            "fit_intercept=True: the bias is not determined (no labeled row is active and the "
            "graph term is blind to constants); use fit_intercept=False"
        )
    both = dict(vars(qp))
    both["rhs"] = np.column_stack([qp.rhs, v])
    aug = QuadraticProblem(**both)
    solution = solve_quadratic(aug)
    F = _train_decision(solution, aug, kernel_matmul)
    coef = np.asarray(solution.dual_coef).reshape(-1, r + 1)
    x, y = coef[:, :r], coef[:, r:]
    f_x, f_y = F[:, :r], F[:, r:]
    zeta = qp.rhs.sum(axis=0)
    weight = (v @ f_x - zeta) / (sigma - float(v @ f_y[:, 0]))
    alpha = x + y * weight
    f = f_x + f_y * weight
    intercept = (zeta - v @ f) / sigma
    solution.dual_coef = alpha
    solution.train_decision = f + intercept
    solution.intercept = intercept
    if solution.residuals is not None:
        solution.residuals = np.asarray(solution.residuals).reshape(len(solution.residuals), -1)
    return solution


def _solve_once(qp, solve_quadratic, fit_intercept, kernel_matmul):
    if fit_intercept:
        return _solve_with_intercept(qp, solve_quadratic, kernel_matmul)
    solution = solve_quadratic(qp)
    return solution


@dataclasses.dataclass
class _NewtonState:
    """Where a column's Newton iteration stands: f on the training rows and its expansion."""

    f: np.ndarray
    intercept: float = 0.0
    alpha: np.ndarray | None = None
    X_fit: object = None
    alpha_norm2: float = 0.0  # αᵀ K_ss α
    K_alpha: np.ndarray | None = None
    sides: np.ndarray | None = None  # early stopping: each training point's side after a step
    side_changes: list = dataclasses.field(default_factory=list)  # fraction changed, per step
    stopped_early: bool = False


def _sides(f, weights):
    """Each training point's side of the decision (centred by ``weights`` when given)."""
    if weights is None:
        return f > 0
    return f > float(np.sum(weights * f)) / float(weights.sum())  # O(n): no BLAS needed


def _continued_newton_column(problem, loss, y, labeled, solve_quadratic, kernel_matmul, column):
    """Newton on each loss of ``loss.continuation()`` in turn, each from the last one's solution.

    The objective is strictly convex in f for ``λ_A > 0``, so the smoother losses change only
    where the last Newton run starts (:meth:`semiscale.losses.Loss.continuation`).
    """
    stages = loss.continuation()
    state, steps, histories, inner = None, [], [], 0
    for k, stage_loss in enumerate(stages):
        final = k == len(stages) - 1
        solution, state = _newton_column(
            problem, stage_loss, y, labeled, solve_quadratic, kernel_matmul, column, state, final
        )
        steps.append(solution.info["newton_iterations"])
        histories.append(solution.info["objective_history"])
        inner += solution.n_iter
        if state.stopped_early:  # the later, narrower stages are skipped too
            break
    if len(stages) > 1:
        solution.n_iter = inner
        solution.info["newton_iterations"] = int(sum(steps))
        solution.info["continuation"] = [
            {"loss": repr(stage_loss), "newton_iterations": int(n_steps), "objective": history}
            for stage_loss, n_steps, history in zip(
                stages[: len(steps)], steps, histories, strict=True
            )
        ]
    if problem.stability_tol is not None:
        solution.info["stopped_early"] = state.stopped_early
        solution.info["side_changes"] = list(state.side_changes)
    return solution


def _newton_column(
    problem, loss, y, labeled, solve_quadratic, kernel_matmul, column, state=None, final=True
):
    """Primal Newton for one target column from ``state`` (f = 0 when None).

    Returns ``(Solution, state)``.  ``final=False`` (a continuation stage) stops without a
    ConvergenceWarning at the iteration cap.
    """
    n = y.shape[0]
    lab = np.flatnonzero(labeled)
    y_l = y[lab]
    c = loss.curvature
    L = problem.laplacian if problem.lambda_intrinsic > 0 else None

    def objective_terms(f, alpha_norm2):
        data = float(np.sum(loss.value(y_l, f[lab])))
        graph = float(f @ (L @ f)) if L is not None else 0.0
        return data + problem.lambda_ambient * alpha_norm2 + problem.lambda_intrinsic * graph

    if state is None:
        state = _NewtonState(f=np.zeros(n))
    f, intercept, alpha = state.f, state.intercept, state.alpha
    X_fit, alpha_norm2, K_alpha = state.X_fit, state.alpha_norm2, state.K_alpha
    sides, side_changes, stopped_early = state.sides, list(state.side_changes), False
    objective = objective_terms(f, alpha_norm2)
    history = [objective]
    total_inner = 0
    info = {}
    n_newton = 0
    decrease = np.inf

    def zones(f_l, tol=0.0):
        # The quadratic model is exact while these masks hold (active rows, linear-zone rows).
        active_l = loss.active(y_l, f_l, tol)
        return active_l, (loss.derivative(y_l, f_l) != 0) & ~active_l

    def shift_bias(f):
        """Minimise over the bias alone (its curvature is zero when no row is active)."""

        def phi_b(delta):
            g = f + delta
            graph = float(g @ (L @ g)) if L is not None else 0.0
            return float(np.sum(loss.value(y_l, g[lab]))) + problem.lambda_intrinsic * graph

        scale = max(1.0, float(np.max(np.abs(y_l))))
        best = minimize_scalar(phi_b, bracket=(-scale, scale), method="brent", tol=1e-14)
        return float(best.x) if best.fun < phi_b(0.0) else 0.0

    # verbose >= 1: a counter of Newton steps, the objective beside (each step's inner solve
    # shows its own (P)CG counter below it).
    width = f" h={loss.h:g}" if hasattr(loss, "h") else ""  # a continuation stage's width
    desc = f"Newton ({loss.name}{width}, column {column})"
    with progress(desc=desc, verbose=problem.verbose, unit="step") as bar:
        for n_newton in range(1, NEWTON_MAX_ITER + 1):  # noqa: B007 - reported after the loop
            f_l = f[lab]
            active_l, linear_l = zones(f_l, ZONE_TOL)
            if problem.fit_intercept and not active_l.any() and linear_l.any():
                # No curvature in the bias direction: a Newton step is unbounded there.  The exact
                # minimum over b alone puts a point on a zone boundary, which makes it active.
                delta = shift_bias(f)
                f = f + delta
                intercept += delta
                objective = objective_terms(f, alpha_norm2)
                f_l = f[lab]
                active_l, linear_l = zones(f_l, ZONE_TOL)
            active = np.zeros(n, dtype=bool)
            active[lab[active_l]] = True
            rhs = np.zeros((n, 1))
            rhs[lab, 0] = np.where(active_l, f_l, 0.0) - loss.derivative(y_l, f_l) / c
            qp = _quadratic(problem, rhs, active, scale=c / 2.0)
            if problem.fit_intercept and _bias_is_flat(qp):
                # No curvature along the bias (no active row, L·1 ≈ 0): the bordered step is
                # unbounded there.  Step in α with b held: the quadratic part of f is Kα + b, so the
                # rhs loses b·(J_a + λ_I L)1 (≈ 0 here, kept for exactness).
                held = intercept * _bias_row_weights(qp)[:, None]
                qp_held = dataclasses.replace(qp, rhs=qp.rhs - held)
                step = _solve_once(qp_held, solve_quadratic, False, kernel_matmul)
                f_new = _train_decision(step, qp_held, kernel_matmul)[:, 0] + intercept
                b_new = intercept
            else:
                step = _solve_once(qp, solve_quadratic, problem.fit_intercept, kernel_matmul)
                f_new = _train_decision(step, qp, kernel_matmul)[:, 0]
                b_new = float(step.intercept[0]) if step.intercept is not None else 0.0
            total_inner += int(step.n_iter)
            info = step.info
            alpha_new = np.asarray(step.dual_coef).reshape(-1)
            if not (np.all(np.isfinite(alpha_new)) and np.isfinite(b_new)):
                raise ValueError(
                    f"the Newton step of the {loss.name} loss is undefined (target column "
                    f"{column}, step {n_newton}, {int(active_l.sum())} labeled points in its "
                    "quadratic zone): its system is singular; raise ambient_reg (it is "
                    f"{problem.lambda_ambient:g} in the solver's scaling; > 0 makes it regular)"
                    + (", or use fit_intercept=False" if problem.fit_intercept else "")
                )
            X_fit = step.X_fit
            # Exact line search on φ(t) = objective(f + t Δf): the regularizers are quadratic in t.
            a0 = np.zeros_like(alpha_new) if alpha is None else alpha
            if K_alpha is None:
                K_alpha = np.zeros_like(alpha_new)
            d_alpha = alpha_new - a0
            # One kernel product per step: K·α is carried from step to step (K = k(X_fit, X_fit)).
            K_d = kernel_matmul(problem.kernel, X_fit, None, d_alpha, problem.memory_budget)
            aKa, aKd, dKd = float(a0 @ K_alpha), float(a0 @ K_d), float(d_alpha @ K_d)
            df = f_new - f
            if L is not None:
                # f includes the bias: L·1 = 0 holds for unnormalized Laplacians only.
                fLf, fLd, dLd = float(f @ (L @ f)), float(f @ (L @ df)), float(df @ (L @ df))
            else:
                fLf = fLd = dLd = 0.0

            def phi(t, f=f, df=df, aKa=aKa, aKd=aKd, dKd=dKd, fLf=fLf, fLd=fLd, dLd=dLd):
                data = float(np.sum(loss.value(y_l, f[lab] + t * df[lab])))
                reg = aKa + 2 * t * aKd + t * t * dKd
                graph = fLf + 2 * t * fLd + t * t * dLd
                return data + problem.lambda_ambient * reg + problem.lambda_intrinsic * graph

            t, value = 1.0, phi(1.0)
            best = minimize_scalar(
                phi, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-10}
            )
            if best.fun < value - 1e-12 * abs(value):
                t, value = float(best.x), float(best.fun)
            alpha = a0 + t * d_alpha
            K_alpha = K_alpha + t * K_d
            alpha_norm2 = aKa + 2 * t * aKd + t * t * dKd
            f = f + t * df
            intercept = intercept + t * (b_new - intercept)
            history.append(value)
            decrease = objective - value
            objective = value
            new_active, new_linear = zones(f[lab], ZONE_TOL)
            stationary = (
                t == 1.0
                and np.array_equal(new_active, active_l)
                and np.array_equal(new_linear, linear_l)
            )
            if not bar.disable:
                bar.set_postfix_str(
                    f"objective {objective:.6g}, {int(active_l.sum())} active", refresh=False
                )
                bar.update()
            # verbose >= 2: a line per step, as CG writes one per iteration
            log(
                f"[{desc}] step {n_newton}: objective {objective:.6g}, step length {t:.3g}, "
                f"{int(active_l.sum())} active",
                problem.verbose,
                level=2,
            )
            converged = stationary or decrease <= NEWTON_TOL * max(abs(objective), 1e-300)
            if problem.stability_tol is not None:
                new_sides = _sides(f, problem.stability_weights)
                if sides is not None:
                    side_changes.append(float(np.mean(new_sides != sides)))
                    stopped_early = side_changes[-1] <= problem.stability_tol and not converged
                sides = new_sides
            if converged or stopped_early:
                break
        else:
            if final:
                warnings.warn(
                    f"Newton did not converge in {NEWTON_MAX_ITER} iterations for target column "
                    f"{column} (relative decrease {decrease / max(abs(objective), 1e-300):.2e}); "
                    "raise ambient_reg or check the targets",
                    ConvergenceWarning,
                    stacklevel=5,
                )
    info = {**info, "newton_iterations": n_newton, "objective_history": history}
    solution = Solution(
        X_fit=X_fit,
        dual_coef=alpha[:, None],
        train_decision=f[:, None],
        intercept=np.array([intercept]) if problem.fit_intercept else None,
        n_iter=total_inner,
        info=info,
    )
    state = _NewtonState(
        f, intercept, alpha, X_fit, alpha_norm2, K_alpha, sides, side_changes, stopped_early
    )
    return solution, state


def solve_manifold(problem: ManifoldProblem, solve_quadratic, *, kernel_matmul=None) -> Solution:
    """Solve a :class:`ManifoldProblem` with a quadratic solver (module docstring).

    Parameters
    ----------
    problem : ManifoldProblem
    solve_quadratic : callable
        ``QuadraticProblem -> Solution``; the expansion points ``X_fit`` must not depend on the
        quadratic problem's right-hand side or active rows (Nyström centers are chosen once).
    kernel_matmul : callable, optional
        ``(kernel, A, B, V, memory_budget) -> K(A, B) V``; default
        :func:`semiscale.linalg.kernel_matmul`.

    Returns
    -------
    Solution
        ``train_decision`` is f on every training point (bias included), ``intercept`` the bias
        when fitted.  For non-quadratic losses ``n_iter`` sums the inner iterations over Newton
        steps and columns, and ``info["newton_iterations"]`` lists the Newton steps per column
        (all continuation stages); ``info["objective_history"]`` the objective before each
        step of the last stage, per column; with a continuation, ``info["continuation"]`` per
        column the stages' losses, steps and objective histories.  With
        ``problem.stability_tol``, ``info["stopped_early"]`` says per column whether the
        stability check stopped it and ``info["side_changes"]`` lists the fraction of points
        that changed side at each step after the first.
    """
    if kernel_matmul is None:
        from ..linalg import kernel_matmul as threaded

        kernel_matmul = partial(threaded, n_jobs=problem.n_jobs)
    loss = get_loss(problem.loss)
    targets = np.asarray(problem.targets, dtype=np.float64)
    targets = targets.reshape(targets.shape[0], -1)
    labeled = np.asarray(problem.labeled, dtype=bool)
    tic = time.perf_counter()
    if loss.quadratic:
        qp = _quadratic(problem, targets * labeled[:, None], labeled)
        solution = _solve_once(qp, solve_quadratic, problem.fit_intercept, kernel_matmul)
        solution.info.setdefault("loss", loss.name)
        return solution
    columns = [
        _continued_newton_column(
            problem, loss, targets[:, j], labeled, solve_quadratic, kernel_matmul, j
        )
        for j in range(targets.shape[1])
    ]
    first = columns[0]
    for other in columns[1:]:
        same = other.X_fit is first.X_fit or (
            np.shape(other.X_fit) == np.shape(first.X_fit)
            and not (other.X_fit != first.X_fit).sum()
        )
        if not same:  # pragma: no cover - a solver whose span depends on the rhs
            raise RuntimeError("the quadratic solver changed its expansion points between columns")
    info = dict(first.info)
    info.update(
        loss=loss.name,
        newton_iterations=[c.info["newton_iterations"] for c in columns],
        objective_history=[c.info["objective_history"] for c in columns],
        newton_seconds=time.perf_counter() - tic,
    )
    if "continuation" in first.info:
        info["continuation"] = [c.info["continuation"] for c in columns]
    if problem.stability_tol is not None:
        info["stopped_early"] = [c.info["stopped_early"] for c in columns]
        info["side_changes"] = [c.info["side_changes"] for c in columns]
    return Solution(
        X_fit=first.X_fit,
        dual_coef=np.column_stack([c.dual_coef[:, 0] for c in columns]),
        train_decision=np.column_stack([c.train_decision[:, 0] for c in columns]),
        intercept=(
            np.concatenate([c.intercept for c in columns]) if problem.fit_intercept else None
        ),
        n_iter=sum(c.n_iter for c in columns),
        info=info,
    )
