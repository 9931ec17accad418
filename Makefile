# `make run` and `make test` each create .venv when missing, install the project into it (from wheels)
# (re-installing only when pyproject.toml changes), then run the main job / the test suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# --only-binary=:all:: every dependency (the `ann` extra's voyager included) comes from a wheel,
# so no C++ compiler is ever needed; only semiscale itself (pure Python) is built here.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --only-binary=:all: -e ".[dev,ann,plot]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/semiscale demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

bench-quick: $(STAMP)
	$(BIN)/semiscale bench paper000 --quick --datasets space_ga,abalone --out /tmp/semiscale-bench-quick

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
