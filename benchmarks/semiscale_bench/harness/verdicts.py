"""Targets judged from the records: PASS, FAIL, or "not measured" with the reason, never PASS.

A :class:`Verdict` is one target's outcome for one method.  :func:`size_cells` gathers a method's
records of one dataset size by size (an error on any planned repeat fails the size; planned
repeats not all recorded leave it not measured); :func:`combine` turns per-size outcomes into a
verdict: a measured miss is a FAIL, a target with unmeasured points and no miss is "not
measured".
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Verdict", "combine", "size_cells"]


@dataclass(frozen=True)
class Verdict:
    """``status`` is ``"PASS"``, ``"FAIL"`` or ``"not measured"``; ``detail`` says why."""

    status: str
    detail: str

    def text(self) -> str:
        return f"**{self.status}**" + (f": {self.detail}" if self.detail else "")


def size_cells(spec, protocol, store, name: str, method: str) -> dict:
    """u -> (records of every planned repeat, None) or (None, why not measured, or the error).

    ``spec`` is the benchmark's :class:`~semiscale_bench.harness.curves.CurveSpec`.
    """
    experiment = spec.experiment(protocol, name)
    out = {}
    for u in spec.sizes(protocol, name):
        repeats, reason = protocol.plan(method, name, spec.plan_sizes(protocol, name, u))
        recs = [
            r
            for r in store.select(experiment, name, method)
            if r["setting"] == f"u={u}" and r["repeat"] in repeats
        ]
        errors = [r for r in recs if "error" in r]
        ok = [r for r in recs if "error" not in r]
        if not repeats:
            out[u] = (None, reason)
        elif errors:
            out[u] = (None, f"ERROR {errors[0]['error']}")
        elif len(ok) < len(repeats):
            out[u] = (None, f"not run yet ({len(ok)} of {len(repeats)} repeats)")
        else:
            out[u] = (ok, None)
    return out


def combine(fails: list[str], missing: list[str], passes: list[str]) -> Verdict:
    """FAIL if anything failed (the unmeasured listed too), else not measured, else PASS."""
    if fails:
        extra = f"; not measured: {'; '.join(missing)}" if missing else ""
        return Verdict("FAIL", "; ".join(fails) + extra)
    if missing:
        return Verdict("not measured", "; ".join(missing))
    return Verdict("PASS", "; ".join(passes))
