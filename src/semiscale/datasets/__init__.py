"""Datasets: LIBSVM/idx readers, the registry of benchmark sets, synthetic data, SSL splits.

* :func:`load_dataset` / :func:`list_datasets` -- named benchmark sets (embedded copies, the data
  directory ``$SEMISCALE_DATA``, or a verified download); :func:`fetch_dataset` only locates
  the files.
* :func:`load_libsvm`, :func:`load_idx`, :func:`load_mnist_idx` -- file readers.
* :func:`make_two_moons`, :func:`make_circles` -- synthetic sets of any size;
  :func:`make_extended_usps`, :func:`distort_digits`, :func:`resize_digits` -- distorted digits.
* :func:`ssl_split`, :func:`mask_unlabeled` -- labeled/unlabeled splits;
  :func:`binary_labels`, :func:`encode_labels` -- label recoding.
"""

from .distorted import distort_digits, make_extended_usps, resize_digits
from .fetch import (
    ChecksumError,
    DownloadError,
    UnverifiedDownloadWarning,
    fetch_dataset,
    file_checksum,
    get_data_home,
)
from .labels import binary_labels, encode_labels
from .libsvm import load_libsvm
from .loaders import list_datasets, load_dataset
from .mnist import load_idx, load_mnist_idx
from .registry import DataFile, DatasetInfo, SplitInfo, dataset_info, dataset_names
from .splits import mask_unlabeled, ssl_split
from .synthetic import make_circles, make_two_moons

__all__ = [
    "ChecksumError",
    "DataFile",
    "DatasetInfo",
    "DownloadError",
    "SplitInfo",
    "UnverifiedDownloadWarning",
    "binary_labels",
    "dataset_info",
    "dataset_names",
    "distort_digits",
    "encode_labels",
    "fetch_dataset",
    "file_checksum",
    "get_data_home",
    "list_datasets",
    "load_dataset",
    "load_idx",
    "load_libsvm",
    "load_mnist_idx",
    "make_circles",
    "make_extended_usps",
    "make_two_moons",
    "mask_unlabeled",
    "resize_digits",
    "ssl_split",
]
