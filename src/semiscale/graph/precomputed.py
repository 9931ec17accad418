"""A graph given as a matrix on known points, usable wherever a graph object is.

:class:`PrecomputedGraph` holds a weight matrix ``W`` (or a Laplacian ``L = D - W``) built on the
rows of ``X``.  ``fit(X_sub)`` finds the rows of ``X_sub`` in ``X`` and returns the graph that
``W`` *induces* on them: ``W_sub = W[rows][:, rows]`` and its Laplacian, rebuilt with the same
normalization, power and ridge.  So a graph built once survives a cross-validation that trains on
subsets of the points -- in scikit-learn's ``GridSearchCV`` as well::

    model = LapRLSClassifier(graph=PrecomputedGraph(L, X))
    GridSearchCV(model, {"intrinsic_reg": [1, 10, 100]}, scoring=get_ssl_scorer()).fit(X, y)

(Passing ``laplacian=L`` through ``GridSearchCV.fit`` cannot work: scikit-learn slices fit
parameters by rows only, giving an ``(n_train, n)`` matrix.)

Rows are matched exactly: both matrices are compared as float64 with ``-0.0`` read as ``0.0``,
by sorting the rows' bytes.  Identical rows of ``X`` are told apart by order: the ``j``-th copy
of a row in ``X_sub`` is the ``j``-th copy in ``X``, which is right for ``X_sub = X[rows]`` with
increasing ``rows`` (scikit-learn's folds).  ``X`` and the matrix are shared, not copied, by
``clone`` (and so by every search); do not modify them afterwards.
"""

from __future__ import annotations

import time
import weakref
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._validation import check_X
from .laplacian import connected_components, degree, laplacian

__all__ = ["PrecomputedGraph"]

KINDS = ("auto", "laplacian", "adjacency")


def _canonical_rows(X) -> np.ndarray:
    """Dense float64 rows as one fixed-width byte string each (``-0.0`` folded into ``0.0``)."""
    X = np.ascontiguousarray(X, dtype=np.float64) + 0.0
    return X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).ravel()


class _DenseRowIndex:
    """Sorted row bytes of ``X`` for exact lookup of other rows by binary search."""

    def __init__(self, X):
        keys = _canonical_rows(X)
        self.order = np.argsort(keys, kind="stable")  # stable: copies stay in row order
        self.sorted_keys = keys[self.order]

    def find(self, X_sub):
        """Positions in ``X`` of the rows of ``X_sub`` (-1 where absent or over-used)."""
        queries = _canonical_rows(X_sub)
        left = np.searchsorted(self.sorted_keys, queries, side="left")
        right = np.searchsorted(self.sorted_keys, queries, side="right")
        # rank of each query among equal queries, in order: the j-th copy maps to the j-th copy
        order = np.argsort(queries, kind="stable")
        ranked = queries[order]
        starts = np.r_[True, ranked[1:] != ranked[:-1]] if ranked.size else np.ones(0, bool)
        group_start = np.maximum.accumulate(np.where(starts, np.arange(ranked.size), 0))
        rank = np.empty(ranked.size, dtype=np.intp)
        rank[order] = np.arange(ranked.size) - group_start
        found = left + rank < right
        positions = np.full(queries.size, -1, dtype=np.intp)
        positions[found] = self.order[(left + rank)[found]]
        return positions


class _SparseRowIndex:
    """Exact lookup of sparse rows by their (column indices, values) bytes."""

    def __init__(self, X):
        self.table = {}
        for i, key in enumerate(self._keys(X)):
            self.table.setdefault(key, []).append(i)

    @staticmethod
    def _keys(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.data += 0.0
        X.eliminate_zeros()
        X.sort_indices()
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            yield X.indices[lo:hi].astype(np.int64).tobytes() + b"|" + X.data[lo:hi].tobytes()

    def find(self, X_sub):
        used: dict = {}
        positions = []
        for key in self._keys(X_sub):
            j = used.get(key, 0)
            candidates = self.table.get(key, ())
            positions.append(candidates[j] if j < len(candidates) else -1)
            used[key] = j + 1
        return np.asarray(positions, dtype=np.intp)


# Row indexes by id(X), so that the clones of a search (which share X) build one between them.
_ROW_INDEXES: dict = {}


def _row_index(X_original, X_checked):
    key = id(X_original)
    entry = _ROW_INDEXES.get(key)
    if entry is not None and entry[0]() is X_original:
        return entry[1]
    index = _SparseRowIndex(X_checked) if sp.issparse(X_checked) else _DenseRowIndex(X_checked)
    try:
        ref = weakref.ref(X_original, lambda _, key=key: _ROW_INDEXES.pop(key, None))
    except TypeError:  # a list or other object without weak references: no cache
        return index
    _ROW_INDEXES[key] = (ref, index)
    return index


def _check_symmetric(M, rtol: float = 1e-8) -> None:
    """Refuse a matrix that is not symmetric (relative to its largest entry, or 1).

    A one-sided kNN table (row i: the neighbours of i) is the usual cause.  It used to be taken
    as it was: the Laplacian ``D − W`` of an asymmetric ``W`` is not symmetric, and a harmonic
    fit on two moons (1,000 points, 3 labels per class, a one-sided 8-NN table, seeds 0–2) fell
    from 1.00 to 0.86–0.99 accuracy without a word, while the same matrix passed as
    ``laplacian=`` was refused (issue 26).
    Symmetrizing silently would choose between ``(W + Wᵀ)/2`` and ``max(W, Wᵀ)`` for the user,
    so the error names both (KNNGraph's ``symmetrize="average"`` and ``"union"``).
    """
    asym = abs(M - M.T)
    scale = max(abs(M).max() if M.nnz else 0.0, 1.0)
    if asym.nnz and asym.max() > rtol * scale:
        raise ValueError(
            f"matrix is not symmetric (max |M - M.T| = {asym.max():.3g}); a graph's weights "
            "must be: pass (W + W.T) / 2 or W.maximum(W.T) (what KNNGraph's "
            "symmetrize='average' and 'union' build)"
        )


class PrecomputedGraph(BaseEstimator):
    r"""A precomputed graph on the rows of ``X``; ``fit`` returns its induced subgraphs.

    Parameters
    ----------
    matrix : sparse matrix or ndarray of shape (n_samples, n_samples)
        The adjacency ``W`` (symmetric, non-negative) or a Laplacian ``L = D - W (+ ridge·I)``,
        both on the rows of ``X`` in order.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The points the graph was built on.
    kind : {"auto", "laplacian", "adjacency"}, default="auto"
        What ``matrix`` is.  ``"auto"``: a Laplacian when no off-diagonal entry is positive,
        else an adjacency.
    normalized : bool, default=False
        Adjacency only: build the symmetric normalized Laplacian of each subgraph.
    power : int, default=1
        Adjacency only: iterated Laplacian ``L^p`` of each subgraph.
    ridge : float, default=0.0
        Added to the diagonal of each subgraph's Laplacian (for a Laplacian ``matrix``: the ridge
        it was built with).
    memory_budget : int, str or None, default=None
        Bytes for a subgraph's ``L^p`` (None = 25 % of available memory); a power that cannot
        fit is refused before it is computed.  An estimator passes its own budget when this is
        None.

    Attributes
    ----------
    adjacency_ : scipy.sparse.csr_matrix of shape (n_fit, n_fit)
        Induced weights ``W[rows][:, rows]``.
    laplacian_ : scipy.sparse.csr_matrix of shape (n_fit, n_fit)
        Laplacian of the induced subgraph; ``matrix`` itself (as CSR float64) when ``fit`` is
        given all rows of ``X`` in order and ``matrix`` is a Laplacian.
    degree_ : ndarray of shape (n_fit,)
    trace_ : float
        ``tr(laplacian_)``.
    n_components_ : int
    component_labels_ : ndarray of int, shape (n_fit,)
    rows_ : ndarray of int, shape (n_fit,)
        Positions of the fitted points in ``X``.
    bandwidth_ : None
    search_method_ : str
        ``"precomputed"``.
    search_recall_ : None
    n_samples_fit_, n_features_in_ : int
    fit_time_ : float
    timings_ : dict
        ``"search"`` (row matching) and ``"laplacian"`` seconds.

    Raises
    ------
    ValueError
        At ``fit``: a matrix that is not square ``(n, n)`` for ``X``'s ``n`` rows or not
        symmetric (symmetrize it first: ``(W + W.T) / 2`` or ``W.maximum(W.T)``), a point not
        among the rows of ``X`` (naming how many and the first one), a Laplacian ``matrix`` that
        is not ``D - W`` of its own off-diagonal weights when a subset is asked for (a normalized
        or iterated Laplacian: pass the adjacency with ``normalized``/``power`` instead).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.graph import KNNGraph, PrecomputedGraph
    >>> X = np.random.default_rng(0).standard_normal((50, 2))
    >>> full = KNNGraph(n_neighbors=5).fit(X)
    >>> sub = PrecomputedGraph(full.adjacency_, X).fit(X[10:40])
    >>> sub.laplacian_.shape
    (30, 30)
    """

    def __init__(
        self, matrix, X, *, kind="auto", normalized=False, power=1, ridge=0.0, memory_budget=None
    ):
        self.matrix = matrix
        self.X = X
        self.kind = kind
        self.normalized = normalized
        self.power = power
        self.ridge = ridge
        self.memory_budget = memory_budget

    def __sklearn_clone__(self):
        # clone() would deep-copy the n×n matrix and X for every fit of a search; they are
        # read-only inputs, so the clone shares them (and with them the cached row index).
        return type(self)(**self.get_params(deep=False))

    # ------------------------------------------------------------------ checks
    #: scikit-learn's declarative parameter validation, checked by ``fit`` and ``fit_rows``.
    _parameter_constraints: dict = {
        "matrix": ["array-like", "sparse matrix"],
        "X": ["array-like", "sparse matrix"],
        "kind": [StrOptions(set(KINDS))],
        "normalized": ["boolean"],
        "power": [Interval(Integral, 1, None, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
    }

    def _matrix(self):
        """``(M, kind)``: the matrix as CSR float64 and what it is."""
        M = sp.csr_matrix(self.matrix, dtype=np.float64)
        n = self._n_rows()
        if M.shape != (n, n):
            raise ValueError(
                f"matrix has shape {M.shape} but X has {n} rows; the graph must be "
                f"({n}, {n}), built on the rows of X in order"
            )
        if not np.isfinite(M.data).all():
            raise ValueError("matrix contains NaN or infinite entries")
        _check_symmetric(M)
        kind = self.kind
        if kind == "auto":
            off = M - sp.diags(M.diagonal(), format="csr")
            kind = "adjacency" if (off.data > 0).any() else "laplacian"
        if kind == "laplacian" and (self.normalized or self.power != 1):
            raise ValueError(
                "normalized and power describe how to build a Laplacian from an adjacency; "
                "a Laplacian matrix cannot be re-normalized or raised to a power for a subset of "
                "its points -- pass the adjacency W with kind='adjacency' instead"
            )
        return M, kind

    def _n_rows(self):
        X = self.X
        return X.shape[0] if hasattr(X, "shape") else len(X)

    # ------------------------------------------------------------------ fit
    def find_rows(self, X):
        """Positions of the rows of ``X`` among the rows of the graph's ``X``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_fit, n_features)

        Returns
        -------
        ndarray of int, shape (n_fit,)

        Raises
        ------
        ValueError
            A row of ``X`` that is not a row of the graph's ``X`` (or more copies of a row than
            it has), or a different number of features.
        """
        X_graph = check_X(self.X, name="X")
        X = check_X(X)
        if X.shape[1] != X_graph.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but the PrecomputedGraph was built on points with "
                f"{X_graph.shape[1]}"
            )
        if X is self.X or X is X_graph:
            return np.arange(X.shape[0])
        if sp.issparse(X) != sp.issparse(X_graph):
            X = X.toarray() if sp.issparse(X) else sp.csr_matrix(X)
        rows = _row_index(self.X, X_graph).find(X)
        missing = np.flatnonzero(rows < 0)
        if missing.size:
            raise ValueError(
                f"{missing.size} of the {X.shape[0]} points given to PrecomputedGraph.fit are not "
                f"rows of the X it was built on (first: row {missing[0]}); it can only return "
                "subgraphs of its own points -- build a new graph (e.g. KNNGraph) for new points"
            )
        return rows

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Induced subgraph on the rows of ``X`` (found among the graph's points).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_fit, n_features)
            A subset of the rows of the graph's ``X``, in any order.
        y : ignored

        Returns
        -------
        self
        """
        start = time.perf_counter()
        rows = self.find_rows(X)
        self.timings_ = {"search": time.perf_counter() - start}
        self.n_features_in_ = check_X(X).shape[1] if not hasattr(X, "shape") else X.shape[1]
        return self._fit(rows, start)

    def fit_transform(self, X, y=None):
        """The Laplacian of the subgraph induced on the rows of ``X``: ``fit(X).laplacian_``.

        As :meth:`KNNGraph.fit_transform <semiscale.graph.KNNGraph.fit_transform>` (there is
        no ``transform``: the graph is defined on its own points only).

        Returns
        -------
        laplacian : scipy.sparse.csr_matrix of float64, shape (n_fit, n_fit)
        """
        return self.fit(X, y).laplacian_

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_rows(self, rows):
        """Induced subgraph on the points at positions ``rows`` of the graph's ``X``.

        Parameters
        ----------
        rows : array-like of int, shape (n_fit,)
            Distinct positions in ``[0, n_samples)``.

        Returns
        -------
        self
        """
        start = time.perf_counter()
        rows = np.asarray(rows)
        n = self._n_rows()
        if rows.ndim != 1 or rows.dtype.kind not in "iu":
            raise ValueError(f"rows must be a 1-D array of integer positions, got {rows!r}")
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise ValueError(f"rows must lie in [0, {n}), got values from {rows.min()}")
        if np.unique(rows).size != rows.size:
            raise ValueError("rows contains repeated positions; each point is one vertex")
        self.timings_ = {"search": 0.0}
        X = self.X
        self.n_features_in_ = X.shape[1] if hasattr(X, "shape") else len(X[0])
        return self._fit(rows, start)

    def _fit(self, rows, start):
        tic = time.perf_counter()
        M, kind = self._matrix()
        n = M.shape[0]
        whole = rows.size == n and np.array_equal(rows, np.arange(n))
        if kind == "laplacian":
            W_all = -(M - sp.diags(M.diagonal(), format="csr"))
            W_all.eliminate_zeros()
            if whole:
                L = M
            else:
                self._check_laplacian_is_d_minus_w(M, W_all)
            W = W_all if whole else W_all[rows][:, rows]
            if not whole:
                L = laplacian(W, ridge=self.ridge)
        else:
            W = M if whole else M[rows][:, rows]
            L = laplacian(
                W,
                normalized=self.normalized,
                power=self.power,
                ridge=self.ridge,
                memory_budget=self.memory_budget,
            )
        W = sp.csr_matrix(W)
        self.adjacency_ = W
        self.laplacian_ = sp.csr_matrix(L)
        self.degree_ = degree(W)
        self.trace_ = float(self.laplacian_.diagonal().sum())
        self.n_components_, self.component_labels_ = connected_components(W)
        self.rows_ = rows
        self.bandwidth_ = None
        self.search_method_ = "precomputed"
        self.search_recall_ = None
        self.n_samples_fit_ = rows.size
        end = time.perf_counter()
        self.timings_["laplacian"] = end - tic
        self.fit_time_ = end - start
        return self

    def _check_laplacian_is_d_minus_w(self, L, W):
        """A Laplacian's subsets are defined only when it is ``D - W (+ ridge·I)``."""
        rebuilt = laplacian(W, ridge=self.ridge)
        scale = max(abs(L).max() if L.nnz else 0.0, 1.0)
        gap = abs(rebuilt - L)
        if gap.nnz and gap.max() > 1e-8 * scale:
            raise ValueError(
                "matrix is a Laplacian that is not D - W of its own off-diagonal weights "
                f"(with ridge={self.ridge!r}; largest difference {gap.max():.3g}) -- a normalized "
                "or iterated Laplacian, or a ridge not given -- so the Laplacian of a subset of "
                "its points is not defined; pass the adjacency W (kind='adjacency') with the "
                "normalized, power and ridge it was built with, or the matching ridge"
            )
