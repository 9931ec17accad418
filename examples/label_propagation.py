"""Label propagation on handwritten digits: Laplace and Poisson learning with 1 and 10 labels.

All 7,291 images of usps's training split (the split ships with semiscale), one 10-NN graph for
every fit, three draws of the labeled images.  ``HarmonicClassifier`` without and with class
mass normalization (CMN) and ``PoissonClassifier``, each at its defaults; accuracy on the
unlabeled images, and how many of them the largest predicted class takes.  Then new points:
Poisson learning fitted on the first 5,000 images (one draw) labels the other 2,291 with
``predict``, which extends the fit's graph to them: accuracy on the new images beside that on
the unlabeled images of the fit.

    python examples/label_propagation.py [--seeds 0,1,2]

Runs in a few seconds (one sparse CG solve per fit).
"""

import argparse
import time

import numpy as np

from semiscale.datasets import load_dataset, ssl_split
from semiscale.graph import KNNGraph
from semiscale.models import HarmonicClassifier, PoissonClassifier


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated label draws")
    args = parser.parse_args(argv)

    X, y = load_dataset("usps")
    start = time.perf_counter()
    graph = KNNGraph(n_neighbors=10).fit(X)  # one graph; every fit gets its Laplacian
    print(
        f"usps: {X.shape[0]} images; 10-NN graph in {time.perf_counter() - start:.1f} s, "
        f"{graph.n_components_} component(s)"
    )
    models = {
        "Laplace": lambda: HarmonicClassifier(class_mass_normalization=False),
        "Laplace + CMN": lambda: HarmonicClassifier(),
        "Poisson": lambda: PoissonClassifier(),
    }
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"accuracy on the unlabeled images, draws {seeds}: mean (lowest, highest)")
    results = {}
    for per_class in (1, 10):
        for name, make in models.items():
            accuracies, largest, seconds = [], [], []
            for seed in seeds:
                labeled, unlabeled = ssl_split(
                    y, n_labeled=per_class, per_class=True, random_state=seed
                )
                model = make()
                start = time.perf_counter()
                model.fit(X, np.where(labeled, y, -1), laplacian=graph.laplacian_)
                seconds.append(time.perf_counter() - start)
                predicted = model.transduction_[unlabeled]
                accuracies.append(float(np.mean(predicted == y[unlabeled])))
                largest.append(int(np.unique(predicted, return_counts=True)[1].max()))
            results[per_class, name] = accuracies
            print(
                f"{per_class:2d} per class  {name:13s}  {100 * np.mean(accuracies):5.1f} % "
                f"({100 * min(accuracies):.1f}, {100 * max(accuracies):.1f}); largest class "
                f"up to {max(largest)} of {int(unlabeled.sum())}; fit {np.median(seconds):.2f} s"
            )

    n_fit = 5000  # fit on these, predict the rest: new points, which no fit has seen
    X_fit, y_fit, X_new, y_new = X[:n_fit], y[:n_fit], X[n_fit:], y[n_fit:]
    seed = seeds[0]  # one draw: each fit builds its own graph, as predict's rule needs it
    print(
        f"new points: Poisson learning at its defaults fitted on {n_fit} images (draw {seed}), "
        f"predicting the other {len(X_new)}"
    )
    for per_class in (1, 10):
        labeled, unlabeled = ssl_split(
            y_fit, n_labeled=per_class, per_class=True, random_state=seed
        )
        model = PoissonClassifier().fit(X_fit, np.where(labeled, y_fit, -1))
        start = time.perf_counter()
        predicted = model.predict(X_new)
        seconds = time.perf_counter() - start
        new_accuracy = float(np.mean(predicted == y_new))
        unlabeled_accuracy = float(np.mean(model.transduction_[unlabeled] == y_fit[unlabeled]))
        results[per_class, "new points"] = new_accuracy
        print(
            f"{per_class:2d} per class  unlabeled training images "
            f"{100 * unlabeled_accuracy:5.1f} %, new images {100 * new_accuracy:5.1f} %; "
            f"predict {seconds:.2f} s"
        )
    return results


if __name__ == "__main__":
    main()
