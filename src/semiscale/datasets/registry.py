"""The dataset registry: what each named dataset is, which files make it, and where they come from.

Two kinds of checksum live here and must not be confused:

* ``DataFile.sha256`` is the sha256 of **our verified copy** (the xz-compressed LIBSVM files of the
  project's shared dataset folder, also embedded in the package for the small ones).  These were
  checked against the datasets' known sizes and class balance; see ``/shared/datasets/README.md``.
* ``DataFile.url_sha256`` / ``url_md5`` are checksums of the **official upstream file** at
  ``DataFile.url``.  They are known only for MNIST (sha256 widely published; the md5s are
  torchvision's) and USPS (md5s as published by torchvision).  The LIBSVM site publishes no
  checksums, so for every other upstream file they are None: a download is then not verified,
  its sha256 is computed, reported in a warning and recorded next to the file.

The official LIBSVM files are plain text or ``.bz2``; our copies are ``.xz``, and several copies
differ from upstream in content as well (``DatasetInfo.upstream_differs`` says how).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LIBSVM_URL",
    "MNIST_URL",
    "REGISTRY",
    "DataFile",
    "DatasetInfo",
    "SplitInfo",
    "dataset_info",
    "dataset_names",
]

LIBSVM_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
MNIST_URL = "http://yann.lecun.com/exdb/mnist/"
#: Mirrors of the official MNIST files (the official site often refuses scripted downloads).
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
TASKS = ("binary", "multiclass", "regression")


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset split.

    Attributes
    ----------
    name : str
        File name of our copy (``<dataset>/<name>`` in a data directory, ``data/<name>`` when
        embedded).  For a dataset we hold no copy of, the upstream file name.
    sha256 : str or None
        sha256 of our verified copy; None when we hold no copy.
    url : str or None
        Official upstream download.
    url_sha256, url_md5 : str or None
        Checksums of the upstream file, when known (None = unknown, see module docstring).
    mirrors : tuple of str
        Further URLs tried in order when ``url`` fails with a network or HTTP error.
    embedded : bool
        Whether the package ships our copy in ``semiscale/datasets/data/``.
    """

    name: str
    sha256: str | None = None
    url: str | None = None
    url_sha256: str | None = None
    url_md5: str | None = None
    mirrors: tuple[str, ...] = ()
    embedded: bool = False

    @property
    def download_name(self) -> str | None:
        """File name a download is saved under (the last part of ``url``)."""
        return self.url.rsplit("/", 1)[-1] if self.url else None

    @property
    def urls(self) -> tuple[str, ...]:
        """``url`` followed by the mirrors."""
        return ((self.url,) if self.url else ()) + tuple(self.mirrors)

    @property
    def upstream_checksum_known(self) -> bool:
        """Whether a download from ``url`` can be verified against a published checksum."""
        return bool(self.url_sha256 or self.url_md5)


@dataclass(frozen=True)
class SplitInfo:
    """A split (``"train"``, ``"test"``) of a dataset: its size and files."""

    name: str
    n_samples: int
    files: tuple[DataFile, ...]


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of a registered dataset.

    Attributes
    ----------
    name : str
    task : {"binary", "multiclass", "regression"}
    n_features : int
        Columns of ``X`` as loaded from our copy (and from upstream unless ``url_n_features``).
    splits : tuple of SplitInfo
    format : {"libsvm", "idx"}
    labels : str
        The label values as stored (returned unchanged by ``load_dataset``).
    source : str
        Where our copy came from.
    notes : str
    upstream_differs : str
        How the official upstream file differs from our copy ("" when it should be the same
        data, apart from compression).
    url_n_features : int or None
        Feature count of the upstream file when it differs from ``n_features``.
    defective : bool
        Our copy is known to be damaged (see ``notes``); prefer the alternative named there.
    """

    name: str
    task: str
    n_features: int
    splits: tuple[SplitInfo, ...]
    format: str = "libsvm"
    labels: str = ""
    source: str = ""
    notes: str = ""
    upstream_differs: str = ""
    url_n_features: int | None = None
    defective: bool = False

    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.splits)

    def split(self, name: str) -> SplitInfo:
        """Return the split called ``name``; a ValueError lists the available ones."""
        for s in self.splits:
            if s.name == name:
                return s
        raise ValueError(
            f"dataset {self.name!r} has no split {name!r}; available: {list(self.split_names)}"
        )


def _libsvm(name, task, n_features, splits, *, embedded=True, **kwargs) -> DatasetInfo:
    """Build a LIBSVM-format entry.

    ``splits`` maps split name -> ``(n_samples, our_file, our_sha256, upstream_path)``, where
    ``upstream_path`` is relative to :data:`LIBSVM_URL` (or None) and ``our_file`` is None for a
    dataset we hold no copy of.  ``embedded``: True (every split we hold), False, or a tuple of
    split names.
    """
    out = []
    for split, (n_samples, file, sha, upstream) in splits.items():
        url = LIBSVM_URL + upstream if upstream else None
        emb = embedded is True or (isinstance(embedded, tuple) and split in embedded)
        fname = file or (url.rsplit("/", 1)[-1] if url else None)
        out.append(
            SplitInfo(
                split,
                n_samples,
                (DataFile(fname, sha, url, embedded=bool(emb and file), **kwargs.pop(split, {})),),
            )
        )
    return DatasetInfo(name=name, task=task, n_features=n_features, splits=tuple(out), **kwargs)


_PM1 = "-1/+1"
_UNSCALED = "Same data as upstream: the LIBSVM file holds the original unscaled values too."

# fmt: off
_ENTRIES = [
    _libsvm("a9a", "binary", 123, {
        "train": (32561, "a9a.svm.xz", "ffff2c468a83c366db8daae79fe70e3b3f16f39c284a8f1397fe7756db9e2490", "binary/a9a"),  # noqa: E501
        "test": (16281, "a9a.test.svm.xz", "1f4e23c70b127832110c734aa5e030ce4db059cd3493851786a0e0963973c1fa", "binary/a9a.t"),  # noqa: E501
    }, labels=_PM1, source="Astraeus-Q/SVM-Classifier a9a.txt; test carolinetfls/gpu_svm_acceleration"),  # noqa: E501
    _libsvm("a8a", "binary", 123, {
        "train": (22696, "a8a.svm.xz", "7ac074de71eaed87cf6727662bdae351a61e4b42904c138c9a134e61b69c1417", "binary/a8a"),  # noqa: E501
        "test": (9865, "a8a.test.svm.xz", "69d79e87d7698cde18e14ca94def9dbf25f6a676dde1dca28af11499cb79f0ce", "binary/a8a.t"),  # noqa: E501
    }, labels=_PM1, source="unc-optimization/AccSPD data/a8a; test HeJingweiFoward/SVM"),
    _libsvm("a1a", "binary", 123, {
        "train": (1605, "a1a.svm.xz", "0c20a1f8a2d0b1ea878cc5fd45ea3eac18bff22c1b62624712833f2d62e69a1c", "binary/a1a"),  # noqa: E501
        "test": (30956, "a1a.test.svm.xz", "094a2eadb1d42acdce43793e3c7748282a3b7ff9ce03267f61a744c0a1ce65e2", "binary/a1a.t"),  # noqa: E501
    }, labels=_PM1, source="HeJingweiFoward/SVM DataSet/a1a, a1a.t",
        notes="The training file never uses features 120-123; load with n_features=123."),
    _libsvm("w8a", "binary", 300, {
        "train": (49749, "w8a.svm.xz", "f0c80f6c99931cbb7da19021dac221ca4a0b67840056eb2811ca0acafd5dc5c7", "binary/w8a"),  # noqa: E501
        "test": (14951, "w8a.test.svm.xz", "d7f5d00c434df9cb1164f919f1031700bb8546ab6c82fc3db472f1bc4401db28", "binary/w8a.t"),  # noqa: E501
    }, labels=_PM1, source="unc-optimization/AccSPD data/w8a; test PanHaulin/CFNPM"),
    _libsvm("w7a", "binary", 300, {
        "train": (24692, None, None, "binary/w7a"),
        "test": (25057, None, None, "binary/w7a.t"),
    }, labels=_PM1, notes="Not in the shared folder: downloaded from LIBSVM on first use."),
    _libsvm("phishing", "binary", 68, {
        "train": (11055, "phishing.svm.xz", "e3bb6ad0f1c57f2f005e432691524dcba1fde22d134e63c597c1cb1d731cb33e", "binary/phishing"),  # noqa: E501
    }, labels="0/1", source="scikit-adaptation/skada-bench data/phishing/phishing.txt"),
    _libsvm("abalone", "regression", 8, {
        "train": (4177, "abalone.svm.xz", "3e3e198d71adb76e1fbc56ae2941eed19b076398a50a7fe4845960a51edae502", "regression/abalone_scale"),  # noqa: E501
    }, labels="ring count 1..29 (integer-valued regression target)",
        source="PanHaulin/CFNPM datasets/libsvm/regression/abalone_scale",
        notes="Integer-valued target: pass task='regression' to ssl_split."),
    _libsvm("german.numer", "binary", 24, {
        "train": (1000, "german.numer.svm.xz", "295e318a1f885883edbb58a2df37f644c288454879b1d43ad604ffe67bbfdefd", "binary/german.numer_scale"),  # noqa: E501
    }, labels=_PM1, source="bokunwang1/P-norm-Push data/german_scale.txt (features in [-1, 1])"),
    _libsvm("fourclass", "binary", 2, {
        "train": (862, "fourclass.svm.xz", "4a741c77769b48dece14c8c6dfa4d058aa695ee0e4fa799a9f59e15813187211", "binary/fourclass_scale"),  # noqa: E501
    }, labels=_PM1, source="imwise/machineLearning fourclass_scale"),
    _libsvm("housing", "regression", 13, {
        "train": (506, "housing.svm.xz", "f7004b62433204f1cda46cbe7dfb4f51a66fc56e0f7947084789936ebf8e9735", "regression/housing_scale"),  # noqa: E501
    }, labels="median value, real in [5, 50]", source="PanHaulin/CFNPM housing_scale"),
    _libsvm("letter", "multiclass", 16, {
        "train": (15000, "letter.svm.xz", "7cf67e596cb73cd3b3616bba889e81d94be913fbd226f2ca155da9ef15fc9c8c", "multiclass/letter.scale"),  # noqa: E501
        "test": (5000, "letter.test.svm.xz", "f973cb966b9f615f7eae87040020a1d9bd4d0a16d2c48111946ded0480565b80", "multiclass/letter.scale.t"),  # noqa: E501
    }, labels="1..26", source="baowj-678/Machine-Learning LibSVM/dataset letter.scale(.t)"),
    _libsvm("ijcnn1_val", "binary", 22, {
        "train": (14990, "ijcnn1_val.svm.xz", "e2c7c985c3994f46a4b458d04405fa7dfcac552723142414a8278885266ab48f", "binary/ijcnn1.val.bz2"),  # noqa: E501
    }, labels=_PM1, source="baowj-678/Machine-Learning ijcnn1.val",
        notes="The intact 14,990-row LIBSVM ijcnn1 validation split; use it, not ijcnn1_partial."),
    _libsvm("ijcnn1_partial", "binary", 22, {
        "train": (49990, "ijcnn1_partial.svm.xz", "8aed50c4ef583d33b1eafa84feb68818acdc8a9ef68e02199c7e9f4e2723ec62", None),  # noqa: E501
    }, embedded=False, defective=True, labels=_PM1,
        source="g2clv7fwl945/convex_dataset ijcnn1.mat",
        notes="DEFECTIVE: features 1-10 (one-hot) are all zero in this copy; features 11-22 and "
        "labels are intact. Prefer ijcnn1_val, or the intact upstream file as dataset 'ijcnn1'."),
    _libsvm("ijcnn1", "binary", 22, {
        "train": (49990, None, None, "binary/ijcnn1.bz2"),
        "test": (91701, None, None, "binary/ijcnn1.t.bz2"),
    }, labels=_PM1, notes="Full LIBSVM ijcnn1 (train = tr + val); not in the shared folder."),
    _libsvm("madelon", "binary", 500, {
        "train": (2000, "madelon.svm.xz", "62095f3e3494f262bf030a6c56931863edfe8026ae67fca55b3d185e896fc7fa", "binary/madelon"),  # noqa: E501
        "test": (600, "madelon.test.svm.xz", "13af9eb25b7899e6ae40de217294494093cfebaaa2fca23a1bcf44ea27429f31", "binary/madelon.t"),  # noqa: E501
    }, embedded=False, labels=_PM1,
        source="train: asalazar18s/DM4 + ericdasse28/online-learning (merged); "
        "test: PanHaulin/CFNPM",
        notes="Training rows merged from two partial copies that agree on their 1169 common rows."),
    _libsvm("cod-rna", "binary", 8, {
        "train": (59535, "cod-rna.svm.xz", "cc9b0fa6bbfcb659aa3be52099f847fa8de7b8167921ba26d12cd41be1cf52e6", "binary/cod-rna"),  # noqa: E501
    }, labels=_PM1, source="g2clv7fwl945/convex_dataset cor_rna_scaled.mat",
        upstream_differs="Our copy has every column z-scored; the LIBSVM file holds raw values."),
    _libsvm("splice", "binary", 60, {
        "train": (1000, "splice.svm.xz", "3825c0afb0afb8e1b543689e85166c80911a1f21617879adddd6059368b2a5de", "binary/splice_scale"),  # noqa: E501
    }, labels=_PM1, source="g2clv7fwl945/convex_dataset splice_scaled.mat",
        upstream_differs="Our copy was scaled by its source; its scaling is not verified to "
        "equal LIBSVM's splice_scale."),
    _libsvm("svmguide3", "binary", 22, {
        "train": (1243, "svmguide3.svm.xz", "f976d66566b51cb299cb369d920846cb28ca70df598b4745773896e61bd26525", "binary/svmguide3"),  # noqa: E501
    }, labels=_PM1, source="g2clv7fwl945/convex_dataset svmguide3.mat"),
    _libsvm("australian", "binary", 14, {
        "train": (690, "australian.svm.xz", "70674f8ec02bb2d9e681d1b52f5d5a874b7762d463756fff0c0145b3bf1ab4d2", "binary/australian_scale"),  # noqa: E501
    }, labels=_PM1, source="g2clv7fwl945/convex_dataset australian.mat (scaled by the source)",
        upstream_differs="Our copy was scaled by its source, not verified to equal "
        "australian_scale."),
    _libsvm("usps", "multiclass", 256, {
        "train": (7291, "usps.svm.xz", "2a3c1d469b304256527b7f890237e25ad17c744e168116257c2b7c953c421e95", "multiclass/usps.bz2"),  # noqa: E501
        "test": (2007, "usps.test.svm.xz", "abe979e9b0c9a495e0819039b138b17db11b636c22b360992091497538b52630", "multiclass/usps.t.bz2"),  # noqa: E501
    }, embedded=("train",), labels="0..9 (our copy); 1..10 upstream",
        source="niuers/Learning-From-Data-A-Short-Course data/usps.h5",
        upstream_differs="Our copy: pixels in [0, 1], labels 0..9. The LIBSVM file: pixels "
        "2x-1 in [-1, 1], labels 1..10.",
        train={"url_md5": "ec16c51db3855ca6c91edd34d0e9b197"},
        test={"url_md5": "8ea070ee2aca1ac39742fdd1ef5ed118"}),
    _libsvm("space_ga", "regression", 6, {
        "train": (3107, "space_ga.svm.xz", "3bc448fad8735d6c300cbfcba9dfdd45247d64748046b1a4c8501872c906f12a", "regression/space_ga"),  # noqa: E501
    }, labels="ln(votes per population), real", source="alexander-0115/UNIR space_ga.csv",
        notes="Features unscaled. " + _UNSCALED),
    _libsvm("cpusmall", "regression", 12, {
        "train": (8192, "cpusmall.svm.xz", "ead7a97cd27e29646268acbcd2475c0efdf2fea53f9976ca5470573cd26b81f2", "regression/cpusmall"),  # noqa: E501
    }, labels="0..99 (integer-valued regression target)",
        source="EpistasisLab/pmlb datasets/227_cpu_small", notes="Features unscaled. " + _UNSCALED),
    _libsvm("connect-4", "multiclass", 42, {
        "train": (67557, "connect-4.svm.xz", "58bbd330d50f6e07a9dd79b25ff7829d312106cc4eff2a6c1e456159fdfb0faa", "multiclass/connect-4"),  # noqa: E501
    }, labels="0/1/2", source="EpistasisLab/pmlb datasets/connect_4",
        upstream_differs="Our copy: 42 board cells coded 0/1/2, labels 0/1/2. The LIBSVM file "
        "one-hot encodes the cells (126 binary features) and labels differently.",
        url_n_features=126),
    _libsvm("skin_nonskin", "binary", 3, {
        "train": (245057, "skin_nonskin.svm.xz", "32b1cf66bf4d99a9ad922844928e6f5a0a1be7665134aec4d6c7dabbd47e6272", "binary/skin_nonskin"),  # noqa: E501
    }, labels="1 = skin, 2 = non-skin", source="ClaudiuGeorgiu/Classification Skin_NonSkin.txt",
        notes="Raw RGB values 0..255."),
    _libsvm("YearPredictionMSD", "regression", 90, {
        "train": (463715, None, None, "regression/YearPredictionMSD.bz2"),
        "test": (51630, None, None, "regression/YearPredictionMSD.t.bz2"),
    }, labels="year 1922..2011", notes="Not in the shared folder; ~200 MB compressed."),
    _libsvm("covtype", "binary", 54, {
        "train": (581012, None, None, "binary/covtype.libsvm.binary.bz2"),
    }, labels="1/2", notes="The binary LIBSVM covtype (class 2 vs rest), unscaled; not in the "
        "shared folder. The 7-class version is multiclass/covtype.bz2."),
]


def _mnist_file(name: str, sha256: str, md5: str) -> DataFile:
    return DataFile(
        name, sha256, MNIST_URL + name, url_sha256=sha256, url_md5=md5,
        mirrors=tuple(m + name for m in MNIST_MIRRORS),
    )


_ENTRIES.append(
    DatasetInfo(
        name="mnist",
        task="multiclass",
        n_features=784,
        format="idx",
        labels="0..9",
        source="official idx files (the shared test pair via pmallari/MNIST, md5 equal to the "
        "official files)",
        notes="X = pixels / 255 in [0, 1], float64 (use load_idx for the raw uint8 images); "
        "y int64. Only the test split is in the shared folder; the training split downloads.",
        splits=(
            SplitInfo("train", 60000, (
                _mnist_file("train-images-idx3-ubyte.gz", "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),  # noqa: E501
                _mnist_file("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c", "d53e105ee54ea40749a09fcbcd1e9432"),  # noqa: E501
            )),
            SplitInfo("test", 10000, (
                _mnist_file("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", "9fb629c4189551a2d022fa330f9573f3"),  # noqa: E501
                _mnist_file("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6", "ec29112dd5afa0611ce80d1b7f02629c"),  # noqa: E501
            )),
        ),
    )
)
# fmt: on

#: name -> DatasetInfo.  Tests may add entries (e.g. with ``monkeypatch.setitem``).
REGISTRY: dict[str, DatasetInfo] = {info.name: info for info in _ENTRIES}


def dataset_names() -> list[str]:
    """Names of all registered datasets, in registry order."""
    return list(REGISTRY)


def dataset_info(name: str) -> DatasetInfo:
    """Return the :class:`DatasetInfo` of a registered dataset.

    Parameters
    ----------
    name : str
        Dataset name, e.g. ``"a9a"``; matched exactly, then case-insensitively.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the registered names.

    Examples
    --------
    >>> from semiscale.datasets import dataset_info
    >>> info = dataset_info("USPS")                          # case-insensitive
    >>> info.name, info.task, info.n_features, info.split_names
    ('usps', 'multiclass', 256, ('train', 'test'))
    """
    if name in REGISTRY:
        return REGISTRY[name]
    folded = {k.lower(): v for k, v in REGISTRY.items()}
    if isinstance(name, str) and name.lower() in folded:
        return folded[name.lower()]
    raise ValueError(f"unknown dataset {name!r}; registered datasets: {', '.join(REGISTRY)}")
