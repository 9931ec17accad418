"""The speed part of the bif_newton study: exact t-CV against the default t-BIF, CPU seconds.

A plain script beside ``semiscale-bench bif_newton``: the CPU time is the work done only with one
BLAS thread, which must be set before Python starts (``OPENBLAS_NUM_THREADS=1``), so this part
runs alone.  It appends the cases not yet in ``OUT/speed.json``
(:func:`semiscale_bench.studies.bif_newton.speed`); the study's README shows them once
re-rendered.  Run::

    OPENBLAS_NUM_THREADS=1 SEMISCALE_DATA=/work/shared/datasets \\
        python benchmarks/scripts/bif_newton_speed.py --out benchmarks/results/bif_newton
    semiscale-bench bif_newton --render-only --out benchmarks/results/bif_newton
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from semiscale_bench.studies.bif_newton import speed

SCRIPT = "benchmarks/scripts/bif_newton_speed.py"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the bif_newton study's folder")
    args = parser.parse_args(argv)
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        parser.error("set OPENBLAS_NUM_THREADS=1 before starting: CPU seconds count one thread")
    args.out.mkdir(parents=True, exist_ok=True)
    argv = sys.argv[1:] if argv is None else list(argv)
    speed(args.out, command=" ".join(["OPENBLAS_NUM_THREADS=1 python", SCRIPT, *argv]))


if __name__ == "__main__":
    main()
