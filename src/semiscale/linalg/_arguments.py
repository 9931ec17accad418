"""Argument checks of the Nyström operators (indices, regularization weights)."""

from __future__ import annotations

import numpy as np

__all__ = ["_index", "_lambda"]


def _index(idx, n, name):
    idx = np.asarray(idx)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"boolean {name} must have shape ({n},), got {idx.shape}")
        return np.flatnonzero(idx)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise ValueError(f"{name} must be a 1-D array of integer indices or a boolean mask")
    idx = idx.astype(np.intp)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ValueError(f"{name} has indices outside [0, {n})")
    return idx % n if idx.size else idx


def _lambda(value, name):
    value = float(value)
    if not value >= 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return value
