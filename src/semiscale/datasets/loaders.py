"""``load_dataset`` and ``list_datasets``: the user-facing side of the registry."""

from __future__ import annotations

import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from .._memory import parse_memory_budget
from .fetch import fetch_dataset, get_data_home, locate_file
from .libsvm import load_libsvm
from .mnist import load_mnist_idx
from .registry import REGISTRY, dataset_info

__all__ = ["DENSE_MAX_FEATURES", "list_datasets", "load_dataset"]

#: ``dense="auto"`` densifies only data with at most this many features.
DENSE_MAX_FEATURES = 1000


def _want_dense(X, dense, dtype) -> bool:
    if dense == "auto":
        n, d = X.shape
        return d <= DENSE_MAX_FEATURES and n * d * np.dtype(dtype).itemsize <= parse_memory_budget(
            None
        )
    if isinstance(dense, bool | np.bool_):
        return bool(dense)
    raise ValueError(f"dense must be 'auto', True or False, got {dense!r}")


def load_dataset(
    name: str,
    split: str = "train",
    *,
    data_home: str | os.PathLike | None = None,
    download: bool = True,
    dense: bool | str = "auto",
    return_X_y: bool = True,
    dtype=np.float64,
    verbose: bool = False,
):
    """Load one split of a registered dataset.

    Files are looked up embedded in the package, then in the data directory, then downloaded
    (see :mod:`semiscale.datasets.fetch`); checksums are verified where known.

    Parameters
    ----------
    name : str
        Registered name, e.g. ``"a9a"``, ``"usps"``, ``"mnist"`` (see :func:`list_datasets`).
    split : str, default="train"
        ``"train"`` or ``"test"`` where the dataset has one.
    data_home : str or path-like, optional
        Data directory (``<dataset>/<file>`` layout); default ``$SEMISCALE_DATA`` or
        ``~/.semiscale``.
    download : bool, default=True
        Download missing files from the official URL.  With False, a missing file raises
        FileNotFoundError.
    dense : {"auto", True, False}, default="auto"
        Return ``X`` as a dense ndarray (True) or CSR matrix (False).  ``"auto"`` returns dense
        when there are at most :data:`DENSE_MAX_FEATURES` (1000) features and the dense array
        fits in the default memory budget (25 % of available memory): kernel and graph code is
        faster on dense low-dimensional data, while CSR stays compact for sparse,
        high-dimensional sets.  Every registered dataset is dense under ``"auto"`` on a normal
        machine.
    return_X_y : bool, default=True
        Return ``(X, y)``; otherwise a :class:`sklearn.utils.Bunch`.
    dtype : numpy dtype, default=np.float64
        dtype of ``X``.
    verbose : bool, default=False
        Report downloads on stderr with a progress bar.

    Returns
    -------
    (X, y) or Bunch
        ``X``: ndarray or CSR of shape (n_samples, n_features).  ``y``: labels exactly as stored
        (float64 for LIBSVM files, e.g. ±1, 0/1 or 1..k; int64 0..9 for MNIST); map them with
        :func:`~semiscale.datasets.binary_labels` or :func:`~semiscale.datasets.encode_labels`.
        MNIST's ``X`` is the pixels divided by 255, in [0, 1].  The Bunch holds ``data``,
        ``target``, ``name``, ``split``, ``task``, ``info`` (the :class:`DatasetInfo`),
        ``paths``, ``location`` and ``upstream`` (True when the file read is the official
        upstream file, whose content may differ from our copy: see
        ``info.upstream_differs``).

    Raises
    ------
    ValueError
        Unknown dataset or split; malformed file; checksum mismatch (ChecksumError).
    FileNotFoundError
        Missing file with ``download=False``.
    DownloadError
        The download failed.

    Examples
    --------
    >>> from semiscale.datasets import load_dataset
    >>> X, y = load_dataset("fourclass")
    >>> X.shape
    (862, 2)
    """
    info = dataset_info(name)
    split_info = info.split(split)
    files = fetch_dataset(info.name, split, data_home=data_home, download=download, verbose=verbose)
    upstream = not all(f.is_our_copy for f in files)
    if info.format == "libsvm":
        n_features = info.url_n_features if upstream and info.url_n_features else info.n_features
        X, y = load_libsvm(files[0].path, n_features, dtype=dtype, zero_based=False)
    elif info.format == "idx":
        X, y = load_mnist_idx(files[0].path, files[1].path, dtype=dtype)
    else:  # pragma: no cover - registry invariant
        raise ValueError(f"dataset {info.name!r} has unknown format {info.format!r}")
    if X.shape[0] != split_info.n_samples:
        warnings.warn(
            f"{info.name}/{split}: read {X.shape[0]} samples from {files[0].path}, the registry "
            f"says {split_info.n_samples}",
            stacklevel=2,
        )
    if _want_dense(X, dense, dtype):
        X = X.toarray() if sp.issparse(X) else X
    elif not sp.issparse(X):
        X = sp.csr_matrix(X)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        name=info.name,
        split=split,
        task=info.task,
        info=info,
        paths=[str(f.path) for f in files],
        location=files[0].location,
        upstream=upstream,
    )


def list_datasets(data_home: str | os.PathLike | None = None) -> list[dict]:
    """Describe every registered dataset split and where it would be loaded from.

    Nothing is downloaded or verified.

    Parameters
    ----------
    data_home : str or path-like, optional
        Data directory to look in (default ``$SEMISCALE_DATA`` or ``~/.semiscale``).

    Returns
    -------
    list of dict
        One row per (dataset, split) with keys ``name``, ``split``, ``n_samples``,
        ``n_features``, ``task``, ``size`` (bytes on disk, None when absent), ``location``
        (``"embedded"``, the path of the file -- of its folder for multi-file splits -- or
        ``"not present (downloadable from URL)"`` / ``"not present (no download URL)"``),
        ``defective`` and ``notes``.

    Examples
    --------
    >>> from semiscale.datasets import list_datasets
    >>> rows = {(row["name"], row["split"]): row for row in list_datasets()}
    >>> rows["usps", "train"]["n_samples"], rows["usps", "train"]["location"]
    (7291, 'embedded')
    """
    home = get_data_home(data_home)
    rows = []
    for info in REGISTRY.values():
        for split in info.splits:
            hits = [locate_file(info.name, f, home) for f in split.files]
            if all(h is not None for h in hits):
                size = sum(h.path.stat().st_size for h in hits)
                if all(h.location == "embedded" for h in hits):
                    location = "embedded"
                elif len(hits) == 1:
                    location = str(hits[0].path)
                else:
                    location = str(hits[0].path.parent)
            else:
                size = None
                url = split.files[0].url
                location = (
                    f"not present (downloadable from {url})"
                    if url
                    else "not present (no download URL)"
                )
            rows.append(
                {
                    "name": info.name,
                    "split": split.name,
                    "n_samples": split.n_samples,
                    "n_features": info.n_features,
                    "task": info.task,
                    "size": size,
                    "location": location,
                    "defective": info.defective,
                    "notes": info.notes,
                }
            )
    return rows
