"""The kernel protocol: :class:`Kernel`, evaluated densely or in memory-bounded row blocks.

Kernels are scikit-learn estimators holding only hyper-parameters, so ``kernel__gamma`` works in
searches.  :meth:`Kernel.fit` is the protocol every estimator calls once per ``fit``: a fixed
kernel (:mod:`semiscale.kernels.fixed`) only resolves its data-dependent widths; a kernel that
learns from the data (:mod:`semiscale.kernels.data_dependent`) overrides it.

Squared Euclidean distances use ``‖a‖² + ‖b‖² − 2 a·b`` with one BLAS (or sparse) product, clipped
at 0, with exact zeros on the diagonal when ``B`` is ``A``.  In float32 this loses absolute accuracy
of order ``1e-7·‖a‖²`` on near-duplicate points; pass float64 data when that matters.
Inputs must be finite: a cheap sum check rejects NaN/inf with a ``ValueError``.
"""

from __future__ import annotations

import math
from abc import ABCMeta, abstractmethod
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone

from semiscale._bandwidth import (
    LOCAL_NEIGHBOR,
    MEDIAN_SAMPLE_SIZE,
)
from semiscale._pairs import (
    _check_input,
    _Pair,
    result_dtype,
    squared_distances,
)

__all__ = [
    "LOCAL_NEIGHBOR",
    "MEDIAN_SAMPLE_SIZE",
    "Kernel",
    "gamma_from_paper",
    "gamma_from_sigma",
    "result_dtype",
    "sigma_from_gamma",
    "squared_distances",
]

#: numpy's broadcasting in-place ufuncs (``D += b[None, :]``) allocate one 8192-item buffer.
_UFUNC_BUFFER_BYTES = 8192 * 8 + 4096
#: Rows per block of :meth:`Kernel.paired`'s generic fallback (a block's diagonal is kept).
PAIRED_CHUNK = 64


def _row_dots(A, B) -> np.ndarray:
    """``A[i]·B[i]`` for every row (dense or sparse operands, float64)."""
    if sp.issparse(A) or sp.issparse(B):
        return np.asarray(sp.csr_matrix(A).multiply(sp.csr_matrix(B)).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", A, B, dtype=np.float64)


def _row_distances(A, B, metric: str) -> np.ndarray:
    """``‖A[i] − B[i]‖₂²`` (``metric="l2"``) or ``‖A[i] − B[i]‖₁`` for every row."""
    if sp.issparse(A) or sp.issparse(B):
        D = sp.csr_matrix(A, dtype=np.float64) - sp.csr_matrix(B, dtype=np.float64)
        values = D.multiply(D) if metric == "l2" else abs(D)
        return np.asarray(values.sum(axis=1)).ravel()
    D = np.asarray(A, dtype=np.float64) - B
    return np.einsum("ij,ij->i", D, D) if metric == "l2" else np.abs(D).sum(axis=1)


# --------------------------------------------------------------------------- converters
def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not (0 < value < math.inf):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def gamma_from_sigma(sigma) -> float:
    r"""Gamma of ``exp(-γ‖a−b‖²)`` equal to ``exp(-‖a−b‖² / (2σ²))``: :math:`γ = 1/(2σ^2)`."""
    return 1.0 / (2.0 * _positive(sigma, "sigma") ** 2)


def sigma_from_gamma(gamma) -> float:
    r"""Inverse of :func:`gamma_from_sigma`: :math:`σ = 1/\sqrt{2γ}`."""
    return 1.0 / math.sqrt(2.0 * _positive(gamma, "gamma"))


_PAPER_CONVENTIONS = {
    "2sigma2": lambda v: 1.0 / (2.0 * v * v),  # exp(-d²/(2σ²)), papers 000 and 004
    "sigma2": lambda v: 1.0 / (v * v),  # exp(-d²/σ²)
    "beta": lambda v: 1.0 / v,  # exp(-d²/β), paper 001
    "gamma": lambda v: v,  # exp(-γd²), already ours
}


def gamma_from_paper(value, convention: str) -> float:
    """Convert a paper's RBF width to our ``gamma`` in ``exp(-γ‖a−b‖²)``.

    Parameters
    ----------
    value : float
        The paper's parameter (σ for ``"2sigma2"``/``"sigma2"``, β for ``"beta"``), positive.
    convention : {"2sigma2", "sigma2", "beta", "gamma"}
        ``"2sigma2"``: exp(−d²/(2σ²)) → γ = 1/(2σ²) (papers 000, 004);
        ``"sigma2"``: exp(−d²/σ²) → γ = 1/σ²; ``"beta"``: exp(−d²/β) → γ = 1/β (paper 001);
        ``"gamma"``: exp(−γd²) → γ.
    """
    if convention not in _PAPER_CONVENTIONS:
        raise ValueError(
            f"convention must be one of {sorted(_PAPER_CONVENTIONS)}, got {convention!r}"
        )
    return float(_PAPER_CONVENTIONS[convention](_positive(value, "value")))


# --------------------------------------------------------------------------- kernels
class Kernel(BaseEstimator, metaclass=ABCMeta):
    """Base class: ``k(A, B)`` dense, by row blocks under a memory budget, and its diagonal.

    Subclasses implement ``_setup(pair)`` (B-side precomputation), ``_block(pair, rows, state)``
    (``K[rows, :]``), ``_diag(A)``, and the memory hooks ``_row_bytes`` / ``_fixed_bytes``.
    """

    #: k(a, b) depends on a − b only.
    is_stationary = False

    @property
    def kappa2(self):
        """sup_x k(x, x) (1 for RBF/LaplacianKernel), or None when unbounded."""
        return 1.0 if self.is_stationary else None

    def _check_params(self) -> None:
        """Raise ValueError on invalid or unresolved hyper-parameters."""

    @abstractmethod
    def _block(self, pair: _Pair, rows: slice, state) -> np.ndarray:
        """Kernel values for ``pair.A[rows]`` against ``pair.B`` (each subclass's formula)."""

    @abstractmethod
    def _diag(self, A) -> np.ndarray:
        """k(a, a) for every row of A, without forming the matrix."""

    def _resolved_params(self, X, random_state) -> dict:
        return {}

    def resolve(self, X, random_state=None) -> Kernel:
        """Return a copy with data-dependent parameters fixed from ``X`` (self is unchanged).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training points (used only when a parameter is data-dependent).
        random_state : int, RandomState or None
            Seeds the sample of the ``"median"`` heuristic.

        Returns
        -------
        Kernel
            A new kernel of the same class with numeric parameters (an equal copy when they
            already were numeric).

        Raises
        ------
        ValueError
            On an invalid parameter (naming it), or a zero data width (constant/duplicate data).
        """
        new = clone(self).set_params(**self._resolved_params(X, random_state))
        new._check_params()
        return new

    def fit(self, X, y=None, *, laplacian=None, random_state=None) -> Kernel:
        """Return a copy fitted on training data; the copy evaluates between any points.

        This is the protocol every estimator calls (once per ``fit``, result stored as
        ``kernel_``).  A fixed kernel only resolves its data-dependent hyper-parameters
        (:meth:`resolve`).  A kernel that *learns* from data — paper 002's data-dependent kernel,
        a cluster kernel — overrides it: it may read the training points ``X``, the labels ``y``
        (unlabeled points marked as the estimator marks them) and the graph Laplacian on ``X``
        (when the estimator has one), stores what it learned in attributes ending in ``_``,
        and its blocks then give ``k(a, b)`` for any points ``a``, ``b`` (training or new).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training points, labeled and unlabeled.
        y : array-like of shape (n_samples,) or None
            Labels as given to the estimator.
        laplacian : sparse matrix of shape (n_samples, n_samples) or None
            The estimator's graph Laplacian on ``X`` (None without a graph term).
        random_state : int, RandomState or None

        Returns
        -------
        Kernel
            A new kernel; ``self`` is unchanged.
        """
        return self.resolve(X, random_state=random_state)

    def _row_bytes(self, pair: _Pair) -> int:
        return pair.it * pair.B.shape[0] + pair.dot_row_bytes()

    def _fixed_bytes(self, pair: _Pair) -> int:
        return pair.dot_fixed_bytes()

    def _setup(self, pair: _Pair):
        return pair.dot_setup()

    def __call__(self, A, B=None) -> np.ndarray:
        """Dense ``K[i, j] = k(A[i], B[j])`` of shape (len(A), len(B)); B=None means A.

        A and B are ndarrays or sparse matrices (any mix); the result is float32 only when both
        are float32.  For large inputs use :meth:`blocks` or ``semiscale.linalg.kernel_matmul``.
        """
        self._check_params()
        pair = _Pair(A, B)
        return self._block(pair, slice(0, pair.A.shape[0]), self._setup(pair))

    def diag(self, A) -> np.ndarray:
        """``k(A[i], A[i])`` for every row, shape (len(A),), without forming the matrix."""
        self._check_params()
        A = _check_input(A, "A")
        return self._diag(A).astype(result_dtype(A), copy=False)

    def paired(self, A, B) -> np.ndarray:
        """``k(A[i], B[i])`` for every row i, shape (len(A),), without forming ``K(A, B)``.

        O(n·d) for the built-in kernels; other kernels fall back to the diagonals of small
        blocks (:data:`PAIRED_CHUNK` rows at a time).
        """
        self._check_params()
        A, B = _check_input(A, "A"), _check_input(B, "B")
        if A.shape != B.shape:
            raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
        return np.asarray(self._paired(A, B)).astype(result_dtype(A, B), copy=False)

    def _paired(self, A, B) -> np.ndarray:
        out = np.empty(A.shape[0])
        for start in range(0, A.shape[0], PAIRED_CHUNK):
            rows = slice(start, start + PAIRED_CHUNK)
            out[rows] = np.diagonal(self(A[rows], B[rows]))
        return out

    def blocks(self, A, B=None, memory_budget=None, *, out=None, max_rows=None):
        """Iterate over ``(rows, K[rows, :])`` with each block's temporaries within the budget.

        The array-operations layer sizes and streams the blocks
        (:meth:`semiscale.linalg.ops.ArrayOps.kernel_blocks`, on the implementation in use):
        the rows per block are what fits in ``memory_budget`` after the B-side operands, from
        this kernel's memory model (:meth:`_block_plan`).  With ``out`` (a C-contiguous array of
        shape (len(A), len(B)) and the result dtype) every block is written into ``out[rows]``
        and the yielded block is that view: kernels whose block formula can run in place (RBF on
        dense inputs) then skip one copy of the matrix.  ``max_rows`` caps the rows of a block
        below what the budget allows (streamed products use it to keep blocks cache-sized).
        Release each block (``del K``) before asking for the next one, or two blocks are alive
        at once.

        Parameters
        ----------
        A : ndarray or sparse matrix of shape (n_a, n_features)
        B : ndarray or sparse matrix of shape (n_b, n_features), or None (means A)
        memory_budget : int, str or None
            Bytes (or ``"512MB"``) for one block and its temporaries; None is a default fraction
            of the available memory.

        Yields
        ------
        rows : slice
            Rows of A covered by the block.
        K : ndarray of shape (rows.stop - rows.start, n_b)
            ``K(A[rows], B)``, C- or F-ordered, dtype by :func:`result_dtype`.

        Raises
        ------
        MemoryBudgetError
            Before allocating anything, when not one row fits in ``memory_budget``.
        """
        # Imported here: kernels sit below linalg/, which imports nothing from this module.
        from semiscale.linalg.ops import get_ops

        return get_ops().kernel_blocks(self, A, B, memory_budget, out=out, max_rows=max_rows)

    def _block_plan(self, A, B=None):
        """Validated operands and memory model of ``K(A, B)``'s blocks, for the layer to size them.

        Returns ``(pair, row_bytes, fixed_bytes)``: ``row_bytes`` is what one row of a block
        needs (the output row and the distance/product temporaries), ``fixed_bytes`` the B-side
        precomputation made once per product.
        """
        self._check_params()
        pair = _Pair(A, B)
        return pair, self._row_bytes(pair), self._fixed_bytes(pair)

    def _iter_blocks(self, pair: _Pair, rows: int, out=None):
        state = self._setup(pair)
        for start in range(0, pair.A.shape[0], rows):
            sl = slice(start, min(start + rows, pair.A.shape[0]))
            if out is None:
                yield sl, self._block(pair, sl, state)  # no local keeps the block alive
            elif self._block_into(pair, sl, state, out[sl]) is None:
                out[sl] = self._block(pair, sl, state)
                yield sl, out[sl]
            else:
                yield sl, out[sl]

    def _block_into(self, pair: _Pair, rows: slice, state, out):
        """Write the block into ``out`` and return it, or return None when not supported."""
        return None
