# `make run` and `make test` each create .venv when missing, install the project into it
# (re-installing only when pyproject.toml changes), then run the main job / the test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench-graph clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev,ann,plot]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/semiscale demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

bench-graph: $(STAMP)
	$(BIN)/python benchmarks/graph.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
