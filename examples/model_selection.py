"""Model selection with few labels: SSLGridSearchCV on handwritten digits (usps).

The first 1,000 images of usps's training split with 5 labeled images per digit.  A grid over
the graph (``n_neighbors``), the kernel width and ``intrinsic_reg`` is searched by 3-fold
transductive CV on the 50 labels: each fold hides a third of them, fits on all 1,000 images
and scores the hidden labels.  The graph is built once per graph setting for the whole search.
The same CV tunes supervised RLS for comparison; both are then scored on the 950 unlabeled
images, which the search never saw labeled.

    python examples/model_selection.py [--n-samples 1000] [--per-class 5]

Runs in a few seconds.
"""

import argparse
import time

import numpy as np

from semiscale.datasets import load_dataset, ssl_split
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.model_selection import SSLGridSearchCV, SSLKFold
from semiscale.models import LapRLSClassifier


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=1000, help="images used")
    parser.add_argument("--per-class", type=int, default=5, help="labeled images per digit")
    args = parser.parse_args(argv)

    X, y = load_dataset("usps")
    X, y = X[: args.n_samples], y[: args.n_samples]
    labeled, unlabeled = ssl_split(y, n_labeled=args.per_class, per_class=True, random_state=0)
    y_ssl = np.where(labeled, y, -1)
    cv = SSLKFold(3, random_state=0)  # transductive: hidden labels, every fold sees all points
    print(
        f"usps: the first {len(X)} images, {int(labeled.sum())} labeled ({args.per_class} per "
        f"digit); {cv.n_splits}-fold transductive CV on the labels"
    )

    searches = {
        "RLS": SSLGridSearchCV(
            LapRLSClassifier(kernel=RBF(gamma=0.01), ambient_reg=1e-4, intrinsic_reg=0.0),
            {"kernel__gamma": [0.005, 0.01, 0.02], "ambient_reg": [1e-6, 1e-4, 1e-2]},
            cv=cv,
        ),
        "LapRLS": SSLGridSearchCV(
            LapRLSClassifier(
                kernel=RBF(gamma=0.01), graph=KNNGraph(normalized=True), ambient_reg=1e-4
            ),
            {
                "graph__n_neighbors": [5, 10],
                "kernel__gamma": [0.005, 0.01, 0.02],
                "intrinsic_reg": [1.0, 100.0],
            },
            cv=cv,
        ),
    }
    results = {}
    for name, search in searches.items():
        start = time.perf_counter()
        search.fit(X, y_ssl)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(search.transduction_[unlabeled] == y[unlabeled]))
        results[name] = {
            "best_params": search.best_params_,
            "cv_score": search.best_score_,
            "accuracy": accuracy,
            "n_graph_fits": search.n_graph_fits_,
        }
        print(f"{name}: best {search.best_params_}")
        print(
            f"    CV accuracy {search.best_score_:.3f} on the {int(labeled.sum())} labels; "
            f"accuracy on the {int(unlabeled.sum())} unlabeled images {accuracy:.3f}; "
            f"{len(search.cv_results_['params'])} grid points, "
            f"{search.n_graph_fits_} graph builds, {seconds:.1f} s"
        )
    return results


if __name__ == "__main__":
    main()
