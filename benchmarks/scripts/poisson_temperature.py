"""Poisson learning's softmax temperature: which multiple of the scores' spread calibrates best.

``PoissonClassifier.predict_proba`` is ``softmax(scores / T)`` with ``T = τ · std(scores_)``;
this measures the log loss of the unlabeled training points for τ in 1/8 ... 2 and for the best
``T`` of a fine grid (81 values from 1e-3 to 10 times the spread), at the defaults, 1 and 5
labels per class, 3 label draws each, on usps (train), letter (first 5,000 training rows), mnist
(test) and 2,000 two-moons points (noise 0.15).  The τ with the smallest worst ratio to the best
``T`` is ``semiscale.models.poisson.POISSON_TEMPERATURE_FACTOR``.  The table goes to stdout,
and to ``OUT/poisson_temperature.txt`` with ``--out OUT``.  Run::

    SEMISCALE_DATA=/work/shared/datasets python benchmarks/scripts/poisson_temperature.py
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from scipy.special import log_softmax

from semiscale.datasets import load_dataset, make_two_moons, ssl_split
from semiscale.models import PoissonClassifier

FACTORS = (1 / 8, 1 / 4, 1 / 2, 1, 2)
GRID = np.logspace(-3, 1, 81)


def _sets():
    X, y = load_dataset("usps")
    yield "usps", X, y
    X, y = load_dataset("letter")
    yield "letter-5000", X[:5000], y[:5000]
    X, y = load_dataset("mnist", "test")
    yield "mnist-test", X, y
    X, y = make_two_moons(2000, noise=0.15, random_state=0)
    yield "moons", X, y


def _log_loss(scores, codes, T):
    return -log_softmax(scores / T, axis=1)[np.arange(codes.size), codes].mean()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="a folder for poisson_temperature.txt")
    args = parser.parse_args(argv)
    lines = []

    def emit(line):
        print(line, flush=True)
        lines.append(line)

    warnings.simplefilter("ignore")  # disconnected-graph warnings of the kNN graphs
    worst = np.zeros(len(FACTORS))
    for name, X, y in _sets():
        for per_class in (1, 5):
            losses, best = [], []
            for seed in range(3):
                labeled, unlabeled = ssl_split(y, per_class, per_class=True, random_state=seed)
                y_ssl = np.where(labeled, y, -1)
                model = PoissonClassifier().fit(X, y_ssl)
                S, spread = model.scores_, model.scores_.std()
                codes = np.searchsorted(model.classes_, y[unlabeled])
                losses.append([_log_loss(S[unlabeled], codes, f * spread) for f in FACTORS])
                best.append(min(_log_loss(S[unlabeled], codes, g * spread) for g in GRID))
            mean, oracle = np.mean(losses, axis=0), np.mean(best)
            worst = np.maximum(worst, mean / oracle)
            cells = " ".join(f"{f:g}:{v:.3f}" for f, v in zip(FACTORS, mean, strict=True))
            emit(f"{name} {per_class}/class: best T {oracle:.3f} | tau {cells}")
    cells = " ".join(f"{f:g}:{v:.2f}" for f, v in zip(FACTORS, worst, strict=True))
    emit(f"worst ratio to the best T: {cells}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "poisson_temperature.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
