"""Does the Newton step fix t-BIF's choices? Paper 004's protocol with ``step="newton"`` (issue 14).

``semiscale-bench paper004`` compares exact t-CV with the paper's first-order t-BIF.  This
study reruns the same searches -- the same standardized splits, 10 % labels, inductive folds,
3 x 3 grid and estimators (:mod:`semiscale_bench.paper004`) -- with
``BIFSearchCV(step="newton")``, each fold's own Hessian: one Newton step under both Hessians
(the Nyström one, labeled points + ⌈√n⌉ columns, and the exact one), and Newton iterated on
each fold-out objective with the Nyström Hessian (``max_newton_steps=20``, the default since
the iterations were added; the squared loss of the regression rows takes one step either
way).  Recorded per (dataset, repeat, t, variant): the chosen point, its test error and the
search's seconds; the report puts paper004's records of exact t-CV and t-BIF
(``benchmarks/results/paper004/records.jsonl``) beside them, with paper004's paired t-test
(two-sided, 95 %) of each criterion against t-CV on the repeats both have, and the same
PASS/FAIL reading of issue 14's "no significant difference" and "faster than t-CV" targets
for each criterion.  Every shared paper004 dataset but cpusmall (whose exact t-CV paper004
runs once, and whose exact Hessian is 5,734 x 5,734).

Issue 26 adds the column ``BIFSearchCV() default`` (``hessian="auto"``: the exact Hessian up
to 500 training points, here housing only, the Nyström one beyond) on ten repeats at t = 5 and
10, with exact t-CV run here on the seven repeats paper004 did not record (the ``t-CV`` column
merges both), and on paper004's three repeats at t = 20; and a speed benchmark, ``speed``:
exact t-CV against the default t-BIF on paper004's larger sets and on exact LapRLS with 1,000
points (:data:`SPEED_CASES`), in CPU seconds with one BLAS thread.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded searches are kept; the
speed part is the script ``benchmarks/scripts/bif_newton_speed.py``: it needs one BLAS thread
from the start of the process, and writes ``speed.json``, whose table the README shows)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench bif_newton \\
        --out benchmarks/results/bif_newton
    OPENBLAS_NUM_THREADS=1 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/scripts/bif_newton_speed.py --out benchmarks/results/bif_newton
    semiscale-bench bif_newton --render-only --out benchmarks/results/bif_newton
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np

from semiscale_bench.harness.study import (
    SHARED_MACHINE,
    Study,
    legacy_command,
    produced_by,
    write_readme,
)

DATASETS = ("a1a", "fourclass", "german", "madelon", "svmguide3", "splice")
DATASETS += ("abalone", "housing", "space_ga")
REPEATS = (0, 1, 2)
FOLDS = (5, 10, 20)
#: variant -> (Hessian, Newton iterations at most per fold-out objective): the two one-step
#: variants of the study's first runs, and the iterated Newton of ``BIFSearchCV()``'s defaults
#: (the losses' zones repeat, or 20 iterations).
VARIANTS = {
    "Newton, Nyström": ("nystrom", 1),
    "Newton, exact Hessian": ("exact", 1),
    "Newton iterated, Nyström": ("nystrom", 20),
    "BIFSearchCV() default": ("auto", 20),
}
#: The report's columns: paper004's two criteria, then this study's variants.
CRITERIA = ("t-CV", "t-BIF", *VARIANTS)
#: Issue 26: the default (``hessian="auto"``) against exact t-CV on ten repeats at t = 5 and 10,
#: exact t-CV run here on the repeats paper004 did not record (3, ..., 9); the default's t = 20
#: on paper004's three repeats.
EXTENDED_REPEATS = tuple(range(10))
EXTENDED_FOLDS = (5, 10)
DEFAULT = "BIFSearchCV() default"
#: This study's own exact t-CV records (the repeats paper004 lacks), merged with paper004's.
CV_VARIANT = "t-CV"
#: Significance level of the paired test (paper004's).
ALPHA = 0.05
PAPER004 = Path("benchmarks/results/paper004/records.jsonl")


def _plan():
    """(dataset, repeat, t, variant) in the order run: the first runs' cells, then issue 26's
    ten repeats (repeat by repeat, so that a cut run has whole repeats), then the default's
    other t on paper004's repeats."""
    first = [
        (name, r, t, variant)
        for name in DATASETS
        for r in REPEATS
        for t in FOLDS
        for variant in VARIANTS
        if variant != DEFAULT
    ]
    paper004 = _paper004_records()
    extended = []
    for r in EXTENDED_REPEATS:
        for name in DATASETS:
            for t in EXTENDED_FOLDS:
                extended.append((name, r, t, DEFAULT))
                if (name, r, t, "t-CV") not in paper004:
                    extended.append((name, r, t, CV_VARIANT))
    others = [
        (name, r, t, DEFAULT)
        for r in REPEATS
        for name in DATASETS
        for t in FOLDS
        if t not in EXTENDED_FOLDS
    ]
    return first + extended + others


def run(records, save):
    from semiscale_bench.paper004 import METHODS, PROTOCOL, _data, chosen_test_error

    done = {(r["dataset"], r["repeat"], r["t"], r["variant"]) for r in records}
    loaded = {}
    for name, r, t, variant in _plan():
        if (name, r, t, variant) in done:
            continue
        if (name, r) not in loaded:
            loaded.clear()
            loaded[(name, r)] = _data(PROTOCOL, name, r, None)
        split, observed, classification = loaded[(name, r)]
        method = "CV" if variant == CV_VARIANT else "BIF"
        search = METHODS.build(
            method, {"select": {"t": t}}, None, protocol=PROTOCOL, dataset=name, seed=r
        )
        if method == "BIF":
            hessian, max_newton_steps = VARIANTS[variant]
            search.set_params(step="newton", hessian=hessian, max_newton_steps=max_newton_steps)
        tic = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(split.X_train, observed)
        except ValueError as exc:  # e.g. too few labels of a class for t folds
            records.append(
                {
                    "dataset": name,
                    "repeat": r,
                    "t": t,
                    "variant": variant,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            )
            save()
            continue
        seconds = time.perf_counter() - tic
        error = chosen_test_error(search, split, classification)
        records.append(
            {
                "dataset": name,
                "repeat": r,
                "t": t,
                "variant": variant,
                "test_error": error,
                "seconds": seconds,
                "best_params": {k: float(v) for k, v in search.best_params_.items()},
            }
        )
        save()


def _paper004_records(path=PAPER004):
    """(dataset, repeat, t, "t-CV" | "t-BIF") -> record of paper004's run, where present."""
    out = {}
    if not Path(path).exists():
        return out
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        searched = rec.get("experiment") == "select" and rec.get("method") in ("CV", "BIF")
        if searched and "error" not in rec and rec.get("setting", "").startswith("t="):
            t = int(rec["setting"][2:])
            out[(rec["dataset"], rec["repeat"], t, f"t-{rec['method']}")] = rec
    return out


def _by_repeat(records, paper004, name, t, criterion):
    """repeat -> record of one criterion's searches on (dataset, t)."""
    own = {
        r["repeat"]: r
        for r in records
        if (r["dataset"], r["t"], r["variant"]) == (name, t, criterion) and "error" not in r
    }
    if criterion in VARIANTS:
        return own
    out = {k[1]: v for k, v in paper004.items() if k[0] == name and k[2:] == (t, criterion)}
    if criterion == CV_VARIANT:  # paper004's repeats, and this study's for the others
        out.update({r: rec for r, rec in own.items() if r not in out})
    return out


def summarize(records, paper004=None):
    """Per (dataset, t, criterion): mean test error, median seconds, repeats, and -- for every
    criterion but t-CV -- paper004's paired comparison with t-CV (:func:`~.paper004.report.
    compare`: p-value, and t-CV's median seconds on the shared repeats)."""
    from semiscale_bench.paper004.report import compare

    paper004 = _paper004_records() if paper004 is None else paper004
    rows = []
    for name in DATASETS:
        for t in FOLDS:
            row = {"dataset": name, "t": t}
            cv = _by_repeat(records, paper004, name, t, "t-CV")
            for criterion in CRITERIA:
                recs = _by_repeat(records, paper004, name, t, criterion)
                if not recs:
                    continue
                row[criterion] = {
                    "error": float(np.mean([r["test_error"] for r in recs.values()])),
                    "seconds": float(np.median([r["seconds"] for r in recs.values()])),
                    "repeats": len(recs),
                }
                if criterion != "t-CV":
                    c = compare(cv, recs)
                    if c:
                        row[criterion]["p"] = c["p"]
                        row[criterion]["speedup"] = c["cv_seconds"] / c["bif_seconds"]
            rows.append(row)
    return rows


def verdicts(summary):
    """criterion -> {"same": ..., "faster": ...}: issue 14's two targets against t-CV, each None
    (nothing paired) or ``(passed, datasets judged, cells that fail it)``; a (dataset, t) cell
    is judged on its paired repeats, "same" only where it has a p-value (two pairs or more)."""
    out = {}
    for criterion in CRITERIA[1:]:
        cells = [
            (f"{row['dataset']} t={row['t']}", row[criterion])
            for row in summary
            if "p" in row.get(criterion, {})
        ]
        judged = [(k, c) for k, c in cells if c["p"] is not None]
        differ = [f"{k} (p={c['p']:.2g})" for k, c in judged if c["p"] < ALPHA]
        slower = [f"{k} ({c['speedup']:.2g}x)" for k, c in cells if c["speedup"] <= 1.0]

        def names(pairs):
            return sorted({k.split(" ")[0] for k, _ in pairs})

        out[criterion] = {
            "same": (not differ, names(judged), differ) if judged else None,
            "faster": (not slower, names(cells), slower) if cells else None,
        }
    return out


def _cell(c):
    if c is None:
        return "/"
    text = f"{c['error']:.4g} [{c['seconds']:.1f} s] ({c['repeats']})"
    if c.get("p") is not None:
        text += f" p={c['p']:.2g}"
    return text


def write_report(results, out):
    criteria = CRITERIA
    lines = [
        "# t-BIF with Newton steps on paper 004's protocol (issue 14)",
        "",
        produced_by(
            results,
            legacy_command("bif_newton"),
            SHARED_MACHINE
            + " t-CV and t-BIF: paper004's records (`benchmarks/results/paper004/`).",
        ),
        "",
        "Test error of the chosen point, mean over repeats (classification: %; regression: MSE "
        "on standardized targets), [median search seconds], (repeats), and p of the paired "
        "t-test against t-CV on the shared repeats (two-sided; p < 0.05: the criteria differ):",
        "",
        "| dataset | t | " + " | ".join(criteria) + " |",
        "|---|---|" + "---|" * len(criteria),
    ]
    for row in results["summary"]:
        cells = [_cell(row.get(criterion)) for criterion in criteria]
        lines.append(f"| {row['dataset']} | {row['t']} | " + " | ".join(cells) + " |")
    lines += ["", "Issue 14's targets read for each criterion against t-CV:", ""]
    for criterion, v in verdicts(results["summary"]).items():
        for key, text in (
            ("same", "no significant difference in test error at any t"),
            ("faster", "faster than t-CV at every t"),
        ):
            if v[key] is None:
                lines.append(f"- {criterion}, {text}: not measured")
                continue
            passed, names, failing = v[key]
            verdict = "PASS" if passed else "FAIL: " + ", ".join(failing)
            lines.append(f"- {criterion}, {text}: **{verdict}** (judged: {', '.join(names)})")
    lines += _speed_lines(out)
    write_readme(out, lines)


#: Issue 26's speed cases: (name, dataset, training points or None for paper004's split,
#: folds "inductive" | "transductive", estimator "paper004" | "laprls").  paper004's larger
#: sets with its protocol, and exact LapRLS on 1,000 points of two regression sets with a
#: 27-point grid and BIFSearchCV's default (transductive) folds.
SPEED_CASES = (
    ("LapRLS abalone 1,000", "abalone", 1000, "transductive", "laprls"),
    ("space_ga", "space_ga", None, "inductive", "paper004"),
    ("abalone", "abalone", None, "inductive", "paper004"),
    ("a1a", "a1a", None, "inductive", "paper004"),
    ("madelon", "madelon", None, "inductive", "paper004"),
    ("LapRLS space_ga 1,000", "space_ga", 1000, "transductive", "laprls"),
)
SPEED_FOLDS = (10, 20)
#: Issue 26's target: t-BIF at least this fraction of the bound t (1 − 1/t)³ faster.
SPEED_FRACTION = 0.7
LEGACY_SPEED_COMMAND = (
    "OPENBLAS_NUM_THREADS=1 python -m semiscale.bench.studies.bif_newton speed --out "
    "benchmarks/results/bif_newton"
)


def _speed_searches(case, t, seed=0):
    """(exact t-CV search, default t-BIF search, X, y) of one speed case."""
    import dataclasses

    from semiscale.graph import KNNGraph
    from semiscale.kernels import RBF
    from semiscale.model_selection import BIFSearchCV, SSLKFold
    from semiscale.models import LapRLSRegressor
    from semiscale_bench.paper004 import METHODS, PROTOCOL, _data

    _, dataset, n, folds, kind = case
    protocol = PROTOCOL if n is None else dataclasses.replace(PROTOCOL, max_samples=int(n / 0.7))
    split, observed, _ = _data(protocol, dataset, seed, None)
    if kind == "paper004":
        cv, bif = (
            METHODS.build(
                m, {"select": {"t": t}}, None, protocol=PROTOCOL, dataset=dataset, seed=seed
            )
            for m in ("CV", "BIF")
        )
        bif.set_params(hessian="auto", step="newton", max_newton_steps=20)  # the defaults
        return cv, bif, split.X_train, observed
    est = LapRLSRegressor(kernel=RBF(gamma=1.0), graph=KNNGraph(n_neighbors=8, random_state=seed))
    grid = {
        "kernel__gamma": [1 / 2, 1 / 32, 1 / 512],
        "intrinsic_reg": [0.01, 1.0, 100.0],
        "ambient_reg": [1e-6, 1e-4, 1e-2],
    }
    splitter = SSLKFold(t, transductive=folds == "transductive", random_state=seed)
    common = {"cv": splitter, "scoring": "neg_mean_squared_error", "refit": False}
    cv = BIFSearchCV(est, grid, method="exact", **common)
    bif = BIFSearchCV(est, grid, random_state=seed, **common)
    return cv, bif, split.X_train, observed


def speed(out, command=None):
    """Time exact t-CV and the default t-BIF on :data:`SPEED_CASES` (one search each, repeat
    0), writing ``speed.json`` to ``out``; each row records ``command``."""
    import threadpoolctl

    path = Path(out) / "speed.json"
    rows = json.loads(path.read_text()) if path.exists() else []
    done = {(r["case"], r["t"]) for r in rows}
    for case in SPEED_CASES:
        for t in SPEED_FOLDS:
            if (case[0], t) in done:
                continue
            cv, bif, X, y = _speed_searches(case, t)
            seconds, cpu, chosen = {}, {}, {}
            for label, search in (("cv", cv), ("bif", bif)):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tic, cpu_tic = time.perf_counter(), time.process_time()
                    search.fit(X, y)
                    seconds[label] = time.perf_counter() - tic
                    cpu[label] = time.process_time() - cpu_tic
                chosen[label] = {k: float(v) for k, v in search.best_params_.items()}
            bound = t * (1 - 1 / t) ** 3
            rows.append(
                {
                    "case": case[0],
                    "t": t,
                    "n": int(X.shape[0]),
                    "folds": case[3],
                    "cv_seconds": seconds["cv"],
                    "bif_seconds": seconds["bif"],
                    "cv_cpu_seconds": cpu["cv"],
                    "bif_cpu_seconds": cpu["bif"],
                    "speedup": cpu["cv"] / cpu["bif"],
                    "wall_speedup": seconds["cv"] / seconds["bif"],
                    "bound": bound,
                    "target": SPEED_FRACTION * bound,
                    "same_choice": chosen["cv"] == chosen["bif"],
                    "command": command,
                    "blas_threads": [
                        info.get("num_threads") for info in threadpoolctl.threadpool_info()
                    ],
                }
            )
            path.write_text(json.dumps(rows, indent=1))
            print(rows[-1], flush=True)
    return rows


def _speed_command(rows) -> str:
    """The command of the speed rows (rows written before commands were recorded: theirs)."""
    commands = {r.get("command") or LEGACY_SPEED_COMMAND for r in rows}
    return "`, `".join(sorted(commands))


def _speed_lines(out):
    path = Path(out) / "speed.json"
    if not path.exists():
        return []
    rows = json.loads(path.read_text())
    lines = [
        "",
        "## Speed (issue 26)",
        "",
        f"`{_speed_command(rows)}` (one search each, repeat 0). CPU seconds (one BLAS "
        "thread, so that the CPU time is the work done whatever the load of the shared machine;"
        " wall seconds in `speed.json`) of exact t-CV and of `BIFSearchCV()`'s default t-BIF "
        "on the same grid and folds, with the same reuse (graphs, kernel widths and K(X, X) "
        "per kernel setting); target: t-CV / t-BIF at least 0.7 t (1 − 1/t)³:",
        "",
        "| case | n | folds | t | t-CV CPU s | t-BIF CPU s | speed-up | 0.7 × bound |"
        " same choice | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = "PASS" if r["speedup"] >= r["target"] else "FAIL"
        lines.append(
            f"| {r['case']} | {r['n']} | {r['folds']} | {r['t']} | {r['cv_cpu_seconds']:.1f} | "
            f"{r['bif_cpu_seconds']:.1f} | {r['speedup']:.1f}x | {r['target']:.1f}x | "
            f"{'yes' if r['same_choice'] else 'no'} | {verdict} |"
        )
    return lines


BENCHMARK = Study("bif_newton", (run,), summarize, write_report)
