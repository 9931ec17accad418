"""The package's declared dependencies, ignored paths and documented commands match the code."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "semiscale"

#: Distribution names whose import name differs.
_IMPORT_NAMES = {"scikit-learn": "sklearn"}


def _pyproject():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirement(spec):
    """``(import name, lower bound or None)`` of a requirement such as ``"numpy>=1.24"``."""
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:>=\s*([0-9.]+))?.*", spec)
    name = match.group(1).lower()
    return _IMPORT_NAMES.get(name, name.replace("-", "_")), match.group(2)


def _version(text):
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def _module_level_imports():
    """Top-level package of every import run when a ``semiscale`` module is imported, by file.

    Imports inside functions are left out (optional extras are imported there, on use).
    """
    found = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_module_level_import_is_a_declared_dependency():
    declared = {_requirement(spec)[0] for spec in _pyproject()["project"]["dependencies"]}
    undeclared = {
        name: sorted(paths)
        for name, paths in _module_level_imports().items()
        if name not in declared
        and name not in sys.stdlib_module_names
        and name not in ("semiscale", "__future__")
    }
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"


def test_scikit_learn_lower_bound_covers_the_apis_used():
    # make_scorer(response_method=...) (scoring.py) is scikit-learn 1.4, the estimator checks'
    # expected_failed_checks (tests) 1.6
    bounds = dict(_requirement(spec) for spec in _pyproject()["project"]["dependencies"])
    assert _version(bounds["sklearn"]) >= (1, 6)
    # scikit-learn 1.6's own lower bounds: ours may not be lower
    for name, floor in {"numpy": "1.19.5", "scipy": "1.6.0", "joblib": "1.2.0"}.items():
        assert _version(bounds[name]) >= _version(floor), name
    assert "response_method=" in (SRC / "model_selection" / "scoring.py").read_text()


def test_the_default_bench_folder_is_ignored_by_git():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    status = subprocess.run(
        ["git", "check-ignore", "-q", "semiscale-bench/paper000/records.jsonl"],
        cwd=ROOT,
        check=False,
    ).returncode
    assert status == 0, "/semiscale-bench/ (the CLI's default --out) is not in .gitignore"


def test_results_readmes_render_into_their_own_folder():
    # without --out, `semiscale-bench NAME` reads and writes ./semiscale-bench/NAME: a command
    # that re-renders a committed folder must name it
    for readme in (ROOT / "benchmarks" / "results").glob("*/README.md"):
        for command in re.findall(r"`(semiscale-bench [^`]*)`", readme.read_text()):
            if "--render-only" in command:
                name = readme.parent.name
                assert f"--out benchmarks/results/{name}" in command, (readme, command)
