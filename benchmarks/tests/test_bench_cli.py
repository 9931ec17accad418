"""The ``semiscale-bench`` command: its default folder, its help, its list."""

from semiscale_bench.cli import main


def test_bench_writes_in_the_current_directory_by_default(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    assert main(["paper000", "--quick", "--render-only"]) == 0
    out, err = capsys.readouterr()
    folder = Path("semiscale-bench", "quick", "paper000")
    paths = [Path(line) for line in out.splitlines()]
    assert paths and all(p.parent == folder and (tmp_path / p).is_file() for p in paths)
    assert f"wrote {len(paths)} files in {folder}" in err
    assert main(["paper000", "--quick", "--render-only", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_bench_help_states_the_default_folder():
    from semiscale_bench.cli import build_parser

    (out,) = [a for a in build_parser()._actions if a.dest == "out"]
    assert out.default is None  # decided by the harness: ./semiscale-bench/NAME
    assert "./semiscale-bench/NAME" in out.help and "benchmarks/results/NAME" in out.help


def test_list_names_every_benchmark(capsys):
    from semiscale_bench.harness import CATALOG

    assert main(["list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(CATALOG)


def test_an_unknown_benchmark_is_an_error_naming_the_list(capsys):
    assert main(["no-such-paper", "--quick"]) == 2
    assert "semiscale-bench: error:" in capsys.readouterr().err
