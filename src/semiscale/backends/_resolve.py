"""Backend names → :class:`~semiscale.linalg.ops.ArrayOps` instances, and the extras they need.

A backend's optional library is imported only here, when the backend is asked for, so that
``import semiscale`` never imports dask or torch; a missing library is reported with the
``pip install`` line of the extra that brings it.
"""

from importlib import import_module

__all__ = ["BACKENDS", "require", "resolve_backend"]

#: Backend name → (class name in :mod:`semiscale.backends`, its module, the optional extra,
#: the libraries the extra installs and the backend imports).  "numpy" is the reference.
BACKENDS = {
    "numpy": ("ArrayOps", "semiscale.linalg.ops", None, ()),
    "dask": ("DaskOps", "semiscale.backends._dask", "distributed", ("dask.array", "distributed")),
    "torch": ("TorchOps", "semiscale.backends._torch", "gpu", ("torch",)),
}


def require(backend):
    """Import the optional libraries of ``backend`` (a key of :data:`BACKENDS`).

    Raises
    ------
    ImportError
        When one is missing (or fails to import), naming the backend, the library and the
        extra to install: ``pip install "semiscale[distributed]"`` for dask,
        ``pip install "semiscale[gpu]"`` for torch.
    """
    class_name, _, extra, libraries = BACKENDS[backend]
    for library in libraries:
        try:
            import_module(library)
        except ImportError as err:
            raise ImportError(
                f"backend={backend!r} (semiscale.backends.{class_name}) needs "
                f"{' and '.join(lib.split('.')[0] for lib in libraries)}, and {library} cannot "
                f"be imported ({err}); install the optional extra: "
                f'pip install "semiscale[{extra}]"'
            ) from err


def backend_class(backend):
    """The :class:`~semiscale.linalg.ops.ArrayOps` subclass of ``backend`` (a key of
    :data:`BACKENDS`), its libraries imported first (:func:`require`)."""
    class_name, module, _, _ = BACKENDS[backend]
    require(backend)
    return getattr(import_module(module), class_name)


def resolve_backend(backend):
    """The array-operations implementation that ``backend`` names.

    Parameters
    ----------
    backend : {"numpy", "dask", "torch"}, ArrayOps instance or None
        None and ``"numpy"``: the NumPy/SciPy reference, a new
        :class:`~semiscale.linalg.ops.ArrayOps`; ``"dask"``: ``DaskOps()`` (the default
        ``distributed`` client, looked up at first use); ``"torch"``: ``TorchOps()`` (CUDA when
        available, else the CPU); an :class:`~semiscale.linalg.ops.ArrayOps` instance (a
        configured ``DaskOps(client=...)``, ``TorchOps(device=..., dtype=...)`` or a subclass
        of your own) is returned as it is.

    Returns
    -------
    ArrayOps

    Raises
    ------
    ValueError
        For any other value, naming the choices.
    ImportError
        When the backend's optional library is not installed, naming the extra to install.

    Examples
    --------
    >>> from semiscale.backends import ArrayOps, resolve_backend
    >>> resolve_backend("numpy").name
    'numpy'
    >>> ops = ArrayOps()
    >>> resolve_backend(ops) is ops
    True
    >>> resolve_backend("cuda")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of 'numpy', 'dask', 'torch', ...; got 'cuda'
    """
    from ..linalg.ops import ArrayOps

    if backend is None:
        return ArrayOps()
    if isinstance(backend, ArrayOps):
        return backend
    if isinstance(backend, str) and backend in BACKENDS:
        return backend_class(backend)()
    if isinstance(backend, type) and issubclass(backend, ArrayOps):
        hint = f" (a class: pass an instance, {backend.__name__}(...))"
    else:
        hint = ""
    raise ValueError(
        f"backend must be one of {', '.join(map(repr, BACKENDS))}, an ArrayOps instance or "
        f"None; got {backend!r}{hint}"
    )
