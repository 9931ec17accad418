"""semiscale.linalg: the only layer that does heavy work (blocking, memory budgets, threads).

:mod:`semiscale.linalg.ops` is the array-operations layer every heavy product goes through
(:class:`ArrayOps`, :func:`get_ops`, :func:`use_ops`, :func:`set_ops`);
:mod:`semiscale.linalg.system` the protocol preconditioners read (:class:`NystromSystem`).
"""

from semiscale.linalg.blocked import kernel_matmul, kernel_matrix, kernel_rmatmul
from semiscale.linalg.centers import jittered_cholesky, resolve_n_centers, select_centers
from semiscale.linalg.full_hessian import FullLapRLSHessian
from semiscale.linalg.operators import NystromLapRLSHessian
from semiscale.linalg.ops import ArrayOps, get_ops, set_ops, use_ops
from semiscale.linalg.system import NystromFactor, NystromSystem

__all__ = [
    "ArrayOps",
    "FullLapRLSHessian",
    "NystromFactor",
    "NystromLapRLSHessian",
    "NystromSystem",
    "get_ops",
    "jittered_cholesky",
    "kernel_matmul",
    "kernel_matrix",
    "kernel_rmatmul",
    "resolve_n_centers",
    "select_centers",
    "set_ops",
    "use_ops",
]
