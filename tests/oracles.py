"""Dense O(n³) reference answers, written independently of the library's solvers."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def rbf_gram(A, B, gamma):
    """exp(-gamma * ||a - b||^2) by explicit differences (no BLAS trick)."""
    diff = A[:, None, :] - B[None, :, :]
    return np.exp(-gamma * np.einsum("ijk,ijk->ij", diff, diff))


def laprls_train_decision(K, L, labeled, Y, lambda_ambient, lambda_intrinsic):
    """f = K α on the training points for min_α ‖J(Kα − y)‖² + λ_A αᵀKα + λ_I αᵀKLKα.

    Solved through the symmetric normal equations (K J K + λ_A K + λ_I K L K) α = K J y with a
    least-squares solver, i.e. a different route from the library's (JK + λ_A I + λ_I LK)⁻¹.
    """
    J = np.diag(labeled.astype(float))
    Ld = L.toarray() if hasattr(L, "toarray") else np.asarray(L)
    H = K @ J @ K + lambda_ambient * K + lambda_intrinsic * K @ Ld @ K
    rhs = K @ (J @ Y)
    alpha = sla.lstsq(H, rhs, cond=1e-13)[0]
    return K @ alpha


def dense_laplacian(W):
    W = W.toarray() if hasattr(W, "toarray") else np.asarray(W)
    return np.diag(W.sum(axis=1)) - W
