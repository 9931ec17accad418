"""Where a fit runs: the Dask backend for a dask ``X`` (issue 31), NumPy otherwise.

An estimator whose fit contract declares ``dask`` (:class:`~semiscale.models._contract.FitContract`)
fits and predicts a row-chunked ``dask.array`` where it lives: the fit runs under
:class:`semiscale.backends.DaskOps` (the current one, else one on the default ``distributed``
client), so every kernel product maps over ``X``'s chunks on the workers, and ``X`` is never
gathered (:meth:`~semiscale.backends.DaskOps.distribute` persists it when it fits).
"""

from __future__ import annotations

import contextlib

import scipy.sparse as sp

from .._arrays import is_dask_array
from ..linalg.ops import get_ops, use_ops

__all__ = ["dask_ops_for", "dask_placement"]


def dask_ops_for(X):
    """Context: ``DaskOps`` (the default client) for a dask ``X`` unless one is current."""
    if not is_dask_array(X):
        return contextlib.nullcontext()
    from ..backends._dask import DaskOps

    return contextlib.nullcontext() if isinstance(get_ops(), DaskOps) else use_ops(DaskOps())


def dask_placement(estimator, X):
    """``(ops, X)``: the ``DaskOps`` a fit runs under and ``X`` on its workers, or ``(None, X)``.

    A dask ``X`` (only estimators declaring ``dask`` get one past validation) runs under the
    current ``DaskOps`` or a new one on the default client; a NumPy ``X`` under a ``DaskOps``
    context is chunked by tasks onto the workers when the estimator declares ``dask``.  Either
    way :meth:`DaskOps.distribute` persists ``X`` when it fits in the workers' memory.
    """
    dask_X = is_dask_array(X)
    if not (dask_X or estimator._fit_contract.dask) or sp.issparse(X):
        return None, X
    ops = get_ops()
    if not dask_X and ops.name != "dask":
        return None, X  # (no import of dask for a NumPy fit)
    from ..backends._dask import DaskOps

    if not isinstance(ops, DaskOps):
        ops = DaskOps()
    return ops, ops.distribute(X)
