r"""The PyTorch backend: the heavy products of :class:`~semiscale.linalg.ops.ArrayOps` on a device.

:class:`TorchOps` overrides the kernel products of the built-in kernels (fused: each block is
computed and multiplied on the device, never sent back), the dense products, the jittered
Cholesky factorization, the triangular and Cholesky solves and the sparse × dense product; every
other method, and every call these cannot take (sparse kernel operands, other kernels, integer
arrays), is NumPy's.  The contract of the layer holds: arguments and results are NumPy/SciPy
objects; the device copies are the backend's business.

What crosses the bus
--------------------
Host arrays that a solver passes again and again are kept on the device between calls
(:mod:`semiscale.backends._torch_resident`): the points ``X`` of the kernel products (``n × d``),
the Laplacian, the ``s × s`` factors.  They are kept only inside a residency scope
(:meth:`TorchOps.resident`), which the library opens around each fit of the Nyström estimators,
and all dropped when it ends: a user who edits ``X`` in place between two fits gets the second
fit on the edited ``X``.  Outside a scope every call uploads its operands.  One iteration of
the Nyström LapRLS PCG, ``H V = K_nsᵀ (J + λ_I L) K_ns V + λ_A K_ss V`` with ``V`` of ``r``
columns, then moves

- ``u = K_ns V`` (``n × r``) to the host and ``v = λ_I L u + J u`` to the device for
  ``K_nsᵀ v``: ``2 n r`` numbers; on a GPU, where :meth:`sparse_matmul` runs on the device too (a
  separate call of the layer), ``u`` also goes back up and ``L u`` down: ``4 n r``;
- ``V`` twice and the centers' operands twice to the device (``(d + 2) s`` numbers for RBF), and
  ``K_nsᵀ v``, ``K_ss V`` and the preconditioner's solve (``s × r`` each way) back:
  ``6 s r + 2 (d + 2) s`` numbers, plus ``K_ss`` itself while it is under the 1 MiB below which
  arrays are not kept (``s < 362`` in float64);

against the ``2 n s`` kernel entries computed on the device.  On CPU torch (n = 10⁵, s = 10³,
d = 10, r = 1, SciPy's Laplacian product) one product moved 1,008,000 bytes to the device and
816,000 back in float64, as the model says, and the conversions took 0.3 ms of its 2.46 s (NumPy's
product: 5.67 s; float32: 1.90 s against 2.75 s; medians of 3 on this 2-core machine at load
6–7 from other jobs, ``flock /tmp/w/timing.lock python /tmp/w/HT/measure.py hessian``).

The PCG recurrences themselves (a few ``s × r`` vector updates, ``O(s r)`` against the
products' ``O(n s d)``) stay in NumPy.
:attr:`TorchOps.bytes_moved` counts what was converted each way and
:attr:`TorchOps.transfer_seconds` how long it took.  When the solver caches ``K_ns`` on the host
(it fits ``memory_budget``), its products are :meth:`matmul` calls on a resident copy of it.  On
a GPU the solver does not cache it (:meth:`TorchOps.kernel_cache_pays`: filling a host cache
costs two crossings of ``K_ns``, more than the recomputed blocks of a whole fit): the kernel
blocks are recomputed on the device at every product.

Device memory: kernel blocks are sized by ``memory_budget`` exactly as NumPy's (the kernel's own
memory model), then capped at ``block_bytes``; the resident copies are outside the budget, at
most ``resident_bytes`` together.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp

from .._memory import MemoryBudgetError, block_rows, format_bytes, parse_memory_budget, row_slices
from .._pairs import _check_input, result_dtype
from ..linalg import streaming
from ..linalg._dense_ops import cholesky_failure
from ..linalg.ops import ArrayOps
from ._torch_blocks import FUSED_KERNELS, DevicePlan
from ._torch_resident import ResidentCache

__all__ = ["TorchOps"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _import_torch():
    try:
        import torch
    except ImportError as error:  # pragma: no cover - torch is installed in the test env
        raise ImportError(
            'TorchOps needs PyTorch, which is not installed: pip install "semiscale[gpu]"'
        ) from error
    return torch


def _floating(*arrays) -> bool:
    return all(isinstance(a, np.ndarray) and a.ndim >= 1 and a.dtype in _FLOATS for a in arrays)


class TorchOps(ArrayOps):
    """:class:`~semiscale.linalg.ops.ArrayOps` on PyTorch tensors (CUDA or CPU).

    Parameters
    ----------
    device : str, torch.device or None, default=None
        Where the products run; None is ``"cuda"`` when ``torch.cuda.is_available()``, else
        ``"cpu"``.
    dtype : {"float32", "float64"} or None, default=None
        Precision of the device computations; None follows the operands as NumPy does (float32
        only when both are float32).  Results keep NumPy's dtype either way.
    block_bytes : int or None, default=None
        Cap on one kernel block (after ``memory_budget``): 256 MiB on a GPU, where large blocks
        amortize kernel launches; on the CPU NumPy's cache-sized cap
        (:data:`~semiscale.linalg.streaming.STREAM_BLOCK_BYTES`).
    resident_bytes : int or None, default=None
        Most bytes of host arrays kept on the device between calls inside a :meth:`resident`
        scope: a quarter of the GPU's memory, or 4 GiB on the CPU.  Arrays below 1 MiB are
        never kept.

    Attributes
    ----------
    bytes_moved : dict
        ``{"to_device": ..., "to_host": ...}``: bytes converted each way since the last
        :meth:`reset_counters` (on the CPU a conversion may be a view, no copy).
    transfer_seconds : float
        Time spent in those conversions.
    sparse_on_device : bool
        Whether :meth:`sparse_matmul` runs on the device: True on a GPU, False on the CPU.
    kernel_cache_bytes : int or None
        Largest host kernel cache (``K_ns``) worth keeping (:meth:`kernel_cache_pays`): None
        (any) on the CPU, 0 (none) on a GPU.
    """

    name = "torch"

    def __init__(self, device=None, dtype=None, *, block_bytes=None, resident_bytes=None):
        torch = self.torch = _import_torch()
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        if dtype is not None and np.dtype(dtype) not in _FLOATS:
            raise ValueError(f"dtype must be 'float32', 'float64' or None, got {dtype!r}")
        self.dtype = None if dtype is None else np.dtype(dtype)
        gpu = self.device.type != "cpu"
        if block_bytes is None:
            block_bytes = (256 << 20) if gpu else streaming.STREAM_BLOCK_BYTES
        self.block_bytes = int(block_bytes)
        if resident_bytes is None:
            total = torch.cuda.get_device_properties(self.device).total_memory if gpu else 0
            resident_bytes = total // 4 if gpu else 4 << 30
        self.resident_bytes = int(resident_bytes)
        # the device copies of the current thread's resident() scope (none outside a scope)
        self._scope = threading.local()
        self._uncached = ResidentCache(max_bytes=0)  # keeps nothing
        #: Whether :meth:`sparse_matmul` runs on the device (not on the CPU: SciPy is faster).
        self.sparse_on_device = gpu
        # a host K_ns never paid on a GPU (kernel_cache_pays); the CPU reads it in place
        self.kernel_cache_bytes = 0 if gpu else None
        self.reset_counters()

    def __repr__(self):
        dtype = None if self.dtype is None else self.dtype.name
        return f"TorchOps(device={str(self.device)!r}, dtype={dtype!r})"

    # ------------------------------------------------------------------ transfers
    def reset_counters(self):
        """Zero :attr:`bytes_moved` and :attr:`transfer_seconds`."""
        self.bytes_moved = {"to_device": 0, "to_host": 0}
        self.transfer_seconds = 0.0

    @property
    def _cache(self):
        """The :class:`ResidentCache` of this thread's :meth:`resident` scope (outside: none)."""
        cache = getattr(self._scope, "cache", None)
        return self._uncached if cache is None else cache

    @contextlib.contextmanager
    def resident(self):
        """Context manager: host arrays passed again inside keep a device copy (one scope).

        :meth:`ArrayOps.resident <semiscale.linalg.ops.ArrayOps.resident>`.  The copies belong
        to the outermost scope of the calling thread and are all dropped when it exits, so an
        array changed in place between two fits is uploaded again; within the scope a copy is
        also dropped when its array dies or its layout or a sample of its rows changes
        (:mod:`semiscale.backends._torch_resident`).  Outside any scope nothing is kept: every
        call uploads its operands.
        """
        if getattr(self._scope, "cache", None) is not None:  # nested: the outer scope's copies
            yield self
            return
        self._scope.cache = ResidentCache(max_bytes=self.resident_bytes)
        try:
            yield self
        finally:
            cache, self._scope.cache = self._scope.cache, None
            cache.clear()

    def clear_cache(self):
        """Drop the current scope's device copies (after editing one of the arrays in place)."""
        self._cache.clear()

    def kernel_cache_pays(self, nbytes) -> bool:
        """:meth:`ArrayOps.kernel_cache_pays
        <semiscale.linalg.ops.ArrayOps.kernel_cache_pays>`: up to :attr:`kernel_cache_bytes`.

        On the CPU always (a float64 product reads the host array in place).  On a GPU never:
        the host cache is filled by computing ``K_ns`` on the device, bringing it to the host
        and sending it back up once (two crossings of ``n s`` numbers), where recomputing its
        blocks on the device costs little more per product than reading a device copy.  On an
        H100 (n = 10⁶, s = 1,000, d = 10, RBF, 10⁶-point NystromLapRLSClassifier fit), a cached
        ``K_ns`` of 8 GB (kept on the device after the fill) made the fit 20.6 s, of which 9.2 s
        of transfers; recomputed, 10.1 s, its 22 PCG products 1.2 s together
        (``python benchmarks/scripts/gpu_kernel_cache.py``, results in
        ``benchmarks/results/gpu_backends/``)."""
        return self.kernel_cache_bytes is None or int(nbytes) <= self.kernel_cache_bytes

    def _to_device(self, array, dtype):
        start = time.perf_counter()
        host = np.asarray(array)
        host = host if host.dtype == dtype else host.astype(dtype)
        # strided views (a transpose) are taken as they are: a C-ordered copy of K_nsᵀ at every
        # product took most of a cached fit's time
        if not (host.flags.writeable and host.size and all(st > 0 for st in host.strides)):
            host = np.array(host, order="C")
        tensor = self.torch.from_numpy(host).to(self.device)
        self.bytes_moved["to_device"] += host.nbytes
        self.transfer_seconds += time.perf_counter() - start
        return tensor

    def _to_host(self, tensor, dtype, order="C"):
        start = time.perf_counter()
        host = np.asarray(tensor.detach().cpu().numpy(), dtype=dtype, order=order)
        self.bytes_moved["to_host"] += host.nbytes
        self.transfer_seconds += time.perf_counter() - start
        return host

    def _resident(self, array, dtype):
        """Device copy of a dense host ``array`` (validated as kernel operand ``A``), its meta."""

        def make():
            return self._to_device(_check_input(array, "A"), dtype)

        return self._cache.get(array, ("kernel", np.dtype(dtype).str), make)

    def _kept(self, array, dtype):
        """Device copy of a dense or sparse host operand, kept between calls when large."""
        tag = ("sparse" if sp.issparse(array) else "dense", np.dtype(dtype).str)
        if sp.issparse(array):
            if not hasattr(array, "indptr"):  # COO, LIL, DIA, DOK: no layout the cache can check
                return self._csr(array, dtype)
            return self._cache.get(array, tag, lambda: self._csr(array, dtype))[0]
        base = array.base
        if (
            array.ndim == 2
            and isinstance(base, np.ndarray)
            and base.ndim == 2
            and array.shape == base.shape[::-1]
            and array.strides == base.strides[::-1]
            and array.__array_interface__["data"][0] == base.__array_interface__["data"][0]
        ):  # Mᵀ of a kept M (K_nsᵀ U): the transposed view of M's device copy
            return self._kept(base, dtype).mT
        return self._cache.get(array, tag, lambda: self._to_device(array, dtype))[0]

    def _csr(self, S, dtype):
        S = sp.csr_matrix(S)
        torch = self.torch
        crow = self._to_device(S.indptr, np.int64)
        col = self._to_device(S.indices, np.int64)
        values = self._to_device(S.data, dtype)
        with warnings.catch_warnings():  # "sparse CSR support is in beta" on every construction
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(crow, col, values, size=S.shape, check_invariants=False)

    # ------------------------------------------------------------------ kernel products
    def _plan(self, kernel, A, B):
        """``(plan, per_row, fixed, result dtype)`` of a device product, or None (NumPy's)."""
        if type(kernel) not in FUSED_KERNELS or not isinstance(A, np.ndarray):
            return None
        if not (B is None or isinstance(B, np.ndarray)):
            return None
        symmetric = B is None or B is A
        # NumPy's checks and memory model on a one-row stand-in for A (B validated in full)
        pair, per_row, fixed = kernel._block_plan(A[:1], A if symmetric else B)
        rdtype = result_dtype(A, B)
        plan = DevicePlan(self, kernel, A, None if symmetric else pair.B, self.dtype or rdtype)
        return plan, per_row, fixed, rdtype

    def _rows(self, n_rows, per_row, fixed, memory_budget, reserved):
        budget = parse_memory_budget(memory_budget)
        if budget - reserved - fixed < per_row:
            raise MemoryBudgetError(
                f"memory_budget={format_bytes(budget)} is too small for one kernel block row "
                f"({format_bytes(per_row)} per row plus {format_bytes(fixed)} for B-side "
                f"operands and {format_bytes(reserved)} for the product's buffers); raise "
                f"memory_budget to at least {per_row + fixed + reserved} bytes"
            )
        rows = block_rows(n_rows, per_row, budget - reserved - fixed, what="kernel block")
        return max(1, min(rows, self.block_bytes // max(per_row, 1)))

    def kernel_matmul(self, kernel, A, B, V, memory_budget=None, n_jobs=1):
        """:meth:`ArrayOps.kernel_matmul <semiscale.linalg.ops.ArrayOps.kernel_matmul>` on the
        device (``n_jobs`` is unused: the device's own parallelism runs the blocks)."""
        planned = self._plan(kernel, A, B)
        if planned is None:
            return super().kernel_matmul(kernel, A, B, V, memory_budget, n_jobs)
        plan, per_row, fixed, rdtype = planned
        V2, ndim, _ = streaming._operand(V, plan.n_cols, "V", "B", rdtype)
        V_dev = self._to_device(V2, plan.dtype)
        reserved = V_dev.numel() * V_dev.element_size()
        rows = self._rows(plan.n_rows, per_row, fixed, memory_budget, reserved)
        out = self.torch.empty((plan.n_rows, V2.shape[1]), dtype=V_dev.dtype, device=self.device)
        for sl in row_slices(plan.n_rows, rows):
            K = plan.block(sl)
            self.torch.matmul(K, V_dev, out=out[sl])
            del K
        host = self._to_host(out, rdtype, streaming.product_order(*out.shape))
        return host[:, 0] if ndim == 1 else host

    def kernel_rmatmul(self, kernel, A, B, U, memory_budget=None, n_jobs=1):
        """:meth:`ArrayOps.kernel_rmatmul <semiscale.linalg.ops.ArrayOps.kernel_rmatmul>` on the
        device: ``Σ_blocks K(A_rows, B)ᵀ U_rows`` accumulated there, in block order."""
        planned = self._plan(kernel, A, B)
        if planned is None:
            return super().kernel_rmatmul(kernel, A, B, U, memory_budget, n_jobs)
        plan, per_row, fixed, rdtype = planned
        U2, ndim, _ = streaming._operand(U, plan.n_rows, "U", "A", rdtype)
        U_dev = self._to_device(U2, plan.dtype)
        acc = self.torch.zeros((plan.n_cols, U2.shape[1]), dtype=U_dev.dtype, device=self.device)
        reserved = 2 * acc.numel() * acc.element_size()
        rows = self._rows(plan.n_rows, per_row, fixed, memory_budget, reserved)
        for sl in row_slices(plan.n_rows, rows):
            K = plan.block(sl)
            acc.addmm_(K.T, U_dev[sl])
            del K
        host = self._to_host(acc, rdtype, streaming.product_order(*acc.shape))
        return host[:, 0] if ndim == 1 else host

    def kernel_matrix(self, kernel, A, B=None, memory_budget=None, n_jobs=1):
        """:meth:`ArrayOps.kernel_matrix <semiscale.linalg.ops.ArrayOps.kernel_matrix>`: blocks
        computed on the device and copied into the host result."""
        planned = self._plan(kernel, A, B)
        if planned is None:
            return super().kernel_matrix(kernel, A, B, memory_budget, n_jobs)
        plan, per_row, fixed, rdtype = planned
        needed = plan.n_rows * plan.n_cols * rdtype.itemsize
        budget = parse_memory_budget(memory_budget)
        if needed >= budget:
            raise MemoryBudgetError(
                f"the {plan.n_rows}x{plan.n_cols} kernel matrix needs {format_bytes(needed)} but "
                f"memory_budget is {format_bytes(budget)}; raise memory_budget or use an "
                "iterative/Nyström solver"
            )
        out = np.empty((plan.n_rows, plan.n_cols), dtype=rdtype)
        rows = self._rows(plan.n_rows, per_row, fixed, budget, needed)
        for sl in row_slices(plan.n_rows, rows):
            out[sl] = self._to_host(plan.block(sl), rdtype)
        return out

    def kernel_row_sums(self, kernel, X, memory_budget=None, n_jobs=1):
        """:meth:`ArrayOps.kernel_row_sums <semiscale.linalg.ops.ArrayOps.kernel_row_sums>`:
        every block ``K(X_rows, X)`` summed on the device in float64 (all ``n²`` entries, not
        NumPy's upper tiles: the device's throughput makes the simpler pass the cheaper code)."""
        planned = self._plan(kernel, X, None)
        if planned is None:
            return super().kernel_row_sums(kernel, X, memory_budget, n_jobs)
        plan, per_row, fixed, _ = planned
        sums = self.torch.empty(plan.n_rows, dtype=self.torch.float64, device=self.device)
        rows = self._rows(plan.n_rows, per_row, fixed, memory_budget, 8 * plan.n_rows)
        for sl in row_slices(plan.n_rows, rows):
            sums[sl] = plan.block(sl).sum(dim=1, dtype=self.torch.float64)
        return self._to_host(sums, np.float64)

    # ------------------------------------------------------------------ dense products
    def matmul(self, A, B, *, out=None):
        """Dense ``A @ B`` on the device (float32/float64 ndarrays; anything else NumPy's).

        The result's memory order is NumPy's (:func:`~semiscale.linalg.streaming.product_order`).
        """
        if not _floating(A, B):
            return super().matmul(A, B, out=out)
        dtype = np.result_type(A, B)
        product = self._kept(A, dtype) @ self._kept(B, dtype)
        order = streaming.product_order(*product.shape) if product.ndim == 2 else "C"
        host = self._to_host(product, dtype, order)
        if out is None:
            return host
        if out.shape[out.ndim - host.ndim :] != host.shape:  # np.matmul's core-dimension check
            raise ValueError(
                f"out has shape {out.shape} but A @ B has shape {host.shape}; pass out of shape "
                f"{host.shape} (np.matmul's rule), or out=None"
            )
        np.copyto(out, host)
        return out

    def sparse_matmul(self, S, D):
        """``S @ D``, the sparse ``S`` as a torch CSR tensor (kept on the device when large).

        On a CPU device SciPy's product is used instead (:attr:`sparse_on_device` is False):
        torch's CSR × dense product took 72.9 ms where SciPy took 4.9 ms for a 10-nearest-
        neighbour Laplacian of 100,000 points (1,572,944 entries) times one column, 71.8 ms
        against 19.1 ms for four columns (torch 2.13 CPU, 2 cores, medians of 7:
        ``python /tmp/w/HT/measure.py sparse`` under the timing lock).
        """
        if not self.sparse_on_device:
            return super().sparse_matmul(S, D)
        if not (sp.issparse(S) and S.dtype in _FLOATS and _floating(D) and D.ndim <= 2):
            return super().sparse_matmul(S, D)
        dtype = np.result_type(S.dtype, D.dtype)
        D2 = self._to_device(D if D.ndim == 2 else D[:, None], dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            product = self._kept(S, dtype) @ D2
        host = self._to_host(product, dtype)
        return host if D.ndim == 2 else host[:, 0]

    # ------------------------------------------------------------------ factorizations and solves
    def jittered_cholesky(
        self, A, *, initial_jitter=1e-12, max_tries=12, growth=10.0, min_pivot=None
    ):
        """:meth:`ArrayOps.jittered_cholesky
        <semiscale.linalg.ops.ArrayOps.jittered_cholesky>` on the device, same acceptance rule:
        a factor whose smallest squared pivot exceeds ``min_pivot · mean(diag A)`` (default
        ``s·u``).  Only the lower triangle of ``A`` is read; the factor's device copy is kept
        for the solves that follow."""
        A = np.asarray(A)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.dtype not in _FLOATS or A.size == 0:
            return super().jittered_cholesky(
                A,
                initial_jitter=initial_jitter,
                max_tries=max_tries,
                growth=growth,
                min_pivot=min_pivot,
            )
        if not np.all(np.isfinite(A)):
            raise np.linalg.LinAlgError("K_ss contains NaN or inf; cannot factorize it")
        torch, s = self.torch, A.shape[0]
        mean_diag = float(np.mean(np.diag(A)))
        if not mean_diag > 0:
            mean_diag = 1.0
        floor = s * np.finfo(A.dtype).eps if min_pivot is None else max(float(min_pivot), 0.0)
        tiny = floor * mean_diag
        lower = torch.tril(self._to_device(A, A.dtype))
        lower = lower + torch.tril(lower, -1).mT  # the symmetric matrix of A's lower triangle
        jitter = 0.0
        for t in range(max_tries + 1):
            work = lower.clone() if jitter else lower
            if jitter:
                work.diagonal().add_(jitter)
            L, info = torch.linalg.cholesky_ex(work)
            if int(info) == 0 and float(L.diagonal().min()) ** 2 > tiny:
                factor = self._to_host(L, A.dtype, "F")
                self._cache.get(factor, ("dense", A.dtype.str), lambda L=L: L)
                return factor, jitter
            jitter = initial_jitter * mean_diag * growth**t
        raise cholesky_failure(s, jitter, growth, mean_diag)

    def solve_triangular(self, L, B, *, lower=True, trans=False, overwrite_b=False, side="left"):
        """:meth:`ArrayOps.solve_triangular <semiscale.linalg.ops.ArrayOps.solve_triangular>`
        on the device (only ``L``'s triangle is read).  The result is a new array whatever
        ``overwrite_b`` says (a permission, as in SciPy)."""
        if side not in ("left", "right") or not _floating(L, B) or L.ndim != 2 or B.ndim > 2:
            return super().solve_triangular(
                L, B, lower=lower, trans=trans, overwrite_b=overwrite_b, side=side
            )
        if side == "right" and B.ndim != 2:
            return super().solve_triangular(
                L, B, lower=lower, trans=trans, overwrite_b=overwrite_b, side=side
            )
        # SciPy's trsm (side="right") is float64 only
        dtype = np.dtype(np.float64) if side == "right" else np.result_type(L, B)
        L_dev = self._kept(L, dtype)
        if trans:
            L_dev, lower = L_dev.mT, not lower
        B_dev = self._to_device(B if B.ndim == 2 else B[:, None], dtype)
        X = self.torch.linalg.solve_triangular(L_dev, B_dev, upper=not lower, left=side == "left")
        host = self._to_host(X, dtype, "F" if side == "right" else "C")
        return host if B.ndim == 2 else host[:, 0]

    def cho_solve(self, L, B):
        """``(L Lᵀ)⁻¹ B`` on the device from a lower Cholesky factor (its device copy reused)."""
        if not (_floating(L, B) and L.ndim == 2 and B.ndim <= 2):
            return super().cho_solve(L, B)
        dtype = np.result_type(L, B)
        B_dev = self._to_device(B if B.ndim == 2 else B[:, None], dtype)
        X = self.torch.cholesky_solve(B_dev, self._kept(L, dtype), upper=False)
        host = self._to_host(X, dtype)
        return host if B.ndim == 2 else host[:, 0]

    # ------------------------------------------------------------------ preconditioner
    def nystrom_feature_gram(
        self, G, lower, kernel, A, B, center_pos, maps, weight=1.0, memory_budget=None
    ):
        """:meth:`ArrayOps.nystrom_feature_gram
        <semiscale.linalg.ops.ArrayOps.nystrom_feature_gram>` on the device: the kernel rows,
        the features ``Φ`` (one triangular solve per kernel block) and the mapped rows ``M_k Φ``
        stay there, ``G`` goes up once and comes back once (``s²`` numbers each way, against
        ``u s`` kernel rows and features and ``r s`` mapped rows that NumPy's steps through this
        layer would move).  No synchronisation before ``G`` comes back.

        ``G`` is updated whole (``G += weight · RᵀR``, a GEMM where NumPy's ``syrk`` writes the
        lower triangle only): its upper triangle is unspecified either way.
        """
        ok = isinstance(G, np.ndarray) and G.dtype == np.float64 and G.flags.f_contiguous
        ok = ok and _floating(lower) and all(sp.issparse(M) or isinstance(M, tuple) for M in maps)
        planned = self._plan(kernel, A, B) if ok and A.shape[0] else None
        if not ok or (A.shape[0] and planned is None):
            return super().nystrom_feature_gram(
                G, lower, kernel, A, B, center_pos, maps, weight, memory_budget
            )
        torch, f64 = self.torch, np.dtype(np.float64)
        center_pos = np.asarray(center_pos)
        on_center = center_pos >= 0
        L_dev = self._kept(np.asarray(lower, dtype=f64), f64)
        s = L_dev.shape[0]
        # Φ = K T⁻¹ by rows (u × s, row-major: the sparse maps read it by rows)
        Phi = torch.empty((center_pos.size, s), dtype=torch.float64, device=self.device)
        if on_center.any():
            rows_on = self._to_device(np.flatnonzero(on_center), np.int64)
            Phi[rows_on] = L_dev[self._to_device(center_pos[on_center], np.int64)]
        if planned is not None:
            plan, per_row, fixed, _ = planned
            other = None if not on_center.any() else np.flatnonzero(~on_center)
            rows = self._rows(plan.n_rows, per_row, fixed, memory_budget, 0)
            for sl in row_slices(plan.n_rows, rows):
                # X T⁻¹ = X (Tᵀ)ᵀ⁻¹: a right solve with the upper factor T = (Tᵀ)ᵀ
                K = plan.block(sl).to(torch.float64)
                solved = torch.linalg.solve_triangular(L_dev.mT, K, upper=True, left=False)
                del K
                if other is None:
                    Phi[sl] = solved
                else:
                    Phi[self._to_device(other[sl], np.int64)] = solved
        G_dev = self._to_device(G, f64)
        before = G_dev.diagonal().sum()
        for M in maps:
            if isinstance(M, tuple):  # (columns, scale): a selection of scaled rows of Φ
                columns = self._to_device(np.asarray(M[0], dtype=np.int64), np.int64)
                scale = self._to_device(np.asarray(M[1], dtype=f64), f64)
                mapped = Phi[columns] * scale[:, None]
            elif not M.shape[0]:
                continue
            elif self.sparse_on_device:
                with warnings.catch_warnings():  # "sparse CSR support is in beta"
                    warnings.simplefilter("ignore", UserWarning)
                    mapped = self._csr(M, f64) @ Phi
            else:  # SciPy's product on the CPU device's memory (torch's CSR product is slower)
                mapped = torch.from_numpy(np.asarray(M.tocsr() @ Phi.numpy()))
            G_dev.addmm_(mapped.mT, mapped, alpha=float(weight))
            del mapped
        trace = G_dev.diagonal().sum() - before
        np.copyto(G, self._to_host(G_dev, f64, "F"))
        return float(trace)
