"""Memory budgets: parsing, defaults, and row-block sizing.

Every blocked computation in semiscale (kernel blocks, K_ns products, brute-force kNN) asks this
module how many rows of a block fit in its ``memory_budget``.  Asking for more than the budget
allows is a :class:`MemoryBudgetError` *before* anything is allocated.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "MemoryBudgetError",
    "UNBUDGETED_BASE_BYTES",
    "available_memory",
    "block_rows",
    "check_fits",
    "format_bytes",
    "parse_memory_budget",
    "proc_field_bytes",
    "row_slices",
    "unbudgeted_bytes",
]

#: Fraction of the currently available memory used when no budget is given.
DEFAULT_BUDGET_FRACTION = 0.25
_FALLBACK_AVAILABLE = 2 * 1024**3
_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


class MemoryBudgetError(ValueError):
    """Raised when a computation cannot fit in the requested memory budget."""


def proc_field_bytes(path: str, field: str) -> int | None:
    """A ``kB`` field of a Linux ``/proc`` file (``"MemAvailable"``, ``"VmHWM"``) in bytes.

    None where the file or the field is missing (not Linux, restricted ``/proc``).
    """
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def available_memory() -> int:
    """Bytes of physical memory currently available (best effort, never raises)."""
    available = proc_field_bytes("/proc/meminfo", "MemAvailable")
    if available is not None:
        return available
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return _FALLBACK_AVAILABLE


def parse_memory_budget(memory_budget: int | float | str | None) -> int:
    """Return a memory budget in bytes.

    Parameters
    ----------
    memory_budget : int, float, str or None
        Bytes (``2_000_000_000``), a string with a unit (``"512MiB"``, ``"512 MB"``, ``"2gb"``,
        ``"1.5G"``; case and a space before the unit do not matter), or None for
        ``DEFAULT_BUDGET_FRACTION`` of the memory available now.  Units are binary whichever way
        they are written: K, KB and KiB are 1024 bytes; M/MB/MiB 1024², G/GB/GiB 1024³,
        T/TB/TiB 1024⁴.

    Raises
    ------
    ValueError
        For a non-positive or unparsable budget.
    """
    if memory_budget is None:
        return max(int(DEFAULT_BUDGET_FRACTION * available_memory()), 64 * 1024**2)
    if isinstance(memory_budget, bool):
        raise ValueError(
            f"memory_budget must be bytes or a string like '2GB', got {memory_budget!r}"
        )
    if isinstance(memory_budget, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(I?B)?\s*", memory_budget.upper())
        if match is None or (match.group(3) == "IB" and not match.group(2)):
            raise ValueError(
                f"memory_budget={memory_budget!r} is not understood; give bytes (an int) or a "
                "number with a unit: B, KiB, MiB, GiB, TiB (KB/MB/GB/TB and K/M/G/T mean the same "
                "binary units), e.g. '512MiB' or '2GB'"
            )
        value = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        value = float(memory_budget)
    if not value > 0 or value != value:
        raise ValueError(f"memory_budget must be positive, got {memory_budget!r}")
    return int(value)


#: The fixed part of :func:`unbudgeted_bytes`: the interpreter's allocator arenas, BLAS buffers
#: and thread stacks touched by a fit, and the kernel's bandwidth heuristic (``gamma="median"``:
#: the distances of its 1,000-point sample, about 20 MiB).
UNBUDGETED_BASE_BYTES = 32 * 1024**2


def unbudgeted_bytes(n_samples, n_features, laplacian_nnz=0, n_outputs=1, itemsize=8) -> int:
    """The documented constant overhead of a budgeted fit: what ``memory_budget`` does not cover.

    A fit's peak memory beyond its inputs stays below ``memory_budget`` plus this (measured:
    ``benchmarks/results/memory_budget/``).
    Every allocation proportional to ``n·s``, ``s²``, ``n·r`` work arrays or a kernel block is
    inside the budget; outside it are:

    - :data:`UNBUDGETED_BASE_BYTES`;
    - one copy of ``X`` (``n·d·itemsize``): a cast to the kernel's dtype, gathered rows;
    - three copies of the Laplacian (``nnz·12 + (n + 1)·8`` bytes each): its validation
      (``L − Lᵀ``) and the sampled-Hessian preconditioner's edge form;
    - ``8·n·(r + 1)`` float64 numbers: labels, targets and right-hand sides, predictions,
      masks and index vectors (``r`` outputs or classes).

    Parameters
    ----------
    n_samples, n_features : int
    laplacian_nnz : int
        Non-zeros of the graph Laplacian (0 without a graph).
    n_outputs : int
        Targets (regression) or one-vs-rest columns (classes).
    itemsize : int
        Bytes of one entry of ``X`` (8: float64).
    """
    n = int(n_samples)
    laplacian = 3 * (int(laplacian_nnz) * 12 + (n + 1) * 8) if laplacian_nnz else 0
    vectors = 8 * n * (int(n_outputs) + 1) * 8
    return UNBUDGETED_BASE_BYTES + n * int(n_features) * int(itemsize) + laplacian + vectors


def format_bytes(n_bytes: float) -> str:
    """Human-readable size, e.g. ``'1.5 GiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n_bytes) < 1024 or unit == "GiB":
            return f"{n_bytes:.1f} {unit}" if unit != "B" else f"{int(n_bytes)} B"
        n_bytes /= 1024
    return f"{n_bytes:.1f} GiB"  # pragma: no cover


def block_rows(
    n_rows: int,
    bytes_per_row: int,
    memory_budget: int | float | str | None,
    *,
    what: str = "block",
    reserved: int = 0,
) -> int:
    """Number of rows of a block that fit in ``memory_budget`` (at least 1, at most ``n_rows``).

    ``reserved`` bytes of the budget are already spoken for (buffers allocated once, outside the
    blocks); the rows are what fits in the rest.  Pass the budget as given and the reservation
    here, not ``budget - reserved``: a refusal then names the budget the user gave.

    Parameters
    ----------
    n_rows : int
        Rows to be processed in total.
    bytes_per_row : int
        Bytes one row of *all* temporaries of the block needs together.
    memory_budget : int, float, str or None
        See :func:`parse_memory_budget`.
    what : str
        Name of the computation, used in the error message.
    reserved : int
        Bytes of the budget used by fixed buffers before any block row.

    Raises
    ------
    MemoryBudgetError
        When not even one row fits.
    """
    budget = parse_memory_budget(memory_budget)
    bytes_per_row = max(int(bytes_per_row), 1)
    reserved = max(int(reserved), 0)
    rows = (budget - reserved) // bytes_per_row
    if rows < 1:
        needed = reserved + bytes_per_row
        fixed = f"{format_bytes(reserved)} of fixed buffers plus " if reserved else ""
        raise MemoryBudgetError(
            f"memory_budget={format_bytes(budget)} is too small for one row of the {what}: "
            f"it needs {fixed}{format_bytes(bytes_per_row)} per row; raise memory_budget to at "
            f"least {needed} bytes ({format_bytes(needed)})"
        )
    return int(max(1, min(rows, max(n_rows, 1))))


def check_fits(parts: dict, memory_budget, *, what: str, fix: str = "") -> None:
    """Refuse, before allocating, arrays whose sizes ``parts`` (name -> bytes) exceed the budget.

    The one check behind every estimator's fixed arrays (the graph learners' solver arrays,
    :class:`~semiscale.graph.KNNGraph`'s table and adjacency), worded as the Nyström and exact
    refusals: the budget given, what is needed and for what, and the fix (``fix``: an
    alternative after "raise memory_budget to at least ..., or").

    Raises
    ------
    MemoryBudgetError
        When ``sum(parts.values())`` exceeds ``memory_budget``.
    """
    budget = parse_memory_budget(memory_budget)
    needed = int(sum(parts.values()))
    if needed > budget:
        listed = " + ".join(f"{name} {format_bytes(size)}" for name, size in parts.items())
        alternative = f", or {fix}" if fix else ""
        raise MemoryBudgetError(
            f"memory_budget={format_bytes(budget)} is too small for {what}: its fixed buffers "
            f"need {listed}"
            f" = {format_bytes(needed)}; raise memory_budget to at least {needed} bytes "
            f"({format_bytes(needed)}){alternative}"
        )


def row_slices(n_rows: int, rows_per_block: int):
    """Yield consecutive ``slice`` objects covering ``range(n_rows)`` in blocks."""
    for start in range(0, n_rows, rows_per_block):
        yield slice(start, min(start + rows_per_block, n_rows))
