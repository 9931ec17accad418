"""Settings and records of paper 002's timing experiment (Figure 5), shared by its run and report.

The sizes, methods, the paper's kernel and graph, the targets, and the experiment's own record
store: :mod:`.timing` runs the fits, :mod:`.timing_report` renders them; both read this module
(so neither imports the other's module for its settings).
"""

from __future__ import annotations

from pathlib import Path

#: Methods in the order they are run and drawn: the kernel's solver, or the cubic construction.
METHODS = {
    "amg": "AMG-CG (CG preconditioned by smoothed-aggregation AMG)",
    "cg": "Jacobi CG",
    "direct": "sparse direct (LU)",
    "exact": "cubic construction, eq. (4) on all n points",
}
#: Time exponent of each method, to predict its next size's time from its last (a cap).
GROWTH = {"amg": 1.2, "cg": 1.5, "direct": 1.5, "exact": 3.0}
#: A method other than AMG-CG runs at a size only when its predicted time is at most this
#: (else: capped); AMG-CG runs at every size (the targets are its times).
CAP_SECONDS = 60.0
#: A fit still running after this is killed and recorded as such.
TIMEOUT_SECONDS = 1200.0
#: Fits faster than this are repeated, REPEATS fits in all (the median is recorded).
REPEAT_BELOW_SECONDS = 10.0
REPEATS = 3
#: Peak resident memory allowed at the largest size (the target), stated before the run: the
#: n × n̂ matrix Z (2 GB in float64 at n = 10⁶, n̂ = 250) with the CG work blocks, the AMG hierarchy
#: and the graph must fit; an n × n matrix (8 TB at 10⁶) cannot.
MEMORY_BUDGET_BYTES = 6 * 2**30

#: The paper's §5.3 setting.  gamma: the paper's "γ = 1" read as the RBF's exp(−γ‖x − x'‖²).
KERNEL = {"power": 1, "eta": 1.0, "n_landmarks": 250, "gamma": 1.0, "ridge": 1e-3}
#: The paper's graph (§5.1) with the non-normalized Laplacian of §5.3.
GRAPH = {"n_neighbors": 5, "weights": "binary", "symmetrize": "union", "normalized": False}
#: The paper's largest timed point: 64,000 MNIST digits in about 3 minutes (Figure 5, §5.3).
PAPER_POINT = (64_000, 180.0)
#: The targets: construction at n = TARGET_N within TARGET_SECONDS; every 8× in n at most
#: LINEAR_RATIO × the time (AMG-CG).
TARGET_N, TARGET_SECONDS, LINEAR_RATIO = 64_000, 20.0, 10.0

_FULL = {
    "digits": {
        "sizes": (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000),
        "methods": ("amg", "cg", "direct", "exact"),
        "source": "extended_usps",
    },
    "moons": {
        "sizes": (15_625, 125_000, 250_000, 500_000, 1_000_000),
        "methods": ("amg", "cg", "direct"),
        "source": "moons",
    },
}
_QUICK = {
    "digits": {"sizes": (200, 400), "methods": tuple(METHODS), "source": "usps"},
    "moons": {"sizes": (250, 2_000), "methods": ("amg", "cg", "direct"), "source": "moons"},
}
#: Quick runs (a smoke test, in seconds): fewer landmarks, one fit each, in this process.
_QUICK_KERNEL = {**KERNEL, "n_landmarks": 20}
#: make_extended_usps options of the digits (76,455 rows: enough for 64,000).
_EXTENDED = {"digits": tuple(range(10)), "train_copies": 5, "test_copies": 1, "random_state": 0}
_MOONS_NOISE = 0.1
DATA_NOTE = (
    "Data: digits, the first n rows of one seeded permutation (seed 0) of an extended USPS of "
    "the ten digits (make_extended_usps(digits=0..9, train_copies=5, test_copies=1, "
    "random_state=0): USPS's 7,291 training digits and 80 % of MNIST's test digits resized to "
    "16 × 16, each with four random affine copies: 76,455 rows × 256 pixels); moons, "
    "make_two_moons(n, noise=0.1, random_state=0) in 2-D. kNN search: KNNGraph's "
    "method='auto' (recorded per size: brute force or HNSW on digits, k-d tree on moons)."
)


def families(protocol) -> dict:
    """Family -> sizes, methods and data source: the quick variant for a quick protocol."""
    return _QUICK if protocol.quick else _FULL


def kernel_settings(protocol) -> dict:
    return dict(_QUICK_KERNEL if protocol.quick else KERNEL)


def _spec(protocol, family: str) -> dict:
    """What a record was made with, besides (n, method): compared on a rerun."""
    source = families(protocol)[family]["source"]
    data = {"source": source}
    if source == "extended_usps":
        data.update(_EXTENDED, digits=list(_EXTENDED["digits"]))
    elif source == "moons":
        data["noise"] = _MOONS_NOISE
    return {"kernel": kernel_settings(protocol), "graph": dict(GRAPH), "data": data}


PAPER = "paper002"


def _setting(n: int) -> str:
    return f"n={n}"


class _Records:
    """What :func:`~semiscale_bench.harness.report.header` reads of a protocol."""

    def __init__(self, quick: bool, name: str):
        self.quick, self.name = quick, name

    def digest(self) -> str:
        return self.name


def experiment_store(store, protocol, name: str, *, start: bool = False):
    """The experiment's own records: ``<store's folder>/<name>/records.jsonl``.

    Its settings are this module's constants, not the protocol's knobs (the learning curves'),
    so its records are kept apart, under a fixed digest ``name``, and every record carries its
    settings (``spec``), compared on a rerun: a change of the protocol's knobs keeps them, a
    change of these constants redoes them.  ``start``: open a run (the command, machine and
    code of the run that ``store`` is recording).
    """
    from semiscale_bench.harness.records import RecordStore

    sub = RecordStore(Path(store.folder) / name, PAPER, name, force=store.force)
    if start:
        from semiscale_bench.harness.machine import machine_info
        from semiscale_bench.harness.study import git_output

        info = {"command": getattr(store, "command", None)}
        for row in RecordStore._read(Path(store.folder) / "runs.jsonl"):
            if row.get("run") == store.run_id and not row.get("end"):
                info = {k: row[k] for k in ("command", "machine", "code") if k in row}
        info.setdefault("machine", machine_info())
        info.setdefault("code", git_output("describe", "--always", "--dirty"))
        sub.start_run(**info)
    return sub


def _current(store, protocol, family, method, n):
    """The record of (family, method, n) if it was made with the current settings, else None."""
    rec = store.get("timing", family, method, 0, _setting(n))
    if rec is None or store.force or rec.get("spec") != _spec(protocol, family):
        return None
    return rec
