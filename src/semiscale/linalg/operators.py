r"""The Nyström LapRLS Hessian (paper 000, eqs. 4 and 7) as a blocked ``LinearOperator``.

Restricting LapRLS (paper 000 eq. 2) to ``f = Σ_{j≤s} α_j k(x̃_j, ·)`` over ``s`` centers gives the
``s × s`` normal equations ``H α = z`` (eq. 4) with

.. math::

    H = K_{ms}^\top K_{ms} + λ_A K_{ss} + λ_I K_{ns}^\top L K_{ns}
      = K_{ns}^\top (J + λ_I L) K_{ns} + λ_A K_{ss},
    \qquad z = K_{ms}^\top y,

where ``J`` is the diagonal 0/1 selector of the labeled rows, so ``K_ms = J K_ns`` is just the
labeled rows of ``K_ns``.  Eq. (7) evaluates ``H α`` without forming ``H``; here it takes two passes
over row blocks of ``X`` (``u = K_ns α``, then ``K_nsᵀ v``) with the sparse product
``v = J u + λ_I L u`` in between, so memory is one kernel block plus ``O(n r)``.  When the whole
``K_ns`` (``n·s`` numbers) fits in ``memory_budget`` it may be cached instead, once the products
made without it have cost as much as filling it (:func:`cache_fill_passes`).

With all points as centers (``s = n``), ``H = K (J K + λ_A I + λ_I L K)`` and ``z = K J y``, so
``f = K α`` equals the exact LapRLS solution of eq. (3)
(:class:`~semiscale.linalg.full_hessian.FullLapRLSHessian`, a subclass in a module of its own:
it imports this one, never the other way round).

Every product (kernel blocks, the cached ``K_ns`` products, ``L u``, ``K_ss V``) is a call to
the array-operations layer (:func:`semiscale.linalg.ops.get_ops`), which sizes the blocks; both
operators implement :class:`semiscale.linalg.system.NystromSystem`, the protocol the
preconditioners read.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from .._arrays import is_dask_array, take_rows
from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from .._progress import stage
from .._validation import check_laplacian
from ._arguments import _index, _lambda
from .ops import get_ops

__all__ = ["NystromLapRLSHessian", "cache_fill_passes"]


#: Cost model of the K_ns cache decision (:func:`cache_fill_passes`), nanoseconds per kernel
#: entry: a dense RBF pass costs ``PASS_NS + PASS_NS_PER_FEATURE · d``, reading a stored entry
#: ``READ_NS_PER_BYTE · itemsize``, touching fresh memory (page faults) ``TOUCH_NS_PER_BYTE ·
#: itemsize``.  Chosen by measurement, two threads (``benchmarks/results/memory_budget/``): a
#: pass 1.8–5.0 ns at d = 2 and 3.1–7.6 at d = 50, a read 0.03–0.16 ns per byte, a first touch
#: 0.13–2.3 ns per byte (its high end is used: a large cache on a fresh machine).  Only the
#: ratios matter, taken as independent of the thread count.
PASS_NS = 2.0
PASS_NS_PER_FEATURE = 0.045
READ_NS_PER_BYTE = 0.08
TOUCH_NS_PER_BYTE = 2.0


def cache_fill_passes(X, n_centers, dtype) -> float:
    """Passes over ``K_ns`` computed without a cache after which ``cache="auto"`` fills it.

    Filling the cache costs one kernel pass plus the first touch of ``n·s`` fresh entries; each
    later pass reads the cache instead of computing it.  How many passes a fit makes is not
    known in advance (the sampled-Hessian preconditioner often converges in 1–5 iterations, two
    passes each), so the cache is bought like skis in the rent-or-buy problem: the products
    run without it until the passes they computed have cost as much as the fill would
    (``F / (1 − ρ)`` passes, with ``F = 1 + touch/pass`` and ``ρ = read/pass``), and then fill it.
    Whatever the number of iterations, the kernel time is then at most about twice that of the
    better fixed choice; an eager cache cost 13–16 s where the whole uncached fit took 7 s
    (500,000 two-moons points, s = 1,000, one PCG iteration), which this rule avoids.  Returns
    ``inf`` when reading the cache is no cheaper than computing the kernel.
    """
    features = X.nnz / max(X.shape[0], 1) if sp.issparse(X) else X.shape[1]
    per_pass = PASS_NS + PASS_NS_PER_FEATURE * features
    it = np.dtype(dtype).itemsize
    rho = READ_NS_PER_BYTE * it / per_pass
    if rho >= 1.0:
        return float("inf")
    return (1.0 + TOUCH_NS_PER_BYTE * it / per_pass) / (1.0 - rho)


class NystromLapRLSHessian(LinearOperator):
    r"""``H = K_msᵀK_ms + λ_A K_ss + λ_I K_nsᵀ L K_ns`` (paper 000 eq. 4), blockwise (eq. 7).

    Parameters
    ----------
    kernel : Kernel
        Resolved kernel: ``kernel(A, B)``, ``kernel.diag(A)``, ``kernel.blocks(A, B, budget)``.
    X : array_like or sparse matrix of shape (n, d)
        All training points (labeled and unlabeled), in the Laplacian's order.
    centers : array_like
        1-D integer indices into ``X`` (the usual case) or a 2-D ``(s, d)`` array of points.
    labeled_index : array_like of int or bool mask
        The ``m`` labeled rows of ``X`` (any order; rows of ``K_ms`` follow this order).
    laplacian : sparse matrix of shape (n, n) or None
        Graph Laplacian ``L``; None (or ``intrinsic_lambda = 0``) drops the intrinsic term, and
        then only the labeled rows are ever evaluated.
    ambient_lambda, intrinsic_lambda : float
        ``λ_A``, ``λ_I`` in paper 000's scaling (see :func:`semiscale.scaling.solver_lambdas`).
    memory_budget : int, str or None
        Bytes for ``K_ss``, ``reserved``, the cached ``K_ns`` or the kernel blocks, and the
        ``n × r`` work arrays of a product.
    cache : {"auto", True, False}
        Store ``K_ns`` (or ``K_ms`` without a graph).  ``"auto"``: allowed when it fits in the
        budget beside ``K_ss``, ``reserved``, the work arrays and one kernel block, and the
        backend says it pays (:meth:`~semiscale.linalg.ops.ArrayOps.kernel_cache_pays`: not on
        a GPU, where the blocks are recomputed) (``cached_``); filled by the first product ``H V``
        after the passes computed without it have cost as much as filling it would
        (``cache_after_passes_``, from :func:`cache_fill_passes`: a fit that converges in a
        few iterations never pays for it).
        True fills it at the first use (``MemoryBudgetError`` if it does not fit); False always
        recomputes kernel blocks (two passes per product).
    n_jobs : int or None, default=1
        Threads for the kernel blocks (:mod:`semiscale.linalg.blocked`); None = all cores.
    reserved : int or dict of {str: int}, default=0
        Bytes of ``memory_budget`` held by the caller's own buffers while the operator is used
        (a preconditioner's ``s × s`` factors, by
        :func:`semiscale.solvers.nystrom_quadratic.solver_memory`); a dict names each part for
        the refusal message.  ``K_ss``, the cache and the kernel
        blocks fit in what is left.
    label_weights : sparse matrix of shape (n, m) or None, default=None
        ``R`` of the labeled term ``‖Rᵀ K_ns α − y‖²``: column ``i`` holds the weights of the
        training points whose predictions labeled point ``i``'s label is compared with
        (:func:`semiscale.graph.label_diffusion_weights`, the m-step random-walk average).
        Then ``J`` becomes ``R Rᵀ`` in ``H`` and ``z = K_nsᵀ R Y``; None is ``R = E_m`` (each
        label compared with the prediction at its own point, paper 000).  Needs the graph term
        (all ``n`` rows are evaluated anyway); ``R`` itself is a constant overhead outside
        ``memory_budget``, like the Laplacian.
    n_columns : int, optional
        The number of right-hand sides the solve will use.  When given, the construction checks
        that ``K_ss``, ``reserved``, the ``n × n_columns`` work arrays and one kernel block row
        fit in ``memory_budget`` together, and raises :class:`MemoryBudgetError` naming each
        part *before anything is allocated*; without it, a budget too small for a product is
        refused by the product.

    Attributes
    ----------
    cached_ : bool
        Whether ``K_ns`` may be stored (it fits in the budget; see ``cache``).
    cache_filled_ : bool
        Whether it has been filled.
    cache_after_passes_ : float
        Passes over ``K_ns``'s rows computed without the cache after which ``"auto"`` fills it
        (0 with ``cache=True``).
    uncached_passes_ : float
        Passes computed without the cache so far.
    n_matvec_ : int
        Number of block products ``H V`` performed.
    n_samples_, n_labeled_, n_centers_ : int
    n_samples, n_centers, labeled_index, kernel_cached
        The :class:`~semiscale.linalg.system.NystromSystem` protocol (with ``laplacian``,
        ``ambient_lambda``, ``intrinsic_lambda``, ``memory_budget`` and the methods
        :meth:`kernel_ss`, :meth:`kernel_rows`, :meth:`kernel_ms`, :meth:`center_positions`,
        :meth:`diagonal`).
    """

    def __init__(
        self,
        kernel,
        X,
        centers,
        labeled_index,
        laplacian,
        ambient_lambda,
        intrinsic_lambda,
        memory_budget=None,
        *,
        cache="auto",
        n_jobs=1,
        reserved=0,
        n_columns=None,
        label_weights=None,
    ):
        self.kernel = kernel
        self.n_jobs = n_jobs
        self.X = X
        n = X.shape[0]
        centers = np.asarray(centers) if not sp.issparse(centers) else centers
        if centers.ndim == 1:
            self.center_index_ = _index(centers, n, "centers")
            self.centers_ = take_rows(X, self.center_index_)  # local, also for dask X
        else:
            if centers.ndim != 2 or centers.shape[1] != X.shape[1]:
                raise ValueError(
                    f"centers must be 1-D indices or a 2-D array with X's {X.shape[1]} features, "
                    f"got shape {centers.shape}"
                )
            self.center_index_ = None
            self.centers_ = centers
        self.labeled_index_ = _index(labeled_index, n, "labeled_index")
        if np.unique(self.labeled_index_).size != self.labeled_index_.size:
            raise ValueError("labeled_index contains duplicate indices")
        self.ambient_lambda = _lambda(ambient_lambda, "ambient_lambda")
        self.intrinsic_lambda = _lambda(intrinsic_lambda, "intrinsic_lambda")
        use_graph = laplacian is not None and self.intrinsic_lambda > 0
        self.laplacian = check_laplacian(laplacian, n) if use_graph else None
        self.n_samples_, self.n_labeled_ = n, self.labeled_index_.size
        self.label_weights = self._check_label_weights(label_weights)
        self.n_centers_ = s = self.centers_.shape[0]
        both32 = X.dtype == np.float32 and self.centers_.dtype == np.float32
        dtype = np.dtype(np.float32 if both32 else np.float64)
        super().__init__(dtype=dtype, shape=(s, s))
        self.memory_budget = parse_memory_budget(memory_budget)
        it = dtype.itemsize
        parts = dict(reserved) if isinstance(reserved, dict) else {"reserved buffers": reserved}
        self._reserved = {what: int(size) for what, size in parts.items() if size}
        self._fixed = s * s * it + sum(self._reserved.values())
        self._n_columns = 1 if n_columns is None else max(int(n_columns), 1)
        self._checked = n_columns is not None
        if self._checked:
            self._check_budget()
        elif self._fixed >= self.memory_budget:
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(self.memory_budget)} cannot even hold K_ss "
                f"({s}x{s}, {format_bytes(s * s * it)})"
                + "".join(f" and {w} ({format_bytes(b)})" for w, b in self._reserved.items())
                + "; raise memory_budget or use fewer centers"
            )
        self._K_ss = self._K_rows = self._X_rows = self._work = self._center_lookup = None
        self.cached_ = self._decide_cache(cache)
        self.n_matvec_ = 0
        #: Passes over the operator's rows computed without the cache (the "rent" paid).
        self.uncached_passes_ = 0.0
        self.cache_after_passes_ = (
            0.0 if cache is True else cache_fill_passes(self._X_used(), self.n_centers_, dtype)
        )

    def _check_label_weights(self, R):
        if R is None:
            return None
        if self.laplacian is None:
            raise ValueError(
                "label_weights needs the graph term (a Laplacian and intrinsic_lambda > 0): "
                "without it only the labeled rows are evaluated"
            )
        R = sp.csr_matrix(R, dtype=np.float64)
        if R.shape != (self.n_samples_, self.n_labeled_):
            raise ValueError(
                f"label_weights must have shape (n_samples, n_labeled) = "
                f"({self.n_samples_}, {self.n_labeled_}), got {R.shape}"
            )
        return R

    def _check_budget(self):
        """Refuse, before anything is allocated, a budget that cannot hold one product.

        The parts: ``K_ss``, the reserved buffers, the two ``n × r`` work arrays of a product
        and the kernel's smallest block (one row and its B-side operands).
        """
        s, it = self.n_centers_, self.dtype.itemsize
        rows = self.n_samples_ if self._rows is None else self.n_labeled_
        parts = {f"K_ss ({s}x{s})": s * s * it, **self._reserved}
        parts[f"the {rows}x{self._n_columns} work arrays of a product"] = (
            2 * rows * self._n_columns * it
        )
        _, per_row, fixed = self.kernel._block_plan(self.X[:1], self.centers_)
        parts["one kernel block row"] = per_row + fixed
        needed = sum(parts.values())
        if needed > self.memory_budget:
            listed = " + ".join(f"{what} {format_bytes(size)}" for what, size in parts.items())
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(self.memory_budget)} is too small for the Nyström "
                f"system with n={self.n_samples_} points and s={s} centers: its fixed buffers "
                f"need {listed} = {format_bytes(needed)}; raise memory_budget to at least "
                f"{needed} bytes ({format_bytes(needed)}) or use fewer centers"
            )

    @property
    def memory_held(self) -> int:
        """Bytes of ``memory_budget`` the operator keeps while a preconditioner is built.

        ``K_ss`` (counted before it is computed) and the stored ``K_ns`` once it is filled; a
        preconditioner sizes its own blocks in the rest
        (:class:`~semiscale.linalg.system.NystromSystem`).  A cache filled later (``"auto"``)
        never coexists with those blocks, which are released when the preconditioner is built.
        """
        held = self.n_centers_ * self.n_centers_ * self.dtype.itemsize
        if self._K_rows is not None:
            held += self._K_rows.nbytes
        return held

    @property
    def cache_filled_(self) -> bool:
        """Whether the stored ``K_ns`` (``K_ms`` without a graph) has been filled."""
        return self._K_rows is not None

    # ------------------------------------------------------------------ NystromSystem protocol
    @property
    def n_samples(self) -> int:
        """``n`` (:class:`~semiscale.linalg.system.NystromSystem`)."""
        return self.n_samples_

    @property
    def n_centers(self) -> int:
        """``s``, the size of ``H``."""
        return self.n_centers_

    @property
    def labeled_index(self) -> np.ndarray:
        """The ``m`` labeled rows (``J``)."""
        return self.labeled_index_

    @property
    def kernel_cached(self) -> bool:
        """Whether products read a stored ``K_ns`` (``K_ms`` without a graph): ``cached_``."""
        return self.cached_

    # ------------------------------------------------------------------ kernel blocks
    def _decide_cache(self, cache):
        if cache not in ("auto", True, False):
            raise ValueError(f"cache must be 'auto', True or False, got {cache!r}")
        rows = self.n_samples_ if self._rows is None else self.n_labeled_
        it = self.dtype.itemsize
        remaining = self.memory_budget - self._fixed - rows * self.n_centers_ * it
        if self._checked:  # a solve's n × r work arrays live beside the cache
            remaining -= 2 * rows * self._n_columns * it
        fits = False
        # A distributed X's K_ns would gather n·s numbers on the client: its products stay
        # on the workers, two passes each (semiscale.backends.DaskOps)
        distributed = is_dask_array(self._X_used())
        # a device backend may hold K_ns where its products run only up to some size
        # (ArrayOps.kernel_cache_pays); cache=True is the caller's choice
        pays = cache is True or get_ops().kernel_cache_pays(rows * self.n_centers_ * it)
        if cache is not False and remaining > 0 and not distributed and pays:
            try:  # only sizes the blocks: nothing is computed
                get_ops().kernel_block_rows(self.kernel, self._X_used(), self.centers_, remaining)
                fits = True
            except MemoryBudgetError:
                pass
        if cache is True and distributed:
            raise ValueError(
                "cache=True keeps K_ns on the client, which a dask X does not allow (its "
                "products run on the workers); use cache='auto' or False"
            )
        if cache is True and not fits:
            raise MemoryBudgetError(
                f"cache=True but K_ns ({rows}x{self.n_centers_}) does not fit in "
                f"memory_budget={format_bytes(self.memory_budget)}"
            )
        return fits

    @property
    def _rows(self):
        """Rows of X the operator touches: all of them with a Laplacian, else the labeled ones."""
        return None if self.laplacian is not None else self.labeled_index_

    def _X_used(self):
        if self._rows is None:
            return self.X
        if self._X_rows is None:
            self._X_rows = take_rows(self.X, self._rows)  # the labeled rows, local
        return self._X_rows

    def kernel_ss(self):
        """``K_ss`` (computed once)."""
        if self._K_ss is None:
            # One operand twice (exact unit self-similarities); one thread, so that the pair
            # stays one operand.
            C = self.centers_
            K = get_ops().kernel_matrix(self.kernel, C, C, self.memory_budget)
            self._K_ss = np.asarray(K, dtype=self.dtype)
        return self._K_ss

    def _work_budget(self, r):
        rows = self.n_samples_ if self._rows is None else self.n_labeled_
        extra = self._fixed + 2 * rows * r * self.dtype.itemsize
        if self._K_rows is not None:
            extra += self._K_rows.nbytes
        work = self.memory_budget - extra
        if work <= 0:
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(self.memory_budget)} leaves nothing for kernel "
                f"blocks after K_ss and the n x {r} work arrays ({format_bytes(extra)})"
            )
        return work

    def _use_cache(self, *, fill: bool = False) -> bool:
        """Whether this product reads the cache: it is filled already, or may be filled now.

        ``fill`` marks the one product that may start the cache (``H V``, repeated by every
        CG iteration): it does once the passes computed without the cache have cost as much as
        filling it (:func:`cache_fill_passes`; ``cache=True``: at once, whatever the product).
        """
        if not self.cached_:
            return False
        if self._K_rows is not None or self.cache_after_passes_ == 0.0:
            return True
        return fill and self.uncached_passes_ >= self.cache_after_passes_

    def _rent(self, rows):
        """Count a kernel pass over ``rows`` of the operator's rows computed without the cache."""
        total = self.n_samples_ if self._rows is None else self.n_labeled_
        self.uncached_passes_ += rows / max(total, 1)

    def _cache(self):
        if self._K_rows is None:
            rows = self._X_used().shape[0]
            with stage(f"caching the kernel rows ({rows}×{self.n_centers_})"):
                K = get_ops().kernel_matrix(
                    self.kernel,
                    self._X_used(),
                    self.centers_,
                    memory_budget=self.memory_budget - self._fixed,
                    n_jobs=self.n_jobs,
                )
            self._K_rows = np.asarray(K, dtype=self.dtype)
        return self._K_rows

    def kernel_rows(self, index):
        """``K(X[index], centers)`` (from the cache when there is one)."""
        index = _index(index, self.n_samples_, "index")
        if self._rows is None and self._use_cache():
            return self._cache()[index]
        if self._rows is None:
            self._rent(index.size)
        K = get_ops().kernel_matrix(self.kernel, self.X[index], self.centers_, self.memory_budget)
        return np.asarray(K, dtype=self.dtype)

    def kernel_rows_operands(self, index):
        """``(kernel, A, B, memory_budget)`` whose ``kernel_matrix`` is :meth:`kernel_rows`.

        None when the rows are read from the stored ``K_ns``.  Optional member of the
        :class:`~semiscale.linalg.system.NystromSystem` protocol: a preconditioner hands the
        operands to one layer call (:meth:`~semiscale.linalg.ops.ArrayOps.nystrom_feature_gram`)
        so that a backend on another device computes the rows there and keeps them there.
        """
        index = _index(index, self.n_samples_, "index")
        if self._rows is None and self._use_cache():
            return None
        if self._rows is None:
            self._rent(index.size)
        return self.kernel, self.X[index], self.centers_, self.memory_budget

    def center_positions(self, index):
        """Position among the centers of each point ``X[index]`` that is a center, else −1.

        Such a point's kernel row is a row of ``K_ss``; preconditioners use this to skip its
        kernel evaluation and triangular solve.  All −1 when the centers were given as points.
        """
        index = _index(index, self.n_samples_, "index")
        if self.center_index_ is None:
            return np.full(index.size, -1, dtype=np.intp)
        if self._center_lookup is None:
            lookup = np.full(self.n_samples_, -1, dtype=np.intp)
            lookup[self.center_index_] = np.arange(self.n_centers_)
            self._center_lookup = lookup
        return self._center_lookup[index]

    def kernel_ms(self):
        """The labeled term's rows: ``K_ms`` (labeled points in ``labeled_index`` order × centers).

        With ``label_weights`` ``R``, the rows ``Rᵀ K_ns`` instead (the labeled term is their
        Gram matrix), computed from the kernel rows of the points ``R`` reaches, in row blocks.
        """
        if self.label_weights is not None:
            return self._weighted_rows(self.label_weights)
        if self._rows is not None and self._use_cache():
            return self._cache()
        return self.kernel_rows(self.labeled_index_)

    def _weighted_rows(self, R):
        """``Rᵀ K_ns`` for a sparse ``R`` (n × m), reading only the rows where ``R`` is non-zero."""
        ops = get_ops()
        if self._use_cache():
            return np.asarray(ops.sparse_matmul(R.T.tocsr(), self._cache()), dtype=self.dtype)
        rows = np.flatnonzero(np.diff(R.indptr))
        out = np.zeros((R.shape[1], self.n_centers_), dtype=self.dtype)
        _, per_row, _ = self.kernel._block_plan(self.X[:1], self.centers_)
        per_row += self.n_centers_ * self.dtype.itemsize
        for sl in ops.row_blocks(rows.size, per_row, self._work_budget(1), what="R^T K_ns"):
            index = rows[sl]
            out += np.asarray(
                ops.sparse_matmul(R[index].T.tocsr(), self.kernel_rows(index)), dtype=self.dtype
            )
        return out

    def kns_matmul(self, alpha):
        """``K_ns α`` for ``α`` of shape (s,) or (s, r): the predictions on all training points."""
        alpha, ops = np.asarray(alpha), get_ops()
        if self._rows is None and self._use_cache():
            return ops.matmul(self._cache(), alpha.astype(self.dtype, copy=False))
        A2 = alpha.reshape(self.n_centers_, -1)
        budget = self._work_budget(A2.shape[1])
        out = ops.kernel_matmul(self.kernel, self.X, self.centers_, A2, budget, self.n_jobs)
        return out.reshape((self.n_samples_,) + alpha.shape[1:])

    # ------------------------------------------------------------------ products
    def _kmul(self, V):
        ops = get_ops()
        if self._work is None:
            return ops.matmul(self._cache(), V)
        X, C = self._X_used(), self.centers_
        self._rent(X.shape[0])
        return ops.kernel_matmul(self.kernel, X, C, V, self._work, self.n_jobs)

    def _ktmul(self, U):
        ops = get_ops()
        if self._work is None:
            return ops.matmul(self._cache().T, U)
        X, C = self._X_used(), self.centers_
        self._rent(X.shape[0])
        return ops.kernel_rmatmul(self.kernel, X, C, U, self._work, self.n_jobs)

    def _matmat(self, V):
        r"""``H V = K_nsᵀ (J u + λ_I L u) + λ_A K_ss V`` with ``u = K_ns V`` (eq. 7).

        ``J = R Rᵀ`` with ``label_weights``.
        """
        V = np.asarray(V, dtype=self.dtype).reshape(self.n_centers_, -1)
        self.n_matvec_ += 1
        # both passes of one product read the cache, or neither does
        self._work = None if self._use_cache(fill=True) else self._work_budget(V.shape[1])
        u = self._kmul(V)
        if self.laplacian is None:
            v = u  # rows are the labeled points only
        else:
            v = np.asarray(get_ops().sparse_matmul(self.laplacian, u), dtype=self.dtype)
            v *= self.intrinsic_lambda
            if self.label_weights is None:
                v[self.labeled_index_] += u[self.labeled_index_]
            else:  # J = R Rᵀ: m-sparse products, negligible beside the kernel passes
                R, ops = self.label_weights, get_ops()
                v += np.asarray(ops.sparse_matmul(R, ops.sparse_matmul(R.T, u)), dtype=self.dtype)
        del u
        out = np.asarray(self._ktmul(v), dtype=self.dtype)
        if self.ambient_lambda:
            out += self.ambient_lambda * get_ops().matmul(self.kernel_ss(), V)
        return out

    def _matvec(self, v):
        return self._matmat(np.reshape(v, (-1, 1)))[:, 0]

    def _rmatvec(self, v):
        return self._matvec(v)

    def _rmatmat(self, V):
        return self._matmat(V)

    def _adjoint(self):
        return self

    def rhs(self, Y):
        """``z = K_msᵀ Y`` (paper 000 eq. 4) for labels ``Y`` of shape (m,) or (m, r).

        ``z = K_nsᵀ R Y`` with ``label_weights`` ``R``.

        ``Y``'s rows follow ``labeled_index``.  Unnormalised: the canonical objective's ``1/l``
        is already folded into ``λ_A`` and ``λ_I``.
        """
        Y = np.asarray(Y)
        if Y.shape[0] != self.n_labeled_ or Y.ndim not in (1, 2):
            raise ValueError(f"Y must have shape ({self.n_labeled_},) or ({self.n_labeled_}, r)")
        Y2 = Y.reshape(self.n_labeled_, -1).astype(self.dtype, copy=False)
        ops = get_ops()
        if self.label_weights is not None:
            # z = K_nsᵀ (R Y): the rows R reaches, with their weighted labels
            RY = ops.sparse_matmul(self.label_weights, Y2)
            rows = np.flatnonzero(np.diff(self.label_weights.indptr))
            if self._use_cache():
                out = ops.matmul(self._cache()[rows].T, RY[rows])
            else:
                work = self._work_budget(Y2.shape[1])
                self._rent(rows.size)
                out = ops.kernel_rmatmul(
                    self.kernel, self.X[rows], self.centers_, RY[rows], work, self.n_jobs
                )
            return np.asarray(out, dtype=self.dtype).reshape((self.n_centers_,) + Y.shape[1:])
        if self._use_cache():
            K_ms = self._cache()[self.labeled_index_] if self._rows is None else self._cache()
            out = ops.matmul(K_ms.T, Y2)
        else:
            work = self._work_budget(Y2.shape[1])
            X_l = self._X_used() if self._rows is not None else self.X[self.labeled_index_]
            self._rent(X_l.shape[0])
            out = ops.kernel_rmatmul(self.kernel, X_l, self.centers_, Y2, work, self.n_jobs)
        return np.asarray(out, dtype=self.dtype).reshape((self.n_centers_,) + Y.shape[1:])

    def diagonal(self):
        r"""``diag(H)_j = Σ_{i∈labeled} K_ij² + λ_I Σ_i K_ij (L K_ns)_ij + λ_A K_jj`` (Jacobi).

        Row blocks of ``L K_ns`` need the kernel rows of the blocks' graph neighbours, so this
        costs about ``(k + 1)`` passes over ``K_ns`` when it is not cached.
        """
        s, it = self.n_centers_, self.dtype.itemsize
        if self.cached_ and self.laplacian is not None:
            self._cache()  # (k + 1) uncached passes cost more than filling the cache
        K_ms = self.kernel_ms()
        d = np.einsum("ij,ij->j", K_ms, K_ms)
        if self.laplacian is not None:
            L, n = self.laplacian, self.n_samples_
            per_row = (L.nnz // max(n, 1) + 3) * s * it
            ops = get_ops()
            for sl in ops.row_blocks(n, per_row, self._work_budget(1), what="Jacobi diagonal"):
                Lb = L[sl]
                own = np.arange(sl.start, sl.stop)
                nbr = np.union1d(own, Lb.indices)
                K_nbr = self.kernel_rows(nbr)
                LK = ops.sparse_matmul(Lb[:, nbr], K_nbr)
                K_b = K_nbr[np.searchsorted(nbr, own)]
                d += self.intrinsic_lambda * np.einsum("ij,ij->j", K_b, LK)
        return d + self.ambient_lambda * np.diag(self.kernel_ss())
