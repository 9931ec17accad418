"""Readers (LIBSVM, idx), the dataset registry, look-up order and downloads.

Downloads are tested against a local HTTP server on 127.0.0.1; no test touches the internet.
Tests that need the project's shared dataset folder skip when it is absent.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import http.server
import io
import lzma
import shutil
import socket
import struct
import threading
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from semiscale.datasets import (
    ChecksumError,
    DataFile,
    DatasetInfo,
    DownloadError,
    SplitInfo,
    UnverifiedDownloadWarning,
    dataset_info,
    dataset_names,
    fetch_dataset,
    get_data_home,
    list_datasets,
    load_dataset,
    load_idx,
    load_libsvm,
    load_mnist_idx,
    make_circles,
    make_two_moons,
    ssl_split,
)
from semiscale.datasets import registry as registry_mod
from semiscale.datasets.fetch import EMBEDDED_DIR

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p for p in (ROOT / "shared" / "datasets", ROOT.parent / "shared" / "datasets") if p.is_dir()),
    None,
)
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared dataset folder not present")

SHARED_NAMES = [
    "a9a",
    "a8a",
    "a1a",
    "w8a",
    "phishing",
    "abalone",
    "german.numer",
    "fourclass",
    "housing",
    "letter",
    "ijcnn1_val",
    "madelon",
    "cod-rna",
    "splice",
    "svmguide3",
    "australian",
    "ijcnn1_partial",
    "usps",
    "space_ga",
    "cpusmall",
    "connect-4",
    "skin_nonskin",
    "mnist",
]
DOWNLOAD_ONLY = ["w7a", "YearPredictionMSD", "covtype"]


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch):
    """Fail any connection that is not to 127.0.0.1: these tests never use the network."""
    real = socket.create_connection

    def local_only(address, *args, **kwargs):
        if address[0] not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"test tried to reach {address[0]}")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", local_only)


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_libsvm(path, X, y, compress=None):
    """Write (X, y) in LIBSVM format, optionally compressed; return the path."""
    path = Path(path)
    buffer = io.BytesIO()
    dump_svmlight_file(X, y, buffer, zero_based=False)
    data = buffer.getvalue()
    opener = {None: None, "gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[compress]
    path.write_bytes(opener(data) if opener else data)
    return path


@pytest.fixture
def toy_xy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 5))
    X[X < 0.3] = 0.0
    y = np.where(rng.random(20) < 0.5, -1.0, 1.0)
    return X, y


# --------------------------------------------------------------------------- LIBSVM reader


@pytest.mark.parametrize("compress", [None, "gz", "bz2", "xz"])
def test_libsvm_round_trip(tmp_path, toy_xy, compress):
    X, y = toy_xy
    path = write_libsvm(tmp_path / f"toy.svm.{compress or 'txt'}", X, y, compress)
    Xr, yr = load_libsvm(path, n_features=5)
    assert sp.issparse(Xr) and Xr.format == "csr"
    np.testing.assert_allclose(Xr.toarray(), X, rtol=1e-12)
    np.testing.assert_array_equal(yr, y)


def test_libsvm_magic_bytes_beat_suffix(tmp_path, toy_xy):
    X, y = toy_xy
    path = write_libsvm(tmp_path / "renamed.txt", X, y, "xz")  # xz content, misleading name
    Xr, _ = load_libsvm(path, n_features=5)
    np.testing.assert_allclose(Xr.toarray(), X, rtol=1e-12)


def test_libsvm_n_features_pads_and_dtype(tmp_path, toy_xy):
    X, y = toy_xy
    X[:, -1] = 0.0  # last feature never used -> file looks 4-wide
    path = write_libsvm(tmp_path / "t.svm", X, y)
    assert load_libsvm(path)[0].shape[1] == 4
    X32, _ = load_libsvm(path, n_features=9, dtype=np.float32)
    assert X32.shape == (20, 9) and X32.dtype == np.float32


def test_libsvm_errors(tmp_path, toy_xy):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_libsvm(tmp_path / "missing.svm")
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:abc\n")
    with pytest.raises(ValueError, match="bad.svm: malformed"):
        load_libsvm(bad)
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    with pytest.raises(ValueError, match="no samples"):
        load_libsvm(empty)
    X, y = toy_xy
    path = write_libsvm(tmp_path / "t.svm.xz", X, y, "xz")
    with pytest.raises(ValueError, match="n_features"):
        load_libsvm(path, n_features=2)
    truncated = tmp_path / "trunc.svm.xz"
    truncated.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(ValueError, match="decompress|malformed"):
        load_libsvm(truncated)
    with pytest.raises(ValueError, match="n_features"):
        load_libsvm(path, n_features=0)


# --------------------------------------------------------------------------- idx reader


def idx_bytes(arr: np.ndarray, type_byte: int) -> bytes:
    header = bytes([0, 0, type_byte, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


@pytest.mark.parametrize("compressed", [False, True])
def test_idx_round_trip(tmp_path, compressed):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(6, 3, 4), dtype=np.uint8)
    ints = rng.integers(-(2**20), 2**20, size=(7,), dtype=np.int32)  # endianness matters
    for name, arr, code in [("img", images, 0x08), ("int", ints, 0x0C)]:
        raw = idx_bytes(arr, code)
        path = tmp_path / (name + (".gz" if compressed else ""))
        path.write_bytes(gzip.compress(raw) if compressed else raw)
        out = load_idx(path)
        assert out.shape == arr.shape and out.dtype.isnative
        np.testing.assert_array_equal(out, arr)


def test_idx_errors(tmp_path):
    arr = np.arange(12, dtype=np.uint8).reshape(3, 4)
    raw = idx_bytes(arr, 0x08)
    cases = {
        "magic.idx": (b"\x00\x01\x08\x02" + raw[4:], "magic"),
        "type.idx": (b"\x00\x00\x07\x02" + raw[4:], "magic"),
        "short.idx": (raw[:2], "truncated"),
        "header.idx": (raw[:7], "truncated idx header"),
        "body.idx": (raw[:-3], "truncated idx data"),
        "trailing.idx": (raw + b"\x00", "trailing"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=message):
            load_idx(tmp_path / name)
    (tmp_path / "trunc.gz").write_bytes(gzip.compress(raw)[:-10])
    with pytest.raises(ValueError, match="decompress"):
        load_idx(tmp_path / "trunc.gz")
    with pytest.raises(FileNotFoundError):
        load_idx(tmp_path / "nope.gz")


def test_load_mnist_idx_pair(tmp_path):
    images = np.arange(2 * 28 * 28, dtype=np.int64).reshape(2, 28, 28) % 256
    (tmp_path / "i.gz").write_bytes(gzip.compress(idx_bytes(images.astype(np.uint8), 0x08)))
    (tmp_path / "l").write_bytes(idx_bytes(np.array([3, 7], dtype=np.uint8), 0x08))
    X, y = load_mnist_idx(tmp_path / "i.gz", tmp_path / "l")
    assert X.shape == (2, 784) and X.dtype == np.float64 and X.min() >= 0 and X.max() <= 1
    np.testing.assert_allclose(X * 255, images.reshape(2, -1))
    assert y.tolist() == [3, 7] and y.dtype == np.int64
    Xraw, _ = load_mnist_idx(tmp_path / "i.gz", tmp_path / "l", scale=False)
    assert Xraw.max() == 255
    (tmp_path / "l3").write_bytes(idx_bytes(np.array([1, 2, 3], dtype=np.uint8), 0x08))
    with pytest.raises(ValueError, match="2 images but"):
        load_mnist_idx(tmp_path / "i.gz", tmp_path / "l3")


@needs_shared
def test_shared_mnist_labels():
    path = SHARED / "mnist" / "t10k-labels-idx1-ubyte.gz"
    if not path.is_file():
        pytest.skip("shared MNIST labels not present")
    y = load_idx(path)
    assert y.shape == (10000,) and y.dtype == np.uint8
    assert y[:5].tolist() == [7, 2, 1, 0, 4]
    expected = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert np.bincount(y).tolist() == expected


@needs_shared
def test_load_dataset_mnist_test_from_shared():
    if not (SHARED / "mnist" / "t10k-images-idx3-ubyte.gz").is_file():
        pytest.skip("shared MNIST images not present")
    X, y = load_dataset("mnist", "test", data_home=SHARED, download=False)
    assert X.shape == (10000, 784) and X.dtype == np.float64
    assert X.min() == 0.0 and X.max() == 1.0
    assert y.dtype == np.int64 and set(np.unique(y)) == set(range(10))


# --------------------------------------------------------------------------- registry


def test_registry_covers_shared_and_download_only_sets():
    names = set(dataset_names())
    assert set(SHARED_NAMES) <= names and set(DOWNLOAD_ONLY) <= names
    for name in dataset_names():
        info = dataset_info(name)
        assert info.task in ("binary", "multiclass", "regression")
        for split in info.splits:
            assert split.n_samples > 0 and split.files
            for f in split.files:
                assert f.sha256 or f.url, f"{name}/{split.name} has neither a copy nor a URL"
                assert all(url.startswith(("https://", "http://yann.lecun.com/")) for url in f.urls)
    assert dataset_info("ijcnn1_partial").defective
    assert not dataset_info("ijcnn1_val").defective
    for name in DOWNLOAD_ONLY:
        assert all(f.url and f.sha256 is None for s in dataset_info(name).splits for f in s.files)
    mnist = dataset_info("mnist")
    assert mnist.split("train").n_samples == 60000
    assert all(f.upstream_checksum_known for s in mnist.splits for f in s.files)
    with pytest.raises(ValueError, match="unknown dataset"):
        dataset_info("nope")
    with pytest.raises(ValueError, match="no split 'test'"):
        dataset_info("fourclass").split("test")
    assert dataset_info("A9A").name == "a9a"


def test_embedded_files_match_registry():
    """Every embedded file exists and its sha256 equals the registry's (= the shared one)."""
    embedded = {
        f.name: f.sha256
        for name in dataset_names()
        for s in dataset_info(name).splits
        for f in s.files
        if f.embedded
    }
    on_disk = {p.name for p in EMBEDDED_DIR.iterdir() if p.is_file()}
    assert on_disk == set(embedded)
    for name, digest in embedded.items():
        assert sha256(EMBEDDED_DIR / name) == digest, name
    total = sum((EMBEDDED_DIR / n).stat().st_size for n in embedded)
    assert total < 7 * 1024**2
    assert "usps.svm.xz" in embedded and "madelon.svm.xz" not in embedded


@needs_shared
def test_checksums_match_shared_sha256sums():
    sums = {}
    for line in (SHARED / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split()
        sums[rel] = digest
    seen = set()
    for name in dataset_names():
        for split in dataset_info(name).splits:
            for f in split.files:
                rel = f"{name}/{f.name}"
                if f.sha256 and rel not in sums:
                    # not in the shared folder (MNIST train): must be the upstream checksum
                    assert f.sha256 == f.url_sha256, rel
                elif f.sha256:
                    assert sums[rel] == f.sha256, rel
                    seen.add(rel)
                    if f.embedded:
                        assert sha256(EMBEDDED_DIR / f.name) == sums[rel], rel
    assert seen == set(sums)  # every shared file is registered


@pytest.mark.parametrize(
    ("name", "split", "shape", "labels"),
    [
        ("a9a", "train", (32561, 123), {-1.0, 1.0}),
        ("a1a", "train", (1605, 123), {-1.0, 1.0}),  # file stops at feature 119
        ("fourclass", "train", (862, 2), {-1.0, 1.0}),
        ("letter", "test", (5000, 16), set(range(1, 27))),
        ("usps", "train", (7291, 256), set(range(10))),
        ("housing", "train", (506, 13), None),
    ],
)
def test_load_embedded_shapes(name, split, shape, labels, tmp_path):
    X, y = load_dataset(name, split, data_home=tmp_path, download=False)
    assert isinstance(X, np.ndarray) and X.shape == shape and X.dtype == np.float64
    assert y.shape == (shape[0],)
    if labels is not None:
        assert set(np.unique(y).tolist()) == labels


def test_load_dataset_options(tmp_path):
    X, _ = load_dataset("fourclass", data_home=tmp_path, dense=False, download=False)
    assert sp.issparse(X) and X.format == "csr"
    X32, _ = load_dataset("fourclass", data_home=tmp_path, dtype=np.float32, download=False)
    assert X32.dtype == np.float32
    bunch = load_dataset("australian", data_home=tmp_path, return_X_y=False, download=False)
    assert bunch.data.shape == (690, 14) and bunch.target.shape == (690,)
    assert bunch.location == "embedded" and bunch.upstream is False and bunch.task == "binary"
    assert bunch.info is dataset_info("australian")
    with pytest.raises(ValueError, match="dense"):
        load_dataset("fourclass", dense="sometimes")
    with pytest.raises(ValueError, match="no split"):
        load_dataset("fourclass", "test")


def test_list_datasets(tmp_path):
    rows = list_datasets(data_home=tmp_path)
    by_key = {(r["name"], r["split"]): r for r in rows}
    assert {"name", "split", "n_samples", "n_features", "task", "size", "location"} <= set(rows[0])
    assert by_key[("a9a", "train")]["location"] == "embedded"
    assert by_key[("a9a", "train")]["size"] == (EMBEDDED_DIR / "a9a.svm.xz").stat().st_size
    assert by_key[("w7a", "train")]["location"].startswith("not present (downloadable from https")
    assert by_key[("ijcnn1_partial", "train")]["location"] == "not present (no download URL)"
    assert by_key[("ijcnn1_partial", "train")]["defective"] is True
    assert by_key[("mnist", "test")]["size"] is None


# --------------------------------------------------------------------------- data directory


def test_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("SEMISCALE_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert get_data_home() == tmp_path / "home" / ".semiscale"


def test_semiscale_data_env_lookup(monkeypatch, tmp_path):
    """A non-embedded file is found under $SEMISCALE_DATA/<name>/<file> and verified."""
    monkeypatch.setenv("SEMISCALE_DATA", str(tmp_path))
    (tmp_path / "madelon").mkdir()
    bad = tmp_path / "madelon" / "madelon.test.svm.xz"
    bad.write_bytes(lzma.compress(b"1 1:1\n"))
    with pytest.raises(ChecksumError, match="expected 13af9eb2.*got"):
        load_dataset("madelon", "test", download=False)
    rows = {(r["name"], r["split"]): r for r in list_datasets()}
    assert rows[("madelon", "test")]["location"] == str(bad)
    if SHARED is not None and (SHARED / "madelon" / "madelon.test.svm.xz").is_file():
        shutil.copy(SHARED / "madelon" / "madelon.test.svm.xz", bad)
        bunch = load_dataset("madelon", "test", download=False, return_X_y=False)
        assert bunch.data.shape == (600, 500) and bunch.location == "data_home"


def test_download_false_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"w7a.*csie\.ntu\.edu\.tw.*download=True"):
        load_dataset("w7a", data_home=tmp_path, download=False)


# --------------------------------------------------------------------------- downloads


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def server(tmp_path):
    """Serve ``tmp_path / "www"`` on 127.0.0.1; yields (directory, base URL)."""
    root = tmp_path / "www"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(_QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def register(monkeypatch, file: DataFile, n_samples=20, n_features=5, **kwargs) -> str:
    info = DatasetInfo(
        name="toy",
        task="binary",
        n_features=n_features,
        splits=(SplitInfo("train", n_samples, (file,)),),
        **kwargs,
    )
    monkeypatch.setitem(registry_mod.REGISTRY, "toy", info)
    return "toy"


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_verified(server, tmp_path, toy_xy, monkeypatch):
    root, base = server
    X, y = toy_xy
    path = write_libsvm(root / "toy.svm", X, y)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm", url_sha256=sha256(path)))
    home = tmp_path / "home"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a verified download must not warn
        bunch = load_dataset("toy", data_home=home, return_X_y=False, verbose=False)
    np.testing.assert_allclose(bunch.data, X, rtol=1e-12)
    assert bunch.location == "downloaded"
    assert leftovers(home / "toy") == ["toy.svm"]
    path.unlink()  # second load comes from the data directory, not the server
    again = load_dataset("toy", data_home=home, return_X_y=False)
    assert again.location == "data_home"


def test_download_unknown_checksum_records_sha256(server, tmp_path, toy_xy, monkeypatch):
    root, base = server
    X, y = toy_xy
    path = write_libsvm(root / "toy.bz2", X, y, "bz2")
    digest = sha256(path)
    register(monkeypatch, DataFile("toy.svm.xz", url=f"{base}/toy.bz2"))
    home = tmp_path / "home"
    with pytest.warns(UnverifiedDownloadWarning, match=digest):
        files = fetch_dataset("toy", data_home=home)
    assert files[0].path == home / "toy" / "toy.bz2" and not files[0].is_our_copy
    assert (home / "toy" / "toy.bz2.sha256").read_text().split()[0] == digest
    Xr, _ = load_dataset("toy", data_home=home)  # bz2 upstream format reads too
    np.testing.assert_allclose(Xr, X, rtol=1e-12)
    (home / "toy" / "toy.bz2").write_bytes(bz2.compress(b"1 1:1\n"))  # later corruption
    with pytest.raises(ChecksumError, match=digest):
        load_dataset("toy", data_home=home)


def test_download_checksum_mismatch_leaves_nothing(server, tmp_path, toy_xy, monkeypatch):
    root, base = server
    path = write_libsvm(root / "toy.svm", *toy_xy)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm", url_sha256="0" * 64))
    home = tmp_path / "home"
    with pytest.raises(ChecksumError, match=f"expected {'0' * 64}, got {sha256(path)}.*deleted"):
        load_dataset("toy", data_home=home)
    assert not (home / "toy").exists()  # not even an empty folder


def test_download_md5_verified(server, tmp_path, toy_xy, monkeypatch):
    root, base = server
    path = write_libsvm(root / "toy.svm", *toy_xy)
    md5 = hashlib.md5(path.read_bytes()).hexdigest()
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm", url_md5=md5))
    assert load_dataset("toy", data_home=tmp_path / "ok", verbose=True)[0].shape == (20, 5)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm", url_md5="f" * 32))
    with pytest.raises(ChecksumError, match="md5"):
        load_dataset("toy", data_home=tmp_path / "bad")


def test_download_404_and_mirror(server, tmp_path, toy_xy, monkeypatch):
    root, base = server
    path = write_libsvm(root / "toy.svm", *toy_xy)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/missing.svm"))
    home = tmp_path / "home"
    with pytest.raises(DownloadError, match="HTTP 404"):
        load_dataset("toy", data_home=home)
    assert leftovers(home / "toy") == []
    # The official URL fails, the mirror serves the file (saved under the upstream name).
    register(
        monkeypatch,
        DataFile(
            "toy.svm",
            url=f"{base}/gone/toy.svm",
            url_sha256=sha256(path),
            mirrors=(f"{base}/toy.svm",),
        ),
    )
    assert load_dataset("toy", data_home=home)[0].shape == (20, 5)


def test_download_network_failure(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port on 127.0.0.1 that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    register(monkeypatch, DataFile("toy.svm", url=f"http://127.0.0.1:{port}/toy.svm"))
    with pytest.raises(DownloadError, match="(?s)could not download.*127.0.0.1.*Check the network"):
        load_dataset("toy", data_home=tmp_path)
    assert leftovers(tmp_path / "toy") == []


def test_upstream_file_uses_upstream_width(server, tmp_path, monkeypatch):
    """Our copy and the upstream file may differ (connect-4: 42 vs 126 features)."""
    root, base = server
    rng = np.random.default_rng(3)
    write_libsvm(root / "up.svm", rng.random((20, 7)), np.arange(20) % 2)
    register(
        monkeypatch,
        DataFile("toy.svm.xz", sha256="a" * 64, url=f"{base}/up.svm"),
        url_n_features=7,
    )
    with pytest.warns(UnverifiedDownloadWarning):
        bunch = load_dataset("toy", data_home=tmp_path, return_X_y=False)
    assert bunch.data.shape == (20, 7) and bunch.upstream is True


def test_download_messages_go_to_stderr(server, tmp_path, toy_xy, monkeypatch, capsys):
    root, base = server
    write_libsvm(root / "toy.svm", *toy_xy)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedDownloadWarning)
        fetch_dataset("toy", data_home=tmp_path / "home", verbose=True)
    out, err = capsys.readouterr()
    assert out == ""  # stdout keeps only results
    assert f"Downloaded {base}/toy.svm -> {tmp_path / 'home' / 'toy' / 'toy.svm'}" in err


def test_download_is_reported_under_the_ambient_verbosity(
    server, tmp_path, toy_xy, monkeypatch, capsys
):
    from semiscale._progress import verbosity

    root, base = server
    write_libsvm(root / "toy.svm", *toy_xy)
    register(monkeypatch, DataFile("toy.svm", url=f"{base}/toy.svm"))
    with warnings.catch_warnings(), verbosity(1):  # the command line's level
        warnings.simplefilter("ignore", UnverifiedDownloadWarning)
        fetch_dataset("toy", data_home=tmp_path / "home")
    out, err = capsys.readouterr()
    assert out == "" and "Downloaded" in err


@pytest.mark.parametrize("maker", [make_two_moons, make_circles])
def test_synthetic_random_state_forms(maker):
    X0, y0 = maker(50, random_state=0)
    # an int seeds numpy's default_rng: bit-identical to drawing from default_rng(0) directly
    Xg, yg = maker(50, random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(X0, Xg)
    np.testing.assert_array_equal(y0, yg)
    Xs, _ = maker(50, random_state=np.random.SeedSequence(0))
    np.testing.assert_array_equal(X0, Xs)
    Xr1, _ = maker(50, random_state=np.random.RandomState(3))
    Xr2, _ = maker(50, random_state=np.random.RandomState(3))
    np.testing.assert_array_equal(Xr1, Xr2)
    with pytest.raises(TypeError, match="random_state"):
        maker(50, random_state="seed")
    with pytest.raises(ValueError, match="non-negative"):
        maker(50, random_state=-1)


def test_datasets_use_the_shared_random_state_helper():
    import semiscale.datasets.splits as splits
    import semiscale.datasets.synthetic as synthetic
    from semiscale import _random

    assert synthetic.as_generator is _random.as_generator
    assert splits.as_generator is _random.as_generator


def test_int_random_state_draws_are_pinned():
    # the values drawn before datasets shared semiscale._random's helper
    X, y = make_two_moons(1000, noise=0.1, random_state=7)
    np.testing.assert_array_equal(
        X[:2], [[2.008086689364694, 0.05618831842607672], [-0.8412122725305624, 0.595913394311182]]
    )
    labeled, _ = ssl_split(y, n_labeled=10, per_class=True, random_state=5)
    assert np.flatnonzero(labeled).tolist() == [
        35,
        62,
        175,
        181,
        228,
        259,
        274,
        283,
        426,
        470,
        518,
        632,
        636,
        668,
        723,
        792,
        795,
        972,
        975,
        983,
    ]
