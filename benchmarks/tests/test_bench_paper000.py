"""Paper 000 on the harness: a quick end-to-end run, resumability, reports from records."""

import json

import numpy as np
import pytest

from semiscale_bench.cli import main
from semiscale_bench.harness.search import midpoints
from semiscale_bench.paper000 import PROTOCOL, QUICK


def _records(folder):
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One quick run on space_ga (tables, speed-up, figures) and the unavailable w7a."""
    out = tmp_path_factory.mktemp("results") / "paper000"  # studies look for it by name
    assert main(["paper000", "--quick", "--datasets", "space_ga,w7a", "--out", str(out)]) == 0
    return out


def test_quick_run_draws_its_figures(quick_run):
    pytest.importorskip(
        "matplotlib", reason="matplotlib not installed: pip install semiscale[plot]"
    )
    for name in ("fig1.png", "fig2.png"):
        assert (quick_run / name).stat().st_size > 100, name


def test_quick_run_writes_records_and_reports(quick_run, capsys):
    for name in ("table2.md", "table3.md", "speedup.md", "sweeps.md"):
        assert (quick_run / name).stat().st_size > 100, name
    records = _records(quick_run)
    table = [r for r in records if r["experiment"] == "table" and r["method"] in QUICK.methods]
    assert {r["method"] for r in table} == set(QUICK.methods)  # 1 repeat: every method runs
    by_method = {r["method"]: r for r in table}
    assert np.isclose(by_method["LapRLS-PCG"]["rmse"], by_method["LapRLS-direct"]["rmse"])
    assert by_method["Nyström-PCG"]["rmse"] < by_method["RLS-CG"]["rmse"]
    assert by_method["Nyström-PCG"]["converged"] and by_method["Nyström-PCG"]["iterations"] <= 10
    (cv,) = [r for r in records if r["experiment"] == "cv"]
    assert set(cv["params"]["laprls"]) == {"gamma", "ambient_reg", "intrinsic_reg"}
    assert cv["n_graph_fits"] == 1  # one graph for every fold and both searches
    # the second CV stage: intrinsic_reg's geometric midpoint between the grid values 1 and 10
    assert [r["intrinsic_reg"] for r in cv["grid"]["laprls"] if r["stage"] == 2] == [
        pytest.approx(np.sqrt(10))
    ]
    assert all(r["protocol"] == QUICK.digest() for r in records)
    table3 = (quick_run / "table3.md").read_text()
    assert "QUICK MODE" in table3 and "Summary:" in table3 and "| w7a |" in table3
    assert "Speed-up with all BLAS threads" in (quick_run / "speedup.md").read_text()


def test_rerun_skips_recorded_work_and_force_redoes_it(quick_run):
    before = (quick_run / "records.jsonl").read_text()
    argv = ["paper000", "--quick", "--datasets", "space_ga", "--out", str(quick_run)]
    assert main(argv) == 0
    assert (quick_run / "records.jsonl").read_text() == before  # nothing recomputed
    assert main(argv + ["--force", "--skip", "speedup,figures"]) == 0
    records = _records(quick_run)
    assert len(records) > before.count("\n")
    runs = [json.loads(x) for x in (quick_run / "runs.jsonl").read_text().splitlines()]
    last = runs[-1]["run"]
    table = [r for r in records if r["experiment"] in ("table", "cv")]
    latest = {(r["experiment"], r["method"], r["repeat"]): r["run"] for r in table}
    assert set(latest.values()) == {last}  # every table record was redone by the forced run


def test_reports_are_rendered_from_the_records(quick_run):
    path = quick_run / "records.jsonl"
    records = _records(quick_run)
    for r in records:
        if r["experiment"] == "table" and r["method"] == "Nyström-PCG":
            r["rmse"] = 123.456
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = ["paper000", "--quick", "--datasets", "space_ga"]
    assert main(argv + ["--out", str(quick_run), "--render-only"]) == 0
    row = next(
        x for x in (quick_run / "table2.md").read_text().splitlines() if x.startswith("| space_ga")
    )
    assert "| 123.5 |" in row


def test_the_old_command_name_is_a_deprecated_alias(quick_run, capsys):
    argv = ["nystrom", "--quick", "--out", str(quick_run), "--render-only"]
    assert main(argv) == 0
    assert "deprecated: use semiscale-bench paper000" in capsys.readouterr().err


def test_records_of_another_protocol_are_refused(quick_run, capsys):
    argv = ["paper000", "--datasets", "space_ga", "--out", str(quick_run), "--render-only"]
    assert main(argv) == 2  # the full protocol must not read the quick records
    assert "another protocol" in capsys.readouterr().err


def test_cli_lists_benchmarks_and_rejects_unknown_ones(capsys):
    assert main(["list"]) == 0
    assert "paper000" in capsys.readouterr().out
    assert main(["paper999"]) == 2
    assert "unknown benchmark 'paper999'" in capsys.readouterr().err
    assert main(["paper000", "--datasets", "mars", "--quick", "--render-only"]) == 2
    assert "unknown dataset 'mars'" in capsys.readouterr().err


def test_protocol_reproduces_the_documented_plan():
    sizes = PROTOCOL.sizes
    a9a, a8a = sizes("a9a", 32561, 123), sizes("a8a", 22696, 123)
    assert (a9a.n_train, a9a.m, a9a.s) == (22793, 2279, 2280)
    assert PROTOCOL.plan("LapRLS-direct", "a9a", a9a)[0] == []
    assert PROTOCOL.plan("LapRLS-direct", "a8a", a8a)[0] == [0]
    phishing = sizes("phishing", 11055, 68)
    assert PROTOCOL.plan("LapRLS-direct", "phishing", phishing)[0] == list(range(5))
    skin = sizes("skin_nonskin", 245057, 3)
    assert skin.s == 3000 and PROTOCOL.centers("skin_nonskin", 171540, 0.1) == 17154
    assert PROTOCOL.plan("Nyström-PCG", "skin_nonskin", skin)[0] == [0]
    assert PROTOCOL.plan("Nyström-CG", "skin_nonskin", skin)[0] == []
    assert PROTOCOL.plan("Nyström-PCG (uniform centers)", "skin_nonskin", skin)[0] == []
    assert midpoints([1e-3, 0.1, 10.0], 0.1) == pytest.approx([0.01, 1.0])
    assert midpoints([1e-3, 0.1, 10.0], 10.0) == pytest.approx([1.0])
    assert midpoints([1e-4], 1e-4) == []


def test_a_study_reads_the_papers_cv_records(quick_run):
    out = quick_run.parent / "fit_breakdown"
    argv = ["fit_breakdown", "--quick", "--datasets", "space_ga", "--out", str(out)]
    assert main(argv) == 0
    (cv,) = [r for r in _records(out) if r["experiment"] == "cv"]
    theirs = [r for r in _records(quick_run) if r["experiment"] == "cv"][-1]  # the last wins
    assert cv["params"] == theirs["params"] and str(quick_run) in cv["source"]
    assert "| space_ga | 1 |" in (out / "fit_breakdown.md").read_text()
    assert main([*argv[:3], "madelon", *argv[4:], "--force"]) == 2  # no CV record of madelon
