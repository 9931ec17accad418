"""Few labels per class: semiscale's classifiers at their defaults beside LabelSpreading.

``semiscale-bench few-labels`` (issue 12, part 5) runs three experiments into
``./semiscale-bench/few_labels/`` (the committed run: ``--out benchmarks/results/few_labels``):

- ``fits`` (:mod:`.fits`, transductive): per dataset, the default ``KNNGraph()`` is built once
  on all points (its seconds recorded as the ``graph`` record) and its Laplacian is given to
  every semiscale fit; per trial and label count one draw of labeled points serves every method;
- ``inductive`` (:mod:`.inductive`): fit on a training pool, ``predict`` held-out points;
- ``scaling`` (:mod:`.scaling`): two moons from 10,000 to 1,000,000 points, end to end, each fit
  in a subprocess for its peak memory.

``--skip`` selects: ``--skip fits,inductive`` runs the scaling experiment alone.  The reports
(:mod:`.report`): a Markdown table per dataset, ``inductive.md``, ``scaling.md``, the plot, and
``summary.md`` with issue 12's targets as PASS/FAIL lines (:mod:`.targets`).
"""

from __future__ import annotations

from semiscale_bench.few_labels.data import draw_labels, load
from semiscale_bench.few_labels.fits import run_fits
from semiscale_bench.few_labels.inductive import run_inductive
from semiscale_bench.few_labels.methods import METHODS
from semiscale_bench.few_labels.protocol import PROTOCOL, QUICK
from semiscale_bench.few_labels.report import render
from semiscale_bench.few_labels.scaling import run_scaling
from semiscale_bench.harness import Benchmark

__all__ = ["BENCHMARK", "PROTOCOL", "QUICK", "draw_labels", "load"]


BENCHMARK = Benchmark(
    name="few_labels",
    protocol=PROTOCOL,
    quick_protocol=QUICK,
    methods=METHODS,
    experiments=(("fits", run_fits), ("inductive", run_inductive), ("scaling", run_scaling)),
    render=render,
    results="benchmarks/results/few_labels",
)
