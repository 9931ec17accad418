"""Faults found by an outside attack (issue 26, part 4): interrupts that must stay clean.

Each test here failed before its fix.
"""

import signal
import subprocess
import sys
import textwrap
import time

import pytest

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
