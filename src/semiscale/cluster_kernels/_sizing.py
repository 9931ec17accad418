r"""From a memory budget to the sizes of a cluster kernel: what the implementation allocates.

Paper 003 sizes NysCK by :math:`(d + s + 2k)\,n \cdot 8` bytes with :math:`s = k \log k`, where
``d n`` is the data and ``s n`` the stored columns ``C``.  Here the data are the caller's (they
are not counted, as everywhere in semiscale: ``memory_budget`` bounds what a fit allocates,
:func:`semiscale._memory.unbudgeted_bytes`) and ``C`` is never stored: the fit streams it twice
through the ops layer (once for the landmarks' degrees, once for ``F``), so the arrays are
(float64 entries):

- always: the landmarks ``X_S`` (:math:`s d`, a dense bound) and the streamed kernel blocks
  with their ``B``-side operands (:func:`stream_bytes`);
- phase 1, the eigenproblem: ``W = K(X_S, X_S)`` solved in place (:math:`s^2`), LAPACK
  ``syevr``'s ``k`` eigenvectors and workspace (:math:`s k + 40 s`), the ``s`` degrees;
- phase 2, the virtual samples (``W`` released): the weights
  :math:`G = D_S^{-1/2} U_W Σ_W^+ \tilde Σ^{1/2}` and the product's copy of them
  (:math:`2 s k`), ``F`` and its row norms (:math:`n k + n`);

and the peak is the first line plus the larger phase (:func:`nystrom_bytes`).  The exact
:class:`~semiscale.cluster_kernels.ClusterKernel` on ``m`` of ``n`` points holds ``K`` and its
``m`` eigenvectors with LAPACK's :math:`40 m` (phase 1), then the eigenvectors and ``F``
(:math:`m^2 + n m`; with a subsample also the :math:`m^2` fitted rows before they are placed,
a chunk of extended rows and the subsample's features) (:func:`exact_bytes`); ``fit`` alone
allocates no ``F`` and stops after the first phase (``virtual_samples=False``), so a budget
admits more points to ``fit`` than to ``fit_transform``.  A data-dependent
``gamma`` (``"median"``, ``"local"``) first measures distances on a sample of at most 1,000
points: :func:`heuristic_bytes`, released before the arrays above exist, so the estimate is the
larger of the two.  ``tests/test_cluster_kernels.py`` checks the traced peak (``tracemalloc``)
of fits against these estimates.
"""

from __future__ import annotations

import math

from .._bandwidth import MEDIAN_SAMPLE_SIZE
from .._memory import MemoryBudgetError, format_bytes, parse_memory_budget
from ..linalg.streaming import DENSE_TILE_DENSITY, STREAM_BLOCK_BYTES

__all__ = [
    "DEFAULT_MAX_COMPONENTS",
    "STREAM_BYTES",
    "stream_bytes",
    "degree_bytes",
    "exact_bytes",
    "exact_parts",
    "heuristic_bytes",
    "largest_subsample",
    "landmarks_for",
    "nystrom_bytes",
    "nystrom_parts",
    "nystrom_sizes",
]

#: What the kernel blocks of one streamed product may hold (all threads together) on top of
#: their ``B``-side operands: the ops layer caps a block at 8 MiB
#: (:data:`~semiscale.linalg.streaming.STREAM_BLOCK_BYTES`), so two threads' blocks and their
#: temporaries fit.
STREAM_BYTES = 24 * 1024**2

#: The most components :class:`~semiscale.cluster_kernels.NystromClusterKernel` takes when
#: ``n_components=None`` (the budget may only lower it; ``n_components="budget"`` lifts it):
#: with ``s = k ln k`` = 1,420 landmarks, ``fit_transform`` of 5,000 points (10 features) took
#: 1.5 s (1.06 s of it the eigenproblem, one BLAS thread) on the shared 2-core development
#: machine at load 7; the next power of two, 512 (s = 3,195), 6.9 s for the eigenproblem alone.
DEFAULT_MAX_COMPONENTS = 256

_LAPACK = 40  # syevr: 26 n float64 of work, 10 n int32, 2 n int32 of support, n eigenvalues


def heuristic_bytes(n, d, gamma) -> int:
    """Bytes of the ``gamma="median"``/``"local"`` width measurement (0 for a numeric gamma).

    The sample's ``m = min(n, 1000)`` squared distances, their upper triangle's indices and
    values: measured 19.2 MiB (dense, d = 20) to 23.8 MiB (sparse, d = 123) of traced peak at
    m = 1,000; counted as :math:`26 m^2 + 16 m d` bytes.
    """
    if not isinstance(gamma, str):
        return 0
    m = min(int(n), MEDIAN_SAMPLE_SIZE)
    return 26 * m * m + 16 * m * int(d)


def stream_bytes(n_rows, n_cols, d, *, sparse=False, nnz=None) -> int:
    """Budget of a streamed kernel product ``K(A, B)·V`` (``A``: ``n_rows``, ``B``: ``n_cols``).

    The kernel's own memory model (:meth:`semiscale.kernels.Kernel._block_plan`) needs the
    resolved kernel and the data; this bound needs neither, so that sizes are fixed before
    anything is allocated: the ``B``-side operands (dense: ``B`` augmented by two columns;
    sparse: at most two copies of ``B``'s stored entries with int64 indices, a cast copy and,
    when ``d`` exceeds ``2 n_cols``, the transposed ``B`` of the sparse-result plan
    (:meth:`semiscale._pairs._Pair.dot_fixed_bytes`), and two norms a row; norms, numpy's
    ufunc buffer, the accumulation buffers of
    :meth:`~semiscale.linalg.ops.ArrayOps.kernel_rmatmul`) plus blocks of at most
    :data:`STREAM_BYTES`, each row at most ``8 n_cols + 16 (d + 2)`` bytes (dense; sparse:
    ``24 (n_cols + d + 2)``: the densified ``A`` row, its sparse slice, and the sparse product
    before it is densified).  Passed as the product's ``memory_budget``, the ops layer keeps
    its blocks within it.

    ``nnz`` is the number of stored entries of the sparse ``X`` whose rows ``B`` is made of:
    ``B`` holds at most ``min(nnz, n_cols d)`` of them (None: ``n_cols d``, every row full).
    """
    n_rows, n_cols, d = int(n_rows), int(n_cols), int(d)
    if sparse:
        entries = n_cols * d if nnz is None else min(int(nnz), n_cols * d)
        copies = 1 + int(8 * d > 16 * n_cols)  # cast; transposed B when the result is sparse
        fixed, row = 16 * copies * entries + 16 * n_cols, 24 * (n_cols + d + 2)
    else:
        fixed, row = 8 * n_cols * (d + 2), 8 * n_cols + 16 * (d + 2)
    fixed += 64 * n_cols + 8192 * 8 + 4096
    return fixed + min(STREAM_BYTES, n_rows * row)


def degree_bytes(n, d, *, sparse=False, nnz=None) -> int:
    """Budget of the exact degrees ``K(X, X)·1``.

    :meth:`~semiscale.linalg.ops.ArrayOps.kernel_row_sums` computes them.

    Dense ``X``: the n × n product's bound (:func:`stream_bytes`), as before.  Sparse ``X``:
    the product runs on square tiles of ``t = min(n, 1024)`` rows
    (:func:`semiscale.linalg.streaming.kernel_row_sums`), so ``B`` is one tile, never all of
    ``X``: two tiles' row and column sums (``16 t``), two tiles' sparse copies (each at most
    ``min(nnz, t d)`` entries with int64 indices and ``t + 1`` pointers) and, where the tiles
    are densified (density at least
    :data:`~semiscale.linalg.streaming.DENSE_TILE_DENSITY` and a dense tile within
    :data:`~semiscale.linalg.streaming.STREAM_BLOCK_BYTES`), their dense copies (``8 t d``),
    plus the tile product's own bound ``stream_bytes(t, t, d)``.  The degree vector (the
    result, ``8 n``) is not included.
    """
    n, d = int(n), int(d)
    if not sparse:
        return stream_bytes(n, n, d)
    t = min(n, 1024)
    entries = t * d if nnz is None else min(int(nnz), t * d)
    dense = nnz is None or (
        int(nnz) >= DENSE_TILE_DENSITY * n * d and 8 * t * d <= STREAM_BLOCK_BYTES
    )
    copies = 2 * (16 * entries + 8 * (t + 1) + (8 * t * d if dense else 0))
    return 16 * t + copies + stream_bytes(t, t, d, sparse=True, nnz=entries)


def nystrom_parts(n, d, k, s, *, sparse=False, nnz=None) -> dict:
    """The arrays of a Nyström cluster-kernel fit (name -> bytes); see the module's table.

    Not all live at once: ``W`` and LAPACK's workspace are released before ``F`` is allocated
    (:func:`nystrom_bytes` counts the two phases).
    """
    n, d, k, s = int(n), int(d), int(k), int(s)
    return {
        f"the {s} landmarks' features": 8 * s * d,
        "the streamed kernel blocks": stream_bytes(n, s, d, sparse=sparse, nnz=nnz),
        f"the {s}x{s} landmark kernel W": 8 * s * s,
        f"LAPACK's workspace and the {s} degrees": 8 * (_LAPACK * s + s),
        f"the {s}x{k} eigenvectors, then extension weights (and a copy)": 8 * 2 * s * k,
        f"the {n}x{k} virtual samples F": 8 * (n * k + n),
    }


def nystrom_bytes(n, d, k, s, *, sparse=False, nnz=None) -> int:
    """Peak bytes of a Nyström fit: the landmarks and streamed blocks, plus the larger phase.

    Phase 1 (the eigenproblem): ``W``, its eigenvectors and LAPACK's workspace; phase 2 (the
    virtual samples): the weights ``G`` (and a copy of them in the streamed product) and ``F``.
    """
    n, d, k, s = int(n), int(d), int(k), int(s)
    eigen = 8 * (s * s + s * k + _LAPACK * s + s)
    samples = 8 * (2 * s * k + n * k + n)
    return 8 * s * d + stream_bytes(n, s, d, sparse=sparse, nnz=nnz) + max(eigen, samples)


def exact_parts(
    n_rows, n_fit, d, *, subsample=False, sparse=False, virtual_samples=True, nnz=None
) -> dict:
    """The arrays of an exact cluster-kernel fit on ``n_fit`` of ``n_rows`` points.

    ``K`` is released (LAPACK overwrites it) before ``F`` is allocated: :func:`exact_bytes`
    counts the two phases.  ``virtual_samples=False`` is ``fit`` (no ``F``: the eigenvectors
    become the extension weights in place, and the only streamed product is ``K`` of the
    ``n_fit`` points), ``True`` is ``fit_transform`` (``F`` of all ``n_rows``).
    """
    n, m, d = int(n_rows), int(n_fit), int(d)
    parts = {
        f"the {m}x{m} kernel matrix": 8 * m * m,
        f"its {m} eigenvectors and LAPACK's workspace": 8 * (m * m + _LAPACK * m),
    }
    if virtual_samples:
        parts[f"the {n}x{m} virtual samples F"] = 8 * (n * m + n)
    parts["the streamed kernel blocks"] = stream_bytes(
        n if virtual_samples else m, m, d, sparse=sparse, nnz=nnz
    )
    if subsample:
        parts[f"the {m} fitted points' features"] = 8 * m * d
        if virtual_samples:
            parts[f"the {m}x{m} fitted rows of F before their placement"] = 8 * m * m
            # the other rows of F are extended in chunks of at most STREAM_BYTES
            parts["one chunk of extended rows"] = min(STREAM_BYTES, 8 * (n - m) * m)
    return parts


def exact_bytes(
    n_rows, n_fit, d, *, subsample=False, sparse=False, virtual_samples=True, nnz=None
) -> int:
    """Peak bytes of an exact fit: ``K`` and its eigenvectors, or the eigenvectors and ``F``.

    ``virtual_samples=False`` (``fit``): only the first phase, ``F`` is never allocated.
    """
    n, m = int(n_rows), int(n_fit)
    eigen = 8 * (2 * m * m + _LAPACK * m)
    samples = 8 * (m * m + n * m + n) if virtual_samples else 0
    fixed = stream_bytes(n if virtual_samples else m, m, d, sparse=sparse, nnz=nnz)
    if subsample:
        if virtual_samples:
            samples += 8 * m * m + min(STREAM_BYTES, 8 * (n - m) * m)
        fixed += 8 * m * int(d)
    return fixed + max(eigen, samples)


def _total(peak, heuristic) -> int:
    # the width measurement's temporaries are released before any array of the fit exists
    return max(int(peak), int(heuristic))


def landmarks_for(k, n) -> int:
    """Paper 003's ``s = k ln k`` landmarks for rank ``k``, kept in ``[k, n]``."""
    k, n = int(k), int(n)
    return int(min(n, max(k, math.ceil(k * math.log(max(k, 1))))))


def nystrom_sizes(
    n,
    d,
    memory_budget,
    n_components=None,
    n_landmarks=None,
    *,
    gamma="median",
    sparse=False,
    nnz=None,
):
    """Rank ``k``, landmarks ``s`` and estimated bytes of a Nyström cluster kernel.

    Parameters
    ----------
    n, d : int
        Points and features.
    memory_budget : int, str or None
        See :func:`semiscale._memory.parse_memory_budget`.
    n_components : int, "budget" or None
        ``k``.  None: the largest ``k`` ≤ :data:`DEFAULT_MAX_COMPONENTS` that fits; ``"budget"``:
        the largest that fits, up to ``n``; an int: that (at most ``n``), refused if it does not
        fit.
    n_landmarks : int or None
        ``s``.  None: :func:`landmarks_for` ``(k, n)``; an int: that (at most ``n``, at least
        ``k``: ``k`` is lowered to ``s`` when larger).
    gamma : float or str
        The kernel's width (a heuristic name adds :func:`heuristic_bytes`).
    sparse : bool
        Whether ``X`` is a sparse matrix (:func:`stream_bytes`).
    nnz : int or None
        Stored entries of a sparse ``X`` (:func:`stream_bytes`; None: every row full).

    Returns
    -------
    k, s, estimated_bytes : int

    Raises
    ------
    MemoryBudgetError
        When not even ``k = 1`` (or the requested sizes) fits, naming ``memory_budget``, the
        value refused and the fix.  Nothing is allocated.
    """
    budget = parse_memory_budget(memory_budget)
    n, d = int(n), int(d)
    heuristic = heuristic_bytes(n, d, gamma)

    def sizes(k):
        s = landmarks_for(k, n) if n_landmarks is None else min(int(n_landmarks), n)
        k = min(k, s)
        return k, s, _total(nystrom_bytes(n, d, k, s, sparse=sparse, nnz=nnz), heuristic)

    if isinstance(n_components, str) or n_components is None:
        top = n if n_components == "budget" else min(n, DEFAULT_MAX_COMPONENTS)
        if sizes(1)[2] > budget:
            _refuse(budget, sizes(1), n, d, heuristic, "k = 1", sparse, nnz)
        lo, hi = 1, top  # the largest k with sizes(k) within the budget: bytes grow with k
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if sizes(mid)[2] <= budget else (lo, mid - 1)
        return sizes(lo)
    chosen = sizes(min(int(n_components), n))
    if chosen[2] > budget:
        _refuse(budget, chosen, n, d, heuristic, f"n_components={n_components}", sparse, nnz)
    return chosen


def _refuse(budget, chosen, n, d, heuristic, what, sparse, nnz=None):
    k, s, needed = chosen
    parts = nystrom_parts(n, d, k, s, sparse=sparse, nnz=nnz)
    listed = ", ".join(f"{name} {format_bytes(size)}" for name, size in parts.items())
    width = (
        f" (the gamma heuristic alone needs {format_bytes(heuristic)}: a numeric gamma avoids it)"
        if heuristic >= nystrom_bytes(n, d, k, s, sparse=sparse, nnz=nnz)
        else ""
    )
    raise MemoryBudgetError(
        f"memory_budget={format_bytes(budget)} is too small for a Nystrom cluster kernel with "
        f"{what} (s = {s} landmarks) on {n} points: its arrays ({listed}; W is released "
        f"before F) need {format_bytes(needed)} at their peak"
        f"{width}; raise memory_budget to at least {needed} bytes ({format_bytes(needed)})"
        + (", or pass fewer n_components" if what.startswith("n_components") else "")
    )


def largest_subsample(
    n, d, memory_budget, n_required, *, gamma="median", sparse=False, virtual_samples=True, nnz=None
):
    """The most points (≥ ``n_required``, ≤ ``n``) an exact cluster kernel fits on in the budget.

    ClusK+RandSub: every labeled point (``n_required``) plus as many unlabeled ones as fit,
    counting :func:`exact_parts` with ``n`` rows of ``F`` (``virtual_samples=True``:
    ``fit_transform``) or without ``F`` (``False``: ``fit``, whose other rows are left to
    ``transform``, so that a budget fits more points).

    Returns
    -------
    m, estimated_bytes : int

    Raises
    ------
    MemoryBudgetError
        When not even the ``n_required`` points fit (naming ``memory_budget`` and the fix).
    """
    budget = parse_memory_budget(memory_budget)
    heuristic = heuristic_bytes(n, d, gamma)

    def cost(m):
        return _total(
            exact_bytes(
                n, m, d, subsample=m < n, sparse=sparse, virtual_samples=virtual_samples, nnz=nnz
            ),
            heuristic,
        )

    low = max(int(n_required), 2)
    if cost(low) > budget:
        needed = cost(low)
        width = heuristic > exact_bytes(
            n, low, d, subsample=low < n, sparse=sparse, virtual_samples=virtual_samples, nnz=nnz
        )
        raise MemoryBudgetError(
            f"memory_budget={format_bytes(budget)} is too small for an exact cluster kernel on "
            f"{low} points (the {int(n_required)} labeled ones, at least 2: the least "
            f"ClusK+RandSub fits on): it needs {format_bytes(needed)}"
            + (" (the gamma heuristic alone: a numeric gamma avoids it)" if width else "")
            + f"; raise memory_budget to at least {needed} bytes ({format_bytes(needed)}), or "
            + (
                "pass a numeric gamma"
                if width
                else "use NystromClusterKernel"
                + (
                    ", or fit without F (fit, then transform the rows in blocks: "
                    "StorageFitClassifier(virtual_samples='streamed'))"
                    if virtual_samples
                    else ""
                )
            )
        )
    lo, hi = low, int(n)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if cost(mid) <= budget else (lo, mid - 1)
    return lo, cost(lo)
