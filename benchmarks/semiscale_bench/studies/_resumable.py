"""The driver shared by the standalone studies that keep their fits in one ``results.json``.

A study appends one record per fit and saves after each, so an interrupted run resumes where it
stopped (``--force`` starts again); at the end it summarizes the records and writes its report.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
from pathlib import Path

__all__ = ["commit_hash", "run_study"]


def commit_hash() -> str:
    """The short hash of the checkout's HEAD (``"unknown"`` outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def run_study(argv, description, steps, summarize, write_report):
    """Parse ``--out``/``--force``, run ``step(records, save)`` for each step, then report.

    ``summarize(records)`` is stored as ``results["summary"]`` and ``write_report(results,
    out)`` writes the study's README.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, required=True, help="results folder")
    parser.add_argument("--force", action="store_true", help="redo the recorded fits")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    records = [] if args.force or not path.exists() else json.loads(path.read_text())["records"]
    results = {
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "commit": commit_hash(),
        "records": records,
    }

    def save():
        path.write_text(json.dumps(results, indent=1))

    for step in steps:
        step(records, save)
    results["summary"] = summarize(records)
    save()
    write_report(results, args.out)
    return results
