"""The fold-out objectives of approximate CV: each fold's labels, targets, weights and graph.

Leaving fold i out changes the objective a manifold regularizer minimises: the fold's labeled
points lose their loss term (transductive folds) or, for inductive folds, its points leave the
graph (the subgraph induced on the training points); the loss weights, the ``"auto"``
``intrinsic_reg`` and the class targets become those of the remaining labels.  This module
builds that description per fold (:class:`_Fold`) for :mod:`semiscale.model_selection.bif`,
and refuses, before any fit, folds it cannot be built on (:func:`check_folds`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier

from .._validation import check_classification_targets
from ..models._contract import fit_contract
from ..solvers.exact import check_dense_fits
from ..solvers.influence import shared_fold_laplacian
from ._markers import hide_labels, labeled_mask

__all__ = ["build_folds", "check_folds"]


@dataclass
class _Fold:
    """One fold as the fold-out objective sees it (all arrays over the n training rows)."""

    test_rows: np.ndarray
    fit_rows: np.ndarray  # rows in the fold-out fit's graph and span
    labeled: np.ndarray  # (n,) bool: labeled rows the fold-out fit keeps
    targets: np.ndarray  # (n, r)
    codes: np.ndarray | None  # class codes (classifiers)
    laplacian: object  # (n, n) sparse or None
    lambda_intrinsic: float  # in the full fit's scaling (λ_A unchanged)
    weight: float  # loss weight l / l_i


def _embedded(L_sub, rows, n):
    """An (n, n) Laplacian equal to ``L_sub`` on ``rows`` and zero elsewhere."""
    coo = sp.coo_matrix(L_sub)
    return sp.csr_matrix((coo.data, (rows[coo.row], rows[coo.col])), shape=(n, n))


def _subgraphs(graph, X, given, fitted):
    """A PrecomputedGraph giving the subgraphs the fold-out fits would use.

    The estimator's own graph: the subgraph of its adjacency, normalized, powered and ridged as
    the graph was (``KNNGraph(normalized=True)`` included); a Laplacian given to ``fit``: the
    induced subgraph of ``D - W`` (a normalized given Laplacian cannot be subset).
    """
    from ..graph import PrecomputedGraph

    if given is None and graph is not None and getattr(graph, "adjacency_", None) is not None:
        return PrecomputedGraph(
            graph.adjacency_,
            X,
            kind="adjacency",
            normalized=getattr(graph, "normalized", False),
            power=getattr(graph, "power", 1),
            ridge=getattr(graph, "ridge", 0.0),
        )
    return PrecomputedGraph(fitted, X, kind="laplacian")


def _fold_laplacian(problem, subgraphs, fit_rows, n, source):
    """The fold's Laplacian over n rows: the subgraph induced on ``fit_rows`` of the graph
    ``source`` (the fitted graph's adjacency, or the Laplacian), shared between grid points
    inside a search (:func:`~semiscale.solvers.influence.shared_fold_laplacian`)."""
    if problem.laplacian is None:
        return None
    if fit_rows.size == n:
        return problem.laplacian
    return shared_fold_laplacian(
        source, fit_rows, lambda: _embedded(subgraphs().fit_rows(fit_rows).laplacian_, fit_rows, n)
    )


def _fold_targets(est, rules, y, labeled, fit_rows, n, marker):
    """Target columns and class codes the fold-out fit would use, scattered to n rows."""
    if not is_classifier(est):
        Y = np.asarray(y, dtype=np.float64).reshape(n, -1)
        return np.where(labeled[:, None], np.nan_to_num(Y), 0.0), None
    y_fold = hide_labels(y, ~labeled, marker)
    targets = check_classification_targets(y_fold[fit_rows], fit_rows.size, unlabeled=marker)
    encoded = rules.encode_targets(targets)
    Y = np.zeros((n, encoded.shape[1]))
    Y[fit_rows] = encoded
    codes = np.zeros(n, dtype=np.intp)
    codes[fit_rows] = targets.codes
    return Y, codes


def check_folds(estimator, X, y, ssl_folds, marker, hessian, laplacian=None):
    """Refuse, before any fit, folds the fold-out objectives cannot be built on.

    A fold without labeled training points, a fold whose labeled training points miss a class,
    an exact Hessian over the memory budget, inductive folds on a given Laplacian that cannot
    be subset.
    """
    n = X.shape[0]
    labeled_all = labeled_mask(y, marker)
    classifier = is_classifier(estimator)
    classes = np.unique(np.asarray(y)[labeled_all]) if classifier else None
    inductive = None
    for fold in ssl_folds:
        keep = np.zeros(n, dtype=bool)
        keep[np.asarray(fold.fit_rows, dtype=np.intp)] = True
        keep &= labeled_all
        keep[np.asarray(fold.hidden_rows, dtype=np.intp)] = False
        if not keep.any():
            raise ValueError("a fold leaves no labeled point to fit: use fewer folds (cv)")
        if classifier:
            present = np.unique(np.asarray(y)[keep])
            if present.shape != classes.shape:
                raise ValueError(
                    f"a fold's training labels hold the classes {present.tolist()} but the "
                    f"data hold {classes.tolist()}: every class needs a labeled point outside "
                    f"every fold; use fewer folds (cv) or label more points of the rare classes"
                )
        if inductive is None and np.asarray(fold.fit_rows).size < n:
            inductive = np.sort(np.asarray(fold.fit_rows, dtype=np.intp))
    contract = fit_contract(estimator)
    graph_extension = contract.out_of_sample and estimator.out_of_sample == "graph"
    if inductive is not None and graph_extension:
        # the fold-out objectives predict held-out points by the kernel expansion; the
        # estimator's predict (and so exact CV) by the graph extension: not the same model
        raise ValueError(
            f"approximate CV on inductive folds scores held-out points by the kernel expansion, "
            f"but {type(estimator).__name__}(out_of_sample='graph') predicts new points by "
            "extending the graph, so the two would score different models: use "
            "out_of_sample='kernel', transductive folds (SSLKFold(transductive=True)), or "
            "method='exact' for exact CV"
        )
    if hessian == "exact" and contract.expansion == "training":
        # (a Nyström model's exact step is on its centers: no n x n Hessian)
        check_dense_fits(n + 1, estimator.memory_budget, 4, "the exact BIF Hessian")
    if laplacian is not None and inductive is not None:
        from ..graph import PrecomputedGraph

        try:
            PrecomputedGraph(laplacian, X, kind="laplacian").fit_rows(inductive)
        except ValueError as exc:
            raise ValueError(
                f"inductive folds need the subgraphs of the given laplacian, which cannot be "
                f"taken ({exc}); pass the adjacency's unnormalized Laplacian, or use "
                f"transductive folds"
            ) from exc


def build_folds(est, state, X, y, ssl_folds, marker, laplacian=None, graph=None):
    problem = state.problem
    n = state.decision.shape[0]
    labeled_all = np.asarray(problem.labeled, dtype=bool)
    n_labeled = int(labeled_all.sum())
    cached = []

    def subgraphs():  # built on the first inductive fold only; its row index is shared
        if not cached:
            owner = graph if graph is not None else est.graph_
            cached.append(_subgraphs(owner, X, laplacian, problem.laplacian))
        return cached[0]

    # what the subgraphs are taken from (as _subgraphs): the graph's adjacency, or the Laplacian
    owner = graph if graph is not None else est.graph_
    adjacency = getattr(owner, "adjacency_", None) if laplacian is None else None
    source = adjacency if adjacency is not None else problem.laplacian
    folds = []
    for fold in ssl_folds:
        fit_rows = np.sort(np.asarray(fold.fit_rows))
        in_fit = np.zeros(n, dtype=bool)
        in_fit[fit_rows] = True
        labeled = labeled_all & in_fit
        labeled[np.asarray(fold.hidden_rows, dtype=np.intp)] = False
        l_fold = int(labeled.sum())
        if l_fold == 0:
            raise ValueError("a fold leaves no labeled point to fit: use fewer folds (cv)")
        L = _fold_laplacian(problem, subgraphs, fit_rows, n, source)
        lam_i = 0.0
        if L is not None and problem.lambda_intrinsic > 0:
            intrinsic = state.rules.resolve_intrinsic_reg(fit_rows.size, l_fold)
            trace = float(L.diagonal().sum())
            if not trace > 0:
                raise ValueError(
                    "a fold's subgraph has no edges, so its intrinsic term fᵀLf/tr(L) is "
                    "undefined; use fewer folds (cv), more neighbours, or transductive folds"
                )
            # the fold's λ_I = l_i·c_i/tr(L_i), times l/l_i to keep λ_A = l·ambient_reg
            lam_i = n_labeled * intrinsic / trace
        targets, codes = _fold_targets(est, state.rules, y, labeled, fit_rows, n, marker)
        folds.append(
            _Fold(
                test_rows=np.asarray(fold.test_rows, dtype=np.intp),
                fit_rows=fit_rows,
                labeled=labeled,
                targets=targets,
                codes=codes,
                laplacian=L,
                lambda_intrinsic=lam_i,
                weight=n_labeled / l_fold,
            )
        )
    return folds
