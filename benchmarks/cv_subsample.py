"""Does CV on a training subsample choose what CV on the whole training split chooses? (a8a)

Usage:

    OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets python benchmarks/cv_subsample.py

Setting: repeat 0 of ``semiscale bench nystrom``'s protocol on a8a (15,887 training points),
its CV routine (3 folds over the labeled points of a random subsample, graph and
gamma_median of that subsample) on a reduced grid: gamma = gamma_median x {1/16, 1/4},
ambient_reg 1e-4, intrinsic_reg in {1e-3, 0.1, 1, 10, 100}, with a 4,000-point subsample (the
protocol until 2026-11-22) and with the whole split.  For every grid point it also fits
Nyström-PCG (and RLS-CG) on the whole training split and scores the test split: the test
column is for reading only, nothing is chosen on it.  Writes
``benchmarks/results/cv_subsample.{jsonl,md}``.
"""

import json
from dataclasses import replace
from pathlib import Path

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
GRID = dict(gamma_factors=(0.0625, 0.25), ambient_grid=(1e-4,))
INTRINSIC = (1e-3, 0.1, 1.0, 10.0, 100.0)


def _rls_test(problem, params, protocol):
    est, _ = fit_rls(problem, params, protocol)
    return rmse(est.predict(problem.split.X_test), problem.split.y_test)


def main():
    rows = []
    for cv_max in (4000, 16000):
        protocol = replace(Protocol(), cv_max_samples=cv_max, intrinsic_grid=INTRINSIC, **GRID)
        problem = repeat_problem("a8a", protocol)
        cv = cross_validate("a8a", problem.split, protocol)
        for model, grid in cv["grid"].items():
            for point in grid:
                params = {k: v for k, v in point.items() if k != "cv_rmse"}
                if model == "laprls":
                    est, _ = fit_nystrom_pcg(problem, params, protocol)
                    test = rmse(est.predict(problem.split.X_test), problem.split.y_test)
                else:
                    test = _rls_test(problem, params, protocol)
                row = dict(
                    cv_points=cv["n_sub"],
                    model=model,
                    gamma_factor=round(point["gamma"] / cv["gamma_median"], 4),
                    intrinsic_reg=point.get("intrinsic_reg"),
                    cv_rmse=round(point["cv_rmse"], 4),
                    test_rmse=round(test, 4),
                    chosen=params == cv["params"][model],
                )
                print(json.dumps(row), flush=True)
                rows.append(row)
    write_jsonl(RESULTS / "cv_subsample.jsonl", rows)
    lines = [
        "# a8a: CV on a 4,000-point subsample vs on the whole training split",
        "",
        "Command: `OPENBLAS_NUM_THREADS=2 SEMISCALE_DATA=/work/shared/datasets "
        "python benchmarks/cv_subsample.py`",
        "",
        "Repeat 0; grid gamma_median × {1/16, 1/4} (each CV's own gamma_median), ambient_reg "
        "1e-4. `chosen` = the CV's pick for that model. Test RMSE: the model fitted on the "
        "whole training split (for reading only).",
        "",
        "| CV points | model | gamma factor | intrinsic_reg | CV RMSE | test RMSE | chosen |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        intrinsic = "—" if r["intrinsic_reg"] is None else f"{r['intrinsic_reg']:g}"
        lines.append(
            f"| {r['cv_points']} | {r['model']} | {r['gamma_factor']:g} | {intrinsic} | "
            f"{r['cv_rmse']} | {r['test_rmse']} | {'**yes**' if r['chosen'] else ''} |"
        )
    (RESULTS / "cv_subsample.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
