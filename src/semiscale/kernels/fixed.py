"""The fixed kernels: RBF, Laplacian (L1), linear and polynomial, and :func:`resolve_kernel`.

Each holds only hyper-parameters; data-dependent widths (``gamma="local"``, ``"median"``,
``"mean"``, ``"scale"``) are fixed by :meth:`~semiscale.kernels.Kernel.resolve` from the widths
measured in :mod:`semiscale._bandwidth`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from semiscale._bandwidth import (
    _HEURISTICS,
    SCALE,
    _feature_variance,
    _local_distance,
    _mean_deviation,
    _median_distance,
    _zero_width,
)
from semiscale._pairs import (
    _IDX_BYTES,
    _cast,
    _check_input,
    _l1_distances,
    _sq_dist_block,
    _sq_norms,
    _sq_setup,
)
from semiscale.kernels._base import (
    _UFUNC_BUFFER_BYTES,
    Kernel,
    _positive,
    _row_distances,
    _row_dots,
)

__all__ = ["KERNEL_NAMES", "LaplacianKernel", "Linear", "Polynomial", "RBF", "resolve_kernel"]


class _GammaKernel(Kernel):
    """Stationary kernel ``exp(-γ·dist(a, b))`` whose gamma may name a data-dependent width."""

    is_stationary = True
    _metric = "l2"
    #: The names ``gamma`` accepts, each fixed from the data by :meth:`resolve`.
    _heuristics = _HEURISTICS

    def _check_params(self) -> None:
        g = self.gamma
        if isinstance(g, str):
            if g in self._heuristics:
                raise ValueError(
                    f"{type(self).__name__}(gamma={g!r}) is data-dependent: call "
                    "kernel.resolve(X) first to fix gamma from the data (estimators do this in fit)"
                )
            names = ", ".join(repr(h) for h in self._heuristics)
            hint = (
                "; gamma='scale' (scikit-learn's SVC convention) is RBF's only"
                if g == SCALE
                else ""
            )
            raise ValueError(
                f"{type(self).__name__}: gamma must be a positive float or one of {names}; "
                f"got {g!r}{hint}"
            )
        _positive(g, "gamma")

    def _gamma_from(self, X, random_state) -> float:
        if self.gamma == SCALE:
            variance = _feature_variance(X)
            if not variance > 0:
                raise ValueError(
                    "gamma='scale': the variance of the data is 0 (constant features), so "
                    "1 / (n_features * X.var()) is not finite; pass a numeric gamma"
                )
            return 1.0 / (X.shape[1] * variance)
        if self.gamma == "local":
            width = _local_distance(X, self._metric, random_state)
        elif self.gamma == "median":
            width = _median_distance(X, self._metric, random_state)
        else:
            width = _mean_deviation(X, self._metric)
        if not width > 0:
            raise _zero_width(self.gamma, "L1" if self._metric == "l1" else "Euclidean")
        return self._gamma_from_width(width)

    def _resolved_params(self, X, random_state) -> dict:
        if isinstance(self.gamma, str) and self.gamma in self._heuristics:
            return {"gamma": self._gamma_from(_check_input(X, "X"), random_state)}
        return {}

    def _diag(self, A):
        return np.ones(A.shape[0])

    def _paired(self, A, B):
        return np.exp(-self.gamma * _row_distances(A, B, self._metric))


class RBF(_GammaKernel):
    r"""Gaussian kernel :math:`k(a, b) = \exp(-γ\,‖a − b‖_2^2)`.

    Parameters
    ----------
    gamma : float, "local", "median", "mean" or "scale", default=1.0
        Positive width; γ = 1/(2σ²) (see :func:`gamma_from_sigma`).  ``"local"``: σ = the
        median, over at most ``MEDIAN_SAMPLE_SIZE`` (1,000) sampled points, of the distance from
        each distinct sampled point to its ``LOCAL_NEIGHBOR``-th (8th) nearest other one — the
        data's local scale at the density of a 1,000-point sample, hence of the default
        Nyström centers.  ``"median"``:
        σ = median pairwise Euclidean distance over distinct pairs of at most
        ``MEDIAN_SAMPLE_SIZE`` points (drawn as ``random_state.choice(n, 1000, replace=False)``
        when n is larger), γ = 1/(2σ²).  ``"mean"``: paper 001's
        :math:`β = \frac1n\sum_i ‖x_i − \bar x‖^2` (the mean squared distance of the points to
        their mean), γ = 1/β, i.e. k = exp(−‖a−b‖²/β).  ``"scale"``: what it means in
        scikit-learn's ``SVC``, :math:`γ = 1 / (d\,\mathrm{Var}(X))` with d the number of
        features and Var(X) the variance of all the entries of X together (``X.var()``; a
        sparse X's zeros count), so that standardized data get γ = 1/d.  Constant data
        (Var(X) = 0) raise a ``ValueError`` where ``SVC`` would fall back to γ = 1.  All four
        need :meth:`resolve`.
    """

    _heuristics = (*_HEURISTICS, SCALE)

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def _dense(self, pair):
        return not (sp.issparse(pair.A) or sp.issparse(pair.B))

    def _row_bytes(self, pair):
        # dense operands: the augmented A row [a, 1, −γ‖a‖²] of _block
        extra = (pair.n_features + 2) * pair.it if self._dense(pair) else 0
        return super()._row_bytes(pair) + extra

    def _fixed_bytes(self, pair):
        scaled = (pair.n_features + 2) * pair.B.shape[0] * pair.it if self._dense(pair) else 0
        return pair.dot_fixed_bytes() + _UFUNC_BUFFER_BYTES + scaled

    def _setup(self, pair):
        plan, b_sq = _sq_setup(pair)
        if plan[0] != "dd":
            return plan, b_sq, None
        # Dense operands: the whole exponent −γ‖a − b‖² = [a, 1, −γ‖a‖²]·[2γb, −γ‖b‖², 1] is one
        # matrix product (d + 2 columns), leaving one elementwise pass (exp).  No clip at 0:
        # the exponent's rounding error is ~1e-16·γ(‖a‖² + ‖b‖²) (operands far from the origin
        # are shifted first, SHIFT_RATIO), so near-duplicate pairs get 1 + O(1e-15) instead of
        # 1, while np.minimum cost 0.20 s against exp's 0.35 s per 4e8 float64 entries on one
        # core of this machine (in-cache blocks; issue 12 part 4).
        B = plan[1]
        B_aug = np.empty((B.shape[0], B.shape[1] + 2), dtype=pair.dtype)
        np.multiply(B, 2.0 * self.gamma, out=B_aug[:, :-2])
        B_aug[:, -2] = -self.gamma * b_sq
        B_aug[:, -1] = 1.0
        return plan, b_sq, B_aug

    def _block(self, pair, rows, state, out=None):
        plan, b_sq, B_aug = state
        if B_aug is None:
            K = _sq_dist_block(pair, rows, plan, b_sq, out=out)
            K *= -self.gamma
            return self._exp(K)
        A_blk = pair.rows(rows)
        A_aug = np.empty((A_blk.shape[0], B_aug.shape[1]), dtype=pair.dtype)
        A_aug[:, :-2] = A_blk
        A_aug[:, -2] = 1.0
        A_aug[:, -1] = -self.gamma * _sq_norms(A_blk)
        K = A_aug @ B_aug.T if out is None else np.matmul(A_aug, B_aug.T, out=out)
        pair.zero_diagonal(K, rows)
        return self._exp(K)

    @staticmethod
    def _exp(K):
        """The block's exponential pass, in place (a hook for the kernel_floor study)."""
        return np.exp(K, out=K)

    def _block_into(self, pair, rows, state, out):
        if state[2] is None:  # sparse operands: their products allocate anyway
            return None
        return self._block(pair, rows, state, out)

    def _gamma_from_width(self, width):
        return 1.0 / width if self.gamma == "mean" else 1.0 / (2.0 * width**2)


class LaplacianKernel(_GammaKernel):
    r"""Laplacian kernel :math:`k(a, b) = \exp(-γ\,‖a − b‖_1)` (L1 distance, as scikit-learn's
    ``laplacian_kernel``).

    Named ``LaplacianKernel`` so that it is not mistaken for the graph Laplacian
    (:func:`semiscale.graph.laplacian`); the old name ``Laplacian`` still works for one
    release, with a ``FutureWarning``.

    Parameters
    ----------
    gamma : float, "local", "median" or "mean", default=1.0
        Positive rate.  ``"local"``: γ = 1/m with m the median L1 distance from each of at most
        ``MEDIAN_SAMPLE_SIZE`` distinct sampled points to its ``LOCAL_NEIGHBOR``-th nearest
        other one.  ``"median"``: γ = 1/m with m the median pairwise L1 distance over a sample
        of at most ``MEDIAN_SAMPLE_SIZE`` points (so k = e⁻¹ at the median distance).
        ``"mean"``: γ = 1/β₁ with :math:`β_1 = \frac1n\sum_i ‖x_i − \bar x‖_1`, the L1
        analogue of paper 001's β.  All three need :meth:`resolve`.
    """

    _metric = "l1"

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def _row_bytes(self, pair):
        # float64 distance row (+ the float32 output row when cast) + a copy of the A row
        cast_row = pair.it * pair.B.shape[0] if pair.dtype != np.float64 else 0
        return 8 * pair.B.shape[0] + cast_row + pair.n_features * (8 + _IDX_BYTES)

    def _fixed_bytes(self, pair):
        B = pair.B
        if sp.issparse(pair.A) or sp.issparse(B):  # B as canonical CSR of the result dtype
            return (B.nnz if sp.issparse(B) else B.size) * (pair.it + _IDX_BYTES)
        return B.size * 8 * (B.dtype != np.float64)  # B as float64 for cdist

    def _setup(self, pair):
        B = pair.B
        if sp.issparse(pair.A) or sp.issparse(B):
            return sp.csr_matrix(B, dtype=pair.dtype)
        return _cast(B, np.float64)

    def _block(self, pair, rows, B):
        A_blk = pair.A[rows]
        if sp.issparse(B):
            A_blk = sp.csr_matrix(A_blk, dtype=pair.dtype)
        K = _l1_distances(A_blk, B)
        pair.zero_diagonal(K, rows)
        K *= -self.gamma
        np.exp(K, out=K)
        return K.astype(pair.dtype, copy=False)

    def _gamma_from_width(self, width):
        return 1.0 / width


class Linear(Kernel):
    r"""Linear kernel :math:`k(a, b) = a·b` (no hyper-parameters)."""

    def _block(self, pair, rows, plan):
        return pair.dot(pair.rows(rows), plan)

    def _diag(self, A):
        return _sq_norms(A)

    def _paired(self, A, B):
        return _row_dots(A, B)


class Polynomial(Kernel):
    r"""Polynomial kernel :math:`k(a, b) = (γ\,a·b + c_0)^d`.

    Parameters
    ----------
    degree : int, default=3
        Positive integer d.
    gamma : float, default=1.0
        Positive scale γ.
    coef0 : float, default=1.0
        Offset c₀ ≥ 0 (a negative offset breaks positive semi-definiteness).
    """

    def __init__(self, degree=3, gamma=1.0, coef0=1.0):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0

    def _check_params(self) -> None:
        if (
            isinstance(self.degree, bool)
            or not isinstance(self.degree, Integral)
            or self.degree < 1
        ):
            raise ValueError(f"degree must be a positive integer, got {self.degree!r}")
        _positive(self.gamma, "gamma")
        c = self.coef0
        if isinstance(c, bool) or not isinstance(c, Real) or not (0 <= c < math.inf):
            raise ValueError(f"coef0 must be a finite number >= 0, got {c!r}")

    def _block(self, pair, rows, plan):
        K = pair.dot(pair.rows(rows), plan)
        K *= self.gamma
        K += self.coef0
        return np.power(K, int(self.degree), out=K)

    def _diag(self, A):
        return (self.gamma * _sq_norms(A) + self.coef0) ** int(self.degree)

    def _paired(self, A, B):
        return (self.gamma * _row_dots(A, B) + self.coef0) ** int(self.degree)


#: The names :func:`resolve_kernel` accepts (scikit-learn's spellings, as in ``SVC(kernel=...)``
#: and ``pairwise_kernels(metric=...)``) and the class each names.
KERNEL_NAMES = MappingProxyType(
    {
        "rbf": RBF,
        "laplacian": LaplacianKernel,
        "linear": Linear,
        "poly": Polynomial,
        "polynomial": Polynomial,
    }
)


def resolve_kernel(kernel, *, gamma=None, param: str = "kernel") -> Kernel:
    """Turn a kernel's name or a kernel object into a kernel object.

    Lets an estimator's ``kernel`` parameter take ``"rbf"`` as scikit-learn's ``SVC`` does,
    beside a :class:`Kernel` instance.

    Parameters
    ----------
    kernel : Kernel or str
        A :class:`Kernel` instance, returned as it is (not copied), or one of the names of
        ``KERNEL_NAMES``: ``"rbf"`` (:class:`RBF`), ``"laplacian"``
        (:class:`LaplacianKernel`), ``"linear"`` (:class:`Linear`), ``"poly"`` or
        ``"polynomial"`` (:class:`Polynomial`), each built with its default parameters.
    gamma : float, str or None, default=None
        The ``gamma`` of a kernel built from a name that has one (RBF, Laplacian, polynomial;
        ignored for ``"linear"`` and for a kernel instance), e.g. the estimator's default width
        ``"local"``; None keeps the class's default.
    param : str, default="kernel"
        The parameter's name, for the error messages.

    Returns
    -------
    Kernel

    Raises
    ------
    ValueError
        For a string that names no kernel (the message lists the names).
    TypeError
        For anything else than a string or a :class:`Kernel`.

    Examples
    --------
    >>> from semiscale.kernels import RBF, resolve_kernel
    >>> resolve_kernel("rbf", gamma="local")
    RBF(gamma='local')
    >>> k = RBF(gamma=0.5)
    >>> resolve_kernel(k) is k
    True
    """
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str):
        if kernel not in KERNEL_NAMES:
            names = ", ".join(repr(name) for name in KERNEL_NAMES)
            raise ValueError(
                f"{param}={kernel!r} names no semiscale kernel: use one of {names}, or pass a "
                "kernel object from semiscale.kernels (e.g. RBF(gamma=0.5))"
            )
        cls = KERNEL_NAMES[kernel]
        if gamma is None or cls is Linear:
            return cls()
        return cls(gamma=gamma)
    raise TypeError(
        f"{param} must be a semiscale.kernels.Kernel instance or one of the names "
        f"{sorted(KERNEL_NAMES)}; got {type(kernel).__name__} {kernel!r}"
    )
