"""Write ``pinned_predictions.npz``: the estimators' predictions on the fixed problems.

Run once, at commit cd044e2 (before issue 10's core refactor), with one BLAS thread, from the
repository root: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=<cd044e2 checkout>/src python
tests/data/make_pinned_predictions.py``.
``tests/test_pinned_predictions.py`` checks that today's code predicts the same to 1e-10.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference_problems import CASES, build, problem  # noqa: E402

if __name__ == "__main__":
    out = {}
    for name in CASES:
        X, y, X_test = problem(name)
        est = build(name).fit(X, y)
        out[f"{name}/decision"] = np.asarray(
            est.decision_function(X_test)
            if hasattr(est, "decision_function")
            else est.predict(X_test)
        )
        out[f"{name}/transduction"] = np.asarray(est.transduction_)
        print(name, est.n_iter_)
    np.savez_compressed(Path(__file__).with_name("pinned_predictions.npz"), **out)
