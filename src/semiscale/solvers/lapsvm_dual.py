r"""The Laplacian SVM's original dual (Belkin, Niyogi & Sindhwani 2006; paper 001 §2.1).

For the hinge loss the problem ``min Σ_{i≤l} max(0, 1 − y_i f(x_i)) + λ_A ‖f‖²_K + λ_I fᵀ L f``
with ``f = Σ_j α_j k(x_j, ·) + b`` over all n training points has the dual

.. math::

    \max_β\; 1^\top β - \tfrac12 β^\top Y Q̃ Y β \quad
    \text{s.t.}\; y^\top β = 0,\; 0 \le β \le 1,\qquad
    Q̃ = J K (2λ_A I + 2λ_I L K)^{-1} J^\top ,

and ``α = (2λ_A I + 2λ_I L K)⁻¹ Jᵀ Y β`` (paper 001 writes the box as 1/m with the loss averaged
over the m labels, i.e. the same problem divided by m).  ``Q̃`` is the Gram matrix of an SVM over
the l labeled points, so the QP is scikit-learn's ``SVC(kernel="precomputed", C=1)``, whose
``dual_coef_`` holds ``y_i β_i`` and ``intercept_`` the bias.

Cost: the n × n kernel matrix and one LU of the n × n system (O(n³) time, two n × n arrays), then
l solves; the baseline of paper 001, not a method for large n.
"""

from __future__ import annotations

import numpy as np

from .._progress import stage
from ..linalg.ops import get_ops
from .exact import check_dense_fits
from .problem import ManifoldProblem, Solution

__all__ = ["DUAL_WHAT", "dual_gram", "solve_lapsvm_dual"]

DUAL_WHAT = "the LapSVM dual (n×n kernel matrix and system)"


def dual_gram(problem: ManifoldProblem):
    """``(Q̃, G, K)``: the l × l dual Gram matrix, ``G = (2λ_A I + 2λ_I L K)⁻¹ Jᵀ`` and ``K``.

    In float64 whatever X's dtype, as the exact primal (:func:`~.exact.solve_exact`): the LU of
    the n × n system and libsvm's QP read K, whose float32 rounding κ would amplify.
    """
    X, labeled = problem.X, np.flatnonzero(problem.labeled)
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    n, ops = X.shape[0], get_ops()
    if not problem.lambda_ambient > 0:
        raise ValueError(
            "ambient_reg must be positive for the LapSVM dual: 2λ_A I + 2λ_I L K is singular "
            "without it; use ambient_reg > 0 (e.g. 1e-6) or formulation='primal'"
        )
    check_dense_fits(n, problem.memory_budget, 2, DUAL_WHAT)
    with stage(f"kernel matrix ({n}×{n})", problem.verbose):
        K = ops.kernel_matrix(
            problem.kernel, X, memory_budget=problem.memory_budget, n_jobs=problem.n_jobs
        )
        K = np.asarray(K)
    with stage(f"LapSVM dual system ({n}×{n} LU)", problem.verbose):
        if problem.laplacian is None or problem.lambda_intrinsic == 0:
            M = np.zeros((n, n))
        else:
            M = np.asarray(ops.sparse_matmul(problem.laplacian, K), dtype=float)
            M *= 2.0 * problem.lambda_intrinsic
        M.flat[:: n + 1] += 2.0 * problem.lambda_ambient
        E = np.zeros((n, labeled.size))
        E[labeled, np.arange(labeled.size)] = 1.0
        G = ops.lu_solve(ops.lu_factor(M), E)
        del M
    Q = ops.matmul(K[labeled], G)
    Q = ops.symmetrize(Q)
    return Q, G, K


def solve_lapsvm_dual(problem: ManifoldProblem, *, tol=1e-3, max_iter=-1) -> Solution:
    """Solve every ±1 column of ``problem.targets`` through the dual QP (module docstring).

    ``problem.loss`` is not read: the dual is the hinge loss's.  ``tol`` and ``max_iter`` are
    libsvm's (SMO's KKT tolerance and iteration cap, -1: none).

    Returns
    -------
    Solution
        Expansion over all n points, one column of α and one bias per target column; ``info``
        holds each column's support (labeled rows with β > 0) and libsvm's iteration counts.
    """
    from sklearn.svm import SVC

    Q, G, K = dual_gram(problem)
    labeled = np.flatnonzero(problem.labeled)
    Y = np.asarray(problem.targets)[labeled]
    alpha = np.zeros((problem.X.shape[0], Y.shape[1]))
    bias = np.zeros(Y.shape[1])
    supports, iterations = [], []
    for c in range(Y.shape[1]):
        y = Y[:, c]
        if np.unique(y).size < 2:
            raise ValueError(
                "the LapSVM dual needs labeled points of both signs in every one-vs-rest "
                f"column; column {c} has only {np.unique(y).tolist()}"
            )
        svm = SVC(kernel="precomputed", C=1.0, tol=tol, max_iter=max_iter).fit(Q, y)
        coef = np.zeros(labeled.size)
        coef[svm.support_] = svm.dual_coef_[0]  # y_i β_i
        alpha[:, c] = get_ops().matmul(G, coef)
        bias[c] = svm.intercept_[0]
        supports.append(labeled[svm.support_])
        iterations.append(int(np.sum(svm.n_iter_)))
    train = get_ops().matmul(K, alpha) + bias
    return Solution(
        X_fit=problem.X,
        dual_coef=alpha,
        train_decision=train,
        intercept=bias,
        n_iter=max(iterations, default=0),
        info={
            "system": "lapsvm-dual",
            "n_fit": problem.X.shape[0],
            "support": supports,
            "smo_iterations": iterations,
        },
    )
