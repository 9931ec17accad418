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
    dataset_tables,
    notes,
    plot,
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


def _tables(protocol, store, name) -> list[str]:
    return dataset_tables(CURVES, protocol, store, name, _paper_column)


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
    runs = store.runs()
    names = [d.name for d in protocol.datasets if d.source is not None]
    paths, figures = [], []
    for experiment, title in (("fig1", "Figure 1: two moons"), ("fig2", "Figure 2: USPS")):
        mine = [n for n in names if protocol.experiment_of(n) == experiment]
        tables = [line for n in mine for line in _tables(protocol, store, n)]
        if not tables:
            continue
        text = header(f"Paper 001, {title} (ours; the paper's statements below)", protocol, runs)
        text += tables + ["## The paper (its figures' values are not in the text)", ""]
        text += claims(experiment) + ["", "## Notes", ""] + notes(CURVES, protocol, store, mine)
        paths.append(write_text(out, f"{experiment}.md", text))
        drawn = [n for n in mine if _tables(protocol, store, n)]
        picture = plot(CURVES, protocol, store, drawn, experiment, f"{out}/{experiment}.png")
        figures.append((experiment, picture))
        paths += [picture] if picture else []
    lines = header("Paper 001 (SLapCVM), §4: Figures 1-2 reproduced", protocol, runs)
    lines += target_lines(protocol, store)
    for experiment, picture in figures:
        lines.append(
            f"![{experiment}]({experiment}.png)"
            if picture
            else f"({experiment}.png not drawn: matplotlib is not installed, "
            "`pip install semiscale[plot]`)"
        )
    lines += ["", "Tables: `fig1.md` (two moons), `fig2.md` (usps, extended usps).", ""]
    lines += ["## The paper's settings", "", f"Machine: {MACHINE}.", ""]
    lines += [f"- {s}" for s in SETTINGS] + [""]
    lines += validation_lines(store, names) + _data_section(protocol)
    lines += protocol_lines(protocol, bench.methods, _UNUSED)
    lines += ["## Notes", ""] + notes(CURVES, protocol, store, names)
    return paths + [write_text(out, "summary.md", lines)]
