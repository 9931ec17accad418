"""Why LapRLS collapses at one label per class, and which scaling of intrinsic_reg fixes it.

The study (issue 12, part 3): its protocol and fits in :mod:`.fits` (the module docstring
describes them), its README in :mod:`.report`.  Run::

    semiscale-bench few_label_laprls --out benchmarks/results/few_label_laprls
"""

from semiscale_bench.harness.study import Study
from semiscale_bench.studies.few_label_laprls.fits import (
    run_full,
    run_grid,
    run_rules,
    run_sizes,
    summarize,
)
from semiscale_bench.studies.few_label_laprls.report import write_report

__all__ = ["BENCHMARK"]

BENCHMARK = Study(
    "few_label_laprls", (run_grid, run_sizes, run_rules, run_full), summarize, write_report
)
