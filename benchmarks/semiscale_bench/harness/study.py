"""A study: fits recorded in one ``results.json``, then summarized into its README.

The lighter kind of benchmark, for a question about the library's own defaults or algorithms
rather than a paper's tables: no datasets-by-methods protocol, but a few steps that each fit
what is not yet recorded.  It runs with the same command as a reproduction
(``semiscale-bench NAME``, see :data:`~semiscale_bench.harness.benchmark.CATALOG`) and the same
options: ``--out`` (default ``./semiscale-bench/NAME``), ``--force`` (start again), ``--skip``
(steps not to run this time), ``--render-only`` (rewrite the README from the records).

A step is ``step(records, save)``: it appends one dict per fit to ``records`` and calls
``save()`` after each, so an interrupted run resumes where it stopped.  At the end
``summarize(records)`` is stored as ``results["summary"]`` and ``write_report(results, out)``
writes the README from ``results`` alone (records, summary, machine, commit, command).

What every study does the same way lives here, so that a study is its protocol, its fits and
its tables: the keys of the fits already recorded (:func:`recorded`), mean ± std per group of
records (:func:`group_stats`, :func:`mean_std`), the README's "Produced by" line
(:func:`produced_by`, :func:`legacy_command`) and the README itself (:func:`write_readme`).
"""

from __future__ import annotations

import json
import platform
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semiscale._progress import log as progress_log

__all__ = [
    "DATA",
    "SHARED_MACHINE",
    "Study",
    "command_of",
    "commit_hash",
    "git_output",
    "group_stats",
    "legacy_command",
    "mean_std",
    "produced_by",
    "recorded",
    "run_study",
    "write_readme",
]


def git_output(*args: str) -> str | None:
    """What ``git ARGS`` prints in the checkout this code runs from; None where it fails."""
    try:
        out = subprocess.run(
            ["git", *args],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def commit_hash() -> str:
    """The short hash of the HEAD of the checkout this code runs from (``"unknown"`` outside)."""
    return git_output("rev-parse", "--short", "HEAD") or "unknown"


def step_name(step: Callable) -> str:
    """The name ``--skip`` knows a step by: its function's name without ``run_`` or ``_``."""
    return step.__name__.lstrip("_").removeprefix("run_")


@dataclass(frozen=True)
class Study:
    """One study.

    Parameters
    ----------
    name : str
        Its name in the catalog and on the command line.
    steps : tuple of callable
        ``step(records, save)`` in order; each skips the fits already in ``records``.
    summarize : callable
        ``summarize(records) -> summary`` (JSON-able), stored beside the records.
    write_report : callable
        ``write_report(results, out)``: the README (and any figure) in folder ``out``.
    results : str
        The repository folder of its committed results; ``benchmarks/results/NAME`` when not
        given.
    """

    name: str
    steps: tuple
    summarize: Callable
    write_report: Callable
    results: str = field(default="")

    def __post_init__(self):
        if not self.results:
            object.__setattr__(self, "results", f"benchmarks/results/{self.name}")

    @property
    def step_names(self) -> list[str]:
        return [step_name(step) for step in self.steps]


def run_study(
    study: Study,
    out,
    *,
    force: bool = False,
    skip=(),
    render_only: bool = False,
    command: str | None = None,
    verbose: int = 1,
) -> list[str]:
    """Run ``study``'s steps into ``out / "results.json"`` (resuming), then write its README.

    Parameters
    ----------
    out : path-like
        The study's folder: ``results.json`` (records, summary, machine, commit, command) and
        the report.
    force : bool
        Drop the recorded fits and start again.
    skip : iterable of str
        Steps not to run this time (:attr:`Study.step_names`).
    render_only : bool
        Only rewrite the report from the recorded fits (``results.json`` is left as it is).
    command : str, optional
        The command line recorded with the results.

    Returns
    -------
    list of str
        The files written.
    """
    unknown = set(skip) - set(study.step_names)
    if unknown:
        raise ValueError(
            f"cannot skip {sorted(unknown)}: the steps of study {study.name!r} are "
            f"{study.step_names}"
        )
    out = Path(out)
    path = out / "results.json"
    if render_only:
        if not path.exists():
            raise FileNotFoundError(
                f"--render-only: no records in {path}; run `semiscale-bench {study.name} "
                f"--out {out}` first"
            )
        results = json.loads(path.read_text())
        results["summary"] = study.summarize(results["records"])
        study.write_report(results, out)
        return [str(out / "README.md")]
    out.mkdir(parents=True, exist_ok=True)
    records = [] if force or not path.exists() else json.loads(path.read_text())["records"]
    results = {
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "commit": commit_hash(),
        "command": command or f"semiscale-bench {study.name} --out {out}",
        "records": records,
    }

    def save():
        path.write_text(json.dumps(results, indent=1))

    for step in study.steps:
        if step_name(step) not in skip:
            start = time.perf_counter()
            step(records, save)
            progress_log(
                f"[bench {study.name} {time.strftime('%H:%M:%S')}] {step_name(step)}: "
                f"{time.perf_counter() - start:.0f} s",
                verbose,
            )
    results["summary"] = study.summarize(records)
    save()
    study.write_report(results, out)
    return [str(path), str(out / "README.md")]


def command_of(results: dict, legacy: str) -> str:
    """The command line recorded with ``results``; ``legacy`` for records older than that field.

    Records written before the studies joined ``semiscale-bench`` hold no command: their
    README keeps naming the command that produced them.
    """
    return results.get("command", legacy)


#: The environment the studies that read the stored datasets were run with.
DATA = "SEMISCALE_DATA=/work/shared/datasets "

#: The end of the "Produced by" line of a README whose seconds were measured on a shared machine.
SHARED_MACHINE = " (2 cores, shared: seconds are indicative)."


def legacy_command(name: str, prefix: str = "") -> str:
    """The command study ``name`` ran with before it joined ``semiscale-bench``.

    ``python -m semiscale.bench.studies.NAME --out benchmarks/results/NAME`` after ``prefix``
    (:data:`DATA` for the studies that read the stored datasets): the module was inside the
    library until the reproductions left it, and that command no longer runs (rerun with
    ``semiscale-bench NAME``).  The README of records older than the recorded command names
    it (:func:`command_of`): the command that produced them, not today's.
    """
    return f"{prefix}python -m semiscale.bench.studies.{name} --out benchmarks/results/{name}"


def produced_by(results: dict, legacy: str, machine: str = ".") -> str:
    """The README line that names the command, the commit and the machine of ``results``.

    ``machine`` ends the line after the Python version: ``"."``, :data:`SHARED_MACHINE` or a
    study's own words on its timings.
    """
    return (
        f"Produced by `{command_of(results, legacy)}` (commit {results['commit']}); protocol "
        f"in that module's docstring. Machine: {results['machine']['platform']}, Python "
        f"{results['machine']['python']}{machine}"
    )


def write_readme(out, lines) -> None:
    """Write ``lines`` as ``out/README.md``, one line each and a final newline."""
    (Path(out) / "README.md").write_text("\n".join(lines) + "\n")


def recorded(records, fields, where: Callable | None = None) -> set:
    """The keys (values of ``fields``, in order) of the ``records`` already fitted.

    A step skips the fits whose key is in this set, so a rerun resumes; ``where(record)``
    keeps only the records of one kind.
    """
    return {tuple(r[f] for f in fields) for r in records if where is None or where(r)}


def group_stats(
    records,
    keys,
    *,
    value: str = "accuracy",
    count: str = "trials",
    medians=(),
    more: Callable | None = None,
    where: Callable | None = None,
) -> list[dict]:
    """Mean and std of ``value`` over the records of each group, in the order first met.

    A group is the records that agree on ``keys``; its row holds the keys, the number of
    records (``count``), ``mean`` and ``std`` (population std) of ``value``, the median of each
    field in ``medians``, and ``more(group)``'s fields.  ``where(record)`` keeps only the
    records of one kind.
    """
    groups = {}
    for r in records:
        if where is None or where(r):
            groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    rows = []
    for key, group in groups.items():
        values = [r[value] for r in group]
        row = {**dict(zip(keys, key)), count: len(group)}
        row.update(mean=float(np.mean(values)), std=float(np.std(values)))
        row.update({m: float(np.median([r[m] for r in group])) for m in medians})
        row.update(more(group) if more is not None else {})
        rows.append(row)
    return rows


def mean_std(row: dict, digits: int = 1) -> str:
    """``row``'s ``mean ± std`` as percentages: ``"81.3 ± 2.0"``."""
    return f"{100 * row['mean']:.{digits}f} ± {100 * row['std']:.{digits}f}"
