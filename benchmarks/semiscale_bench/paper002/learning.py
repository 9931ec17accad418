"""Experiment ``curves``: test error against labels per class (Figures 2-3), with CV selection.

One record per (task, method, ``l=<labels per class>``, trial): the chosen (p, η, σ, C), its CV
accuracy, the test error (%), and the seconds spent on the kernels and on the selection.
Per (task, trial, method) the kernel blocks of every grid point between the trial's largest
labeled set L and itself (``K̃(L, L)``) and between the test rows and L (``K̃(T, L)``) are
computed once (:func:`kernel_blocks`); every label count's labeled set is a prefix of L per class
(:func:`~.data.labeled_rows`), so its CV and its test predictions read sub-blocks of those
(:func:`select_and_test`).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from semiscale_bench.harness import Sizes
from semiscale_bench.paper002.data import class_orders, labeled_rows, load_task
from semiscale_bench.paper002.methods import GRAPH_METHODS, paper_graph
from semiscale_bench.paper002.protocol import FULL, RBF_SVM

__all__ = [
    "gamma_of",
    "kernel_blocks",
    "median_sigma",
    "run_curves",
    "select_and_test",
    "setting",
    "sizes_of",
]

EXPERIMENT = "curves"


def setting(per_class: int) -> str:
    """The record's setting for ``per_class`` labels per class."""
    return f"l={per_class}"


def sizes_of(protocol, facts: dict) -> Sizes:
    """The sizes that decide the caps: training rows, labeled rows, landmarks."""
    m = 2 * max(protocol.labels_per_class)
    n = facts["n_train"] + facts["n_test"]
    return Sizes(n, facts["d"], facts["n_train"], m, protocol.n_landmarks)


def gamma_of(sigma0: float, scale: float) -> float:
    """RBF γ = 1/(2σ²) of the width σ = ``scale``·σ₀."""
    return 1.0 / (2.0 * (scale * sigma0) ** 2)


def _pairs(kernel, task, trial_rows):
    """``(K(L, L), K(T, L))`` for each trial's labeled rows L (T: the test rows)."""
    out = []
    for rows in trial_rows:
        X_L = task.X_train[rows]
        out.append((kernel(X_L, X_L), kernel(task.X_test, X_L)))
    return out


def kernel_blocks(bench, protocol, method, task, laplacian, sigma0, trial_rows, seeds):
    """Per trial, per grid point: the blocks ``(K̃(L, L), K̃(T, L))`` and the kernel seconds.

    Parameters
    ----------
    trial_rows : list of ndarray
        Each trial's largest labeled set L (training row indices), in label order.
    seeds : list of int
        Each trial's seed (its landmarks' random part).
    laplacian : sparse matrix or None
        The paper's graph of every training row, for :data:`~.methods.GRAPH_METHODS`.

    Returns
    -------
    blocks : list (trials) of list (grid points) of (ndarray, ndarray)
    seconds : list of float
        Each trial's kernel seconds: its fits (one per p) and block evaluations; the full
        kernel's, shared by every trial, are split evenly between them.
    facts : list of dict
        Each trial's solve diagnostics per p where the kernel reports them, and the warnings
        its fit raised.
    """
    from semiscale.kernels import RBF

    grid = protocol.grid(method, task.name)
    sizes = sizes_of(protocol, task.facts())
    if method == RBF_SVM:
        tic = time.perf_counter()
        blocks = [[] for _ in trial_rows]
        for point in grid:
            kernel = RBF(gamma=gamma_of(sigma0, point["sigma_scale"]))
            for t, pair in enumerate(_pairs(kernel, task, trial_rows)):
                blocks[t].append(pair)
        share = (time.perf_counter() - tic) / len(trial_rows)
        return blocks, [share] * len(trial_rows), [{} for _ in trial_rows]

    def fitted(power, seed, rows):
        kernel = bench.methods.build(
            method,
            {"kernel": {"power": power}},
            sizes,
            protocol=protocol,
            dataset=task.name,
            seed=seed,
        )
        y = np.full(task.X_train.shape[0], -1)
        y[rows] = task.y_train[rows]
        extra = {"laplacian": laplacian} if method in GRAPH_METHODS else {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # recorded with the fit, reported in curves.md
            fitted_kernel = kernel.fit(task.X_train, y, **extra)
        return fitted_kernel, sorted({f"{w.category.__name__}: {w.message}" for w in caught})

    powers = sorted({point["power"] for point in grid})
    blocks = [[None] * len(grid) for _ in trial_rows]
    seconds = [0.0] * len(trial_rows)
    facts = [{} for _ in trial_rows]
    # The full kernel ignores the labels (no landmarks): one fit per p serves every trial.
    shared = method == FULL
    for power in powers:
        for t in range(1 if shared else len(trial_rows)):
            tic = time.perf_counter()
            base, caught = fitted(power, seeds[t], trial_rows[t])
            fit_seconds = time.perf_counter() - tic
            facts[t][f"p={power}"] = {**_solve_facts(base, fit_seconds), "warnings": caught}
            for j, point in enumerate(grid):
                if point["power"] != power:
                    continue
                tic = time.perf_counter()
                kernel = base.with_ambient(
                    eta=point["eta"], base_kernel=RBF(gamma=gamma_of(sigma0, point["sigma_scale"]))
                )
                targets = range(len(trial_rows)) if shared else [t]
                for s, pair in zip(targets, _pairs(kernel, task, [trial_rows[s] for s in targets])):
                    blocks[s][j] = pair
                fit_seconds += time.perf_counter() - tic
            if shared:
                for s in range(len(trial_rows)):
                    seconds[s] += fit_seconds / len(trial_rows)
            else:
                seconds[t] += fit_seconds
    return blocks, seconds, facts


def _solve_facts(kernel, seconds: float) -> dict:
    """What a fitted kernel says about its solves (iterations, ε of Theorem 4.2), and seconds."""
    out = {"fit_seconds": seconds}
    for name in ("iterations_", "epsilon_", "n_landmarks_"):
        value = getattr(kernel, name, None)
        if value is not None:
            value = np.asarray(value, dtype=float)
            out[name.rstrip("_")] = float(value.max()) if value.size else None
    return out


def _cv_score(G, y, C, folds):
    """Mean CV accuracy and mean hinge loss of ``SVC(kernel="precomputed", C)`` on ``G``."""
    from sklearn.svm import SVC

    correct, hinge, n = 0, 0.0, 0
    for train, test in folds:
        svc = SVC(kernel="precomputed", C=C).fit(G[np.ix_(train, train)], y[train])
        f = svc.decision_function(G[np.ix_(test, train)])
        sign = np.where(y[test] == svc.classes_[1], 1.0, -1.0)
        correct += int(np.sum(sign * f > 0))
        hinge += float(np.sum(np.maximum(0.0, 1.0 - sign * f)))
        n += test.size
    return correct / n, hinge / n


def select_and_test(blocks, y_L, y_test, labels_per_class, Cs, cv_folds, seed):
    """Per label count: CV over (grid point, C), then the chosen SVM's test error (%).

    Parameters
    ----------
    blocks : list of (ndarray, ndarray)
        Per grid point ``(K(L, L), K(T, L))``, L in label order: ``max(labels_per_class)``
        rows of class 0, then as many of class 1.
    y_L, y_test : ndarray
        Labels (0/1) of L and of the test rows.
    labels_per_class : tuple of int
        The label counts ``l``; the labeled set of ``l`` is the first ``l`` rows of each class
        in L.
    Cs : tuple of float
    cv_folds : int
        Stratified folds (``min(cv_folds, l)`` for ``l`` labels per class), shuffled by
        ``seed``.

    Returns
    -------
    dict
        ``l`` -> {"grid_index", "C", "cv_accuracy", "cv_hinge", "test_error"}.  The highest
        CV accuracy wins; ties go to the lower mean hinge loss on the held-out labels, then to
        the first point in grid order (then C order).
    """
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    most = max(labels_per_class)
    out = {}
    for per_class in labels_per_class:
        rows = np.concatenate([np.arange(per_class), most + np.arange(per_class)])
        y = y_L[rows]
        k = min(cv_folds, per_class)
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        folds = list(splitter.split(np.zeros(rows.size), y))
        best = None
        for j, (G_LL, _) in enumerate(blocks):
            G = G_LL[np.ix_(rows, rows)]
            for C in Cs:
                acc, hinge = _cv_score(G, y, C, folds)
                key = (acc, -hinge)
                if best is None or key > best[0]:
                    best = (key, j, C)
        (acc, neg_hinge), j, C = best
        G_LL, G_TL = blocks[j]
        svc = SVC(kernel="precomputed", C=C).fit(G_LL[np.ix_(rows, rows)], y)
        error = 100.0 * float(np.mean(svc.predict(G_TL[:, rows]) != y_test))
        out[per_class] = {
            "grid_index": j,
            "C": C,
            "cv_accuracy": acc,
            "cv_hinge": -neg_hinge,
            "test_error": error,
            "cv_folds": k,
        }
    return out


def median_sigma(X) -> float:
    """σ₀: the median pairwise distance of (1,000 sampled rows of) ``X`` (seed 0)."""
    from semiscale.kernels import RBF

    gamma = RBF(gamma="median").resolve(X, random_state=0).gamma
    return float(np.sqrt(1.0 / (2.0 * gamma)))


def _todo(protocol, store, name, sizes):
    """(method, trials) whose label counts are not all recorded, planned by the protocol."""
    out = []
    for method in protocol.methods:
        planned = protocol.plan(method, name, sizes)[0]
        trials = [
            r
            for r in planned
            if not all(
                store.done(EXPERIMENT, name, method, r, setting(l))
                for l in protocol.labels_per_class
            )
        ]
        if trials:
            out.append((method, trials))
    return out


def _task_facts(protocol, store, ctx, name):
    """The task, its sizes record (written once) and σ₀; the task is loaded lazily."""
    rec = store.get(EXPERIMENT, name, "task")
    if rec is not None:
        return None, rec
    task = load_task(protocol, name, ctx.data_home)
    rec = store.put(EXPERIMENT, name, "task", **task.facts(), sigma0=median_sigma(task.X_train))
    return task, rec


def run_curves(bench, protocol, store, ctx) -> None:
    """Every (task, method, trial) whose label counts are not all recorded, recorded."""
    names = [n for n in ctx.datasets if protocol.dataset(n).source is not None]
    for name in names:
        task, facts = _task_facts(protocol, store, ctx, name)
        todo = _todo(protocol, store, name, sizes_of(protocol, facts))
        if not todo:
            continue
        if task is None:
            task = load_task(protocol, name, ctx.data_home)
        laplacian = None
        if any(method in GRAPH_METHODS for method, _ in todo):
            tic = time.perf_counter()
            graph = paper_graph(protocol).fit(task.X_train)
            laplacian = graph.laplacian_
            store.put(
                EXPERIMENT,
                name,
                "graph",
                graph_seconds=time.perf_counter() - tic,
                n_components=int(getattr(graph, "n_components_", 0) or 0),
                nnz=int(laplacian.nnz),
            )
        with ctx.fits(total=sum(len(trials) for _, trials in todo)) as bar:
            for method, trials in todo:
                bar.set_postfix_str(f"{name}: {method}", refresh=False)
                _run_method(bench, protocol, store, ctx, task, laplacian, facts, method, trials)
                bar.update(len(trials))


def _run_method(bench, protocol, store, ctx, task, laplacian, facts, method, trials):
    """The full kernel's trials together (one fit per grid point serves them all); the other
    methods' one at a time, so that an interrupted run keeps the trials it finished."""
    groups = [trials] if method == FULL else [[r] for r in trials]
    for group in groups:
        _run_trials(bench, protocol, store, ctx, task, laplacian, facts, method, group)


def _run_trials(bench, protocol, store, ctx, task, laplacian, facts, method, trials):
    most = max(protocol.labels_per_class)
    orders = [class_orders(task.y_train, most, r) for r in trials]
    trial_rows = [labeled_rows(o, most) for o in orders]
    try:
        blocks, seconds, solve = kernel_blocks(
            bench, protocol, method, task, laplacian, facts["sigma0"], trial_rows, trials
        )
    except Exception as exc:  # recorded, the run goes on
        for r in trials:
            for per_class in protocol.labels_per_class:
                store.put(
                    EXPERIMENT,
                    task.name,
                    method,
                    r,
                    setting(per_class),
                    error=f"{type(exc).__name__}: {exc}",
                )
        ctx.log(f"{task.name} {method}: {type(exc).__name__}: {exc}")
        return
    grid = protocol.grid(method, task.name)
    for t, r in enumerate(trials):
        tic = time.perf_counter()
        chosen = select_and_test(
            blocks[t],
            task.y_train[trial_rows[t]],
            task.y_test,
            protocol.labels_per_class,
            protocol.Cs,
            protocol.cv_folds,
            seed=r,
        )
        select_seconds = time.perf_counter() - tic
        for per_class, c in chosen.items():
            store.put(
                EXPERIMENT,
                task.name,
                method,
                r,
                setting(per_class),
                test_error=c["test_error"],
                params={**grid[c["grid_index"]], "C": c["C"]},
                cv_accuracy=c["cv_accuracy"],
                cv_hinge=c["cv_hinge"],
                cv_folds=c["cv_folds"],
                n_labeled=2 * per_class,
                kernel_seconds=seconds[t],
                select_seconds=select_seconds,
                solves=solve[t],
            )
        errors = ", ".join(f"{l}: {c['test_error']:.1f}" for l, c in chosen.items())
        ctx.log(f"{task.name} {method} trial {r}: error % by labels per class {{{errors}}}")
