"""Deprecated: renamed :mod:`semiscale.solvers.newton` (what it does: primal Newton per loss).

Kept for one release so that ``from semiscale.solvers.manifold import solve_manifold`` keeps
working; every name read from here warns with a ``FutureWarning`` naming the new module.
"""

import warnings

__all__: list[str] = []


def __getattr__(name):
    # Imported on use, so that this module adds no import edge unless the old path is read.
    from . import newton

    value = getattr(newton, name)  # AttributeError for a name newton does not have either
    warnings.warn(
        f"semiscale.solvers.manifold is deprecated and will be removed in the next release; "
        f"import {name} from semiscale.solvers.newton",
        FutureWarning,
        stacklevel=2,
    )
    return value
