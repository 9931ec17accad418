"""Where an array lives: recognise a backend's distributed arrays without importing them.

`is_dask_array` lets the estimators and the kNN graph keep a ``dask.array`` where it
lives (validation, small row gathers, the ops layer) without importing dask, an optional
dependency, at module import time.
"""

__all__ = ["is_dask_array"]


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
