"""The studies: the harness's driver of a study (``semiscale_bench.harness.study``), and the
studies' own summaries and reports on records made by hand."""

import json

import pytest

from semiscale_bench.harness import Study, run_benchmark


def _toy_study(calls):
    def run_fit(records, save):
        calls.append(("fit", len(records)))
        if not records:
            records.append({"fit": 1})
            save()

    def run_extra(records, save):
        calls.append(("extra", len(records)))

    def write_report(results, out):
        (out / "README.md").write_text(
            f"{len(results['records'])} records, summary {results['summary']}\n"
        )

    return Study(
        name="toy",
        steps=(run_fit, run_extra),
        summarize=lambda records: {"n": len(records)},
        write_report=write_report,
    )


def test_a_study_records_resumes_and_restarts_on_force(tmp_path):
    calls = []
    study = _toy_study(calls)
    paths = run_benchmark(study, out=tmp_path, command="semiscale-bench toy --out x")
    assert paths == [str(tmp_path / "results.json"), str(tmp_path / "README.md")]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["records"] == [{"fit": 1}] and saved["summary"] == {"n": 1}
    assert saved["command"] == "semiscale-bench toy --out x" and "platform" in saved["machine"]
    assert saved["commit"]
    assert (tmp_path / "README.md").read_text() == "1 records, summary {'n': 1}\n"
    run_benchmark(study, out=tmp_path)  # resumes: the step sees the recorded fit
    run_benchmark(study, out=tmp_path, force=True)  # starts again
    assert [n for step, n in calls if step == "fit"] == [0, 1, 0]


def test_a_study_skips_steps_by_name_and_renders_from_its_records_alone(tmp_path):
    calls = []
    study = _toy_study(calls)
    assert study.step_names == ["fit", "extra"]
    run_benchmark(study, out=tmp_path, skip=["extra"])
    assert calls == [("fit", 0)]
    (tmp_path / "README.md").unlink()
    before = (tmp_path / "results.json").read_text()
    assert run_benchmark(study, out=tmp_path, render_only=True) == [str(tmp_path / "README.md")]
    assert calls == [("fit", 0)]  # no step ran
    assert (tmp_path / "results.json").read_text() == before
    assert (tmp_path / "README.md").read_text().startswith("1 records")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"skip": ["fits"]}, "the steps of study 'toy' are ['fit', 'extra']"),
        ({"quick": True}, "toy is a study: it has no quick protocol"),
        ({"datasets": ["usps"]}, "toy is a study: it has no quick protocol and no --datasets"),
        ({"render_only": True}, "no records in"),
    ],
)
def test_a_study_refuses_what_it_cannot_do(tmp_path, kwargs, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message.replace("[", r"\[")):
        run_benchmark(_toy_study([]), out=tmp_path, **kwargs)


def test_kernel_floor_model_and_report(tmp_path):
    """The floor model of the kernel_floor study, by hand, and its PASS/FAIL report."""
    from semiscale_bench.studies import kernel_floor as kf

    floors = {
        "gemm_gflops": 100.0,
        "exp_per_s": 1e9,
        "exp32_per_s": 2e9,
        "exp32_on_float64_per_s": 1e9,
        "read_gb_per_s": 10.0,
        "cores": 2,
    }
    n, s, d, r, nnz = 1000, 100, 3, 2, 5000
    entries = n * s
    rest = (nnz * 12 + 2 * n * r * 8) / 1e10 + 2 * s * s * r / 1e11
    uncached = 2 * (2 * 5 * entries / 1e11 + entries / 1e9 + 2 * entries * r / 1e11) + rest
    assert kf.floor_seconds(floors, n, s, d, r, nnz, cached=False) == pytest.approx(uncached)
    cached = 2 * entries * 8 / 1e10 + rest
    assert kf.floor_seconds(floors, n, s, d, r, nnz, cached=True) == pytest.approx(cached)
    records = [{"kind": "floor", **floors}] + [
        {
            "kind": "product",
            "n": n,
            "s": s,
            "d": d,
            "r": cols,
            "cached": c,
            "nnz": nnz,
            "seconds": 1.0,
            "floor_seconds": 1.0 / ratio,
            "floor32_seconds": 0.4,
            "ratio": ratio,
            "blas_pass_seconds": 0.3 if c else None,
            "exp32_loop_seconds": None if c else 0.9,
        }
        for cols, c, ratio in ((1, False, 1.5), (1, True, 1.2), (10, True, 4.0))
    ]
    summary = kf.summarize(records)
    assert summary["single_column_pass"] and not summary["target_pass"]
    results = {"summary": summary, "commit": "abc", "machine": {"platform": "p", "python": "3"}}
    kf.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert text.count("| PASS |") == 2 and text.count("| FAIL |") == 1
    assert "all rows together: **FAIL**; H·α (r = 1): **PASS**" in text


def test_nystrom_span_summary_and_report(tmp_path):
    """Means, the not-converged flag and the table of the nystrom_span study, on made-up fits."""
    from semiscale_bench.studies import nystrom_span as ns

    default = next(iter(ns.VARIANTS))
    records = [
        {
            "dataset": "usps",
            "per_class": 1,
            "trial": t,
            "variant": default,
            "accuracy": acc,
            "seconds": sec,
            "converged": conv,
            "gamma": 0.1,
        }
        for t, (acc, sec, conv) in enumerate([(0.6, 1.0, True), (0.8, 3.0, False)])
    ]
    records.append(
        {
            "dataset": "mnist",
            "per_class": 3,
            "trial": 0,
            "variant": ns.LABEL_SPREADING,
            "accuracy": 0.5,
            "seconds": 2.0,
            "converged": None,
            "gamma": None,
        }
    )
    summary = ns.summarize(records)
    cell = next(s for s in summary if s["variant"] == default)
    assert cell["mean"] == pytest.approx(0.7) and cell["std"] == pytest.approx(0.1)
    assert cell["seconds"] == 2.0 and cell["trials"] == 2 and not cell["all_converged"]
    results = {"summary": summary, "commit": "abc", "machine": {"platform": "p", "python": "3"}}
    ns.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert f"| {default} | 70.0 ± 10.0 [2.0 s] (not converged) | — | — | — |" in text
    assert f"| {ns.LABEL_SPREADING} | — | — | — | 50.0 ± 0.0 [2.0 s] |" in text


def test_bif_interpolation_report(tmp_path):
    """The bif_interpolation study's table, on made-up records."""
    from semiscale_bench.studies import bif_interpolation as bi

    records = [
        {"model": "LapRLS", "criterion": "exact CV", "accuracy": 0.82, "seconds": 2.7},
        {"model": "LapRLS", "criterion": "bif, exact", "accuracy": 0.98256, "seconds": 0.8},
    ]
    results = {
        "summary": bi.summarize(records),
        "commit": "abc",
        "machine": {"platform": "p", "python": "3"},
    }
    bi.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| LapRLS | exact CV | 0.8200 | 2.7 |" in text
    assert "| LapRLS | bif, exact | 0.9826 | 0.8 |" in text


def test_bif_newton_summary_and_report(tmp_path):
    """The bif_newton study's table beside paper004's records, with the paired test against
    t-CV and the targets' verdicts, on made-up records."""
    from semiscale_bench.studies import bif_newton as bn

    records = [
        {
            "dataset": "housing",
            "repeat": r,
            "t": 5,
            "variant": "Newton, exact Hessian",
            "test_error": 0.3 + 0.1 * r,
            "seconds": 2.0,
            "best_params": {},
        }
        for r in range(2)
    ]
    paper004 = {("housing", 0, 5, "t-CV"): {"test_error": 0.25, "seconds": 1.5, "best_params": {}}}
    summary = bn.summarize(records, paper004)
    row = next(r for r in summary if (r["dataset"], r["t"]) == ("housing", 5))
    assert row["Newton, exact Hessian"] == {
        "error": pytest.approx(0.35),
        "seconds": 2.0,
        "repeats": 2,
        "p": None,  # one paired repeat: no test
        "speedup": pytest.approx(0.75),
    }
    assert row["t-CV"]["repeats"] == 1 and "t-BIF" not in row
    results = {"summary": summary, "commit": "abc", "machine": {"platform": "p", "python": "3"}}
    bn.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| housing | 5 | 0.25 [1.5 s] (1) | / | / | 0.35 [2.0 s] (2) |" in text
    assert "- Newton, exact Hessian, faster than t-CV at every t: **FAIL: housing t=5" in text
    assert (
        "- Newton, exact Hessian, no significant difference in test error at any t: "
        "not measured" in text
    )
    assert "- Newton, Nyström, faster than t-CV at every t: not measured" in text

    # Three paired repeats: one criterion far off t-CV (differs), one equal (the same).
    paper004 = {
        ("splice", r, 10, "t-CV"): {"test_error": 20.0 + r, "seconds": 10.0, "best_params": {}}
        for r in range(3)
    }
    paper004 |= {
        ("splice", r, 10, "t-BIF"): {
            "test_error": 50.0 + r + 0.1 * r * r,
            "seconds": 2.0,
            "best_params": {},
        }
        for r in range(3)
    }
    records = [
        {
            "dataset": "splice",
            "repeat": r,
            "t": 10,
            "variant": "Newton, exact Hessian",
            "test_error": 20.0 + r,
            "seconds": 4.0,
            "best_params": {},
        }
        for r in range(3)
    ]
    summary = bn.summarize(records, paper004)
    row = next(r for r in summary if (r["dataset"], r["t"]) == ("splice", 10))
    assert row["t-BIF"]["p"] < 0.05 and row["t-BIF"]["speedup"] == pytest.approx(5.0)
    assert row["Newton, exact Hessian"]["p"] == 1.0
    v = bn.verdicts(summary)
    assert v["t-BIF"]["same"][0] is False and v["t-BIF"]["same"][2][0].startswith("splice t=10")
    assert v["t-BIF"]["faster"] == (True, ["splice"], [])
    assert v["Newton, exact Hessian"]["same"] == (True, ["splice"], [])
    assert v["Newton, Nyström"] == {"same": None, "faster": None}


def test_lapsvm_scale_report(tmp_path):
    """The lapsvm_scale study's table and target verdicts, on made-up records."""
    from semiscale_bench.studies import lapsvm_scale as ls

    records = [
        {
            "method": "NystromLapSVC()",
            "n": ls.TARGET_N,
            "n_labeled": 500,
            "seconds": 12.5,
            "accuracy": 0.81,
            "newton_iterations": [4],
        },
        {
            "method": "NystromLapSVC(loss='huber_hinge')",
            "n": ls.TARGET_N,
            "n_labeled": 500,
            "seconds": 75.0,
            "accuracy": 0.8,
            "newton_iterations": [30],
        },
        {
            "method": "LapSVC(solver='primal')",
            "n": ls.TARGET_N,
            "n_labeled": 500,
            "skipped": "n > 10000: O(n³) Newton steps (see the docstring)",
        },
    ]
    results = {"summary": records, "commit": "abc", "machine": {"platform": "p", "python": "3"}}
    ls.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| NystromLapSVC() | 48,842 | 81.00 % | 12.5 | 4 | |" in text
    assert "- NystromLapSVC(): **PASS** (12.5 s)" in text
    assert "- NystromLapSVC(loss='huber_hinge'): **FAIL** (75.0 s)" in text
    assert "- LapSVC(solver='primal'): **not measured** (n > 10000" in text


def test_lapsvm_newton_summary_and_report(tmp_path):
    """The lapsvm_newton study's medians, same-point speed-ups and table, on made-up records."""
    from semiscale_bench.studies import lapsvm_newton as ln

    def record(variant, sigma, seconds, steps, converged=True, difference=0.0):
        return {
            "dataset": "fourclass",
            "n": 603,
            "sigma": sigma,
            "intrinsic_reg": 1.0,
            "variant": variant,
            "seconds": seconds,
            "newton_iterations": steps,
            "converged": converged,
            "decision_difference": difference,
        }

    records = [
        record("before", 1.0, 8.0, 50, converged=False),
        record("before", 16.0, 2.0, 20),
        record("continuation + shared LU", 1.0, 1.0, 20, difference=1e-3),
        record("continuation + shared LU", 16.0, 1.0, 10, difference=1e-12),
    ]
    (row,) = ln.summarize(records)
    fast = row["continuation + shared LU"]
    assert fast["median_speedup"] == pytest.approx(5.0)  # median of 8x and 2x
    assert fast["max_difference"] == 1e-3 and fast["not_converged"] == 0
    assert row["before"]["not_converged"] == 1 and "continuation" not in row
    results = {"summary": [row], "commit": "abc", "machine": {"platform": "p", "python": "3"}}
    ln.write_report(results, tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| fourclass | 603 | before | 5.000 | 10.0 | 35 (50) | 1 / 2 | 1.00× | 0.0e+00 |" in text
    assert "| continuation + shared LU | 1.000 | 2.0 | 15 (20) | 0 / 2 | 5.00× | 1.0e-03 |" in text


def test_auto_intrinsic_reg_summary_and_report(tmp_path):
    from semiscale_bench.studies import auto_intrinsic_reg as study

    records = [
        {
            "dataset": "usps",
            "estimator": "LapRLS (exact)",
            "factor": c,
            "per_class": 1,
            "trial": t,
            "accuracy": acc,
        }
        for c, accs in ((0.01, (0.7, 0.8)), (1.0, (0.9, 0.95)))
        for t, acc in enumerate(accs)
    ]
    summary = study.summarize(records)
    means = {s["factor"]: s["mean"] for s in summary}
    assert means == pytest.approx({0.01: 0.75, 1.0: 0.925})
    study.write_report(
        {"commit": "abc", "machine": {"platform": "p", "python": "3"}, "summary": summary}, tmp_path
    )
    row = next(
        line
        for line in (tmp_path / "README.md").read_text().splitlines()
        if line.startswith("| usps | LapRLS (exact) | 1 |")
    )
    # the best factor is bold, the others plain, unmeasured ones a dash
    assert "| 75.0 ± 5.0 | — | **92.5 ± 2.5** | — |" in row


def test_the_study_helpers_group_resume_and_name_the_command(tmp_path):
    """group_stats, recorded, produced_by and write_readme: what every study's report uses."""
    from semiscale_bench.harness.study import (
        DATA,
        SHARED_MACHINE,
        group_stats,
        legacy_command,
        produced_by,
        recorded,
        write_readme,
    )

    records = [
        {"d": "a", "t": 0, "accuracy": 0.6, "seconds": 1.0},
        {"d": "a", "t": 1, "accuracy": 0.8, "seconds": 5.0},
        {"d": "b", "t": 0, "accuracy": 0.5, "seconds": 2.0},
        {"kind": "stats", "d": "a"},
    ]
    fits = [r for r in records if "t" in r]
    rows = group_stats(fits, ("d",), medians=("seconds",), more=lambda g: {"n": len(g)})
    assert [list(r) for r in rows] == [["d", "trials", "mean", "std", "seconds", "n"]] * 2
    assert rows[0]["mean"] == pytest.approx(0.7) and rows[0]["std"] == pytest.approx(0.1)
    assert rows[0]["seconds"] == 3.0 and rows[1]["trials"] == 1 and rows[0]["n"] == 2
    only_b = group_stats(records, ("d",), count="draws", where=lambda r: r.get("d") == "b")
    assert only_b == [{"d": "b", "draws": 1, "mean": 0.5, "std": 0.0}]
    assert recorded(records, ("d", "t"), where=lambda r: "t" in r) == {("a", 0), ("a", 1), ("b", 0)}

    legacy = legacy_command("toy", DATA)
    assert legacy == (
        "SEMISCALE_DATA=/work/shared/datasets python -m semiscale.bench.studies.toy"
        " --out benchmarks/results/toy"
    )
    results = {"commit": "abc", "machine": {"platform": "p", "python": "3"}}
    assert produced_by(results, legacy) == (
        f"Produced by `{legacy}` (commit abc); protocol in that module's docstring. "
        "Machine: p, Python 3."
    )
    line = produced_by({**results, "command": "semiscale-bench toy"}, legacy, SHARED_MACHINE)
    assert line.startswith("Produced by `semiscale-bench toy` (commit abc)")
    assert line.endswith("Python 3 (2 cores, shared: seconds are indicative).")
    write_readme(tmp_path, ["# toy", "", line])
    assert (tmp_path / "README.md").read_text() == f"# toy\n\n{line}\n"


def test_the_two_moons_label_draws_of_the_studies():
    """The first point of each class (paper 001's draw), or one random point of each class."""
    import numpy as np

    from semiscale_bench.studies._common import first_of_each_class, one_label_per_class

    y = np.array([1, 1, 0, 1, 0, 0])
    labeled, observed = first_of_each_class(y)
    assert labeled.tolist() == [2, 0]  # in class order
    assert observed.tolist() == [1, -1, 0, -1, -1, -1]
    drawn = one_label_per_class(y, np.random.default_rng(0))
    assert sorted(drawn[drawn != -1].tolist()) == [0, 1]
    assert all(drawn[i] == y[i] for i in np.flatnonzero(drawn != -1))


def test_fit_pool_variants_records_each_fit_once_and_resumes():
    """The inductive studies' loop: one record per key, the graph passed only where asked."""
    from sklearn.semi_supervised import LabelSpreading

    from semiscale_bench.studies._common import fit_pool_variants

    given = []

    class Spy(LabelSpreading):
        def fit(self, X, y, laplacian=None):
            given.append(laplacian is not None)
            return super().fit(X, y)

    def make(variant, trial):
        return Spy(kernel="knn", n_neighbors=10)

    records, saves = [], []
    options = dict(
        datasets=("two_moons",),
        per_class=(1,),
        trials=2,
        variants=("plain", "graph"),
        make_estimator=make,
        facts=lambda model: {"converged": None},
        graph=lambda variant: variant == "graph",
    )
    fit_pool_variants(records, lambda: saves.append(1), **options)
    assert [(r["trial"], r["variant"]) for r in records] == [
        (0, "plain"),
        (0, "graph"),
        (1, "plain"),
        (1, "graph"),
    ]
    assert given == [False, True, False, True] and len(saves) == 4
    assert all(0.5 <= r["accuracy"] <= 1 and r["converged"] is None for r in records)
    fit_pool_variants(records, lambda: saves.append(1), **options)  # all recorded: no fit
    assert len(records) == 4 and len(given) == 4
