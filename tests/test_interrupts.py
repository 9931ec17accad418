"""Ctrl-C stops long work at once and cleanly.

Threaded kernel products, the brute-force, k-d tree and HNSW kNN searches, and the dense
factorizations (run interruptibly by :mod:`semiscale.linalg._interruptible`, whose results and
errors must be LAPACK's own) raise ``KeyboardInterrupt`` within a second or so, in a fresh
process.  Each test failed before its fix (issues 11 and 26).
"""

import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import scipy.linalg as sla

from semiscale.graph._hnsw import ANN_HINT, ann_available
from semiscale.linalg import _interruptible
from semiscale.linalg._interruptible import MIN_THREADED_ORDER
from semiscale.linalg.ops import get_ops

_KDTREE_SCRIPT = textwrap.dedent(
    """
    import signal
    import numpy as np
    # A shell's background jobs start with SIGINT ignored (Python then installs no
    # KeyboardInterrupt handler): restore it, as an interactive session has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from semiscale.graph.knn import kneighbors
    X = np.random.default_rng(0).standard_normal((100_000, 10))
    print("ready", flush=True)
    while True:
        kneighbors(X, 10, method="exact", n_jobs=2)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_in_threaded_kdtree_query_is_a_keyboard_interrupt():
    # Before: scipy's cKDTree.query(workers=2) joined its threads in the calling thread; Ctrl-C
    # raised there while the threads still wrote into the result arrays being freed, and the
    # process died of a segmentation fault (6 times in 6 for NystromLapSVC(n_jobs=-1)).
    proc = subprocess.Popen(
        [sys.executable, "-c", _KDTREE_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    stderr = proc.stderr.read()
    assert proc.returncode != -signal.SIGSEGV, stderr
    assert proc.returncode in (1, -signal.SIGINT, 128 + signal.SIGINT), (proc.returncode, stderr)
    assert stderr.rstrip().endswith("KeyboardInterrupt"), stderr


# ----------------------------------------------------------------- Ctrl-C inside LAPACK (defect 8)
def _interrupt_when_a_worker_starts(call):
    """Run ``call`` in the main thread and SIGINT it once a new thread is running (or after 0.2 s
    when none starts); returns whether a thread other than the interrupter was still running
    when ``KeyboardInterrupt`` reached this frame (the factorization had not returned)."""
    before = set(threading.enumerate())
    main = threading.main_thread().ident

    def interrupter():
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            new = set(threading.enumerate()) - before - {threading.current_thread()}
            if any(t.is_alive() for t in new):  # running, not only listed by start()
                break
            time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)

    sender = threading.Thread(target=interrupter)
    running_at_interrupt = None
    # A shell's background jobs (CI runners, nohup) start with SIGINT ignored, and this test
    # process inherits that: install Python's own handler for the test, restore it after.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sender.start()
        call()
        sender.join()
        for _ in range(1000):  # the interrupt that came after the call returned lands here
            time.sleep(0.001)
    except KeyboardInterrupt:
        running = set(threading.enumerate()) - before - {sender}
        running_at_interrupt = any(t.is_alive() for t in running)
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 60
    for worker in set(threading.enumerate()) - before:
        if worker.daemon:
            continue
        # A worker whose start() the interrupt cut short is listed before it runs, and joining
        # it then raises RuntimeError ("cannot join thread before it is started"): wait for it.
        while not worker.is_alive() and worker in threading.enumerate():
            assert time.monotonic() < deadline, f"{worker.name} never started"
            time.sleep(0.001)
        worker.join(timeout=60)  # the abandoned factorization ends; nothing freed under it
    assert running_at_interrupt is not None, "the SIGINT never raised KeyboardInterrupt"
    return running_at_interrupt


@pytest.mark.skipif(sys.platform == "win32", reason="pthread_kill")
@pytest.mark.parametrize("kind", ["lu_factor", "lu_factor_checked", "jittered_cholesky"])
def test_ctrl_c_interrupts_a_dense_factorization_at_once(kind):
    # Before: LAPACK ran in the main thread, and Python raised KeyboardInterrupt only when it
    # returned (2.2 s after Ctrl-C for an exact LapRLSClassifier on 4,000 points).
    ops = get_ops()
    n = 3000
    A = np.random.default_rng(0).standard_normal((n, n))
    if kind == "jittered_cholesky":
        A = A @ A.T
        A.flat[:: n + 1] += n
    A = np.asfortranarray(A)
    with ops.blas_threads(1):
        assert _interrupt_when_a_worker_starts(lambda: getattr(ops, kind)(A))


def test_threaded_factorizations_equal_the_direct_lapack_calls():
    ops = get_ops()
    n = 2 * MIN_THREADED_ORDER
    A = np.random.default_rng(1).standard_normal((n, n))
    S = A @ A.T + n * np.eye(n)
    L, jitter = ops.jittered_cholesky(S)
    assert jitter == 0.0
    np.testing.assert_array_equal(L, sla.cholesky(S, lower=True))
    L32, _ = ops.jittered_cholesky(S.astype(np.float32))
    assert L32.dtype == np.float32
    np.testing.assert_array_equal(L32, sla.cholesky(S.astype(np.float32), lower=True))
    for factor in (ops.lu_factor(A), ops.lu_factor_checked(A)):
        expected = sla.lu_factor(A)
        np.testing.assert_array_equal(factor[0], expected[0])
        np.testing.assert_array_equal(factor[1], expected[1])
    # overwrite_a still factors a Fortran float64 matrix in place
    work = np.asfortranarray(A)
    lu, _ = ops.lu_factor(work, overwrite_a=True)
    assert np.shares_memory(lu, work)
    np.testing.assert_array_equal(lu, sla.lu_factor(A)[0])


def test_potrf_without_the_cython_lapack_table_is_scipys_cholesky(monkeypatch):
    monkeypatch.setattr(_interruptible, "_lapack_potrf", lambda dtype: None)
    n = MIN_THREADED_ORDER + 10
    A = np.random.default_rng(2).standard_normal((n, n))
    S = A @ A.T + n * np.eye(n)
    L, _ = get_ops().jittered_cholesky(S)
    np.testing.assert_array_equal(L, sla.cholesky(S, lower=True))


def test_factorization_errors_reach_the_caller_from_the_worker():
    ops = get_ops()
    n = MIN_THREADED_ORDER + 100
    rng = np.random.default_rng(3)
    B = rng.standard_normal((n, 5))
    with pytest.raises(np.linalg.LinAlgError, match="not positive semi-definite"):
        ops.jittered_cholesky(-(B @ B.T) - np.eye(n), max_tries=0)
    with pytest.raises(np.linalg.LinAlgError, match="Ill-conditioned"):
        ops.lu_factor_checked(B @ B.T)  # rank 5
    with pytest.raises(np.linalg.LinAlgError):  # the condition check of solve, or a zero pivot
        ops.solve(B @ B.T, np.ones(n))

    threads = []

    def failing():
        threads.append(threading.current_thread())
        raise ValueError("from the worker")

    with pytest.raises(ValueError, match="from the worker"):
        _interruptible.call_interruptibly(MIN_THREADED_ORDER, failing)
    assert threads[0] is not threading.main_thread()
    # below the threshold, or off the main thread: a plain call
    assert _interruptible.call_interruptibly(1, threading.current_thread) is threading.main_thread()


# ------------------------------------------ threaded products and searches (issue 11)
_INTERRUPT_SCRIPT = textwrap.dedent(
    """
    import signal
    import sys
    import numpy as np
    # A shell's background jobs (CI runners, nohup) start with SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler: restore it, as an interactive session has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = np.random.default_rng(0)
    if sys.argv[1] == "kernel":
        from semiscale.kernels import RBF
        from semiscale.linalg.ops import get_ops
        X = rng.standard_normal((200_000, 50))
        C, v = X[:8000], np.ones(8000)
        print("ready", flush=True)
        while True:
            get_ops().kernel_matmul(RBF(gamma=0.02), X, C, v, n_jobs=2)
    elif sys.argv[1] == "hnsw":
        from semiscale.graph.knn import kneighbors
        X = rng.standard_normal((300_000, 10))
        print("ready", flush=True)
        while True:
            kneighbors(X, 8, method="approximate", n_jobs=2)
    else:
        from semiscale.graph.knn import kneighbors
        X = rng.standard_normal((100_000, 50))
        print("ready", flush=True)
        while True:
            kneighbors(X, 8, method="exact", n_jobs=2)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
@pytest.mark.parametrize("work", ["kernel", "brute", "hnsw"])
def test_ctrl_c_stops_threaded_work_quickly(work):
    # Before: the pool waited for every chunk (kernel) or queued block (search), 5-6 s; the HNSW
    # library held the interpreter for the whole build of 300,000 points (8 s).
    if work == "hnsw" and not ann_available():
        pytest.skip(f"approximate search not installed: {ANN_HINT}")
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPT_SCRIPT, work],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
        tic = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        elapsed = time.perf_counter() - tic
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in proc.stderr.read()
    assert elapsed < 3.0, elapsed  # generous: a liveness check, not a benchmark
