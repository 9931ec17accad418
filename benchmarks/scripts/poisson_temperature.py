"""Poisson learning's (and Poisson-MBO's) softmax temperature: which multiple of the scores'
spread calibrates best.

``PoissonClassifier.predict_proba`` is ``softmax(scores / T)`` with ``T = τ · spread``; this
measures the log loss of the unlabeled training points for τ in 1/16 ... 2 and three spreads of
the scores: ``std`` and ``mad`` (1.4826 times the median absolute deviation) of the entries of
``scores_`` on the unlabeled rows of the solved components, and ``std-all`` (of every entry,
the labeled points' spikes included: the rule before issue 28's review), against the best ``T``
of a fine grid (81 values from 1e-3 to 10 times the ``std`` spread), at the defaults, 1 and 5
labels per class, 3 label draws each, on usps (train), letter (first 5,000 training rows), mnist
(test), 2,000 two-moons points (noise 0.15) and wine, unscaled and standardized (178 points;
unscaled, the labeled points' spikes dominate the spread of every entry).  The spread and τ
with the smallest worst ratio to the best ``T`` are the ones of ``PoissonClassifier``
(``semiscale.models.poisson.POISSON_TEMPERATURE_FACTOR``).  ``--estimator poisson-mbo`` measures
the same for ``PoissonMBOClassifier`` (whose scores are its last diffusion plus the volume
offsets; ``semiscale.models.poisson_mbo.POISSON_MBO_TEMPERATURE_FACTOR``).  The table goes to
stdout, and to ``OUT/<estimator>_temperature.txt`` with ``--out OUT``.  Run::

    SEMISCALE_DATA=/work/shared/datasets python benchmarks/scripts/poisson_temperature.py
    SEMISCALE_DATA=/work/shared/datasets python benchmarks/scripts/poisson_temperature.py \
        --estimator poisson-mbo
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from scipy.special import log_softmax
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from semiscale.datasets import load_dataset, make_two_moons, ssl_split
from semiscale.models import PoissonClassifier, PoissonMBOClassifier

FACTORS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1, 2)
ESTIMATORS = {"poisson": PoissonClassifier, "poisson-mbo": PoissonMBOClassifier}
GRID = np.logspace(-3, 1, 81)


def _mad(values):
    return 1.4826 * np.median(np.abs(values - np.median(values)))


SPREADS = {
    "std": lambda S, rows: S[rows].std(),
    "mad": lambda S, rows: _mad(S[rows]),
    "std-all": lambda S, rows: S.std(),
}


def _sets():
    X, y = load_dataset("usps")
    yield "usps", X, y
    X, y = load_dataset("letter")
    yield "letter-5000", X[:5000], y[:5000]
    X, y = load_dataset("mnist", "test")
    yield "mnist-test", X, y
    X, y = make_two_moons(2000, noise=0.15, random_state=0)
    yield "moons", X, y
    X, y = load_wine(return_X_y=True)
    yield "wine", X, y
    yield "wine-scaled", StandardScaler().fit_transform(X), y


def _log_loss(scores, codes, T):
    return -log_softmax(scores / T, axis=1)[np.arange(codes.size), codes].mean()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="a folder for <estimator>_temperature.txt")
    parser.add_argument("--estimator", choices=sorted(ESTIMATORS), default="poisson")
    args = parser.parse_args(argv)
    lines = []

    def emit(line):
        print(line, flush=True)
        lines.append(line)

    warnings.simplefilter("ignore")  # disconnected-graph warnings of the kNN graphs
    worst = {name: np.zeros(len(FACTORS)) for name in SPREADS}
    for name, X, y in _sets():
        for per_class in (1, 5):
            losses = {spread: [] for spread in SPREADS}
            best = []
            for seed in range(3):
                labeled, unlabeled = ssl_split(y, per_class, per_class=True, random_state=seed)
                y_ssl = np.where(labeled, y, -1)
                model = ESTIMATORS[args.estimator]().fit(X, y_ssl)
                # the rows the temperature is meant for: unlabeled, in a solved component
                # (the fitted model's private mask of the solved rows)
                rows = model._solved_rows & unlabeled
                S = model.scores_
                codes = np.searchsorted(model.classes_, y[rows])
                for spread, measure in SPREADS.items():
                    value = measure(S, rows)
                    losses[spread].append([_log_loss(S[rows], codes, f * value) for f in FACTORS])
                value = SPREADS["std"](S, rows)
                best.append(min(_log_loss(S[rows], codes, g * value) for g in GRID))
            oracle = np.mean(best)
            emit(f"{name} {per_class}/class: best T {oracle:.3f}")
            for spread in SPREADS:
                mean = np.mean(losses[spread], axis=0)
                worst[spread] = np.maximum(worst[spread], mean / oracle)
                cells = " ".join(f"{f:g}:{v:.3f}" for f, v in zip(FACTORS, mean, strict=True))
                emit(f"    {spread:8s} tau {cells}")
    for spread in SPREADS:
        cells = " ".join(f"{f:g}:{v:.2f}" for f, v in zip(FACTORS, worst[spread], strict=True))
        emit(f"worst ratio to the best T, {spread}: {cells}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        name = f"{args.estimator.replace('-', '_')}_temperature.txt"
        (args.out / name).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
