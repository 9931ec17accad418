"""Does the Newton step fix t-BIF's choices? Paper 004's protocol with ``step="newton"`` (issue 14).

``semiscale bench paper004`` compares exact t-CV with the paper's first-order t-BIF.  This
study reruns the same searches -- the same standardized splits, 10 % labels, inductive folds,
3 x 3 grid and estimators (:mod:`semiscale.bench.paper004`) -- with
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

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded searches are kept)::

    SEMISCALE_DATA=/work/shared/datasets python -m semiscale.bench.studies.bif_newton \\
        --out benchmarks/results/bif_newton
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np

from ._resumable import run_study

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
}
#: The report's columns: paper004's two criteria, then this study's variants.
CRITERIA = ("t-CV", "t-BIF", *VARIANTS)
#: Significance level of the paired test (paper004's).
ALPHA = 0.05
PAPER004 = Path("benchmarks/results/paper004/records.jsonl")


def run(records, save):
    from ..paper004 import METHODS, PROTOCOL, _data, chosen_test_error

    done = {(r["dataset"], r["repeat"], r["t"], r["variant"]) for r in records}
    for name in DATASETS:
        for r in REPEATS:
            split = None
            for t in FOLDS:
                for variant, (hessian, max_newton_steps) in VARIANTS.items():
                    if (name, r, t, variant) in done:
                        continue
                    if split is None:
                        split, observed, classification = _data(PROTOCOL, name, r, None)
                    search = METHODS.build(
                        "BIF", {"select": {"t": t}}, None, protocol=PROTOCOL, dataset=name, seed=r
                    )
                    search.set_params(
                        step="newton", hessian=hessian, max_newton_steps=max_newton_steps
                    )
                    tic = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            search.fit(split.X_train, observed)
                    except ValueError as exc:  # e.g. too few labels of a class for t folds
                        records.append(
                            {"dataset": name, "repeat": r, "t": t, "variant": variant,
                             "error": f"{type(exc).__name__}: {exc}"}
                        )  # fmt: skip
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
    if criterion in VARIANTS:
        return {
            r["repeat"]: r
            for r in records
            if (r["dataset"], r["t"], r["variant"]) == (name, t, criterion) and "error" not in r
        }
    return {k[1]: v for k, v in paper004.items() if k[0] == name and k[2:] == (t, criterion)}


def summarize(records, paper004=None):
    """Per (dataset, t, criterion): mean test error, median seconds, repeats, and -- for every
    criterion but t-CV -- paper004's paired comparison with t-CV (:func:`~.paper004.report.
    compare`: p-value, and t-CV's median seconds on the shared repeats)."""
    from ..paper004.report import compare

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
        "Produced by `python -m semiscale.bench.studies.bif_newton --out "
        f"benchmarks/results/bif_newton` (commit {results['commit']}); protocol in that module's "
        f"docstring. Machine: {results['machine']['platform']}, Python "
        f"{results['machine']['python']} (2 cores, shared: seconds are indicative). t-CV and "
        "t-BIF: paper004's records (`benchmarks/results/paper004/`).",
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
        for key, text in (("same", "no significant difference in test error at any t"),
                          ("faster", "faster than t-CV at every t")):  # fmt: skip
            if v[key] is None:
                lines.append(f"- {criterion}, {text}: not measured")
                continue
            passed, names, failing = v[key]
            verdict = "PASS" if passed else "FAIL: " + ", ".join(failing)
            lines.append(f"- {criterion}, {text}: **{verdict}** (judged: {', '.join(names)})")
    (out / "README.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    run_study(argv, __doc__.split("\n")[0], (run,), summarize, write_report)


if __name__ == "__main__":
    main()
