"""Read the idx files in which MNIST is distributed.

An idx file is a 4-byte magic number ``0x00 0x00 <type> <ndim>``, then ``ndim`` big-endian
uint32 dimensions, then the data in big-endian order, row-major.  The official MNIST files are
gzip-compressed idx files: images ``(n, 28, 28)`` uint8, labels ``(n,)`` uint8.
"""

from __future__ import annotations

import os
from math import prod
from pathlib import Path

import numpy as np

from .libsvm import _STREAM_ERRORS, detect_compression, open_compressed

__all__ = ["load_idx", "load_mnist_idx"]

#: idx type byte -> big-endian numpy dtype.
IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def load_idx(path: str | os.PathLike) -> np.ndarray:
    """Load an idx file (gzip-compressed or raw) into a native-endian ndarray.

    Parameters
    ----------
    path : str or path-like
        An idx file, e.g. ``t10k-images-idx3-ubyte.gz``.  Compression is detected from the
        magic bytes (gzip, also xz/bz2), not the name.

    Returns
    -------
    ndarray
        Shape given by the header, dtype by its type byte (uint8 for MNIST), native byte order.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        On a bad magic number, an unknown type byte, a truncated header or body, trailing
        bytes, or a corrupt compressed stream.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"idx file not found: {path}")
    try:
        with open_compressed(path) as fh:
            raw = fh.read()
    except _STREAM_ERRORS as exc:
        kind = detect_compression(path) or "raw"
        raise ValueError(
            f"{path}: cannot decompress this {kind} idx file ({type(exc).__name__}: {exc}); it is "
            "probably truncated or corrupt"
        ) from exc
    if len(raw) < 4:
        raise ValueError(f"{path}: truncated idx file ({len(raw)} bytes, the header needs 4)")
    magic = raw[:4]
    if magic[0] != 0 or magic[1] != 0 or magic[2] not in IDX_DTYPES or magic[3] == 0:
        raise ValueError(
            f"{path}: bad idx magic number 0x{magic.hex()}; expected 0x0000TTDD with type byte TT "
            f"in {{{', '.join(f'{t:02x}' for t in IDX_DTYPES)}}} and DD >= 1 dimensions "
            "(MNIST images: 0x00000803, labels: 0x00000801)"
        )
    dtype, ndim = IDX_DTYPES[magic[2]], magic[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated idx header ({len(raw)} bytes, need {header})")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    expected = prod(shape) * dtype.itemsize
    body = len(raw) - header
    if body < expected:
        raise ValueError(
            f"{path}: truncated idx data: header announces shape {shape} ({expected} bytes) but "
            f"only {body} bytes follow"
        )
    if body > expected:
        raise ValueError(
            f"{path}: {body - expected} unexpected trailing bytes after the idx data of shape "
            f"{shape}; the file is not a valid idx file"
        )
    data = np.frombuffer(raw, dtype=dtype, count=prod(shape), offset=header)
    return data.astype(dtype.newbyteorder("="), copy=True).reshape(shape)


def load_mnist_idx(
    images: str | os.PathLike,
    labels: str | os.PathLike,
    *,
    scale: bool = True,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Load an MNIST-style pair of idx files into ``(X, y)``.

    Parameters
    ----------
    images : str or path-like
        idx3 file of shape ``(n, rows, cols)``, e.g. ``t10k-images-idx3-ubyte.gz``.
    labels : str or path-like
        idx1 file of shape ``(n,)``, e.g. ``t10k-labels-idx1-ubyte.gz``.
    scale : bool, default=True
        Divide the uint8 pixels by 255 so that ``X`` lies in ``[0, 1]``; False keeps the raw
        0..255 values (still as ``dtype``).
    dtype : numpy dtype, default=np.float64

    Returns
    -------
    X : ndarray of shape (n, rows * cols)
        Images flattened row-major.
    y : ndarray of shape (n,), int64
        Digit labels 0..9.

    Raises
    ------
    ValueError
        If the files are not 3-D images and 1-D labels of the same length.
    """
    imgs = load_idx(images)
    labs = load_idx(labels)
    if imgs.ndim != 3:
        raise ValueError(f"{images}: expected a 3-D idx image file, got shape {imgs.shape}")
    if labs.ndim != 1:
        raise ValueError(f"{labels}: expected a 1-D idx label file, got shape {labs.shape}")
    if len(imgs) != len(labs):
        raise ValueError(f"{images} holds {len(imgs)} images but {labels} holds {len(labs)} labels")
    X = imgs.reshape(len(imgs), -1).astype(dtype)
    if scale:
        X /= 255.0
    return X, labs.astype(np.int64)
