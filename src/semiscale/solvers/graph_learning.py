r"""Label propagation on the graph: the Laplace-learning and Poisson-learning solves.

The estimators (:class:`~semiscale.models.HarmonicClassifier`,
:class:`~semiscale.models.PoissonClassifier`, on the shared fit path of
:mod:`semiscale.models.graph_learning`) validate, build the graph and store; this module holds
their mathematics.  Both solve one sparse linear system in the graph Laplacian ``L`` of all
training points, labeled and unlabeled, with one column per class (the last one inferred), by
conjugate gradient (:func:`semiscale.solvers.cg`, every product ``L·V`` by the
array-operations layer) preconditioned by one algebraic-multigrid V-cycle
(:mod:`semiscale.solvers.amg`) or by the diagonal (:func:`graph_cg`): O(nnz(L)·C) per
iteration, no kernel.

- **Laplace learning** (Zhu, Ghahramani & Lafferty, ICML 2003, "Gaussian fields and harmonic
  functions", :func:`laplace_learning`): the class indicators ``F`` are harmonic on the
  unlabeled points and equal the one-hot labels ``Y_l`` on the labeled ones,

  .. math::  L_{uu} F_u = -L_{ul} Y_l ,

  and *class mass normalization* (CMN) rescales class ``c`` by ``q_c / Σ_u F_{uc}`` (its prior
  over its mass) before the arg max.
- **Poisson learning** (Calder, Cook, Thorpe & Slepčev, ICML 2020, :func:`poisson_learning`):
  the labels are sources and sinks, ``y_j − ȳ`` at each labeled point (``ȳ`` the mean one-hot
  label), and

  .. math::  L U = \sum_j (y_j - \bar y)\, \delta_{x_j}^\top, \qquad \sum_i d_i U_{ic} = 0,

  then *mass balancing* multiplies class ``c`` by ``b_c / ȳ_c`` (its prior over its share of the
  labels) before the arg max.

Points in a connected component without any labeled point cannot be reached by either method
(:func:`component_labels`); the estimators give them the class prior.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# one definition, beside the graph's warning about label-less components (re-exported here)
from ..graph._graph import component_labels
from ..linalg.ops import get_ops
from .cg import SolveResult
from .sdd import SDDSolver, jacobi

__all__ = [
    "ROW_SUM_RTOL",
    "centred_sources",
    "LaplaceSolution",
    "PoissonSolution",
    "component_labels",
    "graph_cg",
    "jacobi",
    "laplace_learning",
    "one_hot",
    "poisson_is_singular",
    "poisson_learning",
    "rows_sum_to_zero",
]

#: Row sums of a Laplacian within ``ROW_SUM_RTOL · max|L_ii|`` of 0 (or of each other) count as
#: equal: ``L = D − W`` (or a power of it) and ``L + ridge·I``.
ROW_SUM_RTOL = 1e-8


def one_hot(codes, n_classes):
    """The one-hot rows of class codes, shape ``(len(codes), n_classes)``."""
    Y = np.zeros((codes.shape[0], n_classes))
    Y[np.arange(codes.shape[0]), codes] = 1.0
    return Y


def centred_sources(codes, label_components, n_classes):
    """Poisson learning's sources ``y_j − ȳ`` at the labeled points, ``ȳ`` per component.

    ``codes`` are the labeled points' classes and ``label_components`` their connected
    components: each point's one-hot label minus the mean one-hot label of its component, so
    that every component's sources sum to 0 (its singular system stays consistent).  Shape
    ``(len(codes), n_classes)``.
    """
    onehot = one_hot(codes, n_classes)
    _, group = np.unique(label_components, return_inverse=True)
    sums = np.zeros((group.max(initial=-1) + 1, n_classes))
    np.add.at(sums, group, onehot)
    return onehot - (sums / sums.sum(axis=1, keepdims=True))[group]


def graph_cg(A, B, *, preconditioner, tol, max_iter, verbose=0, desc="CG") -> SolveResult:
    """Preconditioned CG on ``A X = B`` (one recurrence per class column).

    ``preconditioner`` is ``"amg"`` (one smoothed-aggregation V-cycle,
    :class:`~semiscale.solvers.amg.AMGPreconditioner`) or ``"cg"`` (``diag(A)⁻¹``, Jacobi): the
    one pass of :meth:`SDDSolver.solve_once <semiscale.solvers.sdd.SDDSolver.solve_once>`, the
    solver of paper 002's kernel, to CG's relative residual ``tol``.
    """
    # pyamg's cycle: the blocked one passes the pinned predictions too, but breaks down on
    # rounding-level residuals (tol=1e-14) of singular Laplacians, where pyamg's does not
    solver = SDDSolver(A, method=preconditioner, max_iter=max_iter, verbose=verbose, cycle="pyamg")
    return solver.solve_once(B, tol=tol, desc=desc)


def rows_sum_to_zero(rows):
    """Whether every row of ``rows`` sums to 0 (up to ``ROW_SUM_RTOL`` of its largest entry)."""
    sums = np.abs(np.asarray(rows.sum(axis=1)).ravel())
    scale = float(np.abs(rows.data).max(initial=0.0)) or 1.0
    return bool(np.all(sums <= ROW_SUM_RTOL * scale))


@dataclass
class LaplaceSolution:
    """Laplace learning's result: ``F`` (one-hot on the labeled rows, the prior on the
    unreached ones), CMN's ``scale``, the ``scores = F · scale`` and the CG result (or None)."""

    label_distributions: np.ndarray
    class_scale: np.ndarray
    scores: np.ndarray
    result: SolveResult | None


def laplace_learning(L, labeled, codes, reached, prior, *, class_mass_normalization, solve):
    """The harmonic solution ``L_uu F_u = −L_ul Y_l``, ``F_l = Y_l``, and CMN's scaling.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        The graph Laplacian of all training points.
    labeled : ndarray of bool, shape (n,)
        The labeled rows.
    codes : ndarray of int, shape (n,)
        Class codes (read on the labeled rows).
    reached : ndarray of bool, shape (n,)
        Rows in a connected component with a labeled point; the others are not solved.
    prior : ndarray of shape (n_classes,)
        The class proportions ``q`` (CMN's, and the unreached rows' scores).
    class_mass_normalization : bool
        Rescale class ``c`` by ``q_c / Σ_u F_{uc}``.
    solve : callable
        ``solve(A, B) -> SolveResult``: the CG solve of ``A X = B`` (:func:`graph_cg` with the
        estimator's settings).

    Returns
    -------
    LaplaceSolution
        When the rows of ``L_u·`` sum to 0 the constants are harmonic and the columns of ``F``
        sum to 1 as the one-hot labels do: all but the last are solved.
    """
    n_classes = prior.shape[0]
    free = np.flatnonzero(reached & ~labeled)
    labeled = np.flatnonzero(labeled)
    F = np.zeros((L.shape[0], n_classes))
    F[labeled] = one_hot(codes[labeled], n_classes)
    result = None
    if free.size:
        rows = L[free]
        rhs = -get_ops().sparse_matmul(rows[:, labeled], F[labeled])
        if rows_sum_to_zero(rows):
            # then the constants are harmonic, and the columns of F sum to 1 as the one-hot
            # labels do: solve all but the last
            result = solve(rows[:, free].tocsr(), rhs[:, :-1])
            F[free] = np.column_stack([result.x, 1.0 - result.x.sum(axis=1)])
        else:  # a normalized Laplacian, a ridge: every column
            result = solve(rows[:, free].tocsr(), rhs)
            F[free] = result.x
    scale = np.ones(n_classes)
    if class_mass_normalization and free.size:
        mass = F[free].sum(axis=0)
        scale = np.where(mass > 0, prior / np.where(mass > 0, mass, 1.0), 1.0)
    scores = F * scale
    # unreached rows get the prior (the estimator's scores too); label_distributions_ here
    F[~reached] = prior
    return LaplaceSolution(F, scale, scores, result)


def poisson_is_singular(L):
    """True for rows summing to 0 (``D − W``, powers), False for one positive sum (ridge).

    Raises
    ------
    ValueError
        For any other Laplacian (a normalized one), whose null space makes the zero-sum sources
        of Poisson learning inconsistent.
    """
    sums = np.asarray(L.sum(axis=1)).ravel()
    scale = float(np.abs(L.diagonal()).max(initial=0.0)) or 1.0
    tol = ROW_SUM_RTOL * scale
    if np.all(np.abs(sums) <= tol):
        return True
    if sums.min() > tol and sums.max() - sums.min() <= tol:
        return False
    raise ValueError(
        "PoissonClassifier needs a Laplacian whose rows sum to zero (L = D - W, or a power "
        "of it), or all to one positive number (L + ridge*I); this one's row sums range "
        f"from {sums.min():.3g} to {sums.max():.3g}. A normalized Laplacian "
        "(KNNGraph(normalized=True)) has another null space, in which the zero-sum sources "
        "of Poisson learning are not consistent: use normalized=False"
    )


@dataclass
class PoissonSolution:
    """Poisson learning's result: the mass-balanced ``scores``, the balancing factors
    ``class_scale`` (``b_c / ȳ_c``), the CG result (or None) and the rows ``solved`` (those of
    components with labels of two or more classes; the other rows' scores are set, not solved)."""

    scores: np.ndarray
    class_scale: np.ndarray
    result: SolveResult | None
    solved: np.ndarray


def poisson_learning(L, labeled, codes, components, prior, *, solve):
    """Poisson learning's scores, per connected component, with mass balancing.

    Each component with labeled points of two or more classes is its own Poisson problem
    ``L U = Σ_j (y_j − ȳ) δ_j``, its sources centred by its own mean label, normalized to
    ``Σ_i d_i U_ic = 0`` when ``L``'s rows sum to 0 (:func:`poisson_is_singular`); every point
    of a component whose labeled points are all of one class gets that class (scores 1 for it,
    0 for the others); the rows of components without labels are left at 0.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
    labeled : ndarray of bool, shape (n,)
    codes : ndarray of int, shape (n,)
        Class codes (read on the labeled rows).
    components : ndarray of int, shape (n,)
        Connected-component label of every row (:func:`component_labels`).
    prior : ndarray of shape (n_classes,)
        The class proportions ``b`` of mass balancing.
    solve : callable
        ``solve(A, B) -> SolveResult``, as for :func:`laplace_learning`.

    Returns
    -------
    PoissonSolution
    """
    singular = poisson_is_singular(L)
    n, n_classes = L.shape[0], prior.shape[0]
    labeled = np.flatnonzero(labeled)
    codes = codes[labeled]
    # labels per class in each component: a component with two or more classes is solved,
    # one with a single class takes it
    counts = np.zeros((components.max() + 1, n_classes))
    np.add.at(counts, (components[labeled], codes), 1.0)
    n_present = np.count_nonzero(counts, axis=1)
    share = counts.sum(axis=0) / labeled.size  # ȳ over all labels
    class_scale = prior / share
    scores = np.zeros((n, n_classes))
    result = None
    solve_rows = np.flatnonzero(n_present[components] >= 2)
    if solve_rows.size:
        index = np.full(n, -1)
        index[solve_rows] = np.arange(solve_rows.size)
        inside = index[labeled] >= 0
        sources = np.zeros((solve_rows.size, n_classes))
        sources[index[labeled[inside]]] = centred_sources(
            codes[inside], components[labeled[inside]], n_classes
        )
        A = L[solve_rows][:, solve_rows].tocsr()
        # each row of the sources sums to 0, so the columns of U do: solve all but the last
        result = solve(A, sources[:, :-1])
        U = np.column_stack([result.x, -result.x.sum(axis=1)])
        if singular:  # Σ_i d_i U_ic = 0 in each component (CG's iterates already are)
            degree = A.diagonal()
            _, group = np.unique(components[solve_rows], return_inverse=True)
            total = np.bincount(group, weights=degree)
            for c in range(n_classes):
                mean = np.bincount(group, weights=degree * U[:, c]) / total
                U[:, c] -= mean[group]
        scores[solve_rows] = U * class_scale
    single = n_present[components] == 1
    if single.any():
        scores[single] = (counts[components[single]] > 0).astype(np.float64)
    solved = np.zeros(n, dtype=bool)
    solved[solve_rows] = True
    return PoissonSolution(scores, class_scale, result, solved)
