"""Where the heavy products run: NumPy (the reference), Dask distributed or PyTorch.

Every heavy product of semiscale goes through one object, an
:class:`~semiscale.linalg.ops.ArrayOps`, looked up with :func:`get_ops` at each call.  A backend
is a subclass that overrides the methods it accelerates; the estimators are the same code on
every backend.  Choose one for a block of code with :func:`semiscale.config_context` (or
:func:`use_ops`), for the whole process with :func:`semiscale.set_config` (or
:func:`set_ops`):

>>> import semiscale
>>> from semiscale.backends import ArrayOps, get_ops
>>> with semiscale.config_context(backend="numpy"):
...     type(get_ops()).__name__
'ArrayOps'

- ``"numpy"`` — :class:`ArrayOps`: NumPy/SciPy, the reference and the default.
- ``"dask"`` — :class:`DaskOps` (``DaskOps(client=None, chunk_rows=None)``): the kernel
  products run as map-over-row-chunks on the workers of a ``distributed`` client; the
  ``s × s`` factorizations and the n-sized vectors stay on the client.  Extra:
  ``pip install "semiscale[distributed]"``.
- ``"torch"`` — :class:`TorchOps` (``TorchOps(device=None, dtype=None)``): the kernel
  products, dense products and triangular/Cholesky solves on torch tensors (CUDA when
  available, else the CPU).  Extra: ``pip install "semiscale[gpu]"``.

The names are imported on first access, so ``import semiscale.backends`` imports neither dask
nor torch; asking for :class:`DaskOps` or :class:`TorchOps` without its library raises an
``ImportError`` naming the extra to install.  The user guide's page *Backends* says which
methods a backend implements, what stays local, and the Dask design's bytes and cost model.
"""

from importlib import import_module

__all__ = [
    "ArrayOps",
    "DaskOps",
    "TorchOps",
    "get_ops",
    "resolve_backend",
    "set_ops",
    "use_ops",
]

#: Name → module for the re-exports of the array-operations layer and the resolver.
_PUBLIC = {
    "ArrayOps": "semiscale.linalg.ops",
    "get_ops": "semiscale.linalg.ops",
    "set_ops": "semiscale.linalg.ops",
    "use_ops": "semiscale.linalg.ops",
    "resolve_backend": "semiscale.backends._resolve",
}

#: Backend classes that need an optional library → their backend name in ``_resolve.BACKENDS``.
_OPTIONAL = {"DaskOps": "dask", "TorchOps": "torch"}


def __getattr__(name):
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    if name in _OPTIONAL:
        from ._resolve import backend_class

        return backend_class(_OPTIONAL[name])
    raise AttributeError(f"module 'semiscale.backends' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
