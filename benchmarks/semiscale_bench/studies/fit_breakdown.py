"""Where a Nyström-PCG fit's time goes, phase by phase, next to paper 000's Table 3 time.

Paper 000's protocol and splits, Nyström-PCG alone, with the hyper-parameters of paper 000's
run (its CV records in the ``paper000`` folder beside this run's: ``benchmarks/results/paper000/``
for the committed results).  Per phase, the median over the repeats of the seconds the
estimator records in ``solver_info_``: center selection, the right-hand side ``z = K_msᵀy``, the
preconditioner and the PCG loop (which fills the K_ns cache, if at all, once the uncached
products have cost as much as filling it); "rest" is the fit's wall time minus the phases (input
checks, λ scaling, training predictions).  The paper does not say what its Table 3 time covers;
its Nyström-CG times (phishing: 300 iterations in 2.47 s) fit matrix-vector products alone, so
the PCG loop is the closest like-for-like column.  skin_nonskin is left out (minutes per fit).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from semiscale_bench.harness import Benchmark, run_table
from semiscale_bench.harness.report import header, md_table, write_text
from semiscale_bench.harness.runner import choices_from
from semiscale_bench.paper000 import BENCHMARK as PAPER000
from semiscale_bench.paper000.paper import TABLE3_ITER_TIME, paper_value

PHASES = ("centers", "rhs", "preconditioner", "iterations")
LABELS = ("centers", "z = K_msᵀy (K_ns cache)", "preconditioner", "PCG loop", "rest")


def _protocol(paper):
    return dataclasses.replace(
        paper,
        paper="fit_breakdown",
        datasets=tuple(d for d in paper.datasets if d.name != "skin_nonskin"),
        methods=("Nyström-PCG",),
        reduced_repeats={k: v for k, v in paper.reduced_repeats.items() if k != "skin_nonskin"},
        caps={},
        sweeps=(),
        speedup=None,
    )


def render(bench, protocol, store, out) -> list[str]:
    lines = header(
        "Nyström-PCG fit, phase by phase (seconds, median over repeats)", protocol, store.runs()
    )
    rows = []
    for ds in protocol.datasets:
        recs = [r for r in store.select("table", ds.name, "Nyström-PCG") if "error" not in r]
        if not recs:
            continue
        phases = [[r["phase_seconds"][p] for r in recs] for p in PHASES]
        rest = [r["fit_seconds"] - sum(r["phase_seconds"][p] for p in PHASES) for r in recs]
        fit = float(np.median([r["fit_seconds"] for r in recs]))
        medians = [float(np.median(v)) for v in (*phases, rest)]
        paper = paper_value(TABLE3_ITER_TIME, ds.name, "Nyström-PCG")
        rows.append(
            [ds.name, len(recs), f"{np.median([r['iterations'] for r in recs]):g}", f"{fit:.3g}"]
            + [f"{m:.3g} ({100 * m / fit:.0f} %)" for m in medians]
            + [paper[1] if paper else "/"]
        )
    cv = store.select("cv")
    source = cv[0]["source"] if cv else "none yet"
    lines += [f"Hyper-parameters: the CV records of {source}.", ""]
    lines += md_table(["dataset", "repeats", "PCG iterations", "fit s", *LABELS, "paper s"], rows)
    return [write_text(out, "fit_breakdown.md", lines)]


BENCHMARK = Benchmark(
    name="fit_breakdown",
    protocol=_protocol(PAPER000.protocol),
    quick_protocol=_protocol(PAPER000.quick_protocol),
    methods=PAPER000.methods,
    experiments=(("tables", run_table),),
    render=render,
    table=dataclasses.replace(PAPER000.table, choose=choices_from("paper000")),
    results="benchmarks/results/fit_breakdown",
)
