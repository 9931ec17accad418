"""The reproduction harness: protocols as data, method registries, resumable records, reports.

Never imported by ``import semiscale`` or by an estimator.  A benchmark (a paper's reproduction
or a study, listed in :data:`CATALOG`) is a :class:`Benchmark`: a frozen :class:`Protocol`
(datasets, splits, repeats, per-method :class:`Cap` rules with their reasons, grids), a
:class:`MethodRegistry` of estimator factories, experiments that fill a :class:`RecordStore`
(JSON lines keyed by paper, experiment, dataset, method, setting and repeat; reruns skip what is
recorded) and a renderer that writes the reports from the records and the protocol alone.  A
study of the library's own choices is a lighter :class:`Study`: steps that fill one
``results.json``, and a README written from it.
"""

from semiscale_bench.harness.benchmark import (
    CATALOG,
    Benchmark,
    RunContext,
    load_benchmark,
    run_benchmark,
)
from semiscale_bench.harness.data import (
    Split,
    load_dense,
    make_split,
    minmax_scaler,
    n_labeled,
    rmse,
)
from semiscale_bench.harness.protocol import Cap, Dataset, Protocol, Sizes, knob
from semiscale_bench.harness.records import KEY, RecordStore
from semiscale_bench.harness.registry import Method, MethodRegistry
from semiscale_bench.harness.runner import (
    RETIME_BELOW_SECONDS,
    TableSpec,
    estimator_facts,
    measured_fit,
    run_table,
)
from semiscale_bench.harness.study import Study, run_study

__all__ = [
    "CATALOG",
    "KEY",
    "RETIME_BELOW_SECONDS",
    "Benchmark",
    "Cap",
    "Dataset",
    "Method",
    "MethodRegistry",
    "Protocol",
    "RecordStore",
    "RunContext",
    "Sizes",
    "Split",
    "Study",
    "TableSpec",
    "estimator_facts",
    "knob",
    "load_benchmark",
    "load_dense",
    "make_split",
    "measured_fit",
    "minmax_scaler",
    "n_labeled",
    "rmse",
    "run_benchmark",
    "run_study",
    "run_table",
]
