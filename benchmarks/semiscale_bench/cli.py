"""The ``semiscale-bench`` command: reproduce a paper's results or run a study.

``semiscale-bench list`` names the benchmarks; ``semiscale-bench NAME`` runs one.  Records go
to ``OUT/records.jsonl`` and are reused, so a rerun skips recorded work.  Argument parsing and
printing only: the work is in :mod:`semiscale_bench.harness`.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["build_parser", "main"]

#: Old benchmark names, still accepted with a deprecation line on stderr.
_ALIASES = {"nystrom": "paper000"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="semiscale-bench",
        description="Reproduce a paper's results or run a study. Records go to "
        "OUT/records.jsonl and are reused: a rerun skips recorded work.",
    )
    parser.add_argument("benchmark", help="`list`, or a benchmark name (paper000, ...)")
    parser.add_argument(
        "--datasets", default=None, help="comma-separated dataset names (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny subsamples: a smoke test")
    parser.add_argument(
        "--out",
        default=None,
        help="records and reports folder (default: ./semiscale-bench/NAME, or "
        "./semiscale-bench/quick/NAME with --quick; the repository's committed results are "
        "updated only with an explicit --out benchmarks/results/NAME)",
    )
    parser.add_argument("--force", action="store_true", help="recompute work already recorded")
    parser.add_argument(
        "--skip", default=None, help="comma-separated experiments not to run (e.g. figures)"
    )
    parser.add_argument(
        "--render-only", action="store_true", help="only render the reports from the records"
    )
    parser.add_argument(
        "--download",
        action="store_true",
        help="download the datasets the run needs and lacks into $SEMISCALE_DATA (default "
        "~/.semiscale) before it starts; without it such a run stops at once, naming them",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars or log lines on stderr (results and errors still print)",
    )
    return parser


def _run(args) -> int:
    from .harness import CATALOG, load_benchmark, run_benchmark

    if args.benchmark == "list":
        width = max(map(len, CATALOG))
        for name, (_, line) in CATALOG.items():
            print(f"{name.ljust(width)}  {line}")
        return 0
    name = args.benchmark
    if name in _ALIASES:
        name = _ALIASES[name]
        print(
            f"semiscale-bench {args.benchmark} is deprecated: use semiscale-bench {name}",
            file=sys.stderr,
        )
    options = [
        (args.datasets, f"--datasets {args.datasets}"),
        (args.quick, "--quick"),
        (args.out, f"--out {args.out}"),
        (args.force, "--force"),
        (args.skip, f"--skip {args.skip}"),
        (args.render_only, "--render-only"),
        (args.download, "--download"),
    ]
    paths = run_benchmark(
        load_benchmark(name),
        datasets=args.datasets.split(",") if args.datasets else None,
        quick=args.quick,
        out=args.out,
        force=args.force,
        skip=args.skip.split(",") if args.skip else (),
        render_only=args.render_only,
        download=args.download,
        verbose=0 if args.quiet else 1,
        command=" ".join([f"semiscale-bench {name}"] + [text for given, text in options if given]),
    )
    for path in paths:
        print(path)
    return 0


def main(argv=None) -> int:
    from semiscale._progress import verbosity
    from semiscale.cli import _one_line

    args = build_parser().parse_args(argv)
    try:
        with verbosity(0 if args.quiet else 1):
            return _run(args)
    except (OSError, ValueError, ImportError) as exc:
        print(f"semiscale-bench: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("semiscale-bench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
