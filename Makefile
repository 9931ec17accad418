# `make run` and `make test` each create .venv when missing, install the project into it (from wheels)
# (re-installing only when pyproject.toml changes), then run the main job / the test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: run test lint docs doc-numbers bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# --only-binary=:all:: every dependency (the `ann` extra's voyager included) comes from a wheel,
# so no C++ compiler is ever needed; only semiscale itself (pure Python) is built here.
# The reproductions (benchmarks/, the `semiscale-bench` command) are a package of their own, beside
# the library and outside its wheel; the tests run both.
# The backends' extras too, so that their tests run instead of skipping: `distributed` (dask,
# distributed) and `gpu` with torch pinned to 2.13.0, the CPU-only build whose wheel lies on this
# machine's disk (pip's find-links; 2.13.0+cpu sorts above PyPI's 2.13.0): an unpinned torch
# resolves to PyPI's CUDA build, about 5 GB with its nvidia-* packages.
$(STAMP): pyproject.toml benchmarks/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --only-binary=:all: \
		-e ".[dev,ann,plot,distributed,gpu]" "torch==2.13.0" -e ./benchmarks
	touch $(STAMP)

# The docs extra (Sphinx, numpydoc, myst-parser; wheels too) only for `make docs`.
$(DOCS_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --only-binary=:all: -e ".[docs]"
	touch $(DOCS_STAMP)

run: $(STAMP)
	$(BIN)/semiscale demo

# pytest's settings (pyproject.toml) add the docstrings' and the user guide's examples:
# --doctest-modules on src/semiscale, --doctest-glob='*.md' on docs/.
test: $(STAMP)
	$(BIN)/python -m pytest -q

# User guide and API reference (from the docstrings) in docs/_build/html; warnings are errors.
docs: $(STAMP) $(DOCS_STAMP)
	$(BIN)/sphinx-build -b html -W --keep-going -q docs docs/_build/html
	@echo "documentation: docs/_build/html/index.html"

# The program outputs the user guide shows (docs/_generated/, included by the pages): rerun every
# command of tools/regenerate_doc_numbers.py and rewrite its file; `make test` fails when a
# command prints anything else than its file (times and peak memory excepted). A few minutes:
# the million-point example is one of them.
doc-numbers: $(STAMP)
	$(BIN)/python tools/regenerate_doc_numbers.py

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools examples
	$(BIN)/ruff format --check src tests benchmarks tools examples

bench-quick: $(STAMP)
	$(BIN)/semiscale-bench paper000 --quick --datasets space_ga,abalone --out /tmp/semiscale-bench-quick

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info benchmarks/*.egg-info docs/_build
