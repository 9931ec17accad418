"""Does the Newton step fix t-BIF's choices? Paper 004's protocol with ``step="newton"`` (issue 14).

``semiscale bench paper004`` compares exact t-CV with the paper's first-order t-BIF.  This
study reruns the same searches -- the same standardized splits, 10 % labels, inductive folds,
3 x 3 grid and estimators (:mod:`semiscale.bench.paper004`) -- with
``BIFSearchCV(step="newton")``, each fold's own Hessian, under both Hessians: the Nyström one
(labeled points + ⌈√n⌉ columns) and the exact one.  Recorded per (dataset, repeat, t,
variant): the chosen point, its test error and the search's seconds; the report puts
paper004's records of exact t-CV and t-BIF (``--paper004``, default
``benchmarks/results/paper004/records.jsonl``) beside them.

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

DATASETS = ("fourclass", "housing", "german", "splice")
REPEATS = (0, 1, 2)
FOLDS = (5, 10, 20)
VARIANTS = {"Newton, Nyström": "nystrom", "Newton, exact Hessian": "exact"}
PAPER004 = Path("benchmarks/results/paper004/records.jsonl")


def run(records, save):
    from ..paper004 import METHODS, PROTOCOL, _data, chosen_test_error

    done = {(r["dataset"], r["repeat"], r["t"], r["variant"]) for r in records}
    for name in DATASETS:
        for r in REPEATS:
            split = None
            for t in FOLDS:
                for variant, hessian in VARIANTS.items():
                    if (name, r, t, variant) in done:
                        continue
                    if split is None:
                        split, observed, classification = _data(PROTOCOL, name, r, None)
                    search = METHODS.build(
                        "BIF", {"select": {"t": t}}, None, protocol=PROTOCOL, dataset=name, seed=r
                    )
                    search.set_params(step="newton", hessian=hessian)
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


def summarize(records, paper004=None):
    """Mean test error, median seconds and chosen points per (dataset, t, criterion)."""
    paper004 = _paper004_records() if paper004 is None else paper004
    rows = []
    criteria = ("t-CV", "t-BIF", *VARIANTS)
    for name in DATASETS:
        for t in FOLDS:
            row = {"dataset": name, "t": t}
            for criterion in criteria:
                if criterion in VARIANTS:
                    recs = [
                        r
                        for r in records
                        if (r["dataset"], r["t"], r["variant"]) == (name, t, criterion)
                        and "error" not in r
                    ]
                else:
                    recs = [
                        paper004[k] for k in paper004 if k[0] == name and k[2:] == (t, criterion)
                    ]
                if recs:
                    row[criterion] = {
                        "error": float(np.mean([r["test_error"] for r in recs])),
                        "seconds": float(np.median([r["seconds"] for r in recs])),
                        "repeats": len(recs),
                    }
            rows.append(row)
    return rows


def write_report(results, out):
    criteria = ("t-CV", "t-BIF", *VARIANTS)
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
        "on standardized targets), [median search seconds], (repeats):",
        "",
        "| dataset | t | " + " | ".join(criteria) + " |",
        "|---|---|" + "---|" * len(criteria),
    ]
    for row in results["summary"]:
        cells = []
        for criterion in criteria:
            c = row.get(criterion)
            cells.append(
                "/" if c is None else f"{c['error']:.4g} [{c['seconds']:.1f} s] ({c['repeats']})"
            )
        lines.append(f"| {row['dataset']} | {row['t']} | " + " | ".join(cells) + " |")
    (out / "README.md").write_text("\n".join(lines) + "\n")


def main(argv=None):
    run_study(argv, __doc__.split("\n")[0], (run,), summarize, write_report)


if __name__ == "__main__":
    main()
