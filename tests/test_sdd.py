"""SDD solves (paper 002 §4): every method against the dense solve, and Theorem 4.2's bound.

A table of named problems × methods, as scipy.sparse.linalg's tests: each solution is compared
with ``numpy.linalg.solve`` of the dense ``R^p`` (well conditioned enough, ridge ≥ 1e-2, that the
dense answer is accurate to ~1e-12), the reported residual with its own recomputation, and the
a-posteriori ``epsilon`` with the true Q-norm error.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from semiscale._memory import MemoryBudgetError
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.solvers import SDDSolution, SDDSolver, solve_sdd

N = 240
TOL = 1e-10


def _moons_graph(*, normalized, ridge, n=N, seed=0):
    X, _ = make_two_moons(n, noise=0.08, random_state=seed)
    graph = KNNGraph(
        n_neighbors=5,
        weights="binary",
        symmetrize="union",
        normalized=normalized,
        ridge=ridge,
        method="exact",
    )
    return sp.csr_matrix(graph.fit_transform(X))


def _center_per_component(R, V):
    """``V`` minus its mean on each connected component of ``R``'s graph (its null space)."""
    _, labels = connected_components(R, directed=False)
    V = V.copy()
    for c in np.unique(labels):
        V[labels == c] -= V[labels == c].mean(axis=0)
    return V


def _rhs(n, r, *, seed=1):
    return np.random.default_rng(seed).standard_normal((n, r))


#: name -> (R, power, columns, centered right-hand sides, ridge = λ_min lower bound or None)
PROBLEMS = {
    "laplacian+ridge": (lambda: _moons_graph(normalized=False, ridge=1e-2), 1, 50, False, 1e-2),
    "normalized+ridge": (lambda: _moons_graph(normalized=True, ridge=1e-2), 1, 50, False, 1e-2),
    "normalized+ridge, one column": (
        lambda: _moons_graph(normalized=True, ridge=1e-2),
        1,
        None,
        False,
        1e-2,
    ),
    "power 2": (lambda: _moons_graph(normalized=True, ridge=5e-2), 2, 50, False, 5e-2),
    "power 3": (lambda: _moons_graph(normalized=True, ridge=1e-1), 3, 50, False, 1e-1),
    "singular consistent laplacian": (
        lambda: _moons_graph(normalized=False, ridge=0.0),
        1,
        50,
        True,
        None,
    ),
}


def _cases():
    for name, (*_, centered, _) in PROBLEMS.items():
        for method in ("amg", "cg", "direct"):
            if method == "direct" and centered:
                continue  # a sparse LU needs a non-singular R (module docstring)
            yield pytest.param(name, method, id=f"{name}-{method}")


@pytest.mark.parametrize(("name", "method"), list(_cases()))
def test_every_method_matches_the_dense_solve(name, method):
    make, power, columns, centered, floor = PROBLEMS[name]
    R = make()
    Rd = R.toarray()
    assert np.allclose(Rd, Rd.T)
    B = _rhs(N, columns or 1)
    if centered:  # orthogonal to the null space: consistent (two moons: two components)
        assert connected_components(R, directed=False)[0] == 2
        B = _center_per_component(R, B)
    if columns is None:
        B = B[:, 0]
    Q = np.linalg.matrix_power(Rd, power)
    sol = SDDSolver(R, method=method, tol=TOL).solve(B, power, eigenvalue_floor=floor)
    assert isinstance(sol, SDDSolution)
    assert sol.solution.shape == B.shape and sol.solution.dtype == np.float64
    assert sol.converged and sol.method == method
    assert sol.iterations.shape == (power,)
    assert (sol.iterations == 0).all() if method == "direct" else (sol.iterations > 0).all()
    Z = sol.solution.reshape(N, -1)
    B2 = B.reshape(N, -1)
    if centered:
        # solutions are defined up to the null space (constants on the connected graph):
        # compare the minimum-norm ones
        reference = np.linalg.pinv(Rd) @ B2
        Z = _center_per_component(R, Z)
    else:
        reference = np.linalg.solve(Q, B2)
    error = np.linalg.norm(Z - reference, axis=0) / np.linalg.norm(reference, axis=0)
    assert error.max() < 1e-6, error.max()
    # the reported residual is the recomputed one
    own = np.linalg.norm(B2 - Q @ sol.solution.reshape(N, -1), axis=0) / np.linalg.norm(B2, axis=0)
    np.testing.assert_allclose(sol.residual, own, rtol=1e-3, atol=1e-13)
    assert sol.residual.max() < 1e-6
    if floor is None:
        assert sol.epsilon is None
    else:
        true_eps = _q_norm(Q, Z - reference) / _q_norm(Q, reference)
        # up to the dense reference's own rounding (~1e-14 here)
        assert np.all(true_eps <= sol.epsilon + 1e-12)
        assert sol.epsilon.max() < 1e-6


def _q_norm(Q, V):
    return np.sqrt(np.einsum("ij,ij->j", V, Q @ V))


@pytest.mark.parametrize("power", [1, 2])
def test_theorem_4_2_entrywise_bound_holds_for_the_tolerance_reached(power):
    # a loose tolerance, so that eps is far from rounding: A = ZᵀQZ must satisfy
    # |A_ij − Q⁻¹_{s_i s_j}| ≤ (ε_i + ε_j + ε_i ε_j) sqrt(Q⁻¹_{s_i s_i} Q⁻¹_{s_j s_j})
    ridge = 1e-3
    R = _moons_graph(normalized=True, ridge=ridge, n=400)
    n = R.shape[0]
    landmarks = np.random.default_rng(3).choice(n, 12, replace=False)
    E = np.zeros((n, landmarks.size))
    E[landmarks, np.arange(landmarks.size)] = 1.0
    sol = solve_sdd(R, E, power=power, method="amg", tol=1e-4, eigenvalue_floor=ridge)
    Q = np.linalg.matrix_power(R.toarray(), power)
    Z = sol.solution
    A = Z.T @ Q @ Z
    Qinv = np.linalg.inv(Q)[np.ix_(landmarks, landmarks)]
    true_eps = _q_norm(Q, Z - np.linalg.solve(Q, E)) / np.sqrt(np.diag(Qinv))
    assert np.all(true_eps <= sol.epsilon)
    assert sol.epsilon.max() > 1e-9  # the bound is exercised, not rounding
    eps = sol.epsilon
    bound = (eps[:, None] + eps[None, :] + np.outer(eps, eps)) * np.sqrt(
        np.outer(np.diag(Qinv), np.diag(Qinv))
    )
    assert np.all(np.abs(A - Qinv) <= bound)


def test_memory_budget_batches_give_the_same_columns():
    R = _moons_graph(normalized=True, ridge=1e-2)
    B = _rhs(N, 20)
    whole = SDDSolver(R, method="amg", tol=TOL).solve(B)
    per_column = 10 * N * 8  # COLUMN_WORK_VECTORS vectors of N floats
    batched = SDDSolver(R, method="amg", tol=TOL, memory_budget=3 * per_column).solve(B)
    np.testing.assert_allclose(batched.solution, whole.solution, rtol=0, atol=1e-12)
    with pytest.raises(MemoryBudgetError, match="memory_budget"):
        SDDSolver(R, memory_budget=per_column - 1).solve(B)


def test_near_nullspace_sqrt_degree_solves_the_normalized_laplacian():
    X, _ = make_two_moons(N, noise=0.08, random_state=0)
    graph = KNNGraph(
        n_neighbors=5, weights="binary", symmetrize="union", normalized=True, ridge=1e-6
    ).fit(X)
    R, degree = sp.csr_matrix(graph.laplacian_), graph.degree_
    B = _rhs(N, 5)
    sol = SDDSolver(R, tol=TOL, near_nullspace=np.sqrt(degree)).solve(B, eigenvalue_floor=1e-6)
    reference = SDDSolver(R, method="direct").solve(B)
    error = np.linalg.norm(sol.solution - reference.solution) / np.linalg.norm(reference.solution)
    assert sol.converged and error < 1e-6


def _sym(n=6):
    return sp.csr_matrix(np.diag(np.arange(1.0, n + 1)))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: SDDSolver(_sym(), method="lu"), "method must be one of"),
        (lambda: SDDSolver(_sym(), tol=0.0), "tol must be"),
        (lambda: SDDSolver(_sym(), tol=2.0), "tol must be"),
        (lambda: SDDSolver(_sym(), tol=float("nan")), "tol must be"),
        (lambda: SDDSolver(_sym(), max_iter=0), "max_iter must be"),
        (lambda: SDDSolver(_sym()).solve(np.ones(6), power=0), "power must be"),
        (lambda: SDDSolver(_sym()).solve(np.ones(6), power=1.5), "power must be"),
        (lambda: SDDSolver(_sym()).solve(np.ones(5)), r"B must have shape \(6,\)"),
        (lambda: SDDSolver(_sym()).solve(np.full(6, np.nan)), "B has non-finite"),
        (
            lambda: SDDSolver(_sym()).solve(np.ones(6), eigenvalue_floor=-1.0),
            "eigenvalue_floor must be",
        ),
        (lambda: SDDSolver(_sym(), method="cg", near_nullspace=np.ones(6)), "near_nullspace"),
        (lambda: SDDSolver(_sym(), near_nullspace=np.ones(5)), "near_nullspace must have"),
        (lambda: SDDSolver(sp.csr_matrix(np.ones((3, 4)))), "R must be square"),
        (lambda: SDDSolver(sp.csr_matrix(np.triu(np.ones((4, 4))))), "R must be symmetric"),
        (lambda: SDDSolver(sp.csr_matrix((4, 4)), method="direct"), "method='direct' needs"),
    ],
)
def test_bad_input_names_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_dense_matrix_is_refused_with_the_fix():
    with pytest.raises(TypeError, match="scipy.sparse"):
        SDDSolver(np.eye(3))


def test_a_zero_column_gets_a_zero_solution():
    R = _moons_graph(normalized=True, ridge=1e-2)
    B = _rhs(N, 3)
    B[:, 1] = 0
    for method in ("amg", "cg", "direct"):
        sol = SDDSolver(R, method=method).solve(B, 2, eigenvalue_floor=1e-2)
        assert np.all(sol.solution[:, 1] == 0)
        assert sol.residual[1] == 0 and sol.epsilon[1] == 0 and sol.converged


def test_the_blocked_cycle_uses_the_symmetric_strength_and_pyamgs_the_evolution_one(monkeypatch):
    # SDD_STRENGTH with the blocked cycle; the graph estimators' pyamg cycle keeps AMG_OPTIONS's
    import pyamg

    from semiscale.solvers.amg import AMG_OPTIONS
    from semiscale.solvers.sdd import SDD_STRENGTH

    seen = []
    build = pyamg.smoothed_aggregation_solver

    def recording(A, **options):
        seen.append(options["strength"])
        return build(A, **options)

    monkeypatch.setattr(pyamg, "smoothed_aggregation_solver", recording)
    X, _ = make_two_moons(1200, noise=0.1, random_state=0)
    graph = KNNGraph(
        n_neighbors=5, weights="binary", symmetrize="union", normalized=True, ridge=1e-6
    ).fit(X)
    R = sp.csr_matrix(graph.laplacian_)
    SDDSolver(R)
    SDDSolver(R, cycle="pyamg")
    assert SDD_STRENGTH == "symmetric" and AMG_OPTIONS["strength"] == "evolution"
    assert seen == ["symmetric", "evolution"]
