"""Sphinx configuration of semiscale's documentation (``make docs`` builds it into docs/_build).

The user guide is Markdown (MyST), the API reference is generated from the numpydoc docstrings
(autodoc + numpydoc).  Needs the ``docs`` extra: ``pip install -e ".[docs]"``.
"""

import re

import semiscale

project = "semiscale"
author = "the semiscale developers"
copyright = "the semiscale developers"
version = release = semiscale.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "conftest.py"]

# MyST: `$...$` math, `:::` fences and anchors for the headings of every page (cross-page links).
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# Autodoc: members in source order; the docstrings say what they take, the signatures too.
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True}

# numpydoc: parameters, attributes and examples sections; the members are listed by autodoc.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# Links to the libraries whose types the docstrings name.  No network is needed at build time:
# without the inventories the names are plain text.
intersphinx_mapping = {}

# Object entries in the side bar as "fit", not "LapRLSClassifier.fit".
toc_object_entries_show_parents = "hide"

html_theme = "alabaster"
html_theme_options = {"page_width": "1100px", "sidebar_width": "260px"}
html_title = f"semiscale {release}"
html_static_path = []


_FIELD = re.compile(r"^(\s*[\w*][\w*, ]* : )(.+)$")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w`\\])(\w*[A-Za-z0-9])_(?![\w`])")


def _escape_fitted_names(app, what, name, obj, options, lines):
    """Escape ``name_`` in numpydoc type fields: ``(n_features_in_,)`` is not a link target.

    scikit-learn style types such as ``ndarray of shape (n_iter_ + 1, n_outputs)`` name fitted
    attributes; reStructuredText would read ``n_iter_`` as a reference to a target "n_iter".
    """
    for i, line in enumerate(lines):
        match = _FIELD.match(line)
        if match and "`" not in match.group(2):
            lines[i] = match.group(1) + _TRAILING_UNDERSCORE.sub(r"\1\\_", match.group(2))


def _skip_sklearn_members(app, what, name, obj, skip, options):
    """Leave out what scikit-learn's base classes add (metadata routing, ``set_*_request``)."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn.") or name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    # Before numpydoc's own handler (priority 500), which turns the fields into markup.
    app.connect("autodoc-process-docstring", _escape_fitted_names, priority=400)
    app.connect("autodoc-skip-member", _skip_sklearn_members)
