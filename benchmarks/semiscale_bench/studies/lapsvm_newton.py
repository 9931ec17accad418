"""The Huber-hinge primal LapSVM's Newton solve, before and after its two speed-ups (issue 13/14).

Paper 004's classification searches fit ``LapSVC(formulation="primal", loss="huber_hinge")`` (h =
0.01) at every grid point and fold.  Two changes to the exact primal's Newton solve are timed
here against the solve they replaced, in the same process (same data, graph and kernel):

- ``"before"``: Newton from f = 0 on the Huber hinge itself, a dense LU of the n × n system
  per step (the solver until commit 767479f);
- ``"continuation"``: Newton on the widths 1, 0.1, 0.01 in turn
  (:meth:`semiscale.losses.HuberHingeLoss.continuation`), a dense LU per step;
- ``"continuation + shared LU"`` (the current solver): the steps share one LU of
  B₀ = λ_A I + λ_I L K and solve by Woodbury on the active labeled rows
  (``semiscale.solvers.exact._ActiveSetFactor``).

Protocol: paper 004's repeat-0 split of each dataset (``make_split(X, y, 0, 0.7, 0.1,
scaler=standard_scaler)``, classes coded 0/1), its graph (``KNNGraph(n_neighbors=8,
weights="heat")`` on the training points, built once and passed as ``laplacian``) and its
3 × 3 grid (σ ∈ {1, 16, 256}, ``RBF(gamma=1/(2σ))``; ``intrinsic_reg`` ∈ {0.01, 1, 100};
``ambient_reg=1e-4``).  One fit per (dataset, grid point, variant), the variants in turn at each
grid point.  Recorded: fit seconds, Newton steps, whether Newton converged, and the largest
decision difference from ``"before"`` relative to its largest decision.

Run (writes ``results.json`` and ``README.md`` to ``--out``; recorded fits are kept)::

    SEMISCALE_DATA=/work/shared/datasets semiscale-bench lapsvm_newton \\
        --out benchmarks/results/lapsvm_newton
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np

from semiscale_bench.harness.study import DATA, Study, legacy_command, produced_by, write_readme

DATASETS = ("fourclass", "german.numer", "splice", "svmguide3", "a1a", "madelon")
SIGMAS = (1.0, 16.0, 256.0)
INTRINSIC = (0.01, 1.0, 100.0)
VARIANTS = ("before", "continuation", "continuation + shared LU")


def _problem(dataset):
    from semiscale.graph import KNNGraph
    from semiscale_bench.harness import load_dense, make_split
    from semiscale_bench.harness.data import standard_scaler

    X, y = load_dense(dataset)
    y = (y > np.min(y)).astype(np.float64)
    split = make_split(X, y, 0, 0.7, 0.1, scaler=standard_scaler)
    observed = np.where(np.isnan(split.y_observed), -1, split.y_observed).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        L = KNNGraph(n_neighbors=8, weights="heat", random_state=0).fit(split.X_train).laplacian_
    return split.X_train, observed, L


@contextlib.contextmanager
def _variant(name):
    """The solver of ``name``: the current one, or with its speed-ups switched off."""
    from semiscale import losses
    from semiscale.solvers import exact

    saved = (losses.HuberHingeLoss.continuation, exact._solve_active_set)
    try:
        if name == "before":
            losses.HuberHingeLoss.continuation = lambda self: [self]
        if name != "continuation + shared LU":
            exact._solve_active_set = lambda *args: None
        yield
    finally:
        losses.HuberHingeLoss.continuation, exact._solve_active_set = saved


def run(records, save):
    from sklearn.exceptions import ConvergenceWarning

    from semiscale.kernels import RBF
    from semiscale.models import LapSVC

    done = {(r["dataset"], r["sigma"], r["intrinsic_reg"], r["variant"]) for r in records}
    for dataset in DATASETS:
        X, y, L = None, None, None
        for sigma in SIGMAS:
            for intrinsic in INTRINSIC:
                reference = None
                for variant in VARIANTS:
                    key = (dataset, sigma, intrinsic, variant)
                    if key in done and variant != "before":
                        continue
                    if X is None:
                        X, y, L = _problem(dataset)
                    model = LapSVC(
                        formulation="primal",
                        loss="huber_hinge",
                        kernel=RBF(gamma=1 / (2 * sigma)),
                        ambient_reg=1e-4,
                        intrinsic_reg=intrinsic,
                    )
                    with _variant(variant), warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        tic = time.perf_counter()
                        model.fit(X, y, laplacian=L)
                        seconds = time.perf_counter() - tic
                    f = model.decision_function(X)
                    if variant == "before":
                        reference = f
                        if key in done:
                            continue
                    records.append(
                        {
                            "dataset": dataset,
                            "n": int(X.shape[0]),
                            "sigma": sigma,
                            "intrinsic_reg": intrinsic,
                            "variant": variant,
                            "seconds": seconds,
                            "newton_iterations": int(model.solver_info_["newton_iterations"][0]),
                            "converged": not any(
                                issubclass(w.category, ConvergenceWarning) for w in caught
                            ),
                            "decision_difference": float(
                                np.abs(f - reference).max() / max(np.abs(reference).max(), 1e-300)
                            ),
                        }
                    )
                    save()


def summarize(records):
    rows = []
    for dataset in DATASETS:
        mine = [r for r in records if r["dataset"] == dataset]
        if not mine:
            continue
        row = {"dataset": dataset, "n": mine[0]["n"]}
        before = {(r["sigma"], r["intrinsic_reg"]): r for r in mine if r["variant"] == "before"}
        for variant in VARIANTS:
            fits = [r for r in mine if r["variant"] == variant]
            if not fits:
                continue
            ratios = [
                before[(r["sigma"], r["intrinsic_reg"])]["seconds"] / r["seconds"]
                for r in fits
                if (r["sigma"], r["intrinsic_reg"]) in before
            ]
            row[variant] = {
                "fits": len(fits),
                "median_seconds": float(np.median([r["seconds"] for r in fits])),
                "total_seconds": float(np.sum([r["seconds"] for r in fits])),
                "median_steps": float(np.median([r["newton_iterations"] for r in fits])),
                "max_steps": int(max(r["newton_iterations"] for r in fits)),
                "not_converged": int(sum(not r["converged"] for r in fits)),
                "median_speedup": float(np.median(ratios)) if ratios else None,
                "max_difference": float(max(r["decision_difference"] for r in fits)),
            }
        rows.append(row)
    return rows


def write_report(results, out):
    lines = [
        "# The Huber-hinge LapSVM's Newton solve, before and after its speed-ups",
        "",
        produced_by(
            results,
            legacy_command("lapsvm_newton", DATA),
            " (2 cores, shared: seconds are indicative; the variants alternate at each grid "
            "point).",
        ),
        "",
        "Per dataset, over the 9 grid points: median fit seconds, median (max) Newton steps, "
        "fits that hit the Newton cap (50 steps), median same-point speed-up over `before`, and "
        "the largest decision difference from `before` relative to its largest decision.",
        "",
        "| dataset | n | variant | median s | total s | Newton steps | not converged | "
        "speed-up | max difference |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["summary"]:
        for variant in VARIANTS:
            v = row.get(variant)
            if not v:
                continue
            speedup = "" if v["median_speedup"] is None else f"{v['median_speedup']:.2f}×"
            lines.append(
                f"| {row['dataset']} | {row['n']:,} | {variant} | {v['median_seconds']:.3f} | "
                f"{v['total_seconds']:.1f} | {v['median_steps']:g} ({v['max_steps']}) | "
                f"{v['not_converged']} / {v['fits']} | {speedup} | {v['max_difference']:.1e} |"
            )
    write_readme(out, lines)


BENCHMARK = Study("lapsvm_newton", (run,), summarize, write_report)
