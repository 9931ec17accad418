"""``semiscale bench few-labels --quick``: records, a table per dataset, every method present."""

import json

import numpy as np

from semiscale.bench.few_labels import BENCHMARK, draw_labels
from semiscale.cli import main


def test_quick_run_writes_records_tables_and_every_method(tmp_path):
    assert main(["bench", "few-labels", "--quick", "--out", str(tmp_path), "-q"]) == 0
    protocol = BENCHMARK.quick_protocol
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    fits = [r for r in records if r["method"] in protocol.methods]
    assert {r["method"] for r in fits} == set(protocol.methods)
    assert len(fits) == len(protocol.methods) * len(protocol.per_class) * protocol.repeats
    for r in fits:
        assert "error" not in r, r
        assert 0.0 <= r["accuracy"] <= 1.0 and r["fit_seconds"] >= 0
        assert r["graph_given"] == (r["method"] != "sklearn LabelSpreading")
    table = (tmp_path / "two_moons.md").read_text()
    summary = (tmp_path / "summary.md").read_text()
    for method in protocol.methods:
        assert f"| {method} |" in table
    assert "QUICK MODE" in table and "GraphLearning" in summary and "sdist" in summary
    # a rerun resumes: nothing is refitted
    assert main(["bench", "few_labels", "--quick", "--out", str(tmp_path), "-q"]) == 0
    again = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(again) == len(records)


def test_label_draws_are_seeded_per_trial_and_count_and_shared():
    y = np.repeat(np.arange(3), 20)
    a, b = draw_labels(y, 3, trial=1), draw_labels(y, 3, trial=1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, draw_labels(y, 3, trial=2))
    for c in range(3):
        assert np.count_nonzero(a == c) == 3
    assert np.count_nonzero(a == -1) == y.size - 9
