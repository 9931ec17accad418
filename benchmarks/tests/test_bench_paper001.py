"""Paper 001 on the harness: quick runs, the isolated child fit, the targets' verdicts."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from semiscale_bench.cli import main
from semiscale_bench.harness import CATALOG, RecordStore, load_benchmark, run_benchmark
from semiscale_bench.harness.curves import fit_in_child
from semiscale_bench.paper001 import BENCHMARK, PROTOCOL, QUICK
from semiscale_bench.paper001.data import digit_problem, labeled_rows, plan_sizes
from semiscale_bench.paper001.protocol import LAPSVM, NYSTROM, REDUCED, SLAPCVM, SLAPCVM_PAPER
from semiscale_bench.paper001.report import render
from semiscale_bench.paper001.targets import Verdict, judge, target_lines

ROOT = Path(__file__).resolve().parents[2]
SHARED = next(
    (p for p in (ROOT / "shared" / "datasets", ROOT.parent / "shared" / "datasets") if p.is_dir()),
    None,
)
TUNED = {m: {"ambient_reg": 1e-6, "intrinsic_reg": "auto"} for m in (LAPSVM, REDUCED, NYSTROM)}


def _records(folder):
    return [json.loads(line) for line in (Path(folder) / "records.jsonl").read_text().splitlines()]


def test_registered_and_capped_with_reasons():
    assert "paper001" in CATALOG and load_benchmark("paper001") is BENCHMARK
    assert QUICK.quick and QUICK.digest() != PROTOCOL.digest()
    plan = PROTOCOL.plan(LAPSVM, "two moons", plan_sizes(PROTOCOL, "two moons", 10_000))
    assert plan[0] == [] and "n_train > 5,000" in plan[1]
    assert PROTOCOL.plan(LAPSVM, "two moons", plan_sizes(PROTOCOL, "two moons", 3_000))[0]
    plan = PROTOCOL.plan(SLAPCVM, "two moons", plan_sizes(PROTOCOL, "two moons", 3_000))
    assert plan[0] == [] and "229 s" in plan[1]
    assert PROTOCOL.plan(SLAPCVM_PAPER, "two moons", plan_sizes(PROTOCOL, "two moons", 10**6))[0]
    assert max(PROTOCOL.moons_sizes) == 1_000_000 and PROTOCOL.isolate
    assert PROTOCOL.dataset("extended MIT face").source is None


def test_digit_problems_are_nested_with_the_same_labels_at_every_size():
    rng = np.random.default_rng(0)
    pool = (rng.random((400, 5)), rng.integers(1, 3, 400), rng.random((20, 5)), np.ones(20))
    small = digit_problem(PROTOCOL, "usps", pool, 100, graph=False)
    large = digit_problem(PROTOCOL, "usps", pool, 300, graph=False)
    np.testing.assert_array_equal(large.X_train[:102], small.X_train)
    for r in range(3):
        a = labeled_rows(PROTOCOL, "usps", small.y_train, r)
        np.testing.assert_array_equal(a, labeled_rows(PROTOCOL, "usps", large.y_train, r))
        assert sorted(small.y_train[a]) == [1, 2]
    with pytest.raises(ValueError, match="pool has 400"):
        digit_problem(PROTOCOL, "usps", pool, 399, graph=False)


def test_quick_moons_run_resumes_and_reports(tmp_path):
    out = tmp_path / "q"
    run_benchmark(BENCHMARK, quick=True, out=out, datasets=["two moons"], verbose=0)
    fits = [r for r in _records(out) if r["experiment"] == "fig1"]
    assert len(fits) == len(QUICK.moons_sizes) * len(QUICK.methods)
    for r in fits:
        assert "error" not in r, r
        assert 0 <= r["accuracy"] <= 1 and r["graph_seconds"] >= 0 and r["expansions"] >= 1
        assert r["isolated"] is False
    assert {r["expansions"] for r in fits if r["method"] == LAPSVM} == {102, 302}
    summary = (out / "summary.md").read_text()
    assert "QUICK MODE" in summary and "**not measured**: u = 1,000,000 is not in" in summary
    assert "| 300 | 302 |" in (out / "fig1.md").read_text()
    run_benchmark(BENCHMARK, quick=True, out=out, datasets=["two moons"], verbose=0)
    assert len(_records(out)) == len(fits) + 1  # nothing refitted (+ the validation record)


def test_a_child_process_fits_one_moons_problem():
    rec = fit_in_child(BENCHMARK, QUICK, "two moons", SLAPCVM_PAPER, 200, 1, TUNED)
    assert rec["isolated"] is True and rec["n_train"] == 202 and rec["labeled"] == [0, 1]
    assert rec["max_rss_bytes"] >= rec["max_rss_before_fit_bytes"] > 0
    assert 0 < rec["expansions"] < 202 and 0.5 < rec["accuracy"] <= 1
    failed = fit_in_child(
        BENCHMARK, QUICK, "two moons", NYSTROM, 50, 0, {}
    )  # no tuned parameters: the child fails
    assert "error" in failed and "KeyError" in failed["error"]


@pytest.mark.skipif(SHARED is None, reason="shared dataset folder not present")
def test_quick_run_of_every_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISCALE_DATA", str(SHARED))
    assert main(["paper001", "--quick", "--out", str(tmp_path), "-q"]) == 0
    records = _records(tmp_path)
    for name, sizes in (("usps", QUICK.usps_sizes), ("extended usps", QUICK.extended_sizes)):
        fits = [r for r in records if r["experiment"] == "fig2" and r["dataset"] == name]
        assert len(fits) == len(sizes) * len(QUICK.methods)
        assert all("error" not in r and r["d"] == 256 for r in fits)
    for name in ("fig1.md", "fig2.md", "summary.md", "fig1.png", "fig2.png"):
        assert (tmp_path / name).stat().st_size > 100, name
    summary = (tmp_path / "summary.md").read_text()
    assert "extended MIT face: not available" in summary and "map_coordinates" in summary


def _put(store, method, u, experiment="fig1", dataset="two moons", repeat=0, **fields):
    rec = dict(
        accuracy=0.999,
        fit_seconds=1.0,
        graph_seconds=0.5,
        max_rss_bytes=10**9,
        expansions=5,
        expansion_share=5 / (u + 2),
        isolated=True,
        converged=True,
        predict_seconds=0.01,
        d=2,
        n_test=5000,
    )
    store.put(experiment, dataset, method, repeat, f"u={u}", u=u, **{**rec, **fields})


def test_targets_pass_fail_and_not_measured_from_synthetic_records(tmp_path):
    protocol = dataclasses.replace(
        PROTOCOL, repeats=1, moons_sizes=(1_000, 1_000_000), usps_sizes=(100,)
    )
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    # the study's setting: capped above n = 1,002, slower than LapSVM at u = 1,000
    _put(store, SLAPCVM, 1_000, fit_seconds=229.0)
    _put(store, LAPSVM, 1_000, fit_seconds=0.5)
    # the paper's setting: accurate and sparse everywhere, 1M over 60 s, memory not isolated
    _put(store, SLAPCVM_PAPER, 1_000, fit_seconds=0.1)
    _put(store, SLAPCVM_PAPER, 1_000_000, fit_seconds=58.0, graph_seconds=4.0, isolated=False)
    for method, accuracy, seconds in (
        (SLAPCVM, 0.9, 0.2),
        (SLAPCVM_PAPER, 0.7, 0.1),
        (LAPSVM, 0.8, 0.3),
    ):
        _put(
            store,
            method,
            100,
            "fig2",
            "usps",
            accuracy=accuracy,
            fit_seconds=seconds,
            d=256,
            n_test=462,
        )
    v = judge(protocol, store)
    assert v["moons accuracy", SLAPCVM].status == "not measured"
    assert "u = 1,000,000: not run (n_train > 1,002)" in v["moons accuracy", SLAPCVM].detail
    assert v["moons accuracy", SLAPCVM_PAPER].status == "PASS"
    assert v["1M seconds", SLAPCVM].status == "not measured"
    assert v["1M seconds", SLAPCVM_PAPER] == Verdict("FAIL", "62.0 s")
    assert v["1M memory", SLAPCVM_PAPER].status == "not measured"
    assert "not isolated" in v["1M memory", SLAPCVM_PAPER].detail
    assert v["1M sparsity", SLAPCVM_PAPER].status == "PASS"
    assert v["faster than LapSVM", SLAPCVM].status == "FAIL"
    assert v["faster than LapSVM", SLAPCVM_PAPER].status == "PASS"
    assert v["USPS accuracy vs LapSVM", SLAPCVM].status == "PASS"
    assert v["USPS accuracy vs LapSVM", SLAPCVM_PAPER].status == "FAIL"
    # a measured miss fails even where other sizes are not measured
    _put(store, SLAPCVM, 1_000, accuracy=0.9)
    verdict = judge(protocol, store)["moons accuracy", SLAPCVM]
    assert verdict.status == "FAIL" and "u = 1,000: 90.00 %" in verdict.detail
    assert "not measured: u = 1,000,000" in verdict.detail
    # isolated and under the limits: PASS; a failed fit is a FAIL, not "not measured"
    _put(store, SLAPCVM_PAPER, 1_000_000, fit_seconds=20.0, max_rss_bytes=1.5e9)
    verdicts = judge(protocol, store)
    assert verdicts["1M memory", SLAPCVM_PAPER].status == "PASS"
    assert verdicts["1M seconds", SLAPCVM_PAPER].status == "PASS"
    store.put("fig1", "two moons", SLAPCVM_PAPER, 0, "u=1000000", u=10**6, error="MemoryError")
    assert judge(protocol, store)["1M seconds", SLAPCVM_PAPER].status == "FAIL"
    paths = render(BENCHMARK, protocol, store, tmp_path)
    summary = (tmp_path / "summary.md").read_text()
    assert str(tmp_path / "summary.md") in paths and "**not measured**" in summary
    assert "**FAIL**" in summary and "**PASS**" in summary
    fig1 = (tmp_path / "fig1.md").read_text()
    assert "| 1,000,000 | 1,000,002 |" in fig1 and "ERROR MemoryError" in fig1


def test_targets_need_every_planned_repeat_and_converged_fits(tmp_path):
    protocol = dataclasses.replace(
        PROTOCOL, repeats=3, moons_sizes=(1_000, 3_000, 1_000_000), usps_sizes=(100,)
    )
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    for u, seconds, core in ((1_000, 1.0, 50), (3_000, 2.0, 60), (1_000_000, 50.0, 61)):
        for r in range(3):
            _put(store, SLAPCVM_PAPER, u, repeat=r, fit_seconds=seconds, core_set=core)
    v = judge(protocol, store)
    assert v["moons accuracy", SLAPCVM_PAPER].status == "PASS"
    # fit seconds 2 -> 50 from u = 3,000 to 1,000,000 once the core set is stable: slope < 1
    assert v["sub-linear time", SLAPCVM_PAPER].status == "PASS"
    assert "u = 3,000, 1,000,000" in v["sub-linear time", SLAPCVM_PAPER].detail
    # one repeat out of memory at 1M: the 1M targets fail, whatever the other repeats did
    store.put("fig1", "two moons", SLAPCVM_PAPER, 1, "u=1000000", u=10**6, error="killed (OOM)")
    v = judge(protocol, store)
    assert v["1M memory", SLAPCVM_PAPER].status == "FAIL"
    assert v["1M seconds", SLAPCVM_PAPER].status == "FAIL"
    # a size with a planned repeat missing is not measured; one not converged fails
    store.put(
        "fig1",
        "two moons",
        SLAPCVM_PAPER,
        1,
        "u=1000000",
        u=10**6,
        accuracy=0.999,
        fit_seconds=50.0,
        graph_seconds=0.5,
        max_rss_bytes=10**9,
        expansions=5,
        expansion_share=5e-6,
        isolated=True,
        converged=True,
        core_set=61,
    )
    _put(store, SLAPCVM_PAPER, 3_000, repeat=2, converged=False, core_set=60, fit_seconds=2.0)
    v = judge(protocol, store)
    assert v["moons accuracy", SLAPCVM_PAPER].status == "FAIL"
    assert "NOT converged" in v["moons accuracy", SLAPCVM_PAPER].detail
    fresh = RecordStore(tmp_path / "b", protocol.paper, protocol.digest())
    _put(fresh, SLAPCVM_PAPER, 1_000, repeat=0)
    verdict = judge(protocol, fresh)["moons accuracy", SLAPCVM_PAPER]
    assert verdict.status == "not measured" and "1 of 3 repeats" in verdict.detail
    # a slope of 1 or more fails
    for r in range(3):
        _put(store, SLAPCVM_PAPER, 1_000_000, repeat=r, fit_seconds=5000.0, core_set=61)
    assert judge(protocol, store)["sub-linear time", SLAPCVM_PAPER].status == "FAIL"
    lines = "\n".join(target_lines(protocol, store))
    assert "50,000 points" in lines and "**not measured**" in lines
