"""The resumable driver of the standalone studies (``semiscale.bench.studies._resumable``)."""

import json

from semiscale.bench.studies._resumable import run_study


def _study(tmp_path, calls, force=False):
    def step(records, save):
        calls.append(len(records))
        if not records:
            records.append({"fit": 1})
            save()

    def write_report(results, out):
        (out / "README.md").write_text(f"{len(results['records'])} records\n")

    argv = ["--out", str(tmp_path)] + (["--force"] if force else [])
    return run_study(argv, "a study", (step,), lambda records: {"n": len(records)}, write_report)


def test_a_study_records_resumes_and_restarts_on_force(tmp_path):
    calls = []
    results = _study(tmp_path, calls)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["records"] == [{"fit": 1}] and saved["summary"] == {"n": 1}
    assert saved["commit"] == results["commit"] and "platform" in saved["machine"]
    assert (tmp_path / "README.md").read_text() == "1 records\n"
    _study(tmp_path, calls)  # resumes: the step sees the recorded fit
    _study(tmp_path, calls, force=True)  # starts again
    assert calls == [0, 1, 0]
