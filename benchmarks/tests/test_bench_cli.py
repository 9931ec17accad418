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


def _documented(pattern):
    """``(file, command)`` for every match of ``pattern`` in the docs that tell how to rerun."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    files += sorted((root / "benchmarks" / "results").glob("*/README.md"))
    found = []
    for path in files:
        text = re.sub(r"\\\n\s*", " ", path.read_text())  # shell line continuations
        found += [(path.name, m) for m in re.findall(pattern, text)]
    assert found, pattern
    return found


def test_every_documented_bench_command_names_a_benchmark_and_its_options():
    import shlex

    from semiscale_bench.cli import _ALIASES, build_parser
    from semiscale_bench.harness import Study, load_benchmark

    for where, command in _documented(r"semiscale-bench [^`\n]*"):
        words = shlex.split(command.split("#")[0].replace("[", "").replace("]", ""))[1:]
        if not words or any(w in ("NAME", "DIR", "a,b") for w in words):
            continue  # a template
        args = build_parser().parse_args(words)
        if args.benchmark == "list":
            continue
        bench = load_benchmark(_ALIASES.get(args.benchmark, args.benchmark))
        steps = bench.step_names if isinstance(bench, Study) else dict(bench.experiments)
        for step in args.skip.split(",") if args.skip else ():
            assert step in steps, (where, command)
        if isinstance(bench, Study):
            assert not (args.quick or args.datasets), (where, command)


def test_every_documented_script_exists():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for where, script in _documented(r"python (benchmarks/scripts/\w+\.py)"):
        if script != "benchmarks/scripts/NAME.py":
            assert (root / script).is_file(), (where, script)


def test_every_script_starts_and_explains_itself():
    import subprocess
    import sys
    from pathlib import Path

    scripts = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))
    assert len(scripts) >= 3
    for script in scripts:
        run = subprocess.run(
            [sys.executable, str(script), "--help"], capture_output=True, text=True
        )
        assert run.returncode == 0 and "--out" in run.stdout, (script.name, run.stderr[-500:])
