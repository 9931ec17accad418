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


def _imported_modules(path, module, modules):
    """The package's modules that ``module`` (file ``path``) imports, anywhere in the file.

    Every import counts, at module level or inside a function, a ``TYPE_CHECKING`` block or at
    the bottom of a file: a cycle that only a late or local import keeps from failing is still
    a cycle between the two modules' concepts.  ``from package import name`` is an edge to the
    submodule ``package.name`` when there is one, else to the package (its ``__init__``).
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                if f"{target}.{alias.name}" in modules:
                    found.add(f"{target}.{alias.name}")
                elif target in modules:
                    found.add(target)
    found.discard(module)
    return found


def import_cycles(src=SRC):
    """Sets of the package ``src``'s modules that import each other, directly or not.

    The strongly connected components of more than one module of the import graph (Tarjan's
    algorithm, iterative), each sorted; an empty list when imports only point one way.
    """
    modules = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {m: sorted(_imported_modules(p, m, modules)) for m, p in modules.items()}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    member, component = None, set()
                    while member != node:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                    if len(component) > 1:
                        cycles.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


@pytest.mark.parametrize(
    "package", [SRC, ROOT / "benchmarks" / "semiscale_bench"], ids=["semiscale", "semiscale_bench"]
)
def test_no_import_cycle(package):
    # the library, and the reproductions' package beside it (one finder for both)
    assert len(list(package.rglob("*.py"))) > 10, f"{package} is not where its modules are"
    assert import_cycles(package) == [], "modules that import each other (make one point down)"


def test_the_cycle_finder_sees_a_cycle_through_a_package_and_its_submodule(tmp_path):
    # the shape of semiscale_bench's few_labels cycle: a package's __init__ imports a submodule
    # that imports the package back, inside a function
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.sub.a import f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from pkg import g\n")
    (pkg / "b.py").write_text("from . import sub\nfrom .sub import a\n")
    assert import_cycles(pkg) == [["pkg", "pkg.sub.a"]]


def test_the_cycle_finder_sees_a_cycle_through_a_late_local_import(tmp_path):
    # the shape of the linalg cycle that issue 27 removed: a bottom-of-file re-export one way,
    # a plain import the other way, plus a function-level import closing a longer loop
    pkg = tmp_path / "semiscale"
    (pkg / "linalg").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "linalg" / "__init__.py").write_text("from semiscale.linalg.a import A\n")
    (pkg / "linalg" / "a.py").write_text("class A: ...\n\nfrom .b import B  # noqa: E402\n")
    (pkg / "linalg" / "b.py").write_text("from .a import A\n\nclass B(A): ...\n")
    (pkg / "c.py").write_text("def f():\n    from semiscale import d\n")
    (pkg / "d.py").write_text("from semiscale.c import f\n")
    (pkg / "e.py").write_text("from semiscale.linalg import A\n")
    assert import_cycles(pkg) == [
        ["semiscale.c", "semiscale.d"],
        ["semiscale.linalg.a", "semiscale.linalg.b"],
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [("semiscale.solvers.manifold", "semiscale.solvers.newton")],
)
def test_a_renamed_module_still_works_for_one_release_and_warns(old, new):
    # documented in docs/api before its rename: every name read through the old path warns,
    # naming the new module, and is the new module's object
    import importlib

    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in new_module.__all__:
        with pytest.warns(FutureWarning, match=f"{old} is deprecated.*{new}"):
            assert getattr(old_module, name) is getattr(new_module, name)
    with pytest.raises(AttributeError):
        old_module.no_such_name  # noqa: B018


def test_every_module_imports_without_posix_only_modules():
    # The wheels cover Windows: a POSIX-only module (resource, fcntl, ...) may be imported only
    # inside the function that needs it.  all_estimators() imports every module of semiscale.
    code = (
        "import sys\n"
        "for name in ('resource', 'fcntl', 'termios', 'pwd', 'grp'):\n"
        "    sys.modules[name] = None\n"
        "from semiscale.utils import all_estimators\n"
        "from semiscale._measure import measure\n"
        "with measure() as m:\n"
        "    pass\n"
        "print(len(all_estimators()), m.max_rss_bytes)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    n_estimators, max_rss = map(int, done.stdout.split())
    assert n_estimators > 10 and max_rss == 0


#: The backends' optional libraries: never imported by ``import semiscale`` or any module's import.
_BACKEND_LIBRARIES = ("dask", "distributed", "torch")


def test_importing_semiscale_imports_no_backend_library():
    # every module (all_estimators walks the package), the configuration and the backends'
    # namespace, without asking for DaskOps / TorchOps: neither dask nor torch gets imported
    code = (
        "import sys, semiscale, semiscale.backends\n"
        "from semiscale.utils import all_estimators\n"
        "all_estimators()\n"
        "semiscale.get_config()\n"
        "with semiscale.config_context(backend='numpy'):\n"
        "    semiscale.backends.resolve_backend(None)\n"
        "dir(semiscale.backends)\n"
        f"print(sorted(name for name in {_BACKEND_LIBRARIES!r} if name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"imported by `import semiscale`: {done.stdout}"


def test_every_module_imports_without_the_backends_extras():
    # without dask, distributed and torch (as if not installed) the library works; asking for a
    # backend names the extra to install
    # (a finder that refuses them: None in sys.modules would break scipy's array-API checks,
    # which look torch up there)
    code = (
        "import sys\n"
        "class Absent:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {_BACKEND_LIBRARIES!r}:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Absent())\n"
        "from semiscale.utils import all_estimators\n"
        "import semiscale.backends\n"
        "print(len(all_estimators()))\n"
        "for name in ('DaskOps', 'TorchOps'):\n"
        "    try:\n"
        "        getattr(semiscale.backends, name)\n"
        "    except ImportError as err:\n"
        "        print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    n_estimators, dask_error, torch_error = done.stdout.strip().splitlines()
    assert int(n_estimators) > 10
    assert 'pip install "semiscale[distributed]"' in dask_error
    assert 'pip install "semiscale[gpu]"' in torch_error


def test_the_backends_extras_are_declared_and_installed_for_the_tests():
    from semiscale.backends._resolve import BACKENDS

    extras = _pyproject()["project"]["optional-dependencies"]
    makefile = (ROOT / "Makefile").read_text()
    for backend, (_, _, extra, libraries) in BACKENDS.items():
        if extra is None:
            continue
        # what the extra installs: each requirement's distribution and the extras it asks for
        provided = set()
        for spec in extras[extra]:
            match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?\s*>=\s*[0-9.]+", spec)
            assert match, f"{extra}: {spec!r} has no lower bound"
            provided.add(match.group(1).lower())
            provided.update(part.strip() for part in (match.group(2) or "").split(","))
        for library in libraries:
            assert library.split(".")[0] in provided, (backend, library, extras[extra])
        # `make test` installs it, so that the backend's tests run instead of skipping
        install = re.search(r'-e "\.\[([^\]]*)\]"', makefile).group(1).split(",")
        assert extra in install, f"the Makefile's test install lacks the {extra!r} extra"
