import numpy as np
import pytest
import scipy.sparse as sp

from semiscale._memory import MemoryBudgetError, block_rows, parse_memory_budget, row_slices
from semiscale._validation import (
    check_classification_targets,
    check_laplacian,
    check_regression_targets,
    check_X,
    one_vs_rest_targets,
)
from semiscale.scaling import from_belkin, from_paper000, solver_lambdas, to_belkin, to_paper000


@pytest.mark.parametrize(
    "budget,expected",
    [
        (1024, 1024),
        ("1KB", 1024),
        ("2GB", 2 * 1024**3),
        ("1.5M", int(1.5 * 1024**2)),
        (3e6, 3_000_000),
    ],
)
def test_parse_memory_budget(budget, expected):
    assert parse_memory_budget(budget) == expected


@pytest.mark.parametrize("bad", [0, -5, "lots", "-1GB", True, float("nan")])
def test_parse_memory_budget_rejects(bad):
    with pytest.raises(ValueError, match="memory_budget"):
        parse_memory_budget(bad)


def test_default_budget_positive():
    assert parse_memory_budget(None) > 0


def test_block_rows_and_slices():
    assert block_rows(1000, 100, 1000) == 10
    assert block_rows(5, 100, 10**9) == 5
    with pytest.raises(MemoryBudgetError, match="too small for one row of the kernel block"):
        block_rows(10, 2000, 1000, what="kernel block")
    slices = list(row_slices(10, 4))
    assert [(s.start, s.stop) for s in slices] == [(0, 4), (4, 8), (8, 10)]


def test_check_X():
    assert check_X([[1, 2], [3, 4]]).dtype == np.float64
    assert check_X(np.ones((2, 2), np.float32)).dtype == np.float32
    assert sp.issparse(check_X(sp.coo_matrix(np.eye(3))))
    with pytest.raises(ValueError, match="NaN"):
        check_X([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="2D"):
        check_X([1.0, 2.0])


def test_classification_targets():
    t = check_classification_targets([3, -1, 5, 3, -1], 5)
    assert list(t.classes) == [3, 5]
    assert list(t.codes) == [0, -1, 1, 0, -1]
    assert t.n_labeled == 3
    Y = one_vs_rest_targets(t)
    assert Y.shape == (5, 1)
    assert list(Y[:, 0]) == [-1, 0, 1, -1, 0]
    t3 = check_classification_targets(["a", "b", "c", "?"], 4, unlabeled="?")
    Y3 = one_vs_rest_targets(t3)
    assert Y3.shape == (4, 3)
    np.testing.assert_array_equal(Y3[:3], 2 * np.eye(3) - 1)
    np.testing.assert_array_equal(Y3[3], 0)
    t_nan = check_classification_targets([0.0, 1.0, np.nan], 3, unlabeled=float("nan"))
    assert t_nan.n_labeled == 2


def test_regression_targets():
    y, labeled = check_regression_targets([1.0, np.nan, 2.0], 3)
    assert list(labeled) == [True, False, True]
    with pytest.raises(ValueError, match="only some targets"):
        check_regression_targets([[1.0, np.nan], [1.0, 2.0]], 2)
    with pytest.raises(ValueError, match="numeric"):
        check_regression_targets(["a", "b"], 2)


def test_check_laplacian():
    L = sp.csr_matrix(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    assert check_laplacian(L, 2).shape == (2, 2)
    assert sp.issparse(check_laplacian(L.toarray(), 2))
    with pytest.raises(ValueError, match="symmetric"):
        check_laplacian(sp.csr_matrix(np.array([[1.0, -1.0], [0.0, 0.0]])), 2)
    with pytest.raises(ValueError, match="NaN"):
        check_laplacian(sp.csr_matrix(np.array([[np.nan, 0.0], [0.0, 0.0]])), 2)


def test_scaling_round_trips():
    l, trace, n = 20, 350.0, 500
    lam_a, lam_i = solver_lambdas(1e-3, 4.0, l, trace)
    assert lam_a == pytest.approx(0.02)
    assert lam_i == pytest.approx(20 * 4.0 / 350.0)
    assert from_paper000(*to_paper000(1e-3, 4.0, l, trace), l, trace) == pytest.approx((1e-3, 4.0))
    assert from_belkin(*to_belkin(1e-3, 4.0, n, trace), n, trace) == pytest.approx((1e-3, 4.0))
    with pytest.raises(ValueError, match="zero trace"):
        solver_lambdas(1e-3, 1.0, l, 0.0)
    with pytest.raises(ValueError, match="ambient_reg"):
        solver_lambdas(-1.0, 1.0, l, trace)


def test_an_impossible_direct_fit_is_refused_before_its_graph_is_built(monkeypatch):
    # At a million points the graph alone took 10 s before the solve refused the budget.
    from semiscale._memory import MemoryBudgetError
    from semiscale.graph import KNNGraph
    from semiscale.models import LapRLSClassifier

    def no_graph(self, X):
        raise AssertionError("the graph was built before the budget check")

    monkeypatch.setattr(KNNGraph, "fit", no_graph)
    X = np.random.default_rng(0).random((400, 2))
    y = np.where(np.arange(400) < 10, np.arange(400) % 2, -1)
    with pytest.raises(MemoryBudgetError, match="solver='direct'"):
        LapRLSClassifier(memory_budget="1MiB").fit(X, y)
