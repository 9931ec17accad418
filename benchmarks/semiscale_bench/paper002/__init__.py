"""Paper 002 (Lever, Diethe & Shawe-Taylor: data-dependent kernels in nearly-linear time) §5.

``semiscale-bench paper002`` runs into ``./semiscale-bench/paper002/`` (records in
``records.jsonl``, resumable; the committed run: ``--out benchmarks/results/paper002``) and
renders the reports from the records (:mod:`.report`):

* ``curves`` (:mod:`.learning`): Figures 2-3, test error against labels per class on Table 1's
  binary tasks where we have the data (letter D vs O, O vs Q; MNIST's test images 2 vs 3, 3 vs 8,
  4 vs 9; usps 3 vs 8, 4 vs 9; odd vs even on a 61,164-row extended USPS of ten digits) for
  scikit-learn's ``SVC`` on four kernels: the efficient data-dependent kernel (eq. 6; n̂ = 250,
  and 500 on the large task), the full LapSVM kernel (eq. 4) where n allows, the budget kernel
  (graph on the landmarks only) and the RBF kernel; (p, η, σ, C) chosen per trial and label
  count by stratified 5-fold CV on the labeled rows (:mod:`.protocol`).

* ``search_cost`` (:mod:`.search_cost`): what model selection costs when
  :class:`~semiscale.model_selection.SSLGridSearchCV` refits the kernel per grid point and fold,
  against the curves' one kernel per (trial, p) re-parameterised for η and σ.

* ``timing`` (:mod:`.timing`): Figure 5, the time to build the kernel against n (AMG-CG,
  Jacobi CG, sparse direct, the cubic construction), to 1,000,000 synthetic points;
* ``clustering`` (:mod:`.clustering`): Figure 4, kernel k-means on two moons with the Euclidean,
  full and efficient (n̂ = 40) kernels.

Each experiment's renderer writes its own files (``timing.*``, ``clustering.*``) and gives
``summary.md`` its PASS / FAIL lines.  ``curves.md`` and ``curves.png`` hold the learning
curves; ``summary.md`` the issue's targets as PASS / FAIL lines, the paper's statements beside
ours (:mod:`.paper`) and the protocol.
"""

from __future__ import annotations

from semiscale_bench.harness import Benchmark
from semiscale_bench.paper002.clustering import run_clustering
from semiscale_bench.paper002.learning import run_curves
from semiscale_bench.paper002.methods import METHODS
from semiscale_bench.paper002.protocol import PROTOCOL, QUICK
from semiscale_bench.paper002.report import render
from semiscale_bench.paper002.search_cost import run_search_cost
from semiscale_bench.paper002.timing import run_timing

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]

BENCHMARK = Benchmark(
    name="paper002",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(
        ("search_cost", run_search_cost),  # short: first, so a run cut short has it
        ("curves", run_curves),
        ("timing", run_timing),
        ("clustering", run_clustering),
    ),
    render=render,
    results="benchmarks/results/paper002",
)
