"""One fit in a fresh Python process, so that its peak resident memory is its own."""

from __future__ import annotations

import json
import subprocess
import sys

__all__ = ["run_child"]


def run_child(code: str, spec: dict) -> dict:
    """Run ``python -c code`` with ``spec`` as JSON on stdin; its last stdout line, parsed.

    ``code`` reads the spec from stdin and prints one JSON record last.  A process that dies
    (out of memory, an exception) gives a record with ``error`` (the end of its stderr) and no
    warnings, so a benchmark records the failure and goes on.
    """
    proc = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(spec), capture_output=True, text=True
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = " ".join(proc.stderr.split())[-300:]
        return {"error": f"subprocess exited with {proc.returncode}: {tail}", "warnings": []}
    return json.loads(lines[-1])
