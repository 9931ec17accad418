r"""The transformed kernel K̃ of SLapCVM (paper 001 eq. 8): labeled points and edge constraints.

The primal (5)–(7) of the sparsified Laplacian SVM, with the bias folded into the features
(``φ̃(x) = [φ(x); 1]``), has one constraint per labeled point and two per graph edge; its dual
(8) is a QP over the ``m + 2|E|`` *items*

* labeled point i: ``z_i = y_i φ̃(x_i)``;
* edge e = (u, v) with weight w, first copy (multiplier γ_e): ``z_e = ψ̃_e`` and second copy
  (γ*_e): ``−ψ̃_e``, where ``ψ̃_e = √w (φ̃(x_u)/s(u) − φ̃(x_v)/s(v))``, ``s(u) = √d(u)`` for the
  normalized Laplacian and 1 for the unnormalized one (eq. 3), so that its bias coordinate is
  ``τ_e = √w (1/s(u) − 1/s(v))``,

each with its own slack coordinate, and ``K̃_{ab} = z_aᵀ z_b + δ_ab c_a`` with
``c = μm/C`` on labeled items and ``|E|μ/(Cθ)`` on edge items.  Every entry is a combination
of at most four base-kernel values, so a block of K̃ costs O(rows · cols) kernel evaluations
and nothing of size ``(m + 2|E|)²`` is formed.  The paper prints the labeled–edge block as
``y_i φ(x_i)'ψ_e + τ_e``; the product of the two items' features is ``y_i (φ(x_i)'ψ_e + τ_e)``,
which is what is computed here (the extraction dropped the parentheses).

A function ``f = w̃ᵀφ̃`` with ``w̃ = Σ_a c'_a z_a`` is evaluated at new points by
:meth:`SLapCVMKernel.expansion`: the kernel expansion over the labeled points and the two ends
of every edge with a non-zero coefficient, plus the bias.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["SLapCVMKernel", "graph_edges"]


def graph_edges(adjacency, normalized: bool = False):
    """``(u, v, weight, scale)`` of every edge u < v of a symmetric weighted adjacency.

    ``scale`` is s(·) of eq. (3) per *vertex*: √degree with ``normalized``, else ones.

    Raises
    ------
    ValueError
        When the adjacency is not square, not symmetric, or has negative weights.
    """
    W = sp.csr_matrix(adjacency)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {W.shape}")
    if W.nnz and W.data.min() < 0:
        raise ValueError("adjacency has negative edge weights; SLapCVM needs weights >= 0")
    if abs(W - W.T).max() > 1e-12 * max(abs(W).max(), 1e-300):
        raise ValueError("adjacency must be symmetric (an undirected graph)")
    upper = sp.triu(W, k=1).tocoo()
    keep = upper.data > 0
    degree = np.asarray(W.sum(axis=1)).ravel()
    scale = np.sqrt(degree) if normalized else np.ones(W.shape[0])
    if normalized and np.any(degree[upper.row[keep]] == 0):  # pragma: no cover - keep > 0
        raise ValueError("an edge touches a vertex of degree 0")
    return upper.row[keep], upper.col[keep], upper.data[keep], scale


class SLapCVMKernel:
    """K̃ of paper 001 eq. (8) over the items ``[labeled..., edges (γ)..., edges (γ*)...]``.

    Parameters
    ----------
    kernel : Kernel
        A resolved base kernel (``kernel(A, B)`` dense).
    X : ndarray or sparse matrix of shape (n, d)
        All training points.
    labeled : ndarray of int, shape (m,)
        Rows of the labeled points.
    y : ndarray of shape (m,)
        Their targets, ±1.
    edges : tuple
        ``(u, v, weight, scale)`` from :func:`graph_edges`.
    labeled_ridge, edge_ridge : float
        ``μm/C`` and ``|E|μ/(Cθ)``, added on the diagonal of the labeled and edge items.
    nonnegative : bool, default=False
        Whether the base kernel's values are ≥ 0 (the RBF and Laplacian kernels): it tightens
        the bound on the edge items' diagonal that :meth:`eta` prunes with.
    """

    def __init__(
        self, kernel, X, labeled, y, edges, labeled_ridge, edge_ridge, *, nonnegative=False
    ):
        self.kernel = kernel
        self.nonnegative = bool(nonnegative)
        self.X = X
        self.labeled = np.asarray(labeled, dtype=np.intp)
        self.y = np.asarray(y, dtype=float)
        u, v, weight, scale = edges
        # kept in the graph's index dtype: a copy to intp would be a pass over all |E| edges
        self.u, self.v = np.asarray(u), np.asarray(v)
        self.weight = np.asarray(weight, dtype=float)
        scale = np.asarray(scale, dtype=float)
        # None: s ≡ 1 (unnormalized), a_e = b_e = √w_e and τ_e = 0 need no pass over the edges
        self.scale = None if np.all(scale == 1.0) else scale
        self.labeled_ridge, self.edge_ridge = float(labeled_ridge), float(edge_ridge)
        self.m, self.n_edges = self.labeled.size, self.u.size

    def _coefficients(self, e):
        """``(a_e, b_e, τ_e)`` of the edges ``e``: ψ̃_e = a_e φ̃(x_u) − b_e φ̃(x_v), τ_e = a_e − b_e.

        Computed for the edges asked for only, so that a fit touches O(core set + candidates)
        edges per iteration, not all ``|E|``.
        """
        root = np.sqrt(self.weight[e])
        if self.scale is None:
            return root, root, np.zeros_like(root)
        a, b = root / self.scale[self.u[e]], root / self.scale[self.v[e]]
        return a, b, a - b

    @property
    def a(self):
        """a_e of every edge."""
        return self._coefficients(slice(None))[0]

    @property
    def b(self):
        """b_e of every edge."""
        return self._coefficients(slice(None))[1]

    @property
    def tau(self):
        """τ_e = a_e − b_e of every edge (the bias coordinate of ψ̃_e)."""
        return self._coefficients(slice(None))[2]

    @property
    def n_items(self) -> int:
        """``m + 2|E|``."""
        return self.m + 2 * self.n_edges

    def _terms(self, items):
        """Each item as at most two (point row, coefficient) terms plus a bias coefficient.

        Item ``t``'s feature vector is ``Σ coef·φ̃(x_row)`` restricted to φ, plus ``bias`` on
        the bias coordinate: labeled ``y_i φ̃(x_i)``, edge copies ``±(a φ̃(x_u) − b φ̃(x_v))``.
        """
        items = np.asarray(items, dtype=np.intp)
        rows = np.zeros((items.size, 2), dtype=np.intp)
        coef = np.zeros((items.size, 2))
        bias = np.zeros(items.size)
        lab = items < self.m
        rows[lab, 0] = rows[lab, 1] = self.labeled[items[lab]]
        coef[lab, 0] = self.y[items[lab]]
        bias[lab] = self.y[items[lab]]
        edge = ~lab
        e = (items[edge] - self.m) % max(self.n_edges, 1)
        sign = np.where(items[edge] - self.m < self.n_edges, 1.0, -1.0)
        rows[edge, 0], rows[edge, 1] = self.u[e], self.v[e]
        a, b, tau = self._coefficients(e)
        coef[edge, 0], coef[edge, 1] = sign * a, -sign * b
        bias[edge] = sign * tau
        return rows, coef, bias

    def block(self, rows_items, cols_items) -> np.ndarray:
        """``K̃[rows_items][:, cols_items]`` (the slack ridge on equal items included)."""
        r_rows, r_coef, r_bias = self._terms(rows_items)
        c_rows, c_coef, c_bias = self._terms(cols_items)
        r_points, r_inv = np.unique(r_rows, return_inverse=True)
        c_points, c_inv = np.unique(c_rows, return_inverse=True)
        K = np.asarray(self.kernel(self.X[r_points], self.X[c_points]), dtype=float)
        r_inv, c_inv = r_inv.reshape(r_rows.shape), c_inv.reshape(c_rows.shape)
        out = np.multiply.outer(r_bias, c_bias)
        for p in range(2):
            for q in range(2):
                out += K[np.ix_(r_inv[:, p], c_inv[:, q])] * np.multiply.outer(
                    r_coef[:, p], c_coef[:, q]
                )
        same = np.equal.outer(np.asarray(rows_items), np.asarray(cols_items))
        if same.any():
            ridge = np.where(np.asarray(rows_items) < self.m, self.labeled_ridge, self.edge_ridge)
            out += same * ridge[:, None]
        return out

    def diag(self, items=None) -> np.ndarray:
        """``K̃[t, t]`` for the given items (all by default), O(1) kernel values each."""
        items = np.arange(self.n_items) if items is None else np.asarray(items, dtype=np.intp)
        rows, coef, bias = self._terms(items)
        k_uu = self.kernel.diag(self.X[rows[:, 0]])
        k_vv = self.kernel.diag(self.X[rows[:, 1]])
        k_uv = self.kernel.paired(self.X[rows[:, 0]], self.X[rows[:, 1]])
        value = coef[:, 0] ** 2 * k_uu + coef[:, 1] ** 2 * k_vv + 2 * coef[:, 0] * coef[:, 1] * k_uv
        ridge = np.where(items < self.m, self.labeled_ridge, self.edge_ridge)
        return value + bias**2 + ridge

    def eta(self, labeled_linear) -> float:
        r"""``η = max_a (K̃_aa − v_a)`` over every item, v the labeled items' linear terms.

        The center-constrained MEB (9) needs ``Δ_a = η − K̃_aa + v_a ≥ 0`` for every item.  The
        m labeled items are evaluated; the ``2|E|`` edge items (both copies of an edge share their
        diagonal) are first bounded without a kernel evaluation and evaluated only where the
        bound exceeds the largest value found so far.  With ``κ² = sup_x k(x, x)``
        (``kernel.kappa2``, 1 for stationary kernels) and ``|k(x_u, x_v)| ≤ κ²``
        (Cauchy–Schwarz),

        .. math::

            K̃_{ee} = a_e^2 k_{uu} + b_e^2 k_{vv} - 2 a_e b_e k_{uv} + τ_e^2 + c_E
            \le (a_e^2 + b_e^2 + 2 a_e b_e [k \not\ge 0]) κ^2 + τ_e^2 + c_E ,

        the cross term dropping for a kernel with values ≥ 0 (``nonnegative``).  For the
        paper's setting (RBF, unnormalized graph, Gaussian weights w ≤ 1, so
        ``K̃_ee ≤ 2w_e + c_E``) against the labeled items' ``2 + (mμ − 2)/C``, only the edges
        with ``w_e > 1 − (2 − mμ)/(2C) − c_E/2`` are evaluated: the pass is elementwise over
        the ``|E|`` weights, and the kernel evaluations stay few.  A kernel without ``kappa2`` (e.g.
        linear) has every edge evaluated.  The result is the exact maximum either way.

        Parameters
        ----------
        labeled_linear : float or ndarray of shape (m,)
            ``v`` on the labeled items (0 on the edge items).
        """
        linear = np.broadcast_to(np.asarray(labeled_linear, dtype=float), (self.m,))
        eta = float(np.max(self.diag(np.arange(self.m)) - linear)) if self.m else -np.inf
        if self.n_edges == 0:
            return eta
        kappa2 = getattr(self.kernel, "kappa2", None)
        if kappa2 is None:
            check = np.arange(self.n_edges)
        elif self.scale is None:
            # a = b = √w, τ = 0: the bound is (2 or 4)·w·κ² + c_E, one comparison per weight
            factor = (2.0 if self.nonnegative else 4.0) * kappa2
            check = np.flatnonzero(self.weight > (eta - self.edge_ridge) / factor)
        else:
            a, b, tau = self._coefficients(slice(None))
            square = a**2 + b**2
            if not self.nonnegative:
                square += 2.0 * a * b
            bound = square * kappa2 + tau**2 + self.edge_ridge
            check = np.flatnonzero(bound > eta)
        if check.size:
            eta = max(eta, float(self.diag(self.m + check).max()))
        return eta

    def expansion(self, coefficients, items=None):
        """``(points, weights, bias)`` of ``f = Σ_a coefficients_a z_a``'s kernel expansion.

        ``f(x) = Σ_j weights_j k(X[points_j], x) + bias``; items with a zero coefficient add
        nothing, so the expansion is as sparse as the coefficients.  With ``items`` the
        coefficients are those of these items only (the others are zero): O(len(items)) work,
        where a dense vector over all ``m + 2|E|`` items costs a pass over them.
        """
        coefficients = np.asarray(coefficients, dtype=float)
        if items is None:
            items = np.flatnonzero(coefficients)
            coefficients = coefficients[items]
        items = np.asarray(items, dtype=np.intp)
        rows, coef, bias = self._terms(items)
        points, where = np.unique(rows.T.ravel(), return_inverse=True)
        terms = np.concatenate([coefficients * coef[:, 0], coefficients * coef[:, 1]])
        weights = np.bincount(where.ravel(), weights=terms, minlength=points.size)
        keep = weights != 0
        return points[keep], weights[keep], float((coefficients * bias).sum())
