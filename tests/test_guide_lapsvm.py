"""docs/lapsvm.md quotes measured numbers only from the results folders it names.

The page's ``>>>`` examples run with the other guide pages (``pytest docs/``); its prose cites
a few numbers measured by the benchmarks.  Each paragraph that names a folder
``benchmarks/results/NAME/`` may only state numbers found in that folder's Markdown reports,
so a rerun that changes them fails here until the page is updated.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "lapsvm.md"
FOLDER = re.compile(r"benchmarks/results/(\w+)/")
NUMBER = re.compile(r"(?<![\w.§\[])\d[\d,]*(?:\.\d+)?")


def _prose_paragraphs(text):
    """The paragraphs of ``text`` outside fenced blocks and display math."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


def _numbers(text):
    """Numbers of two digits or more (commas dropped), ignoring equation and section numbers."""
    return {n.replace(",", "") for n in NUMBER.findall(text) if len(n.replace(",", "")) >= 2}


def test_every_number_next_to_a_results_folder_is_in_its_reports():
    cited = 0
    for paragraph in _prose_paragraphs(PAGE.read_text()):
        folders = FOLDER.findall(paragraph)
        if not folders:
            continue
        reports = ""
        for name in folders:
            files = sorted((ROOT / "benchmarks" / "results" / name).glob("*.md"))
            assert files, f"docs/lapsvm.md cites benchmarks/results/{name}/, which has no report"
            reports += "\n".join(f.read_text() for f in files)
        found = _numbers(reports)
        for number in _numbers(paragraph):
            cited += 1
            assert number in found, (number, folders, paragraph[:200])
    assert cited >= 5  # the page does quote measurements


def test_the_check_sees_a_drifted_number():
    text = PAGE.read_text()
    paragraph = next(p for p in _prose_paragraphs(text) if "slapcvm_exact_qp" in p)
    assert "92.4" in paragraph
    reports = (ROOT / "benchmarks" / "results" / "slapcvm_exact_qp" / "README.md").read_text()
    assert "92.4" in _numbers(reports)
    drifted = paragraph.replace("92.4", "92.5")
    assert not _numbers(drifted) <= _numbers(reports)
