"""Paper 003 (Hou, Zhang & Zhou: storage fit learning with unlabeled data, IJCAI 2017) §4.

``semiscale-bench paper003`` runs into ``./semiscale-bench/paper003/`` (records in
``records.jsonl``, resumable; the committed run: ``--out benchmarks/results/paper003``) and
renders the reports from the records (:mod:`.report`):

* ``table3`` (:mod:`.table3`): Table 3, AUC on the unlabeled rows with 10 % labeled, every
  method's parameters by 5-fold CV on the labeled rows, on the shared sets (australian, german,
  splice, svmguide3): 1-NN, Harmonic, CMN, TSVM, ClusK, SoCK, NysCK as the paper, NysCK's
  literal reading (Nyström of K), and semiscale's Poisson, LapRLS and LapSVC as extra rows.
* ``budget`` (:mod:`.budget`): Figure 1 / Table 2, adult-a (a9a) and w8a with 1,000 and 3,000
  labels under 200/400/600 MB: TSVM+RandSub, ClusK+RandSub, SoCK and NysCK, each fit in a fresh
  process whose peak memory above the loaded data is measured.
* ``sock_curve`` (:mod:`.sock_curve`): Figure 2, SoCK's AUC against its time as T doubles,
  NysCK and ClusK as points, on splice and a kr-vs-kp stand-in.

``summary.md`` holds the issue's targets as PASS/FAIL lines, the paper's statements
(:mod:`.paper`) and the protocol (:mod:`.protocol`).
"""

from __future__ import annotations

from semiscale_bench.harness import Benchmark
from semiscale_bench.paper003.budget import run_budget
from semiscale_bench.paper003.methods import METHODS
from semiscale_bench.paper003.protocol import PROTOCOL, QUICK
from semiscale_bench.paper003.sock_curve import run_sock_curve
from semiscale_bench.paper003.table3 import run_table3

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]


def render(bench, protocol, store, out):
    """:func:`.report.render`, imported when called: a budget child (which imports this
    package) then does not load the reports' plotting and statistics modules."""
    from semiscale_bench.paper003.report import render as render_reports

    return render_reports(bench, protocol, store, out)


BENCHMARK = Benchmark(
    name="paper003",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(
        ("table3", run_table3),
        ("budget", run_budget),
        ("sock_curve", run_sock_curve),
    ),
    render=render,
    results="benchmarks/results/paper003",
)
