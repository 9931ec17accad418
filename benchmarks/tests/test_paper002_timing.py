"""Paper 002's timing (Figure 5) and clustering (Figure 4) experiments: quick runs and reports."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from semiscale_bench.harness import Dataset, Protocol, RecordStore, RunContext
from semiscale_bench.paper002 import clustering, timing, timing_report

SHARED = next(
    (
        p
        for p in (os.environ.get("SEMISCALE_DATA"), "/work/shared/datasets")
        if p and Path(p, "usps").exists()
    ),
    None,
)


def _protocol(quick=True):
    return Protocol(paper="paper002", datasets=(Dataset("usps", "usps"),), methods=(), quick=quick)


def _store(tmp_path, protocol):
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    store.start_run(command="test")
    return store


def _ctx(data_home=None):
    return RunContext(["usps"], data_home, lambda message: None, verbose=0)


def test_clustering_error_is_the_best_matching_of_clusters_to_classes():
    y = np.array([0, 0, 0, 1, 1, 1])
    assert clustering.clustering_error([1, 1, 1, 0, 0, 0], y) == 0.0
    assert clustering.clustering_error([0, 0, 1, 1, 1, 1], y) == pytest.approx(1 / 6)
    assert clustering.clustering_error([0, 1, 0, 1, 0, 1], y) == pytest.approx(1 / 3)
    three = np.array([0, 0, 1, 1, 2, 2])
    assert clustering.clustering_error([2, 2, 0, 0, 1, 1], three) == 0.0
    with pytest.raises(ValueError, match="3 clusters for 2 classes"):
        clustering.clustering_error([0, 1, 2, 0, 1, 2], y)


def test_a_method_is_capped_by_its_predicted_time_and_exact_by_the_kernels_limit():
    last = {"n": 8000, "method": "direct", "seconds": 30.0}
    assert timing._cap_reason("direct", last, 16_000).startswith("capped: predicted 85 s")
    assert timing._cap_reason("direct", {**last, "seconds": 20.0}, 16_000) is None  # 57 s
    # the growth measured between the last two sizes, when steeper than GROWTH, predicts
    prev = {"n": 4000, "method": "direct", "seconds": 5.0}
    assert "(n ratio)^2.00) >" in timing._cap_reason(
        "direct", {**last, "seconds": 20.0}, 16_000, prev
    )
    assert timing._cap_reason("amg", {**last, "method": "amg", "seconds": 500.0}, 64_000) is None
    stopped = timing._cap_reason("cg", {"n": 8000, "method": "cg", "capped": "capped: x"}, 16_000)
    assert stopped.startswith("not run: the method stopped at n = 8000")
    assert "refused above 5,000" in timing._cap_reason("exact", None, 8000)


def test_a_child_killed_at_the_timeout_is_recorded_with_its_peak_so_far(monkeypatch):
    monkeypatch.setattr(timing, "_CHILD", "import time; time.sleep(60)")
    rec = timing._in_child({}, 1.0)
    assert rec["timed_out"] and rec["error"].startswith("killed after 1 s")
    assert rec["peak_rss_at_kill_bytes"] > 0
    monkeypatch.setattr(timing, "_CHILD", "print('x'); raise SystemExit(3)")
    assert timing._in_child({}, 30.0)["error"].startswith("subprocess exited with 3")


def _timing_record(store, protocol, fam, meth, n, seconds, peak=2**30):
    timing.experiment_store(store, protocol, "timing").put(
        "timing",
        fam,
        meth,
        0,
        f"n={n}",
        spec=timing._spec(protocol, fam),
        n=n,
        seconds=seconds,
        runs=[seconds],
        peak_rss_bytes=peak,
        rss_before_fit_bytes=peak // 2,
        graph_seconds=1.0,
        graph_search="kdtree",
    )


def test_the_targets_judge_the_recorded_times(tmp_path):
    protocol = _protocol(quick=False)
    store = _store(tmp_path, protocol)
    _timing_record(store, protocol, "digits", "amg", 8000, 2.0)
    _timing_record(store, protocol, "digits", "amg", 64_000, 19.0)
    _timing_record(store, protocol, "moons", "amg", 125_000, 10.0)
    _timing_record(store, protocol, "moons", "amg", 1_000_000, 120.0, peak=7 * 2**30)
    lines = timing.render_timing(store, protocol, tmp_path)
    assert (
        "Planned and not recorded yet (the run was cut short): digits 1,000 amg;"
        in (tmp_path / "timing.md").read_text()
    )
    assert lines[0].startswith("Kernel construction (AMG-CG) at n = 64,000 digits: 19.0 s")
    assert lines[0].endswith("**PASS**")
    assert "worst 12.0×" in lines[1] and "digits 8,000 → 64,000: 9.5×" in lines[1]
    assert lines[1].endswith("**FAIL**")  # moons 125,000 -> 1,000,000: 12×
    assert "7.00 GiB (budget 6 GiB" in lines[2] and lines[2].endswith("**FAIL**")
    assert {"timing.md", "timing.json"} <= {p.name for p in tmp_path.iterdir()}


def test_a_killed_fit_counts_as_at_least_the_timeout_and_its_memory_is_not_judged(tmp_path):
    protocol = _protocol(quick=False)
    store = _store(tmp_path, protocol)
    _timing_record(store, protocol, "moons", "amg", 125_000, 100.0)
    timing.experiment_store(store, protocol, "timing").put(
        "timing",
        "moons",
        "amg",
        0,
        "n=1000000",
        n=1_000_000,
        spec=timing._spec(protocol, "moons"),
        error="killed after 1200 s (TIMEOUT_SECONDS)",
        timed_out=True,
        peak_rss_at_kill_bytes=5 * 2**30,
    )
    lines = timing.render_timing(store, protocol, tmp_path)
    assert "moons 125,000 → 1,000,000: 12.0× (killed: at least)" in lines[1]
    assert lines[1].endswith("**FAIL**")
    assert "killed after 1200 s with the child's VmHWM at 5.00 GiB so far" in lines[2]
    assert lines[2].endswith("**—**")
    assert "≥ 5120 (at the kill)" in (tmp_path / "timing.md").read_text()


@pytest.mark.skipif(SHARED is None, reason="needs the shared datasets folder (usps)")
def test_quick_timing_runs_records_and_renders(tmp_path, monkeypatch):
    protocol = _protocol()
    store = _store(tmp_path, protocol)
    timing.run_timing(None, protocol, store, _ctx(SHARED))
    own = timing.experiment_store(store, protocol, "timing")
    assert own.path == tmp_path / "timing" / "records.jsonl" and own.runs()
    rows = timing_report._rows(own, protocol)
    expected = sum(len(f["sizes"]) * len(f["methods"]) for f in timing.families(protocol).values())
    assert len(rows) == expected
    for rec in rows:
        assert "error" not in rec and "capped" not in rec, rec
        assert rec["seconds"] > 0 and rec["graph_seconds"] > 0 and rec["peak_rss_bytes"] > 0
        assert len(rec["load_average"]) == 2
        if rec["method"] != "exact":
            assert rec["epsilon"] < 1e-3  # Theorem 4.2's epsilon the solves reached
    assert {r["n"] for r in rows if r["dataset"] == "digits"} == {200, 400}

    # a rerun finds everything recorded and fits nothing, also under a protocol whose other
    # knobs (the learning curves') changed: the experiment keeps its own records
    def refuse(*args, **kwargs):
        raise AssertionError("a recorded fit was redone")

    monkeypatch.setattr(timing, "build", refuse)
    other = Protocol(
        paper="paper002", datasets=protocol.datasets, methods=(), quick=True, repeats=2
    )
    assert other.digest() != protocol.digest()
    store = _store(tmp_path, other)
    timing.run_timing(None, other, store, _ctx(SHARED))
    lines = timing.render_timing(store, protocol, tmp_path)
    assert len(lines) == 3 and "not run" in lines[0]
    text = (tmp_path / "timing.md").read_text()
    assert "QUICK MODE" in text and "| 400 | exact |" in text and "; load " in text
    assert "Planned and not recorded" not in text


def test_quick_clustering_runs_records_and_renders(tmp_path):
    protocol = _protocol()
    store = _store(tmp_path, protocol)
    clustering.run_clustering(None, protocol, store, _ctx())
    table = clustering._table(timing.experiment_store(store, protocol, "clustering"), protocol)
    assert set(table) == {"euclidean", "full", "efficient", "efficient_dw"}
    errors = [e for settings in table.values() for v in settings.values() for e in v]
    assert len(errors) == 1 + 3 * 2 and all(0 <= e <= 50 for e in errors)
    lines = clustering.render_clustering(store, protocol, tmp_path)
    assert len(lines) == 2 and "efficient kernel (n̂ = 20, p = 2)" in lines[0]
    assert "our default graph (efficient_dw" in lines[1]
    assert all(line.endswith(("**PASS**", "**FAIL**")) for line in lines)
    assert (tmp_path / "clustering.md").exists() and (tmp_path / "clustering.png").exists()


def test_a_forced_remeasurement_caps_by_what_it_measured_itself(tmp_path, monkeypatch):
    protocol = _protocol()
    forced = RecordStore(tmp_path, protocol.paper, protocol.digest(), force=True)
    forced.start_run(command="test")
    monkeypatch.setattr(timing, "CAP_SECONDS", 0.0)  # any measured time caps the next size
    timing.run_timing(None, protocol, forced, _ctx(), family="moons", methods=("direct",))
    own = timing.experiment_store(_store(tmp_path, protocol), protocol, "timing")
    small, large = (own.get("timing", "moons", "direct", 0, f"n={n}") for n in (250, 2000))
    assert small["seconds"] > 0 and large["capped"].startswith("capped: predicted")
    assert own.get("timing", "moons", "amg", 0, "n=250") is None  # --methods: direct only
