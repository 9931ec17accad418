"""The program outputs shown by the user guide, for the tests: ``tools/regenerate_doc_numbers.py``.

``tools/`` is not a package (the script is run as ``python tools/regenerate_doc_numbers.py`` by
``make doc-numbers``), so the tests load it by path; ``tool`` is the loaded module
(``tool.OUTPUTS``, ``tool.run``, ``tool.difference``).  ``printed(name)`` runs an output's
command once per test session and returns what it printed.
"""

import functools
import importlib.util
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parents[1] / "tools" / "regenerate_doc_numbers.py"


def _load():
    name = "regenerate_doc_numbers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


tool = _load()


@functools.cache
def printed(name):
    """Standard output of the output ``name``'s command (run once, shared by the tests)."""
    return tool.run(tool.by_name(name))


def assert_prints_what_the_docs_show(name):
    message = tool.difference(tool.by_name(name), printed(name))
    assert message is None, message
