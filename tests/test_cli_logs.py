"""The command line's stderr in a log file, on a terminal and in a closed pipe (issue 28 item 8).

Each test runs ``semiscale`` in a subprocess, as a user's shell would: what reaches a file or a
terminal is then exactly what the user gets.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys

import pytest

#: The two-moons part of the demo, small: five stages and a kNN graph in about a second.
DEMO = ["demo", "--skip-real", "--plot", "", "--n-train", "300"]

#: The lines the demo's stages write: one per stage, with its seconds.
STAGE_LINES = [
    r"two moons: data: \d+\.\d\d s",
    r"two moons: RLS \(supervised\): \d+\.\d\d s",
    r" *kNN graph of 300 points \(k=8\): \d+\.\d\d s",
    r"\[KNNGraph\] n=300 d=2 k=8 .*, 1 component\(s\); .*",  # the graph's summary line
    r"two moons: LapRLS \(exact\): \d+\.\d\d s",
]

#: Any escape sequence: CSI (cursor moves, colours), OSC, or a lone ESC.
ESCAPE = re.compile(rb"\x1b")


def _command(*args):
    return [sys.executable, "-m", "semiscale.cli", *args]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("TERM", "NO_COLOR")}
    return {**env, **extra}


def test_a_log_file_gets_one_plain_line_per_stage(tmp_path):
    log = tmp_path / "log"
    with open(log, "wb") as err:
        done = subprocess.run(
            _command(*DEMO), stdout=subprocess.PIPE, stderr=err, env=_env(), timeout=120
        )
    assert done.returncode == 0
    data = log.read_bytes()
    assert b"\r" not in data and not ESCAPE.search(data), data[:500]
    lines = data.decode().splitlines()
    for pattern in STAGE_LINES:
        assert sum(bool(re.fullmatch(pattern, line)) for line in lines) == 1, (pattern, lines)
    assert b"two moons:" in done.stdout and b"two moons: data" not in done.stdout


def _run_on_a_terminal(args, env):
    """Run the command with stderr on a pseudo-terminal; return its exit code and the bytes."""
    pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX-only")
    import fcntl
    import struct
    import termios

    controller, terminal = pty.openpty()
    # a terminal of 24 x 100 characters (a new pseudo-terminal has 0 columns: no room to draw)
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        _command(*args), stdout=subprocess.DEVNULL, stderr=terminal, env=env, close_fds=True
    )
    os.close(terminal)
    chunks = []
    try:
        while True:  # read while it runs: a full terminal buffer would block the command
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                proc.kill()
                pytest.fail("the command wrote nothing for 60 s")
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the command exited and closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
    return proc.wait(timeout=60), b"".join(chunks)


def test_a_terminal_still_gets_live_bars():
    code, shown = _run_on_a_terminal(DEMO, _env(TERM="xterm"))
    assert code == 0
    assert b"\rtwo moons: data: 00:00" in shown  # a stage drawn (and redrawn) in place
    assert b"\x1b[A" in shown  # a bar nested under the stage: the cursor moves up to it
    assert not re.search(rb"\x1b\[[0-9;]*m", shown)  # never a colour


def test_a_dumb_terminal_gets_plain_lines():
    code, shown = _run_on_a_terminal(DEMO, _env(TERM="dumb"))
    assert code == 0
    assert b"\r\n" in shown  # the terminal's own line ends (onlcr), nothing else
    assert b"\r" not in shown.replace(b"\r\n", b"\n") and not ESCAPE.search(shown)
    assert re.search(rb"two moons: data: \d+\.\d\d s", shown)


def test_a_closed_pipe_ends_the_command_quietly():
    # `semiscale datasets | head -1` when head has gone before the table is written: the pipe
    # is closed before the command (still importing) writes anything
    proc = subprocess.Popen(
        _command("datasets"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()
    )
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=60)
    assert err == b"", err.decode()
    assert code == 141  # 128 + SIGPIPE: what a shell reports for `yes | head`
