"""Building blocks of reports rendered from records and the protocol (Markdown).

Nothing here holds numbers or prose about a paper: tables are built from records, the protocol
section from the protocol's fields and their reasons (:func:`~.protocol.knob`), the notes from
its caps, and PASS/FAIL lines from :class:`Target` checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semiscale_bench.harness.protocol import Dataset

__all__ = [
    "Target",
    "fmt",
    "header",
    "md_table",
    "pass_fail",
    "plan_notes",
    "protocol_section",
    "summarize",
    "targets_section",
    "write_text",
]

MIB = 2**20


def md_table(columns, rows) -> list[str]:
    """A Markdown table (list of lines)."""
    out = ["| " + " | ".join(map(str, columns)) + " |", "|" + "---|" * len(columns)]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def fmt(x, digits: int = 4) -> str:
    """A number in ``digits`` significant digits (``/`` for None; 3 digits in e-notation)."""
    if x is None:
        return "/"
    if abs(x) >= 1000 or (abs(x) < 1e-3 and x != 0):
        return f"{x:.3g}"
    return f"{x:.{digits}g}"


def pass_fail(flag) -> str:
    return "—" if flag is None else ("PASS" if flag else "FAIL")


def write_text(folder, name: str, lines) -> str:
    """Write ``lines`` (a list, or one string) to ``folder/name``; returns the path."""
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = lines if isinstance(lines, str) else "\n".join(lines)
    path.write_text(text.rstrip("\n") + "\n")
    return str(path)


def summarize(records: list[dict], metric: str) -> dict:
    """Mean ± std of ``metric``, medians of iterations and times, maxima of memory.

    Records with an ``error`` are left out; an empty dict when none is left.
    """
    ok = [r for r in records if "error" not in r]
    if not ok:
        return {}
    values = np.array([r[metric] for r in ok])
    loop = [(r.get("phase_seconds") or {}).get("iterations") for r in ok]
    return {
        "mean": float(values.mean()),
        "std": float(values.std(ddof=1)) if values.size > 1 else 0.0,
        "iterations_median": float(np.median([r["iterations"] for r in ok])),
        "iterations_max": int(max(r["iterations"] for r in ok)),
        "fit_seconds_median": float(np.median([r["fit_seconds"] for r in ok])),
        "loop_seconds_median": None if None in loop else float(np.median(loop)),
        "peak_traced_bytes_max": int(max(r["peak_traced_bytes"] for r in ok)),
        "max_rss_bytes": int(max(r["max_rss_bytes"] for r in ok)),
        "converged_all": all(r["converged"] for r in ok),
        "n_repeats": len(ok),
        "repeats": [r["repeat"] for r in ok],
    }


def _machine_line(machine: Mapping) -> str:
    blas = ", ".join(
        f"{b.get('internal_api')} {b.get('version')} ({b.get('num_threads')} threads)"
        for b in machine.get("blas", [])
    )
    return (
        f"{machine.get('cpu_count')} cores, {machine.get('platform')}, Python "
        f"{machine.get('python')}, numpy {machine.get('numpy')}, BLAS {blas}"
    )


def header(title: str, protocol, runs: list[dict]) -> list[str]:
    """Title, the runs whose records the report shows (command, machine, time), quick mark."""
    lines = [f"# {title}", ""]
    if protocol.quick:
        lines += ["**QUICK MODE: tiny subsamples, not the benchmark.**", ""]
    lines += [f"Records: `records.jsonl` (protocol digest {protocol.digest()}), from:", ""]
    for run in runs:
        took = f", {run['wall_seconds']:.0f} s" if "wall_seconds" in run else " (interrupted)"
        parts = run.get("experiment_seconds") or {}
        took += f" ({', '.join(f'{k} {v:.0f} s' for k, v in parts.items())})" if parts else ""
        code = f" (code {run['code']})" if run.get("code") else ""
        lines.append(f"- run {run['run']}{code}{took}: `{run.get('command', '?')}`")
    machines = {_machine_line(r["machine"]) for r in runs if "machine" in r}
    lines += [""] + [f"Machine: {m}." for m in sorted(machines)]
    return lines + ["The machine may be shared with other jobs: times are noisy.", ""]


def _value(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], Dataset):
        return ", ".join(d.name for d in value)
    if dataclasses.is_dataclass(value):  # Sweep, Speedup, Cap: their non-empty fields
        fields = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
        shown = [f"{k}={_value(v)}" for k, v in fields if v not in (None, (), {}, False, "")]
        return f"{type(value).__name__}({', '.join(shown)})"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_value(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def protocol_section(protocol, methods) -> list[str]:
    """The protocol as a table of its knobs (value and reason), its methods and data notes."""
    rows = [
        [name, _value(value), why]
        for name, value, why in protocol.knobs()
        if name not in ("caps", "paper")  # caps: in the notes, per dataset
    ]
    lines = ["## Protocol", ""] + md_table(["knob", "value", "why"], rows) + ["", "Methods:", ""]
    lines += [f"- {name}: {methods[name].description}" for name in protocol.methods]
    notes = [f"- {d.name}: {d.note}" for d in protocol.datasets if d.note]
    return lines + (["", "Data:", ""] + notes if notes else []) + [""]


def plan_notes(protocol, sizes: Mapping, records=()) -> list[str]:
    """One line per (method, reason) naming the datasets it applies to, then recorded errors.

    ``sizes`` maps each dataset run to its :class:`~.protocol.Sizes`.
    """
    grouped: dict[tuple, list] = {}
    for name, size in sizes.items():
        reason = protocol.repeats_for(name)[1]
        if reason:
            grouped.setdefault(("all methods", reason), []).append(name)
        for meth in protocol.methods:
            reason = protocol.plan(meth, name, size)[1]
            if reason:
                grouped.setdefault((meth, reason), []).append(name)
    lines = [
        f"- {meth}: {reason}: {', '.join(names)}." for (meth, reason), names in grouped.items()
    ]
    lines += [
        f"- {r['dataset']} / {r['method']} repeat {r['repeat']}: ERROR {r['error']}"
        for r in records
        if "error" in r
    ]
    return lines


@dataclass(frozen=True)
class Target:
    """A PASS/FAIL target checked per dataset.

    ``check(dataset) -> (cell text, passed)`` or None where the target does not apply
    (``passed`` None: reported, not judged).
    """

    name: str
    summary: str
    check: Callable


def targets_section(targets, datasets) -> list[str]:
    """Per-dataset table of every target, then one summary line per target (all must pass)."""
    rows, verdicts = [], {t.name: [] for t in targets}
    for name in datasets:
        row = [name]
        for t in targets:
            result = t.check(name)
            if result is None:
                row.append("—")
                continue
            text, passed = result
            row.append(text if passed is None else f"{text} {pass_fail(passed)}")
            if passed is not None:
                verdicts[t.name].append(passed)
        rows.append(row)
    lines = ["## Targets (PASS/FAIL; reported, nothing tuned on the test split)", ""]
    lines += md_table(["dataset"] + [t.name for t in targets], rows) + ["", "Summary:", ""]
    for t in targets:
        v = verdicts[t.name]
        lines.append(f"- {t.summary}: **{pass_fail(all(v) if v else None)}**")
    return lines
