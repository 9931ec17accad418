"""semiscale.linalg: the only layer that blocks heavy products under a memory budget."""

from semiscale.linalg.blocked import kernel_matmul, kernel_rmatmul

__all__ = ["kernel_matmul", "kernel_rmatmul"]

from semiscale.linalg.nystrom import (  # noqa: E402
    jittered_cholesky,
    resolve_n_centers,
    select_centers,
)
from semiscale.linalg.operators import FullLapRLSHessian, NystromLapRLSHessian  # noqa: E402

__all__ += [
    "FullLapRLSHessian",
    "NystromLapRLSHessian",
    "jittered_cholesky",
    "resolve_n_centers",
    "select_centers",
]
