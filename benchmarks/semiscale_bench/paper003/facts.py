"""What each paper 003 record keeps beside its result: the fitted sizes, the machine's load."""

from __future__ import annotations

import numpy as np

__all__ = ["SIZE_ATTRIBUTES", "fitted_sizes", "load_average"]

#: Fitted attributes recorded beside each fit (where the estimator or its transformer has them).
SIZE_ATTRIBUTES = (
    "n_components_",
    "cut_",
    "n_landmarks_",
    "max_rank_",
    "n_random_features_",
    "n_fit_samples_",
    "n_unlabeled_fit_",
    "estimated_bytes_",
    "n_iter_",
)


def fitted_sizes(est) -> dict:
    """The size parameters a fitted estimator chose (its transformer's, for storage-fit ones)."""
    out = {}
    for owner in (getattr(est, "transformer_", None), est):
        for name in SIZE_ATTRIBUTES:
            value = getattr(owner, name, None) if owner is not None else None
            if isinstance(value, (int, float, np.integer, np.floating)) and name[:-1] not in out:
                out[name.rstrip("_")] = value.item() if hasattr(value, "item") else value
    return out


def load_average() -> float | None:
    """The machine's 1-minute load average (None off Linux): recorded beside each fit."""
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[0])
    except OSError:
        return None
