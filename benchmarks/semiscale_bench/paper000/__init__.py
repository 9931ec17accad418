"""Paper 000 (Li et al., IJCAI 2019) §7 reproduced: Nyström-PCG vs RLS and exact LapRLS.

``semiscale-bench paper000`` runs three experiments into ``./semiscale-bench/paper000/``
(records in ``records.jsonl``, resumable; the committed results in
``benchmarks/results/paper000/`` are updated with ``--out benchmarks/results/paper000``) and
renders the reports from the records:

* ``tables``: Tables 2-3 (:mod:`.report`): test RMSE, iterations, fit time, peak memory and the
  PASS/FAIL targets, ours beside the paper's (:mod:`.paper`), every method (:mod:`.methods`) on
  the protocol's splits (:mod:`.protocol`), hyper-parameters from each dataset's CV record
  (:mod:`.cv`);
* ``speedup``: exact LapRLS against Nyström-PCG at n = 20,000 (``speedup.md``);
* ``figures``: Figures 1-2, RMSE against the labeled and the center proportion
  (``fig1.png``, ``fig2.png``, ``sweeps.md``).
"""

from __future__ import annotations

from semiscale_bench.harness import Benchmark, TableSpec, rmse, run_table
from semiscale_bench.harness.report import write_text
from semiscale_bench.harness.speedup import render_speedup, run_speedup
from semiscale_bench.harness.sweeps import render_sweeps, run_sweeps
from semiscale_bench.paper000.cv import choose
from semiscale_bench.paper000.methods import METHODS, make_graph
from semiscale_bench.paper000.protocol import PROTOCOL, QUICK
from semiscale_bench.paper000.report import table2, table3

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]


def _score(est, split) -> dict:
    return {"rmse": rmse(est.predict(split.X_test), split.y_test)}


def render(bench, protocol, store, out) -> list[str]:
    """table2.md, table3.md, speedup.md and the figures, from the records that exist."""
    paths = [
        write_text(out, "table2.md", table2(bench, protocol, store)),
        write_text(out, "table3.md", table3(bench, protocol, store)),
    ]
    speedup = render_speedup(protocol, store, "rmse")
    if speedup:
        paths.append(write_text(out, "speedup.md", speedup))
    return paths + render_sweeps(protocol, store, out, "rmse")


BENCHMARK = Benchmark(
    name="paper000",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(("tables", run_table), ("speedup", run_speedup), ("figures", run_sweeps)),
    render=render,
    table=TableSpec(graph=make_graph, choose=choose, score=_score, metric="rmse"),
    results="benchmarks/results/paper000",
)
