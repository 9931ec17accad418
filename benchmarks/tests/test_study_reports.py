"""Every study's README renders again from its committed records (``--render-only``).

A study's README is written from its ``results.json`` alone; maintainers may add notes to it
afterwards.  So the lines rendered today from the committed records must all be in the
committed README, in order: a change to a study's summary or report that would change its
committed results fails here.
"""

import shutil
from pathlib import Path

import pytest

from semiscale_bench.harness import CATALOG, Study, load_benchmark, run_benchmark

RESULTS = Path(__file__).resolve().parents[1] / "results"

#: Lines of a committed README edited by hand after rendering (their first words).
HAND_EDITED = {"out_of_sample": ("Produced by ",)}


def _studies():
    names = [n for n in CATALOG if (RESULTS / n / "results.json").is_file()]
    return [n for n in names if isinstance(load_benchmark(n), Study)]


def _in_order(lines, within):
    """The ``lines`` that are not found in ``within`` in order (empty: all found)."""
    rest = iter(within)
    return [line for line in lines if not any(line == other for other in rest)]


def test_every_study_with_committed_records_is_checked():
    assert len(_studies()) >= 18


@pytest.mark.parametrize("name", _studies())
def test_a_study_renders_its_committed_readme_again(name, tmp_path, monkeypatch):
    monkeypatch.chdir(RESULTS.parent.parent)  # studies read other results by relative path
    out = tmp_path / name
    shutil.copytree(RESULTS / name, out)
    (out / "README.md").unlink()
    run_benchmark(load_benchmark(name), out=out, render_only=True, verbose=0)
    rendered = (out / "README.md").read_text().splitlines()
    rendered = [line for line in rendered if not line.startswith(HAND_EDITED.get(name, ("\0",)))]
    committed = (RESULTS / name / "README.md").read_text().splitlines()
    assert _in_order(rendered, committed) == []
