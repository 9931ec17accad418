"""Not a package to import: this file gives docs/conftest.py its own module name (docs.conftest)
next to tests/conftest.py when pytest collects doctests (--doctest-modules)."""
