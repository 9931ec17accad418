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
