r"""The volume-constrained MBO solver (:mod:`semiscale.solvers.mbo`).

References written independently of the solver: the transportation problem with exact volumes
solved as an assignment (``scipy.optimize.linear_sum_assignment`` on the score matrix with
class ``c``'s column repeated ``count_c`` times), the largest-remainder rounding of ``n b``
written out, and Poisson learning by the dense pseudo-inverse: without thresholding the forced
heat equation ``u ← (I − dt L) u + μ dt B`` converges to ``μ L⁺ B`` plus the mean of its start.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment, linprog

from semiscale.graph import KNNGraph
from semiscale.solvers.mbo import heat_step_matrix, poisson_mbo, volume_bounds, volume_threshold


def _random_problem(seed):
    """Gaussian scores of 30–60 points and 3–4 classes, and a random prior."""
    rng = np.random.default_rng(seed)
    n, n_classes = int(rng.integers(30, 61)), int(rng.integers(3, 5))
    return rng.standard_normal((n, n_classes)), rng.dirichlet(np.full(n_classes, 2.0))


def _best_total_with_counts(scores, counts):
    """The largest ``Σ_i scores[i, label_i]`` over labellings with ``counts[c]`` rows of class c:
    an assignment of the rows to ``counts[c]`` copies of each class's column."""
    columns = np.repeat(np.arange(scores.shape[1]), counts)
    rows, picked = linear_sum_assignment(scores[:, columns], maximize=True)
    return float(scores[rows, columns[picked]].sum())


def _largest_remainders(prior, n):
    """Hamilton's rounding of ``n · prior``, written out: floors, then one more point to each
    of the classes with the largest fractional parts until the counts sum to ``n``."""
    target = [n * float(b) for b in prior]
    counts = [math.floor(t) for t in target]
    by_remainder = sorted(range(len(prior)), key=lambda c: counts[c] - target[c])
    for c in by_remainder[: n - sum(counts)]:
        counts[c] += 1
    return np.array(counts)


def _connected_graph(n=40, k=6, seed=0):
    """The Laplacian ``D − W`` (CSR) of a connected kNN graph of uniform points in the square."""
    X = np.random.default_rng(seed).uniform(size=(n, 2))
    graph = KNNGraph(n_neighbors=k).fit(X)
    assert graph.n_components_ == 1
    return sp.csr_matrix(graph.laplacian_)


def _sources(n, labeled, codes, n_classes):
    """Poisson learning's sources ``B = Σ_j (y_j − ȳ) δ_j`` (dense)."""
    Y = np.eye(n_classes)[codes]
    B = np.zeros((n, n_classes))
    B[labeled] = Y - Y.mean(axis=0)
    return B


# ---------------------------------------------------------------------- volume_threshold
@pytest.mark.parametrize("seed", range(12))
def test_exact_volumes_solve_the_transportation_problem(seed):
    scores, prior = _random_problem(seed)
    n = scores.shape[0]
    counts, same = volume_bounds(prior, n, 0)
    np.testing.assert_array_equal(counts, same)
    result = volume_threshold(scores, counts, counts, slack=0)
    assert result.satisfied
    np.testing.assert_array_equal(result.counts, counts)
    np.testing.assert_array_equal(np.bincount(result.labels, minlength=counts.size), counts)
    np.testing.assert_array_equal(result.labels, np.argmax(scores + result.offsets, axis=1))
    total = scores[np.arange(n), result.labels].sum()
    np.testing.assert_allclose(total, _best_total_with_counts(scores, counts), rtol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_exact_volumes_are_met_up_to_the_default_slack(seed):
    scores, prior = _random_problem(seed)
    counts, _ = volume_bounds(prior, scores.shape[0], 0)
    result = volume_threshold(scores, counts, counts)  # slack max(1, n // 1000) = 1 here
    assert result.satisfied
    assert np.abs(result.counts - counts).max() <= 1
    np.testing.assert_array_equal(result.labels, np.argmax(scores + result.offsets, axis=1))


@pytest.mark.parametrize("seed", range(8))
def test_band_bounds_hold(seed):
    scores, _ = _random_problem(seed)
    n, n_classes = scores.shape
    # a skewed prior, so that the plain arg max (about uniform counts) misses some bands
    prior = np.geomspace(1.0, 8.0, n_classes)
    prior /= prior.sum()
    lower, upper = volume_bounds(prior, n, 0.25)
    plain = np.bincount(np.argmax(scores, axis=1), minlength=n_classes)
    assert np.any((plain < lower) | (plain > upper))  # the bounds bind
    result = volume_threshold(scores, lower, upper, slack=0)
    assert result.satisfied
    assert np.all((lower <= result.counts) & (result.counts <= upper)), (lower, result, upper)
    np.testing.assert_array_equal(result.labels, np.argmax(scores + result.offsets, axis=1))
    default = volume_threshold(scores, lower, upper)  # slack 1
    assert np.all((lower - 1 <= default.counts) & (default.counts <= upper + 1))


def _best_total_within(scores, lower, upper):
    """The largest ``Σ_i scores[i, label_i]`` over labellings whose counts lie in
    ``[lower, upper]``: the transportation linear program (its vertices are integral)."""
    n, n_classes = scores.shape
    each_row_once = sp.kron(sp.eye(n), np.ones((1, n_classes)))
    count = sp.kron(np.ones((1, n)), sp.eye(n_classes))
    result = linprog(
        -scores.ravel(),
        A_ub=sp.vstack([count, -count]),
        b_ub=np.r_[upper, -np.asarray(lower)],
        A_eq=each_row_once,
        b_eq=np.ones(n),
        bounds=(0, 1),
        method="highs",
    )
    assert result.status == 0
    return -result.fun


@pytest.mark.xfail(
    strict=True,
    reason="documented limitation (volume_threshold's docstring): the sweeps stop at the first "
    "one whose counts meet the bounds, so an offset set while its class's bound binds stays after "
    "it no longer does; sweeping on took 21 sweeps on average for <= 0.05 points on usps",
)
def test_band_bounds_give_the_best_labelling_within_them():
    # the offsets nearest 0 (the docstring's rule) are the dual optimum of the band problem:
    # an offset is non-zero only on a class at its bound, so the labels maximize the total score
    misses = []
    for seed in range(20):
        scores, _ = _random_problem(seed)
        prior = np.geomspace(1.0, 8.0, scores.shape[1])
        lower, upper = volume_bounds(prior / prior.sum(), scores.shape[0], 0.25)
        result = volume_threshold(scores, lower, upper, slack=0)
        total = scores[np.arange(scores.shape[0]), result.labels].sum()
        if total < _best_total_within(scores, lower, upper) - 1e-9:
            misses.append(seed)
    assert misses == []


def test_bounds_that_do_not_bind_keep_the_plain_arg_max():
    scores, _ = _random_problem(3)
    n, n_classes = scores.shape
    plain = np.argmax(scores, axis=1)
    counts = np.bincount(plain, minlength=n_classes)
    for lower, upper in [(counts - 2, counts + 2), (counts, counts), (np.zeros_like(counts), n)]:
        result = volume_threshold(scores, lower, np.broadcast_to(upper, counts.shape), slack=0)
        np.testing.assert_array_equal(result.offsets, 0.0)
        np.testing.assert_array_equal(result.labels, plain)
        # no constraint (bounds 0..n) is the plain arg max without a sweep
        assert result.satisfied and result.n_sweeps == (0 if not np.any(lower) else 1)


def test_a_warm_start_reaches_the_same_counts():
    scores, prior = _random_problem(5)
    n = scores.shape[0]
    counts, _ = volume_bounds(prior, n, 0)
    cold = volume_threshold(scores, counts, counts, slack=0)
    warm = volume_threshold(scores, counts, counts, offsets=cold.offsets, slack=0)
    np.testing.assert_array_equal(warm.counts, counts)
    np.testing.assert_array_equal(warm.labels, cold.labels)
    assert warm.n_sweeps == 1  # already there: one sweep, which finds every offset feasible
    # from the offsets of slightly moved scores (an MBO iteration's warm start)
    moved = scores + 0.05 * np.random.default_rng(0).standard_normal(scores.shape)
    start = volume_threshold(moved, counts, counts, slack=0).offsets
    again = volume_threshold(scores, counts, counts, offsets=start, slack=0)
    np.testing.assert_array_equal(again.counts, counts)
    np.testing.assert_allclose(
        scores[np.arange(n), again.labels].sum(), _best_total_with_counts(scores, counts)
    )
    lower, upper = volume_bounds(prior, n, 0.3)
    band = volume_threshold(scores, lower, upper, offsets=start, slack=0)
    assert np.all((lower <= band.counts) & (band.counts <= upper))
    # the start is not modified
    np.testing.assert_array_equal(start, volume_threshold(moved, counts, counts, slack=0).offsets)


@pytest.mark.parametrize(
    "lower, upper, match",
    [
        ([5, 5, 5], [10, 10, 10], r"lower \[5, 5, 5\] \(sum 15\).*for 12 points"),
        ([0, 0, 0], [3, 3, 3], r"upper \[3, 3, 3\] \(sum 9\) for 12 points"),
        ([0, 6, 0], [12, 5, 12], r"lower \[0, 6, 0\] \(sum 6\) and upper \[12, 5, 12\]"),
    ],
)
def test_infeasible_bounds_are_refused_naming_the_sums(lower, upper, match):
    scores = np.random.default_rng(0).standard_normal((12, 3))
    with pytest.raises(ValueError, match=match):
        volume_threshold(scores, lower, upper)


def test_ties_that_make_the_bounds_unreachable_are_reported():
    # equal scores: no offset splits the rows, so the counts cannot be balanced
    scores = np.zeros((30, 3))
    result = volume_threshold(scores, [10, 10, 10], [10, 10, 10], max_sweeps=7)
    assert not result.satisfied
    assert result.n_sweeps == 7
    assert result.counts.sum() == 30


# ------------------------------------------------------------------------- volume_bounds
@pytest.mark.parametrize("seed", range(20))
def test_exact_bounds_round_by_largest_remainders(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 500))
    prior = rng.dirichlet(np.ones(int(rng.integers(2, 8))))
    lower, upper = volume_bounds(prior, n, 0)
    np.testing.assert_array_equal(lower, upper)
    assert lower.sum() == n
    assert np.all(np.abs(lower - n * prior) < 1)
    np.testing.assert_array_equal(lower, _largest_remainders(prior, n))


@pytest.mark.parametrize("tolerance", [0.05, 0.5, 2.0])
def test_a_tolerance_gives_the_floor_and_ceiling_of_the_band(tolerance):
    rng = np.random.default_rng(1)
    for n in (7, 100, 1234):
        prior = rng.dirichlet(np.ones(4))
        lower, upper = volume_bounds(prior, n, tolerance)
        for c, b in enumerate(prior):
            assert lower[c] == math.floor(n * b / (1 + tolerance))
            assert upper[c] == min(math.ceil(n * b * (1 + tolerance)), n)
        assert lower.sum() <= n <= upper.sum()  # always feasible


def test_an_infinite_tolerance_gives_zero_to_n():
    lower, upper = volume_bounds([0.7, 0.2, 0.1], 50, np.inf)
    np.testing.assert_array_equal(lower, 0)
    np.testing.assert_array_equal(upper, 50)
    assert lower.dtype.kind == upper.dtype.kind == "i"


# --------------------------------------------------------------- diffusion: Poisson learning
def test_a_heat_step_averages_below_the_largest_time_step():
    L = _connected_graph()
    dt = 1.0 / L.diagonal().max()
    P = heat_step_matrix(L, dt)
    assert sp.isspmatrix_csr(P)
    np.testing.assert_allclose(P.toarray(), np.eye(L.shape[0]) - dt * L.toarray(), atol=1e-15)
    assert P.data.min() >= -1e-15
    np.testing.assert_allclose(np.asarray(P.sum(axis=1)).ravel(), 1.0, atol=1e-12)
    assert heat_step_matrix(L, 2 * dt).data.min() < 0  # beyond it a step no longer averages


def test_the_forced_diffusion_converges_to_poisson_learning():
    L = _connected_graph()
    n, n_classes, mu = L.shape[0], 3, 0.7
    labeled, codes = np.array([0, 5, 11, 17]), np.array([0, 1, 2, 2])
    B = _sources(n, labeled, codes, n_classes)
    dt = 1.0 / L.diagonal().max()
    P = heat_step_matrix(L, dt)
    u = np.eye(n_classes)[np.random.default_rng(0).integers(0, n_classes, n)]
    mass = u.sum(axis=0)
    for _ in range(2500):
        u = P @ u + mu * dt * B
    np.testing.assert_allclose(u.sum(axis=0), mass, rtol=1e-12)  # the plain sum is conserved
    expected = mu * np.linalg.pinv(L.toarray()) @ B  # its columns sum to 0
    np.testing.assert_allclose(u - u.mean(axis=0), expected, atol=1e-9)


def test_one_mbo_iteration_without_thresholding_reduces_to_poisson_learning():
    L = _connected_graph()
    n, n_classes, mu = L.shape[0], 3, 0.7
    labeled, codes = np.array([0, 5, 11, 17]), np.array([0, 1, 2, 2])
    B = _sources(n, labeled, codes, n_classes)
    poisson = np.linalg.pinv(L.toarray()) @ B
    # bounds 0..n never bind: the threshold is the plain arg max
    solution = poisson_mbo(
        L, labeled, codes, poisson, np.zeros(3), np.full(3, n), n_outer=1, n_inner=2500,
        fidelity=mu,
    )  # fmt: skip
    start = np.eye(n_classes)[np.argmax(poisson, axis=1)]
    np.testing.assert_allclose(solution.offsets, 0.0)
    np.testing.assert_allclose(solution.scores, start.mean(axis=0) + mu * poisson, atol=1e-9)
    np.testing.assert_array_equal(solution.labels, np.argmax(solution.scores, axis=1))
    assert solution.n_outer == 1 and solution.time_step == 1.0 / L.diagonal().max()


def test_an_mbo_iteration_is_n_inner_forced_heat_steps_then_the_threshold():
    L = _connected_graph(seed=1)
    n, n_classes = L.shape[0], 3
    labeled, codes = np.array([2, 9, 30]), np.array([0, 1, 2])
    init = np.random.default_rng(2).standard_normal((n, n_classes))
    lower, upper = volume_bounds([0.5, 0.3, 0.2], n, 0)
    dt, mu, steps = 0.05, 2.0, 3
    solution = poisson_mbo(
        L, labeled, codes, init, lower, upper, n_outer=1, n_inner=steps, fidelity=mu,
        time_step=dt,
    )  # fmt: skip
    first = volume_threshold(init, lower, upper)
    u = np.eye(n_classes)[first.labels]
    P = np.eye(n) - dt * L.toarray()
    B = _sources(n, labeled, codes, n_classes)
    for _ in range(steps):
        u = P @ u + mu * dt * B
    expected = volume_threshold(u, lower, upper, offsets=first.offsets)
    np.testing.assert_array_equal(solution.labels, expected.labels)
    np.testing.assert_allclose(solution.scores, u + expected.offsets, atol=1e-12)
    np.testing.assert_array_equal(solution.counts, expected.counts)
    assert solution.satisfied and solution.time_step == dt
    assert solution.changed == [int(np.count_nonzero(expected.labels != first.labels))]


def test_the_iterations_stop_when_no_label_changes():
    L = _connected_graph(seed=2)
    n = L.shape[0]
    labeled, codes = np.array([1, 20, 33]), np.array([0, 1, 2])
    init = np.linalg.pinv(L.toarray()) @ _sources(n, labeled, codes, 3)
    lower, upper = volume_bounds([0.4, 0.35, 0.25], n, 0)
    solution = poisson_mbo(L, labeled, codes, init, lower, upper, n_outer=50, n_inner=10)
    assert 1 <= solution.n_outer < 50
    assert len(solution.changed) == solution.n_outer and solution.changed[-1] == 0
    assert all(moved > 0 for moved in solution.changed[:-1])
    assert np.abs(solution.counts - lower).max() <= 1 and solution.satisfied
    np.testing.assert_array_equal(np.bincount(solution.labels, minlength=3), solution.counts)
    np.testing.assert_array_equal(solution.labels, np.argmax(solution.scores, axis=1))
    none = poisson_mbo(L, labeled, codes, init, lower, upper, n_outer=0)
    assert none.n_outer == 0 and none.changed == []
    np.testing.assert_array_equal(none.labels, volume_threshold(init, lower, upper).labels)


def test_each_component_diffuses_towards_its_own_poisson_solution():
    # two components whose labels are not in the same proportions: Poisson learning solves
    # each with its own sources y_j − ȳ_component (poisson_learning), so one MBO iteration
    # without thresholding must reduce to that on each; sources centred over all the labels
    # add a net mass to each component that grows with the number of steps
    first, second = _connected_graph(seed=0), _connected_graph(seed=3)
    L = sp.block_diag([first, second]).tocsr()
    n, n_first, mu = L.shape[0], first.shape[0], 1.0
    labeled = np.array([0, 5, 11, 40, 45, 50, 55, 60])
    codes = np.array([0, 1, 2, 0, 0, 0, 1, 2])
    pinv = np.linalg.pinv(L.toarray())  # block-diagonal, each block its component's
    sources = np.vstack(
        [
            _sources(n_first, labeled[:3], codes[:3], 3),
            _sources(n - n_first, labeled[3:] - n_first, codes[3:], 3),
        ]
    )
    poisson = pinv @ sources
    solution = poisson_mbo(
        L, labeled, codes, poisson, np.zeros(3), np.full(3, n), n_outer=1, n_inner=2500,
        fidelity=mu, components=np.repeat([0, 1], [n_first, n - n_first]),
    )  # fmt: skip
    start = np.eye(3)[np.argmax(poisson, axis=1)]
    for rows in (slice(0, n_first), slice(n_first, n)):
        expected = start[rows].mean(axis=0) + mu * poisson[rows]
        np.testing.assert_allclose(solution.scores[rows], expected, atol=1e-8)
