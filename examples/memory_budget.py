"""Scaling up: Nyström LapRLS under a memory budget, and what exact LapRLS would need.

Two moons with one label per moon.  Exact LapRLS needs n x n matrices; with a budget it refuses
before allocating anything and says how much it needs.  Nyström LapRLS restricts the function to
``n_centers`` kernel centers and solves by preconditioned CG: memory grows like n·s.  Its
``memory_budget`` sets the block sizes and whether the n x s kernel matrix K_ns is kept between
CG iterations (``solver_info_["cached"]``) or recomputed in every iteration.

    python examples/memory_budget.py [--n-samples 20000] [--budgets 256MiB,16MiB]

Runs in a few seconds at the default size; ``--n-samples 1000000`` is the million-point case.
"""

import argparse
import resource
import time

import numpy as np

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=20_000, help="points (default 20000)")
    parser.add_argument("--n-centers", type=int, default=500, help="Nyström centers (default 500)")
    parser.add_argument("--budgets", default="256MiB,16MiB", help="comma-separated budgets")
    args = parser.parse_args(argv)

    X, y = make_two_moons(args.n_samples, noise=0.1, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    params = dict(kernel=RBF(gamma=20.0), ambient_reg=1e-6, intrinsic_reg=100.0)

    budgets = args.budgets.split(",")
    exact = LapRLSClassifier(graph=KNNGraph(n_neighbors=8), memory_budget=budgets[0], **params)
    try:
        exact.fit(X, y_ssl)
        print(f"exact LapRLS fitted {args.n_samples} points within {budgets[0]}")
    except ValueError as error:  # MemoryBudgetError is a ValueError
        print(f"exact LapRLS, memory_budget={budgets[0]}: {type(error).__name__}: {error}")

    start = time.perf_counter()
    graph = KNNGraph(n_neighbors=8).fit(X)  # one graph for every fit below
    print(
        f"{args.n_samples} points: {graph.search_method_} kNN graph in "
        f"{time.perf_counter() - start:.2f} s, {graph.n_components_} connected component(s)"
    )
    results = []
    for budget in budgets:
        model = NystromLapRLSClassifier(
            n_centers=args.n_centers, memory_budget=budget, random_state=0, **params
        )
        start = time.perf_counter()
        model.fit(X, y_ssl, laplacian=graph.laplacian_)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.transduction_ == y))
        cached = model.solver_info_.get("cached")
        results.append(
            {
                "budget": budget,
                "accuracy": accuracy,
                "seconds": seconds,
                "iterations": model.n_iter_,
                "cached": cached,
            }
        )
        print(
            f"Nyström LapRLS, s={args.n_centers}, memory_budget={budget}: accuracy "
            f"{accuracy:.4f}, {model.n_iter_} PCG iterations, K_ns cached: {cached}, "
            f"fit {seconds:.2f} s"
        )
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"process max RSS: {max_rss:.0f} MiB")
    return results


if __name__ == "__main__":
    main()
