"""Blocked kernel products under a memory budget, through the current array-operations layer.

``K(A, B)`` is never formed: :func:`kernel_matmul`, :func:`kernel_rmatmul` and
:func:`kernel_matrix` are the layer's methods (:class:`semiscale.linalg.ops.ArrayOps`) called on
the implementation :func:`semiscale.linalg.ops.get_ops` returns, so a Dask or torch
implementation set with :func:`~semiscale.linalg.ops.use_ops` replaces them too.  Their block
sizes, the ``STREAM_BLOCK_BYTES`` cap and the threads are documented in
:mod:`semiscale.linalg.streaming` (the NumPy implementation).
"""

from __future__ import annotations

import numpy as np

from .ops import get_ops
from .streaming import PARALLEL_MIN_ENTRIES, STREAM_BLOCK_BYTES

__all__ = [
    "PARALLEL_MIN_ENTRIES",
    "STREAM_BLOCK_BYTES",
    "kernel_matmul",
    "kernel_matrix",
    "kernel_rmatmul",
]


def kernel_matmul(kernel, A, B, V, memory_budget=None, n_jobs=1) -> np.ndarray:
    r""":math:`K(A, B)\,V` without forming :math:`K(A, B)` (:meth:`ArrayOps.kernel_matmul`)."""
    return get_ops().kernel_matmul(kernel, A, B, V, memory_budget, n_jobs)


def kernel_rmatmul(kernel, A, B, U, memory_budget=None, n_jobs=1) -> np.ndarray:
    r""":math:`K(A, B)^\top U` without forming :math:`K(A, B)` (:meth:`ArrayOps.kernel_rmatmul`)."""
    return get_ops().kernel_rmatmul(kernel, A, B, U, memory_budget, n_jobs)


def kernel_matrix(kernel, A, B=None, memory_budget=None, n_jobs=1) -> np.ndarray:
    """The dense kernel matrix ``K(A, B)``, filled block by block (:meth:`ArrayOps.kernel_matrix`).

    Use it where an algorithm needs the whole matrix (a dense factorization, a cached ``K_ns``);
    the result must fit in ``memory_budget`` with room for one block of temporaries.
    """
    return get_ops().kernel_matrix(kernel, A, B, memory_budget, n_jobs)
