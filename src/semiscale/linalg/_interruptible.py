r"""Dense factorizations that a Ctrl-C interrupts at once.

Python runs signal handlers in the main thread, between bytecodes: while the main thread sits in
one LAPACK call (an LU or Cholesky of an n × n matrix, O(n³), seconds for a few thousand rows),
``KeyboardInterrupt`` waits for LAPACK to return.  :func:`call_interruptibly` moves such a call
to a worker thread and lets the main thread wait on an event in short slices; a signal ends the
wait (on POSIX at once: the wait is a lock acquisition, which a signal interrupts; elsewhere
after one slice, :data:`WAIT_SLICE`), and ``KeyboardInterrupt`` is raised in the caller.  This
only helps when the factorization releases the GIL, so that the main thread can run the handler
while the worker computes: :func:`scipy.linalg.lu_factor` does, SciPy's Cholesky wrappers
(``scipy.linalg.cholesky``, ``cho_factor``, ``lapack.dpotrf``) do not, and :func:`potrf_inplace`
calls the same LAPACK ``potrf`` through SciPy's Cython LAPACK table with the GIL released.

An interrupted factorization is not stopped (LAPACK cannot be): the worker finishes it in the
background, holding its own references to its arrays (so nothing it writes is freed under it),
and its result is dropped.  Until then it keeps its core(s) and its memory.  The worker is not a
daemon thread: an interpreter that exits after the interrupt waits for it, so that the process
is not torn down (BLAS buffers released at exit) under a running LAPACK call.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import scipy.linalg as sla

__all__ = ["MIN_THREADED_ORDER", "WAIT_SLICE", "call_interruptibly", "potrf_inplace"]

#: Matrices of lower order are factored in the calling thread: an LU of order 500 takes about
#: 5 ms on one core, so an interrupt waits little, and a thread start (~0.1 ms) is not free.
MIN_THREADED_ORDER = 500

#: Seconds the main thread waits on the worker between checks for a pending signal (where a
#: signal does not interrupt the wait itself, the most an interrupt is delayed).
WAIT_SLICE = 0.05


def call_interruptibly(order, function, *args, **kwargs):
    """``function(*args, **kwargs)``, in a worker thread when a signal could wait on it.

    In the main thread, for a matrix of ``order`` at least :data:`MIN_THREADED_ORDER`, the call
    runs in a fresh worker thread while the main thread waits in slices of :data:`WAIT_SLICE`
    seconds; a ``KeyboardInterrupt`` (or any exception a signal handler raises) ends the wait and
    propagates at once, the worker finishing unobserved.  Otherwise — another thread (signals
    are delivered to the main thread only) or a small matrix — it is a plain call.

    ``function`` must release the GIL for its long part (see the module docstring) and must not
    depend on the calling thread's state (context variables, ``threading.local``).

    Returns
    -------
    object
        What ``function`` returns.

    Raises
    ------
    BaseException
        What ``function`` raises, re-raised in the caller.
    """
    if order < MIN_THREADED_ORDER or threading.current_thread() is not threading.main_thread():
        return function(*args, **kwargs)
    outcome = {}
    done = threading.Event()

    def work():
        try:
            outcome["result"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the caller as it is
            outcome["error"] = error
        finally:
            done.set()

    worker = threading.Thread(target=work, name="semiscale-factorization")
    worker.start()
    while not done.wait(WAIT_SLICE):
        pass
    if "error" in outcome:
        error = outcome.pop("error")
        try:
            raise error
        finally:
            del error  # no frame ↔ traceback cycle kept alive
    return outcome.pop("result")


# -------------------------------------------------------------------------- GIL-free potrf
_POTRF = {}


def _lapack_potrf(dtype):
    """``potrf`` of SciPy's Cython LAPACK as a ctypes function (which releases the GIL), or
    None when this SciPy does not export it."""
    key = np.dtype(dtype).char
    if key not in _POTRF:
        _POTRF[key] = None
        try:
            from scipy.linalg import cython_lapack

            capsule = cython_lapack.__pyx_capi__[{"d": "dpotrf", "f": "spotrf"}[key]]
            get_name = ctypes.pythonapi.PyCapsule_GetName
            get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
            get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
            get_pointer.restype = ctypes.c_void_p
            get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
            address = get_pointer(capsule, get_name(capsule))
        except (ImportError, AttributeError, KeyError, ValueError):
            return None
        int_p = ctypes.POINTER(ctypes.c_int)
        # void potrf(char *uplo, int *n, <real> *a, int *lda, int *info)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_char_p, int_p, ctypes.c_void_p, int_p, int_p)
        _POTRF[key] = prototype(address)
    return _POTRF[key]


def potrf_inplace(A):
    r"""Lower Cholesky factor ``L`` (``L Lᵀ = A``) written over ``A``, the GIL released.

    LAPACK ``potrf`` on the lower triangle of a Fortran-ordered float64 or float32 ``A``, then
    the strict upper triangle zeroed column by column: the factor of
    ``scipy.linalg.cholesky(A, lower=True, overwrite_a=True)``, bit for bit, and no other n × n
    array.  Falls back to that call (which keeps the GIL) when SciPy's Cython LAPACK table is not
    reachable, or for other arrays.

    Returns
    -------
    ndarray
        ``A`` itself when factored in place.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``A`` is not positive definite (a non-positive pivot).
    """
    s = A.shape[0]
    potrf = _lapack_potrf(A.dtype) if A.dtype in (np.float64, np.float32) else None
    if potrf is None or not A.flags.f_contiguous or not A.flags.writeable or s == 0:
        return sla.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
    n, info = ctypes.c_int(s), ctypes.c_int(0)
    potrf(b"L", ctypes.byref(n), A.ctypes.data, ctypes.byref(n), ctypes.byref(info))
    if info.value > 0:
        raise np.linalg.LinAlgError(
            f"{info.value}-th leading minor of array is not positive definite"
        )
    if info.value < 0:  # pragma: no cover - only for invalid arguments
        raise ValueError(f"LAPACK potrf: illegal value in argument {-info.value}")
    for j in range(1, s):
        A[:j, j] = 0.0
    return A
