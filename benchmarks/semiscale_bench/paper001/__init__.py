"""Paper 001 (Tsang & Kwok, NIPS 2006, SLapCVM) §4 reproduced: Figures 1 and 2.

``semiscale-bench paper001`` runs three experiments into ``./semiscale-bench/paper001/``
(records in ``records.jsonl``, resumable; the committed results in
``benchmarks/results/paper001/`` are updated with ``--out benchmarks/results/paper001``) and
renders the reports from the records (:mod:`.report`):

* ``validation``: per dataset, LapSVM's, the reduced LapSVM's and Nyström LapRLS's
  (ambient_reg, intrinsic_reg) chosen on a small validation set, as the paper tunes its "other
  parameters" (:func:`~semiscale_bench.harness.curves.run_validation`);
* ``fig1``: two moons with one labeled point per class and u = 1,000 to 1,000,000 unlabeled
  points: test accuracy on 5,000 points, fit and graph seconds, peak memory (each fit in its
  own process) and kernel expansions, for SLapCVM (the study's setting and the paper's
  mμ = 1), LapSVM, the reduced LapSVM (r = 200), Nyström LapRLS and the SVM on the labeled
  points (``fig1.md``, ``fig1.png``);
* ``fig2``: the same on USPS's digits 1 and 2 and on an extended USPS of distorted USPS and
  MNIST-test digits (:func:`semiscale.datasets.make_extended_usps`; r = 2,000)
  (``fig2.md``, ``fig2.png``).

``summary.md`` has the issue's targets as PASS / FAIL / not measured lines (:mod:`.targets`),
the paper's statements (:mod:`.paper`) and the protocol with every cap and its reason
(:mod:`.protocol`).  The extended MIT face set (§4.3, Figure 3) is not available.

The figures are size curves on the shared harness (:mod:`semiscale_bench.harness.curves`):
this package holds the paper's protocol, methods, problems (:mod:`.data`), targets and report.
"""

from __future__ import annotations

from functools import partial

from semiscale_bench.harness import Benchmark
from semiscale_bench.harness.curves import run_curves, run_validation
from semiscale_bench.paper001.data import CURVES
from semiscale_bench.paper001.methods import METHODS
from semiscale_bench.paper001.protocol import PROTOCOL, QUICK
from semiscale_bench.paper001.report import render

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK"]

BENCHMARK = Benchmark(
    name="paper001",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(
        ("validation", run_validation),
        ("fig1", partial(run_curves, experiment="fig1")),
        ("fig2", partial(run_curves, experiment="fig2")),
    ),
    render=render,
    curves=CURVES,
    results="benchmarks/results/paper001",
)
