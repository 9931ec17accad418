"""The backends benchmark: per-chunk synthetic data, the bytes model, the report, a quick run."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from semiscale_bench.backends import BENCHMARK, PROTOCOL, QUICK
from semiscale_bench.backends.data import (
    chunk_sizes,
    synthetic_chunk,
    synthetic_dask,
    synthetic_numpy,
)
from semiscale_bench.backends.report import model_bytes, render, scaling
from semiscale_bench.backends.runs import peak_rss, reset_peak_rss
from semiscale_bench.harness import CATALOG, RecordStore, load_benchmark, run_benchmark


def test_registered_with_a_quick_protocol_of_its_own():
    assert "backends" in CATALOG and load_benchmark("backends") is BENCHMARK
    assert QUICK.quick and QUICK.digest() != PROTOCOL.digest()
    assert list(BENCHMARK.methods) == list(PROTOCOL.methods)
    sizes = None  # the caps name datasets only
    assert PROTOCOL.plan("dask-1", "synthetic_10M", sizes)[0] == []
    assert PROTOCOL.plan("dask-2", "synthetic_10M", sizes)[0] == [0]
    assert PROTOCOL.plan("numpy-2jobs", "skin_nonskin", sizes)[0] == [0, 1, 2]
    assert PROTOCOL.plan("numpy-2jobs", "synthetic_10M", sizes)[0] == []
    assert PROTOCOL.plan("numpy", "skin_nonskin", sizes)[0] == [0, 1, 2]


def test_synthetic_chunks_are_seeded_per_chunk_and_their_dask_array_is_the_numpy_one():
    assert chunk_sizes(10, 4) == [4, 4, 2] and chunk_sizes(8, 4) == [4, 4]
    X = synthetic_numpy(10, 4)
    assert X.shape == (10, 3) and np.all(np.abs(X) <= 1)
    np.testing.assert_array_equal(X[8:], synthetic_chunk(0, 2, 2))  # made alone, the same
    lazy = synthetic_dask(10, 4)
    assert lazy.chunks == ((4, 4, 2), (3,))
    np.testing.assert_array_equal(lazy.compute(scheduler="sync"), X)
    assert not np.array_equal(synthetic_numpy(10, 4, seed=1), X)


def test_the_peak_resident_memory_of_a_process_is_reset_and_read():
    before = reset_peak_rss()
    if before is None:
        pytest.skip("this kernel refuses /proc/self/clear_refs")
    block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
    assert peak_rss() >= before + 60 * 2**20
    del block
    assert reset_peak_rss() < before + 60 * 2**20 and peak_rss() < before + 60 * 2**20


def test_the_bytes_model_and_the_scaling_model():
    # u = K V back and v out (8 n each), V out once and an s-vector back per chunk
    assert model_bytes(1000, 10, 4) == 16 * 1000 + 8 * 10 * 5
    one = {"matmul_seconds": 1.0, "rmatmul_seconds": 2.0, "serial_seconds": 0.5, "chunks": 4}
    two = {"matmul_seconds": 0.6, "rmatmul_seconds": 1.2, "serial_seconds": 0.7}
    model = scaling(one, two, None, n=10**6, s=500)
    rows = {r["machines"]: r for r in model["rows"]}
    assert model["measured_1_worker"]["serial_seconds"] == pytest.approx(0.5)
    assert rows[2]["passes_seconds"] == pytest.approx(1.5)
    assert rows[8]["bytes"] == model_bytes(10**6, 500, 8)  # more machines than chunks
    assert rows[4]["product_seconds"] == pytest.approx(0.5 + 0.75 + rows[4]["bytes"] / 1.25e9)
    assert model["measured_1_worker"]["product_seconds"] == pytest.approx(3.5)
    assert model["measured_2_workers"] == pytest.approx(
        {"product_seconds": 2.5, "predicted_same_machine": 2.0}
    )


def _fit(seconds, diff, *, workers=0, moved=None, per_product=None, products=4):
    record = {
        "fit_seconds": seconds,
        "predict_seconds": 0.1,
        "iterations": 3,
        "converged": True,
        "phase_seconds": {"iterations": 0.5 * seconds},
        "rmse": 0.25,
        "max_abs_diff_vs_numpy": diff,
        "client_rss_before": 100 * 2**20,
        "client_peak_rss": 150 * 2**20,
        "worker_rss_before": [50 * 2**20] * workers or None,
        "worker_peak_rss": [80 * 2**20] * workers or None,
        "bytes_moved": moved or {},
        "n_chunks": 2 if workers else None,
        "workers": workers,
    }
    if per_product:
        record["passes"] = {
            "matmul": products + 1,
            "rmatmul": products,
            "bytes_per_product": per_product,
            "matmul_seconds": [0.1] * products,
            "rmatmul_seconds": [0.1] * products,
            "after_matmul_seconds": [0.25] * products,
            "after_rmatmul_seconds": [0.5] * (products - 1),
        }
    return record


def test_the_targets_judge_the_recorded_numbers(tmp_path):
    protocol = dataclasses.replace(QUICK, datasets=QUICK.datasets[1:])
    store = RecordStore(tmp_path, protocol.paper, protocol.digest())
    name, n, s = "synthetic_6k", 6000, QUICK.n_centers["synthetic_6k"]
    store.put(
        "fits",
        name,
        "problem",
        n=n,
        d=3,
        n_labeled=60,
        chunk_rows=2500,
        graph={"kind": "test", "seconds": 0.1, "nnz": 10},
    )
    exact = model_bytes(n, s, 2)
    moved = {"sent": exact * 2, "received": exact * 2, "calls": 8}
    store.put("fits", name, "numpy", 0, **_fit(10.0, 0.0))
    store.put("fits", name, "numpy-2jobs", 0, **_fit(11.0, 3e-6))
    store.put(
        "fits", name, "dask-1", 0, **_fit(30.0, 2e-9, workers=1, moved=moved, per_product=exact)
    )
    # 2 workers: 1.6x NumPy's time (FAIL), 20 % more bytes than the model (FAIL)
    store.put(
        "fits",
        name,
        "dask-2",
        0,
        **_fit(16.0, 5e-9, workers=2, moved=moved, per_product=1.2 * exact),
    )
    store.put("fits", name, "torch-cuda", 0, skipped="no GPU here")
    paths = render(BENCHMARK, protocol, store, tmp_path)
    summary = Path(paths[1]).read_text()
    assert "| synthetic_6k | dask-1 2e-09, dask-2 5e-09 (floor: numpy-2jobs 3e-06) PASS |" in (
        summary
    )
    assert "| 1.60x FAIL | dask-1 1.000, dask-2 1.200 FAIL |" in summary
    assert "every backend predicts as NumPy to 1e-08: **PASS**" in summary
    assert "at most 1.5x NumPy's fit time: **FAIL**" in summary
    assert "| torch-cuda | not run: no GPU here |" in summary
    assert "| dask-2 | 1 | 16 (1.60x; min 16) | 3 |" in summary and "80 MiB, 80 MiB" in summary
    assert "### synthetic_6k: the cost model for N machines" in summary
    results = json.loads(Path(paths[0]).read_text())
    dask = results["datasets"][name]["backends"]["dask-1"]
    assert dask["model_bytes_per_product"] == exact and dask["worker_peak_rss"] == [80 * 2**20]
    # one product: two passes of 0.1 s, the client's work 0.25 s after one, 0.5 s after the other
    measured = results["datasets"][name]["scaling"]["measured_1_worker"]
    assert measured == pytest.approx(
        {"product_seconds": 0.95, "passes_seconds": 0.2, "serial_seconds": 0.75}
    )


def test_quick_run_fits_every_backend_and_writes_the_report(tmp_path):
    paths = run_benchmark(BENCHMARK, quick=True, datasets=["synthetic_6k"], out=tmp_path, verbose=0)
    assert [Path(p).name for p in paths] == ["results.json", "summary.md"]
    store = RecordStore(tmp_path, QUICK.paper, QUICK.digest())
    fits = {r["method"]: r for r in store.select("fits", "synthetic_6k")}
    assert fits["problem"]["n"] == 6000 and fits["problem"]["n_labeled"] == 60
    numpy = fits["numpy"]
    assert numpy["max_abs_diff_vs_numpy"] == 0.0 and numpy["fit_seconds"] > 0
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        assert "skipped" in fits["torch-cuda"]
    if torch is not None:
        assert fits["torch-cpu"]["iterations"] > 0 and "error" not in fits["torch-cpu"]
    for workers in (1, 2):
        dask = fits[f"dask-{workers}"]
        assert "error" not in dask, dask.get("error")
        assert dask["iterations"] == numpy["iterations"]
        assert len(dask["worker_peak_rss"]) == workers and min(dask["worker_peak_rss"]) > 0
        assert dask["n_chunks"] == 3  # 2 x 2,500 + 1,000 rows
        # every Hessian product moved what the model says (plus, averaged over the products,
        # the centers where the first pass over X sent them: 100 x 3 doubles)
        per, model = dask["passes"]["bytes_per_product"], model_bytes(6000, 100, 3)
        assert model <= per <= model + 8 * 100 * 3 / dask["passes"]["rmatmul"]
        assert dask["passes"]["rmatmul"] == dask["iterations"]
        assert abs(dask["rmse"] - numpy["rmse"]) < 1e-3
    summary = Path(paths[1]).read_text()
    assert "QUICK MODE" in summary and "cost model for N machines" in summary
