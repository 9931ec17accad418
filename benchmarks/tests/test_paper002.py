"""Paper 002's learning curves on the harness: protocol, tasks, selection, targets, quick run."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from semiscale_bench.harness import CATALOG, RecordStore, Sizes, load_benchmark, run_benchmark
from semiscale_bench.paper002 import BENCHMARK, PROTOCOL, QUICK
from semiscale_bench.paper002.data import binary_task, class_orders, labeled_rows, load_task
from semiscale_bench.paper002.learning import EXPERIMENT, select_and_test, setting
from semiscale_bench.paper002.protocol import (
    _EVEN,
    _ODD,
    BUDGET,
    EFFICIENT,
    EFFICIENT_500,
    FULL,
    RBF_SVM,
)
from semiscale_bench.paper002.report import paired, render

ROOT = Path(__file__).resolve().parents[2]
SHARED = next(
    (p for p in (ROOT / "shared" / "datasets", ROOT.parent / "shared" / "datasets") if p.is_dir()),
    None,
)
needs_data = pytest.mark.skipif(SHARED is None, reason="needs the shared datasets folder")


def test_registered_with_caps_and_reasons():
    assert "paper002" in CATALOG and load_benchmark("paper002") is BENCHMARK
    assert QUICK.quick and QUICK.digest() != PROTOCOL.digest()
    large = Sizes(65_171, 256, 61_164, 40, 250)
    planned, reason = PROTOCOL.plan(FULL, "odd vs even", large)
    assert planned == [] and "30 GB" in reason
    assert PROTOCOL.plan(EFFICIENT_500, "odd vs even", large)[0] == [0, 1]
    small = Sizes(1558, 16, 1250, 40, 250)
    assert PROTOCOL.plan(FULL, "letter D vs O", small)[0] == list(range(5))
    assert PROTOCOL.plan(EFFICIENT_500, "letter D vs O", small)[0] == []
    assert PROTOCOL.repeats_for("odd vs even")[0] == 2
    assert len(PROTOCOL.grid(EFFICIENT, "letter D vs O")) == 2 * 4 * 4
    assert len(PROTOCOL.grid(EFFICIENT, "odd vs even")) == len(PROTOCOL.large_powers) * 4 * 4
    scales = (0.25, 0.5, 1.0, 2.0)
    assert PROTOCOL.grid(RBF_SVM, "usps 3 vs 8") == [{"sigma_scale": s} for s in scales]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"labels_per_class": (1, 5)}, "labels_per_class must be ints >= 2"),
        ({"labels_per_class": (5, 2)}, "must increase strictly"),
        ({"powers": (0, 1)}, "powers must be positive ints"),
        ({"etas": (-1.0,)}, "etas must be positive numbers"),
        ({"cv_folds": 1}, "cv_folds must be an int >= 2"),
        ({"tasks": {}}, "have no entry in tasks"),
    ],
)
def test_protocol_refuses_bad_knobs(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(PROTOCOL, **change)


def test_binary_task_keeps_the_pair_and_codes_it():
    X = np.arange(12, dtype=float).reshape(6, 2)
    y = np.array([3, 8, 5, 3, 8, 1])
    Xb, yb = binary_task(X, y, (3,), (8,))
    np.testing.assert_array_equal(Xb, X[[0, 1, 3, 4]])
    np.testing.assert_array_equal(yb, [1, 0, 1, 0])
    with pytest.raises(ValueError, match="both positive and negative"):
        binary_task(X, y, (3,), (3, 8))
    with pytest.raises(ValueError, match=r"no negative row: classes \[7\]"):
        binary_task(X, y, (3,), (7,))


def test_odd_vs_even_codes_odd_digits_one():
    digits = np.arange(10).repeat(2)
    X = digits[:, None].astype(float)
    Xb, yb = binary_task(X, digits, _ODD, _EVEN)
    assert Xb.shape == (20, 1)
    np.testing.assert_array_equal(yb, digits % 2)


def test_labeled_sets_are_nested_seeded_and_balanced():
    y = np.array([0] * 30 + [1] * 25)
    orders = class_orders(y, 20, trial=3)
    again = class_orders(y, 20, trial=3)
    assert all(np.array_equal(a, b) for a, b in zip(orders, again))
    assert not np.array_equal(orders[0], class_orders(y, 20, trial=4)[0])
    small, large = labeled_rows(orders, 5), labeled_rows(orders, 20)
    assert set(small) <= set(large) and len(set(large)) == 40
    assert list(y[small]) == [0] * 5 + [1] * 5
    with pytest.raises(ValueError, match="class 1 has 25 training rows, fewer than 30"):
        class_orders(y, 30, trial=0)


def test_selection_picks_the_separating_kernel_and_scores_the_test_rows():
    rng = np.random.default_rng(0)
    most = 5
    y_L = np.repeat([0, 1], most)
    y_test = rng.integers(0, 2, 40)
    # point 0: labels as features (a perfect kernel); point 1: noise
    f_L, f_T = 2.0 * y_L - 1.0, 2.0 * y_test - 1.0
    good = (np.outer(f_L, f_L) + 1.0, np.outer(f_T, f_L) + 1.0)
    noise = rng.normal(size=(most * 2 + 40, 3))
    bad = (noise[: 2 * most] @ noise[: 2 * most].T, noise[2 * most :] @ noise[: 2 * most].T)
    out = select_and_test([bad, good], y_L, y_test, (2, 5), (1.0, 10.0), 5, seed=0)
    assert set(out) == {2, 5}
    for per_class, c in out.items():
        assert c["grid_index"] == 1 and c["test_error"] == 0.0 and c["cv_accuracy"] == 1.0
        assert c["cv_folds"] == min(5, per_class)


def test_paired_difference_and_its_standard_error():
    d = paired({0: 10.0, 1: 12.0, 2: 11.0}, {0: 9.0, 1: 12.0, 2: 9.0, 3: 50.0})
    assert d == pytest.approx((1.0, 1.0 / np.sqrt(3), 3))
    assert paired({0: 1.0}, {0: 2.0}) is None


def _put(store, name, method, errors):
    for per_class, values in errors.items():
        for r, e in enumerate(values):
            store.put(EXPERIMENT, name, method, r, setting(per_class), test_error=e, params={})


def test_targets_from_synthetic_records(tmp_path):
    protocol = dataclasses.replace(QUICK, labels_per_class=(2, 5))
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    facts = {"n_train": 300, "n_test": 100, "d": 16, "train_positive": 150, "sigma0": 1.0}
    store.put(EXPERIMENT, "letter D vs O", "task", **facts, test_positive=50)
    # efficient within noise of full (d = +0.5 ± 0.5) and below budget and RBF everywhere
    _put(store, "letter D vs O", EFFICIENT, {2: [10.0, 12.0], 5: [5.0, 6.0]})
    _put(store, "letter D vs O", FULL, {2: [10.0, 11.0], 5: [5.0, 5.0]})
    _put(store, "letter D vs O", BUDGET, {2: [20.0, 20.0], 5: [9.0, 9.0]})
    _put(store, "letter D vs O", RBF_SVM, {2: [30.0, 30.0], 5: [5.0, 5.0]})
    solves = {"p=1": {"fit_seconds": 1.0, "warnings": ["LandmarkWarning: no label"]}}
    store.put(EXPERIMENT, "letter D vs O", BUDGET, 0, setting(2), test_error=20.0, solves=solves)
    paths = render(BENCHMARK, protocol, store, tmp_path)
    assert [Path(p).name for p in paths] == ["curves.md", "curves.png", "summary.md"]
    summary = Path(paths[-1]).read_text()
    assert "l=2: +0.5 ± 0.5; l=5: +0.5 ± 0.5 PASS" in summary
    assert f"not at {EFFICIENT} l=5: 5.5 vs {RBF_SVM} 5.0 FAIL" in summary
    assert "(mean paired difference d̄ ≤ 2 standard errors, every label count): **PASS**" in summary
    curves = Path(paths[0]).read_text()
    assert "| 2 | 11.0 ± 1.4 (2) | 10.5 ± 0.7 (2) | 20.0 ± 0.0 (2) | 30.0 ± 0.0 (2) |" in curves
    assert f"- {BUDGET}: LandmarkWarning: no label (1)" in curves


@needs_data
def test_letter_task_has_table_1s_sizes(monkeypatch):
    monkeypatch.setenv("SEMISCALE_DATA", str(SHARED))
    task = load_task(PROTOCOL, "letter D vs O")
    assert task.facts()["n_train"] == 1250 and task.facts()["n_test"] == 308
    assert set(np.unique(task.y_train)) == {0, 1}


@needs_data
def test_quick_run_records_and_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMISCALE_DATA", str(SHARED))
    skip = ("timing", "clustering")  # HB2's experiments: benchmarks/tests/test_paper002_timing.py
    paths = run_benchmark(BENCHMARK, quick=True, out=tmp_path, verbose=0, skip=skip)
    assert {Path(p).name for p in paths} >= {"curves.md", "summary.md"}
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    fits = [r for r in records if "test_error" in r]
    # letter: 4 methods (no n̂ = 500); odd vs even: all 5 (its 300 quick rows let the full
    # kernel run); 2 trials, 2 label counts
    assert len(fits) == (4 + 5) * 2 * 2 and not [r for r in records if "error" in r]
    assert all(0 <= r["test_error"] <= 100 for r in fits)
    summary = (tmp_path / "summary.md").read_text()
    assert "QUICK MODE" in summary and "efficient kernel beats the budget kernel" in summary
    assert "SSLGridSearchCV(DataDependentSVC):" in summary and "Not run yet" in summary
    run_benchmark(BENCHMARK, quick=True, out=tmp_path, verbose=0, skip=skip)  # nothing refitted
    again = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(again) == len(records)


@needs_data
def test_the_data_check_finds_every_tasks_files():
    # MNIST's training images are not shared: a task on its test file must not name the
    # registered set 'mnist', whose train split the harness's check looks for (it refused).
    from semiscale_bench.harness.data import missing_sources

    sources = [d.source for d in PROTOCOL.datasets]
    assert missing_sources(sources, SHARED) == []
    assert missing_sources(["mnist"], SHARED) == ["mnist"]  # what the tasks named before
