"""Device copies of the large host operands that a solver passes again and again.

A PCG loop hands :class:`~semiscale.backends.TorchOps` the same ``X`` (``n × d``) twice per
iteration, the same Laplacian and the same ``s × s`` Cholesky factor; uploading them at every call
would move ``n·d`` numbers per product where only the ``n × r`` vectors need to move.  This module
keeps one device copy per host array, found again by the array's identity.

A copy is reused only while *all* of these hold, else it is dropped and the array uploaded again:

- the host array is alive (a :mod:`weakref` to it; its death removes the entry, so a new array
  that gets the same address is never mistaken for it);
- its data pointer, shape, strides and dtype are those recorded (sparse: of ``data``,
  ``indices`` and ``indptr``, and ``nnz``);
- a sample of its contents is unchanged: :data:`SAMPLE_ROWS` rows spread evenly over a dense
  array (every column of those rows, so a changed column or diagonal is seen), or
  :data:`SAMPLE_VALUES` stored values and column indices of a sparse one.

The sample makes in-place changes of the whole array (``X *= 2``, ``X[:] = new``) or of whole
columns visible for the price of copying a few rows; a write to a few rows outside the sample is
*not* seen (checking every entry would cost more than the upload it saves: reading the array
once on the host is no faster than sending it over PCIe).  It is a second guard: the rule is
that a cache lives for one residency scope (:meth:`TorchOps.resident
<semiscale.backends.TorchOps.resident>`, one fit) and is dropped when the scope ends, so that a
user's edits between two fits are seen however few rows they touch.  Code that edits a cached
operand in place inside a scope must call :meth:`ResidentCache.clear` (:meth:`TorchOps.clear_cache
<semiscale.backends.TorchOps.clear_cache>`).  Arrays smaller than ``min_bytes`` are not kept
(their upload is cheap and they are often temporaries); at most ``max_entries`` arrays of at most
``max_bytes`` together are, the least recently used dropped first (an array larger than
``max_bytes`` is uploaded at every call).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

__all__ = ["SAMPLE_ROWS", "SAMPLE_VALUES", "ResidentCache"]

#: Rows of a dense array compared at each reuse of its device copy.
SAMPLE_ROWS = 16
#: Stored values (and their column indices) of a sparse matrix compared at each reuse.
SAMPLE_VALUES = 4096


def _layout(array):
    """What must not change for a device copy to stand for ``array``."""
    if sp.issparse(array):
        parts = (array.data, array.indices, array.indptr)
        return (
            array.format,
            array.shape,
            array.nnz,
            tuple((p.__array_interface__["data"][0], p.dtype.str, p.shape) for p in parts),
        )
    return (
        array.__array_interface__["data"][0],
        array.shape,
        array.strides,
        array.dtype.str,
    )


def _sample(array):
    """A copy of a few entries spread over ``array`` (see the module's docstring)."""
    if sp.issparse(array):
        step = max(1, array.nnz // SAMPLE_VALUES)
        rows = np.linspace(0, array.indptr.size - 1, SAMPLE_VALUES).astype(np.intp)
        return (
            array.data[::step].copy(),
            array.indices[::step].copy(),
            array.indptr[rows].copy(),
        )
    if array.ndim == 0 or array.shape[0] == 0:
        return (array.copy(),)
    rows = np.unique(np.linspace(0, array.shape[0] - 1, SAMPLE_ROWS).astype(np.intp))
    return (array[rows].copy(),)


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


class _Entry:
    __slots__ = ("layout", "meta", "nbytes", "ref", "sample", "value")

    def __init__(self, ref, layout, sample, value, nbytes):
        self.ref, self.layout, self.sample, self.value = ref, layout, sample, value
        self.nbytes = nbytes
        #: Checks already made on the host array (e.g. the RBF magnitude check).
        self.meta = {}


class ResidentCache:
    """Device values made from host arrays, reused while the array is alive and unchanged.

    Parameters
    ----------
    min_bytes : int
        Host arrays smaller than this are converted at every call, never kept.
    max_entries : int
        Most device copies kept at once (least recently used dropped first).
    max_bytes : int
        Most host bytes whose device copies are kept at once.
    """

    def __init__(self, *, min_bytes=1 << 20, max_entries=8, max_bytes=4 << 30):
        self.min_bytes = int(min_bytes)
        self.max_entries = int(max_entries)
        self.max_bytes = int(max_bytes)
        self._entries = OrderedDict()
        self._lock = threading.Lock()
        #: Number of reuses and of conversions (uploads) so far (tests, benchmarks).
        self.hits = 0
        self.misses = 0

    def __len__(self):
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Host bytes of the arrays whose device copies are kept."""
        return sum(entry.nbytes for entry in list(self._entries.values()))

    def clear(self):
        """Drop every device copy."""
        with self._lock:
            self._entries.clear()

    @staticmethod
    def _nbytes(array):
        if sp.issparse(array):
            return array.data.nbytes + array.indices.nbytes + array.indptr.nbytes
        return array.nbytes

    def get(self, array, tag, make):
        """The device value of ``array`` for ``tag`` (e.g. its device dtype) and its entry.

        ``make()`` converts (validates and uploads) the array on a miss.  Returns
        ``(value, meta)``: ``meta`` is a dict kept with the device copy (empty and not kept when
        the array is too small to be cached).
        """
        key = (id(array), tag)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                if (
                    entry.ref() is array
                    and entry.layout == _layout(array)
                    and _same(entry.sample, _sample(array))
                ):
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return entry.value, entry.meta
                del self._entries[key]
        self.misses += 1
        value = make()
        nbytes = self._nbytes(array)
        if not self.min_bytes <= nbytes <= self.max_bytes:
            return value, {}
        entries = self._entries

        def forget(_, key=key, entries=entries):
            entries.pop(key, None)

        entry = _Entry(weakref.ref(array, forget), _layout(array), _sample(array), value, nbytes)
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.max_entries or self.nbytes > self.max_bytes:
                self._entries.popitem(last=False)
        return value, entry.meta
