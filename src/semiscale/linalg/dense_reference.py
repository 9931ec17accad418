"""The dense reference of the Nyström LapRLS Hessian, for tests on small problems.

Split from :mod:`semiscale.linalg.operators` (which re-exports it): it forms ``K_ns`` whole, so
it is never used by a fit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._arguments import _index

__all__ = ["dense_nystrom_laprls_hessian"]


def dense_nystrom_laprls_hessian(
    kernel,
    X,
    centers,
    labeled_index,
    laplacian,
    ambient_lambda,
    intrinsic_lambda,
    label_weights=None,
):
    """Dense reference ``H = K_msᵀK_ms + λ_A K_ss + λ_I K_nsᵀ L K_ns`` (tests, small n only).

    With ``label_weights`` ``R`` (n × m), ``K_ms`` is ``Rᵀ K_ns``.
    """
    n = X.shape[0]
    centers = np.asarray(centers)
    C = X[_index(centers, n, "centers")] if centers.ndim == 1 else centers
    K_ns = np.asarray(kernel(X, C), dtype=np.float64)
    if label_weights is None:
        K_ms = K_ns[_index(labeled_index, n, "labeled_index")]
    else:
        K_ms = np.asarray(sp.csr_matrix(label_weights).T @ K_ns)
    H = K_ms.T @ K_ms + ambient_lambda * np.asarray(kernel(C, C), dtype=np.float64)
    if laplacian is not None and intrinsic_lambda > 0:
        H += intrinsic_lambda * (K_ns.T @ np.asarray(laplacian @ K_ns))
    return (H + H.T) / 2
