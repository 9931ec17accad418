"""The backends benchmark's problems: skin_nonskin and synthetic data generated per chunk.

A synthetic dataset is a list of row chunks, chunk ``c`` drawn by :func:`synthetic_chunk` from
its own generator ``default_rng([seed, c])``: the Dask runs make each chunk in a task on a
worker (:func:`synthetic_dask`), so no process ever holds all of ``X`` there, and a lost chunk
is recomputed; the client makes the chunks one at a time for the targets and the graph, and the
NumPy and torch runs concatenate them (:func:`synthetic_numpy`, the one place ``X`` is whole).

The graph is built once per problem and handed to every backend as ``laplacian=``: on
skin_nonskin the exact kNN graph of all points; on synthetic data the union of the exact kNN
graphs *within* each chunk (a block-diagonal Laplacian), which is cheap, needs one chunk at a
time, and is what a chunk-local graph gives — not the kNN graph of the whole set.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from semiscale_bench.harness import load_dense, minmax_scaler

__all__ = [
    "Problem",
    "chunk_sizes",
    "load_problem",
    "synthetic_chunk",
    "synthetic_dask",
    "synthetic_numpy",
    "synthetic_target",
]

#: Features of the synthetic data.
SYNTHETIC_FEATURES = 3
#: Seed of the synthetic chunks, the labeled draw and the estimators.
SEED = 0


def chunk_sizes(n: int, rows: int) -> list[int]:
    """Rows of each chunk: ``rows`` each, the last one shorter when ``rows`` does not divide n."""
    return [min(rows, n - start) for start in range(0, n, rows)]


def synthetic_chunk(seed: int, index: int, rows: int, d: int = SYNTHETIC_FEATURES) -> np.ndarray:
    """Chunk ``index`` of a synthetic set: ``rows`` points uniform in ``[-1, 1]^d``."""
    return np.random.default_rng([seed, index]).uniform(-1.0, 1.0, (rows, d))


def synthetic_target(X: np.ndarray) -> np.ndarray:
    """The smooth target ``sin(3 x_1) + x_2 x_3`` of the synthetic points."""
    return np.sin(3.0 * X[:, 0]) + X[:, 1] * X[:, 2]


def synthetic_numpy(n: int, rows: int, seed: int = SEED) -> np.ndarray:
    """The whole synthetic ``X`` in this process (the NumPy and torch runs)."""
    sizes = chunk_sizes(n, rows)
    return np.concatenate([synthetic_chunk(seed, c, size) for c, size in enumerate(sizes)])


def synthetic_dask(n: int, rows: int, seed: int = SEED):
    """The synthetic ``X`` as a dask array whose chunks are made by tasks on the workers."""
    import dask
    import dask.array as da

    make = dask.delayed(synthetic_chunk, pure=True)
    parts = [
        da.from_delayed(make(seed, c, size), shape=(size, SYNTHETIC_FEATURES), dtype=np.float64)
        for c, size in enumerate(chunk_sizes(n, rows))
    ]
    return da.concatenate(parts, axis=0)


@dataclass
class Problem:
    """One dataset ready for every backend: data, targets, labels and the shared Laplacian.

    ``X`` is the whole data on the client (None for synthetic data until :meth:`numpy_X`
    materialises it); ``dask_X()`` is the input of the Dask runs: the synthetic chunks made by
    tasks, or None for skin_nonskin, whose NumPy ``X`` the Dask backend distributes itself.
    """

    name: str
    n: int
    d: int
    chunk_rows: int
    y_true: np.ndarray
    y_observed: np.ndarray
    laplacian: sp.csr_matrix
    classification: bool
    graph: dict = field(default_factory=dict)
    X: np.ndarray | None = None
    synthetic: bool = False

    def numpy_X(self) -> np.ndarray:
        """``X`` on the client (the synthetic chunks concatenated, once)."""
        if self.X is None:
            self.X = synthetic_numpy(self.n, self.chunk_rows)
        return self.X

    def dask_X(self):
        """The Dask runs' ``X``: synthetic chunks made by tasks, or None (NumPy ``X``)."""
        return synthetic_dask(self.n, self.chunk_rows) if self.synthetic else None

    def scores(self, prediction: np.ndarray) -> dict:
        """RMSE on the unlabeled points (and accuracy by sign for a classification)."""
        unlabeled = np.isnan(self.y_observed)
        error = prediction[unlabeled] - self.y_true[unlabeled]
        out = {"rmse": float(np.sqrt(np.mean(error**2)))}
        if self.classification:
            agree = np.sign(prediction[unlabeled]) == self.y_true[unlabeled]
            out["accuracy"] = float(np.mean(agree))
        return out


def _observed(y: np.ndarray, n_labeled: int) -> np.ndarray:
    labeled = np.random.default_rng(SEED).choice(y.size, n_labeled, replace=False)
    observed = np.full(y.size, np.nan)
    observed[labeled] = y[labeled]
    return observed


def _knn_laplacian(X: np.ndarray, n_neighbors: int) -> sp.csr_matrix:
    import warnings

    from semiscale.graph import DisconnectedGraphWarning, KNNGraph

    with warnings.catch_warnings():  # skin's duplicate colours: components, said in the report
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        graph = KNNGraph(n_neighbors=n_neighbors, method="exact").fit(X)
    return graph.laplacian_.tocsr()


def load_problem(protocol, name: str, data_home=None) -> Problem:
    """The problem ``name`` of ``protocol`` with its graph built (timed, in ``graph``)."""
    rows = protocol.chunk_rows[name]
    tic = time.perf_counter()
    if name == "skin_nonskin":
        X, y = load_dense("skin_nonskin", protocol.max_samples, data_home)
        X = minmax_scaler(X)(X)
        y = np.where(y == y.max(), 1.0, -1.0)  # skin (label 2 in the LIBSVM file) is +1
        laplacian = _knn_laplacian(X, protocol.n_neighbors)
        graph = {"kind": f"exact {protocol.n_neighbors}-NN graph of all points"}
        problem = Problem(name, X.shape[0], X.shape[1], rows, y, None, laplacian, True, graph, X)
    else:
        n = protocol.synthetic_rows[name]
        targets, blocks = [], []
        for c, size in enumerate(chunk_sizes(n, rows)):  # one chunk in memory at a time
            X_c = synthetic_chunk(SEED, c, size)
            targets.append(synthetic_target(X_c))
            blocks.append(_knn_laplacian(X_c, protocol.n_neighbors))
        laplacian = sp.block_diag(blocks, format="csr")
        kind = f"exact {protocol.n_neighbors}-NN graphs within each chunk of {rows} rows"
        y = np.concatenate(targets)
        problem = Problem(name, n, SYNTHETIC_FEATURES, rows, y, None, laplacian, False, {})
        problem.graph = {"kind": kind}
        problem.synthetic = True
    problem.y_observed = _observed(problem.y_true, protocol.n_labeled[name])
    problem.graph.update(seconds=time.perf_counter() - tic, nnz=int(problem.laplacian.nnz))
    return problem
