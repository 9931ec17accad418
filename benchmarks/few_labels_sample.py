"""Sampled-Hessian graph sample t when labels are few (m ≪ s): iterations against fit time.

Usage (one BLAS thread):

    OPENBLAS_NUM_THREADS=1 python benchmarks/few_labels_sample.py

Setting: the ``semiscale demo`` configuration on the shipped a9a: 8000 random training rows
(seed 0), 100 or 400 stratified labels, s = 800 centers (the labeled points and uniform draws:
``labeled_centers=True``, the default since 2026-11-22), 8-NN heat graph, RBF with the
median heuristic, ambient_reg 1e-4, intrinsic_reg 10; ``NystromLapRLSClassifier`` with
``preconditioner_options={"n_rows": t}`` for t ∈ {100 (= s/8, the default), 200, 400, 800}.
Fit time is the median of 3; accuracy on a9a's test split.  Writes
``benchmarks/results/few_labels_sample.md``.
"""

import time
import warnings
from pathlib import Path

import numpy as np

from semiscale.datasets import load_dataset, ssl_split
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import NystromLapRLSClassifier

RESULTS = Path(__file__).parent / "results"


def main():
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    X, y = load_dataset("a9a")
    X_test, y_test = load_dataset("a9a", split="test")
    index = rng.choice(X.shape[0], 8000, replace=False)
    X, y = X[index], y[index]
    laplacian = KNNGraph(8, bandwidth=np.sqrt(2)).fit(X).laplacian_
    lines = [
        "# Graph sample t of the sampled-Hessian preconditioner when m ≪ s (a9a, s = 800)",
        "",
        "Command: `OPENBLAS_NUM_THREADS=1 python benchmarks/few_labels_sample.py`",
        "",
        "| labeled m | t | PCG iterations | fit s (median of 3) | test accuracy |",
        "|---|---|---|---|---|",
    ]
    for n_labeled in (100, 400):
        labeled, _ = ssl_split(y, n_labeled=n_labeled, random_state=0)
        y_ssl = np.where(labeled, y.astype(object), "unlabeled")
        for t in (100, 200, 400, 800):
            model = NystromLapRLSClassifier(
                kernel=RBF("median"),
                ambient_reg=1e-4,
                intrinsic_reg=10.0,
                n_centers=0.1,
                unlabeled="unlabeled",
                random_state=0,
                preconditioner_options={"n_rows": t},
            )
            times = []
            for _ in range(3):
                start = time.perf_counter()
                model.fit(X, y_ssl, laplacian=laplacian)
                times.append(time.perf_counter() - start)
            accuracy = np.mean(model.predict(X_test).astype(y_test.dtype) == y_test)
            lines.append(
                f"| {n_labeled} | {t} | {model.n_iter_} | {np.median(times):.3f} | {accuracy:.4f} |"
            )
            print(lines[-1], flush=True)
    (RESULTS / "few_labels_sample.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
