"""Numbers in the user guide come from somewhere that a test reruns or reads.

A number in ``docs/*.md`` (and in README.md, whose copies are checked as the guide's) is one of

- a doctest's output (``>>>`` blocks: run by ``--doctest-glob='*.md'``);
- a program's output, shown from a file of ``docs/_generated/`` by ``{literalinclude}``: the
  file is written by ``make doc-numbers`` (``tools/regenerate_doc_numbers.py``), and the
  examples' tests (``tests/test_examples.py``) and this file's rerun each command and compare;
- a copy, in the prose or a table, from such a file or from a benchmark's results: the
  paragraph names its source (``benchmarks/results/NAME/``, ``examples/NAME.py``, or it follows
  the included output), a table takes the source of the paragraph before it, and every number
  of it must be found in the source, rounded as the page rounds it (0.9826 is "0.983" or
  "98.3 %");
- a parameter value, an identifier ("paper 004", "Table 2") or a fact of the data set, in a
  paragraph that names no source, which is not checked; or, in a paragraph that names one,
  listed in ``NOT_COPIED`` below with what it is.
"""

import re
from pathlib import Path

import pytest

from doc_outputs import assert_prints_what_the_docs_show, tool

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"
PAGES = sorted(DOCS.glob("*.md"))
# architecture.md is the code's design log, not the guide: its paragraphs quote several studies
# at once, and some of their numbers are not in the folders they name; not held to them here.
GUIDE = [page for page in PAGES if page.name != "architecture.md"] + [ROOT / "README.md"]

INCLUDE = re.compile(r"^```\{literalinclude\}\s+_generated/([\w.-]+)\.txt\s*$", re.M)
# A number as the pages write it: 7,291  0.983  1e-6  (not the 9 of "a9a", not "000" of "paper000")
NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d+)?(?![\w])")
# In a source, also the 16 of "16MiB" and the 9 of "a9a" (more numbers only make the check looser)
SOURCE_NUMBER = re.compile(r"(?<![\d.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d+)?")
CITED_RESULTS = re.compile(r"benchmarks/results/(?![A-Z]+\b)([\w-]+)")
CITED_EXAMPLE = re.compile(r"examples/([\w-]+)\.py")

# Numbers in paragraphs that name a source but are not copied from it: (page, number) -> what.
NOT_COPIED = {
    ("few_labels.md", "1,000"): "n_centers' default",
    ("few_labels.md", "8"): "KNNGraph's default n_neighbors",
    ("graph_learning.md", "50,000"): "the unknowns from which solver='auto' takes AMG",
    ("model_selection.md", "0.01"): "paper 004's Huber width h",
}


def blocks(text):
    """(kind, text, first line) of a page: fences, tables and paragraphs, in order."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield "fence", "\n".join(lines[i : j + 1]), i + 1
            i = j + 1
        elif not lines[i].strip():
            i += 1
        else:
            j = i
            while j < len(lines) and lines[j].strip() and not lines[j].startswith("```"):
                j += 1
            kind = "table" if lines[i].startswith("|") else "prose"
            yield kind, "\n".join(lines[i:j]), i + 1
            i = j


def generated_files_of_example(stem):
    return [output.path for output in tool.OUTPUTS if Path(output.command[0]).stem == stem]


def source_numbers(paths):
    """Every number written in the files ``paths`` (thousands separators dropped)."""
    values = []
    for path in paths:
        text = path.read_text(errors="replace")
        values += [float(n.replace(",", "")) for n in SOURCE_NUMBER.findall(text)]
    return values


def results_files(name):
    folder = RESULTS / name
    assert folder.is_dir(), f"benchmarks/results/{name}/ is cited but does not exist"
    suffixes = {".md", ".json", ".jsonl", ".csv", ".txt"}
    return [path for path in folder.rglob("*") if path.suffix in suffixes]


def found(number, values):
    """Whether ``number`` (as written on the page) is one of ``values`` rounded as written."""
    mantissa = number.replace(",", "").split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    value = float(number.replace(",", ""))
    if "e" in number:  # 1e-6: as written, or the same value
        return any(abs(v - value) <= 1e-12 * max(1.0, abs(value)) for v in values)
    for v in values:
        for candidate in (v, 100 * v):  # a fraction in the source, a percentage on the page
            if abs(round(candidate, decimals) - value) < 10 ** -(decimals + 3):
                return True
    return False


def copied_numbers(page):
    """(line, number, sources) of every number in a paragraph or table that names a source."""
    previous_sources, after_include = [], []
    for kind, text, line in blocks(page.read_text()):
        if kind == "fence":
            match = INCLUDE.match(text.splitlines()[0])
            after_include = [DOCS / "_generated" / f"{match.group(1)}.txt"] if match else []
            previous_sources = []
            continue
        sources = list(after_include)
        after_include = []
        for name in dict.fromkeys(CITED_RESULTS.findall(text)):
            sources += results_files(name)
        for stem in dict.fromkeys(CITED_EXAMPLE.findall(text)):
            sources += generated_files_of_example(stem)
        if kind == "table" and not sources:
            sources = previous_sources
        previous_sources = sources if kind == "prose" else []
        if not sources:
            continue
        # inline code is a command, a parameter or a path; link targets are addresses
        prose = re.sub(r"`[^`]*`", " ", text)
        prose = re.sub(r"\]\([^)]*\)", "]", prose)
        for number in NUMBER.findall(prose):
            yield line, number, sources


@pytest.mark.parametrize("page", GUIDE, ids=lambda page: page.name)
def test_copied_numbers_are_in_their_sources(page):
    missing = []
    cache = {}
    for line, number, sources in copied_numbers(page):
        if (page.name, number) in NOT_COPIED:
            continue
        key = tuple(sources)
        if key not in cache:
            cache[key] = source_numbers(sources)
        if not found(number, cache[key]):
            names = sorted({str(path.relative_to(ROOT).parent) for path in sources})
            where = page.relative_to(ROOT)
            missing.append(f"{where}:{line}: {number} is not in {', '.join(names)}")
    assert not missing, (
        "numbers of the guide that their cited source does not hold (a drifted copy: "
        "copy it again from the source, or regenerate with `make doc-numbers`):\n"
        + "\n".join(missing)
    )


def test_found_rounds_as_the_page_writes():
    values = [0.9826, 3916.0, 24.6, 1e-6]
    assert found("0.983", values) and found("98.3", values) and found("3,916", values)
    assert found("24.6", values) and found("1e-6", values)
    assert not found("0.984", values) and not found("98.2", values) and not found("3,917", values)


def test_every_generated_file_is_an_output_and_shown():
    names = {output.name for output in tool.OUTPUTS}
    assert {path.stem for path in (DOCS / "_generated").glob("*")} == names
    included = {name for page in PAGES for name in INCLUDE.findall(page.read_text())}
    assert included == names, "every output is shown by a page, every included file is one"


def test_no_page_copies_a_generated_output_by_hand():
    # A line of program output in a page's text, rather than included from its file, drifts.
    copies = []
    for output in tool.OUTPUTS:
        lines = {line.strip() for line in output.path.read_text().splitlines()}
        lines = {tool.mask(line) for line in lines if len(line) >= 30}
        for page in PAGES:
            text = tool.mask(page.read_text())
            copies += [f"docs/{page.name}: {line}" for line in lines if line in text]
    assert not copies, "include docs/_generated/ files instead of copying:\n" + "\n".join(copies)


def test_semiscale_bench_list_prints_what_the_docs_show():
    assert_prints_what_the_docs_show("semiscale_bench_list")


@pytest.mark.slow
def test_million_points_prints_what_the_docs_show():
    # Minutes and about 5 GiB: `make doc-numbers` regenerates it, `-m slow` checks it.
    assert_prints_what_the_docs_show("memory_budget_1000000")


def test_a_drifted_output_fails():
    # The comparison itself: one changed digit fails and names the file; a new time does not.
    output = tool.by_name("memory_budget")
    stored = output.path.read_text()
    retimed = re.sub(r"fit \d+\.\d+ s", "fit 99.99 s", stored)
    assert retimed != stored and tool.difference(output, retimed) is None
    drifted = re.sub(r"(\d+) PCG", lambda m: f"{int(m[1]) + 1} PCG", stored, count=1)
    message = tool.difference(output, drifted)
    assert message is not None
    assert "docs/_generated/memory_budget.txt" in message and "make doc-numbers" in message
