"""A reproduction protocol as data: datasets, splits, repeats and per-method caps with reasons.

A paper's protocol is a frozen dataclass deriving from :class:`Protocol`; every knob is a field
declared with :func:`knob`, whose ``why`` is printed beside its value in every report (see
:func:`semiscale_bench.harness.report.protocol_section`).  Methods that run on fewer repeats
than the protocol (or not at all) say so with :class:`Cap` rules, so that every table cell can
say how many repeats it averages and every "/" why.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Cap", "Dataset", "Protocol", "Sizes", "knob", "n_labeled"]


def n_labeled(n_train: int, fraction: float) -> int:
    """Labeled points for a labeled ``fraction`` of ``n_train`` (at least 2)."""
    return max(2, int(round(fraction * n_train)))


def knob(default, why: str):
    """A protocol field with its reason (``why`` is shown next to the value in reports).

    Mappings are stored read-only, so that a frozen protocol cannot be changed in place.
    """
    if isinstance(default, Mapping):
        frozen = MappingProxyType(dict(default))
        return field(default_factory=lambda: frozen, metadata={"why": why})
    return field(default=default, metadata={"why": why})


@dataclass(frozen=True)
class Dataset:
    """One dataset of a paper's tables.

    Parameters
    ----------
    name : str
        The name in the paper's tables (the key of every record).
    source : str or None
        The registered :mod:`semiscale.datasets` name; None when we do not have the data (its
        row then shows the paper's numbers only).
    note : str, default=""
        How our copy differs from the paper's, printed in the reports.
    """

    name: str
    source: str | None
    note: str = ""


@dataclass(frozen=True)
class Sizes:
    """Problem sizes of one dataset under a protocol (they decide caps and method settings)."""

    n: int
    d: int
    n_train: int
    m: int  # labeled training points
    s: int = 0  # Nyström centers, 0 where no method uses any

    @property
    def n_test(self) -> int:
        return self.n - self.n_train


@dataclass(frozen=True)
class Cap:
    """A rule limiting where a method runs: the first ``repeats`` repeats only (0: not at all).

    A cap applies when all its conditions hold (no condition: always); the first cap of a
    method that applies and removes repeats decides.  ``reason`` is printed in the reports.
    """

    repeats: int
    reason: str
    n_train_above: int | None = None  # applies when n_train exceeds this
    datasets: tuple[str, ...] | None = None  # applies to these datasets only
    labeled_above_centers: bool = False  # applies when m > s

    def applies(self, dataset: str, sizes: Sizes) -> bool:
        return (
            (self.n_train_above is None or sizes.n_train > self.n_train_above)
            and (self.datasets is None or dataset in self.datasets)
            and (not self.labeled_above_centers or sizes.m > sizes.s)
        )


@dataclass(frozen=True)
class Protocol:
    """Generic part of every protocol; a paper's protocol derives from it and adds its knobs.

    Validation happens on construction, so that a bad protocol fails before any fit.
    """

    paper: str = knob("", "key of the records (paper or study name)")
    datasets: tuple[Dataset, ...] = knob((), "datasets in the order of the paper's tables")
    methods: tuple[str, ...] = knob((), "method names, the keys of the method registry")
    repeats: int = knob(1, "random train/test splits per dataset (repeat r uses seed r)")
    train_fraction: float = knob(0.7, "training share of each random split")
    labeled_fraction: float = knob(0.1, "labeled share of the training split")
    reduced_repeats: Mapping = knob({}, "dataset -> (repeats, reason): fewer repeats for time")
    caps: Mapping = knob({}, "method -> Cap rules: where a method runs fewer repeats, and why")
    center_fraction: float = knob(0.0, "Nyström centers s = ceil(fraction × n_train); 0: none")
    center_cap: Mapping = knob(
        {}, "dataset -> most centers (the reason is said in the paper's spec)"
    )
    sweeps: tuple = knob((), "figures: the error against the labeled or center share (Sweep)")
    speedup: object = knob(None, "a speed-up claim on one larger problem (Speedup)")
    max_samples: int | None = knob(None, "subsample every dataset first (quick runs only)")
    quick: bool = knob(False, "tiny sizes for a smoke test: not the benchmark")

    def __post_init__(self):
        for f in dataclasses.fields(self):  # read-only mappings: a frozen protocol stays frozen
            value = getattr(self, f.name)
            if isinstance(value, Mapping) and not isinstance(value, MappingProxyType):
                object.__setattr__(self, f.name, MappingProxyType(dict(value)))
        errors = []
        if not self.paper:
            errors.append("paper must name the records' paper or study")
        if not 0 < self.train_fraction <= 1:
            errors.append(f"train_fraction must be in (0, 1], got {self.train_fraction!r}")
        if not 0 < self.labeled_fraction <= 1:
            errors.append(f"labeled_fraction must be in (0, 1], got {self.labeled_fraction!r}")
        if not isinstance(self.repeats, int) or self.repeats < 1:
            errors.append(f"repeats must be a positive int, got {self.repeats!r}")
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            errors.append(f"dataset names repeat: {names}")
        if len(set(self.methods)) != len(self.methods):
            errors.append(f"method names repeat: {list(self.methods)}")
        for name, value in self.reduced_repeats.items():
            if name not in names:
                errors.append(f"reduced_repeats names unknown dataset {name!r}")
            if not (isinstance(value, tuple) and len(value) == 2 and value[0] >= 1 and value[1]):
                errors.append(f"reduced_repeats[{name!r}] must be (repeats >= 1, reason)")
        for method, caps in self.caps.items():
            if method not in self.methods:
                errors.append(f"caps name unknown method {method!r}; methods: {self.methods}")
            for cap in caps:
                if not isinstance(cap, Cap) or cap.repeats < 0 or not cap.reason:
                    errors.append(f"caps[{method!r}] needs Cap(repeats >= 0, reason), got {cap}")
                elif cap.datasets and set(cap.datasets) - set(names):
                    errors.append(f"caps[{method!r}] names unknown datasets {cap.datasets}")
        if errors:
            raise ValueError(f"invalid {type(self).__name__}: " + "; ".join(errors))

    # ------------------------------------------------------------------------------ queries
    def dataset(self, name: str) -> Dataset:
        """The :class:`Dataset` called ``name`` (a clear error naming the choices otherwise)."""
        for d in self.datasets:
            if d.name == name:
                return d
        raise ValueError(f"unknown dataset {name!r}; choose from {[d.name for d in self.datasets]}")

    def repeats_for(self, dataset: str) -> tuple[int, str | None]:
        """Repeats on ``dataset`` and the reason when they are fewer than :attr:`repeats`."""
        k, reason = self.reduced_repeats.get(dataset, (self.repeats, None))
        return (k, reason) if k < self.repeats else (self.repeats, None)

    def plan(self, method: str, dataset: str, sizes: Sizes) -> tuple[list[int], str | None]:
        """Repeats ``method`` runs on for ``dataset``, and why when fewer than the dataset's."""
        if method not in self.methods:
            raise ValueError(f"unknown method {method!r}; choose from {list(self.methods)}")
        repeats = list(range(self.repeats_for(dataset)[0]))
        for cap in self.caps.get(method, ()):
            if cap.applies(dataset, sizes) and cap.repeats < len(repeats):
                return repeats[: cap.repeats], cap.reason
        return repeats, None

    def sizes(self, dataset: str, n: int, d: int) -> Sizes:
        """Problem sizes of ``dataset`` with ``n`` points of dimension ``d``."""
        n_train = int(round(self.train_fraction * n))
        return Sizes(
            n, d, n_train, n_labeled(n_train, self.labeled_fraction), self.centers(dataset, n_train)
        )

    def centers(self, dataset: str, n_train: int, fraction: float | None = None) -> int:
        """Nyström centers: ``fraction`` (default :attr:`center_fraction`) of ``n_train``.

        At least 2 and at most ``n_train``; the dataset's :attr:`center_cap` applies to the
        protocol's own fraction only (sweeps over the fraction ignore it).
        """
        if fraction is None:
            fraction = self.center_fraction
            cap = self.center_cap.get(dataset)
        else:
            cap = None
        if not fraction:
            return 0
        s = max(2, min(n_train, math.ceil(fraction * n_train)))
        return min(cap, s) if cap else s

    def knobs(self):
        """(name, value, why) of every field, in declaration order."""
        return [
            (f.name, getattr(self, f.name), f.metadata.get("why", ""))
            for f in dataclasses.fields(self)
        ]

    def as_dict(self) -> dict:
        """The protocol as plain JSON-able data (tuples as lists, caps as dicts)."""
        return json.loads(json.dumps({k: v for k, v, _ in self.knobs()}, default=_plain))

    def digest(self) -> str:
        """Short hash of what decides the results: records of another protocol never mix.

        Explanations (reasons, notes, titles) are left out, so rewording one keeps the records.
        """
        text = json.dumps(_without_prose(self.as_dict()), sort_keys=True)
        return hashlib.sha1(text.encode()).hexdigest()[:12]


_PROSE = ("reason", "note", "title")


def _without_prose(obj):
    if isinstance(obj, dict):
        return {k: _without_prose(v) for k, v in obj.items() if k not in _PROSE}
    if isinstance(obj, list):
        # (repeats, reason) pairs of reduced_repeats keep their number only
        if len(obj) == 2 and isinstance(obj[0], int) and isinstance(obj[1], str):
            return obj[0]
        return [_without_prose(v) for v in obj]
    return obj


def _plain(obj):
    if isinstance(obj, MappingProxyType):
        return dict(obj)
    if dataclasses.is_dataclass(obj):
        return {
            k: v for k, v in dataclasses.asdict(obj).items() if v is not None and v is not False
        }
    raise TypeError(f"cannot store {type(obj).__name__} in a protocol")
