"""What several studies fit the same way, so that a study is its protocol and its tables.

* The graph studies (``graph_kth_gaussian``, ``graph_bandwidth``) compare kNN graphs alike:
  every graph of a dataset built once, each estimator given its Laplacian on the few-labels
  benchmark's draws (:func:`~semiscale_bench.few_labels.draw_labels`), transductive accuracy on
  the unlabeled points, then mean ± std per (dataset, labels per class, graph, estimator):
  :func:`fit_digit_graphs`, :func:`summarize_accuracy`, :func:`accuracy_tables`; and on two
  moons with one label per class: :func:`fit_moons`.
* The inductive studies (``label_diffusion``, ``nystrom_span``) fit variants on the few-labels
  benchmark's 80 % pool and score them on the held-out points: :func:`pool_split`,
  :func:`fit_pool_variants`, :func:`all_converged`, beside the benchmark's peer
  (:func:`label_spreading`).
* The two-moons studies label one point per class: :func:`first_of_each_class` (the first
  point, as paper 001; :func:`labeled_moons` with its test points) or
  :func:`one_label_per_class` (a random one).
"""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np

from semiscale_bench.harness.study import group_stats, mean_std, recorded


def fit_digit_graphs(
    records,
    save,
    *,
    datasets,
    per_class,
    trials,
    graphs,
    estimators,
    make_estimator,
    extra=None,
    on_load=None,
):
    """Append one accuracy record per (dataset, labels per class, trial, graph, estimator).

    ``make_estimator(name, trial)`` returns an unfitted estimator; ``extra`` is merged into
    every record; ``on_load(name, X)`` runs once per dataset that still has fits to do.
    Recorded keys are skipped, so a rerun resumes.
    """
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels, load
    from semiscale_bench.few_labels.protocol import PROTOCOL

    extra = extra or {}
    done = recorded(
        records,
        ("dataset", "per_class", "trial", "graph", "estimator"),
        where=lambda r: "trial" in r and all(r.get(k) == v for k, v in extra.items()),
    )
    for name in datasets:
        keys = list(itertools.product(per_class, range(trials), graphs, estimators))
        if all((name, *key) in done for key in keys):
            continue
        X, y = load(PROTOCOL, name)
        if on_load is not None:
            on_load(name, X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            laplacians = {g: KNNGraph(**kw).fit(X).laplacian_ for g, kw in graphs.items()}
        for labels, trial, graph, estimator in keys:
            if (name, labels, trial, graph, estimator) in done:
                continue
            observed = draw_labels(y, labels, trial)
            model = make_estimator(estimator, trial)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, observed, laplacian=laplacians[graph])
            free = observed == -1
            records.append(
                {
                    **extra,
                    "dataset": name,
                    "per_class": labels,
                    "trial": trial,
                    "graph": graph,
                    "estimator": estimator,
                    "accuracy": float(np.mean(model.transduction_[free] == y[free])),
                }
            )
            save()


def summarize_accuracy(records):
    """Mean and std of the accuracy over the trials of every record that has a ``trial``."""
    keys = ("dataset", "per_class", "graph", "estimator")
    return group_stats(records, keys, where=lambda r: "trial" in r)


def accuracy_tables(summary, *, datasets, per_class, estimators, graphs, graph_label=str):
    """Markdown lines: one table per dataset, a row per (estimator, graph), % ± std."""
    cells = {(s["dataset"], s["per_class"], s["graph"], s["estimator"]): s for s in summary}
    lines = []
    for name in datasets:
        lines += ["", f"{name}:", ""]
        lines += ["| estimator | graph | " + " | ".join(f"{k}/class" for k in per_class) + " |"]
        lines += ["|---" * (2 + len(per_class)) + "|"]
        for estimator, graph in itertools.product(estimators, graphs):
            entries = []
            for k in per_class:
                s = cells.get((name, k, graph, estimator))
                entries.append("—" if s is None else mean_std(s))
            lines.append(f"| {estimator} | {graph_label(graph)} | " + " | ".join(entries) + " |")
    return lines


def fit_moons(n, trial, model):
    """``model`` fitted on the graph studies' two moons, one label per class.

    ``make_two_moons(n, noise=0.1, random_state=0)``, the labels drawn by
    :func:`one_label_per_class` with ``default_rng([trial, 1])``.  Returns ``X, y, observed``
    and the fit's seconds.
    """
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(n, noise=0.1, random_state=0)
    observed = one_label_per_class(y, np.random.default_rng([trial, 1]))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, observed)
    return X, y, observed, time.perf_counter() - start


#: The few-labels benchmark's peer, as the inductive studies' tables name it.
LABEL_SPREADING = "LabelSpreading(knn, 10, 0.99)"


def label_spreading():
    """scikit-learn's ``LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)``."""
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)


def pool_split(name):
    """``name``'s points split once into the few-labels benchmark's pool and held-out points.

    ``"two_moons"`` is the benchmark's moons (``make_two_moons(moons_n, noise=moons_noise,
    random_state=0)``); the split is :func:`~semiscale_bench.few_labels.inductive.pool_split`.
    Returns ``X_pool, y_pool, X_held_out, y_held_out``.
    """
    from semiscale.datasets import make_two_moons
    from semiscale_bench.few_labels import load
    from semiscale_bench.few_labels.inductive import pool_split as split
    from semiscale_bench.few_labels.protocol import PROTOCOL

    if name == "two_moons":
        X, y = make_two_moons(PROTOCOL.moons_n, noise=PROTOCOL.moons_noise, random_state=0)
    else:
        X, y = load(PROTOCOL, name)
    pool, held_out = split(X.shape[0], PROTOCOL.inductive_pool, PROTOCOL.inductive_seed)
    return X[pool], y[pool], X[held_out], y[held_out]


def fit_pool_variants(
    records, save, *, datasets, per_class, trials, variants, make_estimator, facts, graph=None
):
    """Append one held-out accuracy record per (dataset, labels per class, trial, variant).

    Each variant ``make_estimator(variant, trial)`` is fitted on the pool (:func:`pool_split`)
    with the labels of :func:`~semiscale_bench.few_labels.draw_labels` and scored by
    ``predict`` on the held-out points; the record holds the fit's seconds and
    ``facts(model)``.  ``graph(variant)`` true: the fit is given the Laplacian of ``KNNGraph()``
    on the pool, built once per dataset (its seconds not in the fit's).  Recorded keys are
    skipped, so a rerun resumes.
    """
    from semiscale.graph import KNNGraph
    from semiscale_bench.few_labels import draw_labels

    done = recorded(records, ("dataset", "per_class", "trial", "variant"))
    for name in datasets:
        keys = list(itertools.product(per_class, range(trials), variants))
        if all((name, *key) in done for key in keys):
            continue
        X_pool, y_pool, X_test, y_test = pool_split(name)
        laplacian = KNNGraph().fit(X_pool).laplacian_ if graph is not None else None
        for labels, trial, variant in keys:
            if (name, labels, trial, variant) in done:
                continue
            observed = draw_labels(y_pool, labels, trial)
            model = make_estimator(variant, trial)
            given = {"laplacian": laplacian} if graph is not None and graph(variant) else {}
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_pool, observed, **given)
            seconds = time.perf_counter() - start
            records.append(
                {
                    "dataset": name,
                    "per_class": labels,
                    "trial": trial,
                    "variant": variant,
                    "accuracy": float(np.mean(model.predict(X_test) == y_test)),
                    "seconds": round(seconds, 3),
                    **facts(model),
                }
            )
            save()


def all_converged(group) -> dict:
    """``{"all_converged": ...}``: no record of ``group`` says its solver did not converge."""
    return {"all_converged": all(r["converged"] in (True, None) for r in group)}


def first_of_each_class(y, classes=(0, 1)):
    """The first point of each class labeled: (their indices in class order, the labels).

    The labels are ``y`` on those points and ``-1`` elsewhere.
    """
    labeled = np.array([np.flatnonzero(y == c)[0] for c in classes])
    observed = np.full_like(y, -1)
    observed[labeled] = y[labeled]
    return labeled, observed


def one_label_per_class(y, rng, classes=(0, 1)):
    """One point of each class drawn by ``rng`` labeled, ``-1`` elsewhere."""
    observed = np.full_like(y, -1)
    for c in classes:
        observed[rng.choice(np.flatnonzero(y == c))] = c
    return observed


def labeled_moons(n_train, n_test):
    """Paper 001's two moons: training points with the first of each class labeled, test points.

    ``make_two_moons(n, noise=0.1)`` with ``random_state=0`` for training and ``1`` for test.
    Returns ``X, y, labeled, observed, X_test, y_test`` (:func:`first_of_each_class`).
    """
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(n_train, noise=0.1, random_state=0)
    X_test, y_test = make_two_moons(n_test, noise=0.1, random_state=1)
    return X, y, *first_of_each_class(y), X_test, y_test
