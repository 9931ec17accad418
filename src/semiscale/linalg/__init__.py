"""semiscale.linalg: the only layer that blocks heavy products under a memory budget."""

from semiscale.linalg.blocked import kernel_matmul, kernel_matrix, kernel_rmatmul
from semiscale.linalg.nystrom import jittered_cholesky, resolve_n_centers, select_centers
from semiscale.linalg.operators import FullLapRLSHessian, NystromLapRLSHessian

__all__ = [
    "FullLapRLSHessian",
    "NystromLapRLSHessian",
    "jittered_cholesky",
    "kernel_matmul",
    "kernel_matrix",
    "kernel_rmatmul",
    "resolve_n_centers",
    "select_centers",
]
