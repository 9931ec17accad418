"""Turn a ``random_state`` argument into a :class:`numpy.random.Generator`."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_generator"]


def as_generator(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, numpy.random.SeedSequence or \
numpy.random.RandomState
        None gives fresh OS entropy; an int or a SeedSequence seeds a new generator; a Generator
        is used as is (its state advances); a legacy RandomState seeds a new generator from one
        draw of it, so scikit-learn style callers stay reproducible.

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise TypeError(
        "random_state must be None, an int, a numpy Generator, SeedSequence or RandomState; "
        f"got {type(random_state).__name__}"
    )
