"""The benchmark package's imports: no module of ``semiscale_bench`` imports itself in a cycle."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "semiscale_bench"


def _modules(package: Path) -> dict:
    """Dotted name -> path of every module under ``package`` (a package is its ``__init__``)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict) -> set:
    """The package's modules that ``name`` imports, at module level or inside a function.

    ``from a.b import c`` counts as importing ``a.b.c`` when that is a module, else ``a.b``;
    relative imports are resolved against ``name``.
    """
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    found.add(full)
                elif base in modules:
                    found.add(base)
    found.discard(name)
    return found


def import_cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_the_cycle_finder_finds_a_cycle_through_a_package_and_its_submodule(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.sub.a import f\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "a.py").write_text("def f():\n    from pkg import g\n")
    (package / "b.py").write_text("from . import sub\nfrom .sub import a\n")
    modules = _modules(package)
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert graph["pkg.b"] == {"pkg.sub", "pkg.sub.a"}
    assert import_cycles(graph) == [["pkg", "pkg.sub.a"]]


def test_semiscale_bench_has_no_import_cycle():
    modules = _modules(PACKAGE)
    if len(modules) < 10:
        pytest.fail(f"found only {len(modules)} modules under {PACKAGE}")
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert import_cycles(graph) == [], "modules that import each other (directly or not)"
