"""Progress on stderr (issue 11 part 3): the convention of semiscale._progress and its users."""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

from semiscale._progress import (
    current_verbosity,
    draws_bars,
    enabled,
    log,
    progress,
    silenced,
    stage,
    ticking,
    ticking_stage,
    verbosity,
)
from semiscale.solvers import cg


@pytest.fixture(autouse=True)
def _draw_every_state(monkeypatch):
    """Bars redraw at most every 0.1 s, so a fast loop is erased before it is drawn."""
    import semiscale._progress

    monkeypatch.setattr(semiscale._progress, "MIN_INTERVAL", 0)


def _spd(n=40, seed=0):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return (Q * np.linspace(1, 50, n)) @ Q.T


# ------------------------------------------------------------------------------ convention
def test_effective_verbosity_is_the_max_of_the_argument_and_the_ambient_level():
    assert current_verbosity() == 0 and not enabled() and not enabled(0)
    assert enabled(1) and enabled(True) and not enabled(False) and not enabled(None)
    assert current_verbosity(3) == 3 and not enabled(1, level=2)
    with verbosity(1):
        assert enabled() and enabled(0) and not enabled(0, level=2)
        with verbosity(0):  # never lowers
            assert current_verbosity() == 1
        with silenced():
            assert not enabled() and not enabled(0)
            assert enabled(1)  # an explicit verbose still counts
        assert current_verbosity() == 1
    assert current_verbosity() == 0
    with pytest.raises(TypeError, match="verbose must be"):
        enabled("loud")


def test_ambient_level_does_not_leak_into_other_threads():
    seen = []
    with verbosity(1):
        thread = threading.Thread(target=lambda: seen.append(current_verbosity()))
        thread.start()
        thread.join()
    assert seen == [0]


@pytest.mark.parametrize("bars", [True, False], ids=["terminal", "file"])
def test_bars_stages_and_log_write_to_stderr_only_when_enabled(bars, capsys, monkeypatch):
    monkeypatch.setattr("semiscale._progress.DRAW_BARS", bars)
    for _ in progress(range(3), desc="silent loop"):
        pass
    with stage("silent stage"):
        pass
    log("silent message")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""

    for _ in progress(range(3), desc="loud loop", verbose=1):
        pass
    with stage("loud stage", verbose=1) as bar:
        bar.set_postfix_str("step two")
    log("loud message", verbose=1)
    log("not at level 2", verbose=1, level=2)
    captured = capsys.readouterr()
    assert captured.out == ""
    for text in ("loud loop", "3/3", "loud stage", "loud message"):
        assert text in captured.err, text
    assert "not at level 2" not in captured.err
    # a drawn stage shows what it is doing; its plain line, written at the end, does not
    assert ("step two" in captured.err) == bars


def test_no_control_characters_where_no_bar_is_drawn(capsys, monkeypatch):
    # pytest's capture is no terminal: every bar and stage is one plain line, written when it
    # closes, indented by the bars and stages open around it (so inner lines come first)
    monkeypatch.setattr("semiscale._progress.TICK_SECONDS", 0.01)
    with verbosity(1), ticking_stage("outer"):
        with stage("inner") as inner:
            inner.set_postfix_str("working")
            for _ in progress(range(4), desc="loop", unit="point"):
                threading.Event().wait(0.02)  # past TICK_SECONDS: a drawn clock would tick
            with progress(desc="counter") as bar:
                bar.update(7)
                bar.set_postfix_str("residual 1e-9")
            log("a message")
        with progress(total=2_000_000, desc="download", unit="B", unit_scale=True) as bar:
            bar.update(2_000_000)
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b" not in err
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "    loop",
        "    counter",
        "a message",
        "  inner",
        "  download",
        "outer",
    ]
    assert lines[0].startswith("    loop: 100% 4/4 [0.") and lines[0].endswith("point/s]")
    assert lines[1].startswith("    counter: 7it [0.") and lines[1].endswith(", residual 1e-9]")
    assert lines[3].startswith("  inner: 0.") and lines[3].endswith(" s")
    assert lines[4].startswith("  download: 100% 2.00M/2.00M [")
    assert lines[5].startswith("outer: 0.") and lines[5].endswith(" s")
    # the depth is restored: the next line starts at the margin, and no ticking thread is left
    with verbosity(1), stage("after"):
        pass
    assert capsys.readouterr().err.startswith("after: ")
    assert not [t for t in threading.enumerate() if t.name == "semiscale-progress"]


def test_a_failed_block_writes_no_line(capsys):
    # its error says what failed: "failing stage: 0.00 s" before it would read as a success
    with verbosity(1):
        with pytest.raises(KeyError), stage("failing stage"):
            raise KeyError("x")
        with pytest.raises(KeyError), progress(total=3, desc="failing bar") as bar:
            bar.update()
            raise KeyError("x")
        with stage("next stage"):
            pass
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("next stage: ")  # at the margin: the failed ones closed


def test_a_stream_closed_under_a_stage_costs_no_error(monkeypatch):
    import io
    import sys

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with verbosity(1), stage("the stream closes inside"):
        stream.close()  # e.g. a caller's log file, closed before the work ends


class _Stream:
    """A stream that says whether it is a terminal (or cannot say)."""

    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        if isinstance(self.tty, Exception):
            raise self.tty
        return self.tty


def test_bars_are_drawn_on_terminals_and_notebooks_only(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    assert draws_bars(_Stream(True))
    assert not draws_bars(_Stream(False))
    assert not draws_bars(_Stream(ValueError("I/O operation on closed file")))
    assert not draws_bars(object())  # no isatty at all
    notebook = type("OutStream", (), {"__module__": "ipykernel.iostream"})()
    assert draws_bars(notebook)  # renders '\r' though it is no terminal
    monkeypatch.setenv("TERM", "dumb")  # cannot move the cursor up for nested bars
    assert not draws_bars(_Stream(True))
    monkeypatch.setattr("semiscale._progress.DRAW_BARS", True)
    assert draws_bars(_Stream(False))


def test_ticking_redraws_then_stops_its_thread(capsys, monkeypatch):
    import semiscale._progress as ticker

    monkeypatch.setattr(ticker, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(ticker, "DRAW_BARS", True)
    with ticking_stage("a long step", verbose=1):
        threading.Event().wait(0.1)
    assert "a long step: 00:00" in capsys.readouterr().err
    with ticking(progress(total=2, desc="off")) as bar:  # disabled: no thread
        bar.update()
    assert not [t for t in threading.enumerate() if t.name == "semiscale-progress"]
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------------- solvers
def test_cg_counts_iterations_with_the_residual_on_stderr(capsys):
    A = _spd()
    b = np.ones(A.shape[0])
    quiet = cg(A, b, tol=1e-8)
    assert capsys.readouterr().err == ""

    loud = cg(A, b, tol=1e-8, verbose=1, desc="CG test")
    err = capsys.readouterr().err
    assert f"CG test: {loud.n_iter}it" in err
    assert "residual" in err and "(tol 1e-08)" in err
    np.testing.assert_array_equal(loud.x, quiet.x)  # reporting changes nothing

    cg(A, np.column_stack([b, 2 * b]), tol=1e-8, verbose=2)
    err = capsys.readouterr().err
    assert "[CG] iteration 1: residual" in err and "columns active" in err


def test_cg_follows_the_ambient_level(capsys):
    A = _spd()
    with verbosity(1):
        cg(A, np.ones(A.shape[0]))
    assert "CG: " in capsys.readouterr().err
    with verbosity(1), silenced():
        cg(A, np.ones(A.shape[0]))
    assert capsys.readouterr().err == ""


def _moons(n=120):
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(n, noise=0.1, random_state=0)
    y_ssl = np.full(n, np.nan)
    y_ssl[:12] = y[:12]
    return X, y_ssl


@pytest.mark.parametrize("verbose", [0, 1])
def test_nystrom_pcg_fit_reports_its_preconditioner_and_iterations(verbose, capsys):
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.models import NystromLapRLSRegressor

    X, y = _moons()
    model = NystromLapRLSRegressor(
        kernel=RBF(gamma=5.0),
        graph=KNNGraph(n_neighbors=10),
        n_centers=40,
        random_state=0,
        verbose=verbose,
    )
    model.fit(X, y)
    err = capsys.readouterr().err
    if verbose:
        assert "preconditioner (" in err and "PCG (" in err and "residual" in err
    else:
        assert err == ""


def test_newton_reports_its_steps(capsys):
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.losses import SquaredHingeLoss
    from semiscale.solvers.exact import solve_exact
    from semiscale.solvers.newton import solve_manifold
    from semiscale.solvers.problem import ManifoldProblem

    X, y = _moons()
    labeled = np.isfinite(y)
    targets = np.where(labeled, 2 * np.nan_to_num(y) - 1, 0.0)[:, None]
    laplacian = KNNGraph(n_neighbors=10).fit(X).laplacian_
    problem = ManifoldProblem(
        X=X,
        targets=targets,
        labeled=labeled,
        laplacian=laplacian,
        lambda_ambient=0.05,
        lambda_intrinsic=0.5,
        kernel=RBF(gamma=5.0),
        loss=SquaredHingeLoss(),
        verbose=1,
    )
    solution = solve_manifold(problem, partial(solve_exact, solver="cg", tol=1e-6))
    err = capsys.readouterr().err
    steps = solution.info["newton_iterations"][0]
    assert f"Newton (squared_hinge, column 0): {steps}step" in err
    assert "objective" in err and "CG" in err  # each step's inner solve below it


@pytest.mark.parametrize("verbose", [0, 1])
def test_exact_fit_names_its_stages(verbose, capsys):
    from semiscale.datasets import make_two_moons
    from semiscale.models import LapRLSClassifier

    X, y = make_two_moons(300, random_state=0)
    y_ssl = np.where(np.arange(300) < 20, y, -1)
    LapRLSClassifier(verbose=verbose).fit(X, y_ssl)
    err = capsys.readouterr().err
    if verbose:
        assert "kernel matrix (300×300)" in err and "LapRLS direct solve" in err
    else:
        assert err == ""


def test_exact_search_counts_its_points(capsys):
    from semiscale.graph.knn import kneighbors

    with verbosity(1):
        kneighbors(np.random.default_rng(0).standard_normal((3000, 40)), 5, method="exact")
    assert "kNN search (exact)" in capsys.readouterr().err
