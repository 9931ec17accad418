"""What :class:`~semiscale.backends._dask.DaskOps` runs on the Dask workers, one call per chunk.

Each function receives one row chunk ``X_c`` of the distributed ``X`` (NumPy, on its worker)
and the small operands sent from the client, and runs the NumPy layer
(:mod:`semiscale.linalg.streaming`) on one thread: the worker's own threads are the
parallelism.  Module-level functions, so that the workers import them instead of receiving
their code with every task.
"""

from __future__ import annotations

from ..linalg import streaming

__all__ = ["chunk_matmul", "chunk_matrix", "chunk_rmatmul"]


def chunk_matmul(kernel, X_c, C, V, budget):
    """``K(X_c, C) V``, the chunk's rows of the product."""
    return streaming.kernel_matmul(kernel, X_c, C, V, budget, 1)


def chunk_rmatmul(kernel, X_c, C, U_c, budget):
    """``K(X_c, C)ᵀ U_c``, the chunk's term of the sum."""
    return streaming.kernel_rmatmul(kernel, X_c, C, U_c, budget, 1)


def chunk_matrix(kernel, X_c, C, budget):
    """``K(X_c, C)``, the chunk's rows of the kernel matrix."""
    return streaming.kernel_matrix(kernel, X_c, C, budget, 1)
