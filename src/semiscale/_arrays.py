"""Where an array lives: recognise a backend's distributed arrays without importing them.

`is_dask_array` lets the estimators and the kNN graph keep a ``dask.array`` where it
lives (validation, small row gathers, the ops layer) without importing dask, an optional
dependency, at module import time.
"""

__all__ = ["is_dask_array", "take_rows"]


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
