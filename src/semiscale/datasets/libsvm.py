"""Read LIBSVM / svmlight text files, plain or compressed (xz, bz2, gzip).

The parsing itself is scikit-learn's :func:`sklearn.datasets.load_svmlight_file`; this module
only opens the file through the right decompressor and turns the usual failures (missing file,
corrupt stream, malformed line, too few features declared) into errors that name the file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

__all__ = ["detect_compression", "load_libsvm", "open_compressed"]

#: Leading bytes of each supported compressed format.
_MAGIC = (
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bz2"),
    (b"\x1f\x8b", "gzip"),
)
_SUFFIX = {".xz": "xz", ".lzma": "xz", ".bz2": "bz2", ".gz": "gzip", ".gzip": "gzip"}
_OPENERS = {"xz": lzma.open, "bz2": bz2.open, "gzip": gzip.open}
#: Exceptions a decompressor raises on a corrupt or truncated stream.
_STREAM_ERRORS = (lzma.LZMAError, EOFError, gzip.BadGzipFile, OSError)


def detect_compression(path: str | os.PathLike) -> str | None:
    """Return the compression of a file: ``"xz"``, ``"bz2"``, ``"gzip"`` or None (plain).

    The magic bytes decide; the suffix (``.xz``, ``.bz2``, ``.gz``) is only used for a file too
    short to carry a magic number.  Official LIBSVM files come plain or as ``.bz2``, the shared
    copies as ``.xz``; all read the same way.

    Parameters
    ----------
    path : str or path-like
        An existing file.

    Returns
    -------
    str or None
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if len(head) < 6:
        return _SUFFIX.get(path.suffix.lower())
    return None


def open_compressed(path: str | os.PathLike) -> BinaryIO:
    """Open a file for binary reading through the decompressor its magic bytes call for.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    file object
        Binary, readable; use it as a context manager.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not an existing file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {path}")
    kind = detect_compression(path)
    if kind is None:
        return open(path, "rb")
    return _OPENERS[kind](path, "rb")


def load_libsvm(
    path: str | os.PathLike,
    n_features: int | None = None,
    *,
    dtype=np.float64,
    zero_based: bool | str = "auto",
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load a LIBSVM (svmlight) file into a CSR matrix and a label vector.

    Parameters
    ----------
    path : str or path-like
        Plain text, ``.xz``, ``.bz2`` or ``.gz`` file (detected from the magic bytes, so a
        renamed file still reads).
    n_features : int, optional
        Number of columns.  Pass it for a train/test pair: a split that never uses the last
        feature would otherwise come back narrower (a1a's training file stops at feature 119 of
        123).  Must be at least the largest feature index in the file.
    dtype : numpy dtype, default=np.float64
        dtype of ``X`` (float32 or float64).
    zero_based : bool or "auto", default="auto"
        Whether feature indices start at 0.  ``"auto"`` assumes one-based (the LIBSVM
        convention) unless an index 0 appears; official LIBSVM files are one-based.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels exactly as stored in the file (float64: e.g. ±1, 0/1, 1..k, or real targets).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is empty, the compressed stream is corrupt or truncated, a line cannot be
        parsed, or ``n_features`` is smaller than the largest index in the file.

    Examples
    --------
    >>> from semiscale.datasets import load_libsvm
    >>> X, y = load_libsvm("a9a.t", n_features=123)  # doctest: +SKIP
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"LIBSVM file not found: {path}")
    if n_features is not None and (not isinstance(n_features, int | np.integer) or n_features < 1):
        raise ValueError(f"n_features must be a positive int or None, got {n_features!r}")
    kind = detect_compression(path)
    what = f"{kind}-compressed " if kind else ""
    try:
        with open_compressed(path) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=dtype, zero_based=zero_based)
    except ValueError as exc:
        raise ValueError(
            f"{path}: malformed LIBSVM/svmlight {what}file ({exc}). Each line must read "
            "'<label> <index>:<value> ...' with increasing indices."
        ) from exc
    except _STREAM_ERRORS as exc:
        raise ValueError(
            f"{path}: cannot decompress this {what}file ({type(exc).__name__}: {exc}); it is "
            "probably truncated or corrupt. Delete it and download it again."
        ) from exc
    if X.shape[0] == 0:
        raise ValueError(f"{path}: the LIBSVM file contains no samples")
    return sp.csr_matrix(X), y
