"""pytest settings for the user guide's examples (``--doctest-glob='*.md'`` on docs/).

Each ``>>>`` block of a guide page runs as a doctest; a page's blocks share one namespace, in
order.  ``conf.py`` (Sphinx's) and the build folder are not collected.
"""

import pytest
import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the limit below is set)
import sklearn.utils  # noqa: F401
from threadpoolctl import threadpool_limits

collect_ignore = ["conf.py"]
collect_ignore_glob = ["_build/*"]


def pytest_runtest_setup(item):
    # The backends page runs TorchOps on the CPU: without the gpu extra it cannot run (its
    # Dask examples need a cluster and are skipped line by line).
    if item.path.name == "backends.md":
        pytest.importorskip("torch", reason="docs/backends.md runs TorchOps: torch is absent")


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    # As in tests/conftest.py: small problems, a loaded 2-core machine.
    with threadpool_limits(limits=1, user_api="blas"):
        yield
