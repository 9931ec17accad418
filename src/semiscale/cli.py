"""The ``semiscale`` command: argument parsing and printing only; the work is in the library."""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["main"]


def _print_table(rows, columns):
    widths = [max(len(str(c)), *(len(str(r.get(c, ""))) for r in rows)) for c in columns]

    def line(cells):
        # the last column is not padded: a long value in one row must not pad every other row
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

    print(line(columns))
    print("  ".join(["-" * w for w in widths[:-1]] + ["-" * len(str(columns[-1]))]))
    for row in rows:
        print(line(row.get(c, "") for c in columns))


def _cmd_datasets(args):
    from .datasets import list_datasets

    rows = list_datasets()
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    from ._memory import format_bytes

    for row in rows:
        if isinstance(row.get("size"), (int, float)):
            row["size"] = format_bytes(row["size"])
    columns = ["name", "split", "n_samples", "n_features", "task", "size", "location"]
    _print_table(rows, [c for c in columns if any(c in r for r in rows)])
    return 0


def _cmd_graph(args):
    import numpy as np

    from ._measure import measure
    from ._progress import ticking_stage
    from .datasets import load_dataset
    from .graph import KNNGraph

    level = _level(args)
    with ticking_stage(f"loading {args.dataset}", level):
        # verbose: a download's bar and its "Downloaded" line, on stderr (also with --json)
        X, _ = load_dataset(args.dataset, split=args.split, verbose=bool(level))
    if args.max_samples is not None:
        if args.max_samples < 1:
            # a negative slice bound would silently drop rows from the end instead
            raise ValueError(
                f"--max-samples must be a positive number of rows, got {args.max_samples}; "
                "leave it out to use every row"
            )
        X = X[: args.max_samples]
    graph = KNNGraph(
        n_neighbors=args.n_neighbors,
        weights=args.weights,
        method=args.method,
        normalized=args.normalized,
        random_state=0,
    )
    with ticking_stage(f"kNN graph of {X.shape[0]} points", level), measure() as m:
        graph.fit(X)
    degree = np.diff(graph.adjacency_.indptr)
    report = {
        "dataset": args.dataset,
        "n_samples": X.shape[0],
        "n_features": X.shape[1],
        "n_neighbors": args.n_neighbors,
        "method": args.method,
        "seconds": round(m.seconds, 3),
        **{f"{k}_seconds": round(v, 3) for k, v in getattr(graph, "timings_", {}).items()},
        "peak_traced_MiB": round(m.peak_traced_bytes / 2**20, 1),
        "max_rss_MiB": round(m.max_rss_bytes / 2**20, 1),
        "n_edges": int(graph.adjacency_.nnz // 2),
        "degree_min": int(degree.min()),
        "degree_median": float(np.median(degree)),
        "degree_mean": round(float(degree.mean()), 2),
        "degree_max": int(degree.max()),
        "n_components": int(graph.n_components_),
        "bandwidth": float(graph.bandwidth_) if graph.bandwidth_ is not None else None,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:>18}: {value}")
    return 0


#: Fewest two-moons training points the demo accepts: one label per class and an 8-neighbour
#: graph need more than 8 points.
DEMO_MIN_TRAIN = 10


def _cmd_demo(args):
    from ._demo import run_demo, run_real_demo

    if args.n_train < DEMO_MIN_TRAIN:
        raise ValueError(
            f"--n-train must be at least {DEMO_MIN_TRAIN} (two moons with one label per class and "
            f"an 8-neighbour graph), got {args.n_train}; the default is 2000"
        )

    level = _level(args)
    result = run_demo(
        n_train=args.n_train,
        random_state=args.seed,
        plot_path=args.plot or None,
        verbose=level,
        n_jobs=args.n_jobs,
    )
    print(
        f"two moons: {result['n_train']} training points ({result['n_labeled']} labeled), "
        f"{result['n_test']} test points"
    )
    rows = [
        {
            "model": r["model"],
            "test acc": f"{r['test_accuracy']:.4f}",
            "transductive acc": f"{r['transductive_accuracy']:.4f}",
            "fit s": f"{r['fit_seconds']:.2f}",
            "graph s": f"{r['graph_seconds']:.2f}",
        }
        for r in result["rows"]
    ]
    _print_table(rows, list(rows[0]))
    if result["plot"]:
        print(f"picture: {result['plot']}")
    if args.skip_real:
        return 0
    real = run_real_demo(
        dataset=args.dataset, random_state=args.seed, verbose=level, n_jobs=args.n_jobs
    )
    print(
        f"\n{real['dataset']}: {real['n_train']} training points ({real['n_labeled']} labeled), "
        f"{real['n_test']} test points; graph built once in {real['graph_seconds']:.2f} s"
    )
    rows = [
        {
            "model": r["model"],
            "test acc": f"{r['test_accuracy']:.4f}",
            "fit s": f"{r['fit_seconds']:.2f}",
            "iterations": r["iterations"],
            "expansion": r["expansion_size"],
        }
        for r in real["rows"]
    ]
    _print_table(rows, list(rows[0]))
    return 0


COMMANDS = {
    "datasets": _cmd_datasets,
    "graph": _cmd_graph,
    "demo": _cmd_demo,
}


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="semiscale", description="Scalable graph-based semi-supervised learning."
    )
    parser.add_argument(
        "--version", action="version", version=f"semiscale {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    # Every command shows progress on stderr (bars, stage names, log lines); --quiet turns it
    # off and leaves the results on stdout and errors on stderr.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars or log lines on stderr (results and errors still print)",
    )

    p = sub.add_parser(
        "datasets", parents=[common], help="list the known datasets, their sizes and locations"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser(
        "graph", parents=[common], help="build a kNN graph on a dataset and report cost and shape"
    )
    p.add_argument("dataset", help="dataset name (see `semiscale datasets`)")
    p.add_argument("--split", default="train", help="dataset split (default: train)")
    p.add_argument(
        "-k", "--n-neighbors", type=int, default=8, help="neighbours per point (default: 8)"
    )
    p.add_argument(
        "--weights",
        choices=["heat", "binary"],
        default="heat",
        help="edge weights: heat kernel exp(-d²/2t²) or 1 (default: heat)",
    )
    p.add_argument(
        "--method",
        choices=["auto", "exact", "approximate"],
        default="auto",
        help="neighbour search: exact (brute force), approximate (ANN index) or auto by size",
    )
    p.add_argument(
        "--normalized", action="store_true", help="report the normalized Laplacian's graph"
    )
    p.add_argument("--max-samples", type=int, default=None, help="use only the first rows")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser(
        "demo",
        parents=[common],
        help="LapRLS vs RLS on two moons (one label per class), then Nyström-PCG vs RLS vs "
        "exact LapRLS on a real dataset",
    )
    p.add_argument(
        "--n-train",
        type=int,
        default=2000,
        help=f"two-moons training points (at least {DEMO_MIN_TRAIN}; default: 2000)",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed of data and labels")
    p.add_argument(
        "--plot",
        default="demo_output/two_moons.png",
        help="where the two-moons picture is written (default: ./demo_output/two_moons.png; "
        "'' for none)",
    )
    p.add_argument("--dataset", default="a9a", help="shipped real dataset for the second part")
    p.add_argument("--skip-real", action="store_true", help="run only the two-moons part")
    p.add_argument(
        "--n-jobs",
        type=int,
        default=-1,
        help="threads of the kNN searches and kernel blocks (default: -1, all cores; the "
        "library's estimators default to 1)",
    )

    return parser


def _check_data_dir() -> None:
    """``$SEMISCALE_DATA``, when set, must name a directory (it is created when missing)."""
    import os

    path = os.environ.get("SEMISCALE_DATA")
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(
            f"SEMISCALE_DATA={path} is a file, not a directory: point SEMISCALE_DATA at a folder "
            "for the datasets (it is created when missing) or unset it to use ~/.semiscale"
        )


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (multi-line messages joined with '; ')."""
    parts = [" ".join(line.split()) for line in str(exc).splitlines()]
    text = "; ".join(p for p in parts if p) or type(exc).__name__
    return text.replace(":;", ":")


def _download_hint(exc: OSError) -> str:
    from .datasets.fetch import DownloadError

    if isinstance(exc, DownloadError) and "SEMISCALE_DATA" not in str(exc):
        return " (check the network, or put the file in the directory named by $SEMISCALE_DATA)"
    return ""


#: Exit status after the reader of stdout went away: 128 + SIGPIPE, as for `yes | head`.
EXIT_BROKEN_PIPE = 141


def _discard_stdout() -> None:
    """Point stdout's file descriptor at the null device, so the exit's flush cannot fail."""
    import os

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # not a file (a caller's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _level(args) -> int:
    """The verbosity a command runs at: 1 (progress on stderr) unless ``--quiet``."""
    return 0 if getattr(args, "quiet", False) else 1


def main(argv=None) -> int:
    from ._progress import verbosity

    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        # The reproductions left the library for a package of their own (benchmarks/).
        print(
            "semiscale bench: error: the reproductions are the semiscale-bench command now: run "
            f"`semiscale-bench {' '.join(argv[1:]) or 'list'}` (installed by `make` from a "
            "clone of the repository, or `pip install -e ./benchmarks` there)",
            file=sys.stderr,
        )
        return 2
    args = build_parser().parse_args(argv)
    try:
        _check_data_dir()
        # The ambient level reaches the library's own progress (kNN search, kernel caching,
        # (P)CG iterations) without a verbose= on every object the command builds.
        with verbosity(_level(args)):
            code = COMMANDS[args.command](args)
        sys.stdout.flush()  # a reader that left (`| head`) shows here, not at the exit's flush
        return code
    except BrokenPipeError:
        # The reader closed the pipe: stop quietly, as Unix tools do, with the status a shell
        # reports for a command ended by SIGPIPE.
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # downloads, the data directory, missing files
        print(
            f"semiscale {args.command}: error: {_one_line(exc)}{_download_hint(exc)}",
            file=sys.stderr,
        )
        return 2
    except (ValueError, ImportError) as exc:
        print(f"semiscale {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"semiscale {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
