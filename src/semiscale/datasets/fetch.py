"""Find a registered dataset's files: embedded copy, data directory, or download.

Look-up order for every file of a split (:func:`fetch_dataset`):

1. **embedded** -- our verified copy shipped in ``semiscale/datasets/data/<file>`` (the small
   datasets, about 5 MB in all);
2. the **data directory** ``data_home`` (default ``$SEMISCALE_DATA``, else ``~/.semiscale``),
   laid out as ``<dataset>/<file>`` -- the shared folder's layout, so
   ``SEMISCALE_DATA=/path/to/shared/datasets`` works -- under our copy's name or under the
   upstream name of an earlier download;
3. a **download** from the official URL (then the mirrors) into
   ``<data_home>/<dataset>/<upstream name>``, written to a temporary file and renamed into place
   only once complete and verified.

Every file with a known checksum is verified (sha256 or md5); a mismatch raises
:class:`ChecksumError` naming the expected and actual value, and a bad download is deleted.
Files whose upstream checksum nobody publishes (all LIBSVM files except USPS) are downloaded
unverified: their sha256 is computed, reported in an :class:`UnverifiedDownloadWarning` and
written to ``<file>.sha256`` beside them, which later loads check against.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

from .._progress import log, progress
from .registry import DataFile, dataset_info

__all__ = [
    "EMBEDDED_DIR",
    "ChecksumError",
    "DownloadError",
    "FetchedFile",
    "UnverifiedDownloadWarning",
    "fetch_dataset",
    "file_checksum",
    "get_data_home",
    "locate_file",
]

#: Directory of the copies shipped inside the package.
EMBEDDED_DIR = Path(__file__).resolve().parent / "data"
_ENV = "SEMISCALE_DATA"
_CHUNK = 1 << 20
_TIMEOUT = 60.0
#: (path, size, mtime_ns, algorithm) -> hex digest, so repeated loads hash a file once.
_DIGESTS: dict[tuple, str] = {}


class ChecksumError(ValueError):
    """A file's checksum differs from the registered one."""


class DownloadError(OSError):
    """A dataset file could not be downloaded (network failure, HTTP error)."""


class UnverifiedDownloadWarning(UserWarning):
    """A file was downloaded from a source that publishes no checksum to verify it against."""


@dataclass(frozen=True)
class FetchedFile:
    """A located file of a dataset split.

    Attributes
    ----------
    path : Path
    location : {"embedded", "data_home", "downloaded"}
    is_our_copy : bool
        True for our verified copy (shared-folder format), False for an upstream file.
    file : DataFile
        The registry record.
    """

    path: Path
    location: str
    is_our_copy: bool
    file: DataFile


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """Return the data directory: ``data_home``, else ``$SEMISCALE_DATA``, else ``~/.semiscale``.

    The directory is not created here (downloads create it).

    Parameters
    ----------
    data_home : str or path-like, optional

    Returns
    -------
    Path
    """
    if data_home is None:
        data_home = os.environ.get(_ENV) or Path.home() / ".semiscale"
    return Path(data_home).expanduser()


def file_checksum(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file (cached per path, size and modification time).

    Parameters
    ----------
    path : str or path-like
    algorithm : {"sha256", "md5"}, default="sha256"

    Returns
    -------
    str
    """
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, algorithm)
    if key not in _DIGESTS:
        h = hashlib.new(algorithm)
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                h.update(chunk)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _expected_checksums(file: DataFile, path: Path, is_our_copy: bool) -> list[tuple[str, str]]:
    """(algorithm, hex) pairs a file found at ``path`` must match; [] if nothing is known."""
    if is_our_copy and file.sha256:
        return [("sha256", file.sha256)]
    known = [(a, h) for a, h in (("sha256", file.url_sha256), ("md5", file.url_md5)) if h]
    if known:
        return known
    sidecar = _sidecar(path)
    if sidecar.is_file():
        recorded = sidecar.read_text().split()
        if recorded:
            return [("sha256", recorded[0])]
    return []


_ON_DISK_HINT = "The file is corrupt or a different version; delete it and fetch it again."
_DOWNLOAD_HINT = (
    "The download was deleted; the transfer was corrupted or the upstream file has changed."
)


def _verify(path: Path, expected: list[tuple[str, str]], what: str, hint: str = _ON_DISK_HINT):
    for algorithm, want in expected:
        got = file_checksum(path, algorithm)
        if got != want.lower():
            raise ChecksumError(
                f"{what}: {algorithm} mismatch for {path}: expected {want}, got {got}. {hint}"
            )


def locate_file(
    dataset: str, file: DataFile, data_home: str | os.PathLike | None = None
) -> FetchedFile | None:
    """Find an existing copy of ``file`` (embedded, then data directory) without verifying it.

    Parameters
    ----------
    dataset : str
        Dataset name (the sub-directory of the data directory).
    file : DataFile
    data_home : str or path-like, optional

    Returns
    -------
    FetchedFile or None
        None when the file is nowhere on disk.
    """
    if file.embedded and (EMBEDDED_DIR / file.name).is_file():
        return FetchedFile(EMBEDDED_DIR / file.name, "embedded", True, file)
    folder = get_data_home(data_home) / dataset
    if (folder / file.name).is_file():
        return FetchedFile(folder / file.name, "data_home", file.sha256 is not None, file)
    if file.download_name and (folder / file.download_name).is_file():
        return FetchedFile(folder / file.download_name, "data_home", False, file)
    return None


def _download_one(url: str, dest: Path, verbose: bool) -> Path:
    """Stream ``url`` into a temporary file beside ``dest``; return the temporary path."""
    request = urllib.request.Request(url, headers={"User-Agent": "semiscale-datasets"})
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=_TIMEOUT) as resp:
            total = resp.headers.get("Content-Length")
            # a bar on a terminal, one line in a log (semiscale._progress)
            with progress(
                total=int(total) if total else None,
                unit="B",
                unit_scale=True,
                desc=dest.name,
                verbose=verbose,
            ) as bar:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    out.write(chunk)
                    bar.update(len(chunk))
            if total and out.tell() != int(total):
                raise DownloadError(f"{url}: connection closed after {out.tell()} of {total} bytes")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _download(dataset: str, file: DataFile, folder: Path, verbose: bool) -> Path:
    """Download ``file`` into ``folder`` atomically, verifying it when a checksum is known."""
    if not file.urls:
        raise FileNotFoundError(
            f"{dataset}: {file.name} is not on disk and has no download URL. Place a copy at "
            f"{folder / file.name} or set ${_ENV} to a directory holding {dataset}/{file.name}."
        )
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PermissionError(
            f"{dataset}: cannot create the data directory {folder} ({exc}); pass a writable "
            f"data_home= or set ${_ENV}."
        ) from exc
    try:
        return _download_into(dataset, file, folder, verbose)
    except BaseException:
        if created and not any(folder.iterdir()):
            folder.rmdir()  # leave no empty folder behind a failed download
        raise


def _download_into(dataset: str, file: DataFile, folder: Path, verbose: bool) -> Path:
    if not os.access(folder, os.W_OK):
        raise PermissionError(
            f"{dataset}: the data directory {folder} is not writable, so {file.download_name} "
            f"cannot be downloaded there; pass a writable data_home= or set ${_ENV}."
        )
    dest = folder / file.download_name
    failures = []
    for url in file.urls:
        try:
            tmp = _download_one(url, dest, verbose)
        except urllib.error.HTTPError as exc:
            failures.append(f"{url}: HTTP {exc.code} {exc.reason}")
            continue
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            failures.append(f"{url}: {type(exc).__name__}: {reason}")
            continue
        try:
            expected = [
                (a, h) for a, h in (("sha256", file.url_sha256), ("md5", file.url_md5)) if h
            ]
            _verify(tmp, expected, f"download of {dataset}/{dest.name} from {url}", _DOWNLOAD_HINT)
            digest = file_checksum(tmp)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        # Said once the file is in place: while it downloads the bar shows it, and a failed
        # download is one error line naming every URL tried.
        log(f"Downloaded {url} -> {dest}", verbose)
        if not expected:
            _sidecar(dest).write_text(f"{digest}  {dest.name}\n")
            warnings.warn(
                f"{dataset}: no published checksum exists for {url}; the downloaded file was not "
                f"verified. Its sha256 is {digest} (recorded in {_sidecar(dest).name}; later loads "
                "check against it).",
                UnverifiedDownloadWarning,
                stacklevel=5,
            )
        return dest
    raise DownloadError(
        f"{dataset}: could not download {dest.name}:\n  "
        + "\n  ".join(failures)
        + f"\nCheck the network, or download the file by hand to {dest} (or set ${_ENV})."
    )


def fetch_dataset(
    name: str,
    split: str = "train",
    *,
    data_home: str | os.PathLike | None = None,
    download: bool = True,
    verbose: bool = False,
) -> list[FetchedFile]:
    """Locate (downloading if needed) and verify the files of one split of a dataset.

    Parameters
    ----------
    name : str
        Registered dataset name (see :func:`semiscale.datasets.list_datasets`).
    split : str, default="train"
    data_home : str or path-like, optional
        Data directory; default ``$SEMISCALE_DATA`` or ``~/.semiscale``.
    download : bool, default=True
        Download files that are neither embedded nor in the data directory.
    verbose : bool, default=False
        Show a progress bar while a file downloads and say on stderr where it went (also
        without ``verbose`` when the ambient verbosity is on, as under the command line; see
        :mod:`semiscale._progress`).

    Returns
    -------
    list of FetchedFile
        One per file of the split (two for MNIST: images, labels).

    Raises
    ------
    FileNotFoundError
        A file is missing and ``download=False`` (or it has no URL).
    DownloadError
        Every URL of a missing file failed.
    ChecksumError
        A file on disk or a download does not match its checksum (a bad download is deleted).
    """
    info = dataset_info(name)
    split_info = info.split(split)
    folder = get_data_home(data_home) / info.name
    found = []
    for file in split_info.files:
        hit = locate_file(info.name, file, data_home)
        if hit is None:
            if not download:
                where = f"downloadable from {file.url}" if file.url else "no download URL known"
                raise FileNotFoundError(
                    f"{info.name}/{split}: {file.name} is neither embedded nor in the data "
                    f"directory {folder} ({where}). Pass download=True, or place the file at "
                    f"{folder / file.name} (or set ${_ENV})."
                )
            hit = FetchedFile(
                _download(info.name, file, folder, verbose), "downloaded", False, file
            )
        if hit.location != "downloaded":
            expected = _expected_checksums(file, hit.path, hit.is_our_copy)
            _verify(hit.path, expected, f"{info.name}/{split}")
        found.append(hit)
    return found
