"""The example scripts of examples/ run as a user runs them, and print what the guide shows.

Each script runs once, in a fresh interpreter (``python examples/NAME.py`` with the arguments
of its entry in ``tools/regenerate_doc_numbers.py``) with single-threaded BLAS, as the rest of
the suite; each takes seconds.  Its output must be the file of ``docs/_generated/`` that the
guide includes, to the digit (times and peak memory excepted; ``make doc-numbers`` rewrites
the files), and must bear out what the guide's prose says about it (the second test of each
pair).  The guide's own code (docs/*.md) and the docstrings' examples run as doctests
(pyproject's ``--doctest-modules --doctest-glob='*.md'``).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from doc_outputs import assert_prints_what_the_docs_show, printed, tool

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def test_every_example_is_tested():
    tested = {
        "two_moons.py",
        "usps_few_labels.py",
        "model_selection.py",
        "memory_budget.py",
        "label_propagation.py",
    }
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested
    shown = {Path(output.command[0]).name for output in tool.OUTPUTS}
    assert tested <= shown, "every example's output is generated for the docs"


def test_two_moons_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("two_moons")


def test_two_moons():
    out = printed("two_moons")
    lines = {line.split(" accuracy")[0].strip(): line for line in out.splitlines()}
    laprls = lines["LapRLS (8-NN graph)"]
    rls = lines["RLS (supervised, intrinsic_reg=0)"]
    assert "training points 0.99" in laprls or "training points 1.0" in laprls
    # docs/first_model.md: supervised RLS below 0.8 with one label per moon
    assert float(rls.split("training points ")[1].split(",")[0]) < 0.8


def test_two_moons_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    path = tmp_path / "moons.png"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "two_moons.py"), "--n-samples", "500", "--plot", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert path.stat().st_size > 0


def test_usps_few_labels_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("usps_few_labels")


def test_usps_few_labels():
    out = printed("usps_few_labels")
    rows = [line.split() for line in out.splitlines() if line.strip()[:2].strip().isdigit()]
    assert [int(row[0]) for row in rows] == [1, 2, 5, 10]
    gains = []
    for per_class, rls, laprls in ((int(r[0]), float(r[1]), float(r[2])) for r in rows):
        assert laprls > rls, (per_class, rls, laprls)
        gains.append(laprls - rls)
    # docs/few_labels.md: "The gain shrinks as labels are added"
    assert gains == sorted(gains, reverse=True), gains


def test_model_selection_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("model_selection")


def test_model_selection():
    out = printed("model_selection")
    assert "LapRLS: best" in out and "12 grid points, 2 graph builds" in out
    # docs/model_selection.md: the tuned LapRLS beats the tuned RLS on the unlabeled images
    accuracy = dict(re.findall(r"^(\w+): best.*\n.*unlabeled images ([\d.]+);", out, re.M))
    assert float(accuracy["LapRLS"]) > float(accuracy["RLS"]), accuracy


def test_label_propagation_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("label_propagation")


def test_label_propagation():
    out = printed("label_propagation")
    rows = re.findall(
        r"^\s*(\d+) per class\s+(.+?)\s+([\d.]+) % \(([\d.]+), ([\d.]+)\); "
        r"largest class up to (\d+) of (\d+)",
        out,
        re.M,
    )
    table = {(int(k), name): (float(mean), int(top), int(n)) for k, name, mean, *_, top, n in rows}
    assert len(table) == 6, out
    # docs/graph_learning.md: Laplace learning without CMN collapses with one label per class
    # (the largest class takes most unlabeled images in the worst draw); CMN and Poisson
    # learning repair it.
    laplace, top, n = table[1, "Laplace"]
    assert top > n / 2
    assert table[1, "Laplace + CMN"][0] > laplace + 30
    assert table[1, "Poisson"][0] > laplace + 30
    # graph_learning.md: predict labels new images within a few points of the fit's own
    # unlabeled images, with one label per class as with ten
    new_points = re.findall(
        r"^\s*(\d+) per class  unlabeled training images\s+([\d.]+) %, new images\s+([\d.]+) %",
        out,
        re.M,
    )
    assert [int(k) for k, _, _ in new_points] == [1, 10], out
    for _, unlabeled, new in new_points:
        assert abs(float(new) - float(unlabeled)) < 3, (unlabeled, new)


def test_memory_budget_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("memory_budget")


def test_memory_budget():
    out = printed("memory_budget")
    assert "exact LapRLS, memory_budget=256MiB: MemoryBudgetError" in out
    fits = re.findall(
        r"^Nyström LapRLS, s=500, memory_budget=(\w+): accuracy ([\d.]+), (\d+) PCG "
        r"iterations, K_ns cached: (\w+)",
        out,
        re.M,
    )
    assert [(budget, cached) for budget, _, _, cached in fits] == [
        ("256MiB", "True"),
        ("16MiB", "False"),
    ]
    # docs/scaling.md: the same accuracy within 16 MiB, in fewer iterations
    (_, big_accuracy, big_iterations, _), (_, small_accuracy, small_iterations, _) = fits
    assert big_accuracy == small_accuracy and float(big_accuracy) > 0.99
    assert int(small_iterations) < int(big_iterations)
