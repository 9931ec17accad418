"""Hyper-parameter search for reproductions: a grid, then its geometric midpoints.

:func:`refined_search` runs :class:`~semiscale.model_selection.SSLGridSearchCV` over a grid,
then, for each parameter of ``refine`` in turn, a second search at the geometric midpoints
between its best value so far and that value's neighbours in the grid (the other parameters
at their best).  A decade grid can miss a better value between two decades; a second search
over a few points is cheaper than a finer grid.  Every grid point is returned as a row, with
its stage, so the CV record shows what was tried.
"""

from __future__ import annotations

import math
import warnings

__all__ = ["midpoints", "refined_search"]


def midpoints(values, best) -> list[float]:
    """Geometric midpoints between ``best`` and its neighbours in the sorted grid ``values``."""
    k = min(range(len(values)), key=lambda j: abs(math.log(values[j] / best)))
    return [math.sqrt(best * values[j]) for j in (k - 1, k + 1) if 0 <= j < len(values)]


def _search(estimator, grid, cv, X, y, laplacian, scoring, stage):
    from semiscale.model_selection import SSLGridSearchCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. DisconnectedGraphWarning: tables record them
        search = SSLGridSearchCV(estimator, grid, cv=cv, scoring=scoring, refit=False)
        search.fit(X, y, laplacian=laplacian)
    res = search.cv_results_
    rows = [
        {**params, "score": float(score), "stage": stage}
        for params, score in zip(res["params"], res["mean_test_score"])
    ]
    return rows, int(search.n_graph_fits_)


def refined_search(estimator, grid: dict, *, refine=(), cv, X, y, scoring, laplacian=None):
    """Grid search, then midpoint searches for each parameter in ``refine`` (in order).

    Parameters
    ----------
    estimator : estimator
        The model to tune (cloned for every fit).
    grid : dict
        Parameter name -> list of values (stage 1).
    refine : sequence of str
        Names in ``grid`` refined at stage 2, one after the other.
    cv, scoring
        As for :class:`~semiscale.model_selection.SSLGridSearchCV` (higher scores are better).
    X, y : arrays
        Points and targets with the unlabeled ones marked.
    laplacian : sparse matrix, optional
        One graph of all of ``X`` for every search (else each search builds its own).

    Returns
    -------
    rows : list of dict
        Every point tried: its parameters, ``score`` (mean over folds) and ``stage``.
    n_graph_fits : int
        Graphs built by the searches.
    """
    rows, graph_fits = _search(estimator, grid, cv, X, y, laplacian, scoring, stage=1)
    for param in refine:
        best = max(rows, key=lambda r: r["score"])
        point = {k: [v] for k, v in best.items() if k not in ("score", "stage")}
        points = [{**point, param: [v]} for v in midpoints(sorted(grid[param]), best[param])]
        if points:
            more, fits = _search(estimator, points, cv, X, y, laplacian, scoring, stage=2)
            rows, graph_fits = rows + more, graph_fits + fits
    return rows, graph_fits
