"""The tests' dense oracles: reference answers written independently of the library's code.

Dense O(n²)–O(n³) formulas (kernels, Laplacians, Hessians, graph weights, random walks) and
brute-force minimisers (L-BFGS on the full objective) for small problems; the problems
themselves are in ``reference_problems.py``.  A test compares a fast path against one of these
rather than defining its own reference.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize


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


def balanced_class_targets(y_ssl, unlabeled=-1):
    """The classifiers' targets, written out row by row (issue 12, part 3).

    Labeled row i of class c (n_c labels of that class, l labels in all, C classes): column k is
    ``(1[k == c] - 1/C) · l / (C · n_c)``; binary problems keep one column, ``±l / (2 n_c)``
    (+ for the larger class label).  Unlabeled rows are 0.
    """
    y_ssl = np.asarray(y_ssl)
    labeled = y_ssl != unlabeled
    classes = np.unique(y_ssl[labeled])
    C, l = len(classes), int(labeled.sum())
    counts = {c: int((y_ssl == c).sum()) for c in classes}
    Y = np.zeros((y_ssl.shape[0], 1 if C == 2 else C))
    for i in np.flatnonzero(labeled):
        c = y_ssl[i]
        if C == 2:
            Y[i, 0] = (1.0 if c == classes[1] else -1.0) * l / (2 * counts[c])
        else:
            for k, ck in enumerate(classes):
                Y[i, k] = ((1.0 if ck == c else 0.0) - 1.0 / C) * l / (C * counts[c])
    return Y


def zero_mean_class_targets(y_ssl, unlabeled=-1):
    """The classifiers' default targets, row by row: labeled row i of class c has column k
    ``1[k == c] - l_k / l`` (``l_k`` labels of class k among ``l``); binary problems keep one
    column, ``2 (1[c == larger label] - l_1 / l)``.  Unlabeled rows are 0.
    """
    y_ssl = np.asarray(y_ssl)
    labeled = y_ssl != unlabeled
    classes = np.unique(y_ssl[labeled])
    C, l = len(classes), int(labeled.sum())
    share = {c: (y_ssl == c).sum() / l for c in classes}
    Y = np.zeros((y_ssl.shape[0], 1 if C == 2 else C))
    for i in np.flatnonzero(labeled):
        c = y_ssl[i]
        if C == 2:
            Y[i, 0] = 2.0 * ((1.0 if c == classes[1] else 0.0) - share[classes[1]])
        else:
            for k, ck in enumerate(classes):
                Y[i, k] = (1.0 if ck == c else 0.0) - share[ck]
    return Y


def add_labeled_prior(F, y_ssl, unlabeled=-1):
    """The classifiers' decision from their centred zero-mean fit F: ``α F + prior``.

    ``α = Σ F_l Y_l / Σ F_l²`` over the labeled rows and every column (``Y`` the zero-mean
    targets of :func:`zero_mean_class_targets`), ``prior`` the labeled class proportions
    (binary: ``l_1/l − l_0/l`` added to the one column).
    """
    y_ssl = np.asarray(y_ssl)
    F = np.asarray(F, dtype=float).reshape(F.shape[0], -1)
    labeled = y_ssl != unlabeled
    Y = zero_mean_class_targets(y_ssl, unlabeled)
    alpha = np.sum(F[labeled] * Y[labeled]) / np.sum(F[labeled] ** 2)
    classes = np.unique(y_ssl[labeled])
    prior = np.array([(y_ssl == c).sum() for c in classes]) / labeled.sum()
    if classes.size == 2:
        prior = prior[1:] - prior[:1]
    return alpha * F + prior


def centre_by_degree(F, L):
    """Each column of F minus its diag(L)-weighted mean over the rows."""
    d = np.asarray(L.diagonal()).ravel()
    F = np.asarray(F, dtype=float).reshape(F.shape[0], -1)
    return F - (d @ F) / d.sum()


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
    """``H = K_msᵀK_ms + λ_A K_ss + λ_I K_nsᵀ L K_ns`` with ``K_ns`` formed whole (small n only).

    The dense reference of :class:`semiscale.linalg.NystromLapRLSHessian` (paper 000 eq. 4).
    ``centers`` are row indices into X, or the center points themselves (2-D);
    ``labeled_index`` indices or a boolean mask.  With ``label_weights`` ``R`` (n × m),
    ``K_ms`` is ``Rᵀ K_ns``.
    """
    centers = np.asarray(centers)
    C = X[centers] if centers.ndim == 1 else centers
    K_ns = np.asarray(kernel(X, C), dtype=np.float64)
    if label_weights is None:
        labeled = np.asarray(labeled_index)
        K_ms = K_ns[np.flatnonzero(labeled) if labeled.dtype == bool else labeled]
    else:
        K_ms = np.asarray(sp.csr_matrix(label_weights).T @ K_ns)
    H = K_ms.T @ K_ms + ambient_lambda * np.asarray(kernel(C, C), dtype=np.float64)
    if laplacian is not None and intrinsic_lambda > 0:
        H += intrinsic_lambda * (K_ns.T @ np.asarray(laplacian @ K_ns))
    return (H + H.T) / 2


def manifold_objective_minimum(
    X, y, labeled, L, loss, lam_a, lam_i, kernel, centers=None, intercept=False
):
    """Minimum of Σ_labeled loss + λ_A αᵀK_ssα + λ_I fᵀLf over (α, b), by L-BFGS (small n).

    ``f = K_ns α + b`` over the ``centers`` (row indices; None: every point), ``b = 0`` without
    ``intercept``, ``L`` a Laplacian or None (no graph term).  Returns ``(minimum, fun)`` with
    ``fun(np.append(α, b))`` → ``(value, gradient)``, to evaluate a solver's answer on the same
    objective.
    """
    C = X if centers is None else X[centers]
    K_ns, K_ss = kernel(X, C), kernel(C, C)
    lab = np.flatnonzero(labeled)
    L = sp.csr_matrix((X.shape[0], X.shape[0])) if L is None else L

    def fun(theta):
        alpha, b = theta[:-1], theta[-1] if intercept else 0.0
        f = K_ns @ alpha + b
        Lf = L @ f
        value = loss.value(y[lab], f[lab]).sum() + lam_a * alpha @ K_ss @ alpha + lam_i * f @ Lf
        g_f = np.zeros_like(f)
        g_f[lab] = loss.derivative(y[lab], f[lab])
        g_f += 2 * lam_i * Lf
        grad = np.append(K_ns.T @ g_f + 2 * lam_a * K_ss @ alpha, g_f.sum() if intercept else 0.0)
        return value, grad

    result = minimize(
        fun,
        np.zeros(C.shape[0] + 1),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10},
    )
    return result.fun, fun


def dense_harmonic(L, y_ssl, n_classes):
    """Laplace learning's unlabeled rows: ``F_u`` solving ``L_uu F_u = −L_ul Y_l`` (dense ``L``)."""
    lab, unl = y_ssl >= 0, y_ssl < 0
    Y = np.eye(n_classes)[y_ssl[lab]]
    return np.linalg.solve(L[np.ix_(unl, unl)], -L[np.ix_(unl, lab)] @ Y)


def dense_poisson(L, y_ssl, n_classes):
    """Poisson learning by the pseudo-inverse of the dense ``L``: ``U = L⁺ B``, normalized to
    ``Σ_i d_i U_ic = 0`` (Calder et al.), ``B`` the labeled rows' centred one-hot sources."""
    lab = np.flatnonzero(y_ssl >= 0)
    Y = np.eye(n_classes)[y_ssl[lab]]
    B = np.zeros((L.shape[0], n_classes))
    B[lab] = Y - Y.mean(axis=0)
    U = np.linalg.pinv(L) @ B
    d = np.diag(L)
    return U - d @ U / d.sum()


# ---------------------------------------------------------------------------- graphs
def dense_knn(X, k):
    """All pairwise distances, the k nearest other points' edges and σ_i (the k-th distance)."""
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1)[:, :k]
    sigma = np.take_along_axis(D, order[:, -1:], axis=1).ravel()
    rows = np.repeat(np.arange(X.shape[0]), k)
    return D, rows, order.ravel(), sigma


def dense_self_tuning(X, k, symmetrize):
    """Dense reference: all pairwise distances, σ_i = distance to the k-th other point."""
    D, rows, cols, sigma = dense_knn(X, k)
    A = np.zeros_like(D)
    A[rows, cols] = np.exp(-(D[rows, cols] ** 2) / (sigma[rows] * sigma[cols]))
    W = np.maximum(A, A.T) if symmetrize == "union" else np.minimum(A, A.T)
    return W, sigma


def dense_kth_gaussian(X, k, symmetrize):
    """Dense reference of GraphLearning's graph: exp(−4 d_ij² / σ_i²) per directed edge."""
    D, rows, cols, sigma = dense_knn(X, k)
    A = np.zeros_like(D)
    A[rows, cols] = np.exp(-4 * D[rows, cols] ** 2 / sigma[rows] ** 2)
    rule = {"average": lambda A: (A + A.T) / 2, "union": lambda A: np.maximum(A, A.T)}
    return rule[symmetrize](A), sigma


def dense_walk_weights(L, labeled, steps):
    """Label diffusion's weights R, densely: per labeled point, m − 1 steps of the random walk
    T = D⁻¹W and a lazy last step, mass reaching another labeled row sent home."""
    L = sp.csr_matrix(L).toarray()
    W = np.maximum(-(L - np.diag(np.diag(L))), 0)
    d = W.sum(axis=1)
    T = np.where(d[:, None] > 0, W / np.where(d > 0, d, 1)[:, None], np.eye(len(d)))
    R = np.zeros((len(d), len(labeled)))
    for j, i in enumerate(labeled):
        p = np.eye(len(d))[i]
        others = [o for o in labeled if o != i]
        for step in range(steps):
            p = T.T @ p if step < steps - 1 else 0.5 * (p + T.T @ p)
            p[i] += p[others].sum()
            p[others] = 0.0
        R[:, j] = p
    return R


# ----------------------------------------------------------------- estimators' models
def graph_extension(model, X_train, X_new, k, sigma):
    """``out_of_sample="graph"`` written out point by point: the heat-weighted mean of the k
    nearest training decisions (σ: their mean distance unless given)."""
    F = model.decision_function(X_train)
    F = F[:, None] if F.ndim == 1 else F
    out = []
    for x in X_new:
        d = np.sqrt(((X_train - x) ** 2).sum(axis=1))
        near = np.argsort(d, kind="stable")[:k]
        if d[near[0]] == 0.0:
            out.append(F[near[0]])
            continue
        s = d[near].mean() if sigma is None else sigma
        w = np.exp(-(d[near] ** 2) / (2 * s**2))
        out.append(w @ F[near] / w.sum())
    out = np.array(out)
    return out[:, 0] if out.shape[1] == 1 else out


def slapcvm_primal_minimiser(K, labeled, targets, edges, C, mu, theta, regression):
    """``f`` at the minimiser of primal (5) (classification) or its regression form, over
    ``f = Σ_j a_j k(x_j, ·) + b`` on all points and a free tube ε̄, by L-BFGS (every term is
    a squared hinge, so the objective is C¹ and convex)."""
    u, v, w, _ = edges
    m, n_edges = labeled.size, u.size
    lab_w, edge_w = C / (m * mu), C * theta / (max(n_edges, 1) * mu)
    root = np.sqrt(w)

    def objective(params):
        a, b, eps = params[:-2], params[-2], params[-1]
        f = K @ a + b
        g_f = np.zeros_like(f)
        value, g_eps = a @ K @ a + b * b + 2 * C * eps, 2 * C
        if regression:
            pairs = [(targets - f[labeled], -1.0), (f[labeled] - targets, 1.0)]
        else:
            pairs = [(1.0 - targets * f[labeled], -targets)]
        for residual, d_f in pairs:  # slack = max(0, residual - ε̄), d residual / d f = d_f
            slack = np.maximum(0.0, residual - eps)
            value += lab_w * slack @ slack
            np.add.at(g_f, labeled, 2 * lab_w * slack * d_f)
            g_eps -= 2 * lab_w * slack.sum()
        diff = root * (f[u] - f[v])
        for sign in (1.0, -1.0):
            slack = np.maximum(0.0, sign * diff - eps)
            value += edge_w * slack @ slack
            np.add.at(g_f, u, 2 * edge_w * slack * sign * root)
            np.add.at(g_f, v, -2 * edge_w * slack * sign * root)
            g_eps -= 2 * edge_w * slack.sum()
        return value, np.r_[2 * K @ a + K @ g_f, 2 * b + g_f.sum(), g_eps]

    res = minimize(
        objective,
        np.zeros(K.shape[0] + 2),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 50000, "ftol": 1e-15, "gtol": 1e-11},
    )
    return K @ res.x[:-2] + res.x[-2]


def data_dependent_kernel(K_ab, K_sa, K_sb, K_ss, Q_hat, eta):
    """Paper 002's eq. (6) (eq. (4) with every point a landmark), literally.

    ``K(a, b) − η k̂_aᵀ (I + η Q̂ K̂)⁻¹ Q̂ k̂_b`` with a dense LU solve of the non-symmetric
    ``I + η Q̂ K̂``; ``K_sa`` is ``K(landmarks, A)``.
    """
    n_hat = K_ss.shape[0]
    inner = np.linalg.solve(np.eye(n_hat) + eta * Q_hat @ K_ss, Q_hat)
    return K_ab - eta * K_sa.T @ inner @ K_sb


def landmark_regularizer(L, ridge, power, landmarks):
    """Eq. (7): ``Q̂ = ((Q⁻¹)_{ss})⁺`` with ``Q = (L + ridge·I)^p`` formed densely and inverted."""
    Ld = L.toarray() if hasattr(L, "toarray") else np.asarray(L)
    Q = np.linalg.matrix_power(Ld + ridge * np.eye(Ld.shape[0]), power)
    return np.linalg.pinv(np.linalg.inv(Q)[np.ix_(landmarks, landmarks)], hermitian=True)
