"""Issue 26's fast paths of approximate CV, each against the slow path it replaces.

- the fit's kept LU (``keeping_factor``) reused by the exact influence step (Woodbury on the
  rows whose curvature a fold changes) against a dense LU per Hessian;
- ``hessian="auto"`` and what it resolves to;
- ``K(X, X)`` reused across grid points sharing a kernel (``reusing_kernel_matrices``), in the
  BIF search and the exact search, against searches that recompute it;
- the Cholesky solve of the Nyström Hessians against the LU / least-squares solve.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import semiscale.model_selection._evaluate as evaluate_module
import semiscale.model_selection.bif as bif
import semiscale.model_selection.bif_search as bif_search_module
import semiscale.solvers.exact as exact_module
from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.model_selection import (
    BIFSearchCV,
    SSLGridSearchCV,
    SSLKFold,
    bif_cross_val_predict,
)
from semiscale.models import LapRLSClassifier, LapRLSRegressor, LapSVC, NystromLapRLSRegressor
from semiscale.solvers.dense import solve_or_lstsq
from semiscale.solvers.exact import keeping_factor
from semiscale.solvers.influence import _spd_solve


def _data(n=240, seed=0, labeled=0.25):
    X, y = make_two_moons(n, noise=0.1, random_state=seed)
    rng = np.random.default_rng(seed)
    lab = rng.random(n) < labeled
    y_reg = np.where(lab, y + 0.1 * rng.standard_normal(n), np.nan)
    y_clf = np.where(lab, y, -1)
    return X, y_reg, y_clf


def _graph():
    return KNNGraph(n_neighbors=8)


ESTIMATORS = {
    "regressor": lambda: LapRLSRegressor(kernel=RBF(gamma=2.0), graph=_graph()),
    # the classifiers predict inductive folds' new points by the kernel expansion, the model
    # approximate CV expands (out_of_sample="graph" is refused there)
    "classifier": lambda: LapRLSClassifier(
        kernel=RBF(gamma=2.0), graph=_graph(), intrinsic_reg=1.0, out_of_sample="kernel"
    ),
    "classifier, intercept": lambda: LapRLSClassifier(
        kernel=RBF(gamma=2.0),
        graph=_graph(),
        intrinsic_reg=1.0,
        fit_intercept=True,
        out_of_sample="kernel",
    ),
    "huber LapSVC": lambda: LapSVC(
        formulation="primal",
        loss="huber_hinge",
        kernel=RBF(gamma=2.0),
        graph=_graph(),
        out_of_sample="kernel",
        intrinsic_reg=1.0,
    ),
}


def _without_factor(monkeypatch):
    """Make approximate CV forget the fit's LU: the dense LU per Hessian (the slow path)."""
    original = bif.fit_keeping_state

    def forgetting(*args, **kwargs):
        est, state, _ = original(*args, **kwargs)
        return est, state, None

    monkeypatch.setattr(bif, "fit_keeping_state", forgetting)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("transductive", [True, False])
@pytest.mark.parametrize("step", ["bif", "newton"])
def test_kept_factor_gives_the_dense_exact_step(monkeypatch, name, transductive, step):
    X, y_reg, y_clf = _data()
    y = y_reg if name == "regressor" else y_clf
    est = ESTIMATORS[name]()
    cv = SSLKFold(4, transductive=transductive, random_state=0)
    kw = {"cv": cv, "hessian": "exact", "step": step, "method": "decision_function"}
    fast = bif_cross_val_predict(est, X, y, **kw)
    with monkeypatch.context() as m:
        _without_factor(m)
        slow = bif_cross_val_predict(est, X, y, **kw)
    tested = ~np.isnan(slow)
    assert np.array_equal(tested, ~np.isnan(fast))
    scale = np.abs(slow[tested]).max()
    np.testing.assert_allclose(fast[tested], slow[tested], rtol=0, atol=1e-8 * scale)


def test_the_factor_serves_the_squared_loss_newton_step_on_transductive_folds(monkeypatch):
    """The Woodbury path is taken (no dense LU of an n × n Hessian) where the fit's LU covers
    every fold, and the dense LU where inductive folds change the graph."""
    X, y_reg, _ = _data()
    est = ESTIMATORS["regressor"]()
    sizes = []
    original = bif.exact_fold_out.__globals__["solve_or_lstsq"]

    def recording(A, B, **kwargs):
        sizes.append(A.shape[0])
        return original(A, B, **kwargs)

    import semiscale.solvers.influence as influence

    monkeypatch.setattr(influence, "solve_or_lstsq", recording)
    for transductive, dense in ((True, False), (False, True)):
        sizes.clear()
        cv = SSLKFold(4, transductive=transductive, random_state=0)
        bif_cross_val_predict(est, X, y_reg, cv=cv, hessian="exact", step="newton")
        assert (max(sizes, default=0) >= X.shape[0]) == dense


def test_keeping_the_factor_leaves_the_fit_unchanged():
    X, y_reg, _ = _data()
    plain = ESTIMATORS["regressor"]().fit(X, y_reg)
    with keeping_factor() as kept:
        kept_fit = ESTIMATORS["regressor"]().fit(X, y_reg)
    assert len(kept) == 1 and kept[0].K.shape == (X.shape[0], X.shape[0])
    np.testing.assert_array_equal(kept_fit.dual_coef_, plain.dual_coef_)
    with keeping_factor() as outer:
        pass
    ESTIMATORS["regressor"]().fit(X, y_reg)  # outside the context: nothing kept
    assert outer == []


def test_keeping_the_factor_respects_the_memory_budget():
    """A third n × n array over the budget: the fit runs as before and keeps nothing."""
    X, y_reg, _ = _data()
    n = X.shape[0]
    est = ESTIMATORS["regressor"]().set_params(memory_budget=2 * n * n * 8 + 1000)
    with keeping_factor() as kept:
        est.fit(X, y_reg)
    assert kept == []


@pytest.mark.parametrize("transductive", [True, False])
def test_auto_hessian_resolution(monkeypatch, transductive):
    X, y_reg, _ = _data()
    cv = SSLKFold(4, transductive=transductive, random_state=0)
    seen = []
    original = bif.resolve_hessian

    def recording(*args):
        seen.append(original(*args))
        return seen[-1]

    monkeypatch.setattr(bif, "resolve_hessian", recording)
    est = ESTIMATORS["regressor"]()
    bif_cross_val_predict(est, X, y_reg, cv=cv)  # 240 points: exact either way
    assert seen.pop() == "exact"
    monkeypatch.setattr(bif, "AUTO_EXACT_PER_FOLD", 100)
    # above the per-fold size: the Woodbury rows (60 labeled of 240 > 240 / 12) too dear ...
    bif_cross_val_predict(est, X, y_reg, cv=cv)
    assert seen.pop() == "nystrom"
    # ... none for paper 004's step on the squared loss
    bif_cross_val_predict(est, X, y_reg, cv=cv, step="bif")
    assert seen.pop() == "exact"
    monkeypatch.setattr(bif, "AUTO_WOODBURY_SHARE", 4)  # 4 · 60 <= 240: affordable
    bif_cross_val_predict(est, X, y_reg, cv=cv)
    # then exact only where the fit's LU serves every fold
    assert seen.pop() == ("exact" if transductive else "nystrom")
    monkeypatch.setattr(bif, "AUTO_EXACT_SHARED", 200)
    bif_cross_val_predict(est, X, y_reg, cv=cv)
    assert seen.pop() == "nystrom"
    nystrom = NystromLapRLSRegressor(kernel=RBF(gamma=2.0), graph=_graph(), n_centers=40)
    bif_cross_val_predict(nystrom, X, y_reg, cv=cv)
    assert seen.pop() == "nystrom"


def test_default_bif_search_equals_the_exact_search_for_transductive_laprls():
    """BIFSearchCV()'s default on exact LapRLS with transductive folds is exact CV: the Newton
    step of the squared loss with the exact Hessian (by the fit's LU).  With the former
    default (the Nyström Hessian) the mean scores differed here (0.82701 and 0.85906 against
    exact CV's 0.82657 and 0.85826 at two of the six points) and on housing so did the choice
    (``benchmarks/results/bif_newton/``)."""
    X, y_reg, _ = _data(200)
    est = LapRLSRegressor(kernel=RBF(gamma=1.0), graph=_graph())
    grid = {"kernel__gamma": [0.5, 2.0], "intrinsic_reg": [0.1, 1.0, 10.0]}
    cv = SSLKFold(4, random_state=0)
    fast = BIFSearchCV(est, grid, cv=cv, refit=False).fit(X, y_reg)
    exact = BIFSearchCV(est, grid, cv=cv, method="exact", refit=False).fit(X, y_reg)
    np.testing.assert_allclose(
        fast.cv_results_["split0_test_score"],
        exact.cv_results_["split0_test_score"],
        rtol=1e-9,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        fast.cv_results_["mean_test_score"], exact.cv_results_["mean_test_score"], rtol=1e-9
    )
    assert fast.best_params_ == exact.best_params_


def _no_reuse(monkeypatch):
    for module in (evaluate_module, bif_search_module):
        monkeypatch.setattr(module, "reusing_kernel_matrices", contextlib.nullcontext)


def _count_kernel_matrices(monkeypatch):
    calls = []
    original = exact_module.kernel_matrix

    def counting(*args, **kwargs):
        calls.append(args[1].shape[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(exact_module, "kernel_matrix", counting)
    return calls


def _estimator_and_targets(loss):
    """160 points of ``_data``, and LapRLS regression (squared loss) or a Huber LapSVC."""
    X, y_reg, y_clf = _data(160)
    if loss == "squared":
        return X, LapRLSRegressor(kernel=RBF(gamma=1.0), graph=_graph()), y_reg
    lapsvc = LapSVC(
        formulation="primal",
        loss="huber_hinge",
        kernel=RBF(gamma=1.0),
        graph=_graph(),
        out_of_sample="kernel",
    )
    return X, lapsvc, y_clf


@pytest.mark.parametrize("method", ["exact", "bif"])
@pytest.mark.parametrize("transductive", [True, False])
@pytest.mark.parametrize("loss", ["squared", "huber_hinge"])
def test_kernel_reuse_across_grid_points_changes_no_score(monkeypatch, method, transductive, loss):
    X, est, y = _estimator_and_targets(loss)
    grid = {"kernel__gamma": [0.5, 2.0], "intrinsic_reg": [0.1, 10.0], "ambient_reg": [1e-4, 1e-2]}
    cv = SSLKFold(3, transductive=transductive, random_state=0)
    calls = _count_kernel_matrices(monkeypatch)
    search = BIFSearchCV(est, grid, cv=cv, method=method, refit=False, random_state=0)
    reused = search.fit(X, y).cv_results_
    n_reused = len(calls)
    with monkeypatch.context() as m:
        _no_reuse(m)
        calls.clear()
        recomputed = BIFSearchCV(est, grid, cv=cv, method=method, refit=False, random_state=0)
        recomputed = recomputed.fit(X, y).cv_results_
    n_recomputed = len(calls)
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(reused[key], recomputed[key])
    # one K(X, X) per training set and kernel width, not per grid point
    fits = 8 * (1 if method == "bif" else 3)
    assert n_recomputed == fits
    assert n_reused == fits // 4


def test_exact_search_reuses_kernels_with_a_given_laplacian(monkeypatch):
    X, y_reg, _ = _data(150)
    L = _graph().fit(X).laplacian_
    est = LapRLSRegressor(kernel=RBF(gamma=1.0))
    grid = {"intrinsic_reg": [0.1, 1.0, 10.0]}
    cv = SSLKFold(3, transductive=False, random_state=0)
    calls = _count_kernel_matrices(monkeypatch)
    reused = SSLGridSearchCV(est, grid, cv=cv, refit=False).fit(X, y_reg, laplacian=L)
    assert len(calls) == 3  # one per fold, shared by the three intrinsic_reg values
    with monkeypatch.context() as m:
        _no_reuse(m)
        again = SSLGridSearchCV(est, grid, cv=cv, refit=False).fit(X, y_reg, laplacian=L)
    np.testing.assert_array_equal(
        reused.cv_results_["mean_test_score"], again.cv_results_["mean_test_score"]
    )


def test_spd_solve_matches_the_lu_solve_and_falls_back_when_singular():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((30, 30))
    H = B @ B.T + 30 * np.eye(30)
    rhs = rng.standard_normal((30, 3))
    np.testing.assert_allclose(_spd_solve(H, rhs, "H"), solve_or_lstsq(H, rhs), rtol=1e-10)
    low_rank = B[:, :5] @ B[:, :5].T  # PSD of rank 5: no Cholesky, least squares
    rhs = low_rank @ rng.standard_normal((30, 2))
    with pytest.warns(RuntimeWarning, match="least-squares"):
        x = _spd_solve(low_rank, rhs, "H")
    np.testing.assert_allclose(low_rank @ x, rhs, atol=1e-8 * np.abs(rhs).max())


@pytest.mark.parametrize("loss", ["squared", "huber_hinge"])
def test_nystrom_step_blocks_shared_across_grid_points_change_no_score(monkeypatch, loss):
    """Inductive folds with the Nyström Hessian: the column blocks (per kernel), their
    Laplacian products and the folds' subgraphs (per search) are computed once, not per grid
    point, and the scores are those of a search that recomputes them."""
    import semiscale.model_selection._fold_objectives as fold_objectives
    import semiscale.solvers.influence as influence

    X, est, y = _estimator_and_targets(loss)
    grid = {"kernel__gamma": [0.5, 2.0], "intrinsic_reg": [0.1, 1.0, 10.0]}
    cv = SSLKFold(3, transductive=False, random_state=0)
    counts = {"blocks": 0, "subgraphs": 0}
    blocks, embedded = influence._compute_column_blocks, fold_objectives._embedded

    def counting_blocks(*args):
        counts["blocks"] += 1
        return blocks(*args)

    def counting_subgraphs(*args):
        counts["subgraphs"] += 1
        return embedded(*args)

    monkeypatch.setattr(influence, "_compute_column_blocks", counting_blocks)
    monkeypatch.setattr(fold_objectives, "_embedded", counting_subgraphs)

    def search():
        return BIFSearchCV(est, grid, cv=cv, hessian="nystrom", refit=False, random_state=0).fit(
            X, y
        )

    shared = search().cv_results_
    assert counts == {"blocks": 2, "subgraphs": 3}  # per kernel width; per fold
    counts.update(blocks=0, subgraphs=0)
    with monkeypatch.context() as m:
        m.setattr(bif_search_module, "reusing_step_blocks", contextlib.nullcontext)
        recomputed = search().cv_results_
    assert counts == {"blocks": 6, "subgraphs": 18}  # per grid point; per point and fold
    for key in ("mean_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_array_equal(shared[key], recomputed[key])


@pytest.mark.parametrize("normalized", [False, True])
def test_fold_graph_gram_by_the_rows_it_changes_equals_the_direct_product(normalized):
    """CᵀL_iC as CᵀLC minus the rows where the fold's subgraph differs, against CᵀL_iC."""
    import semiscale.model_selection._fold_objectives as fold_objectives
    import semiscale.solvers.influence as influence

    X, y_reg, _ = _data(300)
    graph = KNNGraph(n_neighbors=6, normalized=normalized).fit(X)
    est = LapRLSRegressor(kernel=RBF(gamma=1.0), graph=graph)
    est, state, _ = bif.fit_keeping_state(est, X, y_reg, keep_factor=False)
    cv = SSLKFold(20, transductive=False, random_state=0)
    folds = list(cv.split_ssl(X, y_reg, unlabeled=np.nan))
    built = fold_objectives.build_folds(est, state, X, y_reg, folds, np.nan)
    columns = X[::7]
    C, _, _ = influence._column_blocks(state.problem, columns)
    local, used = {}, 0
    for fold in built:
        direct = C.T @ (fold.laplacian @ C)
        E = (state.problem.laplacian - fold.laplacian).tocsr()
        E.eliminate_zeros()
        used += 2 * np.count_nonzero(np.diff(E.indptr)) < X.shape[0]
        by_rows = influence._graph_gram(state.problem, columns, C, fold.laplacian, local)
        np.testing.assert_allclose(by_rows, direct, rtol=0, atol=1e-10 * np.abs(direct).max())
    assert used > 0  # the row path was taken


def test_kernels_that_learn_from_the_data_are_not_reused():
    """A kernel overriding Kernel.fit (paper 002's kind reads the labels and the graph) has
    more than its parameters in its matrix: no reuse between grid points."""
    from semiscale.solvers.exact import _kernel_key

    class Learning(RBF):
        def fit(self, X, y=None, *, laplacian=None, random_state=None):
            return super().fit(X, y, laplacian=laplacian, random_state=random_state)

    assert _kernel_key(RBF(gamma=1.0)) is not None
    assert _kernel_key(Learning(gamma=1.0)) is None
