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

**Bars on a terminal, lines elsewhere.**  A bar redraws itself with carriage returns and
cursor-up codes, which a terminal interprets and a file keeps: ``semiscale demo 2> log`` would
fill the log with them.  So what is drawn depends on stderr (:func:`draws_bars`): a terminal
(``isatty()``, and ``$TERM`` is not ``dumb``) or a notebook gets live bars, and stage lines with
a clock redrawn every second (:func:`ticking`); anything else (a file, a pipe, a CI log, pytest's
capture) gets no control character at all: each bar and each stage writes *one plain line when
it ends*, indented by the bars and stages open around it (so a stage's line follows those of the
steps inside it), with its count and seconds (``semiscale demo 2> log``, its first lines)::

    two moons: data: 0.00 s
    two moons: RLS (supervised): 0.03 s
        kNN search (k-d tree, 2000 points): 0.02 s
      kNN graph of 2000 points (k=8): 0.02 s
    [KNNGraph] n=2000 d=2 k=8 (kdtree): 19476 edges, 1 component(s); search 0.020s, ...
      kernel matrix (2000×2000): 0.20 s
      LapRLS direct solve (2000×2000 LU): 1.39 s
    two moons: LapRLS (exact): 1.99 s

No colour is ever written (nothing to turn off for ``NO_COLOR``).  Verbose messages
(:func:`log`) are plain lines in both cases.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
from contextlib import contextmanager

from tqdm import tqdm

__all__ = [
    "CLOCK_FORMAT",
    "MIN_INTERVAL",
    "STAGE_FORMAT",
    "current_verbosity",
    "DRAW_BARS",
    "draws_bars",
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

#: Whether bars are drawn: None decides by the stream (:func:`draws_bars`); tests set True or
#: False to see one kind of output whatever pytest's capture is.
DRAW_BARS: bool | None = None

_AMBIENT: contextvars.ContextVar[int] = contextvars.ContextVar("semiscale_verbosity", default=0)

#: Plain lines' indentation: the plain bars and stages open around the current one.
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("semiscale_depth", default=0)


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


def draws_bars(stream) -> bool:
    """True when ``stream`` shows live bars: a terminal (not ``TERM=dumb``) or a notebook.

    A dumb terminal cannot move the cursor up (nested bars need it); a notebook's stderr is
    no terminal but renders a bar's carriage returns.  :data:`DRAW_BARS` overrides the answer.
    """
    if DRAW_BARS is not None:
        return bool(DRAW_BARS)
    if type(stream).__module__.startswith("ipykernel"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


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

    On a terminal a live bar; elsewhere one plain line when it closes (module docstring).  Use
    it around an iterable (``for x in progress(items, desc=...)``) or with a count
    (``with progress(total=n, desc=...) as bar: ... bar.update()``).  ``total=None`` without an
    iterable of known length shows a counter and a rate instead of a bar.  ``leave=False``
    (the default) erases the bar when it closes: the results that follow say what was done.
    Other keyword arguments go to :class:`tqdm.tqdm`.

    A disabled bar costs a few attribute checks per update; guard expensive postfix formatting
    with ``if not bar.disable``.
    """
    return _bar(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        leave=leave,
        disable=not enabled(verbose),
        **{"mininterval": MIN_INTERVAL, **kwargs},
    )


@contextmanager
def stage(desc: str, verbose=None, *, leave: bool = False, bar_format: str = STAGE_FORMAT):
    """Show ``desc`` on stderr while the block runs (a step without a count).

    Yields the bar (disabled when the effective verbosity is 0): the block can say what it is
    doing with ``bar.set_postfix_str(...)``, and bars opened inside the block are drawn below
    it.  The line is redrawn only when the block updates it (the library starts no thread for
    its display); the command line redraws its stages every second
    (:func:`semiscale._progress.ticking`).  Where no bar is drawn (not a terminal), the stage
    writes one line when it ends, ``desc: 1.23 s``, without the postfix: that named the step in
    progress, which is over.  A stage ended by an exception writes no line (the error says
    what failed).
    """
    bar = _bar(
        total=None,
        desc=desc,
        bar_format=bar_format,
        leave=leave,
        disable=not enabled(verbose),
        mininterval=MIN_INTERVAL,
        stage=True,
    )
    try:
        bar.refresh()
        yield bar
    except BaseException:
        _discard(bar)
        raise
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
    """Redraw ``bar`` every ``seconds`` while the block runs.

    Nothing when it is disabled or not drawn (a plain line is written once, when it ends).
    """
    if bar.disable or isinstance(bar, _LineBar):
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


# ------------------------------------------------------------------------- plain lines
class _Sink:
    """Where a plain bar's tqdm machinery draws: nowhere (it keeps counts, clock and postfix)."""

    encoding = "utf-8"

    def write(self, text):
        return len(text)

    def flush(self):
        pass


_SINK = _Sink()

#: A plain line of a bar with a total, of a counter (no total) and of a stage; ``seconds`` is
#: the elapsed time to the hundredth (tqdm's ``{elapsed}`` is to the second).
LINE_FORMAT = "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} [{seconds}, {rate_fmt}{postfix}]"
COUNTER_LINE_FORMAT = "{desc}: {n_fmt}{unit} [{seconds}, {rate_fmt}{postfix}]"
STAGE_LINE_FORMAT = "{desc}: {seconds}"


class _LineBar(tqdm):
    """A tqdm bar that draws nothing while it runs and writes one plain line when it closes.

    tqdm's own bookkeeping (count, clock, rate, postfix, thread-safe updates) is kept by
    drawing into a sink; the line goes to the stream the bar was opened on.
    """

    def __init__(self, *args, stream, is_stage=False, **kwargs):
        self._stream = stream
        self._is_stage = is_stage
        self._depth = _DEPTH.get()
        super().__init__(*args, file=_SINK, **kwargs)
        _DEPTH.set(self._depth + 1)

    def line(self) -> str:
        """The bar's plain line in its current state (the overall rate, not tqdm's average)."""
        state = {**self.format_dict, "rate": None, "ncols": None}
        elapsed = state["elapsed"]
        if self._is_stage:
            text = STAGE_LINE_FORMAT.format(desc=state["prefix"], seconds=f"{elapsed:.2f} s")
        else:
            form = LINE_FORMAT if state["total"] else COUNTER_LINE_FORMAT
            text = tqdm.format_meter(**{**state, "bar_format": form}, seconds=f"{elapsed:.2f} s")
        return "  " * self._depth + text

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None:
            self.discard()
        return super().__exit__(exc_type, exc_value, traceback)

    def discard(self):
        """Close without a line: the block failed, and its error says what failed."""
        self._discarded = True

    def close(self):
        if self.disable:  # closed already (or never enabled)
            return
        text = None if getattr(self, "_discarded", False) else self.line()
        super().close()
        _DEPTH.set(self._depth)
        if text is not None:
            try:
                tqdm.write(text, file=self._stream)
            except ValueError as exc:  # a closed stream, as tqdm's own close tolerates
                if "closed" not in str(exc):
                    raise


def _discard(bar) -> None:
    """A plain bar closes without its line; a drawn one is erased on close anyway."""
    if isinstance(bar, _LineBar):
        bar.discard()


def _bar(iterable=None, *, disable, stage=False, **kwargs) -> tqdm:
    """A live bar on a terminal, a :class:`_LineBar` elsewhere, a disabled bar when silent."""
    stream = sys.stderr
    if disable:
        return tqdm(iterable, file=stream, disable=True, **kwargs)
    if draws_bars(stream):
        return tqdm(iterable, file=stream, dynamic_ncols=True, **kwargs)
    return _LineBar(iterable, stream=stream, is_stage=stage, **kwargs)
