"""Why does LapRLS collapse at one label per class, and which scaling of intrinsic_reg fixes it?

Issue 12, part 3.  Exact LapRLS (paper 000 eq. 3) in semiscale's canonical scaling minimises
``(1/l) Σ_labeled (y_i − f_i)² + ambient_reg‖f‖²_K + intrinsic_reg fᵀLf / tr(L)``, i.e. the
un-normalised ``Σ_labeled (y_i − f_i)² + λ_A‖f‖²_K + λ_I fᵀLf`` with ``λ_I = l·intrinsic_reg /
tr(L)``.  When ``λ_I`` is large, ``f = c + u/λ_I + O(λ_I⁻²)`` with ``c`` the labels' mean and
``L u = J(y − c)``: Poisson learning's equation (Calder et al. 2020).  Its regime starts once
``λ_I`` exceeds the graph's resistance scale ``1/d̄`` (``d̄ = tr(L)/n`` the mean degree), that
is once ``intrinsic_reg ≳ n / l``.  So the study parametrizes ``intrinsic_reg = ρ · n / l`` and
asks which ρ is near-best across label counts, n and data sets.

Variants (all without changes to semiscale: ``LapRLSRegressor`` fitted on several target
columns at once, one factorization, then an arg max per coding):

* coding ``±1``: the classifier's one-vs-rest ±1 targets (``LapRLSClassifier``'s own);
* coding ``zero-mean``: one-hot minus the labeled mean ``ȳ`` (Poisson's sources);
* coding ``balanced``: ``(one-hot − 1/C) · l / (C n_c)`` for a point of class c with ``n_c``
  labels (every class carries the same total source, mean zero: Poisson's mass balancing with
  a uniform prior, as targets);
* coding ``one-hot+CMN``: one-hot targets, then class mass normalization (Zhu et al. 2003) of
  the scores to the labeled class proportions;
* ``+centred``: the fitted columns of a coding minus their mean over all points weighted by
  ``diag(L)`` (Poisson learning's normalization ``Σ_i d_i U_ic = 0``), then the arg max;
* ``fit_intercept`` False / True; Laplacian power 1 / 2 (``KNNGraph(power=2)``).

With equal label counts per class, ``±1``, ``zero-mean`` and ``balanced`` have the same arg max
(the fit is linear in the targets and they differ by a per-class multiple of one common column),
so the codings are compared on *random* draws too, whose class counts are unequal.

Protocol.

* grid: usps and letter, seed s = 0..2 draws 2,000 points (``numpy.random.default_rng(s)``, as
  ``graph_weights``); two moons n = 2,000, noise 0.1, ``random_state=s``.  One default
  ``KNNGraph(random_state=s)`` (and one with ``power=2``) per draw, passed as ``laplacian=``.
  Labels: ``m`` ∈ {1, 3, 10} per class (``default_rng([s, m])``, as ``graph_weights``), and
  *random* draws of ``C·m`` labeled points, m ∈ {3, 10}, uniform over the points with at least
  one per class (``ssl_split(..., stratify=False, random_state=1000 s + m)``).
  ρ ∈ {1e-4, …, 1e4} by decades; the classifier's other parameters at their defaults
  (``RBF(gamma="local")``, ``ambient_reg=1e-6``).  References on the same graph and labels:
  ``LapRLSClassifier()`` (``intrinsic_reg=1``), ``LapRLSClassifier(intrinsic_reg=1e4)``,
  ``PoissonClassifier()`` and ``HarmonicClassifier(class_mass_normalization=True)``.
* sizes: usps with n = 1,000 (seeds 0..2) and 4,000 (seeds 0..1), m ∈ {1, 3, 10} per class,
  power 1, no intercept, ρ ∈ {1e-3, …, 1e3}, plus ``LapRLSClassifier()``.
* full: all 7,291 usps images, one ``KNNGraph(random_state=0)``, m ∈ {1, 3, 5, 10} per class,
  trials t = 0..2 drawn with ``default_rng([t, m])`` (``semiscale-bench few-labels``'s draw):
  ``LapRLSClassifier()`` and ``NystromLapRLSClassifier()`` at their defaults against the same
  models with the recommended rule (:data:`RECOMMENDED_RULE`; every coding), exact LapRLS on
  ``KNNGraph(power=2)`` with :data:`RECOMMENDED_RULE_L2`, and ``PoissonClassifier()``.
* rules: on the grid's draws of usps and letter (power 1, no intercept), ``intrinsic_reg``
  fixed at 1e-2, 1, 1e2, 1e4 (the canonical scaling as it is) or ``c·(n/l)²``,
  c ∈ {1e-4, …, 1e-1}, beside the grid's ``ρ·n/l``.

Accuracy is transductive, on the unlabeled points.  Run (writes ``results.json`` and
``README.md`` to ``--out``; recorded fits are kept)::

    semiscale-bench few_label_laprls --out benchmarks/results/few_label_laprls

The steps and the summary are here; the README is written by :mod:`.report`.
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np

UNLABELED = -1
REAL_DATASETS = ("usps", "letter")
DATASETS = (*REAL_DATASETS, "two moons")
GRID_N = 2000
GRID_SEEDS = 3
PER_CLASS = (1, 3, 10)
RANDOM_PER_CLASS = (3, 10)
RHOS = tuple(10.0**k for k in range(-4, 5))
SIZE_RUNS = ((1000, 3), (4000, 2))  # (n, seeds) on usps
SIZE_RHOS = tuple(10.0**k for k in range(-3, 4))
FULL_PER_CLASS = (1, 3, 5, 10)
FULL_TRIALS = 3
CENTRED = ("±1", "zero-mean", "balanced")
CODINGS = ("±1", "zero-mean", "balanced", "one-hot+CMN", *(f"{c}+centred" for c in CENTRED))
#: The rule recommended by this study for intrinsic_reg: (family, constant) of
#: :func:`rule_value`.
RECOMMENDED_RULE = ("c*(n/l)^2", 1e-2)
RECOMMENDED_CODING = "balanced+centred"
#: The same with ``KNNGraph(power=2)``.
RECOMMENDED_RULE_L2 = ("rho*n/l", 0.1)


# -- the variants -----------------------------------------------------------------------------


def target_codings(y_ssl, classes):
    """Target matrices (n, C) per coding name; zero on unlabeled rows.

    ``"one-hot"`` is included (the base of ``"one-hot+CMN"``).
    """
    labeled = y_ssl != UNLABELED
    n, C = y_ssl.shape[0], classes.shape[0]
    codes = np.searchsorted(classes, y_ssl[labeled])
    onehot = np.zeros((n, C))
    onehot[np.flatnonzero(labeled), codes] = 1.0
    counts = np.bincount(codes, minlength=C).astype(np.float64)
    share = counts / counts.sum()
    l = labeled.sum()
    out = {"one-hot": onehot, "±1": np.where(labeled[:, None], 2.0 * onehot - 1.0, 0.0)}
    out["zero-mean"] = np.where(labeled[:, None], onehot - share, 0.0)
    per_point = np.zeros(n)
    per_point[labeled] = l / (C * counts[codes])
    out["balanced"] = np.where(labeled[:, None], onehot - 1.0 / C, 0.0) * per_point[:, None]
    return out


def centre(scores, weight):
    """Scores minus their ``weight``-weighted mean over all points, per column.

    Poisson learning's normalization ``Σ_i d_i U_ic = 0`` (d = diag L); in LapRLS's large
    ``intrinsic_reg`` limit the columns are instead shifted so that their mean over the
    *labeled* points matches the targets', a per-class offset set by the spikes of the
    Green's function at the few labeled points.
    """
    return scores - (weight[:, None] * scores).sum(axis=0) / weight.sum()


def class_mass_normalize(scores, prior):
    """Zhu et al.'s CMN: column c scaled by ``prior_c / Σ_i scores_ic`` (scores clipped ≥ 0)."""
    p = np.clip(scores, 0.0, None)
    mass = p.sum(axis=0)
    mass[mass <= 0] = 1.0
    return p * (prior / mass)


def fit_codings(X, y_ssl, laplacian, intrinsic_reg, *, fit_intercept=False, seed=0, nystrom=False):
    """Predicted labels (n,) per coding of one multi-output fit of the classifier's model.

    ``LapRLSRegressor`` (or ``NystromLapRLSRegressor``) with the classifiers' defaults
    (``RBF(gamma="local")``, ``ambient_reg=1e-6``) fitted once on all codings' columns.
    """
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSRegressor, NystromLapRLSRegressor

    classes = np.unique(y_ssl[y_ssl != UNLABELED])
    C = classes.shape[0]
    codings = target_codings(y_ssl, classes)
    names = ["one-hot", "±1", "zero-mean", "balanced"]
    Y = np.hstack([codings[name] for name in names])
    Y[y_ssl == UNLABELED] = np.nan
    cls = NystromLapRLSRegressor if nystrom else LapRLSRegressor
    model = cls(
        kernel=RBF(gamma="local"),
        ambient_reg=1e-6,
        intrinsic_reg=intrinsic_reg,
        fit_intercept=fit_intercept,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y, laplacian=laplacian)
    F = model.transduction_
    scores = {name: F[:, i * C : (i + 1) * C] for i, name in enumerate(names)}
    labeled = y_ssl != UNLABELED
    prior = np.bincount(np.searchsorted(classes, y_ssl[labeled]), minlength=C) / labeled.sum()
    scores["one-hot+CMN"] = class_mass_normalize(scores.pop("one-hot"), prior)
    weight = np.asarray(laplacian.diagonal()).ravel()
    for name in CENTRED:
        scores[f"{name}+centred"] = centre(scores[name], weight)
    return {name: classes[np.argmax(s, axis=1)] for name, s in scores.items()}


def accuracy(pred, y, y_ssl):
    unlabeled = y_ssl == UNLABELED
    return float(np.mean(pred[unlabeled] == y[unlabeled]))


def rule(rho, n, n_labeled):
    """``intrinsic_reg = ρ · n / l``."""
    return rho * n / n_labeled


# -- data and labels --------------------------------------------------------------------------


def _points(name, n, seed):
    from semiscale.datasets import encode_labels, load_dataset, make_two_moons

    if name == "two moons":
        X, y = make_two_moons(n, noise=0.1, random_state=seed)
        return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
    X, y = load_dataset(name)
    y = np.asarray(encode_labels(y)[0], dtype=np.int64)
    if n is not None and n < X.shape[0]:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
        X, y = X[rows], y[rows]
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    return X, y


def per_class_labels(y, m, rng):
    y_ssl = np.full(y.shape, UNLABELED, dtype=np.int64)
    for c in np.unique(y):
        members = np.flatnonzero(y == c)
        y_ssl[rng.choice(members, min(m, members.size), replace=False)] = c
    return y_ssl


def random_labels(y, m, seed):
    from semiscale.datasets import ssl_split

    C = np.unique(y).size
    labeled, _ = ssl_split(y, n_labeled=C * m, stratify=False, random_state=seed)
    return np.where(labeled, y, UNLABELED)


def _graph(X, seed, power=1):
    from semiscale.graph import DisconnectedGraphWarning, KNNGraph

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        return KNNGraph(power=power, random_state=seed).fit(X).laplacian_


def _references(X, y, y_ssl, L, seed):
    """Accuracy of the reference estimators on one draw."""
    from semiscale.models import HarmonicClassifier, LapRLSClassifier, PoissonClassifier

    out = {}
    for name, model in {
        "LapRLSClassifier()": LapRLSClassifier(random_state=seed),
        "LapRLSClassifier(intrinsic_reg=1e4)": LapRLSClassifier(
            intrinsic_reg=1e4, random_state=seed
        ),
        "PoissonClassifier()": PoissonClassifier(),
        "HarmonicClassifier(CMN)": HarmonicClassifier(class_mass_normalization=True),
    }.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y_ssl, laplacian=L)
        out[name] = accuracy(model.transduction_, y, y_ssl)
    return out


# -- steps ------------------------------------------------------------------------------------


def _draws(y, seed):
    for m in PER_CLASS:
        yield "per-class", m, per_class_labels(y, m, np.random.default_rng([seed, m]))
    for m in RANDOM_PER_CLASS:
        yield "random", m, random_labels(y, m, 1000 * seed + m)


GRID_CONFIGS = ((1, False), (1, True), (2, False))  # (power, fit_intercept)


def run_grid(records, save):
    done = {
        (
            r["step"],
            r["dataset"],
            r["n"],
            r["seed"],
            r["draw"],
            r["m"],
            r.get("power"),
            r.get("fit_intercept"),
            r.get("rho"),
        )
        for r in records
    }
    for name, seed in itertools.product(DATASETS, range(GRID_SEEDS)):
        X = y = None
        graphs = {}
        for power, intercept in GRID_CONFIGS:
            for rho in (None, *RHOS):
                for draw in ("per-class", "random"):
                    if power == 2 and draw == "random":
                        continue
                    ms = PER_CLASS if draw == "per-class" else RANDOM_PER_CLASS
                    for m in ms:
                        key = (
                            "grid",
                            name,
                            GRID_N,
                            seed,
                            draw,
                            m,
                            power if rho else None,
                            intercept if rho else None,
                            rho,
                        )
                        if key in done or (rho is None and (power, intercept) != (1, False)):
                            continue
                        if X is None:
                            X, y = _points(name, GRID_N, seed)
                            label_sets = {(d, k): ys for d, k, ys in _draws(y, seed)}
                        if power not in graphs:
                            graphs[power] = _graph(X, seed, power)
                        y_ssl = label_sets[(draw, m)]
                        n_labeled = int((y_ssl != UNLABELED).sum())
                        start = time.perf_counter()
                        record = {
                            "step": "grid",
                            "dataset": name,
                            "n": GRID_N,
                            "seed": seed,
                            "draw": draw,
                            "m": m,
                            "n_labeled": n_labeled,
                        }
                        if rho is None:
                            record["references"] = _references(X, y, y_ssl, graphs[1], seed)
                            record.update(power=None, fit_intercept=None, rho=None)
                        else:
                            reg = rule(rho, GRID_N, n_labeled)
                            pred = fit_codings(
                                X, y_ssl, graphs[power], reg, fit_intercept=intercept, seed=seed
                            )
                            record.update(
                                power=power,
                                fit_intercept=intercept,
                                rho=rho,
                                intrinsic_reg=reg,
                                accuracy={c: accuracy(p, y, y_ssl) for c, p in pred.items()},
                            )
                        record["seconds"] = round(time.perf_counter() - start, 3)
                        records.append(record)
                        done.add(key)
                        save()


def run_sizes(records, save):
    from semiscale.models import LapRLSClassifier

    done = {(r["n"], r["seed"], r["m"], r.get("rho")) for r in records if r["step"] == "sizes"}
    for n, seed in ((n, s) for n, seeds in SIZE_RUNS for s in range(seeds)):
        X = y = L = None
        for m, rho in itertools.product(PER_CLASS, (None, *SIZE_RHOS)):
            if (n, seed, m, rho) in done:
                continue
            if X is None:
                X, y = _points("usps", n, seed)
                L = _graph(X, seed)
            y_ssl = per_class_labels(y, m, np.random.default_rng([seed, m]))
            n_labeled = int((y_ssl != UNLABELED).sum())
            start = time.perf_counter()
            record = {
                "step": "sizes",
                "dataset": "usps",
                "n": n,
                "seed": seed,
                "draw": "per-class",
                "m": m,
                "n_labeled": n_labeled,
                "rho": rho,
            }
            if rho is None:
                model = LapRLSClassifier(random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(X, y_ssl, laplacian=L)
                record["references"] = {
                    "LapRLSClassifier()": accuracy(model.transduction_, y, y_ssl)
                }
            else:
                reg = rule(rho, n, n_labeled)
                pred = fit_codings(X, y_ssl, L, reg, seed=seed)
                acc = {c: accuracy(p, y, y_ssl) for c, p in pred.items()}
                record.update(intrinsic_reg=reg, accuracy=acc)
            record["seconds"] = round(time.perf_counter() - start, 3)
            records.append(record)
            save()


#: Other rules for intrinsic_reg, fitted on the grid's draws of the real sets (power 1, no
#: intercept): one fixed value (the canonical scaling as it is), or ``c·(n/l)²``.
FIXED_REGS = (1e-2, 1.0, 1e2, 1e4)
SQUARE_CONSTANTS = (1e-4, 1e-3, 1e-2, 1e-1)
#: The rules also fitted at usps's other sizes (``SIZE_RUNS``).
SIZE_RULES = (("fixed", 1.0), ("c*(n/l)^2", 1e-3), ("c*(n/l)^2", 1e-2))


def rule_value(family, constant, n, n_labeled):
    if family == "fixed":
        return constant
    if family == "rho*n/l":
        return rule(constant, n, n_labeled)
    return constant * (n / n_labeled) ** 2


def _rule_fit(name, seed, draw, m, family, constant, X, y, y_ssl, L):
    """The record of the codings fitted with ``intrinsic_reg`` from one rule on one draw."""
    n, n_labeled = X.shape[0], int((y_ssl != UNLABELED).sum())
    reg = rule_value(family, constant, n, n_labeled)
    start = time.perf_counter()
    pred = fit_codings(X, y_ssl, L, reg, seed=seed)
    return {
        "step": "rules",
        "dataset": name,
        "n": n,
        "seed": seed,
        "draw": draw,
        "m": m,
        "n_labeled": n_labeled,
        "family": family,
        "constant": constant,
        "intrinsic_reg": reg,
        "accuracy": {c: accuracy(p, y, y_ssl) for c, p in pred.items()},
        "seconds": round(time.perf_counter() - start, 3),
    }


def run_rules(records, save):
    done = {
        (r["dataset"], r["seed"], r["draw"], r["m"], r["family"], r["constant"])
        for r in records
        if r["step"] == "rules"
    }
    todo = [("fixed", c) for c in FIXED_REGS] + [("c*(n/l)^2", c) for c in SQUARE_CONSTANTS]
    for name, seed in itertools.product(REAL_DATASETS, range(GRID_SEEDS)):
        X = y = L = None
        for (draw, m), (family, constant) in itertools.product(
            [("per-class", m) for m in PER_CLASS] + [("random", m) for m in RANDOM_PER_CLASS], todo
        ):
            if (name, seed, draw, m, family, constant) in done:
                continue
            if X is None:
                X, y = _points(name, GRID_N, seed)
                L = _graph(X, seed)
                label_sets = {(d, k): ys for d, k, ys in _draws(y, seed)}
            y_ssl = label_sets[(draw, m)]
            records.append(_rule_fit(name, seed, draw, m, family, constant, X, y, y_ssl, L))
            save()
    # the candidates that survive the grid, at the other sizes of usps
    done = {
        (r["dataset"], r["n"], r["seed"], r["draw"], r["m"], r["family"], r["constant"])
        for r in records
        if r["step"] == "rules"
    }
    for n, seed in ((n, s) for n, seeds in SIZE_RUNS for s in range(seeds)):
        X = y = L = None
        for m, (family, constant) in itertools.product(PER_CLASS, SIZE_RULES):
            if ("usps", n, seed, "per-class", m, family, constant) in done:
                continue
            if X is None:
                X, y = _points("usps", n, seed)
                L = _graph(X, seed)
            y_ssl = per_class_labels(y, m, np.random.default_rng([seed, m]))
            records.append(
                _rule_fit("usps", seed, "per-class", m, family, constant, X, y, y_ssl, L)
            )
            save()


FULL_CODINGS = ("±1", "balanced", "one-hot+CMN", "balanced+centred")
#: The multi-coding fits of the full step: name -> (rule or None for the recommended one,
#: Laplacian power, Nyström).
FULL_FITS = {
    "LapRLS, rule": (None, 1, False),
    "LapRLS, intrinsic_reg=1": (("fixed", 1.0), 1, False),
    "Nystrom LapRLS, rule": (None, 1, True),
    "LapRLS L², rule": (None, 2, False),
}
FULL_METHODS = (
    "LapRLSClassifier()",
    "LapRLS, rule",
    "LapRLS, intrinsic_reg=1",
    "NystromLapRLSClassifier()",
    "Nystrom LapRLS, rule",
    "LapRLS L², rule",
    "PoissonClassifier()",
)


def run_full(records, save):
    from semiscale.models import LapRLSClassifier, NystromLapRLSClassifier, PoissonClassifier

    done = {(r["m"], r["seed"], r["method"]) for r in records if r["step"] == "full"}
    X = y = None
    graphs = {}
    for m, trial, method in itertools.product(FULL_PER_CLASS, range(FULL_TRIALS), FULL_METHODS):
        if (m, trial, method) in done:
            continue
        if X is None:
            X, y = _points("usps", None, 0)
        rule_, power, nystrom = FULL_FITS.get(method, (("fixed", 1.0), 1, False))
        if rule_ is None:
            rule_ = RECOMMENDED_RULE_L2 if power == 2 else RECOMMENDED_RULE
        if power not in graphs:
            graphs[power] = _graph(X, 0, power=power)
        y_ssl = per_class_labels(y, m, np.random.default_rng([trial, m]))
        n_labeled = int((y_ssl != UNLABELED).sum())
        reg = rule_value(*rule_, X.shape[0], n_labeled)
        start = time.perf_counter()
        if method in FULL_FITS:
            pred = fit_codings(X, y_ssl, graphs[power], reg, seed=trial, nystrom=nystrom)
            acc = {c: accuracy(p, y, y_ssl) for c, p in pred.items()}
        else:
            model = {
                "LapRLSClassifier()": LapRLSClassifier(random_state=trial),
                "NystromLapRLSClassifier()": NystromLapRLSClassifier(random_state=trial),
                "PoissonClassifier()": PoissonClassifier(),
            }[method]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y_ssl, laplacian=graphs[1])
            acc = {"own": accuracy(model.transduction_, y, y_ssl)}
        records.append(
            {
                "step": "full",
                "dataset": "usps",
                "n": int(X.shape[0]),
                "seed": trial,
                "m": m,
                "n_labeled": n_labeled,
                "method": method,
                "rule": list(rule_) if method in FULL_FITS else None,
                "intrinsic_reg": reg if method in FULL_FITS else None,
                "accuracy": acc,
                "seconds": round(time.perf_counter() - start, 3),
            }
        )
        save()


# -- summary and report -----------------------------------------------------------------------


def summarize(records):
    """Mean accuracy per setting and variant (over seeds)."""
    groups = {}
    for r in records:
        base = (r["step"], r["dataset"], r["n"], r.get("draw", "per-class"), r["m"])
        if "references" in r:
            for name, acc in r["references"].items():
                groups.setdefault((*base, name, None, None, None, None), []).append(acc)
        elif r["step"] == "full":
            for coding, acc in r["accuracy"].items():
                groups.setdefault((*base, r["method"], coding, None, None, None), []).append(acc)
        elif r["step"] == "rules":
            for coding, acc in r["accuracy"].items():
                key = (*base, f"rule {r['family']}={r['constant']:g}", coding, 1, False, None)
                groups.setdefault(key, []).append(acc)
        else:
            for coding, acc in r["accuracy"].items():
                key = (
                    *base,
                    "LapRLS",
                    coding,
                    r.get("power", 1),
                    r.get("fit_intercept", False),
                    r["rho"],
                )
                groups.setdefault(key, []).append(acc)
    keys = (
        "step",
        "dataset",
        "n",
        "draw",
        "m",
        "method",
        "coding",
        "power",
        "fit_intercept",
        "rho",
    )
    return [
        {
            **dict(zip(keys, key)),
            "draws": len(acc),
            "mean": float(np.mean(acc)),
            "std": float(np.std(acc)),
        }
        for key, acc in groups.items()
    ]
