"""Progress lines that keep their clock running: the command line's stages and a run's bar.

:mod:`semiscale._progress` redraws a bar only when its loop updates it.  A benchmark fit or
an exact solve can take minutes without an update, so here a daemon thread redraws the bar every
:data:`TICK_SECONDS` (elapsed time, and the postfix naming the step in progress).  The thread
only draws; it lives in the harness, which measures fits but runs no library computation.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from ..._progress import stage

__all__ = ["CLOCK_FORMAT", "TICK_SECONDS", "ticking", "ticking_stage"]

#: Seconds between two redraws of a ticking bar.
TICK_SECONDS = 1.0

#: A ticking stage's line: its name, its running clock, what it is doing.
CLOCK_FORMAT = "{desc}: {elapsed}{postfix}"


@contextmanager
def ticking(bar, seconds: float = TICK_SECONDS):
    """Redraw ``bar`` every ``seconds`` while the block runs (nothing when it is disabled)."""
    if bar.disable:
        yield bar
        return
    stop = threading.Event()

    def tick():
        while not stop.wait(seconds):
            bar.refresh()  # takes the bar's lock: safe beside the block's updates

    thread = threading.Thread(target=tick, name="semiscale-progress", daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()


@contextmanager
def ticking_stage(desc: str, verbose=None, *, leave: bool = False):
    """:func:`semiscale._progress.stage` with a running clock: ``desc: 00:12``."""
    with stage(desc, verbose, leave=leave, bar_format=CLOCK_FORMAT) as bar, ticking(bar):
        yield bar
