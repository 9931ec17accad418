import json

import pytest

from semiscale.cli import main


def test_demo_laprls_beats_rls(capsys):
    assert main(["demo", "--plot", "", "--skip-real"]) == 0
    out, err = capsys.readouterr()
    # never silent: each stage is named on stderr while it runs (the results go to stdout)
    for stage in ("two moons: data", "two moons: RLS (supervised)", "two moons: LapRLS (exact)"):
        assert stage in err and stage not in out
    rows = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()}
    lap = float(rows["LapRLS (exact)"][2])
    rls = float(rows["RLS (supervised)"][2])
    assert lap >= 0.99
    assert rls < 0.9


def test_demo_draws_its_picture(tmp_path):
    pytest.importorskip(
        "matplotlib", reason="matplotlib not installed: pip install semiscale[plot]"
    )
    png = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(png), "--skip-real"]) == 0
    assert png.exists() and png.stat().st_size > 1000


def _record_n_jobs(monkeypatch):
    """Record the ``n_jobs`` of every kNN graph and Nyström estimator fitted."""
    from semiscale.graph import KNNGraph
    from semiscale.models import NystromLapRLSClassifier

    seen = []
    for klass in (KNNGraph, NystromLapRLSClassifier):
        fit = klass.fit

        def recording(self, *args, _fit=fit, **kwargs):
            seen.append((type(self).__name__, self.n_jobs))
            return _fit(self, *args, **kwargs)

        monkeypatch.setattr(klass, "fit", recording)
    return seen


def test_demo_uses_all_cores(monkeypatch):
    # the library's n_jobs=None means one thread; an interactive demo asks for all of them
    from semiscale._demo import run_demo, run_real_demo

    seen = _record_n_jobs(monkeypatch)
    run_demo(n_train=200, n_test=200)
    assert seen == [("KNNGraph", -1)]
    seen.clear()
    run_real_demo(n_train=300, n_labeled=30, random_state=0)
    assert sorted(set(seen)) == [("KNNGraph", -1), ("NystromLapRLSClassifier", -1)]


def test_demo_command_passes_n_jobs(monkeypatch, capsys):
    import semiscale._demo as demo

    calls = []

    def fake(**kwargs):
        calls.append(kwargs["n_jobs"])
        rows = [
            {
                "model": "m",
                "test_accuracy": 1.0,
                "transductive_accuracy": 1.0,
                "fit_seconds": 0.0,
                "graph_seconds": 0.0,
                "iterations": 1,
                "expansion_size": 1,
            }
        ]
        return {
            "n_train": 10,
            "n_labeled": 2,
            "n_test": 1,
            "rows": rows,
            "plot": None,
            "dataset": "d",
            "graph_seconds": 0.0,
        }

    monkeypatch.setattr(demo, "run_demo", fake)
    monkeypatch.setattr(demo, "run_real_demo", fake)
    assert main(["demo", "--plot", ""]) == 0
    assert main(["demo", "--plot", "", "--n-jobs", "2"]) == 0
    assert calls == [-1, -1, 2, 2]


def test_datasets_lists_embedded(capsys):
    assert main(["datasets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    a9a = [r for r in rows if r["name"] == "a9a" and r["split"] == "train"][0]
    assert a9a["n_samples"] == 32561
    assert a9a["location"] == "embedded"


def test_graph_report(capsys):
    assert main(["graph", "housing", "-k", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_samples"] == 506
    assert report["degree_min"] >= 5
    assert report["n_components"] >= 1
    assert report["seconds"] >= 0


def test_bad_dataset_is_a_clear_error(capsys):
    assert main(["graph", "no-such-dataset"]) == 2
    assert "no-such-dataset" in capsys.readouterr().err


def test_usage_error():
    with pytest.raises(SystemExit):
        main(["nonsense"])


def test_real_demo_runs_on_a_shipped_dataset():
    from semiscale._demo import run_real_demo

    result = run_real_demo(n_train=1200, n_labeled=60, random_state=0)
    names = [row["model"] for row in result["rows"]]
    assert names == ["RLS (supervised)", "LapRLS (exact, direct)", "Nyström-PCG"]
    for row in result["rows"]:
        assert 0.6 < row["test_accuracy"] <= 1.0
    assert result["rows"][2]["expansion_size"] == 120


# ------------------------------------------------------------------ issue 11: bad input
def _screen(err: str) -> list[str]:
    """The non-blank lines a terminal shows of ``err``: a progress line redrawn with '\r' (and
    erased with spaces when its stage ends) leaves only its last state."""
    shown = [line.split("\r")[-1] for line in err.split("\n")]
    return [line for line in shown if line.strip()]


def _one_line(err: str) -> str:
    lines = _screen(err)
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_version(capsys):
    import semiscale

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"semiscale {semiscale.__version__}"


def test_download_failure_is_one_line_with_the_fix(tmp_path, monkeypatch, capsys):
    import urllib.error
    import urllib.request

    def offline(*args, **kwargs):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path))
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    assert main(["graph", "w7a"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "w7a" in line and "download" in line.lower()
    assert "SEMISCALE_DATA" in line  # the fix: place the file there, or retry online


def test_data_dir_that_is_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    not_a_dir = tmp_path / "data.txt"
    not_a_dir.write_text("not a directory")
    monkeypatch.setenv("SEMISCALE_DATA", str(not_a_dir))
    for argv in (["graph", "w7a"], ["datasets"], ["datasets", "--json"]):
        assert main(argv) == 2, argv
        line = _one_line(capsys.readouterr().err)
        assert "SEMISCALE_DATA" in line and "not a directory" in line
        assert "unset it" in line  # the fix


@pytest.mark.parametrize("n_train", ["1", "0", "-5"])
def test_demo_with_too_few_points_is_clear(n_train, capsys):
    assert main(["demo", "--n-train", n_train, "--skip-real", "--plot", ""]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "--n-train" in line and "at least" in line


def test_every_option_has_help():
    import argparse

    from semiscale.cli import build_parser

    parser = build_parser()
    missing = []
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in subparsers[0].choices.items():
        for action in sub._actions:
            if not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help: {missing}"


def test_license_file_matches_the_package_metadata():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "LICENSE").read_text()
    assert "BSD 3-Clause License" in text
    assert "Copyright (c) 2026, the semiscale developers" in text
    assert "BSD-3-Clause" in (root / "pyproject.toml").read_text()


def test_unreachable_download_url_is_one_line_with_the_fix(tmp_path, monkeypatch, capsys):
    import socket

    from semiscale.datasets import registry

    with socket.socket() as s:  # a port on 127.0.0.1 that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    file = registry.DataFile("toy.svm", url=f"http://127.0.0.1:{port}/toy.svm")
    info = registry.DatasetInfo(
        name="toy", task="binary", n_features=5, splits=(registry.SplitInfo("train", 20, (file,)),)
    )
    monkeypatch.setitem(registry.REGISTRY, "toy", info)
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path))
    assert main(["graph", "toy"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("semiscale graph: error: toy: could not download toy.svm")
    assert f"127.0.0.1:{port}" in line and "Check the network" in line


# ------------------------------------------------------------------ issue 11: progress, --out
def test_quiet_silences_progress(capsys):
    argv = ["graph", "housing", "-k", "10", "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "loading housing" in err and "kNN graph of 506 points" in err
    assert json.loads(out)["n_samples"] == 506  # progress never reaches stdout
    for quiet in ("-q", "--quiet"):
        assert main(argv + [quiet]) == 0
        out, err = capsys.readouterr()
        assert err == "" and json.loads(out)["n_samples"] == 506


def test_the_library_command_has_no_bench():
    # the reproductions are the semiscale-bench command's (benchmarks/), not the library's
    from semiscale.cli import build_parser

    parser = build_parser()
    assert "bench" not in next(a for a in parser._actions if a.dest == "command").choices


def test_the_old_bench_command_names_its_replacement(capsys):
    assert main(["bench", "paper000", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "`semiscale-bench paper000 --quick`" in err and "pip install -e ./benchmarks" in err


@pytest.mark.parametrize("rows", ["0", "-5"])
def test_graph_refuses_a_max_samples_that_is_not_a_positive_row_count(rows, capsys):
    # Before: --max-samples -5 silently dropped the last 5 rows (X[:-5]).
    assert main(["graph", "housing", "--max-samples", rows, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--max-samples must be a positive number of rows, got {rows}" in err


def test_demo_help_says_where_the_picture_goes():
    from semiscale.cli import build_parser

    demo = next(a for a in build_parser()._actions if a.dest == "command").choices["demo"]
    (plot,) = [a for a in demo._actions if a.dest == "plot"]
    assert "./demo_output/two_moons.png" in plot.help


def test_datasets_table_pads_no_row_to_the_longest_location(capsys):
    # Before: every row was padded to the longest location (~230 columns).
    assert main(["datasets", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(line == line.rstrip() for line in lines)
    embedded = [line for line in lines if line.endswith("embedded")]
    assert embedded and max(map(len, embedded)) < 100
