"""The reproductions' tests need their package installed: say how, instead of 20 import errors."""

import importlib.util

if importlib.util.find_spec("semiscale_bench") is None:
    raise ImportError(
        "benchmarks/tests need the semiscale_bench package: run `pip install -e ./benchmarks` "
        "from the repository's root (`make test` installs it), or run only the library's tests "
        "with `pytest tests`"
    )
