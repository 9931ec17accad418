"""A run whose datasets are not on disk: refused at once naming the fixes, or --download.

No network: the data directory is an empty temporary folder, and the one download is served
by a stand-in for ``urllib.request.urlopen``.
"""

from __future__ import annotations

import io
import urllib.request
import warnings

import numpy as np
import pytest

from semiscale.datasets import registry
from semiscale_bench.cli import main
from semiscale_bench.harness import Benchmark, Dataset, Protocol, run_benchmark
from semiscale_bench.harness.data import (
    MissingDataError,
    downloads,
    load_dense,
    missing_sources,
)
from semiscale_bench.harness.registry import MethodRegistry


def test_a_run_without_its_data_stops_at_once_naming_the_fixes(tmp_path, monkeypatch, capsys):
    # Before (issue 28): `semiscale-bench paper000 --quick` failed on madelon with "Pass
    # download=True", which is no option of the command.
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path / "empty"))
    out = tmp_path / "out"
    assert main(["paper000", "--quick", "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("semiscale-bench: error: madelon: not in the data directory ")
    assert "rerun with --download" in line
    assert "--datasets space_ga,abalone," in line  # the embedded ones can run without it
    assert not out.exists()  # before any work


def test_download_is_an_option_of_the_command():
    from semiscale_bench.cli import build_parser

    (download,) = [a for a in build_parser()._actions if a.dest == "download"]
    assert download.default is False and "$SEMISCALE_DATA" in download.help


# ------------------------------------------------------------------------ a toy download
#: A LIBSVM file of 12 points with 3 features.
TOY = "".join(
    f"{(-1) ** i} 1:{i / 12:.3f} 2:{np.sin(i):.3f} 3:{i % 3}\n" for i in range(12)
).encode()


class _Response(io.BytesIO):
    headers = {"Content-Length": str(len(TOY))}


@pytest.fixture
def toy_source(monkeypatch, tmp_path):
    """A registered dataset "toy" whose one file only a download can bring; the URLs asked."""
    file = registry.DataFile("toy.svm", url="http://example.invalid/toy.svm")
    info = registry.DatasetInfo(
        name="toy",
        task="binary",
        n_features=3,
        splits=(registry.SplitInfo("train", 12, (file,)),),
    )
    monkeypatch.setitem(registry.REGISTRY, "toy", info)
    asked = []

    def urlopen(request, timeout=None):
        asked.append(request.full_url)
        return _Response(TOY)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path / "data"))
    return asked


def _loading_benchmark(loaded):
    """A benchmark of one dataset whose one experiment loads it."""
    methods = MethodRegistry()
    methods.register("none", params="p", description="nothing")(lambda *a, **k: None)
    protocol = Protocol(paper="toy", datasets=(Dataset("small", "toy"),), methods=("none",))

    def load(bench, protocol, store, ctx):
        loaded.append(load_dense("toy")[0].shape)

    return Benchmark(
        name="toy",
        protocol=protocol,
        quick_protocol=protocol,
        methods=methods,
        experiments=(("load", load),),
        render=lambda *args: [],
    )


def test_download_fetches_what_the_run_lacks_before_it_starts(toy_source, tmp_path):
    loaded = []
    bench = _loading_benchmark(loaded)
    assert missing_sources(["toy", "housing"]) == ["toy"]  # housing is embedded
    with pytest.raises(MissingDataError, match="^toy: not in the data directory .*--download"):
        run_benchmark(bench, out=tmp_path / "out", verbose=0)
    assert toy_source == [] and loaded == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no published checksum for the toy file
        run_benchmark(bench, out=tmp_path / "out", download=True, verbose=0)
    assert toy_source == ["http://example.invalid/toy.svm"] and loaded == [(12, 3)]
    assert missing_sources(["toy"]) == []


def test_load_dense_downloads_only_when_allowed(toy_source):
    with pytest.raises(MissingDataError, match="rerun with --download"):
        load_dense("toy")
    with downloads(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = load_dense("toy")
    assert X.shape == (12, 3) and toy_source == ["http://example.invalid/toy.svm"]
