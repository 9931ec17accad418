"""Utilities about the library itself (not about data): the registry of its estimators.

:func:`all_estimators` finds every public estimator class by walking the package, as
scikit-learn's :func:`sklearn.utils.discovery.all_estimators` does for scikit-learn; the common
tests (``tests/test_common.py``) and the top-level exports are checked against it, so that an
estimator added to the library is covered without being listed anywhere.
"""

from .discovery import all_estimators

__all__ = ["all_estimators"]
