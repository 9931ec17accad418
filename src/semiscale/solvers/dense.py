"""Dense direct solves with a least-squares fallback for singular systems.

The factorizations are the array-operations layer's (:meth:`semiscale.linalg.ops.ArrayOps.solve`
and :meth:`~semiscale.linalg.ops.ArrayOps.lstsq`); this module decides what a singular system
means and what to do about it.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..linalg.ops import get_ops

__all__ = ["solve_or_lstsq"]


def solve_or_lstsq(A, B, *, assume_a="gen", overwrite_a=False, what="system"):
    """Solve ``A X = B``; fall back to least squares, with a ``RuntimeWarning``, when singular.

    Parameters
    ----------
    A : ndarray of shape (n, n)
    B : ndarray of shape (n,) or (n, r)
    assume_a : {"gen", "pos", "sym"}
        Structure of ``A`` (LU for "gen", Cholesky for "pos", as :func:`scipy.linalg.solve`).
    overwrite_a : bool
        Let LAPACK factor ``A`` in place (saves one n×n copy; ``A`` is then destroyed).
    what : str
        Name of the system for the warning.

    Notes
    -----
    "Singular" means LAPACK reports an exact zero pivot / non-positive pivot, or its reciprocal
    condition estimate is below machine precision (scipy's ``LinAlgWarning``), or the solution is
    not finite.  The fallback is the SVD-based minimum-norm least-squares solution.
    """
    ops = get_ops()
    A_backup = A if not overwrite_a else None
    try:
        X = ops.solve(A, B, assume_a=assume_a, overwrite_a=overwrite_a)
        if np.all(np.isfinite(X)):
            return X
    except (np.linalg.LinAlgError, ValueError):
        pass
    if A_backup is None:
        raise np.linalg.LinAlgError(
            f"the {what} is singular and was factored in place; retry with more regularization"
        )
    warnings.warn(
        f"the {what} is singular or ill-conditioned; using a least-squares solution "
        "(increase ambient_reg to make the problem well-posed)",
        RuntimeWarning,
        stacklevel=3,
    )
    return ops.lstsq(A, B)
