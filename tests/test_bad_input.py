"""Bad input found by trying semiscale as a new user (issue 11, part 6): each case a clear error.

Each test here failed before its fix.
"""

import pytest

from semiscale._memory import MemoryBudgetError, block_rows, parse_memory_budget


# ------------------------------------------------------------------ memory budgets
@pytest.mark.parametrize(
    "budget,expected",
    [
        ("512MiB", 512 * 1024**2),
        ("512 MiB", 512 * 1024**2),
        ("1KiB", 1024),
        ("2GiB", 2 * 1024**3),
        ("1TiB", 1024**4),
        ("512 MB", 512 * 1024**2),
        ("2gb", 2 * 1024**3),
        ("2gib", 2 * 1024**3),
        ("80 mb", 80 * 1024**2),
        ("1.5 GiB", int(1.5 * 1024**3)),
    ],
)
def test_memory_budget_iec_units(budget, expected):
    assert parse_memory_budget(budget) == expected


@pytest.mark.parametrize("bad", ["512MiBs", "5 XB", "GiB", "1e3 PB"])
def test_memory_budget_bad_unit_names_the_units(bad):
    with pytest.raises(ValueError, match="KiB.*MiB.*GiB"):
        parse_memory_budget(bad)


def test_memory_budget_refusal_names_the_given_budget():
    # the budget left after a fixed reservation used to be printed ("memory_budget=1 B")
    with pytest.raises(MemoryBudgetError) as info:
        block_rows(1000, 4096, "80MB", reserved=100 * 1024**2, what="preconditioner chunk")
    message = str(info.value)
    assert "memory_budget=80.0 MiB" in message
    assert "1 B" not in message
    assert "100.0 MiB" in message  # what was reserved
    assert str(100 * 1024**2 + 4096) in message  # what is needed in all


def test_memory_budget_reserved_rows():
    # the rows are what fits after the reservation
    assert block_rows(1000, 100, 10_000, reserved=5_000) == 50
    assert block_rows(1000, 100, 10_000) == 100
