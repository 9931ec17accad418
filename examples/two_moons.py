"""A first model: LapRLS against supervised RLS on two moons with one label per moon.

2,000 training points, two of them labeled; accuracy on the training points' hidden labels
(transduction) and on 10,000 new points (induction).

    python examples/two_moons.py [--n-samples 2000] [--plot moons.png]

Runs in about a second; ``--plot`` draws both decision functions (needs matplotlib, the
``plot`` extra).
"""

import argparse
import time

import numpy as np

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import LapRLSClassifier


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=2000, help="training points")
    parser.add_argument("--plot", default="", help="PNG file for the decision functions")
    args = parser.parse_args(argv)

    X, y = make_two_moons(args.n_samples, noise=0.1, random_state=0)
    X_test, y_test = make_two_moons(10_000, noise=0.1, random_state=1)
    y_ssl = np.full_like(y, -1)  # -1 marks the unlabeled points
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]

    print(
        f"two moons: {len(X)} training points, {int(np.sum(y_ssl != -1))} of them labeled; "
        f"{len(X_test)} new points"
    )
    kernel = RBF(gamma=20.0)  # sigma ≈ 0.16: narrower than the gap between the moons
    models = {
        "RLS (supervised, intrinsic_reg=0)": LapRLSClassifier(
            kernel=kernel, ambient_reg=1e-6, intrinsic_reg=0.0
        ),
        "LapRLS (8-NN graph)": LapRLSClassifier(
            kernel=kernel, graph=KNNGraph(n_neighbors=8), ambient_reg=1e-6, intrinsic_reg=100.0
        ),
    }
    results = {}
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X, y_ssl)
        seconds = time.perf_counter() - start
        results[name] = {
            "transductive": float(np.mean(model.transduction_ == y)),
            "test": float(model.score(X_test, y_test)),
        }
        print(
            f"{name:36s} accuracy: training points {results[name]['transductive']:.4f}, "
            f"new points {results[name]['test']:.4f}  ({seconds:.2f} s)"
        )
    if args.plot:
        plot(args.plot, X, y_ssl, models)
    return results


def plot(path, X, y_ssl, models):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xx, yy = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 200))
    grid = np.c_[xx.ravel(), yy.ravel()]
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4))
    for ax, (name, model) in zip(axes, models.items()):
        zz = model.decision_function(grid).reshape(xx.shape)
        ax.contourf(xx, yy, zz, levels=20, cmap="RdBu", alpha=0.6)
        ax.contour(xx, yy, zz, levels=[0], colors="k")
        ax.scatter(X[:, 0], X[:, 1], s=2, c="0.4")
        labeled = y_ssl != -1
        ax.scatter(
            X[labeled, 0],
            X[labeled, 1],
            s=120,
            c=y_ssl[labeled],
            cmap="RdBu",
            vmin=0,
            vmax=1,
            edgecolors="k",
        )
        ax.set_title(name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
