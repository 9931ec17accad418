"""Regenerate (or check) the program outputs that the user guide shows: ``make doc-numbers``.

Every output of a program that a page of ``docs/`` shows is a file of ``docs/_generated/``,
written by this script and shown by the page with ``{literalinclude}``; no page copies such an
output by hand.  Each entry of ``OUTPUTS`` is one command (an example script with its
arguments, or the ``semiscale-bench`` command), run as a user runs it, in a fresh interpreter
with single-threaded BLAS (as the test suite), from the repository root; its standard output
is the file.

    python tools/regenerate_doc_numbers.py            # rewrite every file (make doc-numbers)
    python tools/regenerate_doc_numbers.py --check    # compare instead; exit 1 on a difference
    python tools/regenerate_doc_numbers.py --only model_selection --check

The comparison (``--check``, and ``tests/test_examples.py`` and ``tests/test_doc_numbers.py``
in ``make test``) is exact text, except the wall-clock measurements, which change from run to
run: a number of seconds (``0.52 s``) and the process's peak memory (``max RSS: 305 MiB``) are
masked on both sides (``VOLATILE``).  Everything else -- accuracies, chosen parameters,
iteration counts, graph components, the memory a refused fit would need -- must be the same
digits: two runs on one machine print the same text but for those.  The entries marked
``slow`` (the million-point run: minutes and about 5 GiB) are rewritten by the default run
and checked by ``pytest -m slow tests/test_doc_numbers.py`` only.
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "docs" / "_generated"


@dataclass(frozen=True)
class Output:
    """One program output shown by the guide: ``docs/_generated/<name>.txt``."""

    name: str
    command: tuple  # argv; a first item ending in .py runs with this interpreter
    slow: bool = False
    timeout: int = 300

    @property
    def path(self):
        return GENERATED / f"{self.name}.txt"

    @property
    def command_line(self):
        """The command as a user types it, for messages."""
        first, *rest = self.command
        prefix = ["python", first] if first.endswith(".py") else [first]
        return " ".join(prefix + list(rest))


OUTPUTS = (
    Output("two_moons", ("examples/two_moons.py",)),
    Output("usps_few_labels", ("examples/usps_few_labels.py", "--seeds", "0,1,2,3,4")),
    Output("model_selection", ("examples/model_selection.py",)),
    Output("memory_budget", ("examples/memory_budget.py",)),
    Output("label_propagation", ("examples/label_propagation.py",)),
    Output(
        "memory_budget_1000000",
        ("examples/memory_budget.py", "--n-samples", "1000000", "--budgets", "6GiB,1GiB"),
        slow=True,
        timeout=1200,
    ),
    Output("semiscale_bench_list", ("semiscale-bench", "list")),
)

# Wall-clock measurements: masked before comparing (they are what a run may change).
VOLATILE = (
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)? s\b"), "<seconds> s"),
    (re.compile(r"max RSS: \d+ MiB"), "max RSS: <MiB> MiB"),
)


def by_name(name):
    for output in OUTPUTS:
        if output.name == name:
            return output
    raise KeyError(f"no output named {name!r}; the names are {[o.name for o in OUTPUTS]}")


def run(output):
    """Run ``output``'s command as a user would and return its standard output."""
    first, *rest = output.command
    if first.endswith(".py"):
        argv = [sys.executable, str(ROOT / first), *rest]
    else:  # a console script installed beside this interpreter (the venv's bin/)
        argv = [str(Path(sys.executable).with_name(first)), *rest]
    # One BLAS thread, as the test suite: the digits must not depend on the thread count.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=output.timeout, env=env, cwd=ROOT
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"`{output.command_line}` failed (exit {done.returncode}):\n"
            f"{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def mask(text):
    """``text`` with its wall-clock measurements replaced by placeholders."""
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def difference(output, printed):
    """None if ``printed`` matches the stored file of ``output``, else a message with a diff."""
    if not output.path.exists():
        return f"{output.path.relative_to(ROOT)} is missing: run `make doc-numbers`"
    stored = output.path.read_text()
    if mask(stored) == mask(printed):
        return None
    diff = difflib.unified_diff(
        mask(stored).splitlines(),
        mask(printed).splitlines(),
        f"{output.path.relative_to(ROOT)} (shown by the docs)",
        f"`{output.command_line}` now",
        lineterm="",
    )
    return (
        f"`{output.command_line}` no longer prints what the docs show "
        f"(times and peak memory ignored):\n" + "\n".join(diff) + "\n"
        "If the change is intended, run `make doc-numbers` and commit docs/_generated/ "
        "(and re-read the prose around the output in docs/)."
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--only", action="append", help="this output only (repeatable)")
    parser.add_argument("--skip-slow", action="store_true", help="leave out the slow outputs")
    args = parser.parse_args(argv)

    outputs = [by_name(name) for name in args.only] if args.only else list(OUTPUTS)
    if args.skip_slow:
        outputs = [output for output in outputs if not output.slow]
    GENERATED.mkdir(exist_ok=True)
    failed = False
    for output in outputs:
        print(f"{output.name}: {output.command_line}", file=sys.stderr, flush=True)
        printed = run(output)
        if args.check:
            message = difference(output, printed)
            if message:
                failed = True
                print(message, file=sys.stderr)
        else:
            output.path.write_text(printed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
