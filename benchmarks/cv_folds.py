"""Does the bench's CV pick parameters that hold on the test split?  Folds and scoring compared.

Usage:

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets python benchmarks/cv_folds.py \
        [DATASET ...]        # default: madelon space_ga abalone phishing

Setting: ``semiscale bench nystrom``'s CV (repeat 0's training split, its full grid) run with
3, 5 and 10 folds, each scored two ways:

* *transductive* (the protocol until 2026-11-22): a fold's held-out labeled points stay in the
  fit as unlabeled graph nodes and are scored by ``transduction_``;
* *inductive*: they are removed from the fold's training points and graph, and scored by
  ``predict``, as the test split is.

For each variant it records the chosen LapRLS and RLS parameters, their CV RMSE, and the test
RMSE of Nyström-PCG and RLS-CG fitted with them, as the bench does, averaged over repeats 0-4
(for reading only: nothing is chosen on the test split).  This part runs the decade grid alone
(``cv_refine=False``), the protocol before 2026-11-22's second stage.

Then, on phishing only, a finer intrinsic_reg scan at gamma_median x 1, ambient_reg 1e-4 (the
parameters every variant above chose there): CV RMSE with 3, 5 and 10 folds and test RMSE
(mean over repeats 0-2) for intrinsic_reg in {0.3, 1, 3, 10, 30}, and RLS.
Writes ``benchmarks/results/cv_folds.{jsonl,md}``.
"""

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from semiscale.bench._nystrom_protocol import (
    Protocol,
    cross_validate,
    fit_nystrom_pcg,
    fit_rls,
    repeat_problem,
    rmse,
    write_jsonl,
)

RESULTS = Path(__file__).parent / "results"
DATASETS = ("madelon", "space_ga", "abalone", "phishing")
VARIANTS = ((3, False), (3, True), (5, False), (5, True), (10, True))
REPEATS = 5
SCAN = dict(gamma_factors=(1.0,), ambient_grid=(1e-4,), intrinsic_grid=(0.3, 1.0, 3.0, 10.0, 30.0))
SCAN_FOLDS = (3, 5, 10)
SCAN_REPEATS = 3


def _rls_test(problem, params, protocol):
    est, _ = fit_rls(problem, params, protocol)
    return rmse(est.predict(problem.split.X_test), problem.split.y_test)


def _test_errors(problems, params, protocol):
    """Mean test RMSE over ``problems`` of Nyström-PCG and RLS-CG, and PCG iterations."""
    lap, rls, iterations = [], [], []
    for problem in problems:
        est, _ = fit_nystrom_pcg(problem, params["laprls"], protocol)
        lap.append(rmse(est.predict(problem.split.X_test), problem.split.y_test))
        iterations.append(int(est.n_iter_))
        rls.append(_rls_test(problem, params["rls"], protocol))
    return float(np.mean(lap)), float(np.mean(rls)), int(np.median(iterations))


def _phishing_scan():
    """CV and test RMSE of each intrinsic_reg of ``SCAN`` (and RLS) on phishing."""
    problems = [repeat_problem("phishing", Protocol(), seed) for seed in range(SCAN_REPEATS)]
    cv = {}
    for folds in SCAN_FOLDS:
        protocol = replace(Protocol(), cv_folds=folds, cv_refine=False, **SCAN)
        cv[folds] = cross_validate("phishing", problems[0].split, protocol)
    params = cv[SCAN_FOLDS[0]]["params"]
    rows = []
    for k, point in enumerate(cv[SCAN_FOLDS[0]]["grid"]["laprls"]):
        lap = {key: point[key] for key in ("gamma", "ambient_reg", "intrinsic_reg")}
        test = []
        for problem in problems:
            est, _ = fit_nystrom_pcg(problem, lap, Protocol())
            test.append(rmse(est.predict(problem.split.X_test), problem.split.y_test))
        rows.append(
            dict(
                dataset="phishing",
                scan="intrinsic_reg",
                intrinsic_reg=point["intrinsic_reg"],
                cv_rmse={str(f): round(cv[f]["grid"]["laprls"][k]["cv_rmse"], 4) for f in cv},
                test_rmse=round(float(np.mean(test)), 4),
            )
        )
    rls_test = [_rls_test(problem, params["rls"], Protocol()) for problem in problems]
    rows.append(
        dict(
            dataset="phishing",
            scan="intrinsic_reg",
            intrinsic_reg=None,
            cv_rmse={str(f): round(cv[f]["cv_rmse"]["rls"], 4) for f in cv},
            test_rmse=round(float(np.mean(rls_test)), 4),
        )
    )
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def main(datasets):
    rows = []
    for name in datasets:
        problems = [repeat_problem(name, Protocol(), seed) for seed in range(REPEATS)]
        for folds, inductive in VARIANTS:
            protocol = replace(Protocol(), cv_folds=folds, cv_inductive=inductive, cv_refine=False)
            start = time.perf_counter()
            cv = cross_validate(name, problems[0].split, protocol)
            seconds = time.perf_counter() - start
            lap_test, rls_test, iterations = _test_errors(problems, cv["params"], protocol)
            lap, rls = cv["params"]["laprls"], cv["params"]["rls"]
            row = dict(
                dataset=name,
                folds=folds,
                scoring="inductive" if inductive else "transductive",
                gamma_factor=round(lap["gamma"] / cv["gamma_median"], 4),
                ambient_reg=lap["ambient_reg"],
                intrinsic_reg=lap["intrinsic_reg"],
                rls_gamma_factor=round(rls["gamma"] / cv["gamma_median"], 4),
                rls_ambient_reg=rls["ambient_reg"],
                cv_rmse_laprls=round(cv["cv_rmse"]["laprls"], 4),
                cv_rmse_rls=round(cv["cv_rmse"]["rls"], 4),
                test_rmse_nystrom_pcg=round(lap_test, 4),
                test_rmse_rls=round(rls_test, 4),
                pcg_iterations_median=iterations,
                cv_seconds=round(seconds, 1),
            )
            print(json.dumps(row), flush=True)
            rows.append(row)
    scan = _phishing_scan() if "phishing" in datasets else []
    write_jsonl(RESULTS / "cv_folds.jsonl", rows + scan)
    lines = [
        "# Bench CV: folds and scoring, against the test split",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        f"python benchmarks/cv_folds.py {' '.join(datasets)}`",
        "",
        "CV on repeat 0's training split with the bench's full grid. *transductive*: held-out "
        "labeled points stay in the graph, scored by `transduction_`; *inductive*: removed from "
        "the fold's points and graph, scored by `predict`. Test RMSE: Nyström-PCG and RLS-CG "
        f"with the chosen parameters, mean over repeats 0-{REPEATS - 1} (for reading only). "
        "Gamma as a factor of gamma_median.",
        "",
        "| dataset | folds | scoring | LapRLS gamma | ambient_reg | intrinsic_reg | RLS gamma | "
        "RLS ambient_reg | CV LapRLS | CV RLS | test Nyström-PCG | test RLS | PCG it. | "
        "CV s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['folds']} | {r['scoring']} | ×{r['gamma_factor']:g} | "
            f"{r['ambient_reg']:g} | {r['intrinsic_reg']:g} | ×{r['rls_gamma_factor']:g} | "
            f"{r['rls_ambient_reg']:g} | {r['cv_rmse_laprls']} | {r['cv_rmse_rls']} | "
            f"{r['test_rmse_nystrom_pcg']} | {r['test_rmse_rls']} | "
            f"{r['pcg_iterations_median']} | {r['cv_seconds']} |"
        )
    if scan:
        folds_cols = " | ".join(f"CV {k} folds" for k in SCAN_FOLDS)
        lines += [
            "",
            "## phishing: intrinsic_reg between the decades",
            "",
            "gamma_median × 1, ambient_reg 1e-4, CV scoring transductive. Test RMSE: "
            f"Nyström-PCG (RLS-CG for the last row), mean over repeats 0-{SCAN_REPEATS - 1}.",
            "",
            f"| intrinsic_reg | {folds_cols} | test |",
            "|---|" + "---|" * (len(SCAN_FOLDS) + 1),
        ]
        for r in scan:
            cv = " | ".join(str(r["cv_rmse"][str(k)]) for k in SCAN_FOLDS)
            label = "RLS" if r["intrinsic_reg"] is None else f"{r['intrinsic_reg']:g}"
            lines.append(f"| {label} | {cv} | {r['test_rmse']} |")
    (RESULTS / "cv_folds.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or DATASETS)
