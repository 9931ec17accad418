"""The reproduction harness: protocol validation, records, registry, import isolation."""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from semiscale_bench.harness import Cap, Dataset, MethodRegistry, Protocol, RecordStore, Sizes
from semiscale_bench.harness.report import plan_notes

DATASETS = (Dataset("small", "housing"), Dataset("big", "a9a"), Dataset("gone", None, "lost"))


def make_protocol(**changes):
    base = {
        "paper": "toy",
        "datasets": DATASETS,
        "methods": ("fast", "slow"),
        "repeats": 3,
        "reduced_repeats": {"big": (2, "time")},
        "caps": {
            "slow": (
                Cap(0, "too big", n_train_above=1000),
                Cap(1, "one repeat on big", datasets=("big",)),
            )
        },
    }
    return Protocol(**{**base, **changes})


def test_plan_applies_caps_and_reduced_repeats_with_reasons():
    p = make_protocol()
    small, big = Sizes(100, 3, 70, 7, 7), Sizes(2000, 3, 1400, 140, 140)
    assert p.plan("fast", "small", small) == ([0, 1, 2], None)
    assert p.plan("fast", "big", Sizes(1000, 3, 700, 70, 70)) == ([0, 1], None)
    assert p.plan("slow", "big", Sizes(1000, 3, 700, 70, 70)) == ([0], "one repeat on big")
    assert p.plan("slow", "big", big) == ([], "too big")
    assert p.repeats_for("big") == (2, "time")
    notes = plan_notes(p, {"small": small, "big": big})
    assert notes == ["- all methods: time: big.", "- slow: too big: big."]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"labeled_fraction": 0.0}, "labeled_fraction must be in (0, 1]"),
        ({"repeats": 0}, "repeats must be a positive int"),
        ({"caps": {"nope": ()}}, "caps name unknown method 'nope'"),
        ({"caps": {"fast": (Cap(1, ""),)}}, "needs Cap(repeats >= 0, reason)"),
        ({"caps": {"fast": (Cap(1, "x", datasets=("mars",)),)}}, "unknown datasets ('mars',)"),
        ({"reduced_repeats": {"mars": (1, "x")}}, "reduced_repeats names unknown dataset 'mars'"),
        ({"reduced_repeats": {"big": 1}}, "reduced_repeats['big'] must be (repeats >= 1, reason)"),
        ({"methods": ("a", "a")}, "method names repeat"),
        ({"paper": ""}, "paper must name"),
    ],
)
def test_protocol_validation_errors_are_clear(changes, message):
    with pytest.raises(ValueError, match="invalid Protocol") as info:
        make_protocol(**changes)
    assert message in str(info.value)


def test_protocol_is_frozen_data_with_a_stable_digest():
    p = make_protocol()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.repeats = 5
    with pytest.raises(TypeError):
        p.reduced_repeats["small"] = (1, "x")  # mappings are read-only
    assert p.digest() == make_protocol().digest() != make_protocol(repeats=2).digest()
    assert json.dumps(p.as_dict())  # plain data
    with pytest.raises(ValueError, match="unknown dataset 'mars'; choose from"):
        p.dataset("mars")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        p.plan("nope", "small", Sizes(10, 1, 7, 2, 2))


def test_records_resume_replace_and_refuse_another_protocol(tmp_path):
    store = RecordStore(tmp_path, "toy", "aaa")
    store.start_run(command="first")
    store.put("table", "small", "fast", 0, rmse=1.0)
    store.put("table", "small", "fast", 1, rmse=2.0)
    again = RecordStore(tmp_path, "toy", "aaa")
    assert again.done("table", "small", "fast", 1) and not again.done("table", "small", "fast", 2)
    assert again.get("table", "small", "fast", 0)["rmse"] == 1.0
    again.start_run(command="second")
    again.put("table", "small", "fast", 0, rmse=3.0)  # a forced rerun replaces the record
    reread = RecordStore(tmp_path, "toy", "aaa")
    assert [r["rmse"] for r in reread.select("table", "small")] == [3.0, 2.0]
    assert [r["command"] for r in reread.runs()] == ["first", "second"]
    assert not RecordStore(tmp_path, "toy", "aaa", force=True).done("table", "small", "fast", 1)
    with pytest.raises(ValueError, match="another protocol .* --force"):
        RecordStore(tmp_path, "toy", "bbb")
    forced = RecordStore(tmp_path, "toy", "bbb", force=True)  # drops the other protocol's records
    assert forced.select() == [] and RecordStore(tmp_path, "toy", "bbb").select() == []


def test_registry_builds_with_the_methods_parameter_group():
    methods = MethodRegistry()

    @methods.register("RLS", params="rls", description="ridge")
    def rls(params, sizes, *, protocol, dataset, seed):
        return params["ambient_reg"], sizes, dataset, seed

    chosen = {"rls": {"ambient_reg": 0.5}, "laprls": {}}
    assert methods.build("RLS", chosen, "S", protocol=None, dataset="d", seed=3) == (
        0.5,
        "S",
        "d",
        3,
    )
    with pytest.raises(ValueError, match="reads parameter group 'rls'"):
        methods.build("RLS", {"laprls": {}}, None, protocol=None, dataset="d", seed=0)
    with pytest.raises(KeyError, match="unknown method 'nope'"):
        methods["nope"]
    with pytest.raises(ValueError, match="registered twice"):
        methods.register("RLS", params="rls", description="again")(rls)


def test_semiscale_and_estimators_never_import_the_harness():
    code = (
        "import sys, numpy as np, semiscale\n"
        "from semiscale import LapRLSRegressor, NystromLapRLSRegressor, KNNGraph\n"
        "import semiscale.model_selection\n"
        "X = np.random.default_rng(0).normal(size=(60, 2)); y = X[:, 0].copy(); y[10:] = np.nan\n"
        "NystromLapRLSRegressor(graph=KNNGraph(n_neighbors=5), n_centers=20).fit(X, y)\n"
        "print(sorted(m for m in sys.modules if m.startswith('semiscale_bench')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


# ---------------------------------------------------------------- issue 11: progress, --out
class _Mean:
    """A stand-in estimator: predicts the mean of the observed targets."""

    def fit(self, X, y, laplacian=None):
        self.mean_ = float(np.nanmean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def _toy_benchmark():
    """Two methods on housing, 2 repeats, "slow" capped to one: 3 fits in all."""
    from semiscale.graph import KNNGraph
    from semiscale_bench.harness import Benchmark, TableSpec, rmse, run_table

    methods = MethodRegistry()
    for name in ("fast", "slow"):
        methods.register(name, params="p", description="mean")(lambda *a, **k: _Mean())
    protocol = Protocol(
        paper="toy",
        datasets=(Dataset("small", "housing"),),
        methods=("fast", "slow"),
        repeats=2,
        caps={"slow": (Cap(1, "one repeat"),)},
    )
    table = TableSpec(
        graph=lambda protocol, seed: KNNGraph(n_neighbors=10),
        choose=lambda *args: {"params": {"p": {}}},
        score=lambda est, split: {"rmse": rmse(est.predict(split.X_test), split.y_test)},
        metric="rmse",
    )
    return Benchmark(
        name="toy",
        protocol=protocol,
        quick_protocol=protocol,
        methods=methods,
        experiments=(("tables", run_table),),
        render=lambda *args: [],
        table=table,
    )


@pytest.fixture
def _draw_every_state(monkeypatch):
    import semiscale._progress

    monkeypatch.setattr(semiscale._progress, "MIN_INTERVAL", 0)
    monkeypatch.setattr(semiscale._progress, "DRAW_BARS", True)  # the bar's states, not its line


def test_a_run_shows_a_bar_over_its_fits_and_counts_recorded_ones_as_done(
    tmp_path, capsys, _draw_every_state
):
    from semiscale_bench.harness import run_benchmark

    bench = _toy_benchmark()
    run_benchmark(bench, out=tmp_path, verbose=1)
    captured = capsys.readouterr()
    assert captured.out == ""  # progress and log lines go to stderr
    err = captured.err
    assert "toy tables:   0%" in err and "0/3" in err and "3/3" in err
    assert "small: fast, repeat 1" in err  # the postfix names the fit in progress
    assert "small: slow repeat 0: rmse" in err  # the log line, written above the bar

    run_benchmark(bench, out=tmp_path, verbose=1)  # resumed: every fit is recorded
    err = capsys.readouterr().err
    assert "toy tables: 100%" in err and "3/3" in err
    assert "0/3" not in err and "repeat 0: rmse" not in err

    run_benchmark(bench, out=tmp_path, verbose=0, force=True)  # refits, silently
    assert capsys.readouterr().err == ""
    records = RecordStore(tmp_path, "toy", bench.protocol.digest()).select("table")
    assert sorted((r["method"], r["repeat"]) for r in records if "rmse" in r) == [
        ("fast", 0),
        ("fast", 1),
        ("slow", 0),
    ]


def test_a_run_writes_in_the_current_directory_by_default_never_in_the_committed_results():
    from pathlib import Path

    from semiscale_bench.harness import CATALOG, load_benchmark
    from semiscale_bench.harness.benchmark import default_out

    for name in CATALOG:
        bench = load_benchmark(name)
        assert default_out(bench) == Path("semiscale-bench", name)
        assert default_out(bench, quick=True) == Path("semiscale-bench", "quick", name)
        assert bench.results == f"benchmarks/results/{name}"  # where maintainers keep them


def test_verdict_helpers_read_a_size_and_list_each_method_under_its_target():
    from types import SimpleNamespace

    from semiscale_bench.harness.verdicts import (
        Verdict,
        judge,
        mean_of,
        median_of,
        min_of,
        percent,
        verdict_lines,
    )

    recs = [{"accuracy": 0.9, "s": 3.0}, {"accuracy": 1.0, "s": 1.0}, {"accuracy": 0.95, "s": 2.0}]
    assert mean_of("accuracy")(recs) == pytest.approx(0.95)
    assert min_of("accuracy")(recs) == 0.9 and median_of("s")(recs) == 2.0
    assert percent(0.995) == "99.50 %"

    def check(protocol, store, method):
        return Verdict("PASS" if method == "a" else "FAIL", f"{method} in {store}")

    targets = (("t1", "first target", check), ("t2", "second target", check))
    protocol = SimpleNamespace(methods=("a", "b"))  # "c" is not run: not judged
    verdicts = judge(targets, ("a", "b", "c"), protocol, "store")
    assert set(verdicts) == {("t1", "a"), ("t1", "b"), ("t2", "a"), ("t2", "b")}
    assert verdict_lines(targets, ("a", "b", "c"), verdicts)[:3] == [
        "- first target:",
        "  - a: **PASS**: a in store",
        "  - b: **FAIL**: b in store",
    ]
