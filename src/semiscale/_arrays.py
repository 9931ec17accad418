"""Where an array lives: recognise a backend's distributed arrays without importing them.

`is_dask_array` lets the estimators and the kNN graph keep a ``dask.array`` where it
lives (validation, small row gathers, the ops layer) without importing dask, an optional
dependency, at module import time.
"""

import numpy as np

__all__ = ["check_dask_array", "is_dask_array", "take_rows"]


def is_dask_array(X):
    """Whether `X` is a dask array, without importing dask.

    Parameters
    ----------
    X : object
        Any object.

    Returns
    -------
    bool
        True when ``X``'s type is defined in the ``dask`` package and ``X`` has the
        ``chunks`` attribute of a ``dask.array.Array``.
    """
    module = type(X).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(X, "chunks")


def check_dask_array(X, *, name: str = "X"):
    """A dask array ``X`` checked where it lives, lazily: nothing is computed.

    The checks shared by the estimators' validation (:func:`semiscale._validation.validate_X`)
    and the distributed kNN search: 2-D, known chunk sizes, dense NumPy chunks, numeric
    (integers and booleans become float64, as scikit-learn's ``check_array`` does), one chunk
    along the columns (a chunking along them is undone).  Finiteness needs a pass over the
    chunks: the callers run it on the workers.

    Parameters
    ----------
    X : dask array
    name : str, default="X"
        The parameter named in the errors.

    Returns
    -------
    dask array of float32 or float64, chunked by rows only

    Raises
    ------
    ValueError
        Not 2-D, unknown chunk sizes (nan), or a non-numeric dtype.
    TypeError
        Chunks that are not NumPy arrays (sparse matrices, CuPy arrays).
    """
    if X.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D dask array (n_samples, n_features), got {X.ndim} dimension(s)"
        )
    if any(np.isnan(size) for sizes in X.chunks for size in sizes):
        raise ValueError(
            f"{name} has unknown chunk sizes (nan): call {name}.compute_chunk_sizes() first (or "
            "build it with known chunk sizes)"
        )
    meta = getattr(X, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        raise TypeError(
            f"{name} is a dask array of {type(meta).__name__} chunks; only dense NumPy chunks "
            f"are supported: use {name}.map_blocks(lambda b: b.toarray()), or {name}.compute()"
        )
    if np.dtype(X.dtype).kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got a dask array of dtype {X.dtype}")
    if np.dtype(X.dtype) not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def take_rows(X, index):
    """The rows ``X[index]`` as a local array: only those rows are computed for a dask ``X``.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask array of shape (n, d)
    index : slice, ndarray of int or bool mask
        The rows wanted (a few: labeled rows, centers, a bandwidth sample).

    Returns
    -------
    ndarray or sparse matrix
        ``X[index]``; for a dask ``X`` the NumPy result of computing that selection (on the
        current scheduler: the workers of a ``distributed.Client`` where one is running).
    """
    rows = X[index]
    if is_dask_array(rows):
        rows = rows.compute()
    return rows
