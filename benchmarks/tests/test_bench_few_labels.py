"""``semiscale-bench few-labels --quick``: records, tables, targets; protocol, splits, targets."""

import dataclasses
import json

import numpy as np
import pytest

from semiscale_bench.cli import main
from semiscale_bench.few_labels import BENCHMARK, PROTOCOL, draw_labels, load
from semiscale_bench.few_labels.inductive import pool_split
from semiscale_bench.few_labels.peers import GraphLearningClassifier, graphlearning_available
from semiscale_bench.few_labels.protocol import TARGET_MOONS
from semiscale_bench.few_labels.scaling import current, scaling_spec
from semiscale_bench.few_labels.targets import (
    oracle_gain,
    target_a,
    target_b,
    target_c,
    target_d,
    target_e,
)
from semiscale_bench.harness import RecordStore


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One ``--quick`` run's folder, shared by the tests of its outputs."""
    out = tmp_path_factory.mktemp("few_labels_quick")
    assert main(["few-labels", "--quick", "--out", str(out), "-q"]) == 0
    return out


def ours(record):
    return record["method"] != "sklearn LabelSpreading" and not record["method"].startswith(
        "GraphLearning"
    )


def test_quick_run_writes_records_tables_and_every_method(quick_run):
    tmp_path = quick_run
    protocol = BENCHMARK.quick_protocol
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    fits = [r for r in records if r["experiment"] == "fits" and r["method"] in protocol.methods]
    assert {r["method"] for r in fits} == set(protocol.methods)
    assert len(fits) == len(protocol.methods) * len(protocol.per_class) * protocol.repeats
    for r in fits:
        if r["method"].startswith("GraphLearning") and not graphlearning_available():
            assert "graphlearning is not installed" in r["error"], r
            continue
        assert "error" not in r, r
        assert 0.0 <= r["accuracy"] <= 1.0 and r["fit_seconds"] >= 0
        assert r["graph_given"] == ours(r)
        if r["method"].startswith("GraphLearning"):  # the peer's own graph, timed apart
            assert r["graph_seconds"] > 0 and r["fit_seconds_with_graph"] > r["fit_seconds"]
    table = (tmp_path / "two_moons.md").read_text()
    summary = (tmp_path / "summary.md").read_text()
    for method in protocol.methods:
        assert f"| {method} |" in table
    # the seconds table: a peer's own graph timed apart is excluded, LabelSpreading's included
    ends = {line.split(" |")[0][2:]: line for line in table.splitlines() if line.startswith("| ")}
    assert ends["sklearn LabelSpreading"].endswith("| included |")
    if graphlearning_available():
        assert ends["GraphLearning Poisson-MBO"].endswith("| excluded |")
    assert "QUICK MODE" in table and "GraphLearning" in summary and "sdist" in summary
    # a rerun resumes: nothing is refitted
    assert main(["few_labels", "--quick", "--out", str(tmp_path), "-q"]) == 0
    again = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(again) == len(records)


def test_quick_run_has_inductive_scaling_and_targets(quick_run):
    tmp_path = quick_run
    protocol = BENCHMARK.quick_protocol
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    inductive = [r for r in records if r["experiment"] == "inductive" and r["method"] != "sizes"]
    n_trials = len(protocol.per_class) * protocol.repeats
    assert len(inductive) == len(protocol.inductive_methods) * n_trials
    for r in inductive:
        assert "error" not in r, r
        assert 0.0 <= r["accuracy"] <= 1.0 and r["predict_seconds"] >= 0
        ours = r["method"] != "sklearn LabelSpreading"
        assert (r["graph_seconds"] is not None) == ours
        if ours:
            assert 0 < r["graph_seconds"] <= r["fit_seconds"]
    scaling = [r for r in records if r["experiment"] == "scaling"]
    assert {(r["method"], r["setting"]) for r in scaling} == {
        (m, f"n={n}") for m in protocol.scaling_methods for n in protocol.scaling_n
    }
    for r in scaling:
        assert "error" not in r, r
        assert r["accuracy"] > 0.9 and r["iterations"] > 0 and r["params"] == {}
        assert r["max_rss_bytes"] >= r["max_rss_before_fit_bytes"] > 0
        assert 0 < r["graph_seconds"] <= r["fit_seconds"]
    summary = (tmp_path / "summary.md").read_text()
    assert "## Targets" in summary and "## inductive: two moons" in summary
    assert "| Poisson |" in (tmp_path / "inductive.md").read_text()
    assert "peak RSS" in (tmp_path / "scaling.md").read_text()
    for line in ("**NOT RUN** (a)", "(b) `NystromLapRLSClassifier()`", "**NOT RUN** (c)"):
        assert line in summary
    # issue 32's: two moons is not a target dataset, so (d) and (e) judge nothing; (f) shows it
    for line in ("**NOT RUN** (d)", "**NOT RUN** (e)", "| two moons | 1 |", "gain (points)"):
        assert line in summary
    assert "| Poisson-MBO |" in (tmp_path / "inductive.md").read_text()


def test_label_draws_are_seeded_per_trial_and_count_and_shared():
    y = np.repeat(np.arange(3), 20)
    a, b = draw_labels(y, 3, trial=1), draw_labels(y, 3, trial=1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, draw_labels(y, 3, trial=2))
    for c in range(3):
        assert np.count_nonzero(a == c) == 3
    assert np.count_nonzero(a == -1) == y.size - 9


def test_pool_split_is_seeded_disjoint_and_complete():
    pool, test = pool_split(100, 0.8, seed=0)
    assert pool.size == 80 and test.size == 20
    np.testing.assert_array_equal(np.sort(np.concatenate([pool, test])), np.arange(100))
    np.testing.assert_array_equal(pool, pool_split(100, 0.8, seed=0)[0])
    assert not np.array_equal(pool, pool_split(100, 0.8, seed=1)[0])


def test_mnist_is_the_test_split():
    assert PROTOCOL.split_of("mnist") == "test" and PROTOCOL.split_of("usps") == "train"
    try:
        X, y = load(PROTOCOL, "mnist")
    except FileNotFoundError:
        pytest.skip("the MNIST test files are not in the data directory")
    assert X.shape == (10000, 784) and X.min() >= 0.0 and X.max() <= 1.0
    assert set(np.unique(y)) == set(range(10))


def test_the_data_check_looks_for_the_split_the_run_loads(tmp_path, monkeypatch):
    # Before: a run with mnist stopped at once ("mnist: not in the data directory"), its
    # check looking for the 60,000 training images where the protocol loads the test ones.
    from semiscale.datasets import registry
    from semiscale_bench.harness import Dataset
    from semiscale_bench.harness.benchmark import _check_data
    from semiscale_bench.harness.data import MissingDataError

    train, test = registry.DataFile("train.svm"), registry.DataFile("test.svm")
    info = registry.DatasetInfo(
        name="twosplits",
        task="multiclass",
        n_features=2,
        splits=(registry.SplitInfo("train", 5, (train,)), registry.SplitInfo("test", 3, (test,))),
    )
    monkeypatch.setitem(registry.REGISTRY, "twosplits", info)
    (tmp_path / "twosplits").mkdir()
    (tmp_path / "twosplits" / "test.svm").write_text("1 1:0 2:1\n")
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path))
    datasets = (Dataset("d", "twosplits"),)
    protocol = dataclasses.replace(
        BENCHMARK.quick_protocol, datasets=datasets, inductive_datasets=(), splits={"d": "test"}
    )
    _check_data(protocol, ["d"], None, False, print, 0)  # the test split is there
    with pytest.raises(MissingDataError, match="twosplits: not in the data directory"):
        _check_data(dataclasses.replace(protocol, splits={}), ["d"], None, False, print, 0)


def test_scaling_knobs_are_out_of_the_digest_and_in_the_records(tmp_path):
    changed = dataclasses.replace(PROTOCOL, scaling_n=(5,), scaling_params={"Poisson": {"tol": 1}})
    assert changed.digest() == PROTOCOL.digest()
    assert dataclasses.replace(PROTOCOL, per_class=(2,)).digest() != PROTOCOL.digest()
    store = RecordStore(tmp_path, PROTOCOL.paper, PROTOCOL.digest())
    spec = scaling_spec(PROTOCOL, "Poisson")
    store.put("scaling", "two moons", "Poisson", 0, "n=10", n=10, **spec, accuracy=1.0)
    assert current(store, PROTOCOL, "two moons", "Poisson", 10) is not None
    assert current(store, changed, "two moons", "Poisson", 10) is None  # refitted
    with pytest.raises(ValueError, match="unknown methods"):
        dataclasses.replace(PROTOCOL, scaling_methods=("nope",))


def _put(store, experiment, dataset, method, k, accuracy, trials=2, seconds=1.0):
    for t in range(trials):
        store.put(
            experiment, dataset, method, t, f"{k}/class", accuracy=accuracy, fit_seconds=seconds
        )


def test_targets_are_computed_from_the_records(tmp_path):
    protocol = dataclasses.replace(PROTOCOL, per_class=(1,), inductive_datasets=("usps",))
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    assert target_a(protocol, store)[0] == "NOT RUN"
    for name in ("usps", "mnist"):
        _put(store, "fits", name, "Harmonic", 1, 0.8)
        _put(store, "fits", name, "Poisson", 1, 0.9)
        _put(store, "fits", name, "sklearn LabelSpreading", 1, 0.7)
    verdict, rows = target_a(protocol, store)
    assert verdict == "PASS" and rows[0][2] == "Poisson 90.0"
    # GraphLearning's records, where present, are the references, and time counts
    for name in ("usps", "mnist"):
        for method, acc in (("GraphLearning Laplace", 0.85), ("GraphLearning Poisson", 0.88)):
            for t in range(2):
                store.put("fits", name, method, t, "1/class", accuracy=acc, fit_seconds=1.0)
    verdict, rows = target_a(protocol, store)
    assert verdict == "PASS" and rows[0][4] == "GraphLearning Poisson 88.0"
    _put(store, "fits", "usps", "Poisson", 1, 0.87)  # now below GraphLearning's
    assert target_a(protocol, store)[0] == "FAIL"
    _put(store, "fits", "usps", "Poisson", 1, 0.9, seconds=2.5)  # as accurate, 2.5x as slow
    verdict, rows = target_a(protocol, store)
    assert verdict == "FAIL" and rows[0][-2] == "FAIL (time)"
    _put(store, "fits", "usps", "Poisson", 1, 0.9, seconds=1.5)
    verdict, rows = target_a(protocol, store)
    assert verdict == "PASS" and rows[0][-1] == "same"
    # a more accurate but slower estimator of ours: the row judges the one within the time,
    # and the strict reading (the most accurate must be fast too) is shown apart
    _put(store, "fits", "usps", "LapRLS (exact)", 1, 0.95, seconds=4.0)
    verdict, rows = target_a(protocol, store)
    assert verdict == "PASS" and rows[0][2] == "Poisson 90.0"
    assert rows[0][-1] == "LapRLS (exact) 95.0, 4.00 s: FAIL"
    _put(store, "fits", "usps", "Poisson", 1, 0.87, seconds=1.5)  # the fast one too inaccurate
    verdict, rows = target_a(protocol, store)
    assert verdict == "FAIL" and rows[0][2] == "LapRLS (exact) 95.0"
    assert rows[0][-2] == "FAIL (time)"
    _put(store, "fits", "usps", "Poisson", 1, 0.9, seconds=1.5)
    assert target_a(protocol, store)[0] == "PASS"
    _put(store, "inductive", "usps", "Nyström LapRLS", 1, 0.6)
    _put(store, "inductive", "usps", "sklearn LabelSpreading", 1, 0.7)
    assert target_b(protocol, store)[0] == "FAIL"
    _put(store, "inductive", "usps", "Nyström LapRLS", 1, 0.7)
    assert target_b(protocol, store)[0] == "PASS"
    assert target_c(protocol, store)[0] == "NOT RUN"
    t = TARGET_MOONS
    default, setting = t["methods"]
    rec = {"accuracy": 0.999, "fit_seconds": 30.0, "max_rss_bytes": 2**30, "graph_seconds": 5.0}
    spec = scaling_spec(protocol, default)
    store.put("scaling", "two moons", default, 0, f"n={t['n']}", **spec, **rec)
    assert target_c(protocol, store)[0] == "PASS"
    rec["fit_seconds"] = 61.0
    store.put("scaling", "two moons", default, 0, f"n={t['n']}", **spec, **rec)
    assert target_c(protocol, store)[0] == "FAIL"
    # the documented setting passes where the defaults do not: the target holds, both shown
    rec["fit_seconds"] = 40.0
    spec = scaling_spec(protocol, setting)
    store.put("scaling", "two moons", setting, 0, f"n={t['n']}", **spec, **rec)
    verdict, facts = target_c(protocol, store)
    assert verdict == "PASS" and f"`{default}` FAIL" in facts and f"`{setting}` PASS" in facts


def test_issue32_targets_are_computed_from_the_records(tmp_path):
    protocol = dataclasses.replace(PROTOCOL, per_class=(1,))
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    assert target_d(protocol, store)[0] == "NOT RUN" and target_e(protocol, store)[0] == "NOT RUN"
    for name in ("usps", "mnist"):
        _put(store, "fits", name, "Poisson", 1, 0.86, seconds=0.1)
        _put(store, "fits", name, "Poisson-MBO", 1, 0.92, seconds=0.25)
        _put(store, "fits", name, "Poisson-MBO (true priors)", 1, 0.95, seconds=0.25)
    # without GraphLearning: (d) cannot be judged, (e)'s first half passes, so NOT RUN
    verdict, rows = target_d(protocol, store)
    assert verdict == "NOT RUN" and rows[0][-1].startswith("NOT RUN")
    verdict, rows = target_e(protocol, store)
    assert verdict == "NOT RUN" and rows[0][4] == "2.50x"
    for name in ("usps", "mnist"):
        _put(store, "fits", name, "GraphLearning Poisson-MBO", 1, 0.91, seconds=3.0)
    verdict, rows = target_d(protocol, store)
    assert verdict == "PASS" and rows[0][2] == "Poisson-MBO 92.0" and rows[0][5] == "+1.0"
    assert target_e(protocol, store)[0] == "PASS"
    # the peer more accurate than every one of ours on one dataset: (d) fails there
    _put(store, "fits", "mnist", "GraphLearning Poisson-MBO", 1, 0.93, seconds=3.0)
    verdict, rows = target_d(protocol, store)
    assert verdict == "FAIL" and [r[-1] for r in rows] == ["PASS", "FAIL"]
    # another of our defaults more accurate still: it is the row's estimator, and (d) passes
    _put(store, "fits", "mnist", "Harmonic", 1, 0.94)
    verdict, rows = target_d(protocol, store)
    assert verdict == "PASS" and rows[1][2] == "Harmonic 94.0"
    # (e): more than 3x Poisson's seconds fails, and so does not being faster than the peer
    _put(store, "fits", "usps", "Poisson-MBO", 1, 0.92, seconds=0.31)
    verdict, rows = target_e(protocol, store)
    assert verdict == "FAIL" and rows[0][4] == "3.10x" and rows[0][-1] == "FAIL"
    _put(store, "fits", "usps", "Poisson-MBO", 1, 0.92, seconds=0.3)
    assert target_e(protocol, store)[0] == "PASS"
    _put(store, "fits", "usps", "GraphLearning Poisson-MBO", 1, 0.91, seconds=0.3)
    assert target_e(protocol, store)[0] == "FAIL"
    _put(store, "fits", "usps", "GraphLearning Poisson-MBO", 1, 0.91, seconds=0.31)
    assert target_e(protocol, store)[0] == "PASS"
    # letter is in the table, not judged: slow there, the verdict stands
    _put(store, "fits", "letter", "Poisson", 1, 0.3, seconds=1.0)
    _put(store, "fits", "letter", "Poisson-MBO", 1, 0.3, seconds=9.0)
    verdict, rows = target_e(protocol, store)
    assert verdict == "PASS" and ["letter", 1] in [r[:2] for r in rows]
    assert [r for r in rows if r[0] == "letter"][0][-1] == "not judged"
    # (f): the oracle priors' gain per cell, in points
    rows = oracle_gain(protocol, store)
    assert [r[:5] for r in rows if r[0] == "usps"] == [["usps", 1, "92.0", "95.0", "+3.0"]]
    assert [r for r in rows if r[0] == "letter"][0][3:5] == ["/", "/"]


def test_the_new_methods_are_in_the_protocol_and_the_oracles_get_the_true_priors():
    from semiscale_bench.few_labels.data import class_proportions

    for method in ("Poisson-MBO", "Poisson-MBO (true priors)", "GraphLearning Poisson-MBO"):
        assert method in PROTOCOL.methods
    assert "GraphLearning Volume-MBO" in PROTOCOL.methods
    assert "Poisson-MBO" in PROTOCOL.inductive_methods
    # an unbalanced two moons: 2 / 3 of the points are class 0 after the subsample
    protocol = dataclasses.replace(BENCHMARK.quick_protocol, moons_n=30)
    X, y = load(protocol, "two moons")
    np.testing.assert_allclose(class_proportions(protocol, "two moons"), np.bincount(y) / y.size)
    est = BENCHMARK.methods.build(
        "GraphLearning Volume-MBO",
        {"defaults": {}},
        None,
        protocol=protocol,
        dataset="two moons",
        seed=0,
    )
    np.testing.assert_allclose(est.class_priors, np.bincount(y) / y.size)
    assert (
        BENCHMARK.methods.build(
            "GraphLearning Poisson",
            {"defaults": {}},
            None,
            protocol=protocol,
            dataset="two moons",
            seed=0,
        ).class_priors
        is None
    )
    oracle = BENCHMARK.methods.build(
        "Poisson-MBO (true priors)",
        {"defaults": {}},
        None,
        protocol=protocol,
        dataset="two moons",
        seed=3,
    )
    np.testing.assert_allclose(oracle.class_prior, np.bincount(y) / y.size)
    assert oracle.random_state == 3
    default = BENCHMARK.methods.build(
        "Poisson-MBO", {"defaults": {}}, None, protocol=protocol, dataset="two moons", seed=0
    )
    assert default.class_prior is None


def test_every_method_has_its_own_plot_style():
    pytest.importorskip("matplotlib")
    from semiscale_bench.few_labels.report import method_styles

    styles = method_styles(PROTOCOL.methods)
    pairs = {(tuple(s["color"]), s["marker"]) for s in styles.values()}
    assert len(pairs) == len(PROTOCOL.methods)
    assert len({tuple(s["color"]) for s in styles.values()}) == len(PROTOCOL.methods)
    assert styles["GraphLearning Poisson-MBO"]["linestyle"] == "--"
    assert styles["Poisson-MBO"]["linestyle"] == "-"


def test_graphlearning_mbo_peers_take_the_class_priors_in_the_labels_order():
    pytest.importorskip("graphlearning", reason="graphlearning is not installed (an sdist)")
    from sklearn.datasets import make_blobs

    X, y = make_blobs([100, 200], centers=[[0, 0], [5, 0]], cluster_std=1.0, random_state=0)
    y = np.where(y == 0, 7, 3)  # 100 points of class 7, 200 of class 3: classes_ = [3, 7]
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 3)[0], np.flatnonzero(y == 7)[0]]] = [3, 7]
    right, swapped = np.array([200, 100]) / 300, np.array([100, 200]) / 300
    for algorithm in ("poisson_mbo", "volume_mbo"):
        with pytest.raises(ValueError, match=f"{algorithm} needs class_priors"):
            GraphLearningClassifier(algorithm)
        with pytest.raises(ValueError, match="class_priors must be 2 positive numbers"):
            GraphLearningClassifier(algorithm, class_priors=[0.5, 0.3, 0.2]).fit(X, y_ssl)
        peer = GraphLearningClassifier(algorithm, class_priors=2 * right).fit(X, y_ssl)
        np.testing.assert_array_equal(peer.classes_, [3, 7])
        assert peer.graph_seconds_ > 0 and (peer.transduction_ == y).mean() > 0.85, algorithm
        # the volumes follow the priors in classes_' order: given them swapped, class 7 grows
        wrong = GraphLearningClassifier(algorithm, class_priors=swapped).fit(X, y_ssl)
        grown = np.count_nonzero(wrong.transduction_ == 7)
        assert grown > np.count_nonzero(peer.transduction_ == 7) + 20, algorithm


def test_graphlearning_exiting_is_an_error_of_the_fit_not_of_the_run(monkeypatch):
    gl = pytest.importorskip("graphlearning", reason="graphlearning is not installed (an sdist)")
    import sys

    def leave(self, *args, **kwargs):
        sys.exit("Class priors must be provided")

    monkeypatch.setattr(gl.ssl.poisson_mbo, "fit_predict", leave)
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.full(40, -1)
    y[:2] = [0, 1]
    peer = GraphLearningClassifier("poisson_mbo", class_priors=[0.5, 0.5])
    with pytest.raises(RuntimeError, match="poisson_mbo exited: Class priors must"):
        peer.fit(X, y)


# GraphLearning's own weights divide by a zero distance here: its RuntimeWarning is the cause
@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
def test_graphlearning_volume_mbo_refuses_non_finite_weights():
    pytest.importorskip("graphlearning", reason="graphlearning is not installed (an sdist)")
    rng = np.random.default_rng(0)
    X = np.vstack([np.zeros((12, 2)), rng.normal(size=(40, 2))])  # 12 copies of one point
    y = np.full(52, -1)
    y[[0, 20]] = [0, 1]
    with pytest.raises(ValueError, match="weights are not finite here .* not run"):
        GraphLearningClassifier("volume_mbo", class_priors=[0.5, 0.5]).fit(X, y)


def test_graphlearning_poisson_mbo_is_not_run_on_letter():
    from semiscale_bench.harness import Sizes

    sizes = Sizes(15000, 16, 15000, 26)
    repeats, reason = PROTOCOL.plan("GraphLearning Poisson-MBO", "letter", sizes)
    assert repeats == [] and "10,000-iteration cap" in reason
    assert PROTOCOL.plan("GraphLearning Poisson-MBO", "usps", sizes)[0] == list(range(5))
    assert PROTOCOL.plan("GraphLearning Volume-MBO", "letter", sizes)[0] == list(range(5))


def test_graphlearning_peer_says_how_to_install_it_or_runs():
    from semiscale.datasets import make_two_moons

    X, y = make_two_moons(200, noise=0.05, random_state=0)
    y_ssl = np.full_like(y, -1)
    y_ssl[[np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]] = [0, 1]
    peer = GraphLearningClassifier("poisson")
    if not graphlearning_available():
        with pytest.raises(ImportError, match="pip install graphlearning"):
            peer.fit(X, y_ssl)
        return
    peer.fit(X, y_ssl)
    assert peer.graph_seconds_ > 0 and (peer.transduction_ == y).mean() > 0.9
    with pytest.raises(ValueError, match="algorithm must be one of"):
        GraphLearningClassifier("nope")


def test_peak_rss_is_this_programs_own():
    """A child's peak excludes the memory of the process that started it (ru_maxrss does not)."""
    import subprocess
    import sys

    from semiscale_bench.harness.machine import peak_rss_bytes

    ballast = np.ones(64 * 2**20 // 8)  # 64 MiB resident in this process  # noqa: F841
    code = "from semiscale_bench.harness.machine import peak_rss_bytes; print(peak_rss_bytes())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    child = int(out.stdout.split()[-1])
    assert child > 0 and peak_rss_bytes() > 64 * 2**20
    if sys.platform.startswith("linux"):
        assert child < peak_rss_bytes()
