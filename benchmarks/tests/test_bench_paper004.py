"""Paper 004 on the harness: the quick run, the paired comparison and the targets' verdicts."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from semiscale_bench.harness import CATALOG, RecordStore, load_benchmark, run_benchmark
from semiscale_bench.paper004 import BENCHMARK, PROTOCOL, QUICK
from semiscale_bench.paper004.paper import TABLE1, TABLE2
from semiscale_bench.paper004.report import compare, render

ROOT = Path(__file__).resolve().parents[2]
SHARED = next(
    (p for p in (ROOT / "shared" / "datasets", ROOT.parent / "shared" / "datasets") if p.is_dir()),
    None,
)


def test_registered_with_the_papers_datasets_and_numbers():
    assert "paper004" in CATALOG and load_benchmark("paper004") is BENCHMARK
    assert QUICK.quick and QUICK.digest() != PROTOCOL.digest()
    names = {d.name for d in PROTOCOL.datasets}
    assert names == set(TABLE1) == set(TABLE2)
    absent = {d.name for d in PROTOCOL.datasets if d.source is None}
    assert absent == {"a2a", "a3a", "w1a", "w2a", "w3a", "bodyfat", "mg", "mpg"}
    assert TABLE1["abalone"]["5-CV"] == pytest.approx((8.71e-4, 0.81e-4))
    assert TABLE2["cpusmall"]["20-CV"] == 1706.09


def _rec(error, seconds, params=None):
    return {"test_error": error, "seconds": seconds, "best_params": params or {"a": 1.0}}


def test_compare_pairs_repeats_and_tests_the_differences():
    cv = {0: _rec(10.0, 20.0), 1: _rec(12.0, 22.0), 2: _rec(11.0, 21.0)}
    same = compare(cv, {r: _rec(v["test_error"], 1.0) for r, v in cv.items()})
    assert same["p"] == 1.0 and same["same_choice"] == 3 and same["cv_seconds"] == 21.0
    worse = compare(cv, {0: _rec(20.0, 1.0), 1: _rec(22.1, 1.0), 2: _rec(21.0, 1.0)})
    assert worse["p"] < 0.05 and worse["bif"][0] == pytest.approx(21.0333, rel=1e-4)
    one = compare({0: _rec(1.0, 2.0)}, {0: _rec(2.0, 1.0), 1: _rec(3.0, 1.0)})
    assert one["n"] == 1 and one["p"] is None
    assert compare(cv, {}) == {}


def test_targets_from_synthetic_records(tmp_path):
    protocol = dataclasses.replace(
        QUICK, folds=(5, 10, 20), datasets=QUICK.datasets, max_samples=None
    )
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    store.put("select", "fourclass", "sizes", n_train=1200, d=2)
    store.put("select", "housing", "sizes", n_train=354, d=13)
    for r in range(3):
        for t in (5, 10, 20):
            # fourclass: BIF 25x faster, equal errors; housing: BIF slower at t=5, worse errors
            store.put("select", "fourclass", "CV", r, f"t={t}", **_rec(5.0 + r, 25.0))
            store.put("select", "fourclass", "BIF", r, f"t={t}", **_rec(5.0 + r, 1.0))
            store.put("select", "housing", "CV", r, f"t={t}", **_rec(0.5 + 0.01 * r, 2.0))
            bif_seconds = 3.0 if t == 5 else 1.0
            store.put("select", "housing", "BIF", r, f"t={t}", **_rec(0.9 + 0.011 * r, bif_seconds))
    paths = render(BENCHMARK, protocol, store, tmp_path)
    summary = Path(paths[2]).read_text()
    assert "| fourclass | 25x PASS | 25x, 25x, 25x PASS | 1, 1, 1 PASS |" in summary
    assert "| housing | — | 0.6667x, 2x, 2x FAIL |" in summary
    assert "20-BIF at least 20x faster than 20-CV on the larger datasets: **PASS**" in summary
    assert "t-BIF faster than t-CV for every t and dataset: **FAIL**" in summary
    assert "(paired t-test, 95 %): **FAIL**" in summary
    table1 = Path(paths[0]).read_text()
    assert "| fourclass | 20 | 3 | 6 ± 1 | 6 ± 1 | same | 3/3 | 4.5 ± 2.1 | 5.12 ± 2.6 |" in table1


@pytest.mark.skipif(SHARED is None, reason="needs the shared datasets folder")
def test_quick_run_writes_the_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISCALE_DATA", str(SHARED))
    paths = run_benchmark(BENCHMARK, quick=True, out=tmp_path, verbose=0)
    assert [Path(p).name for p in paths] == ["table1.md", "table2.md", "summary.md"]
    table1 = Path(paths[0]).read_text()
    assert "QUICK MODE" in table1 and "| fourclass | 3 | 1 |" in table1
    records = RecordStore(tmp_path, QUICK.paper, QUICK.digest()).select("select")
    searches = [r for r in records if r["method"] in ("CV", "BIF")]
    assert len(searches) == 4 and all(np.isfinite(r["test_error"]) for r in searches)
