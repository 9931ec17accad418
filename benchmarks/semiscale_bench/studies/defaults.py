"""Do the estimators' defaults work with only labels given?

Issue 11 (defaults that work): ``LapRLSClassifier()`` and ``NystromLapRLSClassifier()``, given
nothing but ``X`` and the labels, must reach ≥ 0.99 transductive accuracy on two moons
(n = 2,000, noise 0.1, one label per class) in the *worst* of 20 seeds, and stay within a few
points of the best setting of a small grid on the shared real sets usps, letter and a9a.

Protocol.

* Two moons: seed s = 0..19 draws the data (``make_two_moons(2000, noise=0.1, random_state=s)``)
  and one labeled point per class (``numpy.random.default_rng(s)``); accuracy on the unlabeled
  points.  Each estimator runs with its defaults and ``random_state=s``; the previous defaults
  (``RBF(gamma="median")``, ``ambient_reg=1e-4``, ``intrinsic_reg=1``) run beside them.
* Real sets: seed s = 0..2 draws 2,000 points without replacement and 10 labeled points per
  class among them; one default ``KNNGraph()`` per draw, shared by every setting.  The grid is
  exact LapRLS over kernel width σ = m × (the ``gamma="local"`` width), m ∈ {0.5, 1, 2, 4},
  ``intrinsic_reg`` ∈ {1, 10, 100, 1000}, ``ambient_reg`` ∈ {1e-6, 1e-4}; "best" is the grid
  point with the highest mean accuracy over the draws, and the gap is best − default.  The two
  estimators' defaults run on the same draws (and build their own default graph).
* Regression (no target in the issue; it decides whether the regressors share the
  classifiers' defaults): space_ga, abalone and cpusmall, features standardized, seed s = 0..2
  draws 2,000 points and labels 10 % of them; error = RMSE on the unlabeled points / std(y).
  The grid is exact LapRLS over ``gamma`` ∈ {"local", "median"}, ``ambient_reg`` ∈ {1e-6,
  1e-4}, ``intrinsic_reg`` ∈ {0.1, 1, 10}.

Run (writes ``results.json`` and ``README.md`` to ``--out``)::

    semiscale-bench defaults --out benchmarks/results/defaults
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from semiscale_bench.harness.study import Study, legacy_command, produced_by, write_readme

MOONS_SEEDS = 20
MOONS_N = 2000
REAL_DATASETS = ("usps", "letter", "a9a")
REGRESSION_DATASETS = ("space_ga", "abalone", "cpusmall")
REGRESSION_LABELED = 0.1
REAL_N = 2000
REAL_PER_CLASS = 10
REAL_SEEDS = 3
WIDTH_FACTORS = (0.5, 1.0, 2.0, 4.0)
INTRINSIC_REGS = (1.0, 10.0, 100.0, 1000.0)
AMBIENT_REGS = (1e-6, 1e-4)
#: Targets of issue 11: worst two-moons seed, and the largest gap to the grid's best (points).
MOONS_TARGET = 0.99
GAP_TARGET = 0.03
#: Marker of unlabeled points: a9a's classes are ±1, so −1 cannot mark them.
UNLABELED = -999


def _estimators(seed):
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier

    previous = {"kernel": RBF(gamma="median"), "ambient_reg": 1e-4, "intrinsic_reg": 1.0}
    options = {"random_state": seed, "unlabeled": UNLABELED}
    return {
        "LapRLSClassifier()": LapRLSClassifier(**options),
        "NystromLapRLSClassifier()": NystromLapRLSClassifier(**options),
        "LapRLSClassifier(previous defaults)": LapRLSClassifier(**previous, **options),
    }


def _params(model):
    """The defaults a record was made with: a changed default refits instead of resuming."""
    p = model.get_params(deep=False)
    return (
        f"kernel={p['kernel']!r} ambient_reg={p['ambient_reg']} intrinsic_reg={p['intrinsic_reg']}"
    )


def _record(records, record):
    """Append ``record``, dropping the records of the same fit made with other defaults."""
    same = ("experiment", "dataset", "seed", "estimator")
    records[:] = [r for r in records if any(r.get(k) != record.get(k) for k in same)]
    records.append(record)


def _labels(y, per_class, rng):
    y_ssl = np.full(y.shape, UNLABELED, dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        chosen = rng.choice(members, min(per_class, members.size), replace=False)
        y_ssl[chosen] = c
    return y_ssl


def _accuracy(model, y, y_ssl):
    unlabeled = y_ssl == UNLABELED
    return float(np.mean(model.transduction_[unlabeled] == y[unlabeled]))


def run_moons(records, save):
    from semiscale.datasets import make_two_moons

    for seed in range(MOONS_SEEDS):
        X, y = make_two_moons(MOONS_N, noise=0.1, random_state=seed)
        y_ssl = _labels(y, 1, np.random.default_rng(seed))
        for name, model in _estimators(seed).items():
            key = {"experiment": "moons", "seed": seed, "estimator": name, "params": _params(model)}
            if any(all(r.get(k) == v for k, v in key.items()) for r in records):
                continue
            start = time.perf_counter()
            model.fit(X, y_ssl)
            _record(
                records, {**key, "accuracy": _accuracy(model, y, y_ssl), "seconds": _elapsed(start)}
            )
            save()


def _elapsed(start):
    return round(time.perf_counter() - start, 3)


def _real_draw(name, seed):
    from semiscale.datasets import encode_labels, load_dataset

    X, y = load_dataset(name)
    y = encode_labels(y)[0]
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(X.shape[0], REAL_N, replace=False))
    X = X[rows]
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    y = np.asarray(y)[rows].astype(np.int64)
    return X, y, _labels(y, REAL_PER_CLASS, rng)


def run_real(records, save):
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSClassifier

    for name, seed in itertools.product(REAL_DATASETS, range(REAL_SEEDS)):
        X, y, y_ssl = _real_draw(name, seed)
        base = {"experiment": "real", "dataset": name, "seed": seed}
        here = [r for r in records if all(r.get(k) == v for k, v in base.items())]
        done = {(r["estimator"], r.get("params")) for r in here}
        for est_name, model in _estimators(seed).items():
            if (est_name, _params(model)) not in done:
                start = time.perf_counter()
                model.fit(X, y_ssl)
                _record(
                    records,
                    {
                        **base,
                        "estimator": est_name,
                        "params": _params(model),
                        "seconds": _elapsed(start),
                        "accuracy": _accuracy(model, y, y_ssl),
                    },
                )
                save()
        local_gamma = RBF(gamma="local").resolve(X, random_state=seed).gamma
        laplacian = None
        for m, intrinsic, ambient in itertools.product(WIDTH_FACTORS, INTRINSIC_REGS, AMBIENT_REGS):
            est_name = f"grid m={m} intrinsic_reg={intrinsic} ambient_reg={ambient}"
            if (est_name, None) in done:
                continue
            if laplacian is None:
                laplacian = KNNGraph(random_state=seed).fit(X).laplacian_
            model = LapRLSClassifier(
                kernel=RBF(gamma=local_gamma / m**2),
                ambient_reg=ambient,
                intrinsic_reg=intrinsic,
                unlabeled=UNLABELED,
            ).fit(X, y_ssl, laplacian=laplacian)
            records.append(
                {
                    **base,
                    "estimator": est_name,
                    "m": m,
                    "gamma": local_gamma / m**2,
                    "intrinsic_reg": intrinsic,
                    "ambient_reg": ambient,
                    "accuracy": _accuracy(model, y, y_ssl),
                }
            )
            save()


def run_regression(records, save):
    from sklearn.preprocessing import StandardScaler

    from semiscale.datasets import load_dataset
    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSRegressor, NystromLapRLSRegressor

    for name, seed in itertools.product(REGRESSION_DATASETS, range(REAL_SEEDS)):
        X, y = load_dataset(name)
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(X.shape[0], REAL_N, replace=False))
        X = X[rows]
        X = StandardScaler().fit_transform(X.toarray() if hasattr(X, "toarray") else X)
        y = np.asarray(y, dtype=np.float64)[rows]
        y_ssl = np.where(rng.random(REAL_N) < REGRESSION_LABELED, y, np.nan)
        unlabeled = np.isnan(y_ssl)
        base = {"experiment": "regression", "dataset": name, "seed": seed}
        here = [r for r in records if all(r.get(k) == v for k, v in base.items())]
        done = {(r["estimator"], r.get("params")) for r in here}
        candidates = {
            "LapRLSRegressor()": LapRLSRegressor(random_state=seed),
            "NystromLapRLSRegressor()": NystromLapRLSRegressor(random_state=seed),
        }
        for gamma, ambient, intrinsic in itertools.product(
            ("local", "median"), AMBIENT_REGS, (0.1, 1.0, 10.0)
        ):
            candidates[f"grid gamma={gamma} ambient_reg={ambient} intrinsic_reg={intrinsic}"] = (
                LapRLSRegressor(
                    kernel=RBF(gamma=gamma),
                    ambient_reg=ambient,
                    intrinsic_reg=intrinsic,
                    random_state=seed,
                )
            )
        laplacian = None
        for est_name, model in candidates.items():
            grid = est_name.startswith("grid")
            params = None if grid else _params(model)
            if (est_name, params) in done:
                continue
            if grid and laplacian is None:
                laplacian = KNNGraph(random_state=seed).fit(X).laplacian_
            model.fit(X, y_ssl, **({"laplacian": laplacian} if grid else {}))
            error = np.sqrt(np.mean((model.transduction_[unlabeled] - y[unlabeled]) ** 2))
            _record(
                records,
                {**base, "estimator": est_name, "params": params, "error": float(error / y.std())},
            )
            save()


def summarize(records):
    """Per experiment: the defaults' accuracies, the grid's best, PASS/FAIL against the targets."""
    summary = {"moons": {}, "real": {}}
    moons = [r for r in records if r["experiment"] == "moons"]
    for name in dict.fromkeys(r["estimator"] for r in moons):
        acc = [r["accuracy"] for r in moons if r["estimator"] == name]
        summary["moons"][name] = {
            "seeds": len(acc),
            "min": min(acc),
            "median": float(np.median(acc)),
            "max": max(acc),
            "pass": min(acc) >= MOONS_TARGET if "previous" not in name else None,
        }
    for name in REAL_DATASETS:
        rows = [r for r in records if r["experiment"] == "real" and r["dataset"] == name]
        if not rows:
            continue
        mean = {}
        for r in rows:
            mean.setdefault(r["estimator"], []).append(r["accuracy"])
        mean = {k: float(np.mean(v)) for k, v in mean.items()}
        grid = {k: v for k, v in mean.items() if k.startswith("grid")}
        best = max(grid, key=grid.get) if grid else None
        entry = {"best": best, "best_accuracy": grid.get(best), "defaults": {}}
        for est_name, acc in mean.items():
            if est_name.startswith("grid"):
                continue
            gap = grid[best] - acc if best else None
            entry["defaults"][est_name] = {
                "accuracy": acc,
                "gap": gap,
                "pass": (gap <= GAP_TARGET) if best and "previous" not in est_name else None,
            }
        summary["real"][name] = entry
    summary["regression"] = {}
    for name in REGRESSION_DATASETS:
        rows = [r for r in records if r["experiment"] == "regression" and r["dataset"] == name]
        errors = {}
        for r in rows:
            errors.setdefault(r["estimator"], []).append(r["error"])
        errors = {k: float(np.mean(v)) for k, v in errors.items()}
        grid = {k: v for k, v in errors.items() if k.startswith("grid")}
        if grid:
            best = min(grid, key=grid.get)
            summary["regression"][name] = {"best": best, "best_error": grid[best], "errors": errors}
    return summary


def write_report(results, out):
    s = results["summary"]
    lines = [
        "# Defaults with only labels given (issue 11)",
        "",
        produced_by(results, legacy_command("defaults")),
        "",
        f"## Two moons, n = {MOONS_N}, one label per class, {MOONS_SEEDS} seeds",
        "",
        f"Target: the worst seed ≥ {MOONS_TARGET}.",
        "",
        "| estimator | min | median | max | target |",
        "|---|---|---|---|---|",
    ]
    for name, v in s["moons"].items():
        verdict = {True: "PASS", False: "FAIL", None: "(reference)"}[v["pass"]]
        lines.append(
            f"| {name} | {v['min']:.4f} | {v['median']:.4f} | {v['max']:.4f} | {verdict} |"
        )
    lines += [
        "",
        f"## Real sets: {REAL_N} points, {REAL_PER_CLASS} labels per class, {REAL_SEEDS} draws",
        "",
        f"Mean transductive accuracy; target: within {GAP_TARGET * 100:.0f} points of the best "
        "grid setting (exact LapRLS, σ = m × local width, intrinsic_reg, ambient_reg).",
        "",
        "| dataset | estimator | accuracy | best grid setting | best | gap | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, entry in s["real"].items():
        for est_name, v in entry["defaults"].items():
            verdict = {True: "PASS", False: "FAIL", None: "(reference)"}[v["pass"]]
            lines.append(
                f"| {name} | {est_name} | {v['accuracy']:.4f} | {entry['best'][5:]} | "
                f"{entry['best_accuracy']:.4f} | {v['gap'] * 100:+.1f} pts | {verdict} |"
            )
    lines += [
        "",
        f"## Regression: {REAL_N} points, {REGRESSION_LABELED:.0%} labeled, {REAL_SEEDS} draws",
        "",
        "Mean RMSE on the unlabeled points / std(y) (lower is better); no target.",
        "",
        "| dataset | setting | error |",
        "|---|---|---|",
    ]
    for name, entry in s["regression"].items():
        for est_name, error in sorted(entry["errors"].items(), key=lambda kv: kv[1]):
            mark = " (best of the grid)" if est_name == entry["best"] else ""
            lines.append(f"| {name} | {est_name}{mark} | {error:.4f} |")
    write_readme(out, lines)


BENCHMARK = Study("defaults", (run_moons, run_real, run_regression), summarize, write_report)
