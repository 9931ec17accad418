"""Operand pairs of kernel evaluations: input checks, result dtype and squared distances.

Split out of :mod:`semiscale.kernels` (one concept per module): a kernel block is computed for a
``_Pair`` of validated operands (dense or CSR, any mix), whose product plan and memory needs
live here; :mod:`semiscale.kernels` holds the kernel formulas and heuristics.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from sklearn.metrics.pairwise import manhattan_distances
from sklearn.utils.extmath import row_norms

__all__ = ["result_dtype", "squared_distances"]

_IDX_BYTES = 8  # int64 indices of sparse temporaries (worst case)


# --------------------------------------------------------------------------- inputs
def _all_finite(values) -> bool:
    """True when no entry is NaN/inf: one float64 sum; a full check only if the sum overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(values, dtype=np.float64)):
            return True
    return bool(np.isfinite(values).all())


def _check_input(X, name: str):
    """2-D float32/float64 ndarray or canonical CSR with finite entries (no copy when already so).

    A CSR with duplicate or unsorted entries is copied and summed (never modified in place).
    """
    if sp.issparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        values = X.data
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(
                f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}; "
                "use X.reshape(1, -1) for one sample or X.reshape(-1, 1) for one feature"
            )
        if X.dtype not in (np.float32, np.float64):
            if X.dtype.kind not in "biuf":
                raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
            X = X.astype(np.float64)
        values = X
    if not _all_finite(values):
        raise ValueError(f"{name} contains NaN or infinite values; the kernel needs finite data")
    return X


def _largest_magnitude(values) -> float:
    """max |x| without a temporary (two reductions)."""
    if values.size == 0:
        return 0.0
    return float(max(values.max(), -values.min()))


def _check_magnitude(values, n_features: int, name: str, *, underflow: bool = True) -> None:
    """Refuse values whose squared distances overflow or (``underflow``) underflow.

    Overflow: ``4·d·max|x|² > dtype max``.  Without this check the squared norms become inf,
    their differences NaN, and the error surfaced far away (as "duplicated or constant points",
    or a crash in a graph search).  Underflow: ``0 < max|x| < √(tiny/eps)`` (about 1e-146 in
    float64, 3e-16 in float32), where every squared distance is below the normal range
    (``tiny``) or within a factor ``1/eps`` of it, so distances lose their digits or become 0
    and a bandwidth heuristic reported "duplicated or constant points" for ``X × 1e-170``.
    Exact zeros (constant data) pass: they are reported as such where it matters.  Kernel
    blocks skip the underflow check (``underflow=False``): with a given ``gamma`` a distance
    rounded to 0 gives the right kernel value, 1; the input checks of estimators and graphs
    (``check_X``) and the bandwidth heuristics (:func:`squared_distances`) make it.
    """
    info = np.finfo(values.dtype)
    limit = np.sqrt(info.max / (4.0 * max(int(n_features), 1)))
    largest = _largest_magnitude(values)
    dtype = np.dtype(values.dtype).name
    advice = "rescale the data, e.g. with sklearn.preprocessing.StandardScaler or X / abs(X).max()"
    if largest > limit:
        raise ValueError(
            f"{name} has values too large (max |x| = {largest:.3g}) for squared distances in "
            f"{dtype} (they overflow above about {limit:.3g} with {n_features} features); " + advice
        )
    floor = np.sqrt(float(info.tiny) / float(info.eps))
    if underflow and 0 < largest < floor:
        raise ValueError(
            f"{name} has values too small (max |x| = {largest:.3g}) for squared distances in "
            f"{dtype} (they underflow below about {floor:.3g}: distances would round to 0); "
            + advice
        )


def result_dtype(A, B=None) -> np.dtype:
    """Output dtype of a kernel: float32 only when both inputs are float32, else float64."""
    both32 = getattr(A, "dtype", None) == np.float32 and (
        B is None or getattr(B, "dtype", None) == np.float32
    )
    return np.dtype(np.float32 if both32 else np.float64)


def _cast(X, dtype):
    return X if X.dtype == dtype else X.astype(dtype)


def _sq_norms(X) -> np.ndarray:
    """‖x_i‖² per row without temporaries (sparse: a compiled loop over the stored values)."""
    return row_norms(X, squared=True)


class _Pair:
    """Validated operands of ``K(A, B)`` and the per-row / fixed memory of their product."""

    def __init__(self, A, B):
        self.symmetric = B is None or B is A
        self.A = _check_input(A, "A")
        self.B = self.A if self.symmetric else _check_input(B, "B")
        if self.A.shape[1] != self.B.shape[1]:
            raise ValueError(
                f"A has {self.A.shape[1]} features but B has {self.B.shape[1]}; "
                "both must describe points in the same feature space"
            )
        self.dtype = result_dtype(self.A, self.B)
        self.it = self.dtype.itemsize
        self.n_features = self.A.shape[1]
        #: Common shift of both operands for squared distances (set by :func:`_sq_setup`).
        self.shift = None

    def a_row_bytes(self) -> int:
        """Bytes of one row of A as a cast / contiguous / sparse-sliced copy."""
        A = self.A
        if sp.issparse(A):
            nnz_row = A.nnz // max(A.shape[0], 1) + 1
            return nnz_row * (self.it + _IDX_BYTES) + _IDX_BYTES
        return self.n_features * self.it

    def sparse_result(self) -> bool:
        """Whether sparse ``A`` and ``B`` multiply into a sparse result (plan "ssr").

        Otherwise (plan "ss") each A block is densified, transposed, and multiplied by the CSR
        ``B`` (SciPy's CSR × dense product, no index arithmetic): the dense ``d``-row of A it
        costs is no larger than the sparse result row it replaces, ``(itemsize + 8)·n_b``
        bytes, unless ``d`` is that large (text-like data with few points in ``B``).  A sparse
        result of nearly dense rows spends its time on indices: on a9a (32,561 × 123, 14
        non-zeros a row) a 256-row block against all rows took 0.338 s as a sparse result
        densified, 0.057 s densified first (one thread, median of 3, under the timing lock at
        load 1.3: ``python /tmp/w/HP/micro.py a9a 256``).
        """
        if not (sp.issparse(self.A) and sp.issparse(self.B)):
            return False
        return self.n_features * self.it > (self.it + _IDX_BYTES) * self.B.shape[0]

    def dot_row_bytes(self) -> int:
        """Per-row temporaries of ``A_blk @ B.T`` beyond the output row."""
        extra = self.a_row_bytes() + self.it  # A row (cast/sliced) and its norm
        if sp.issparse(self.B):
            if self.sparse_result():  # sparse result before densifying
                extra += (self.it + _IDX_BYTES) * self.B.shape[0]
            else:  # contiguous (densified) transpose of the A block
                extra += self.n_features * self.it
        return extra

    def dot_fixed_bytes(self) -> int:
        """Bytes of the B-side operands prepared once (cast, transposed, norms)."""
        B, it = self.B, self.it
        n_b = B.shape[0]
        size = B.nnz * (it + _IDX_BYTES) if sp.issparse(B) else n_b * self.n_features * it
        copies = int(B.dtype != self.dtype) + int(sp.issparse(self.A) != sp.issparse(B))
        copies += int(self.sparse_result())  # B.T as CSR
        return copies * size + 2 * n_b * it

    def dot_setup(self):
        B = _cast(self.B, self.dtype)
        if sp.issparse(self.A):
            if not sp.issparse(B):
                return ("sd", np.ascontiguousarray(B.T))
            return ("ssr", B.T.tocsr()) if self.sparse_result() else ("ss", B)
        return ("ds", B) if sp.issparse(B) else ("dd", B)

    def rows(self, rows: slice):
        """``A[rows]`` in the result dtype (a view for dense A of that dtype), less ``shift``
        when squared distances are computed on shifted operands (see :func:`_sq_setup`)."""
        if self.shift is not None:
            return self.A[rows] - self.shift
        return _cast(self.A[rows], self.dtype)

    def dot(self, A_blk, plan) -> np.ndarray:
        """Dense ``A_blk @ B.T`` in the result dtype."""
        kind, Bx = plan
        if kind == "dd":
            return A_blk @ Bx.T
        if kind == "sd":
            return np.asarray(A_blk @ Bx)
        if kind == "ssr":
            return (A_blk @ Bx).toarray()
        if kind == "ss":  # Aᵀ densified straight into C order: (B Aᵀ)ᵀ, an F-ordered block
            return np.asarray(Bx @ A_blk.toarray(order="F").T).T
        return np.asarray(Bx @ np.ascontiguousarray(A_blk.T)).T

    def zero_diagonal(self, D: np.ndarray, rows: slice) -> None:
        """Exact zeros at (i, i) of the full matrix, for a block of rows, when B is A."""
        if self.symmetric:
            i = np.arange(rows.start, min(rows.stop, self.B.shape[0]))
            D[i - rows.start, i] = 0.0


#: Squared distances are computed on operands shifted by B's column mean when
#: ``‖mean‖² > SHIFT_RATIO · (mean squared distance to the mean)``: there the expansion
#: ``‖a‖² + ‖b‖² − 2ab`` would lose about ``log10(ratio)`` digits to cancellation (X + 1e8
#: lost them all).  Below it the results are bitwise those of the raw expansion.
SHIFT_RATIO = 100.0


def _reference_shift(pair: _Pair):
    """B's column mean when the data sit far from the origin relative to their spread, else None.

    Dense operands only (subtracting a dense mean would densify sparse ones).
    """
    if sp.issparse(pair.A) or sp.issparse(pair.B) or pair.B.shape[0] == 0:
        return None
    mean = pair.B.mean(axis=0, dtype=np.float64)
    mean_sq = float(np.square(mean).sum())
    if mean_sq == 0.0:
        return None
    spread = float(row_norms(pair.B, squared=True).mean(dtype=np.float64)) - mean_sq
    if mean_sq <= SHIFT_RATIO * max(spread, 0.0):
        return None
    return mean.astype(pair.dtype)


def _sq_setup(pair: _Pair, *, underflow: bool = False):
    """B-side state of squared distances: the product plan and ‖b_j‖².

    When :func:`_reference_shift` asks for it, the pair is switched to shifted operands first:
    ``pair.shift`` is set (so :meth:`_Pair.rows` returns ``A[rows] − shift``) and the plan and
    norms are those of ``B − shift``.  Distances are unchanged by a common shift; only the
    kernels built on distances (RBF, :func:`squared_distances`) call this.  Operands whose
    squared distances would overflow are refused here, and with ``underflow`` those whose
    distances would all round to 0 (:func:`_check_magnitude`).
    """
    for name, X in (("A", pair.A), ("B", pair.B)):
        _check_magnitude(
            X.data if sp.issparse(X) else X, pair.n_features, name, underflow=underflow
        )
    shift = _reference_shift(pair)
    if shift is not None:
        pair.shift = shift
        B = _cast(pair.B, pair.dtype) - shift
        return ("dd", B), _sq_norms(B)
    return pair.dot_setup(), _sq_norms(_cast(pair.B, pair.dtype))


def _sq_dist_block(pair: _Pair, rows: slice, plan, b_sq: np.ndarray, out=None) -> np.ndarray:
    A_blk = pair.rows(rows)
    # out: dense operands only (see RBF._block_into)
    D = pair.dot(A_blk, plan) if out is None else np.matmul(A_blk, plan[1].T, out=out)
    D *= -2.0
    D += _sq_norms(A_blk)[:, None]
    D += b_sq[None, :]
    np.maximum(D, 0.0, out=D)
    pair.zero_diagonal(D, rows)
    return D


def squared_distances(A, B=None) -> np.ndarray:
    """Squared Euclidean distances ``‖a_i − b_j‖² = ‖a_i‖² + ‖b_j‖² − 2 a_i·b_j`` (clipped at 0).

    Dense ndarray of shape (len(A), len(B)); exact zeros on the diagonal when ``B`` is None or A.
    """
    pair = _Pair(A, B)
    # also refuses values so small that every distance would round to 0 (a bandwidth heuristic
    # would then report "duplicated or constant points")
    return _sq_dist_block(pair, slice(0, pair.A.shape[0]), *_sq_setup(pair, underflow=True))


def _l1_distances(A, B) -> np.ndarray:
    """float64 L1 distances between validated operands (dense/CSR), any mix."""
    if sp.issparse(A) or sp.issparse(B):
        return manhattan_distances(sp.csr_matrix(A), sp.csr_matrix(B))
    return cdist(A, B, "cityblock")
