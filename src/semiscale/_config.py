"""Global configuration: which backend runs the heavy products (scikit-learn's names and habits).

scikit-learn keeps its settings in a dictionary per thread; semiscale's one setting, the
backend, already has a home with the right scopes, the array-operations layer
(:mod:`semiscale.linalg.ops`), so these functions are a front for it:
:func:`config_context` is :func:`~semiscale.linalg.ops.use_ops` (this thread or context, for a
block, restored on exit) and :func:`set_config` is :func:`~semiscale.linalg.ops.set_ops` (the
default of every thread outside such a block).  The backend is a live
:class:`~semiscale.linalg.ops.ArrayOps` instance, not a name: a ``DaskOps`` holds its client,
a ``TorchOps`` its device and the copy of X it keeps there.
"""

import contextlib

from .backends._resolve import resolve_backend
from .linalg.ops import get_ops, set_ops, use_ops

__all__ = ["config_context", "get_config", "set_config"]


def get_config():
    """The current configuration.

    Returns
    -------
    config : dict
        ``{"backend": ops}``: the :class:`~semiscale.linalg.ops.ArrayOps` instance that runs the
        heavy products here and now (the innermost :func:`config_context` of this thread, else
        the default :func:`set_config` set).  A new dictionary: changing it changes nothing.

    Examples
    --------
    >>> import semiscale
    >>> semiscale.get_config()["backend"].name
    'numpy'
    """
    return {"backend": get_ops()}


def set_config(*, backend=None):
    """Set the process-wide default configuration.

    Unlike scikit-learn's ``set_config`` (one thread's settings), the default backend is shared by
    every thread, so the worker threads of a grid search see it too; a thread inside a
    :func:`config_context` block keeps that block's backend until the block ends.

    Parameters
    ----------
    backend : {"numpy", "dask", "torch"}, ArrayOps instance or None, default=None
        The default implementation of the heavy products
        (:func:`semiscale.backends.resolve_backend` says what each name gives).  None leaves it
        unchanged.

    Raises
    ------
    ValueError
        For an unknown backend name.
    ImportError
        When the backend's optional library is missing (the message names the extra).

    Examples
    --------
    >>> import semiscale
    >>> semiscale.set_config(backend="numpy")
    >>> semiscale.get_config()["backend"].name
    'numpy'
    """
    if backend is not None:
        set_ops(resolve_backend(backend))


@contextlib.contextmanager
def config_context(*, backend=None):
    """Context manager: the configuration inside the block, in this thread (or context) only.

    On exit the previous backend is restored, also after an exception; blocks nest.  Threads
    started inside the block see the default (:func:`set_config`), as with
    :func:`~semiscale.linalg.ops.use_ops`; the array-operations layer's own worker threads run
    in the object they were given, so they need nothing.

    Parameters
    ----------
    backend : {"numpy", "dask", "torch"}, ArrayOps instance or None, default=None
        The implementation of the heavy products inside the block
        (:func:`semiscale.backends.resolve_backend`).  None leaves the current one.

    Raises
    ------
    ValueError
        For an unknown backend name (before the block runs).
    ImportError
        When the backend's optional library is missing (the message names the extra).

    Examples
    --------
    >>> import semiscale
    >>> from semiscale.backends import ArrayOps
    >>> class Mine(ArrayOps):
    ...     name = "mine"
    >>> with semiscale.config_context(backend=Mine()):
    ...     semiscale.get_config()["backend"].name
    'mine'
    >>> semiscale.get_config()["backend"].name
    'numpy'

    With a Dask cluster (a ``distributed.Client`` made first, or an explicit one):

    >>> from semiscale import NystromLapRLSClassifier  # doctest: +SKIP
    >>> from semiscale.backends import DaskOps  # doctest: +SKIP
    >>> with semiscale.config_context(backend=DaskOps(client=client)):  # doctest: +SKIP
    ...     model = NystromLapRLSClassifier().fit(X, y)
    """
    if backend is None:
        yield
        return
    with use_ops(resolve_backend(backend)):
        yield
