"""The example scripts of examples/ run as a user runs them, and print what the guide quotes.

Each script runs in a fresh interpreter (``python examples/NAME.py``) with single-threaded BLAS,
as the rest of the suite; each takes seconds.  The guide's own code (docs/*.md) and the
docstrings' examples run as doctests (pyproject's ``--doctest-modules --doctest-glob='*.md'``).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_example(name, *args, timeout=120):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_every_example_is_tested():
    tested = {"two_moons.py", "usps_few_labels.py", "model_selection.py", "memory_budget.py"}
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested


def test_two_moons():
    out = run_example("two_moons.py")
    lines = {line.split(" accuracy")[0].strip(): line for line in out.splitlines()}
    laprls = lines["LapRLS (8-NN graph)"]
    assert "training points 0.99" in laprls or "training points 1.0" in laprls
    assert "RLS (supervised, intrinsic_reg=0)" in lines


def test_two_moons_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    path = tmp_path / "moons.png"
    run_example("two_moons.py", "--n-samples", "500", "--plot", str(path))
    assert path.stat().st_size > 0


def test_usps_few_labels():
    out = run_example("usps_few_labels.py")
    rows = [line.split() for line in out.splitlines() if line.strip()[:2].strip().isdigit()]
    assert [int(row[0]) for row in rows] == [1, 2, 5, 10]
    for per_class, rls, laprls in ((int(r[0]), float(r[1]), float(r[2])) for r in rows):
        assert laprls > rls, (per_class, rls, laprls)


def test_model_selection():
    out = run_example("model_selection.py")
    assert "LapRLS: best" in out and "2 graph builds" in out


def test_memory_budget():
    out = run_example("memory_budget.py", "--n-samples", "5000")
    assert "exact LapRLS, memory_budget=256MiB: MemoryBudgetError" in out
    fits = [line for line in out.splitlines() if line.startswith("Nyström LapRLS")]
    assert len(fits) == 2
    for line in fits:
        accuracy = float(line.split("accuracy ")[1].split(",")[0])
        assert accuracy > 0.99, line
