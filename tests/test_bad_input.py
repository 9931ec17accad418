"""Bad input found by trying semiscale as a new user (issue 11, part 6): each case a clear error.

Each test here failed before its fix.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from semiscale._memory import MemoryBudgetError, block_rows, parse_memory_budget
from semiscale._validation import check_laplacian


# ------------------------------------------------------------------ memory budgets
@pytest.mark.parametrize(
    "budget,expected",
    [
        ("512MiB", 512 * 1024**2),
        ("512 MiB", 512 * 1024**2),
        ("1KiB", 1024),
        ("2GiB", 2 * 1024**3),
        ("1TiB", 1024**4),
        ("512 MB", 512 * 1024**2),
        ("2gb", 2 * 1024**3),
        ("2gib", 2 * 1024**3),
        ("80 mb", 80 * 1024**2),
        ("1.5 GiB", int(1.5 * 1024**3)),
    ],
)
def test_memory_budget_iec_units(budget, expected):
    assert parse_memory_budget(budget) == expected


@pytest.mark.parametrize("bad", ["512MiBs", "5 XB", "GiB", "1e3 PB"])
def test_memory_budget_bad_unit_names_the_units(bad):
    with pytest.raises(ValueError, match="KiB.*MiB.*GiB"):
        parse_memory_budget(bad)


def test_memory_budget_refusal_names_the_given_budget():
    # the budget left after a fixed reservation used to be printed ("memory_budget=1 B")
    with pytest.raises(MemoryBudgetError) as info:
        block_rows(1000, 4096, "80MB", reserved=100 * 1024**2, what="preconditioner chunk")
    message = str(info.value)
    assert "memory_budget=80.0 MiB" in message
    assert "1 B" not in message
    assert "100.0 MiB" in message  # what was reserved
    assert str(100 * 1024**2 + 4096) in message  # what is needed in all


def test_memory_budget_reserved_rows():
    # the rows are what fits after the reservation
    assert block_rows(1000, 100, 10_000, reserved=5_000) == 50
    assert block_rows(1000, 100, 10_000) == 100


# ------------------------------------------------------------------ user Laplacians
def _moons_graph(n=300):
    from sklearn.datasets import make_moons

    from semiscale.graph import KNNGraph

    X, labels = make_moons(n, noise=0.1, random_state=0)
    return X, labels, KNNGraph(n_neighbors=10).fit(X).adjacency_.tocsr()


def _negative_weights(W, fraction=0.1, seed=1):
    """``D - W`` of a graph whose weights have a fraction flipped negative (not PSD)."""
    W = sp.triu(W, k=1).tocoo()
    flip = np.random.default_rng(seed).random(W.nnz) < fraction
    data = np.where(flip, -W.data, W.data)
    upper = sp.coo_matrix((data, (W.row, W.col)), shape=W.shape)
    Wn = (upper + upper.T).tocsr()
    return (sp.diags(np.asarray(Wn.sum(axis=1)).ravel()) - Wn).tocsr()


def _ssl_labels(labels):
    y = np.full(labels.shape[0], -1)
    for c in (0, 1):
        y[np.flatnonzero(labels == c)[:2]] = c
    return y


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"normalized": True},
        {"ridge": 0.1},
        {"power": 2},
        {"normalized": True, "power": 3},
        {"normalized": True, "ridge": 1e-3},
    ],
)
def test_valid_laplacians_are_accepted(options):
    from semiscale.graph import laplacian

    _, _, W = _moons_graph()
    L = laplacian(W, **options)
    assert check_laplacian(L, W.shape[0]).shape == W.shape
    assert check_laplacian(3.0 * L, W.shape[0]).shape == W.shape  # any positive scale


def test_adjacency_instead_of_laplacian_is_named():
    from semiscale.models import LapRLSClassifier

    X, labels, W = _moons_graph()
    with pytest.raises(ValueError, match=r"adjacency/weight matrix W.*laplacian\(W\)"):
        LapRLSClassifier().fit(X, _ssl_labels(labels), laplacian=W)
    with pytest.raises(ValueError, match="PrecomputedGraph"):
        check_laplacian(W.toarray(), W.shape[0])


@pytest.mark.parametrize("fraction,shift", [(0.1, 0.0), (0.3, 0.0), (0.1, 1.0)])
def test_negative_weights_laplacian_is_refused(fraction, shift):
    # shift=1: the diagonal is positive, the negative direction is found by the PSD search
    # (a few negative weights can leave D - W PSD, like a power L^p: that is accepted)
    from semiscale.models import LapRLSClassifier

    X, labels, W = _moons_graph()
    L = _negative_weights(W, fraction) + shift * sp.eye(W.shape[0], format="csr")
    assert L.diagonal().min() > 0 or shift == 0
    with pytest.raises(ValueError, match="not positive semi-definite.*negative weights"):
        LapRLSClassifier().fit(X, _ssl_labels(labels), laplacian=L)


def test_negative_diagonal_laplacian_is_refused():
    from semiscale.graph import laplacian

    _, _, W = _moons_graph()
    with pytest.raises(ValueError, match="not positive semi-definite.*negative diagonal.*W - D"):
        check_laplacian(-laplacian(W), W.shape[0])


def test_diagonal_smaller_than_degrees_is_refused():
    _, _, W = _moons_graph()
    L = (sp.diags(0.3 * np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()
    with pytest.raises(ValueError, match="not positive semi-definite.*row sums"):
        check_laplacian(L, W.shape[0])


# ------------------------------------------------------------------ shift and overflow
@pytest.mark.parametrize("offset", [1e4, 1e8, -3e7])
def test_distances_are_shift_stable(offset):
    from semiscale.kernels import RBF, squared_distances

    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((300, 5)), rng.standard_normal((40, 5))
    kernel = RBF(gamma=0.5)
    for args in ((A,), (A, B)):
        shifted = tuple(M + offset for M in args)
        # the shifted inputs are themselves rounded (ulp(1e8) = 1.5e-8): errors of that order
        # are the data's; the raw expansion was off by up to 1.0
        np.testing.assert_allclose(kernel(*shifted), kernel(*args), rtol=0, atol=1e-6)
        np.testing.assert_allclose(
            squared_distances(*shifted), squared_distances(*args), rtol=0, atol=1e-5
        )
    # the median heuristic sees the same distances
    resolved = RBF(gamma="median").resolve(A + offset, random_state=0).gamma
    assert resolved == pytest.approx(RBF(gamma="median").resolve(A, random_state=0).gamma)


def test_shifted_data_fits_the_same_model():
    from semiscale.models import LapRLSClassifier

    X, labels, _ = _moons_graph()
    y = _ssl_labels(labels)
    params = {"kernel__gamma": 2.0, "graph__n_neighbors": 10}
    plain = LapRLSClassifier().set_params(**params).fit(X, y)
    shifted = LapRLSClassifier().set_params(**params).fit(X + 1e8, y)
    np.testing.assert_allclose(
        shifted.decision_function(X + 1e8), plain.decision_function(X), atol=1e-5
    )


@pytest.mark.parametrize("scale", [1e200, -1e160])
def test_overflowing_values_are_reported_as_overflow(scale):
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSClassifier

    X, labels, _ = _moons_graph()
    with pytest.raises(ValueError, match=r"X has values too large.*rescale") as info:
        LapRLSClassifier().fit(X * scale, _ssl_labels(labels))
    assert "duplicated" not in str(info.value)
    with pytest.raises(ValueError, match="too large"):
        RBF(gamma=1.0)(X * scale)


# ------------------------------------------------------------------ label pitfalls
def test_string_marker_among_mixed_labels_is_refused():
    from semiscale._validation import check_classification_targets

    y = [0, 1, "-1", -1, -1]  # numpy turns every entry into a string: "-1" would be a class
    with pytest.raises(ValueError, match=r"mixes numbers and strings.*'-1'"):
        check_classification_targets(y, 5)
    # strings throughout, with a string marker, are fine; so are numbers with a string marker
    targets = check_classification_targets(["a", "b", "?", "?"], 4, unlabeled="?")
    assert list(targets.classes) == ["a", "b"]
    y = np.array([0, 1, "unlabeled", "unlabeled"], dtype=object)
    targets = check_classification_targets(y, 4, unlabeled="unlabeled")
    assert list(targets.classes) == [0, 1] and targets.n_labeled == 2


def test_fully_labeled_plus_minus_one_gets_the_marker_hint():
    from semiscale._validation import check_classification_targets

    y = np.array([-1, 1, 1, -1, 1])
    with pytest.raises(ValueError, match=r"only one class.*-1 marks unlabeled.*unlabeled="):
        check_classification_targets(y, 5)


def test_unlabeled_none_means_every_point_is_labeled():
    from semiscale._validation import check_classification_targets

    targets = check_classification_targets(np.array([-1, 1, 1, -1]), 4, unlabeled=None)
    assert list(targets.classes) == [-1, 1] and targets.n_labeled == 4


def test_nystrom_budget_refusal_names_the_given_budget():
    # Two call sites passed max(budget - reserved, 1): the refusal said "memory_budget=1 B".
    from semiscale.models import NystromLapRLSRegressor

    rng = np.random.RandomState(0)
    X = rng.uniform(size=(5000, 5))
    y = np.full(5000, np.nan)
    y[:100] = X[:100, 0]
    model = NystromLapRLSRegressor(n_centers=2000, memory_budget="80MB", random_state=0)
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=80\.0 MiB .*fixed buffers"):
        model.fit(X, y)


def test_estimators_refuse_a_list_mixing_numbers_and_strings():
    # np.asarray turned [0, 'a', -1, 1] into strings before the mixed-label check saw it
    from semiscale.models import LapRLSClassifier, PoissonClassifier

    X = np.random.default_rng(0).random((20, 2))
    for model in (LapRLSClassifier(intrinsic_reg=0), PoissonClassifier()):
        with pytest.raises(ValueError, match="mixes numbers and strings"):
            model.fit(X, [0, "a", -1, 1] * 5)


# ------------------------------------------------------------------ issue 26 (outside attack)
def _moons_with_labels(n=300, per_class=3):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.05, random_state=0)
    observed = np.full(n, -1)
    for c in (0, 1):
        observed[np.flatnonzero(y == c)[:per_class]] = c
    return X, y, observed


def test_precomputed_graph_refuses_an_asymmetric_matrix():
    # Before: a one-sided kNN table fitted without a word (accuracy 1.00 -> 0.93-0.95), while
    # the same matrix as laplacian= was refused.
    from sklearn.neighbors import kneighbors_graph

    from semiscale.graph import PrecomputedGraph
    from semiscale.models import HarmonicClassifier

    X, _, observed = _moons_with_labels()
    W = kneighbors_graph(X, 8, mode="connectivity")
    assert abs(W - W.T).max() > 0
    with pytest.raises(ValueError, match=r"matrix is not symmetric.*\(W \+ W\.T\) / 2"):
        HarmonicClassifier(graph=PrecomputedGraph(W, X)).fit(X, observed)
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    with pytest.raises(ValueError, match="not symmetric"):
        PrecomputedGraph(L, X, kind="laplacian").fit(X)
    # symmetrized as the message says, it fits
    HarmonicClassifier(graph=PrecomputedGraph((W + W.T) / 2, X)).fit(X, observed)


def test_underflowing_bandwidth_is_named():
    # Before: "raise n_neighbors", then "zero trace (no edges)"; the cause, every heat weight
    # exp(-d²/(2σ²)) underflowing to 0, was never named.
    from semiscale.graph import KNNGraph
    from semiscale.models import HarmonicClassifier

    X, _, observed = _moons_with_labels()
    with pytest.raises(ValueError, match=r"bandwidth=1e-06 is too small.*underflows to 0.*"):
        HarmonicClassifier(graph=KNNGraph(bandwidth=1e-6)).fit(X, observed)
    with pytest.raises(ValueError, match=r"median is .*bandwidth='contrast'"):
        KNNGraph(bandwidth=1e-6).fit(X)
    with pytest.warns(UserWarning, match=r"kNN edge weights .* underflow to 0"):
        KNNGraph(bandwidth=0.005).fit(X)


class _RecordingGraph:
    """A graph that records whether it was fitted (it must not be, when the fit is refused)."""

    def __init__(self):
        self.fitted = False

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y=None):
        self.fitted = True
        raise AssertionError("the graph was built before the budget was checked")


@pytest.mark.parametrize("name", ["NystromLapRLSClassifier", "NystromLapSVC"])
@pytest.mark.parametrize("n_centers", ["auto", 500])
def test_nystrom_impossible_budget_is_refused_before_the_graph(name, n_centers):
    # Before: refused only after the kNN graph (22 s on 50,000 x 50 points).
    import semiscale.models

    X = np.random.default_rng(0).standard_normal((5000, 5))
    y = np.full(5000, -1)
    y[:4] = [0, 1, 0, 1]
    graph = _RecordingGraph()
    model = getattr(semiscale.models, name)(graph=graph, n_centers=n_centers)
    with pytest.raises(MemoryBudgetError, match=r"memory_budget=50.0 KiB is too small for the Nys"):
        model.set_params(memory_budget="50KiB").fit(X, y)
    assert not graph.fitted


@pytest.mark.parametrize("solver", ["cg", "pcg"])
def test_exact_laprls_cg_budget_refusal_says_what_exact_laprls_needs(solver):
    # Before: refused with "use fewer centers", which exact LapRLS does not have, after the
    # graph; its docs said K was recomputed in blocks when it did not fit (only RLS does).
    from semiscale.linalg import FullLapRLSHessian
    from semiscale.models import LapRLSClassifier

    X = np.random.default_rng(0).standard_normal((1500, 5))
    y = np.full(1500, -1)
    y[:4] = [0, 1, 0, 1]
    graph = _RecordingGraph()
    model = LapRLSClassifier(graph=graph, solver=solver, memory_budget="5MB")
    with pytest.raises(
        MemoryBudgetError, match=r"holds the n x n kernel matrix.*NystromLapRLS"
    ) as info:
        model.fit(X, y)
    assert "centers" not in str(info.value)
    # the operator's own refusal (a budget that holds K but not the rest), reworded as well
    L = sp.eye(1500, format="csr")
    from semiscale.kernels import RBF

    with pytest.raises(MemoryBudgetError, match=r"exact LapRLS by CG/PCG on n=1500") as info:
        FullLapRLSHessian(RBF(gamma=1.0), X, np.arange(4), L, 1e-3, 1.0, memory_budget=1500**2 * 8)
    assert "fewer centers" not in str(info.value)
    assert "NystromLapRLSClassifier or NystromLapRLSRegressor (s < n centers)" in str(info.value)
