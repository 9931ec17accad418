"""One ``random_state`` contract for the whole library.

Every public function and estimator that takes ``random_state`` accepts

- ``None``: fresh randomness (numpy's global ``RandomState``, as scikit-learn);
- an ``int`` in ``[0, 2**32)``: a seed; the same int gives the same result on every call;
- a :class:`numpy.random.RandomState`: used and advanced (scikit-learn's convention);
- a :class:`numpy.random.Generator`: used and advanced, like a ``RandomState``;
- a :class:`numpy.random.SeedSequence`: a seed, like an int.

Code that draws with the legacy API (``randint``, ``choice``) calls :func:`check_random_state`;
code that passes ``random_state`` on to other functions calls :func:`as_random_state` once, so
that a ``Generator`` becomes a ``RandomState`` that every callee understands (scikit-learn's own
``check_random_state`` refuses a ``Generator``); code that wants a ``Generator`` calls
:func:`as_generator`.  An int, None or a ``RandomState`` give exactly the draws they gave before
this module existed.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state as _sklearn_check_random_state
from sklearn.utils._param_validation import Interval

__all__ = ["RANDOM_STATE_CONSTRAINT", "as_generator", "as_random_state", "check_random_state"]

#: ``_parameter_constraints`` entry of a ``random_state`` parameter: scikit-learn's
#: ``"random_state"`` (None, int in [0, 2**32), RandomState) plus Generator and SeedSequence.
RANDOM_STATE_CONSTRAINT = [
    Interval(numbers.Integral, 0, 2**32 - 1, closed="both"),
    np.random.RandomState,
    np.random.Generator,
    np.random.SeedSequence,
    None,
]


def _is_seed(random_state) -> bool:
    return isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)


def _refuse(random_state):
    return TypeError(
        "random_state must be None, an int, a numpy.random.RandomState, a numpy.random.Generator "
        f"or a numpy.random.SeedSequence; got {random_state!r}"
    )


def as_random_state(random_state):
    """``random_state`` in a form that every consumer accepts, its meaning kept.

    None, ints and ``RandomState`` instances are returned as they are (so an int still seeds each
    consumer alike); a ``Generator`` becomes a ``RandomState`` drawing from the generator's own
    bit generator (so the draws advance the ``Generator``); a ``SeedSequence`` becomes an int
    seed drawn from it.

    Raises
    ------
    TypeError
        For any other type.
    """
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return random_state
    if _is_seed(random_state):
        if not 0 <= random_state < 2**32:
            raise ValueError(f"random_state must be an int in [0, 2**32), got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(random_state.bit_generator)
    if isinstance(random_state, np.random.SeedSequence):
        return int(random_state.generate_state(1, np.uint32)[0])
    raise _refuse(random_state)


def check_random_state(random_state) -> np.random.RandomState:
    """A :class:`numpy.random.RandomState` for ``random_state`` (see the module docstring).

    scikit-learn's ``check_random_state``, extended to ``Generator`` and ``SeedSequence``.
    """
    return _sklearn_check_random_state(as_random_state(random_state))


def as_generator(random_state) -> np.random.Generator:
    """A :class:`numpy.random.Generator` for ``random_state``.

    A ``Generator`` is returned as it is; None, an int or a ``SeedSequence`` seed a new one; a
    ``RandomState`` seeds a new one from one draw of it (``randint(0, 2**31 - 1)``), so that
    scikit-learn style callers stay reproducible.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if _is_seed(random_state):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise _refuse(random_state)
