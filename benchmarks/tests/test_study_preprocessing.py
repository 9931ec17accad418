"""The preprocessing study (``semiscale-bench preprocessing``) and the guide page built on it."""

import re
import shutil
from pathlib import Path

import numpy as np

from semiscale_bench.harness import load_benchmark, run_benchmark
from semiscale_bench.studies import preprocessing

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "preprocessing"


def test_standard_scaling_reads_every_point_and_none_leaves_the_data_alone():
    X, y = preprocessing.load("sklearn:wine")
    assert X.shape == (178, 13) and set(np.unique(y)) == {0, 1, 2}
    assert preprocessing.prepare(X, "none") is X
    Z = preprocessing.prepare(X, "standard")
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, rtol=1e-12)


def test_fits_record_every_method_once_and_resume(tmp_path):
    records, saves = [], []
    wine = preprocessing.DATASETS[:1]
    preprocessing.fit_all(
        records, lambda: saves.append(1), datasets=wine, per_class=(1,), trials=(0,)
    )
    methods = preprocessing.METHODS
    assert len(records) == 2 * len(methods) and saves
    assert {r["method"] for r in records} == set(methods)
    assert {r["scaling"] for r in records} == {"none", "standard"}
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["seconds"] > 0 for r in records)
    before = list(records)
    preprocessing.fit_all(records, lambda: None, datasets=wine, per_class=(1,), trials=(0,))
    assert records == before  # everything recorded: nothing refitted
    # The supervised peer sees only the labeled points: one per class, so it is no oracle.
    svc = [r for r in records if r["method"] == "SVC (labeled only)"]
    assert all(r["accuracy"] < 1.0 for r in svc)


def test_summary_takes_medians_over_draws_and_the_table_reads_them():
    records = [
        {
            "dataset": "d",
            "scaling": scaling,
            "per_class": 1,
            "trial": trial,
            "method": method,
            "accuracy": accuracy,
            "seconds": 0.5 + trial,
            "warnings": [],
        }
        for scaling, base in (("none", 0.4), ("standard", 0.8))
        for trial, accuracy in enumerate((base, base + 0.1, base - 0.3))
        for method in preprocessing.METHODS
    ]
    summary = preprocessing.summarize(records)
    assert len(summary) == 2 * len(preprocessing.METHODS)
    row = summary[0]
    assert row["trials"] == 3 and row["seconds"] == 1.5
    assert np.isclose(row["accuracy"], 0.4)
    table = "\n".join(preprocessing.table_lines(summary))
    assert "| d | LapSVC | 40.0 (1.50 s) | 80.0 (1.50 s) |" in table
    assert "- d, 1/class: 40.0–40.0 % → 80.0–80.0 %" in table


def test_committed_table_renders_again_from_the_committed_records(tmp_path):
    out = tmp_path / "preprocessing"
    shutil.copytree(RESULTS, out)
    for name in ("README.md", "table.md", "table.csv"):
        (out / name).unlink()
    run_benchmark(load_benchmark("preprocessing"), out=out, render_only=True, verbose=0)
    for name in ("table.md", "table.csv"):
        assert (out / name).read_text() == (RESULTS / name).read_text(), name


def test_the_guide_page_includes_the_committed_table_and_names_its_command():
    page = (ROOT / "docs" / "preprocessing.md").read_text()
    included = re.findall(r"```\{include\} (\S+)", page)
    assert (ROOT / "docs" / included[0]).resolve() == RESULTS / "table.md"
    assert "semiscale-bench preprocessing --out benchmarks/results/preprocessing" in page
    # no accuracy copied by hand beside the included table
    assert not re.search(r"\d+\.\d %", page)


def _committed_medians():
    """(dataset, scaling, labels per class, method) -> median accuracy and seconds, committed."""
    import json

    records = json.loads((RESULTS / "results.json").read_text())["records"]
    rows = preprocessing.summarize(records)
    return {(r["dataset"], r["scaling"], r["per_class"], r["method"]): r for r in rows}


def test_the_guide_pages_reading_holds_in_the_committed_records():
    """Each claim of docs/preprocessing.md's 'Reading it', checked on the records it reads."""
    m = _committed_medians()
    ours = preprocessing.CLASSIFIERS

    def gain(name, k, method):
        return m[name, "standard", k, method]["accuracy"] - m[name, "none", k, method]["accuracy"]

    # wine: every semiscale classifier gains at both label counts; breast_cancer at 5, and at 1
    # all but SparseLapCVMClassifier.
    assert all(gain("wine", k, c) > 0 for k in (1, 5) for c in ours)
    assert all(gain("breast_cancer", 5, c) > 0 for c in ours)
    assert [c for c in ours if gain("breast_cancer", 1, c) <= 0] == ["SparseLapCVMClassifier"]
    # LabelSpreading unscaled does no better than always naming the largest class.
    for name, source, _ in preprocessing.DATASETS[:2]:
        _, y = preprocessing.load(source)
        majority = np.bincount(y).max() / y.size
        assert all(m[name, "none", k, "LabelSpreading"]["accuracy"] <= majority for k in (1, 5))
    # usps: every method, the peers included, loses at both label counts.
    assert all(gain("usps", k, c) < 0 for k in (1, 5) for c in preprocessing.METHODS)
    # australian: at 5 every semiscale classifier gains and both peers lose; at 1 ...
    assert all(gain("australian", 5, c) > 0 for c in ours)
    assert all(gain("australian", 5, p) < 0 for p in preprocessing.PEERS)
    losers = [c for c in ours if gain("australian", 1, c) <= 0]
    assert losers == ["HarmonicClassifier", "SparseLapCVMClassifier"]
    # usps: the graph estimators fit fastest, and one of them is the best method as given.
    graph = ("HarmonicClassifier", "PoissonClassifier")
    for k in (1, 5):
        for scaling in preprocessing.SCALINGS:
            seconds = {c: m["usps", scaling, k, c]["seconds"] for c in ours}
            assert max(seconds[c] for c in graph) < min(
                s for c, s in seconds.items() if c not in graph
            )
        best = max(preprocessing.METHODS, key=lambda c: m["usps", "none", k, c]["accuracy"])
        assert best in graph
    # SparseLapCVMClassifier: the least accurate semiscale classifier on usps and on scaled wine
    # and breast_cancer, the most accurate on unscaled australian.
    for name, scalings in (("usps", ("none", "standard")), ("wine", ("standard",))):
        for scaling in scalings:
            for k in (1, 5):
                worst = min(ours, key=lambda c: m[name, scaling, k, c]["accuracy"])
                assert worst == "SparseLapCVMClassifier", (name, scaling, k)
    for k in (1, 5):
        worst = min(ours, key=lambda c: m["breast_cancer", "standard", k, c]["accuracy"])
        best = max(ours, key=lambda c: m["australian", "none", k, c]["accuracy"])
        assert worst == best == "SparseLapCVMClassifier"
    # The supervised SVC beats every semiscale default on australian at 5 labels per class.
    for scaling in preprocessing.SCALINGS:
        svc = m["australian", scaling, 5, "SVC (labeled only)"]["accuracy"]
        assert all(svc > m["australian", scaling, 5, c]["accuracy"] for c in ours)
