r"""The CVM's simplex QP by libsvm's one-class solver (compiled SMO), polished in double.

The QP of :mod:`semiscale.solvers.smo`, ``max vᵀα − αᵀQα`` over the simplex, is a one-class
SVM dual.  libsvm's one-class problem (Schölkopf et al. 2001, as scikit-learn's
:class:`~sklearn.svm.OneClassSVM` runs it) is

.. math::

    \min_α\; \tfrac12 α^\top P α \quad \text{s.t.}\; 0 \le α_i \le 1,\; 1^\top α = ν l,

so with ``ν = 1/l`` it is the simplex (the upper bound 1 never binds).  It has no linear term,
but on the simplex ``vᵀα = αᵀ(v1ᵀ + 1vᵀ)α / 2``, so

.. math::

    P = 2Q - v 1^\top - 1 v^\top

poses the same problem: ``½αᵀPα = αᵀQα − vᵀα``.  P need not be positive semi-definite, but
on the simplex's directions d (``1ᵀd = 0``) ``dᵀPd = 2dᵀQd ≥ 0``, and libsvm's pair steps
(second-order working-set selection, Fan, Chen & Lin 2005) only move along such directions
(``P_ii + P_jj − 2P_ij = 2(Q_ii + Q_jj − 2Q_ij)``), so the problem stays convex.  libsvm's
gradient ``Pα`` differs from SMO's ``2Qα − v`` by a constant on the simplex, so its stopping
rule (the largest gradient on the support minus the smallest, ≤ ``tol``) is SMO's.

libsvm keeps kernel columns in single precision (``Qfloat``), so its solution can violate the
double-precision KKT gap by about 1e-7·max|P|; :func:`simplex_qp_libsvm` therefore finishes
with :func:`~semiscale.solvers.smo.simplex_qp_smo` from libsvm's α (warm start: a few pair
updates), so the result meets ``tol`` in double precision as SMO's does.  libsvm has no warm
start; :func:`~semiscale.solvers.cvm.core_vector_machine` measures which solver to use by
core-set size (its module docstring).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import OneClassSVM

from .smo import SMOResult, simplex_qp_smo

__all__ = ["simplex_qp_libsvm"]


def simplex_qp_libsvm(Q, v, *, tol=1e-6, max_iter=None) -> SMOResult:
    """Maximise ``vᵀα − αᵀQα`` over the simplex by libsvm, then polish by SMO (module docstring).

    Parameters
    ----------
    Q : ndarray of shape (k, k)
        Symmetric positive semi-definite.
    v : ndarray of shape (k,)
    tol : float, default=1e-6
        KKT violation ``max_{α_i>0} g_i − min_j g_j`` (``g = 2Qα − v``) at which both solvers
        stop.
    max_iter : int or None
        libsvm's iterations and, separately, the polishing SMO's pair updates (None: libsvm
        unbounded, SMO's own default).  libsvm stopping at it is not reported by itself: the
        polish continues from its α, and the returned ``gap`` says how far from the KKT
        conditions the result is.

    Returns
    -------
    SMOResult
        ``n_iter`` counts the polishing SMO's pair updates only (libsvm does not report its
        own).
    """
    Q = np.asarray(Q, dtype=float)
    v = np.asarray(v, dtype=float)
    k = v.size
    if Q.shape != (k, k):
        raise ValueError(f"Q must have shape ({k}, {k}) to match v, got {Q.shape}")
    if k == 1:
        return SMOResult(np.ones(1), 0, 0.0)
    P = 2.0 * Q
    P -= v[:, None]
    P -= v[None, :]
    solver = OneClassSVM(
        kernel="precomputed",
        nu=1.0 / k,
        tol=tol,
        shrinking=True,
        max_iter=-1 if max_iter is None else int(max_iter),
    )
    # P is built here, finite and valid: skipping scikit-learn's checks halves the fixed cost
    # of a call (1.0 to 0.4 ms at k = 10-50), which the CVM pays once per core-set item
    with (
        warnings.catch_warnings(),
        config_context(assume_finite=True, skip_parameter_validation=True),
    ):
        # a libsvm run stopped by max_iter is finished by SMO below, whose gap is reported
        warnings.simplefilter("ignore", ConvergenceWarning)
        solver.fit(P)
    alpha = np.zeros(k)
    alpha[solver.support_] = np.maximum(solver.dual_coef_.ravel(), 0.0)
    alpha /= alpha.sum()
    return simplex_qp_smo(Q, v, alpha, tol=tol, max_iter=max_iter)
