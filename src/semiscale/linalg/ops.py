r"""The array-operations layer: every heavy product of semiscale goes through one object.

:class:`ArrayOps` holds the heavy operations as methods — kernel blocks fused with the product
they feed (``K(A, B)·V``, ``K(A, B)ᵀ·U``, ``K(A, B)`` filled into a cache), the distance GEMMs of
the brute-force kNN search, dense products, the factorizations (jittered Cholesky, LAUUM, SYRK
updates), triangular, Cholesky, LU and least-squares solves, and the two assembled systems of
the LapRLS solvers (the exact system in place, a dense matrix from an operator); the dense
factorizations and solves are written in ``semiscale.linalg._dense_ops``.  The methods
alone decide block sizes under a ``memory_budget`` and how many threads run; callers describe
what they need (the bytes one row or column of their own temporaries takes) and the layer
answers.

The library asks for the current implementation with :func:`get_ops` at each call, so another
array namespace replaces the whole layer at once:

>>> from semiscale.linalg.ops import ArrayOps, get_ops, use_ops
>>> class CountingOps(ArrayOps):
...     calls = 0
...     def kernel_matmul(self, *args, **kwargs):
...         type(self).calls += 1
...         return super().kernel_matmul(*args, **kwargs)
>>> with use_ops(CountingOps()):
...     isinstance(get_ops(), CountingOps)
True

A backend (Dask arrays, torch tensors) subclasses :class:`ArrayOps` and overrides the methods it
accelerates; the rest fall back to NumPy/SciPy.  This is the split of FALKON (kernels,
preconditioners and solvers written around one blocked kernel–matrix product, ``mmv``, and a few
LAPACK helpers) with the switching of scikit-learn's ``config_context``: :func:`use_ops` sets the
implementation for the current thread (context) only, like ``config_context``; :func:`set_ops`
changes the process-wide default that every thread without a :func:`use_ops` sees.  The layer's
own worker threads never look the implementation up: a method runs entirely in the object it was
called on.

Conventions: arrays are NumPy ndarrays (dense) or SciPy sparse matrices; factors are lower
triangular (``L Lᵀ = A``); "lower triangle only" results (:meth:`ArrayOps.syrk`,
:meth:`ArrayOps.lauum`) leave their upper triangle unspecified, as LAPACK does.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .._memory import block_rows, row_slices
from .._parallel import blas_threads, resolve_n_jobs
from . import streaming
from ._dense_ops import DenseAlgebra

__all__ = ["ArrayOps", "get_ops", "set_ops", "use_ops"]


class ArrayOps(DenseAlgebra):
    """NumPy/SciPy implementation of the heavy operations; subclass it to replace them.

    Every method is a pure function of its arguments (no state is kept between calls), so one
    instance serves any number of estimators and threads.  The dense factorizations and solves
    (:meth:`jittered_cholesky` … :meth:`lstsq`, :meth:`syrk`, :meth:`lauum`) are inherited from
    ``semiscale.linalg._dense_ops.DenseAlgebra``.
    """

    #: Short name of the implementation (reports, benchmarks).
    name = "numpy"

    # ------------------------------------------------------------------ memory and threads
    def block_rows(self, n_rows, bytes_per_row, memory_budget=None, *, what="block", reserved=0):
        """Rows of a block whose temporaries (``bytes_per_row`` each) fit in ``memory_budget``.

        For blocked loops that are not one of the fused operations below (e.g. the Jacobi
        diagonal's row blocks of ``L K_ns``).  At least 1, at most ``n_rows``.

        Raises
        ------
        MemoryBudgetError
            When not one row fits.
        """
        return block_rows(n_rows, bytes_per_row, memory_budget, what=what, reserved=reserved)

    def row_blocks(self, n_rows, bytes_per_row, memory_budget=None, *, what="block", reserved=0):
        """The slices of ``range(n_rows)`` in blocks of :meth:`block_rows` rows."""
        rows = self.block_rows(n_rows, bytes_per_row, memory_budget, what=what, reserved=reserved)
        return list(row_slices(n_rows, rows))

    # ------------------------------------------------------------------ where the data lives
    def resident(self):
        """Context manager: the scope (one fit, one prediction) in which copies may be kept.

        A backend whose products run elsewhere (a GPU) may keep copies of the host arrays it is
        handed again and again (``X``, the Laplacian, the ``s × s`` factors) so that a solver's
        iterations do not send them at every call.  It may do so only inside this scope and
        drops every copy when the outermost scope exits: between two scopes the caller may change
        its arrays in place, and the next call sees the change.  Outside a scope every call
        converts its operands afresh.  The library opens one around each fit of the Nyström
        estimators (:meth:`semiscale.models.NystromLapRLSRegressor.fit` and the others sharing
        its solve).  NumPy keeps nothing: here a null context.
        """
        return contextlib.nullcontext()

    def kernel_cache_pays(self, nbytes) -> bool:
        """Whether a solver should keep a kernel matrix of ``nbytes`` (``K_ns``) on the host.

        Asked by :class:`~semiscale.linalg.operators.NystromLapRLSHessian` (``cache="auto"``)
        once the cache fits ``memory_budget``: a cached ``K_ns`` turns every kernel product into
        a :meth:`matmul`, which pays where the matrix is read where it lies.  A backend whose
        products run on another device answers whether its copy of the matrix can stay there;
        one that would send it over the bus at every product says no, and the kernel blocks
        are recomputed on the device instead.  NumPy: always.
        """
        return True

    def blas_threads(self, limit):
        """Context manager: BLAS limited to ``limit`` threads inside (None: unchanged)."""
        return blas_threads(limit)

    def n_threads(self, n_jobs):
        """Threads for ``n_jobs`` (None or −1: all cores, −m: all but m − 1)."""
        return resolve_n_jobs(n_jobs)

    # ------------------------------------------------------------------ kernel products
    def kernel_block_rows(self, kernel, A, B=None, memory_budget=None, *, max_rows=None):
        """Rows per block of ``K(A, B)`` in ``memory_budget`` (nothing is computed).

        The budget covers one block and its temporaries after the kernel's B-side operands
        (:meth:`semiscale.kernels.Kernel._block_plan` describes them).

        Raises
        ------
        MemoryBudgetError
            When not one row fits.
        """
        return streaming.kernel_block_rows(kernel, A, B, memory_budget, max_rows=max_rows)[1]

    def kernel_blocks(self, kernel, A, B=None, memory_budget=None, *, out=None, max_rows=None):
        """Iterator over ``(rows, K(A[rows], B))`` with each block's temporaries in the budget.

        Parameters
        ----------
        kernel : Kernel
            A resolved kernel.
        A : ndarray or sparse matrix of shape (n_a, d)
        B : ndarray, sparse matrix of shape (n_b, d), or None
            None means ``A`` (exact zero self-distances).
        memory_budget : int, str or None
            Bytes for one block and its temporaries.
        out : ndarray of shape (n_a, n_b), optional
            C-contiguous, of the result dtype: every block is written into ``out[rows]`` and the
            yielded block is that view (RBF on dense inputs computes it there in place).
        max_rows : int, optional
            Cap on the rows of a block below what the budget allows.

        Raises
        ------
        MemoryBudgetError
            Before allocating anything, when not one row fits.
        """
        return streaming.kernel_blocks(kernel, A, B, memory_budget, out=out, max_rows=max_rows)

    def kernel_matmul(self, kernel, A, B, V, memory_budget=None, n_jobs=1):
        r""":math:`K(A, B)\,V` without forming :math:`K(A, B)`.

        ``out[rows] = K(A[rows], B) @ V`` block by block, each kernel block written straight
        into the result by BLAS and released before the next.

        Parameters
        ----------
        kernel : Kernel
        A : ndarray or sparse matrix of shape (n_a, d)
        B : ndarray, sparse matrix of shape (n_b, d), or None (means ``A``)
        V : ndarray of shape (n_b,) or (n_b, r)
        memory_budget : int, str or None
            Bytes for the kernel blocks and the product's temporaries (not the result).
        n_jobs : int or None, default=1
            Threads (:mod:`semiscale.linalg.streaming`); None = all cores.

        Returns
        -------
        ndarray of shape (n_a,) or (n_a, r)
            float32 only when A and B are both float32, else float64.

        Raises
        ------
        MemoryBudgetError
            Before allocating a block, when not one row of it fits.
        """
        return streaming.kernel_matmul(kernel, A, B, V, memory_budget, n_jobs)

    def kernel_rmatmul(self, kernel, A, B, U, memory_budget=None, n_jobs=1):
        r""":math:`K(A, B)^\top U = \sum_{\text{blocks}} K(A_{rows}, B)^\top U_{rows}`.

        Same parameters as :meth:`kernel_matmul` with ``U`` of shape (n_a,) or (n_a, r); the
        budget also covers the (n_b, r) accumulation buffers (two per thread).  With threads the
        chunks' sums are added in order, so the result is reproducible for a given ``n_jobs``.
        """
        return streaming.kernel_rmatmul(kernel, A, B, U, memory_budget, n_jobs)

    def kernel_row_sums(self, kernel, X, memory_budget=None, n_jobs=1):
        r"""The row sums :math:`d_i = \sum_j K(x_i, x_j)` of the symmetric ``K(X, X)``.

        :meth:`kernel_matmul` of ``K(X, X)`` with a vector of ones, computing only the square
        tiles on and above the diagonal: a tile ``(I, J)``, ``I < J``, adds its row sums to
        :math:`d_I` and its column sums to :math:`d_J`, a diagonal tile its row sums.  Half the
        kernel entries of :meth:`kernel_matmul` (``n(n + t)/2`` for tiles of ``t`` rows: the
        distance products and the exponentials).  ``K`` must be symmetric, as every kernel of
        :mod:`semiscale.kernels` is.

        Parameters
        ----------
        kernel : Kernel
            A resolved kernel.
        X : ndarray or sparse matrix of shape (n, d)
        memory_budget : int, str or None
            Bytes for the tiles' blocks and operands, the threads' partial sums (``8n`` each
            beyond the result) and, for sparse ``X``, the tiles' row copies.  Never more than
            :meth:`kernel_matmul` of ``K(X, X)`` needs: a tile's ``B``-side operands are those of
            ``t`` rows, not ``n``.
        n_jobs : int or None, default=1
            Threads, each summing a contiguous run of tiles with single-threaded BLAS.

        Returns
        -------
        ndarray of shape (n,), float64
            Blocks are computed in the kernel's result dtype (float32 for float32 ``X``) and
            summed in float64.

        Raises
        ------
        MemoryBudgetError
            Before allocating a block, when not one row of a tile fits.
        """
        return streaming.kernel_row_sums(kernel, X, memory_budget, n_jobs)

    def kernel_matrix(self, kernel, A, B=None, memory_budget=None, n_jobs=1):
        """The dense ``K(A, B)`` (a cache such as ``K_ns``, or ``K`` of a dense solve).

        Filled block by block in place; the result itself must fit in ``memory_budget`` with
        room left for one block of temporaries per thread.

        Raises
        ------
        MemoryBudgetError
            Before allocating, when the matrix does not fit.
        """
        return streaming.kernel_matrix(kernel, A, B, memory_budget, n_jobs)

    # ------------------------------------------------------------------ distance scans
    def sq_distance_scan(
        self, X, sq, queries, reduce, *, row_bytes=0, memory_budget=None, n_jobs=1
    ):
        r"""Stream the squared-distance blocks of a kNN search into ``reduce``.

        For a block ``Q`` of ``queries`` the distance GEMM gives

        .. math::

            G_{ij} = \|x_j\|^2 - 2\, x_{Q_i}^\top x_j \quad (G_{i, Q_i} = +\infty),

        i.e. ``‖x_q − x_j‖² − ‖x_q‖²``, which orders every row like the distances.  Then
        ``reduce(block, G)`` is called with the slice of ``queries`` covered (in a worker
        thread when ``n_jobs`` > 1: it must only write its own rows of its outputs).

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n, d)
            The points, in the dtype of the product (float32 or float64).
        sq : ndarray of shape (n,)
            ``‖x_j‖²`` in that dtype.
        queries : ndarray of int, shape (m,)
        reduce : callable
            ``reduce(block: slice, G: ndarray of shape (len(block), n))``.
        row_bytes : int
            Bytes of ``reduce``'s own temporaries per query row (the layer adds the block's).
        memory_budget : int, str or None
            Bytes for the blocks of all threads together.
        n_jobs : int or None
            Threads, each with single-threaded BLAS.
        """
        streaming.sq_distance_scan(
            X, sq, queries, reduce, row_bytes=row_bytes, memory_budget=memory_budget, n_jobs=n_jobs
        )

    # ------------------------------------------------------------------ dense products
    def matmul(self, A, B, *, out=None):
        """Dense ``A @ B`` (BLAS GEMM; ``Aᵀ A`` of one buffer is a SYRK inside NumPy).

        A result with more than one column and no more columns than rows is written in Fortran
        order (see :func:`semiscale.linalg.streaming.product_order`), where OpenBLAS's GEMM runs
        1.2–2× faster for the skinny products of the solvers (``K_ns V``, ``K_nsᵀ U``).
        """
        dense = isinstance(A, np.ndarray) and isinstance(B, np.ndarray)
        if out is None and dense and A.ndim == 2 and B.ndim == 2:
            shape = (A.shape[0], B.shape[1])
            out = np.empty(shape, np.result_type(A, B), order=streaming.product_order(*shape))
        return A @ B if out is None else np.matmul(A, B, out=out)

    def sparse_matmul(self, S, D):
        """``S @ D`` for a sparse ``S`` (graph Laplacian, edge incidence) and a dense ``D``."""
        return S @ D

    def sparse_factorized(self, S):
        """A sparse LU factorization of a square sparse ``S`` (SuperLU, COLAMD ordering), made once.

        Returns a callable ``B ↦ S⁻¹ B`` for an ``(n,)`` vector or an ``(n, r)`` block (every
        column from the same factors).  Raises :class:`RuntimeError` for an exactly singular
        ``S`` (SuperLU's own message).
        """
        import scipy.sparse as sparse
        from scipy.sparse.linalg import splu

        factor = splu(sparse.csc_matrix(S, dtype=np.float64))
        return factor.solve

    def symmetrize(self, K):
        """``K ← (K + Kᵀ)/2`` in place, in row blocks (temporaries of one block).

        BLAS may round ``K[i, j]`` and ``K[j, i]`` differently; CG needs an exactly symmetric
        operator.  Returns ``K``.
        """
        n = K.shape[0]
        max_rows = max(1, streaming.STREAM_BLOCK_BYTES // max(n * K.itemsize, 1))
        for start in range(0, n, max_rows):
            rows = slice(start, min(start + max_rows, n))
            mean = (K[rows, :start] + K[:start, rows].T) / 2
            K[rows, :start] = mean
            K[:start, rows] = mean.T
            diag = K[rows, rows]
            diag[...] = (diag + diag.T) / 2
        return K

    # ------------------------------------------------------------------ assembled systems
    def laprls_system_inplace(
        self, K, laplacian, labeled_rows, intrinsic_lambda, ambient_lambda, memory_budget=None
    ):
        r"""Overwrite ``K`` with the exact LapRLS matrix :math:`A = J K + λ_I L K + λ_A I`.

        Paper 000 eq. (3): :math:`α = A^{-1} J y`, with ``J`` the diagonal 0/1 selector of the
        labeled rows.  Formed in column blocks, :math:`A_{:,c} = λ_I L K_{:,c} + J K_{:,c}`
        then the diagonal, so the only temporaries are one block's sparse product.

        Parameters
        ----------
        K : ndarray of shape (n, n)
            The kernel matrix, float64, overwritten.
        laplacian : sparse matrix of shape (n, n)
        labeled_rows : ndarray of int or bool mask
            The labeled rows (``J``).
        intrinsic_lambda, ambient_lambda : float
            ``λ_I``, ``λ_A`` in paper 000's scaling.
        memory_budget : int, str or None
            Bytes for the column-block temporaries (``K`` itself is the caller's); blocks are
            also capped at 32 MiB so that they stay in cache.

        Returns
        -------
        ndarray
            ``K``, now ``A``.
        """
        n = K.shape[0]
        rows = np.asarray(labeled_rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows
        # Per column: the product column and the labeled rows' copy (at most n each).
        step = self.block_rows(n, 2 * 8 * n, memory_budget, what="LapRLS system column block")
        step = max(1, min(step, (32 * 1024**2) // (8 * n)))
        for start in range(0, n, step):
            cols = slice(start, min(start + step, n))
            block = laplacian @ K[:, cols]
            block *= intrinsic_lambda
            block[rows] += K[rows, cols]
            K[:, cols] = block
        K.flat[:: n + 1] += ambient_lambda
        return K

    def dense_from_matmat(self, matmat, size, *, column_bytes, memory_budget=None):
        r"""The symmetric ``(size, size)`` matrix of an operator, from column blocks.

        ``H[:, c] = matmat(E_c)`` for blocks ``E_c`` of the identity, then ``(H + Hᵀ)/2`` in
        place (:meth:`symmetrize`: no second ``size × size`` array).  ``column_bytes`` is what
        one column of ``matmat``'s own temporaries takes; the block width is what fits in
        ``memory_budget`` after ``H`` itself, and at most
        :data:`~semiscale.linalg.streaming.STREAM_BLOCK_BYTES` of columns (more columns per
        block save nothing: every block is a pass over ``K_ns`` with a wider right-hand side).
        The work of ``matmat`` goes through this layer on its own (its products are layer calls).
        """
        step = self.block_rows(
            size, column_bytes, memory_budget, what="dense Hessian", reserved=size * size * 8
        )
        step = max(1, min(step, streaming.STREAM_BLOCK_BYTES // max(int(column_bytes), 1)))
        H = np.empty((size, size))
        for start in range(0, size, step):
            cols = slice(start, min(start + step, size))
            E = np.zeros((size, cols.stop - cols.start))
            E[np.arange(cols.start, cols.stop), np.arange(E.shape[1])] = 1.0
            H[:, cols] = matmat(E)
        return self.symmetrize(H)

    def nystrom_feature_gram(
        self, G, lower, kernel, A, B, center_pos, maps, weight=1.0, memory_budget=None
    ):
        r"""``G += weight · Σ_k (M_k Φ)ᵀ (M_k Φ)`` for the Nyström features of ``u`` points.

        ``Φ`` (``u × s``) holds the features ``φ = K(x, C) T⁻¹`` of the points
        (:class:`~semiscale.linalg.system.NystromFactor`, ``lower = Tᵀ``): a point whose
        ``center_pos`` is ``j ≥ 0`` is center ``j`` and its feature is ``lower``'s row ``j``
        (no kernel row, no solve); the others' kernel rows are ``K(A, B)``, one row of ``A``
        per point with ``center_pos < 0``, in order.  Each sparse ``M_k`` (``r_k × u``) maps
        the features to the rows of one Gram update (BLAS ``syrk`` on ``G``'s lower triangle);
        a map given as a pair ``(columns, scale)`` is the selection ``M_k = diag(scale) E``
        with ``E``'s rows the unit rows ``e_{columns_i}`` (rows ``scale_i φ_{columns_i}``,
        without a sparse product).
        The sampled-Hessian preconditioner's graph term is one call per block of sampled
        points (its edge incidence rows and its diagonal rows), so that a backend on another
        device keeps ``K(A, B)``, ``Φ`` and the ``M_k Φ`` there and returns only ``G``.

        Parameters
        ----------
        G : ndarray of shape (s, s)
            Fortran-ordered float64, updated in place (lower triangle).
        lower : ndarray of shape (s, s)
            ``Tᵀ``, lower triangular.
        kernel : Kernel
        A : ndarray of shape (a, d)
            The points that are not centers (``a`` = number of ``center_pos < 0``).
        B : ndarray of shape (s, d)
            The centers.
        center_pos : ndarray of int, shape (u,)
        maps : sequence of sparse matrices of shape (r_k, u) or of pairs (columns, scale)
            ``columns`` integer and ``scale`` float arrays of shape (r_k,).
        weight : float
        memory_budget : int, str or None
            For the kernel rows (:meth:`kernel_matrix`).

        Returns
        -------
        float
            The trace added to ``G``.
        """
        center_pos = np.asarray(center_pos)
        on_center = center_pos >= 0
        F = None
        if A.shape[0]:
            # The kernel rows are a fresh array: solve in place.
            K_t = np.asarray(self.kernel_matrix(kernel, A, B, memory_budget), np.float64).T
            F = self.solve_triangular(lower, K_t, lower=True, overwrite_b=True)
        if on_center.any():
            solved, F = F, np.empty((lower.shape[0], center_pos.size), order="F")
            F[:, on_center] = lower[center_pos[on_center]].T
            if solved is not None:
                F[:, ~on_center] = solved
        trace = 0.0
        for M in maps:
            if isinstance(M, tuple):  # (columns, scale): the rows scale_i φ_{columns_i}
                rows_t = F[:, M[0]] * M[1]
            else:
                rows_t = np.asarray(self.sparse_matmul(M, F.T).T)
            if rows_t.shape[1]:
                before = np.trace(G)
                self.syrk(G, rows_t, weight)
                trace += float(np.trace(G) - before)
        return trace


# ---------------------------------------------------------------------------------- dispatch
_default_ops = ArrayOps()
_context_ops = contextvars.ContextVar("semiscale_array_ops", default=None)


def get_ops() -> ArrayOps:
    """The current implementation: the innermost :func:`use_ops`, else the default."""
    ops = _context_ops.get()
    return _default_ops if ops is None else ops


def _check(ops):
    if not isinstance(ops, ArrayOps):
        raise TypeError(
            f"ops must be an instance of semiscale.linalg.ops.ArrayOps (or a subclass), "
            f"got {type(ops).__name__}"
        )
    return ops


def set_ops(ops: ArrayOps) -> ArrayOps:
    """Make ``ops`` the process-wide default; returns the previous default.

    Threads inside a :func:`use_ops` block keep the implementation given there.
    """
    global _default_ops
    previous, _default_ops = _default_ops, _check(ops)
    return previous


@contextlib.contextmanager
def use_ops(ops: ArrayOps):
    """Context manager: ``ops`` is the implementation in this thread (context) inside.

    Nested blocks restore the outer implementation on exit, even after an exception.
    """
    token = _context_ops.set(_check(ops))
    try:
        yield ops
    finally:
        _context_ops.reset(token)
