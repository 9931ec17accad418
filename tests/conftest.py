"""Test-session settings.

BLAS is limited to one thread: the test problems are small, and on a loaded 2-core machine
multi-threaded OpenBLAS spins and made the suite ~6x slower (54 s vs 9 s for the solver tests).
"""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _single_threaded_blas():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
