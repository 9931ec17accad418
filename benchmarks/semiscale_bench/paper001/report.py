"""Paper 001's reports from the records: Figures 1-2 as tables and PNGs, and ``summary.md``.

``fig1.md`` / ``fig2.md``: per dataset, one table per measure (rows: unlabeled points u;
columns: methods; :mod:`semiscale_bench.harness.curve_report`), the paper's statements beside
them; ``fig1.png`` / ``fig2.png``: the same against u; ``summary.md``: the targets
(:mod:`.targets`), what the paper says, the validation choices, how the data are made, the
protocol and the notes (caps and errors).
"""

from __future__ import annotations

import re

from semiscale.datasets import distorted
from semiscale_bench.harness.curve_report import (
    figure_links,
    figure_reports,
    notes,
    protocol_lines,
    validation_lines,
)
from semiscale_bench.harness.report import header, write_text
from semiscale_bench.paper001.data import CURVES
from semiscale_bench.paper001.paper import FIG1_ACCURACY, MACHINE, SETTINGS, TABLE1, claims
from semiscale_bench.paper001.targets import target_lines

__all__ = ["render"]

#: Generic knobs this benchmark does not use (no random split, no sweeps, no CV).
_UNUSED = (
    *("paper", "caps", "train_fraction", "labeled_fraction", "reduced_repeats"),
    *("center_fraction", "center_cap", "sweeps", "speedup", "max_samples"),
)


def _paper_column(dataset: str, measure: str):
    """The accuracies §4.1 states, beside the moons' accuracy table."""
    if dataset != "two moons" or measure != "accuracy":
        return None
    return "paper (§4.1)", ", ".join(f"{meth} {100 * v:g}" for meth, v in FIG1_ACCURACY.items())


def _paper_lines(experiment: str) -> list[str]:
    return ["## The paper (its figures' values are not in the text)", "", *claims(experiment)]


def _data_section(protocol) -> list[str]:
    doc = distorted.__doc__.split("\n\n", 1)[1].strip().replace("``", "`")
    doc = re.sub(r":func:`([^`]+)`", r"`\1()`", doc)
    lines = [
        "## Data",
        "",
        f"The extended USPS (`make_extended_usps({dict(protocol.extended)})`, digits "
        f"{protocol.digits}): {doc}",
        "",
    ]
    table = "; ".join(
        f"{k}: {v['attributes']} attributes, {v['labeled']}, {v['unlabeled']}, {v['test']}"
        for k, v in TABLE1.items()
    )
    return lines + [f"The paper's Table 1 (labeled / unlabeled / test, + and −): {table}.", ""]


def render(bench, protocol, store, out) -> list[str]:
    """fig1.md, fig2.md, their PNGs and summary.md, from the records that exist."""
    figures = (
        ("fig1", "Paper 001, Figure 1: two moons (ours; the paper's statements below)"),
        ("fig2", "Paper 001, Figure 2: USPS (ours; the paper's statements below)"),
    )
    paths, drawn = figure_reports(
        CURVES, protocol, store, out, figures, _paper_column, _paper_lines
    )
    names = [d.name for d in protocol.datasets if d.source is not None]
    lines = header("Paper 001 (SLapCVM), §4: Figures 1-2 reproduced", protocol, store.runs())
    lines += target_lines(protocol, store) + figure_links(drawn)
    lines += ["", "Tables: `fig1.md` (two moons), `fig2.md` (usps, extended usps).", ""]
    lines += ["## The paper's settings", "", f"Machine: {MACHINE}.", ""]
    lines += [f"- {s}" for s in SETTINGS] + [""]
    lines += validation_lines(store, names) + _data_section(protocol)
    lines += protocol_lines(protocol, bench.methods, _UNUSED)
    lines += ["## Notes", ""] + notes(CURVES, protocol, store, names)
    return paths + [write_text(out, "summary.md", lines)]
