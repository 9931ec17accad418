"""Progress bars and verbose messages: one convention for the whole library.

Every long loop reports through :func:`progress` (a tqdm bar), every step without a count
through :func:`stage` (a line naming it while it runs), every verbose message through
:func:`log`.  All three write to stderr, so that stdout keeps only results (tables,
JSON), and all three are silent unless the *effective verbosity* is at least 1.

The effective verbosity of a call is ``max(verbose, ambient)``:

* ``verbose`` is what the caller passes: an estimator or a graph passes its own ``verbose``
  parameter (an int, scikit-learn's convention: 0 silent, 1 progress bars, 2 also a line per
  iteration); ``None`` means "nothing to add".
* the *ambient* verbosity is set for a block of code by :func:`verbosity` (the command line
  sets 1 unless ``--quiet``) and reset to 0 by :func:`silenced` (a benchmark's timed fits).
  It lets code deep in the library (a kNN search, a kernel cache) report with a one-line call
  and no ``verbose`` argument threaded through every signature::

      for rows in progress(blocks, desc="kNN search", unit="block"):
          ...

The ambient level lives in a :class:`contextvars.ContextVar`: it is per thread (a thread pool's
workers start at 0) and per asyncio task, and always restored on exit.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from contextlib import contextmanager

from tqdm import tqdm

__all__ = [
    "CLOCK_FORMAT",
    "MIN_INTERVAL",
    "STAGE_FORMAT",
    "current_verbosity",
    "enabled",
    "log",
    "progress",
    "silenced",
    "stage",
    "TICK_SECONDS",
    "ticking",
    "ticking_stage",
    "verbosity",
]

#: A stage's line: its name and what it is doing (``set_postfix_str``); the elapsed time is
#: left out because nothing redraws the line while the stage runs.
STAGE_FORMAT = "{desc} …{postfix}"

#: Seconds between two redraws of a bar (tqdm's ``mininterval``): a loop faster than this is
#: drawn once, then erased.  Tests set it to 0 to see every state.
MIN_INTERVAL = 0.1

_AMBIENT: contextvars.ContextVar[int] = contextvars.ContextVar("semiscale_verbosity", default=0)


def _as_level(verbose) -> int:
    if verbose is None or verbose is False:
        return 0
    if verbose is True:
        return 1
    try:
        return max(int(verbose), 0)
    except (TypeError, ValueError):
        raise TypeError(f"verbose must be an int, a bool or None, got {verbose!r}") from None


def current_verbosity(verbose=None) -> int:
    """The effective verbosity: ``max(verbose, ambient)`` (module docstring)."""
    return max(_as_level(verbose), _AMBIENT.get())


def enabled(verbose=None, level: int = 1) -> bool:
    """True when the effective verbosity reaches ``level``."""
    return current_verbosity(verbose) >= level


@contextmanager
def verbosity(level):
    """Raise the ambient verbosity to at least ``level`` inside the block (never lowers it)."""
    token = _AMBIENT.set(max(_AMBIENT.get(), _as_level(level)))
    try:
        yield
    finally:
        _AMBIENT.reset(token)


@contextmanager
def silenced():
    """Set the ambient verbosity to 0 inside the block (an explicit ``verbose`` still counts)."""
    token = _AMBIENT.set(0)
    try:
        yield
    finally:
        _AMBIENT.reset(token)


def progress(
    iterable=None,
    *,
    total=None,
    desc: str | None = None,
    verbose=None,
    unit: str = "it",
    leave: bool = False,
    **kwargs,
) -> tqdm:
    """A progress bar on stderr, disabled unless the effective verbosity is at least 1.

    Use it around an iterable (``for x in progress(items, desc=...)``) or with a count
    (``with progress(total=n, desc=...) as bar: ... bar.update()``).  ``total=None`` without an
    iterable of known length shows a counter and a rate instead of a bar.  ``leave=False``
    (the default) erases the bar when it closes: the results that follow say what was done.
    Other keyword arguments go to :class:`tqdm.tqdm`.

    A disabled bar costs a few attribute checks per update; guard expensive postfix formatting
    with ``if not bar.disable``.
    """
    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        leave=leave,
        file=sys.stderr,
        disable=not enabled(verbose),
        dynamic_ncols=True,
        **{"mininterval": MIN_INTERVAL, **kwargs},
    )


@contextmanager
def stage(desc: str, verbose=None, *, leave: bool = False, bar_format: str = STAGE_FORMAT):
    """Show ``desc`` on stderr while the block runs (a step without a count).

    Yields the bar (disabled when the effective verbosity is 0): the block can say what it is
    doing with ``bar.set_postfix_str(...)``, and bars opened inside the block are drawn below
    it.  The line is redrawn only when the block updates it (the library starts no thread for
    its display); the command line redraws its stages every second
    (:func:`semiscale._progress.ticking`).
    """
    bar = tqdm(
        total=None,
        desc=desc,
        bar_format=bar_format,
        leave=leave,
        file=sys.stderr,
        disable=not enabled(verbose),
        dynamic_ncols=True,
        mininterval=MIN_INTERVAL,
    )
    try:
        bar.refresh()
        yield bar
    finally:
        bar.close()


def log(message: str, verbose=None, *, level: int = 1) -> None:
    """Write ``message`` on stderr when the effective verbosity reaches ``level``.

    Written above any open bar (:meth:`tqdm.tqdm.write`), so messages and bars do not mix.
    """
    if enabled(verbose, level):
        tqdm.write(message, file=sys.stderr)


# Progress lines that keep their clock running: the command line's stages and a benchmark's
# bar.  A bar is redrawn only when its loop updates it; a fit or an exact solve can take
# minutes without an update, so a daemon thread redraws it (it only draws).

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
    """:func:`stage` with a running clock: ``desc: 00:12``."""
    with stage(desc, verbose, leave=leave, bar_format=CLOCK_FORMAT) as bar, ticking(bar):
        yield bar
